//! Reading LETOR / SVMlight text: `label [qid:Q] idx:val ... [# comment]`.
//!
//! The reader makes two streaming passes over the file, block by block, each block split into sub-chunks parsed in
//! parallel. Pass one counts rows, stored values and the largest feature index; pass two parses straight into the
//! final, exactly sized arrays. The text is never held whole in memory and no intermediate copy of the features is
//! made, so peak memory stays close to the size of the parsed dataset.
//!
//! Here: the options, the two passes and the dataset they assemble. `text.rs` reads the file (whole, or block by
//! block) and cuts it into sub-chunks, `line.rs` counts and parses a sub-chunk's lines, and `checks.rs` looks for
//! duplicate docids and repeated qids in the parsed rows.

mod checks;
mod line;
mod text;

use std::path::{Path, PathBuf};

use ndarray::Array2;
use rayon::prelude::*;
use sprs::CsMatI;

use crate::dataset::{Dataset, FeatureMatrix, Storage, TextColumn, AUTO_DENSE_DENSITY};
use crate::error::{DataError, Result};
use checks::{check_duplicate_docids, check_repeated_qids};
use line::{parse_chunk, parse_err, scan_chunk, truncate, ChunkOutput, ChunkStats, Sink};
// pub for the tests in tests/unit/parse.rs (through lib.rs); not API.
pub use line::extract_docid;
#[doc(hidden)]
pub use line::short_decimal;
#[doc(hidden)]
pub use text::split_sub_chunks;
use text::Text;

/// What to do with LETOR 3.0 `NULL` feature values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NullPolicy {
    /// Read `NULL` as 0 (what the LETOR 3.0 QueryLevelNorm files do).
    #[default]
    Zero,
    /// Reject the file.
    Error,
}

/// What to do when a qid reappears after other queries.
///
/// Peers differ: SVMrank and RankLib silently treat each run as its own query (RankLib) or merge them (SVMrank's
/// pair construction is by qid value). A reappearing qid is almost always a shuffled or concatenated file, so the
/// default is to stop with an error that says how to proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RepeatedQid {
    /// Stop with [`DataError::RepeatedQid`].
    #[default]
    Error,
    /// Merge all runs of a qid into one query, at the place of its first run (stable within a qid).
    Regroup,
}

/// Where query groups come from when lines carry no `qid:`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum QueryFile {
    /// Use `FILE.query` next to the data file if it exists (LightGBM / XGBoost convention).
    #[default]
    Auto,
    /// Use this group file (one group size per line).
    Path(PathBuf),
    /// Never look for a group file.
    None,
}

/// Options of [`read_letor`].
#[derive(Debug, Clone)]
pub struct ParseOptions {
    /// Dense or sparse storage.
    pub storage: Storage,
    /// Handling of `NULL` values.
    pub null: NullPolicy,
    /// Handling of a qid that reappears.
    pub repeated_qid: RepeatedQid,
    /// Keep the raw comment text of every line (doc ids are extracted either way).
    pub keep_comments: bool,
    /// Group sidecar for files without `qid:`.
    pub query_file: QueryFile,
    /// Make the dataset at least this wide (e.g. a test file whose last features are all zero).
    pub min_features: usize,
    /// Bytes read per block (each block is parsed in parallel). A file of at most this size is read whole; a larger
    /// one is streamed with two blocks in memory. Default: [`default_block_size`].
    pub block_size: usize,
    /// Accept the same `#docid` twice within one query (default: an error naming both lines, because trec_eval
    /// and the LETOR 4.0 script key documents by docid and would silently disagree with a positional evaluation).
    pub allow_duplicate_docids: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            storage: Storage::Auto,
            null: NullPolicy::Zero,
            repeated_qid: RepeatedQid::Error,
            keep_comments: true,
            query_file: QueryFile::Auto,
            min_features: 0,
            block_size: default_block_size(),
            allow_duplicate_docids: false,
        }
    }
}

/// The default [`ParseOptions::block_size`]: 4 MiB per thread of the current pool (four sub-chunks of at most 1 MiB
/// for each thread), between 8 and 64 MiB.
///
/// Two blocks are held while a large file streams, so this is the reader's memory beyond the parsed dataset. With a
/// fixed 64 MiB, reading a 246 MB raw web file into 72.8 MB of features peaked at 209 MB (2.9× the data); with 8 MiB
/// blocks at 2 threads it peaks at 94 MB, for the same CPU time (BENCHMARKS.md, "Reader memory"). More threads get
/// larger blocks so that every one of them still has sub-chunks to take while the next block is read.
pub fn default_block_size() -> usize {
    (rayon::current_num_threads() * (4 << 20)).clamp(8 << 20, 64 << 20)
}

