//! A run evaluated against qrels: each run query joined to its judgments by doc id, ranked, and measured (from
//! the relevant positions when the ranking has no tie groups).

use super::FileError;
use crate::compute::{query_metric, QueryInput};
use crate::convention::{Convention, TiePolicy};
use crate::evaluate::{assemble, Evaluation};
use crate::metric::Metric;
use crate::rank::{rank_order, ranking_from_order, DocIds, RankBuffers};
use crate::ranking::Ranking;
use crate::resolved;
use crate::runs::{Qrels, QueryQrels, RunQuery, Table};

/// Evaluate a run against qrels as trec_eval does: only queries present in both are evaluated; retrieved documents
/// missing from the qrels are unjudged; judged documents the run missed count in R, N and the ideal DCG. Queries are
/// evaluated in parallel; the values and the first error (in run order) are those of a serial evaluation.
pub fn evaluate_run(
    run: &[RunQuery],
    qrels: &Qrels,
    metrics: &[Metric],
    conv: &Convention,
) -> Result<Evaluation, FileError> {
    use rayon::prelude::*;
    let judged: Vec<(&RunQuery, &QueryQrels)> = run
        .iter()
        .filter_map(|q| qrels.get(q.qid()).map(|j| (q, j)))
        .collect();
    let nm = metrics.len();
    let mut table = vec![0.0; judged.len() * nm];
    if nm > 0 {
        // Every measure from the relevant positions when the ranking has no tie groups (as `evaluate` does).
        let fused = fused(metrics, conv);
        let first_error = table
            .par_chunks_mut(nm)
            .zip(judged.par_iter())
            .enumerate()
            .map_init(
                || RunScratch::new(conv),
                |sc, (i, (row, &(q, j)))| {
                    run_query_values(QueryDocs::Run(q), j, metrics, conv, fused, sc, row)
                        .err()
                        .map(|e| (i, e))
                },
            )
            .flatten()
            .min_by_key(|(i, _)| *i);
        if let Some((_, e)) = first_error {
            return Err(e);
        }
    }
    let qids = judged.iter().map(|(q, _)| q.qid().to_string()).collect();
    Ok(assemble(qids, metrics, conv, &table))
}

/// Whether every measure is computed from the relevant positions (when the ranking has no tie groups).
pub(super) fn fused(metrics: &[Metric], conv: &Convention) -> bool {
    conv.ties != TiePolicy::Expected && metrics.iter().all(|&m| resolved::supported(m))
}

/// A run query to evaluate: a [`RunQuery`], or a query's documents as parallel slices (ids and scores) read from a
/// file and evaluated in place.
#[derive(Clone, Copy)]
pub(super) enum QueryDocs<'a> {
    Run(&'a RunQuery),
    Slices {
        qid: &'a str,
        ids: &'a [&'a str],
        scores: &'a [f64],
    },
}

impl<'a> QueryDocs<'a> {
    fn qid(self) -> &'a str {
        match self {
            QueryDocs::Run(q) => q.qid(),
            QueryDocs::Slices { qid, .. } => qid,
        }
    }
    fn docid(self, i: usize) -> &'a str {
        match self {
            QueryDocs::Run(q) => q.docid(i),
            QueryDocs::Slices { ids, .. } => ids[i],
        }
    }
    fn scores(self) -> &'a [f64] {
        match self {
            QueryDocs::Run(q) => q.scores(),
            QueryDocs::Slices { scores, .. } => scores,
        }
    }
    fn doc_ids(self) -> DocIds<'a> {
        match self {
            QueryDocs::Run(q) => DocIds::Run(q),
            QueryDocs::Slices { ids, .. } => DocIds::Strs(ids),
        }
    }
}

/// One thread's scratch space for [`evaluate_run`].
pub(super) struct RunScratch {
    buf: RankBuffers,
    order: Vec<u32>,
    ranking: Ranking,
    labels: Vec<f32>,
    seen: Vec<bool>,
    unretrieved: Vec<f32>,
    tables: resolved::Tables,
    /// The hash table of the judgments being joined (see [`QueryQrels::join`]).
    judged: Table,
}

impl RunScratch {
    pub(super) fn new(c: &Convention) -> Self {
        RunScratch {
            buf: RankBuffers::default(),
            order: Vec::new(),
            ranking: Ranking::default(),
            labels: Vec::new(),
            seen: Vec::new(),
            unretrieved: Vec::new(),
            tables: resolved::Tables::new(c),
            judged: Table::default(),
        }
    }
}

/// The values of `metrics` for run query `q` against its judgments `j`, into `out`.
pub(super) fn run_query_values(
    q: QueryDocs<'_>,
    j: &QueryQrels,
    metrics: &[Metric],
    conv: &Convention,
    fused: bool,
    sc: &mut RunScratch,
    out: &mut [f64],
) -> Result<(), FileError> {
    // Judgments read unchecked that judge a document twice: joined once their duplicates are merged.
    let deduped = j.prepare_join(&mut sc.judged);
    let j = match &deduped {
        Some(d) => {
            let again = d.prepare_join(&mut sc.judged);
            debug_assert!(again.is_none());
            d
        }
        None => j,
    };
    // A negative qrels value: in the pool but unjudged (trec_eval), −∞ for the metrics.
    let pooled = |l: f32| if l < 0.0 { f32::NEG_INFINITY } else { l };
    sc.labels.clear();
    sc.seen.clear();
    sc.seen.resize(j.len(), false);
    let rels = j.rels();
    let (labels, seen, table) = (&mut sc.labels, &mut sc.seen, &sc.judged);
    let mut twice = None;
    let mark = |at: Option<usize>| {
        labels.push(match at {
            Some(i) => {
                if seen[i] {
                    twice = Some(labels.len());
                }
                seen[i] = true;
                pooled(rels[i])
            }
            None => f32::NAN,
        })
    };
    match q {
        QueryDocs::Run(r) => j.join(r, table, mark),
        QueryDocs::Slices { ids, .. } => j.join_strs(ids, table, mark),
    }
    if let Some(at) = twice {
        return Err(FileError::DuplicateDocument {
            qid: q.qid().to_string(),
            docid: q.docid(at).to_string(),
        });
    }
    sc.unretrieved.clear();
    sc.unretrieved.extend(
        rels.iter()
            .zip(&sc.seen)
            .filter(|(_, &seen)| !seen)
            .map(|(&l, _)| pooled(l)),
    );
    rank_order(
        q.scores(),
        conv.ties,
        Some(q.doc_ids()),
        &mut sc.buf,
        &mut sc.order,
    );
    if fused {
        return resolved::values(
            metrics,
            &sc.labels,
            &sc.unretrieved,
            &sc.order,
            conv,
            &mut sc.tables,
            out,
        )
        .map_err(FileError::from);
    }
    ranking_from_order(q.scores(), conv.ties, &sc.order, &mut sc.ranking);
    let input = QueryInput {
        labels: &sc.labels,
        scores: q.scores(),
        ranking: &sc.ranking,
        unretrieved: &sc.unretrieved,
    };
    for (v, &m) in out.iter_mut().zip(metrics) {
        *v = query_metric(m, &input, conv)?;
    }
    Ok(())
}
