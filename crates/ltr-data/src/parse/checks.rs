//! The checks made once the rows are parsed: a docid twice within a query, and a qid that reappears after other
//! queries (an error, or on request its runs merged).

use std::path::Path;

use rayon::prelude::*;

use super::line::split_line;
use super::{ParseOptions, RepeatedQid};
use crate::dataset::Dataset;
use crate::error::{DataError, Result};

/// The same docid twice within one query is an error naming both lines. Checked per query run, in parallel, with a
/// set the size of the query (peak memory O(largest query), not O(file)).
/// `source_rows[r]` is the file row of dataset row `r` when regrouping reordered them.
pub(super) fn check_duplicate_docids(
    path: &Path,
    ds: &Dataset,
    source_rows: Option<&[usize]>,
) -> Result<()> {
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
pub(super) fn check_repeated_qids(
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