/// The largest sub-chunk a block is cut into: big enough that a task's overhead vanishes, small enough to balance.
const SUB_CHUNK: usize = 1 << 20;
/// The smallest: below it a task costs more to hand out than to parse.
const MIN_SUB_CHUNK: usize = 64 << 10;
const MAX_INDEX: u64 = u32::MAX as u64;

/// Read a LETOR / SVMlight file with default options.
pub fn read_letor(path: impl AsRef<Path>) -> Result<Dataset> {
    read_letor_with(path, &ParseOptions::default())
}

/// Read a LETOR / SVMlight file.
pub fn read_letor_with(path: impl AsRef<Path>, opts: &ParseOptions) -> Result<Dataset> {
    let path = path.as_ref();
    check_regular_file(path)?;
    let mut text = Text::open(path, opts.block_size)?;
    let layout = scan_layout(&mut text, opts)?;
    let (buffers, mut outputs) = parse_into_layout(&text, opts, &layout)?;
    let with_qid = check_qid_presence(path, &outputs, layout.n_rows)?;
    let (offsets, qids, run_lines) = query_runs(path, opts, &mut outputs, with_qid, layout.n_rows)?;
    let ds = assemble(opts, &layout, buffers, &outputs, offsets, qids)?;
    // Duplicates are looked for after regrouping: two runs of one qid may hold the same docid.
    let (ds, source_rows) = check_repeated_qids(path, opts, ds, &run_lines)?;
    if !opts.allow_duplicate_docids {
        check_duplicate_docids(path, &ds, source_rows.as_deref())?;
    }
    Ok(ds)
}

/// Pass 1's result: per sub-chunk sizes and where each starts, and the storage they call for.
struct Layout {
    stats: Vec<ChunkStats>,
    line_base: Vec<usize>,
    row_base: Vec<usize>,
    nnz_base: Vec<usize>,
    n_rows: usize,
    total_nnz: usize,
    n_features: usize,
    dense: bool,
}

/// The exactly sized arrays pass 2 fills.
struct Buffers {
    labels: Vec<f32>,
    dense_values: Vec<f32>,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f32>,
}

/// Pass 1: count rows, stored values and the largest index of every sub-chunk (in parallel).
fn scan_layout(text: &mut Text<'_>, opts: &ParseOptions) -> Result<Layout> {
    let path = text.path;
    let stats = match text.take_scanned_stats() {
        Some(stats) => stats,
        None => {
            let mut stats: Vec<ChunkStats> = Vec::new();
            text.for_each_chunk_group(|chunks| {
                stats.extend(chunks.par_iter().map(|c| scan_chunk(c)).collect::<Vec<_>>());
                Ok(())
            })?;
            stats
        }
    };
    let n_rows: usize = stats.iter().map(|s| s.rows).sum();
    if n_rows == 0 {
        return Err(DataError::Empty {
            path: path.to_path_buf(),
        });
    }
    let mut line_base = Vec::with_capacity(stats.len());
    let mut row_base = Vec::with_capacity(stats.len());
    let mut nnz_base = Vec::with_capacity(stats.len());
    let (mut l, mut r, mut z) = (0usize, 0usize, 0usize);
    for s in &stats {
        line_base.push(l);
        row_base.push(r);
        nnz_base.push(z);
        l += s.physical_lines;
        r += s.rows;
        z += s.nnz;
    }
    let total_nnz = z;
    // An index beyond u32 must be reported before we size anything by it.
    for (k, s) in stats.iter().enumerate() {
        if let Some((line, tok)) = &s.overflow {
            return Err(parse_err(
                path,
                line_base[k] + line,
                tok,
                "feature index exceeds 4294967295",
                "an index that fits in 32 bits",
            ));
        }
    }
    let max_index = stats.iter().map(|s| s.max_index).max().unwrap_or(0) as usize;
    let n_features = max_index.max(opts.min_features);
    let density = total_nnz as f64 / (n_rows as f64 * n_features.max(1) as f64);
    let dense = match opts.storage {
        Storage::Dense => true,
        Storage::Sparse => false,
        Storage::Auto => density >= AUTO_DENSE_DENSITY,
    };

    Ok(Layout {
        stats,
        line_base,
        row_base,
        nnz_base,
        n_rows,
        total_nnz,
        n_features,
        dense,
    })
}

