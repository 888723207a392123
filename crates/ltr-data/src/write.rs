//! Writing datasets back as LETOR / SVMlight text, and atomic file writes.

use std::io::{BufWriter, Write};
use std::path::Path;

use crate::dataset::{Dataset, Row};
use crate::error::{DataError, Result};

/// Write `contents` to `path` atomically: a temporary file in the same folder, flushed and synced, then renamed
/// over the target. A crash leaves either the old file or the new one, never a torn one.
pub fn write_atomic(
    path: &Path,
    contents: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let f = std::fs::File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        contents(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(DataError::io(path, e));
    }
    Ok(())
}

/// Format a label: whole numbers without a decimal point, others in shortest round-trip form.
fn fmt_label(l: f32, out: &mut String) {
    use std::fmt::Write as _;
    if l.fract() == 0.0 && l.abs() < 1e9 {
        let _ = write!(out, "{}", l as i64);
    } else {
        let _ = write!(out, "{l}");
    }
}

/// Write a dataset in LETOR format (`label qid:Q idx:val ... #comment`). Dense rows are written in full (LETOR
/// style); sparse rows write their stored values only, plus the last column as an explicit `d:0` on the first row
/// when it is not stored anywhere, so that re-reading restores the same width. Comments (or doc ids) are kept.
/// Re-reading the output gives the same labels, queries, features (shortest round-trip float form) and comments.
pub fn write_letor(ds: &Dataset, path: &Path) -> Result<()> {
    write_atomic(path, |w| write_letor_to(ds, w))
}

/// Write a dataset in LETOR format to any writer (see [`write_letor`]).
pub fn write_letor_to(ds: &Dataset, w: &mut dyn Write) -> std::io::Result<()> {
    use std::fmt::Write as _;
    let d = ds.n_features();
    let mut needs_width_marker = !ds.is_dense() && d > 0;
    let mut line = String::with_capacity(4096);
    for q in ds.queries() {
        for i in 0..q.len() {
            line.clear();
            fmt_label(q.labels()[i], &mut line);
            let _ = write!(line, " qid:{}", q.qid());
            let row = q.row(i);
            let mut last_written = 0usize;
            match row {
                Row::Dense(x) => {
                    for (j, v) in x.iter().enumerate() {
                        let _ = write!(line, " {}:{}", j + 1, v);
                    }
                }
                Row::Sparse { indices, values } => {
                    for (&j, v) in indices.iter().zip(values) {
                        let _ = write!(line, " {}:{}", j + 1, v);
                        last_written = j as usize + 1;
                    }
                    if needs_width_marker {
                        if last_written < d {
                            let _ = write!(line, " {d}:0");
                        }
                        needs_width_marker = false;
                    }
                }
            }
            let global = q.rows().start + i;
            if let Some(c) = ds.comments() {
                let c = c.get(global);
                if !c.is_empty() {
                    let _ = write!(line, " #{c}");
                }
            } else if let Some(id) = ds.docids() {
                let _ = write!(line, " #docid = {}", id.get(global));
            }
            line.push('\n');
            w.write_all(line.as_bytes())?;
        }
    }
    Ok(())
}

/// Write one score per line (the LETOR evaluation scripts' prediction format), atomically.
pub fn write_scores(path: &Path, scores: &[f64]) -> Result<()> {
    write_atomic(path, |w| {
        for s in scores {
            writeln!(w, "{s}")?;
        }
        Ok(())
    })
}
