//! The ranking losses, each a function of one query's scores and labels → (its part of the loss, the gradient with
//! respect to its scores), written from the papers and, where allRank implements the loss, with allRank's exact
//! conventions (its ε, clamps, reductions), so that `tests/main.rs` can compare loss and gradient with allRank's
//! autograd on the same scores to 1e-6.
//!
//! A batch's loss is `Σ value / Σ norm` over its queries ([`Reduction::Mean`]) or `Σ value` ([`Reduction::Sum`],
//! LambdaLoss's default in allRank); `norm` is what allRank averages over (1 a query, the number of pairs for
//! RankNet, 0 for a query NeuralNDCG skips).

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

pub use crate::loss_value::{QueryLoss, EPS};
use crate::neural_sort::neural_ndcg;

/// LambdaLoss's weighting of a pair (Wang et al., CIKM 2018, "The LambdaLoss Framework for Ranking Metric
/// Optimization"; allRank's `*_scheme`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LambdaScheme {
    /// NDCG-Loss2: `|1/D(|i−j|) − 1/D(|i−j|+1)| · |G_i − G_j|` (δ_ij of the paper's Eq. 13).
    NdcgLoss2,
    /// NDCG-Loss2++: `μ · NDCG-Loss2 + LambdaRank's |1/D_i − 1/D_j| · |G_i − G_j|`.
    NdcgLoss2PlusPlus,
    /// LambdaRank's weight `|1/D_i − 1/D_j| · |G_i − G_j|` alone.
    LambdaRank,
}

/// A ranking loss.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Loss {
    /// RankNet (Burges et al. 2005): `log(1 + e^{−(s_i − s_j)})` over pairs with `l_i > l_j`, mean over pairs.
    RankNet,
    /// ListNet (Cao et al. 2007), top-one probabilities: cross entropy of `softmax(s)` against `softmax(labels)`.
    ListNet,
    /// ListNet against `labels / Σ labels` (allRank's `binary_listNet`; one-hot for a single relevant document).
    ListNetBinary,
    /// ListMLE (Xia et al. 2008): the Plackett–Luce likelihood of the label order, ties in a seeded random order.
    ListMle,
    /// LambdaLoss (Wang et al. 2018) with a weighting scheme, truncated at `k`; summed over pairs and queries.
    LambdaLoss {
        /// The weighting.
        scheme: LambdaScheme,
        /// Pairs within the top `k` of the current ranking only (`None`: all).
        k: Option<usize>,
        /// σ of the pair sigmoid.
        sigma: f64,
        /// μ of NDCG-Loss2++.
        mu: f64,
    },
    /// ApproxNDCG (Qin, Liu & Li 2010): NDCG with each position replaced by `1 + Σ_j sigmoid(−α(s_i − s_j))`.
    ApproxNdcg {
        /// α, the sigmoid's sharpness.
        alpha: f64,
    },
    /// NeuralNDCG (Pobrotyn & Białobrzeski 2021): NDCG@k of the labels permuted by NeuralSort's relaxed
    /// permutation matrix, made doubly stochastic by Sinkhorn scaling.
    NeuralNdcg {
        /// τ of NeuralSort's softmax.
        temperature: f64,
        /// The cut (`None`: the whole list).
        k: Option<usize>,
    },
    /// Pointwise mean squared error against the labels (a control).
    Mse,
    /// allRank's `pointwise_rmse`: per query `sqrt(mean((l − levels · s)²))` (a control).
    Rmse {
        /// allRank's `no_of_levels`.
        levels: f64,
    },
    /// Pointwise binary cross entropy of `sigmoid(s)` against the labels scaled to [0, 1] by the largest grade
    /// (allRank's `bce` on a sigmoid output; a control).
    Bce,
}

/// How a batch's query losses are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    /// `Σ value / Σ norm`.
    Mean,
    /// `Σ value`.
    Sum,
}

impl Loss {
    /// The loss called `name` with allRank's default settings (`ranknet`, `listnet`, `listnet-binary`, `listmle`,
    /// `ndcgloss2pp` (also `lambdaloss`), `ndcgloss2`, `ndcgloss2pp`, `lambdarank`, `approxndcg`, `neuralndcg`, `mse`,
    /// `rmse`, `bce`).
    pub fn parse(name: &str) -> Option<Self> {
        let lambda = |scheme| Loss::LambdaLoss {
            scheme,
            k: None,
            sigma: 1.0,
            mu: 10.0,
        };
        Some(match name.to_ascii_lowercase().as_str() {
            "ranknet" => Loss::RankNet,
            "listnet" => Loss::ListNet,
            "listnet-binary" => Loss::ListNetBinary,
            "listmle" => Loss::ListMle,
            "lambdaloss" | "ndcgloss2pp" => lambda(LambdaScheme::NdcgLoss2PlusPlus),
            "ndcgloss2" => lambda(LambdaScheme::NdcgLoss2),
            "lambdarank" => lambda(LambdaScheme::LambdaRank),
            "approxndcg" => Loss::ApproxNdcg { alpha: 1.0 },
            "neuralndcg" => Loss::NeuralNdcg {
                temperature: 1.0,
                k: None,
            },
            "mse" => Loss::Mse,
            "rmse" => Loss::Rmse { levels: 1.0 },
            "bce" => Loss::Bce,
            _ => return None,
        })
    }

