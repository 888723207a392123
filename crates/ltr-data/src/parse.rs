//! Reading LETOR / SVMlight text: `label [qid:Q] idx:val ... [# comment]`.
//!
//! The reader makes two streaming passes over the file, block by block, each block split into sub-chunks parsed in
//! parallel. Pass one counts rows, stored values and the largest feature index; pass two parses straight into the
//! final, exactly sized arrays. The text is never held whole in memory and no intermediate copy of the features is
//! made, so peak memory stays close to the size of the parsed dataset.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use rayon::prelude::*;
use sprs::CsMatI;

use crate::dataset::{Dataset, FeatureMatrix, Storage, TextColumn, AUTO_DENSE_DENSITY};
use crate::error::{DataError, Result};

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
    /// Bytes read per block (each block is parsed in parallel).
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
            block_size: 64 << 20,
            allow_duplicate_docids: false,
        }
    }
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

/// The same docid twice within one query is an error naming both lines. Checked per query run, in parallel, with a
/// set the size of the query (peak memory O(largest query), not O(file)).
/// `source_rows[r]` is the file row of dataset row `r` when regrouping reordered them.
fn check_duplicate_docids(path: &Path, ds: &Dataset, source_rows: Option<&[usize]>) -> Result<()> {
    let source = |row: usize| source_rows.map_or(row, |m| m[row]);
    let Some(docids) = ds.docids() else {
        return Ok(());
    };
    let first = (0..ds.n_queries())
        .into_par_iter()
        .filter_map(|q| {
            let mut seen: std::collections::HashMap<&str, usize> =
                std::collections::HashMap::with_capacity(ds.query_range(q).len());
            for row in ds.query_range(q) {
                let id = docids.get(row);
                if !id.is_empty() {
                    if let Some(before) = seen.insert(id, source(row)) {
                        return Some((q, before.min(source(row)), before.max(source(row)), row));
                    }
                }
            }
            None
        })
        .min_by_key(|&(_, _, later, _)| later);
    let Some((q, before, later, row)) = first else {
        return Ok(());
    };
    let lines = data_lines(path, &[before, later])?;
    Err(DataError::DuplicateDocid {
        path: path.to_path_buf(),
        qid: ds.qids()[q].clone(),
        docid: docids.get(row).to_string(),
        first_line: lines[0],
        line: lines[1],
    })
}

/// The physical line numbers of the given data rows (an error path only: the file is read again).
fn data_lines(path: &Path, rows: &[usize]) -> Result<Vec<usize>> {
    let text = std::fs::read(path).map_err(|e| DataError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let mut out = vec![0; rows.len()];
    let mut row = 0usize;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if split_line(line).is_some() {
            for (k, &r) in rows.iter().enumerate() {
                if r == row {
                    out[k] = i + 1;
                }
            }
            row += 1;
        }
    }
    Ok(out)
}

/// A qid that reappears after another query is an error (or, on request, its runs are merged).
fn check_repeated_qids(
    path: &Path,
    opts: &ParseOptions,
    ds: Dataset,
    run_lines: &[usize],
) -> Result<(Dataset, Option<Vec<usize>>)> {
    let mut first_run: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut repeated = None;
    for (q, qid) in ds.qids().iter().enumerate() {
        if let Some(&first) = first_run.get(qid.as_str()) {
            repeated = Some((q, first));
            break;
        }
        first_run.insert(qid, q);
    }
    if let Some((q, first)) = repeated {
        match opts.repeated_qid {
            RepeatedQid::Error => {
                return Err(DataError::RepeatedQid {
                    path: path.to_path_buf(),
                    qid: ds.qids()[q].clone(),
                    first_line: run_lines.get(first).copied().unwrap_or(0),
                    line: run_lines.get(q).copied().unwrap_or(0),
                });
            }
            RepeatedQid::Regroup => {
                let (merged, rows) = regroup(&ds);
                return Ok((merged, Some(rows)));
            }
        }
    }
    Ok((ds, None))
}