/// Pass 2: parse every sub-chunk straight into its slice of the final arrays (in parallel).
fn parse_into_layout(
    text: &Text<'_>,
    opts: &ParseOptions,
    layout: &Layout,
) -> Result<(Buffers, Vec<ChunkOutput>)> {
    let path = text.path;
    let Layout {
        stats,
        line_base,
        row_base,
        nnz_base,
        n_rows,
        total_nnz,
        n_features,
        dense,
    } = layout;
    let (n_rows, total_nnz, n_features, dense) = (*n_rows, *total_nnz, *n_features, *dense);
    let mut labels = vec![0f32; n_rows];
    let mut dense_values: Vec<f32> = if dense {
        vec![0f32; n_rows * n_features]
    } else {
        Vec::new()
    };
    let mut indptr: Vec<usize> = if dense {
        Vec::new()
    } else {
        vec![0; n_rows + 1]
    };
    let mut indices: Vec<u32> = if dense {
        Vec::new()
    } else {
        vec![0; total_nnz]
    };
    let mut values: Vec<f32> = if dense {
        Vec::new()
    } else {
        vec![0f32; total_nnz]
    };
    let mut outputs: Vec<ChunkOutput> = Vec::with_capacity(stats.len());
    {
        let mut chunk_idx = 0usize;
        let mut labels_rest: &mut [f32] = &mut labels;
        let mut dense_rest: &mut [f32] = &mut dense_values;
        let mut indptr_rest: &mut [usize] = if dense { &mut [] } else { &mut indptr[1..] };
        let mut indices_rest: &mut [u32] = &mut indices;
        let mut values_rest: &mut [f32] = &mut values;
        text.for_each_chunk_group(|chunks| {
            let mut jobs = Vec::with_capacity(chunks.len());
            for &text in chunks {
                let k = chunk_idx;
                chunk_idx += 1;
                let st = stats.get(k).ok_or_else(|| changed(path))?;
                let (lab, rest) = std::mem::take(&mut labels_rest).split_at_mut(st.rows);
                labels_rest = rest;
                let sink = if dense {
                    let (d, rest) =
                        std::mem::take(&mut dense_rest).split_at_mut(st.rows * n_features);
                    dense_rest = rest;
                    Sink::Dense {
                        values: d,
                        width: n_features,
                    }
                } else {
                    let (p, rest) = std::mem::take(&mut indptr_rest).split_at_mut(st.rows);
                    indptr_rest = rest;
                    let (ix, rest) = std::mem::take(&mut indices_rest).split_at_mut(st.nnz);
                    indices_rest = rest;
                    let (vs, rest) = std::mem::take(&mut values_rest).split_at_mut(st.nnz);
                    values_rest = rest;
                    Sink::Sparse {
                        indptr: p,
                        indices: ix,
                        values: vs,
                        base: nnz_base[k],
                    }
                };
                jobs.push((text, lab, sink, line_base[k], row_base[k], st.rows));
            }
            let outs: Vec<ChunkOutput> = jobs
                .into_par_iter()
                .map(|(text, lab, sink, lb, rb, rows)| {
                    parse_chunk(path, text, lab, sink, lb, rb, rows, opts)
                })
                .collect();
            outputs.extend(outs);
            Ok(())
        })?;
        if chunk_idx != stats.len() {
            return Err(changed(path));
        }
    }
    if let Some(e) = outputs.iter_mut().find_map(|o| o.error.take()) {
        return Err(e);
    }

    Ok((
        Buffers {
            labels,
            dense_values,
            indptr,
            indices,
            values,
        },
        outputs,
    ))
}

/// Qid presence must be all or nothing: the number of rows with a qid (0 or all).
fn check_qid_presence(path: &Path, outputs: &[ChunkOutput], n_rows: usize) -> Result<usize> {
    // Qid presence must be all or nothing.
    let with_qid: usize = outputs.iter().map(|o| o.rows_with_qid).sum();
    let first_line = outputs.iter().find_map(|o| o.first_line).unwrap_or(1);
    let first_has = outputs
        .iter()
        .find_map(|o| o.first_line.map(|_| o.first_has_qid))
        .unwrap_or(false);
    if with_qid != 0 && with_qid != n_rows {
        let line = outputs
            .iter()
            .find_map(|o| {
                if first_has {
                    o.first_without_qid
                } else {
                    o.first_with_qid
                }
            })
            .unwrap_or(first_line);
        let word = |b: bool| if b { "has" } else { "lacks" };
        return Err(DataError::MixedQid {
            path: path.to_path_buf(),
            line,
            has: word(!first_has),
            other_line: first_line,
            other_has: word(first_has),
        });
    }

    Ok(with_qid)
}

