//! Evaluating a whole run: every query, every metric, in parallel over queries, with a deterministic mean.

use ltr_data::Dataset;
use rayon::prelude::*;

use crate::compute::{query_metric, QueryInput, Unsupported};
use crate::convention::{Convention, TiePolicy};
use crate::metric::Metric;
use crate::ranking::Ranking;

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
    if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
        return Err(EvalError::Scores(format!(
            "score {} (line {}) is not finite",
            scores[i],
            i + 1
        )));
    }
    let per_query: Vec<Result<Vec<f64>, Unsupported>> = ds
        .par_queries()
        .map(|q| {
            let rows = q.rows();
            let s = &scores[rows.clone()];
            let ranking = match (convention.ties, ds.docids()) {
                (TiePolicy::DocIdDescending, Some(ids)) => {
                    // Sort packed keys, then order only the runs of equal scores by doc id (descending).
                    let mut r = fast_ranking(s, TiePolicy::InputOrder);
                    let mut a = 0;
                    while a < r.order.len() {
                        let mut b = a + 1;
                        while b < r.order.len() && s[r.order[b]] == s[r.order[a]] {
                            b += 1;
                        }
                        if b - a > 1 {
                            r.order[a..b].sort_by(|&x, &y| {
                                ids.get(rows.start + y)
                                    .cmp(ids.get(rows.start + x))
                                    .then(x.cmp(&y))
                            });
                        }
                        a = b;
                    }
                    r
                }
                _ => fast_ranking(s, convention.ties),
            };
            let input = QueryInput {
                labels: q.labels(),
                scores: s,
                ranking: &ranking,
                unretrieved: &[],
            };
            metrics
                .iter()
                .map(|&m| query_metric(m, &input, convention))
                .collect()
        })
        .collect();
    let mut table: Vec<Vec<f64>> = Vec::with_capacity(per_query.len());
    for r in per_query {
        table.push(r?);
    }
    Ok(assemble(ds.qids().to_vec(), metrics, convention, table))
}

pub(crate) fn assemble(
    qids: Vec<String>,
    metrics: &[Metric],
    convention: &Convention,
    table: Vec<Vec<f64>>,
) -> Evaluation {
    let results = metrics
        .iter()
        .enumerate()
        .map(|(j, &m)| {
            let per_query: Vec<f64> = table.iter().map(|row| row[j]).collect();
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

/// Rank by score descending with ties in input order, sorting packed integer keys (much faster than a comparator).
pub fn fast_ranking(scores: &[f64], ties: TiePolicy) -> Ranking {
    if ties == TiePolicy::DocIdDescending {
        return Ranking::new(scores, TiePolicy::InputOrder, None);
    }
    let mut keys: Vec<u128> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let s = if s == 0.0 { 0.0 } else { s }; // -0 ties with +0
            let b = s.to_bits();
            let ord = if b >> 63 == 1 { !b } else { b | (1 << 63) };
            let tie = if ties == TiePolicy::ReverseInput {
                usize::MAX - i
            } else {
                i
            };
            ((!ord as u128) << 64) | tie as u128
        })
        .collect();
    keys.sort_unstable();
    let order: Vec<usize> = keys
        .iter()
        .map(|k| {
            let tie = *k as u64 as usize;
            if ties == TiePolicy::ReverseInput {
                usize::MAX - tie
            } else {
                tie
            }
        })
        .collect();
    let groups = if ties == TiePolicy::Expected {
        let mut g = Vec::new();
        let mut start = 0;
        for p in 1..=order.len() {
            if p == order.len() || scores[order[p]] != scores[order[start]] {
                g.push((start, p - start));
                start = p;
            }
        }
        g
    } else {
        (0..order.len()).map(|p| (p, 1)).collect()
    };
    Ranking { order, groups }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_ranking_matches_comparator_ranking() {
        let s = [0.5, -0.0, 0.0, 3.0, -2.0, 0.5, f64::MIN_POSITIVE, -1e300];
        for t in [
            TiePolicy::InputOrder,
            TiePolicy::ReverseInput,
            TiePolicy::Expected,
        ] {
            assert_eq!(fast_ranking(&s, t), Ranking::new(&s, t, None));
        }
    }
}