/// Merge the runs of every repeated qid at the place of its first run; also returns each new row's file row.
fn regroup(ds: &Dataset) -> (Dataset, Vec<usize>) {
    let mut order: Vec<&str> = Vec::new();
    let mut runs: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (q, qid) in ds.qids().iter().enumerate() {
        runs.entry(qid.as_str()).or_insert_with(|| {
            order.push(qid);
            Vec::new()
        });
        runs.get_mut(qid.as_str()).expect("inserted").push(q);
    }
    let merged_order: Vec<usize> = order
        .iter()
        .flat_map(|qid| runs[qid].iter().copied())
        .collect();
    let source_rows: Vec<usize> = merged_order
        .iter()
        .flat_map(|&q| ds.query_range(q))
        .collect();
    let tmp = ds.select_queries(&merged_order);
    // Now runs of a qid are adjacent: merge their offsets.
    let mut offsets = vec![0usize];
    let mut qids: Vec<String> = Vec::new();
    for (q, qid) in tmp.qids().iter().enumerate() {
        if qids.last() == Some(qid) {
            *offsets.last_mut().expect("non-empty") = tmp.query_offsets()[q + 1];
        } else {
            qids.push(qid.clone());
            offsets.push(tmp.query_offsets()[q + 1]);
        }
    }
    let mut out = Dataset::new(tmp.features().clone(), tmp.labels().to_vec(), offsets, qids)
        .expect("regroup keeps shapes");
    if let Some(d) = tmp.docids() {
        out = out.with_docids(d.clone()).expect("same rows");
    }
    if let Some(c) = tmp.comments() {
        out = out.with_comments(c.clone()).expect("same rows");
    }
    (out, source_rows)
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

/// A file's text as the two passes read it. A file that fits in one block is read once, in sub-chunks of whole lines
/// that pass one scans on the thread pool while the next is read, and pass two parses the same bytes (a small
/// file's second read, and the zeroing of its buffer, cost as much as half its parse; reading it whole before
/// scanning left one core idle for the read). A larger file is streamed block by block on each pass, so memory
/// stays one block whatever the file's size.
struct Text<'p> {
    path: &'p Path,
    /// The whole file in sub-chunks (a leading BOM removed), when it fits in one block.
    chunks: Option<Vec<Vec<u8>>>,
    /// Pass one's statistics of `chunks`, until pass one takes them.
    scanned: Option<Vec<ChunkStats>>,
    block_size: usize,
}

impl<'p> Text<'p> {
    /// Open `path`, reading (and scanning) it whole when it is at most `block_size` bytes.
    fn open(path: &'p Path, block_size: usize) -> Result<Self> {
        let file_len = std::fs::metadata(path)
            .map_err(|e| DataError::io(path, e))?
            .len();
        let block_size = block_size.max(1024);
        let (chunks, scanned) = if file_len <= block_size as u64 {
            let (chunks, stats) = read_scanned(path, file_len as usize)?;
            (Some(chunks), Some(stats))
        } else {
            (None, None)
        };
        Ok(Self {
            path,
            chunks,
            scanned,
            block_size,
        })
    }

    /// Pass one's statistics, when the file was scanned as it was read.
    fn take_scanned_stats(&mut self) -> Option<Vec<ChunkStats>> {
        self.scanned.take()
    }

    /// Call `f` on consecutive groups of sub-chunks of whole lines (a trailing line without newline included; a
    /// leading BOM removed): the whole file's, or each block's.
    fn for_each_chunk_group(&self, mut f: impl FnMut(&[&[u8]]) -> Result<()>) -> Result<()> {
        match &self.chunks {
            Some(chunks) => {
                let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                if chunks.is_empty() {
                    Ok(())
                } else {
                    f(&chunks)
                }
            }
            None => stream_blocks(self.path, self.block_size, |block| {
                f(&split_sub_chunks(block))
            }),
        }
    }
}