/// The query runs: from the qid tokens, or from a group file (`FILE.query`) for files without them.
fn query_runs(
    path: &Path,
    opts: &ParseOptions,
    outputs: &mut [ChunkOutput],
    with_qid: usize,
    n_rows: usize,
) -> Result<(Vec<usize>, Vec<String>, Vec<usize>)> {
    let (mut offsets, mut qids, mut run_lines) =
        (vec![0usize], Vec::<String>::new(), Vec::<usize>::new());
    if with_qid == n_rows {
        for o in outputs.iter_mut() {
            for (qid, row, line) in o.runs.drain(..) {
                if qids.last() == Some(&qid) {
                    continue; // a run continued across a chunk boundary
                }
                if row != 0 {
                    offsets.push(row);
                }
                qids.push(qid);
                run_lines.push(line);
            }
        }
        offsets.push(n_rows);
        if opts.query_file != QueryFile::None {
            if let QueryFile::Path(p) = &opts.query_file {
                return Err(DataError::QueryFile {
                    path: p.clone(),
                    problem: format!("{} already carries qid: tokens; a group file is only for files without them", path.display()),
                });
            }
        }
    } else {
        let sidecar = match &opts.query_file {
            QueryFile::Path(p) => Some(p.clone()),
            QueryFile::Auto => {
                let mut p = path.as_os_str().to_owned();
                p.push(".query");
                let p = PathBuf::from(p);
                p.is_file().then_some(p)
            }
            QueryFile::None => None,
        };
        match sidecar {
            Some(p) => {
                let sizes = read_group_file(&p, n_rows)?;
                for (q, s) in sizes.iter().enumerate() {
                    offsets.push(offsets[q] + s);
                    qids.push((q + 1).to_string());
                }
            }
            None => {
                tracing::warn!("{}: no qid: tokens and no .query group file; treating the whole file as one query", path.display());
                offsets.push(n_rows);
                qids.push("1".to_string());
            }
        }
    }

    Ok((offsets, qids, run_lines))
}

/// The dataset from the filled arrays, with doc ids and comments where the file has them.
fn assemble(
    opts: &ParseOptions,
    layout: &Layout,
    buffers: Buffers,
    outputs: &[ChunkOutput],
    offsets: Vec<usize>,
    qids: Vec<String>,
) -> Result<Dataset> {
    let (n_rows, n_features, dense) = (layout.n_rows, layout.n_features, layout.dense);
    let Buffers {
        labels,
        dense_values,
        indptr,
        indices,
        values,
    } = buffers;
    let features = if dense {
        let a = Array2::from_shape_vec((n_rows, n_features), dense_values)
            .map_err(|e| DataError::Invalid(format!("internal shape error: {e}")))?;
        FeatureMatrix::Dense(a)
    } else {
        FeatureMatrix::Sparse(CsMatI::new((n_rows, n_features), indptr, indices, values))
    };
    let has_docids = outputs
        .iter()
        .any(|o| o.docids.iter().any(|d| !d.is_empty()));
    let has_comments = opts.keep_comments
        && outputs
            .iter()
            .any(|o| o.comments.iter().any(|d| !d.is_empty()));
    let mut docids = TextColumn::new();
    let mut comments = TextColumn::new();
    for o in outputs {
        if has_docids {
            docids.extend_from(&o.docids);
        }
        if has_comments {
            comments.extend_from(&o.comments);
        }
    }
    let mut ds = Dataset::new(features, labels, offsets, qids)?;
    if has_docids {
        ds = ds.with_docids(docids)?;
    }
    if has_comments {
        ds = ds.with_comments(comments)?;
    }
    Ok(ds)
}

fn changed(path: &Path) -> DataError {
    DataError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other("the file changed while it was being read"),
    }
}

fn check_regular_file(path: &Path) -> Result<()> {
    let md = std::fs::metadata(path).map_err(|e| DataError::io(path, e))?;
    if md.is_dir() {
        return Err(DataError::io(
            path,
            std::io::Error::other("is a directory, expected a LETOR/SVMlight data file"),
        ));
    }
    Ok(())
}

/// Read a LightGBM/XGBoost `.query` group file: one positive group size per line; the sizes must sum to `n_rows`.
pub fn read_group_file(path: &Path, n_rows: usize) -> Result<Vec<usize>> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    let mut sizes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        match t.parse::<usize>() {
            Ok(s) if s > 0 => sizes.push(s),
            _ => {
                return Err(DataError::QueryFile {
                    path: path.to_path_buf(),
                    problem: format!(
                        "line {}: `{}` is not a positive group size",
                        i + 1,
                        truncate(t.as_bytes())
                    ),
                })
            }
        }
    }
    let total: usize = sizes.iter().sum();
    if total != n_rows {
        return Err(DataError::QueryFile {
            path: path.to_path_buf(),
            problem: format!("group sizes sum to {total} but the data file has {n_rows} lines"),
        });
    }
    Ok(sizes)
}
