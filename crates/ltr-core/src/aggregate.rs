//! Rank aggregation: combine several rankings of one query's documents into one.
//!
//! Shared by the committee perceptron's weighted BordaFuse (seed 000) and the Multiple Hyperplane Ranker's
//! BordaCount / weighted BordaCount / median / Markov-chain aggregation (seed 001). Each input ranking is given as a
//! score vector; within one list, tied scores are ordered by input position (the LETOR evaluators' convention).

use ltr_data::QueryView;
use serde::{Deserialize, Serialize};

use crate::scorer::{LinearModel, Scorer};

/// How to combine rankings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Aggregation {
    /// BordaCount (Qin et al. 2007): a document earns, from each list, the number of documents ranked below it
    /// (n−1 for the first, 0 for the last); points are summed with the list weights.
    Borda,
    /// BordaFuse (Aslam & Montague 2001, seed 000): a document at rank r of n earns n − r + 1 points. It orders
    /// documents exactly like [`Aggregation::Borda`] (the points differ by one per list); kept for fidelity.
    BordaFuse,
    /// Median rank (Fagin et al. 2003): order by the weighted lower median of a document's positions; ties broken by
    /// the weighted mean position, then by input order.
    MedianRank,
    /// Markov chain MC4 (Dwork et al. 2001): from document P pick Q uniformly; move to Q if lists holding more than
    /// half the weight rank Q above P. With probability `teleport` jump uniformly (ergodicity). Documents are ranked
    /// by the stationary probability, found by power iteration.
    MarkovMc4 {
        /// Teleportation probability ε (0.15 recommended).
        teleport: f64,
        /// Power-iteration cap.
        max_iter: usize,
        /// Stop when the L1 change falls below this.
        tol: f64,
    },
}

impl Aggregation {
    /// MC4 with the recommended settings (ε = 0.15, 1000 iterations, tolerance 1e-12).
    pub fn markov_default() -> Self {
        Aggregation::MarkovMc4 {
            teleport: 0.15,
            max_iter: 1000,
            tol: 1e-12,
        }
    }
    /// Parse `borda`, `bordafuse`, `median`, `markov`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "borda" | "bc" | "wborda" | "wbc" => Some(Aggregation::Borda),
            "bordafuse" | "fuse" => Some(Aggregation::BordaFuse),
            "median" => Some(Aggregation::MedianRank),
            "markov" | "mc4" => Some(Self::markov_default()),
            _ => None,
        }
    }
}

/// 0-based position of each document when `scores` are sorted descending (ties: earlier input first).
pub fn positions(scores: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let mut pos = vec![0; scores.len()];
    for (p, &d) in order.iter().enumerate() {
        pos[d] = p;
    }
    pos
}

/// Aggregate `lists` (each a score vector over the same n documents) with non-negative `weights` into `out`
/// (higher = better). `lists.len() == weights.len()`.
pub fn aggregate(lists: &[Vec<f64>], weights: &[f64], method: Aggregation, out: &mut [f64]) {
    assert_eq!(lists.len(), weights.len(), "one weight per list");
    let n = out.len();
    out.iter_mut().for_each(|o| *o = 0.0);
    if n == 0 || lists.is_empty() {
        return;
    }
    let pos: Vec<Vec<usize>> = lists.iter().map(|s| positions(s)).collect();
    match method {
        Aggregation::Borda | Aggregation::BordaFuse => {
            let bonus = if matches!(method, Aggregation::BordaFuse) {
                1.0
            } else {
                0.0
            };
            for (p, &w) in pos.iter().zip(weights) {
                for (o, &r) in out.iter_mut().zip(p) {
                    *o += w * ((n - 1 - r) as f64 + bonus);
                }
            }
        }
        Aggregation::MedianRank => {
            let total: f64 = weights.iter().sum();
            for d in 0..n {
                let mut ps: Vec<(usize, f64)> =
                    pos.iter().zip(weights).map(|(p, &w)| (p[d], w)).collect();
                ps.sort_by_key(|x| x.0);
                let mut acc = 0.0;
                let mut median = ps.last().map_or(0, |x| x.0);
                for &(p, w) in &ps {
                    acc += w;
                    if acc >= total / 2.0 {
                        median = p;
                        break;
                    }
                }
                let mean = if total > 0.0 {
                    ps.iter().map(|&(p, w)| p as f64 * w).sum::<f64>() / total
                } else {
                    0.0
                };
                // Lexicographic (median, mean) folded into one score: mean < n, so mean/(n+1) < 1.
                out[d] = -(median as f64 + mean / (n as f64 + 1.0));
            }
        }
        Aggregation::MarkovMc4 {
            teleport,
            max_iter,
            tol,
        } => {
            let total: f64 = weights.iter().sum();
            // T[p][q] for q != p: 1/n if Q beats P by weighted majority.
            let mut trans = vec![0.0f64; n * n];
            for p in 0..n {
                let mut stay = 1.0;
                for q in 0..n {
                    if q == p {
                        continue;
                    }
                    let above: f64 = pos
                        .iter()
                        .zip(weights)
                        .filter(|(ps, _)| ps[q] < ps[p])
                        .map(|(_, &w)| w)
                        .sum();
                    if above > total / 2.0 {
                        trans[p * n + q] = 1.0 / n as f64;
                        stay -= 1.0 / n as f64;
                    }
                }
                trans[p * n + p] = stay;
            }
            let mut pi = vec![1.0 / n as f64; n];
            let mut next = vec![0.0; n];
            for _ in 0..max_iter {
                next.iter_mut().for_each(|x| *x = teleport / n as f64);
                for p in 0..n {
                    let mass = (1.0 - teleport) * pi[p];
                    if mass == 0.0 {
                        continue;
                    }
                    let row = &trans[p * n..(p + 1) * n];
                    for (x, &t) in next.iter_mut().zip(row) {
                        *x += mass * t;
                    }
                }
                let change: f64 = next.iter().zip(&pi).map(|(a, b)| (a - b).abs()).sum();
                std::mem::swap(&mut pi, &mut next);
                if change < tol {
                    break;
                }
            }
            out.copy_from_slice(&pi);
        }
    }
}

/// An ensemble of linear models whose rankings are aggregated per query (committee BordaFuse, MHR).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankAggregate {
    /// The member rankers.
    pub members: Vec<LinearModel>,
    /// Non-negative weight of each member.
    pub weights: Vec<f64>,
    /// The aggregation method.
    pub method: Aggregation,
}

impl Scorer for RankAggregate {
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]) {
        let lists: Vec<Vec<f64>> = self
            .members
            .iter()
            .map(|m| {
                let mut s = vec![0.0; query.len()];
                m.score_query(query, &mut s);
                s
            })
            .collect();
        aggregate(&lists, &self.weights, self.method, out);
    }
    fn n_features(&self) -> usize {
        self.members
            .iter()
            .map(|m| m.weights.len())
            .max()
            .unwrap_or(0)
    }
}