    /// The names [`Loss::parse`] reads.
    pub const NAMES: &'static [&'static str] = &[
        "ranknet",
        "listnet",
        "listnet-binary",
        "listmle",
        "ndcgloss2",
        "ndcgloss2pp",
        "lambdarank",
        "approxndcg",
        "neuralndcg",
        "mse",
        "rmse",
        "bce",
    ];

    /// How its batch is reduced (allRank's).
    pub fn reduction(&self) -> Reduction {
        match self {
            Loss::LambdaLoss { .. } => Reduction::Sum,
            _ => Reduction::Mean,
        }
    }

    /// Whether it compares documents of a query (every loss but the pointwise controls).
    pub fn is_ranking(&self) -> bool {
        !matches!(self, Loss::Mse | Loss::Rmse { .. } | Loss::Bce)
    }

    /// One query's loss; its gradient with respect to `scores` is *added* to `grad`. `labels` are grades (for
    /// [`Loss::Bce`]: targets in [0, 1]); `tie_seed` orders equal labels for [`Loss::ListMle`].
    pub fn query_loss(
        &self,
        scores: &[f64],
        labels: &[f64],
        tie_seed: u64,
        grad: &mut [f64],
    ) -> QueryLoss {
        debug_assert_eq!(scores.len(), labels.len());
        debug_assert_eq!(scores.len(), grad.len());
        match *self {
            Loss::RankNet => ranknet(scores, labels, grad),
            Loss::ListNet => {
                let t = softmax(labels);
                listnet(scores, &t, grad)
            }
            Loss::ListNetBinary => {
                let sum: f64 = labels.iter().sum();
                let sum = if sum == 0.0 { 1.0 } else { sum };
                let t: Vec<f64> = labels.iter().map(|l| l / sum).collect();
                listnet(scores, &t, grad)
            }
            Loss::ListMle => listmle(scores, labels, tie_seed, grad),
            Loss::LambdaLoss {
                scheme,
                k,
                sigma,
                mu,
            } => lambdaloss(scores, labels, scheme, k, sigma, mu, grad),
            Loss::ApproxNdcg { alpha } => approx_ndcg(scores, labels, alpha, grad),
            Loss::NeuralNdcg { temperature, k } => {
                neural_ndcg(scores, labels, temperature, k, grad)
            }
            Loss::Mse => {
                let n = scores.len() as f64;
                let mut value = 0.0;
                for ((s, l), g) in scores.iter().zip(labels).zip(grad.iter_mut()) {
                    value += (s - l) * (s - l) / n;
                    *g += 2.0 * (s - l) / n;
                }
                QueryLoss { value, norm: 1.0 }
            }
            Loss::Rmse { levels } => {
                let n = scores.len() as f64;
                let e: Vec<f64> = scores
                    .iter()
                    .zip(labels)
                    .map(|(s, l)| l - levels * s)
                    .collect();
                let r = (e.iter().map(|e| e * e).sum::<f64>() / n).sqrt();
                if r > 0.0 {
                    for (g, e) in grad.iter_mut().zip(&e) {
                        *g += -levels * e / (n * r);
                    }
                }
                QueryLoss {
                    value: r,
                    norm: 1.0,
                }
            }
            Loss::Bce => {
                let mut value = 0.0;
                for ((&s, &t), g) in scores.iter().zip(labels).zip(grad.iter_mut()) {
                    value += t * softplus(-s) + (1.0 - t) * softplus(s);
                    *g += sigmoid(s) - t;
                }
                QueryLoss { value, norm: 1.0 }
            }
        }
    }
}

impl Loss {
    /// A batch's loss and its gradient with respect to each score: query `q` holds `offsets[q]..offsets[q + 1]`
    /// and orders its equal labels by `tie_seeds[q]` (ListMLE). Queries are computed in parallel, summed in order.
    pub fn batch(
        &self,
        scores: &[f64],
        labels: &[f64],
        offsets: &[usize],
        tie_seeds: &[u64],
    ) -> (f64, Vec<f64>) {
        let parts = self.queries(scores, labels, offsets, tie_seeds);
        let (mut value, mut norm) = (0.0, 0.0);
        for (ql, _) in &parts {
            value += ql.value;
            norm += ql.norm;
        }
        let scale = self.scale(norm);
        let mut grad = Vec::with_capacity(scores.len());
        for (_, g) in parts {
            grad.extend(g.into_iter().map(|v| v * scale));
        }
        (value * scale, grad)
    }

