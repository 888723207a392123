//! Dual coordinate descent over explicit weighted pairs (Hsieh et al. 2008, the liblinear solver), with a box
//! constraint 0 ≤ α_i ≤ C_i of its own for every pair. With C_i = C·τ_k(i)·μ_q(i) this is RSVM-IR-QP (seed 004,
//! Theorem 1); with C_i = C it is the RankSVM dual; with pairs of one grade pair it trains an MHR base ranker.
//! Pairs are row-index pairs; difference vectors are never formed.

use ltr_data::Dataset;
use ltr_pairs::{PairLoss, PairSet};
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::SolveReport;

/// Settings of [`dual_cd`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DualSettings {
    /// Stop when the projected-gradient spread (max − min) falls below this.
    pub tol: f64,
    /// Passes over the pairs at most.
    pub max_epochs: usize,
    /// Seed of the per-epoch pair order.
    pub seed: u64,
}

impl Default for DualSettings {
    fn default() -> Self {
        Self {
            tol: 0.1, // liblinear's default stopping tolerance for its dual solvers
            max_epochs: 1000,
            seed: 1,
        }
    }
}

#[inline]
fn diff_dot(ds: &Dataset, hi: usize, lo: usize, w: &[f64]) -> f64 {
    ds.row(hi).dot(w) - ds.row(lo).dot(w)
}

/// Solve min ½‖w‖² + Σ_i C_i ℓ(1 − ⟨w, x_hi − x_lo⟩) over the pairs, ℓ the hinge or the squared hinge, with
/// `costs[i]` = C_i. Returns w and a report with the duality gap.
pub fn dual_cd(
    ds: &Dataset,
    pairs: &PairSet,
    costs: &[f64],
    loss: PairLoss,
    st: &DualSettings,
) -> (Vec<f64>, SolveReport) {
    assert_eq!(costs.len(), pairs.len(), "one cost per pair");
    let d = ds.n_features();
    let m = pairs.len();
    let mut w = vec![0.0; d];
    let mut alpha = vec![0.0f64; m];
    // Diagonal term and upper bound per pair.
    let (diag, upper): (Vec<f64>, Vec<f64>) = costs
        .iter()
        .map(|&c| match loss {
            PairLoss::Hinge => (0.0, c),
            PairLoss::SquaredHinge => {
                (if c > 0.0 { 0.5 / c } else { f64::INFINITY }, f64::INFINITY)
            }
        })
        .unzip();
    let qii: Vec<f64> = pairs
        .pairs
        .iter()
        .zip(&diag)
        .map(|(p, &dg)| {
            let (a, b) = (ds.row(p.hi as usize), ds.row(p.lo as usize));
            let mut s = 0.0;
            for j in 0..d {
                let v = a.get(j) as f64 - b.get(j) as f64;
                s += v * v;
            }
            s + dg
        })
        .collect();
    // Active set with shrinking (as liblinear): a variable at a bound whose gradient says it will stay there is
    // set aside until the active set converges; then every variable is checked again before stopping.
    let mut active: Vec<usize> = (0..m).filter(|&i| costs[i] > 0.0).collect();
    let n_all = active.len();
    let mut active_size = n_all;
    let (mut pg_max_old, mut pg_min_old) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(st.seed);
    let mut epochs = 0;
    while epochs < st.max_epochs {
        epochs += 1;
        active[..active_size].shuffle(&mut rng);
        let (mut pg_max, mut pg_min) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut s_idx = 0;
        while s_idx < active_size {
            let i = active[s_idx];
            let p = pairs.pairs[i];
            let (hi, lo) = (p.hi as usize, p.lo as usize);
            let g = diff_dot(ds, hi, lo, &w) - 1.0 + diag[i] * alpha[i];
            let mut pg = 0.0;
            if alpha[i] == 0.0 {
                if g > pg_max_old {
                    active_size -= 1;
                    active.swap(s_idx, active_size);
                    continue;
                } else if g < 0.0 {
                    pg = g;
                }
            } else if alpha[i] >= upper[i] {
                if g < pg_min_old {
                    active_size -= 1;
                    active.swap(s_idx, active_size);
                    continue;
                } else if g > 0.0 {
                    pg = g;
                }
            } else {
                pg = g;
            }
            pg_max = pg_max.max(pg);
            pg_min = pg_min.min(pg);
            if pg.abs() > 1e-12 && qii[i] == 0.0 {
                // Identical feature vectors with different labels (OHSUMED has such duplicates): the dual is linear
                // in α_i with slope −G = 1, so the optimum is the upper bound; w does not move.
                alpha[i] = if g < 0.0 { upper[i] } else { 0.0 };
            } else if pg.abs() > 1e-12 {
                let old = alpha[i];
                alpha[i] = (old - g / qii[i]).clamp(0.0, upper[i]);
                let delta = alpha[i] - old;
                if delta != 0.0 {
                    ds.row(hi).axpy(delta, &mut w);
                    ds.row(lo).axpy(-delta, &mut w);
                }
            }
            s_idx += 1;
        }
        if pg_max - pg_min <= st.tol || active_size == 0 {
            if active_size == n_all {
                break;
            }
            // Converged on the shrunk set: check everything once more.
            active_size = n_all;
            pg_max_old = f64::INFINITY;
            pg_min_old = f64::NEG_INFINITY;
            continue;
        }
        pg_max_old = if pg_max <= 0.0 { f64::INFINITY } else { pg_max };
        pg_min_old = if pg_min >= 0.0 {
            f64::NEG_INFINITY
        } else {
            pg_min
        };
    }
    // Primal and dual objectives.
    let ww: f64 = w.iter().map(|x| x * x).sum();
    let mut primal = 0.5 * ww;
    for (i, p) in pairs.pairs.iter().enumerate() {
        let m_ = 1.0 - diff_dot(ds, p.hi as usize, p.lo as usize, &w);
        if m_ > 0.0 {
            primal += costs[i] * if loss == PairLoss::Hinge { m_ } else { m_ * m_ };
        }
    }
    let dual: f64 = alpha.iter().sum::<f64>()
        - 0.5 * ww
        - alpha
            .iter()
            .zip(&diag)
            .map(|(a, dg)| 0.5 * dg * a * a)
            .sum::<f64>();
    (
        w,
        SolveReport {
            objective: primal,
            duality_gap: Some(primal - dual),
            iterations: epochs,
            inner_iterations: 0,
            gradient_norm: f64::NAN,
        },
    )
}
