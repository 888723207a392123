//! `xtask-lab compare-results`: after `cargo xtask reproduce …` has written its tables (`X/cells.csv` and
//! `slice/X.csv`, in `results/` in place or in another `--out` folder), compare every one with the committed
//! `results/` file of the same name at a git revision, value by value, timing columns aside
//! ([`super::slice::compare`], the rule `check-results` applies to the slice alone).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The tables a reproduction writes under `results`, sorted: each paper's `X/cells.csv`, then the slice's
/// `slice/X.csv`, as paths relative to `results`.
pub fn tables(results: &Path) -> Result<Vec<PathBuf>> {
    let mut cells = Vec::new();
    let mut slice = Vec::new();
    let entries = std::fs::read_dir(results).with_context(|| results.display().to_string())?;
    for entry in entries {
        let entry = entry.with_context(|| results.display().to_string())?;
        let name = PathBuf::from(entry.file_name());
        if !entry.path().is_dir() {
            continue;
        }
        if name.as_os_str() == "slice" {
            for s in std::fs::read_dir(entry.path())
                .with_context(|| entry.path().display().to_string())?
            {
                let s = s.with_context(|| entry.path().display().to_string())?;
                let file = PathBuf::from(s.file_name());
                if file.extension().is_some_and(|e| e == "csv") {
                    slice.push(name.join(file));
                }
            }
        } else if entry.path().join("cells.csv").is_file() {
            cells.push(name.join("cells.csv"));
        }
    }
    cells.sort();
    slice.sort();
    cells.extend(slice);
    Ok(cells)
}

/// The text of `results/<relative>` at git revision `rev` of the repository `repo`.
fn at_revision(repo: &Path, rev: &str, relative: &Path) -> Result<String> {
    let spec = format!(
        "{rev}:results/{}",
        relative.to_string_lossy().replace('\\', "/")
    );
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["show", &spec])
        .output()
        .context("running git (needed to read the committed tables)")?;
    if !out.status.success() {
        bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
    }
    String::from_utf8(out.stdout).with_context(|| format!("{spec}: not UTF-8"))
}

/// Compare every table under `results` with the file of the same name under `results/` at revision `rev` of the
/// git repository `repo`. Returns the number of tables compared; an error lists every difference (file, line,
/// column, both values) or says that `results` holds no tables.
pub fn compare_with_revision(repo: &Path, results: &Path, rev: &str) -> Result<usize> {
    let tables = tables(results)?;
    if tables.is_empty() {
        bail!(
            "{}: no X/cells.csv or slice/X.csv here (give the results folder a reproduction wrote)",
            results.display()
        );
    }
    let mut differences = Vec::new();
    for relative in &tables {
        let shown = results.join(relative);
        let committed = match at_revision(repo, rev, relative) {
            Ok(text) => text,
            Err(e) => {
                differences.push(format!(
                    "{}: no results/{} at {rev} ({e})",
                    shown.display(),
                    relative.display()
                ));
                continue;
            }
        };
        let fresh = std::fs::read_to_string(&shown).with_context(|| shown.display().to_string())?;
        differences.extend(
            super::slice::compare(&committed, &fresh)
                .into_iter()
                .map(|d| format!("{}: {d}", shown.display())),
        );
    }
    if !differences.is_empty() {
        bail!(
            "{} of the tables differ from {rev} in {} place(s), timing columns aside:\n{}",
            results.display(),
            differences.len(),
            differences.join("\n")
        );
    }
    Ok(tables.len())
}