    /// Each query's loss and unscaled gradient (query `q` holds `offsets[q]..offsets[q + 1]`), in parallel.
    pub(crate) fn queries(
        &self,
        scores: &[f64],
        labels: &[f64],
        offsets: &[usize],
        tie_seeds: &[u64],
    ) -> Vec<(QueryLoss, Vec<f64>)> {
        (0..offsets.len() - 1)
            .into_par_iter()
            .map(|q| {
                let r = offsets[q]..offsets[q + 1];
                let mut g = vec![0.0; r.len()];
                let ql = self.query_loss(&scores[r.clone()], &labels[r], tie_seeds[q], &mut g);
                (ql, g)
            })
            .collect()
    }

    /// What a batch's summed query values and gradients are multiplied by, given its summed `norm`s.
    pub(crate) fn scale(&self, norm: f64) -> f64 {
        match self.reduction() {
            Reduction::Sum => 1.0,
            Reduction::Mean if norm > 0.0 => 1.0 / norm,
            Reduction::Mean => 0.0,
        }
    }

    /// A query's share of the batch normaliser, from its labels alone: the `norm` that [`Loss::query_loss`]
    /// returns for any scores (1 a query; RankNet's pairs; 0 for a NeuralNDCG query of ideal DCG 0). A training
    /// step reads it before any score exists, so that it can scale each piece's gradient before the next piece.
    pub fn query_norm(&self, labels: &[f64]) -> f64 {
        match *self {
            Loss::RankNet => {
                let mut pairs = 0.0;
                for &a in labels {
                    for &b in labels {
                        if a > b {
                            pairs += 1.0;
                        }
                    }
                }
                pairs
            }
            Loss::NeuralNdcg { k, .. } => crate::neural_sort::neural_ndcg_norm(labels, k),
            _ => 1.0,
        }
    }
}

/// `log(1 + e^x)` without overflow.
// pub for the tests in tests/unit/losses.rs; not API.
#[doc(hidden)]
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// `1 / (1 + e^−x)` without overflow.
// pub for the tests in tests/unit/losses.rs; not API.
#[doc(hidden)]
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

fn softmax(x: &[f64]) -> Vec<f64> {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let z: f64 = e.iter().sum();
    e.into_iter().map(|v| v / z).collect()
}

fn ranknet(s: &[f64], l: &[f64], grad: &mut [f64]) -> QueryLoss {
    let (mut value, mut pairs) = (0.0, 0.0);
    for i in 0..s.len() {
        for j in 0..s.len() {
            if l[i] > l[j] {
                let d = s[i] - s[j];
                value += softplus(-d);
                pairs += 1.0;
                let g = sigmoid(-d);
                grad[i] -= g;
                grad[j] += g;
            }
        }
    }
    QueryLoss { value, norm: pairs }
}

/// `−Σ t_i log(p_i + ε)` with `p = softmax(s)`: ∂/∂s_k = −r_k + p_k Σ_i r_i, `r_i = t_i p_i / (p_i + ε)`.
fn listnet(s: &[f64], t: &[f64], grad: &mut [f64]) -> QueryLoss {
    let p = softmax(s);
    let mut value = 0.0;
    let r: Vec<f64> = p
        .iter()
        .zip(t)
        .map(|(&p, &t)| {
            value -= t * (p + EPS).ln();
            t * p / (p + EPS)
        })
        .collect();
    let sum_r: f64 = r.iter().sum();
    for k in 0..s.len() {
        grad[k] += -r[k] + p[k] * sum_r;
    }
    QueryLoss { value, norm: 1.0 }
}

/// The documents by label, best first, equal labels in a random order drawn from `seed`.
fn label_order(l: &[f64], seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..l.len()).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    order.sort_by(|&a, &b| l[b].total_cmp(&l[a]));
    order
}

/// `Σ_i [log(Σ_{j≥i} e^{z_j} + ε) − z_i]` over the label order, `z = s − max s`.
fn listmle(s: &[f64], l: &[f64], seed: u64, grad: &mut [f64]) -> QueryLoss {
    let order = label_order(l, seed);
    let n = s.len();
    let (argmax, max) = s
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, &v)| {
            if v > bv {
                (i, v)
            } else {
                (bi, bv)
            }
        });
    let z: Vec<f64> = order.iter().map(|&d| s[d] - max).collect();
    let e: Vec<f64> = z.iter().map(|v| v.exp()).collect();
    let mut c = vec![0.0; n];
    let mut acc = 0.0;
    for i in (0..n).rev() {
        acc += e[i];
        c[i] = acc;
    }
    let mut value = 0.0;
    let mut prefix = 0.0;
    let mut total_dz = 0.0;
    for i in 0..n {
        value += (c[i] + EPS).ln() - z[i];
        prefix += 1.0 / (c[i] + EPS);
        let dz = e[i] * prefix - 1.0;
        grad[order[i]] += dz;
        total_dz += dz;
    }
    // z depends on s through the maximum too.
    grad[argmax] -= total_dz;
    QueryLoss { value, norm: 1.0 }
}

