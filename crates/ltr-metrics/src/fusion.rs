//! Rank fusion: several TREC runs of the same queries combined into one (`ltr fuse`), by score (CombSUM, CombMNZ,
//! CombMAX, a weighted sum) after a per-query normalisation, or by rank (reciprocal rank fusion, Borda), with the
//! weights optionally tuned on training qrels by a grid search.
//!
//! Ranks are trec_eval's: score descending, ties by docid descending, so fusing is independent of file order.

use std::collections::HashMap;

use crate::convention::Convention;
use crate::metric::Metric;
use crate::runs::{Qrels, RunQuery};
use crate::trec::{evaluate_run, FileError};

/// A fusion setting that cannot be used: an unknown method or normalisation, or weights that do not fit the runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FusionError(String);

/// How runs are combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FusionMethod {
    /// Σ_i w_i · s_i(d) over the runs that retrieved d (Fox & Shaw 1994); `wsum` is the same with given weights.
    CombSum,
    /// CombSUM × the number of runs that retrieved d.
    CombMnz,
    /// max_i w_i · s_i(d).
    CombMax,
    /// Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009): Σ_i w_i / (k + rank_i(d)).
    Rrf {
        /// The constant k (60 in the paper).
        k: f64,
    },
    /// Borda count: Σ_i w_i · (n_i − rank_i(d) + 1), n_i the length of run i's list for the query.
    Borda,
}

impl FusionMethod {
    /// The same method, with RRF's constant set to `k` (other methods have none).
    pub fn with_rrf_k(self, k: f64) -> Self {
        match self {
            Self::Rrf { .. } => Self::Rrf { k },
            other => other,
        }
    }
}

impl std::str::FromStr for FusionMethod {
    type Err = FusionError;
    fn from_str(s: &str) -> Result<Self, FusionError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "combsum" | "wsum" => Self::CombSum,
            "combmnz" => Self::CombMnz,
            "combmax" => Self::CombMax,
            "rrf" => Self::Rrf { k: 60.0 },
            "borda" => Self::Borda,
            other => {
                return Err(FusionError(format!(
                    "unknown fusion method `{other}`; known: rrf, combsum, combmnz, combmax, borda, wsum"
                )))
            }
        })
    }
}

/// The per-query normalisation of each run's scores before a score-based method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FusionNorm {
    /// Scores as given.
    None,
    /// (s − min) / (max − min); every score 0 when they are all equal.
    MinMax,
    /// (s − mean) / standard deviation (population); 0 when they are all equal.
    ZScore,
    /// s / Σ s (scores as given when they sum to 0).
    Sum,
    /// (n − rank + 1) / n: the rank, not the score, on (0, 1].
    Rank,
}

impl std::str::FromStr for FusionNorm {
    type Err = FusionError;
    fn from_str(s: &str) -> Result<Self, FusionError> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "none" => Self::None,
            "minmax" | "min-max" => Self::MinMax,
            "zscore" => Self::ZScore,
            "sum" => Self::Sum,
            "rank" => Self::Rank,
            other => {
                return Err(FusionError(format!(
                    "unknown normalisation `{other}`; known: none, minmax, zscore, sum, rank"
                )))
            }
        })
    }
}

/// Each document's 1-based rank in `q` by trec_eval's order (score descending, ties by docid descending).
fn ranks(q: &RunQuery) -> Vec<usize> {
    let s = q.scores();
    let mut order: Vec<usize> = (0..q.len()).collect();
    order.sort_by(|&a, &b| {
        s[b].total_cmp(&s[a])
            .then_with(|| q.docid(b).cmp(q.docid(a)))
    });
    let mut rank = vec![0; q.len()];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r + 1;
    }
    rank
}

fn normalised(q: &RunQuery, norm: FusionNorm) -> Vec<f64> {
    let s = q.scores().to_vec();
    let n = s.len() as f64;
    match norm {
        FusionNorm::None => s,
        FusionNorm::MinMax => {
            let (lo, hi) = s
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                    (l.min(v), h.max(v))
                });
            s.iter()
                .map(|&v| if hi > lo { (v - lo) / (hi - lo) } else { 0.0 })
                .collect()
        }
        FusionNorm::ZScore => {
            let mean = s.iter().sum::<f64>() / n;
            let sd = (s.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
            s.iter()
                .map(|&v| if sd > 0.0 { (v - mean) / sd } else { 0.0 })
                .collect()
        }
        FusionNorm::Sum => {
            let total: f64 = s.iter().sum();
            s.iter()
                .map(|&v| if total != 0.0 { v / total } else { v })
                .collect()
        }
        FusionNorm::Rank => ranks(q)
            .into_iter()
            .map(|r| (n - r as f64 + 1.0) / n)
            .collect(),
    }
}

/// The weights of `runs` runs: `given` (one non-negative number per run, not all zero), or 1 each when none are
/// given; an error saying what is wrong otherwise. Fusion needs two runs or more.
pub fn fusion_weights(runs: usize, given: &[f64]) -> Result<Vec<f64>, FusionError> {
    if runs < 2 {
        return Err(FusionError(format!(
            "fusion needs two runs or more, got {runs}"
        )));
    }
    if given.is_empty() {
        return Ok(vec![1.0; runs]);
    }
    if given.len() != runs {
        return Err(FusionError(format!(
            "{} weights for {runs} runs: give one per run",
            given.len()
        )));
    }
    if let Some(w) = given.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
        return Err(FusionError(format!(
            "weight {w} is not a non-negative number"
        )));
    }
    if given.iter().all(|&w| w == 0.0) {
        return Err(FusionError("every weight is 0".into()));
    }
    Ok(given.to_vec())
}

