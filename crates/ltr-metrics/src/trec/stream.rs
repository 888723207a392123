//! A run file evaluated against qrels while it is read: each block's queries that lie wholly inside the block are
//! joined, ranked and measured there, from the block's own buffer, and never stored as a [`RunQuery`]. Only the
//! runs of lines at a block's edges (a query that goes on in the next block) are kept, and a query that the file
//! interleaves with others is put together again from its parts (the evaluated ones read once more from the file).
//! The values, their order and the errors are those of [`read_run`](super::read_run) then
//! [`evaluate_run`](super::evaluate_run).

use std::path::Path;

use super::join::{fused, run_query_values, QueryDocs, RunScratch};
use super::number::{values_into, Decimal};
use super::read::{parse_file, parts_by_query, run_value, Segment, BLOCK, RUN_FIELDS};
use super::{io, FileError};
use crate::convention::Convention;
use crate::evaluate::{assemble, Evaluation};
use crate::metric::Metric;
use crate::runs::{Qrels, RunQuery};

/// What a block made of one run of lines of one query.
enum Piece {
    /// The query has no judgments: it is not evaluated.
    Unjudged,
    /// Evaluated in place (the query may still recur elsewhere): its values, or the error, and the file's bytes
    /// that hold its lines.
    Done {
        values: Result<Vec<f64>, FileError>,
        span: (u64, u64),
    },
    /// Lines at a block's edge, kept.
    Part(RunQuery),
}

/// Evaluate the TREC run at `path` against `qrels` as [`read_run`](super::read_run) then
/// [`evaluate_run`](super::evaluate_run) would, reading and evaluating at once (see the module's documentation).
/// `None` when the run holds no line (blank and `#` lines aside).
pub fn evaluate_run_file(
    path: &Path,
    qrels: &Qrels,
    metrics: &[Metric],
    conv: &Convention,
) -> Result<Option<Evaluation>, FileError> {
    evaluate_run_file_in_blocks(path, qrels, metrics, conv, BLOCK)
}

// pub for the tests in tests/unit/trec_stream.rs; not API.
#[doc(hidden)]
pub fn evaluate_run_file_in_blocks(
    path: &Path,
    qrels: &Qrels,
    metrics: &[Metric],
    conv: &Convention,
    block: usize,
) -> Result<Option<Evaluation>, FileError> {
    use rayon::prelude::*;
    let nm = metrics.len();
    let fused = fused(metrics, conv);
    let blocks = parse_file(
        path,
        block,
        RUN_FIELDS,
        run_value,
        || (RunScratch::new(conv), Vec::new()),
        |(sc, scores), s: Segment<'_, Decimal>| {
            let Some(j) = qrels.get(s.qid) else {
                return Piece::Unjudged;
            };
            values_into(s.values, scores);
            if !s.interior {
                return Piece::Part(RunQuery::from_items(s.ids, scores));
            }
            let q = QueryDocs::Slices {
                qid: s.qid,
                ids: s.ids,
                scores: scores.as_slice(),
            };
            let mut row = vec![0.0; nm];
            // No measure, nothing computed (as `evaluate_run`, which then finds no duplicate either).
            let values = if nm == 0 {
                Ok(row)
            } else {
                run_query_values(q, j, metrics, conv, fused, sc, &mut row).map(|()| row)
            };
            Piece::Done {
                values,
                span: s.span,
            }
        },
    )?;
    if blocks.iter().all(|b| b.segments.is_empty()) {
        return Ok(None);
    }
    let queries: Vec<(String, Vec<Piece>)> = parts_by_query(blocks)
        .into_iter()
        .filter(|(_, pieces)| !matches!(pieces[0], Piece::Unjudged))
        .collect();
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let rows: Vec<(String, Result<Vec<f64>, FileError>)> = queries
        .into_par_iter()
        .map_init(
            || RunScratch::new(conv),
            |sc, (qid, pieces)| {
                let values =
                    query_values(path, &file, &qid, pieces, qrels, metrics, conv, fused, sc);
                (qid, values)
            },
        )
        .collect();
    // The first error in run order, as `evaluate_run` meets it.
    let mut table = Vec::with_capacity(rows.len() * nm);
    let mut qids = Vec::with_capacity(rows.len());
    for (qid, values) in rows {
        table.extend(values?);
        qids.push(qid);
    }
    Ok(Some(assemble(qids, metrics, conv, &table)))
}

/// The values of the judged query `qid` from its pieces: the one evaluated in place, or its parts (the evaluated
/// ones read again from `file`) put together in file order and evaluated.
fn query_values(
    path: &Path,
    file: &std::fs::File,
    qid: &str,
    mut pieces: Vec<Piece>,
    qrels: &Qrels,
    metrics: &[Metric],
    conv: &Convention,
    fused: bool,
    sc: &mut RunScratch,
) -> Result<Vec<f64>, FileError> {
    if let [Piece::Done { .. }] = pieces[..] {
        if let Some(Piece::Done { values, .. }) = pieces.pop() {
            return values;
        }
    }
    let mut q: Option<RunQuery> = None;
    for p in pieces {
        let part = match p {
            Piece::Part(r) => r,
            Piece::Done { span, .. } => reread(file, span).map_err(|e| io(path, e))?,
            Piece::Unjudged => unreachable!("every piece of a judged query is judged"),
        };
        match &mut q {
            None => q = Some(part),
            Some(q) => q.append(&part),
        }
    }
    let mut q = q.expect("a query has a piece");
    q.set_qid(qid);
    let j = qrels.get(qid).expect("the query is judged");
    let mut row = vec![0.0; metrics.len()];
    if !metrics.is_empty() {
        run_query_values(QueryDocs::Run(&q), j, metrics, conv, fused, sc, &mut row)?;
    }
    Ok(row)
}

/// The run lines in the file's bytes `span` (one query's, already checked) as a run query.
fn reread(file: &std::fs::File, span: (u64, u64)) -> std::io::Result<RunQuery> {
    let mut buf = Vec::new();
    super::read::read_span(file, span, &mut buf)?;
    let text = std::str::from_utf8(&buf).map_err(std::io::Error::other)?;
    let (mut ids, mut scores) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() || f[0].starts_with('#') {
            continue;
        }
        let score = run_value(&[f[0], f[2], f[4]], f.len())
            .map_err(std::io::Error::other)?
            .value();
        ids.push(f[2]);
        scores.push(score);
    }
    Ok(RunQuery::from_items(&ids, &scores))
}
