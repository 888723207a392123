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
        .map_init(
            || {
                (
                    RankBuffers::default(),
                    Ranking {
                        order: Vec::new(),
                        groups: Vec::new(),
                    },
                )
            },
            |(buf, r), q| {
                let rows = q.rows();
                let s = &scores[rows.clone()];
                match (convention.ties, ds.docids()) {
                    (TiePolicy::DocIdDescending, Some(ids)) => {
                        // Sort packed keys, then order only the runs of equal scores by doc id (descending).
                        fast_ranking_into(s, TiePolicy::InputOrder, buf, r);
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
                    }
                    (TiePolicy::DocIdDescending, None) => {
                        *r = Ranking::new(s, TiePolicy::InputOrder, None);
                    }
                    (ties, _) => fast_ranking_into(s, ties, buf, r),
                }
                let input = QueryInput {
                    labels: q.labels(),
                    scores: s,
                    ranking: r,
                    unretrieved: &[],
                };
                metrics
                    .iter()
                    .map(|&m| query_metric(m, &input, convention))
                    .collect()
            },
        )
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
    let mut out = Ranking {
        order: Vec::new(),
        groups: Vec::new(),
    };
    fast_ranking_into(scores, ties, &mut RankBuffers::default(), &mut out);
    out
}

/// Scratch space of [`fast_ranking_into`], reused across queries.
#[derive(Debug, Default)]
pub(crate) struct RankBuffers {
    keys: Vec<u128>,
    records: Vec<(u64, u32)>,
    spare: Vec<(u64, u32)>,
}

/// Queries at least this long are ranked by a radix sort of (score key, index) records; shorter ones by a
/// comparison sort of packed u128 keys. Both give the same order: score descending, then the tie order.
const RADIX_MIN: usize = 256;

/// The score's order as an unsigned key, ascending for descending scores (−0 ties with +0).
#[inline]
fn score_key(s: f64) -> u64 {
    let s = if s == 0.0 { 0.0 } else { s };
    let b = s.to_bits();
    let ord = if b >> 63 == 1 { !b } else { b | (1 << 63) };
    !ord
}