/// Read the file at `path` (about `len` bytes) in sub-chunks of whole lines, each handed to pass one
/// ([`scan_chunk`]) on the thread pool as soon as it is read; the chunks and their statistics in file order.
fn read_scanned(path: &Path, len: usize) -> Result<(Vec<Vec<u8>>, Vec<ChunkStats>)> {
    let size = sub_chunk_size(len);
    let mut file = File::open(path).map_err(|e| DataError::io(path, e))?;
    let (sender, receiver) = std::sync::mpsc::channel();
    rayon::scope(|scope| -> Result<()> {
        let mut carry: Vec<u8> = Vec::new();
        let mut first = true;
        for k in 0.. {
            let mut buf = std::mem::take(&mut carry);
            let eof = fill_to_a_line(path, &mut file, &mut buf, size)?;
            if first {
                if buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
                    buf.drain(..3);
                }
                first = false;
            }
            if !eof {
                let cut = memchr::memrchr(b'\n', &buf).map_or(buf.len(), |p| p + 1);
                carry = buf[cut..].to_vec();
                buf.truncate(cut);
            }
            if !buf.is_empty() {
                let sender = sender.clone();
                scope.spawn(move |_| {
                    let stats = scan_chunk(&buf);
                    // The receiver outlives the scope.
                    let _ = sender.send((k, buf, stats));
                });
            }
            if eof {
                break;
            }
        }
        Ok(())
    })?;
    drop(sender);
    let mut parts: Vec<(usize, Vec<u8>, ChunkStats)> = receiver.into_iter().collect();
    parts.sort_unstable_by_key(|p| p.0);
    Ok(parts
        .into_iter()
        .map(|(_, chunk, stats)| (chunk, stats))
        .unzip())
}

/// Read into `buf` until it holds `size` bytes, then on until it holds a newline; true at the end of the file.
/// `read_to_end` through `take` reads into the spare capacity without zeroing it first.
fn fill_to_a_line(path: &Path, file: &mut File, buf: &mut Vec<u8>, size: usize) -> Result<bool> {
    loop {
        let want = size.max(buf.len() + 1024) - buf.len();
        let got = file
            .take(want as u64)
            .read_to_end(buf)
            .map_err(|e| DataError::io(path, e))?;
        if got < want {
            return Ok(true);
        }
        if memchr::memrchr(b'\n', buf).is_some() {
            return Ok(false);
        }
    }
}

/// Call `f` on consecutive blocks of whole lines of the file at `path`, read `block_size` bytes at a time.
///
/// The next block is read on another thread while `f` parses this one: the read is a copy out of the page cache
/// that no task of the pool shares, so reading in turn left a core idle for each block of each pass (a tenth of
/// the CPU time on the 1 GB file). Two blocks are held at once.
fn stream_blocks(
    path: &Path,
    block_size: usize,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut file = File::open(path).map_err(|e| DataError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| DataError::io(path, e))?.len();
    // Never allocate more than the file needs (small files are common in tests and fuzzing).
    let block_size = block_size.max(1024).min(file_len as usize + 1);
    let spare = Vec::with_capacity(block_size + 4096);
    let mut next = read_block(path, &mut file, spare, &[], block_size, true)?;
    let mut spare = Vec::with_capacity(block_size + 4096);
    loop {
        let (block, cut, eof) = next;
        if eof {
            return if cut > 0 { f(&block[..cut]) } else { Ok(()) };
        }
        let (read, parsed) = std::thread::scope(|scope| {
            let file = &mut file;
            let carry = &block[cut..];
            let reader =
                scope.spawn(move || read_block(path, file, spare, carry, block_size, false));
            let parsed = if cut > 0 { f(&block[..cut]) } else { Ok(()) };
            let read = reader
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, parsed)
        });
        parsed?;
        next = read?;
        spare = block;
    }
}

/// The next block of `file`: `carry` (the previous block's unfinished last line) and then at least `block_size`
/// bytes in all, on to the end of a line, in `buf`; how many of its bytes are whole lines; whether the file ended.
/// The first block loses a leading UTF-8 BOM.
fn read_block(
    path: &Path,
    file: &mut File,
    mut buf: Vec<u8>,
    carry: &[u8],
    block_size: usize,
    first: bool,
) -> Result<(Vec<u8>, usize, bool)> {
    buf.clear();
    buf.extend_from_slice(carry);
    let eof = fill_to_a_line(path, file, &mut buf, block_size)?;
    if first && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
        buf.drain(..3);
    }
    let cut = if eof {
        buf.len()
    } else {
        memchr::memrchr(b'\n', &buf).map_or(buf.len(), |p| p + 1)
    };
    Ok((buf, cut, eof))
}

