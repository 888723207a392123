//! Evaluating a whole run: every query, every metric, in parallel over queries, with a deterministic mean.

use ltr_data::Dataset;
use rayon::prelude::*;

use crate::compute::{query_metric, QueryInput, Unsupported};
use crate::convention::{Convention, TiePolicy};
use crate::metric::Metric;
use crate::rank::{rank_order, ranking_from_order, DocIds, RankBuffers};
use crate::ranking::Ranking;
use crate::resolved;

/// Why a run could not be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The score list does not fit the data.
    #[error("{0}")]
    Scores(String),
    /// Runs cannot be compared as given (too few, of different lengths, an unknown baseline, bad settings).
    #[error("{0}")]
    Runs(String),
    /// A metric cannot be computed as configured.
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
}

/// The values of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricResult {
    /// The metric.
    pub metric: Metric,
    /// Mean over all queries (queries with no relevant document count 0 under every convention).
    pub mean: f64,
    /// One value per query, in query order.
    pub per_query: Vec<f64>,
}

/// The result of [`evaluate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The convention used.
    pub convention: Convention,
    /// Query ids, in order.
    pub qids: Vec<String>,
    /// One entry per requested metric, in request order.
    pub results: Vec<MetricResult>,
}

impl Evaluation {
    /// The mean of `metric`, if it was requested.
    pub fn mean(&self, metric: Metric) -> Option<f64> {
        self.results
            .iter()
            .find(|r| r.metric == metric)
            .map(|r| r.mean)
    }
}

/// The mean over the queries of one metric: what model selection on a validation set needs.
pub fn evaluate_mean(
    ds: &Dataset,
    scores: &[f64],
    metric: Metric,
    convention: &Convention,
) -> Result<f64, EvalError> {
    Ok(evaluate(ds, scores, &[metric], convention)?.results[0].mean)
}

/// Evaluate `scores` (one per document of `ds`, in row order) under `convention`.
pub fn evaluate(
    ds: &Dataset,
    scores: &[f64],
    metrics: &[Metric],
    convention: &Convention,
) -> Result<Evaluation, EvalError> {
    if scores.len() != ds.n_docs() {
        return Err(EvalError::Scores(format!(
            "{} scores for {} documents: a score file needs exactly one line per data line",
            scores.len(),
            ds.n_docs()
        )));
    }
    // Each query's scores are checked (one vectorisable pass, which also brings them into the cache) before it is
    // ranked; a score that is not finite is reported before any measure's error, as the first one in line order.
    let bad = |s: &[f64]| s.iter().fold(false, |b, x| b | !x.is_finite());
    let not_finite = |from: usize| {
        let i = from
            + scores[from..]
                .iter()
                .position(|s| !s.is_finite())
                .expect("a score is not finite");
        EvalError::Scores(format!(
            "score {} (line {}) is not finite",
            scores[i],
            i + 1
        ))
    };
    let nm = metrics.len();
    let nq = ds.n_queries();
    let mut table = vec![0.0; nq * nm];
    if nm == 0 {
        if bad(scores) {
            return Err(not_finite(0));
        }
    } else {
        // Every measure from the ranked positions of the relevant documents when the ranking has no tie groups;
        // otherwise each measure on its own, from a `Ranking`.
        let fused = convention.ties != TiePolicy::Expected
            && metrics.iter().all(|&m| resolved::supported(m));
        let first_error = table
            .par_chunks_mut(nm)
            .enumerate()
            .map_init(
                || Scratch::new(convention),
                |sc, (qi, row)| {
                    let q = ds.query(qi);
                    let rows = q.rows();
                    let s = &scores[rows.clone()];
                    if bad(s) {
                        return Some((false, qi, None));
                    }
                    let ids = ds.docids().map(|column| DocIds::Column {
                        column,
                        start: rows.start,
                    });
                    let result =
                        query_values(s, q.labels(), ids, metrics, convention, fused, sc, row);
                    result.err().map(|e| (true, qi, Some(e)))
                },
            )
            .flatten()
            .min_by_key(|&(measure, qi, _)| (measure, qi));
        match first_error {
            Some((_, _, Some(e))) => return Err(e.into()),
            Some((_, qi, None)) => return Err(not_finite(ds.query_offsets()[qi])),
            None => {}
        }
    }
    Ok(assemble(ds.qids().to_vec(), metrics, convention, &table))
}

/// One query's values of `metrics` into `out`: ranked, then measured from the relevant positions (`fused`) or from a
/// [`Ranking`].
fn query_values<'a>(
    scores: &[f64],
    labels: &[f32],
    ids: Option<DocIds<'a>>,
    metrics: &[Metric],
    convention: &Convention,
    fused: bool,
    sc: &mut Scratch,
    out: &mut [f64],
) -> Result<(), Unsupported> {
    rank_order(scores, convention.ties, ids, &mut sc.buf, &mut sc.order);
    if fused {
        return resolved::values(
            metrics,
            labels,
            &[],
            &sc.order,
            convention,
            &mut sc.tables,
            out,
        );
    }
    ranking_from_order(scores, convention.ties, &sc.order, &mut sc.ranking);
    let input = QueryInput {
        labels,
        scores,
        ranking: &sc.ranking,
        unretrieved: &[],
    };
    for (v, &m) in out.iter_mut().zip(metrics) {
        *v = query_metric(m, &input, convention)?;
    }
    Ok(())
}

/// One thread's scratch space, kept across its queries.
struct Scratch {
    buf: RankBuffers,
    order: Vec<u32>,
    ranking: Ranking,
    tables: resolved::Tables,
}

impl Scratch {
    fn new(c: &Convention) -> Self {
        Scratch {
            buf: RankBuffers::default(),
            order: Vec::new(),
            ranking: Ranking {
                order: Vec::new(),
                groups: Vec::new(),
            },
            tables: resolved::Tables::new(c),
        }
    }
}

/// The [`Evaluation`] of a table of values, one row of `metrics.len()` values a query.
pub(crate) fn assemble(
    qids: Vec<String>,
    metrics: &[Metric],
    convention: &Convention,
    table: &[f64],
) -> Evaluation {
    let nm = metrics.len();
    let results = metrics
        .iter()
        .enumerate()
        .map(|(j, &m)| {
            let per_query: Vec<f64> = table.iter().skip(j).step_by(nm).copied().collect();
            let mean = if per_query.is_empty() {
                0.0
            } else {
                per_query.iter().sum::<f64>() / per_query.len() as f64
            };
            MetricResult {
                metric: m,
                mean,
                per_query,
            }
        })
        .collect();
    Evaluation {
        convention: *convention,
        qids,
        results,
    }
}