/// [`fast_ranking`] into `out`, reusing its vectors and `buf` (`ties` is not [`TiePolicy::DocIdDescending`]).
pub(crate) fn fast_ranking_into(
    scores: &[f64],
    ties: TiePolicy,
    buf: &mut RankBuffers,
    out: &mut Ranking,
) {
    debug_assert!(ties != TiePolicy::DocIdDescending);
    let n = scores.len();
    out.order.clear();
    if n >= RADIX_MIN && n <= u32::MAX as usize {
        // LSD radix sort on the key's bytes, stable: records enter in tie order, so equal keys keep it.
        let recs = &mut buf.records;
        recs.clear();
        if ties == TiePolicy::ReverseInput {
            recs.extend((0..n).rev().map(|i| (score_key(scores[i]), i as u32)));
        } else {
            recs.extend((0..n).map(|i| (score_key(scores[i]), i as u32)));
        }
        let mut counts = [[0u32; 256]; 8];
        for &(k, _) in recs.iter() {
            for (b, c) in counts.iter_mut().enumerate() {
                c[((k >> (8 * b)) & 0xff) as usize] += 1;
            }
        }
        let spare = &mut buf.spare;
        spare.clear();
        spare.resize(n, (0, 0));
        for (b, c) in counts.iter().enumerate() {
            // A byte shared by every key leaves the order as it is.
            if c.iter().any(|&x| x as usize == n) {
                continue;
            }
            let mut at = [0u32; 256];
            let mut sum = 0u32;
            for (a, &x) in at.iter_mut().zip(c.iter()) {
                *a = sum;
                sum += x;
            }
            for &r in recs.iter() {
                let d = ((r.0 >> (8 * b)) & 0xff) as usize;
                spare[at[d] as usize] = r;
                at[d] += 1;
            }
            std::mem::swap(recs, spare);
        }
        out.order.extend(recs.iter().map(|&(_, i)| i as usize));
    } else {
        let keys = &mut buf.keys;
        keys.clear();
        keys.extend(scores.iter().enumerate().map(|(i, &s)| {
            let tie = if ties == TiePolicy::ReverseInput {
                usize::MAX - i
            } else {
                i
            };
            ((score_key(s) as u128) << 64) | tie as u128
        }));
        keys.sort_unstable();
        out.order.extend(keys.iter().map(|k| {
            let tie = *k as u64 as usize;
            if ties == TiePolicy::ReverseInput {
                usize::MAX - tie
            } else {
                tie
            }
        }));
    }
    let order = &out.order;
    out.groups.clear();
    if ties == TiePolicy::Expected {
        let mut start = 0;
        for p in 1..=order.len() {
            if p == order.len() || scores[order[p]] != scores[order[start]] {
                out.groups.push((start, p - start));
                start = p;
            }
        }
    } else {
        out.groups.extend((0..order.len()).map(|p| (p, 1)));
    }
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

    /// Long queries take the radix sort: the same order and groups as the comparator, on scores with many ties,
    /// both zeros, negatives and extremes, with one set of buffers reused across queries of varying length.
    #[test]
    fn radix_ranking_matches_comparator_ranking_with_ties() {
        let mut rng = ltr_testdata::XorShift64::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let mut buf = RankBuffers::default();
        let mut out = Ranking {
            order: Vec::new(),
            groups: Vec::new(),
        };
        for n in [0, 1, 255, 256, 257, 1000, 3000] {
            for distinct in [2u64, 17, 1_000_000_007] {
                let s: Vec<f64> = (0..n)
                    .map(|_| match next() % 8 {
                        0 => -0.0,
                        1 => 0.0,
                        2 => f64::MAX,
                        3 => -f64::MIN_POSITIVE,
                        _ => ((next() % distinct) as f64 - distinct as f64 / 2.0) / 7.0,
                    })
                    .collect();
                for t in [
                    TiePolicy::InputOrder,
                    TiePolicy::ReverseInput,
                    TiePolicy::Expected,
                ] {
                    let want = Ranking::new(&s, t, None);
                    fast_ranking_into(&s, t, &mut buf, &mut out);
                    assert_eq!(out, want, "n {n}, {distinct} values, {t:?}");
                    assert_eq!(fast_ranking(&s, t), want);
                }
            }
        }
    }

    /// `evaluate` (reused buffers, radix sort, RBP's weight table) against the plain path: each query ranked by the
    /// comparator and every metric computed by `query_metric`, bit for bit, under every tie policy.
    #[test]
    fn evaluate_matches_plain_per_query_path() {
        let (ds, mut scores) = ltr_data::generate_judged_run(40, 700, true).unwrap();
        for (i, s) in scores.iter_mut().enumerate() {
            if i % 3 == 0 {
                *s = (*s * 10.0).floor(); // many ties
            }
        }
        let metrics: Vec<Metric> = ["nDCG@10", "AP", "RBP(p=0.8)", "RBP(p=0.5)", "P@20", "nDCG"]
            .iter()
            .map(|m| m.parse().unwrap())
            .collect();
        for conv in [Convention::TREC, Convention::STANDARD, Convention::LETOR4] {
            for ties in [
                TiePolicy::InputOrder,
                TiePolicy::ReverseInput,
                TiePolicy::Expected,
                TiePolicy::DocIdDescending,
            ] {
                let conv = Convention { ties, ..conv };
                let ev = evaluate(&ds, &scores, &metrics, &conv).unwrap();
                for (qi, q) in ds.queries().enumerate() {
                    let rows = q.rows();
                    let s = &scores[rows.clone()];
                    let id = |d: usize| q.docid(d).unwrap();
                    let ranking = Ranking::new(s, ties, Some(&id));
                    let input = QueryInput {
                        labels: q.labels(),
                        scores: s,
                        ranking: &ranking,
                        unretrieved: &[],
                    };
                    for (j, &m) in metrics.iter().enumerate() {
                        let want = match (m, ties) {
                            (Metric::Rbp(p), _) => plain_rbp(&input, &conv, p.get()),
                            _ => query_metric(m, &input, &conv).unwrap(),
                        };
                        assert_eq!(
                            ev.results[j].per_query[qi].to_bits(),
                            want.to_bits(),
                            "{m} query {qi} {ties:?}"
                        );
                    }
                }
            }
        }
    }

    /// RBP as first written: `p.powi(i)` at every relevant position.
    fn plain_rbp(q: &QueryInput<'_>, c: &Convention, p: f64) -> f64 {
        plain_rbp_both(q, c, p).0
    }

    fn plain_rbp_both(q: &QueryInput<'_>, c: &Convention, p: f64) -> (f64, f64) {
        let (mut value, mut unjudged) = (0.0, 0.0);
        for &(a, m) in &q.ranking.groups {
            let docs = &q.ranking.order[a..a + m];
            let rel = docs
                .iter()
                .filter(|&&d| q.labels[d].is_finite() && c.is_relevant(q.labels[d]))
                .count();
            let unj = docs.iter().filter(|&&d| !q.labels[d].is_finite()).count();
            if rel + unj == 0 {
                continue;
            }
            let w: f64 = (a..a + m).map(|i| p.powi(i as i32)).sum::<f64>() / m as f64;
            value += rel as f64 * w;
            unjudged += unj as f64 * w;
        }
        let depth = q.ranking.order.len();
        (
            (1.0 - p) * value,
            (1.0 - p) * unjudged + p.powi(depth as i32),
        )
    }

    /// RBP and its residual with unjudged documents (NaN, −∞), ties and no ties, against the first form.
    #[test]
    fn rbp_and_residual_match_plain_form_with_unjudged() {
        let mut rng = ltr_testdata::XorShift64::new(0x1234_5678_9abc_def1);
        let mut next = move |m: u64| rng.below(m);
        for n in [0usize, 1, 5, 300, 1200] {
            let labels: Vec<f32> = (0..n)
                .map(|_| match next(6) {
                    0 => f32::NAN,
                    1 => f32::NEG_INFINITY,
                    g => (g - 2) as f32,
                })
                .collect();
            let scores: Vec<f64> = (0..n).map(|_| next(50) as f64).collect();
            for ties in [TiePolicy::InputOrder, TiePolicy::Expected] {
                let ranking = Ranking::new(&scores, ties, None);
                let q = QueryInput {
                    labels: &labels,
                    scores: &scores,
                    ranking: &ranking,
                    unretrieved: &[],
                };
                for p in ["0.8", "0.5", "0.95"] {
                    for rel in [1, 2] {
                        let conv = Convention::TREC.with_relevance_threshold(rel as f32);
                        let m: Metric = format!("RBP(p={p})").parse().unwrap();
                        let r: Metric = format!("RBPResidual(p={p})").parse().unwrap();
                        let want = plain_rbp_both(&q, &conv, p.parse().unwrap());
                        let got = (
                            query_metric(m, &q, &conv).unwrap(),
                            query_metric(r, &q, &conv).unwrap(),
                        );
                        assert_eq!(got.0.to_bits(), want.0.to_bits(), "{m} n {n} {ties:?}");
                        assert_eq!(got.1.to_bits(), want.1.to_bits(), "{r} n {n} {ties:?}");
                    }
                }
            }
        }
    }
}