/// The size of the sub-chunks `len` bytes are cut into: about four per thread, between [`MIN_SUB_CHUNK`] and
/// [`SUB_CHUNK`].
fn sub_chunk_size(len: usize) -> usize {
    (len / (4 * rayon::current_num_threads())).clamp(MIN_SUB_CHUNK, SUB_CHUNK)
}

/// Split a block into sub-chunks, each ending after a newline (or at the block end): about four per thread, between
/// [`MIN_SUB_CHUNK`] and [`SUB_CHUNK`] bytes, so that a file of a few megabytes keeps every core busy too (with
/// 1 MB chunks a 2.3 MB file was three tasks, parsed at 0.92 cores of two). Both passes cut a block the same way.
// pub for the tests in tests/unit/parse.rs; not API.
#[doc(hidden)]
pub fn split_sub_chunks(block: &[u8]) -> Vec<&[u8]> {
    let size = sub_chunk_size(block.len());
    let mut out = Vec::with_capacity(block.len() / size + 1);
    let mut start = 0;
    while start < block.len() {
        let target = (start + size).min(block.len());
        let end = if target == block.len() {
            target
        } else {
            memchr::memchr(b'\n', &block[target..]).map_or(block.len(), |p| target + p + 1)
        };
        out.push(&block[start..end]);
        start = end;
    }
    out
}

#[derive(Debug, Default)]
struct ChunkStats {
    physical_lines: usize,
    rows: usize,
    nnz: usize,
    max_index: u64,
    overflow: Option<(usize, String)>,
}

/// The data part of a line (before `#`, whitespace-trimmed) and its comment, or `None` for blank/comment lines.
#[inline]
fn split_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let (data, comment) = match memchr::memchr(b'#', line) {
        Some(p) => (&line[..p], &line[p + 1..]),
        None => (line, &line[..0]),
    };
    let data = data.trim_ascii();
    if data.is_empty() {
        None
    } else {
        Some((data, comment.trim_ascii()))
    }
}

/// A token separator inside a line.
#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The token of `data` at or after `*at` (skipping separators), moving `*at` past it.
#[inline]
fn next_token<'d>(data: &'d [u8], at: &mut usize) -> Option<&'d [u8]> {
    let start = skip_blanks(data, *at);
    let mut i = start;
    while i < data.len() && !is_blank(data[i]) {
        i += 1;
    }
    *at = i;
    (start < i).then(|| &data[start..i])
}

/// The first position at or after `at` that is not a separator (`data.len()` at the end).
#[inline]
fn skip_blanks(data: &[u8], mut at: usize) -> usize {
    while at < data.len() && is_blank(data[at]) {
        at += 1;
    }
    at
}

/// The common, well-formed `index:value` token at `data[*at..]` (an index after `last_index`, a finite value
/// ending at a separator or the line's end), read in one pass over its bytes, moving `*at` past it. `None` for
/// anything else, which [`parse_feature`] then reads again to accept (`NULL`) or to say what is wrong.
#[inline]
fn well_formed_feature(data: &[u8], at: &mut usize, last_index: u64) -> Option<(u64, f32)> {
    let start = *at;
    let mut i = start;
    let mut index: u64 = 0;
    // Ten digits hold every u32 index without overflowing a u64; a longer one takes the slow path.
    while i < data.len() && i - start < 10 && data[i].is_ascii_digit() {
        index = index * 10 + u64::from(data[i] - b'0');
        i += 1;
    }
    if i == start || data.get(i) != Some(&b':') || index <= last_index || index > MAX_INDEX {
        return None;
    }
    let text = &data[i + 1..];
    let (value, used) = match short_decimal(text) {
        Some((value, used)) if text.get(used).is_none_or(|&b| is_blank(b)) => (value, used),
        _ => fast_float2::parse_partial::<f32, _>(text).ok()?,
    };
    let end = i + 1 + used;
    if !value.is_finite() || data.get(end).is_some_and(|&b| !is_blank(b)) {
        return None;
    }
    *at = end;
    Some((index, value))
}

