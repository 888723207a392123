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

fn evaluate_run_file_in_blocks(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trec::{evaluate_run, read_qrels, read_run};

    fn show(r: Result<Option<Evaluation>, FileError>) -> String {
        match r {
            Ok(None) => "empty".into(),
            Ok(Some(ev)) => {
                let bits: Vec<Vec<u64>> = ev
                    .results
                    .iter()
                    .map(|r| r.per_query.iter().map(|v| v.to_bits()).collect())
                    .collect();
                format!("ok {:?} {bits:?}", ev.qids)
            }
            Err(e) => format!("err {e}"),
        }
    }

    /// Random runs (queries in runs of lines, interleaved with each other and recurring, blank and `#` lines,
    /// CRLF, tied scores, unjudged queries and documents, a document listed twice, a bad line or none) evaluated
    /// while read, in blocks of many sizes, against `read_run` then `evaluate_run`: the same queries in the same
    /// order, every value bit for bit, the same error.
    #[test]
    fn evaluated_while_read_matches_read_then_evaluated() {
        let dir = std::env::temp_dir().join(format!("ltr-trec-stream-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = ltr_testdata::XorShift64::new(0x1234_5678_9abc_def1);
        let mut next = move |m: u64| rng.below(m);
        let metrics: Vec<Metric> = ["nDCG@10", "AP", "RR", "P@5", "bpref"]
            .iter()
            .map(|m| m.parse().unwrap())
            .collect();
        let (rp, qp) = (dir.join("run"), dir.join("qrels"));
        let mut seen_errors = 0;
        for case in 0..40 {
            let (mut run, mut qrels) = (String::new(), String::new());
            let queries = 1 + next(12);
            for q in 0..queries {
                if q % 5 == 4 {
                    continue; // a run query without judgments
                }
                for d in 0..next(40) {
                    let rel = [0, 1, 2, -1][next(4) as usize];
                    qrels.push_str(&format!("q{q} 0 d{d} {rel}\n"));
                    // A document judged again (the last value counts, in its first place).
                    if next(8) == 0 {
                        let again = next(d + 1);
                        qrels.push_str(&format!("q{q} 0 d{again} {}\n", next(3)));
                    }
                }
            }
            // Later judgments of earlier queries, some of them again.
            for _ in 0..next(4) {
                let q = next(queries);
                qrels.push_str(&format!("q{q} 0 d{} {}\n", next(60), next(3)));
            }
            let bad = (case % 4 == 3).then(|| next(200) as usize);
            let mut line = 0;
            // Distinct documents per query, but for a document listed twice in some cases.
            let mut docs = vec![0u64; queries as usize];
            for _ in 0..1 + next(30) {
                // A run of lines of one query; queries recur in later runs when `case` is odd.
                let q = if case % 2 == 1 {
                    next(queries)
                } else {
                    line as u64 % queries
                };
                for _ in 0..1 + next(25) {
                    let d = if case % 5 == 2 && next(60) == 0 {
                        0
                    } else {
                        docs[q as usize] += 1;
                        docs[q as usize] + next(2) * 1000
                    };
                    let score = if next(5) == 0 {
                        0.5
                    } else {
                        next(1000) as f64 / 7.0
                    };
                    let end = if next(6) == 0 { "\r\n" } else { "\n" };
                    match next(20) {
                        0 => run.push('\n'),
                        1 => run.push_str("# a comment\n"),
                        _ => {}
                    }
                    if Some(line) == bad {
                        run.push_str(&format!("q{q} Q0 d{d} 1 x{score} t{end}"));
                    } else {
                        run.push_str(&format!("q{q} Q0 d{d} 1 {score} t{end}"));
                    }
                    line += 1;
                }
            }
            std::fs::write(&rp, &run).unwrap();
            std::fs::write(&qp, &qrels).unwrap();
            let j = read_qrels(&qp).unwrap();
            // As `ltr eval` reads them: the documents judged twice left for the evaluation to find.
            let unchecked = super::super::read::read_qrels_unchecked(&qp).unwrap();
            let conv = Convention::TREC;
            // From the relevant positions (the first four) and per measure (bpref).
            for m in [&metrics[..4], &metrics[..]] {
                let want = match read_run(&rp) {
                    Ok(r) if r.is_empty() => Ok(None),
                    Ok(r) => evaluate_run(&r, &j, m, &conv).map(Some),
                    Err(e) => Err(e),
                };
                let want = show(want);
                seen_errors += want.starts_with("err") as usize;
                for block in [1, 7, 30, 100, 1000, 4096, BLOCK] {
                    let got = show(evaluate_run_file_in_blocks(&rp, &j, m, &conv, block));
                    assert_eq!(got, want, "case {case}, block {block}");
                    let got = show(evaluate_run_file_in_blocks(
                        &rp, &unchecked, m, &conv, block,
                    ));
                    assert_eq!(got, want, "case {case}, block {block}, unchecked qrels");
                }
                if let Ok(r) = read_run(&rp).map(|r| (!r.is_empty()).then_some(r)) {
                    let got = r
                        .map(|r| evaluate_run(&r, &unchecked, m, &conv))
                        .transpose();
                    assert_eq!(show(got), want, "case {case}, unchecked qrels");
                }
            }
            // No measure: the judged queries, nothing computed.
            let none = evaluate_run_file_in_blocks(&rp, &j, &[], &conv, 100);
            if let Ok(r) = read_run(&rp) {
                let want = evaluate_run(&r, &j, &[], &conv).unwrap();
                assert_eq!(none.unwrap().unwrap().qids, want.qids, "case {case}");
            }
        }
        // An empty run (blank and comment lines only) is `None`.
        std::fs::write(&rp, "\n# nothing\n  \n").unwrap();
        let j = read_qrels(&qp).unwrap();
        assert!(
            evaluate_run_file(&rp, &j, &[Metric::Bpref], &Convention::TREC)
                .unwrap()
                .is_none()
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            (5..60).contains(&seen_errors),
            "{seen_errors} cases with errors"
        );
    }
}
