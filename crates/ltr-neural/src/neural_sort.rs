//! NeuralNDCG (Pobrotyn & Białobrzeski, 2021, "NeuralNDCG: Direct Optimisation of a Ranking Metric via
//! Differentiable Relaxation of Sorting"), deterministic variant, with its gradient by hand.
//!
//! Forward, for one query of `n` documents:
//! 1. NeuralSort (Grover et al. 2019): `P̂[l, i] = softmax_i((s_i (n + 1 − 2(l + 1)) − Σ_j |s_i − s_j|) / τ)`, row
//!    `l` a distribution over the documents for position `l`;
//! 2. Sinkhorn scaling (at most 50 rounds of column then row normalisation, each sum clamped below at ε, until
//!    every row and column sums to 1 within 1e-6 — allRank's `sinkhorn_scaling`);
//! 3. NDCG@k of the relaxed ranking: `Σ_{l<k} (Σ_i P̂[l, i] g_i) / log2(l + 2)` over the ideal DCG@k, `g = 2^l − 1`.
//!
//! The loss is −NDCG; a query whose ideal DCG is 0 adds nothing and is not counted (norm 0). The backward pass
//! runs through every Sinkhorn round actually taken, as autograd does.

use crate::loss_value::{QueryLoss, EPS};

const SINKHORN_ROUNDS: usize = 50;
const SINKHORN_TOL: f64 = 1e-6;

/// One Sinkhorn round's inputs: the matrix before it and the column and row sums it divided by.
struct Round {
    before: Vec<f64>,
    col: Vec<f64>,
    row: Vec<f64>,
}

/// The gains `2^l − 1`, the discounts `1 / log2(position + 2)` and the ideal DCG@k of a query's labels.
fn ideal_dcg(labels: &[f64], k: usize) -> (Vec<f64>, Vec<f64>, f64) {
    let gains: Vec<f64> = labels.iter().map(|l| l.exp2() - 1.0).collect();
    let disc: Vec<f64> = (0..labels.len())
        .map(|l| 1.0 / (l as f64 + 2.0).log2())
        .collect();
    let mut ideal = gains.clone();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal.iter().zip(&disc).take(k).map(|(g, d)| g * d).sum();
    (gains, disc, idcg)
}

/// NeuralNDCG's share of a batch's normaliser for a query of these labels (what [`neural_ndcg`] returns as
/// `norm`): 0 when its ideal DCG@k is 0, else 1.
pub(crate) fn neural_ndcg_norm(labels: &[f64], k: Option<usize>) -> f64 {
    let n = labels.len();
    if ideal_dcg(labels, k.unwrap_or(n).min(n)).2 == 0.0 {
        0.0
    } else {
        1.0
    }
}

pub(crate) fn neural_ndcg(
    s: &[f64],
    labels: &[f64],
    tau: f64,
    k: Option<usize>,
    grad: &mut [f64],
) -> QueryLoss {
    let n = s.len();
    let k = k.unwrap_or(n).min(n);
    let (gains, disc, idcg) = ideal_dcg(labels, k);
    if idcg == 0.0 {
        return QueryLoss {
            value: 0.0,
            norm: 0.0,
        };
    }
    // NeuralSort.
    let b: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| (s[i] - s[j]).abs()).sum())
        .collect();
    let scaling: Vec<f64> = (0..n)
        .map(|l| (n as f64) + 1.0 - 2.0 * (l as f64 + 1.0))
        .collect();
    // Row-major n×n: row l a distribution over the documents for position l.
    let mut p = vec![0.0; n * n];
    for l in 0..n {
        let row = &mut p[l * n..(l + 1) * n];
        for i in 0..n {
            row[i] = (s[i] * scaling[l] - b[i]) / tau;
        }
        let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mut z = 0.0;
        for v in row.iter_mut() {
            *v = (*v - m).exp();
            z += *v;
        }
        row.iter_mut().for_each(|v| *v /= z);
    }
    let softmax = p.clone();
    // Sinkhorn.
    let mut rounds = Vec::new();
    let mut m = p;
    for _ in 0..SINKHORN_ROUNDS {
        let before = m.clone();
        let col: Vec<f64> = (0..n)
            .map(|i| (0..n).map(|l| m[l * n + i]).sum::<f64>().max(EPS))
            .collect();
        for l in 0..n {
            for i in 0..n {
                m[l * n + i] /= col[i];
            }
        }
        let row: Vec<f64> = (0..n)
            .map(|l| m[l * n..(l + 1) * n].iter().sum::<f64>().max(EPS))
            .collect();
        for l in 0..n {
            for i in 0..n {
                m[l * n + i] /= row[l];
            }
        }
        rounds.push(Round { before, col, row });
        let rows_ok =
            (0..n).all(|l| (m[l * n..(l + 1) * n].iter().sum::<f64>() - 1.0).abs() < SINKHORN_TOL);
        let cols_ok =
            (0..n).all(|i| ((0..n).map(|l| m[l * n + i]).sum::<f64>() - 1.0).abs() < SINKHORN_TOL);
        if rows_ok && cols_ok {
            break;
        }
    }
    let denom = idcg + EPS;
    let mut dcg = 0.0;
    for l in 0..k {
        let gt: f64 = (0..n).map(|i| m[l * n + i] * gains[i]).sum();
        dcg += gt * disc[l];
    }
    let value = -dcg / denom;
    // Backward: ∂(−NDCG)/∂M.
    let mut dm = vec![0.0; n * n];
    for l in 0..k {
        for i in 0..n {
            dm[l * n + i] = -gains[i] * disc[l] / denom;
        }
    }
    for round in rounds.iter().rev() {
        // M2 = M1 / row (per row l), M1 = M0 / col (per column i).
        let m1: Vec<f64> = (0..n * n)
            .map(|x| round.before[x] / round.col[x % n])
            .collect();
        let mut dm1 = vec![0.0; n * n];
        for l in 0..n {
            let r = round.row[l];
            let dot: f64 = if r > EPS {
                (0..n).map(|i| dm[l * n + i] * m1[l * n + i] / r).sum()
            } else {
                0.0
            };
            for i in 0..n {
                dm1[l * n + i] = (dm[l * n + i] - dot) / r;
            }
        }
        for i in 0..n {
            let c = round.col[i];
            let dot: f64 = if c > EPS {
                (0..n).map(|l| dm1[l * n + i] * m1[l * n + i]).sum()
            } else {
                0.0
            };
            for l in 0..n {
                dm[l * n + i] = (dm1[l * n + i] - dot) / c;
            }
        }
    }
    // Softmax rows, then the NeuralSort logits.
    let mut db = vec![0.0; n];
    for l in 0..n {
        let pr = &softmax[l * n..(l + 1) * n];
        let dr = &dm[l * n..(l + 1) * n];
        let dot: f64 = pr.iter().zip(dr).map(|(p, d)| p * d).sum();
        for i in 0..n {
            let dlogit = pr[i] * (dr[i] - dot) / tau;
            grad[i] += dlogit * scaling[l];
            db[i] -= dlogit;
        }
    }
    for kk in 0..n {
        for j in 0..n {
            let sign = (s[kk] - s[j]).signum() * f64::from(s[kk] != s[j]);
            grad[kk] += sign * (db[kk] + db[j]);
        }
    }
    QueryLoss { value, norm: 1.0 }
}