/// 10^0 … 10^15, each exact in f64.
const POWERS_OF_TEN: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The plain decimal at the start of `text` (`-`, digits, `.`, digits; at most 15 digits in all) as the f32 nearest
/// to it, and the bytes it took; `None` for anything else and for the rare value that needs the exact parser.
///
/// Written f32 values (`0.53554475`) are this form, and `fast_float2` spent a third of a parse on its general
/// scaffolding for them. The digits make an integer m < 10^15 < 2^53 and the point a power 10^e, e ≤ 15, both exact
/// in f64, so m / 10^e is the correctly rounded f64 of the decimal. Rounding that to f32 gives the correctly
/// rounded f32 (what `fast_float2` and `str::parse` return) unless the f64 lies exactly halfway between two f32
/// values: f32's halfway points are f64 values and rounding is monotone, so an f64 that is not one of them lies on
/// the same side of each as the decimal. That case is left to the exact parser. The values stay far inside f32's
/// normal range (10^-15 ≤ |x| < 10^15, or 0), where a halfway point is an f64 whose 29 bits below f32's precision
/// are 1000…0.
// pub for the tests in tests/unit/parse.rs; not API.
#[doc(hidden)]
#[inline]
pub fn short_decimal(text: &[u8]) -> Option<(f32, usize)> {
    let negative = text.first() == Some(&b'-');
    let mut i = usize::from(negative);
    let mut mantissa: u64 = 0;
    let mut digits = 0usize;
    while let Some(d) = text
        .get(i)
        .map(|b| b.wrapping_sub(b'0'))
        .filter(|&d| d < 10)
    {
        mantissa = mantissa * 10 + u64::from(d);
        digits += 1;
        i += 1;
        if digits > 15 {
            return None;
        }
    }
    let mut fraction = 0usize;
    if text.get(i) == Some(&b'.') {
        i += 1;
        while let Some(d) = text
            .get(i)
            .map(|b| b.wrapping_sub(b'0'))
            .filter(|&d| d < 10)
        {
            mantissa = mantissa * 10 + u64::from(d);
            digits += 1;
            fraction += 1;
            i += 1;
            if digits > 15 {
                return None;
            }
        }
    }
    if digits == 0 {
        return None;
    }
    let value = mantissa as f64 / POWERS_OF_TEN[fraction];
    if value.to_bits() & 0x1FFF_FFFF == 0x1000_0000 {
        return None;
    }
    let value = value as f32;
    Some((if negative { -value } else { value }, i))
}