/// `1 / log2(2 + p)`, the discount of 0-based position `p`.
fn discount(p: usize) -> f64 {
    1.0 / (2.0 + p as f64).log2()
}

/// The ideal DCG over the first `k` positions, gains `2^l − 1`.
fn ideal_dcg(l: &[f64], k: usize) -> f64 {
    let mut sorted: Vec<f64> = l.iter().map(|v| v.max(0.0)).collect();
    sorted.sort_by(|a, b| b.total_cmp(a));
    sorted
        .iter()
        .take(k)
        .enumerate()
        .map(|(p, v)| (v.exp2() - 1.0) * discount(p))
        .sum()
}

#[allow(clippy::too_many_arguments)]
fn lambdaloss(
    s: &[f64],
    l: &[f64],
    scheme: LambdaScheme,
    k: Option<usize>,
    sigma: f64,
    mu: f64,
    grad: &mut [f64],
) -> QueryLoss {
    let n = s.len();
    let k = k.unwrap_or(n).min(n);
    // The current ranking (ties by document order).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
    let max_dcg = ideal_dcg(l, k).max(EPS);
    let g: Vec<f64> = order
        .iter()
        .map(|&d| (l[d].max(0.0).exp2() - 1.0) / max_dcg)
        .collect();
    let ln2 = std::f64::consts::LN_2;
    // Per position the discount, per distance NDCG-Loss2's δ: the pair loop's logarithms, computed once.
    let disc: Vec<f64> = (0..k).map(discount).collect();
    let delta_w: Vec<f64> = (0..k)
        .map(|d| (1.0 / (1.0 + d as f64).log2() - 1.0 / (2.0 + d as f64).log2()).abs())
        .collect();
    let mut value = 0.0;
    for p in 0..k {
        for q in 0..k {
            let (i, j) = (order[p], order[q]);
            if l[i] <= l[j] {
                continue;
            }
            let dg = (g[p] - g[q]).abs();
            let lambdarank = || (disc[p] - disc[q]).abs() * dg;
            let loss2 = || delta_w[p.abs_diff(q)] * dg;
            let w = match scheme {
                LambdaScheme::NdcgLoss2 => loss2(),
                LambdaScheme::LambdaRank => lambdarank(),
                LambdaScheme::NdcgLoss2PlusPlus => mu * loss2() + lambdarank(),
            };
            let d = (s[i] - s[j]).clamp(-1e8, 1e8);
            let sig = sigmoid(sigma * d);
            let q_w = sig.max(EPS).powf(w);
            value -= q_w.max(EPS).log2();
            if sig >= EPS && q_w >= EPS {
                let gd = -w / ln2 * sigma * (1.0 - sig);
                grad[i] += gd;
                grad[j] -= gd;
            }
        }
    }
    QueryLoss { value, norm: 1.0 }
}

/// `−Σ_i G_i / log2(1 + π_i)`, `π_i = 1 + Σ_{j≠i} max(sigmoid(−α(s_i − s_j)), ε)`.
fn approx_ndcg(s: &[f64], l: &[f64], alpha: f64, grad: &mut [f64]) -> QueryLoss {
    let n = s.len();
    let max_dcg = ideal_dcg(l, n).max(EPS);
    let mut value = 0.0;
    let mut pos = vec![1.0; n];
    for i in 0..n {
        for j in 0..n {
            if i != j {
                pos[i] += sigmoid(-alpha * (s[i] - s[j])).max(EPS);
            }
        }
    }
    for i in 0..n {
        let gi = (l[i].max(0.0).exp2() - 1.0) / max_dcg;
        let lg = (1.0 + pos[i]).log2();
        value -= gi / lg;
        // ∂(−G_i / log2(1 + π_i)) / ∂π_i
        let h = gi / (lg * lg * (1.0 + pos[i]) * std::f64::consts::LN_2);
        if h == 0.0 {
            continue;
        }
        for j in 0..n {
            if i == j {
                continue;
            }
            let sg = sigmoid(-alpha * (s[i] - s[j]));
            if sg < EPS {
                continue;
            }
            let dsig = alpha * sg * (1.0 - sg);
            grad[i] -= h * dsig;
            grad[j] += h * dsig;
        }
    }
    QueryLoss { value, norm: 1.0 }
}