/// Fuse `runs` (each a list of queries with their documents and scores) into one run: every query any run has, in
/// order of first appearance, its documents sorted by fused score (ties by docid descending). `weights` has one
/// weight per run (all 1 for the unweighted methods).
pub fn fuse(
    runs: &[Vec<RunQuery>],
    method: FusionMethod,
    norm: FusionNorm,
    weights: &[f64],
) -> Vec<RunQuery> {
    assert_eq!(runs.len(), weights.len(), "one weight per run");
    let mut order: Vec<&str> = Vec::new();
    // qid → docid → (fused score, runs that retrieved it), the ids borrowed from the runs
    let mut fused: HashMap<&str, HashMap<&str, (f64, usize)>> = HashMap::new();
    for (run, &w) in runs.iter().zip(weights) {
        for q in run {
            let table = fused.entry(q.qid()).or_insert_with(|| {
                order.push(q.qid());
                HashMap::new()
            });
            let n = q.len() as f64;
            let rank = ranks(q);
            let values = normalised(q, norm);
            for i in 0..q.len() {
                let contribution = match method {
                    FusionMethod::CombSum | FusionMethod::CombMnz | FusionMethod::CombMax => {
                        w * values[i]
                    }
                    FusionMethod::Rrf { k } => w / (k + rank[i] as f64),
                    FusionMethod::Borda => w * (n - rank[i] as f64 + 1.0),
                };
                let e = table.entry(q.docid(i)).or_insert((f64::NEG_INFINITY, 0));
                e.0 = match (method, e.1) {
                    (_, 0) => contribution,
                    (FusionMethod::CombMax, _) => e.0.max(contribution),
                    _ => e.0 + contribution,
                };
                e.1 += 1;
            }
        }
    }
    order
        .into_iter()
        .map(|qid| {
            let table = fused.remove(qid).unwrap_or_default();
            let mut docs: Vec<(&str, f64)> = table
                .into_iter()
                .map(|(d, (s, hits))| {
                    let s = if method == FusionMethod::CombMnz {
                        s * hits as f64
                    } else {
                        s
                    };
                    (d, s)
                })
                .collect();
            docs.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(a.0)));
            RunQuery::with_docs(qid, docs)
        })
        .collect()
}

/// The weights (one per run, each in {0, 0.1, …, 1}, not all 0) whose fusion scores best on `qrels` by `measure`
/// under `convention`, with that score: an exhaustive grid for up to four runs, then coordinate ascent over the same
/// grid from equal weights (sweeps until no single weight change improves). Ties keep the earlier grid point.
pub fn tune_weights(
    runs: &[Vec<RunQuery>],
    method: FusionMethod,
    norm: FusionNorm,
    qrels: &Qrels,
    measure: Metric,
    convention: &Convention,
) -> Result<(Vec<f64>, f64), FileError> {
    let grid: Vec<f64> = (0..=10).map(|i| i as f64 / 10.0).collect();
    let score = |w: &[f64]| -> Result<f64, FileError> {
        let fused = fuse(runs, method, norm, w);
        Ok(evaluate_run(&fused, qrels, &[measure], convention)?.results[0].mean)
    };
    let mut best: Option<(Vec<f64>, f64)> = None;
    let consider = |w: Vec<f64>, best: &mut Option<(Vec<f64>, f64)>| -> Result<(), FileError> {
        if w.iter().all(|&x| x == 0.0) {
            return Ok(());
        }
        let s = score(&w)?;
        if best.as_ref().is_none_or(|(_, b)| s > *b) {
            *best = Some((w, s));
        }
        Ok(())
    };
    if runs.len() <= 4 {
        let mut idx = vec![0usize; runs.len()];
        loop {
            consider(idx.iter().map(|&i| grid[i]).collect(), &mut best)?;
            // Next point of the grid, the last run's weight varying fastest.
            let mut j = runs.len();
            loop {
                if j == 0 {
                    return Ok(best.expect("a grid point with a non-zero weight"));
                }
                j -= 1;
                idx[j] += 1;
                if idx[j] < grid.len() {
                    break;
                }
                idx[j] = 0;
            }
        }
    }
    consider(vec![1.0; runs.len()], &mut best)?;
    loop {
        let (start, start_score) = best.clone().expect("equal weights are a point");
        for j in 0..runs.len() {
            for &g in &grid {
                let mut w = best.as_ref().expect("set").0.clone();
                w[j] = g;
                consider(w, &mut best)?;
            }
        }
        let (now, now_score) = best.clone().expect("set");
        if now == start || now_score <= start_score {
            return Ok((now, now_score));
        }
    }
}

/// Write `run` as a TREC run (`qid Q0 docid rank score tag`, ranks from 1 in the given order), atomically.
pub fn write_trec_run(
    path: &std::path::Path,
    run: &[RunQuery],
    tag: &str,
) -> Result<(), FileError> {
    ltr_data::write_atomic(path, |w| {
        for q in run {
            for (r, (doc, score)) in q.docs().enumerate() {
                writeln!(w, "{} Q0 {doc} {} {score} {tag}", q.qid(), r + 1)?;
            }
        }
        Ok(())
    })
    .map_err(|e| FileError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    })
}