/// The lines of `chunk` (without their `\n`), as `split` would give them, found with memchr.
fn lines(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(chunk.strip_suffix(b"\n").unwrap_or(chunk));
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr(b'\n', text) {
            Some(p) => {
                rest = Some(&text[p + 1..]);
                Some(&text[..p])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

fn scan_chunk(chunk: &[u8]) -> ChunkStats {
    let mut s = ChunkStats::default();
    if chunk.is_empty() {
        return s;
    }
    for (li, line) in lines(chunk).enumerate() {
        s.physical_lines += 1;
        let Some((data, _)) = split_line(line) else {
            continue;
        };
        s.rows += 1;
        // A stored value is a token `index:value`: digits from the token's start up to its first colon. Colons are
        // found with memchr instead of splitting the line into tokens, which made this pass as slow as parsing. A
        // colon with anything else before it (`qid:`, a label, a malformed token) is not counted; on a well-formed
        // line that counts exactly the values pass 2 writes, and pass 2 rejects any other line with its number.
        for colon in memchr::memchr_iter(b':', data) {
            let start = data[..colon]
                .iter()
                .rposition(|b| !b.is_ascii_digit())
                .map_or(0, |p| p + 1);
            if start == colon || (start > 0 && !is_blank(data[start - 1])) {
                continue;
            }
            s.nnz += 1;
            if let Some(v) = parse_index(&data[start..colon]) {
                if v > MAX_INDEX {
                    if s.overflow.is_none() {
                        let end = data[colon..]
                            .iter()
                            .position(|&b| is_blank(b))
                            .map_or(data.len(), |p| colon + p);
                        s.overflow = Some((li + 1, truncate(&data[start..end])));
                    }
                } else {
                    s.max_index = s.max_index.max(v);
                }
            }
        }
    }
    s
}

/// Parse a decimal index; `None` if not all digits or absurdly long (overflow is saturated to u64::MAX).
#[inline]
fn parse_index(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 40 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.saturating_mul(10).saturating_add((c - b'0') as u64);
    }
    Some(v)
}

enum Sink<'a> {
    Dense {
        values: &'a mut [f32],
        width: usize,
    },
    Sparse {
        indptr: &'a mut [usize],
        indices: &'a mut [u32],
        values: &'a mut [f32],
        base: usize,
    },
}

#[derive(Default)]
struct ChunkOutput {
    runs: Vec<(String, usize, usize)>, // qid, global row, line
    docids: TextColumn,
    comments: TextColumn,
    rows_with_qid: usize,
    first_line: Option<usize>,
    first_has_qid: bool,
    first_with_qid: Option<usize>,
    first_without_qid: Option<usize>,
    error: Option<DataError>,
}

fn truncate(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    if s.chars().count() > 40 {
        let mut t: String = s.chars().take(40).collect();
        t.push('…');
        t
    } else {
        s.into_owned()
    }
}

fn parse_err(path: &Path, line: usize, tok: &str, problem: &str, expected: &str) -> DataError {
    DataError::Parse {
        path: path.to_path_buf(),
        line,
        token: tok.to_string(),
        problem: problem.to_string(),
        expected: expected.to_string(),
    }
}

/// Extract `X` from a comment containing `docid = X` or `docid=X`.
pub fn extract_docid(comment: &str) -> Option<&str> {
    let p = comment.find("docid")?;
    let rest = comment[p + 5..].trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

#[inline]
fn parse_f32(tok: &[u8]) -> Option<f32> {
    fast_float2::parse::<f32, _>(tok).ok()
}

/// The error of one token on one line: what is wrong and what was expected.
type TokenError<'e> = dyn Fn(&[u8], &str, &str) -> DataError + 'e;

/// A label token: a finite number.
fn parse_label(tok: &[u8], err: &TokenError<'_>) -> Result<f32> {
    let label = parse_f32(tok).ok_or_else(|| {
        err(
            tok,
            "the label is not a number",
            "a numeric relevance label",
        )
    })?;
    if !label.is_finite() {
        return Err(err(
            tok,
            "the label is not finite",
            "a finite relevance label",
        ));
    }
    Ok(label)
}

/// One `index:value` token after the feature index `last_index`: its 1-based index and its value.
fn parse_feature(
    tok: &[u8],
    last_index: u64,
    opts: &ParseOptions,
    err: &TokenError<'_>,
) -> Result<(u64, f32)> {
    let Some(c) = memchr::memchr(b':', tok) else {
        return Err(err(tok, "a feature token has no `:`", "`index:value`"));
    };
    let (idx_b, val_b) = (&tok[..c], &tok[c + 1..]);
    if idx_b == b"qid" {
        return Err(err(
            tok,
            "`qid:` must come right after the label",
            "`index:value`",
        ));
    }
    let idx = match parse_index(idx_b) {
        Some(0) => {
            return Err(err(
                tok,
                "feature index 0",
                "a feature index >= 1 (LETOR/SVMlight indices are 1-based)",
            ))
        }
        Some(v) if v > MAX_INDEX => {
            return Err(err(
                tok,
                "feature index exceeds 4294967295",
                "an index that fits in 32 bits",
            ))
        }
        Some(v) => v,
        None if idx_b.first() == Some(&b'-') => {
            return Err(err(tok, "negative feature index", "a feature index >= 1"))
        }
        None => {
            return Err(err(
                tok,
                "the feature index is not a whole number",
                "`index:value` with a positive integer index",
            ))
        }
    };
    if idx == last_index {
        return Err(err(
            tok,
            "the same feature index appears twice on the line",
            "strictly increasing feature indices",
        ));
    }
    if idx < last_index {
        return Err(err(
            tok,
            "feature indices decrease",
            "strictly increasing feature indices",
        ));
    }
    let val = if val_b.eq_ignore_ascii_case(b"null") {
        match opts.null {
            NullPolicy::Zero => 0.0,
            NullPolicy::Error => {
                return Err(err(
                    tok,
                    "NULL feature value",
                    "a number (or read with the NULL-as-zero option)",
                ))
            }
        }
    } else {
        let v = parse_f32(val_b).ok_or_else(|| {
            err(
                tok,
                "the feature value is not a number",
                "`index:value` with a numeric value",
            )
        })?;
        if !v.is_finite() {
            return Err(err(
                tok,
                "the feature value is not finite (NaN or infinity)",
                "a finite feature value",
            ));
        }
        v
    };
    Ok((idx, val))
}

fn parse_chunk(
    path: &Path,
    chunk: &[u8],
    labels: &mut [f32],
    mut sink: Sink<'_>,
    line_base: usize,
    row_base: usize,
    expected_rows: usize,
    opts: &ParseOptions,
) -> ChunkOutput {
    let mut out = ChunkOutput::default();
    let mut row = 0usize;
    let mut pos = 0usize; // sparse write position within this chunk
    let mut prev_qid: &[u8] = &[];
    let result: Result<()> = (|| {
        for (li, line) in lines(chunk).enumerate() {
            let line_no = line_base + li + 1;
            let Some((data, comment)) = split_line(line) else {
                continue;
            };
            if row >= expected_rows {
                return Err(changed(path));
            }
            let err = |tok: &[u8], problem: &str, expected: &str| {
                parse_err(path, line_no, &truncate(tok), problem, expected)
            };
            let mut at = 0;
            let label_tok = next_token(data, &mut at).expect("non-empty data");
            let label = parse_label(label_tok, &err)?;
            labels[row] = label;
            // Optional qid.
            let mut has_qid = false;
            let after_label = at;
            if let Some(t) = next_token(data, &mut at) {
                if let Some(q) = t.strip_prefix(b"qid:") {
                    if q.is_empty() {
                        return Err(err(t, "`qid:` has no value", "a query id after `qid:`"));
                    }
                    has_qid = true;
                    if out.runs.is_empty() || prev_qid != q {
                        out.runs.push((
                            String::from_utf8_lossy(q).into_owned(),
                            row_base + row,
                            line_no,
                        ));
                        prev_qid = q;
                    }
                }
            }
            if !has_qid {
                at = after_label;
            }
            if out.first_line.is_none() {
                out.first_line = Some(line_no);
                out.first_has_qid = has_qid;
            }
            if has_qid {
                out.rows_with_qid += 1;
                out.first_with_qid.get_or_insert(line_no);
            } else {
                out.first_without_qid.get_or_insert(line_no);
            }
            let mut last_index: u64 = 0;
            loop {
                at = skip_blanks(data, at);
                if at == data.len() {
                    break;
                }
                let (idx, val) = match well_formed_feature(data, &mut at, last_index) {
                    Some(feature) => feature,
                    None => {
                        let tok = next_token(data, &mut at).expect("a token starts here");
                        parse_feature(tok, last_index, opts, &err)?
                    }
                };
                last_index = idx;
                let col = (idx - 1) as usize;
                match &mut sink {
                    Sink::Dense { values, width } => {
                        // Pass 1 sized the rows by the largest index it saw; a file that changed since is refused.
                        if col >= *width {
                            return Err(changed(path));
                        }
                        values[row * *width + col] = val
                    }
                    Sink::Sparse {
                        indices, values, ..
                    } => {
                        if pos >= indices.len() {
                            return Err(changed(path));
                        }
                        indices[pos] = col as u32;
                        values[pos] = val;
                        pos += 1;
                    }
                }
            }
            if let Sink::Sparse { indptr, base, .. } = &mut sink {
                indptr[row] = *base + pos;
            }
            let comment = std::str::from_utf8(comment).unwrap_or("");
            out.docids.push(extract_docid(comment).unwrap_or(""));
            if opts.keep_comments {
                out.comments.push(comment);
            }
            row += 1;
        }
        if row != expected_rows {
            return Err(changed(path));
        }
        Ok(())
    })();
    if let Err(e) = result {
        out.error = Some(e);
    }
    out
}
