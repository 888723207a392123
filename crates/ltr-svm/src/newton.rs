//! Primal truncated Newton (Newton–CG with a backtracking line search) for the squared-hinge RankSVM
//! f(w) = ½‖w‖² + C · Σ weighted (1 − ⟨w, x_i − x_j⟩)²₊ over all pairs, using the O(n log n) loss, gradient and
//! Hessian-vector product of [`PairwiseObjective`]. This is the objective of liblinear's RankSVM (Lee & Lin 2014).
//!
//! Every sum over queries — the loss, the gradient Xᵀ∂ℓ/∂s, the Hessian products, the preconditioner — is taken
//! per query in f64 and then summed *exactly* over queries ([`ExactVec`]), and across ranks through an
//! [`Allreduce`] when the queries are spread over processes (`newton_cg_distributed`). Everything else is computed
//! from those sums identically on every rank, so the model does not depend, bit for bit, on the number of threads
//! or ranks or on how the queries were split between them.

use ltr_core::{Allreduce, Result, SingleProcess};
use ltr_data::{exact_sum_over_queries, ExactVec};
use ltr_pairs::PairwiseObjective;

use crate::SolveReport;

/// Settings of [`newton_cg`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Stop when ‖∇f‖ ≤ tol · ‖∇f(w₀)‖.
    pub tol: f64,
    /// Newton iterations at most.
    pub max_iter: usize,
    /// Conjugate-gradient iterations per Newton step at most.
    pub max_cg: usize,
    /// CG stops when the residual is below this fraction of ‖∇f‖ (liblinear uses 0.1).
    pub cg_tol: f64,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        Self {
            tol: 1e-5,
            max_iter: 100,
            max_cg: 250,
            cg_tol: 0.1,
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The primal objective value at `w`.
pub fn primal_objective(obj: &PairwiseObjective<'_>, c: f64, w: &[f64]) -> f64 {
    let s = obj.dataset().scores(w);
    0.5 * dot(w, w) + c * obj.loss(&s)
}

/// Minimise ½‖w‖² + C·loss from `w0` (zeros if `None`) on one process.
pub fn newton_cg(
    obj: &PairwiseObjective<'_>,
    c: f64,
    w0: Option<Vec<f64>>,
    st: &NewtonSettings,
) -> (Vec<f64>, SolveReport) {
    newton_cg_distributed(obj, c, w0, st, &SingleProcess)
        .expect("a single process has no other rank whose failure could stop it")
}

/// [`newton_cg`] with the queries spread over the ranks of `comm`: `obj` holds this rank's queries, and every
/// rank returns the same model — the one [`newton_cg`] gives on all the queries, bit for bit. An error means
/// another rank failed.
pub fn newton_cg_distributed(
    obj: &PairwiseObjective<'_>,
    c: f64,
    w0: Option<Vec<f64>>,
    st: &NewtonSettings,
    comm: &dyn Allreduce,
) -> Result<(Vec<f64>, SolveReport)> {
    let ds = obj.dataset();
    let d = ds.n_features();
    let mut w = w0.unwrap_or_else(|| vec![0.0; d]);
    let grad_at = |w: &[f64]| -> Result<_> {
        let (sg, mut sums) = obj.gradient_sums(&obj.scores(w));
        comm.sum_exact(&mut sums)?;
        let mut g: Vec<f64> = (0..d).map(|j| sums.value(j)).collect();
        for (gj, wj) in g.iter_mut().zip(w) {
            *gj = wj + c * *gj;
        }
        let f = 0.5 * dot(w, w) + c * sums.value(d);
        Ok((f, g, sg))
    };
    let m = preconditioner(obj, c, comm)?;
    let (mut f, mut g, mut state) = grad_at(&w)?;
    let g0 = dot(&g, &g).sqrt();
    let mut iterations = 0;
    let mut cg_total = 0;
    loop {
        let gnorm = dot(&g, &g).sqrt();
        if gnorm <= st.tol * g0.max(1e-300) {
            break;
        }
        if iterations >= st.max_iter {
            tracing::warn!(
                "newton: stopped at its cap of {} iterations with a gradient norm {:.1e} of the initial (target {:.0e}); raise max-iter",
                st.max_iter,
                gnorm / g0.max(1e-300),
                st.tol
            );
            break;
        }
        iterations += 1;
        // Preconditioned CG on H d = −g (with M = I on features in [0, 1] this is plain CG, operation for
        // operation: z = r / 1 is r).
        let mut dvec = vec![0.0; d];
        let mut r: Vec<f64> = g.iter().map(|x| -x).collect();
        let mut z: Vec<f64> = r.iter().zip(&m).map(|(ri, mi)| ri / mi).collect();
        let mut p = z.clone();
        let mut rz = dot(&r, &z);
        for _ in 0..st.max_cg {
            if dot(&r, &r).sqrt() <= st.cg_tol * gnorm {
                break;
            }
            cg_total += 1;
            let mut sums = obj.hessian_product_sums(&state, &p);
            comm.sum_exact(&mut sums)?;
            let mut hp = sums.values();
            for (h, pj) in hp.iter_mut().zip(&p) {
                *h = pj + c * *h;
            }
            let php = dot(&p, &hp);
            if php <= 0.0 {
                break;
            }
            let alpha = rz / php;
            for j in 0..d {
                dvec[j] += alpha * p[j];
                r[j] -= alpha * hp[j];
            }
            for j in 0..d {
                z[j] = r[j] / m[j];
            }
            let rz_new = dot(&r, &z);
            let beta = rz_new / rz;
            rz = rz_new;
            for j in 0..d {
                p[j] = z[j] + beta * p[j];
            }
        }
        // Backtracking (Armijo) line search from the full Newton step.
        let gd = dot(&g, &dvec);
        if gd >= 0.0 {
            break;
        }
        let mut step = 1.0;
        let mut accepted = false;
        for _ in 0..40 {
            let wn: Vec<f64> = w.iter().zip(&dvec).map(|(a, b)| a + step * b).collect();
            let (fn_, gn, sn) = grad_at(&wn)?;
            if fn_ <= f + 1e-4 * step * gd {
                w = wn;
                f = fn_;
                g = gn;
                state = sn;
                accepted = true;
                break;
            }
            step *= 0.5;
        }
        if !accepted {
            break;
        }
    }
    let gnorm = dot(&g, &g).sqrt();
    tracing::debug!(
        "newton: {iterations} iterations, {cg_total} CG steps, objective {f:.10e}, gradient norm {:.1e} of the initial",
        gnorm / g0.max(1e-300)
    );
    Ok((
        w,
        SolveReport {
            objective: f,
            duality_gap: None,
            iterations,
            inner_iterations: cg_total,
            gradient_norm: gnorm,
        },
    ))
}

/// A diagonal preconditioner for CG: 1 + C·(the Hessian's diagonal at w = 0, pair weights ignored), so that on raw
/// features (counts, BM25, PageRank in the millions) each CG step is taken in well-scaled coordinates — the
/// Hessian's diagonal spans many orders of magnitude there and plain CG needs hundreds of steps per Newton step.
/// Features in [0, 1] on every rank (LETOR) keep M = I.
fn preconditioner(obj: &PairwiseObjective<'_>, c: f64, comm: &dyn Allreduce) -> Result<Vec<f64>> {
    let ds = obj.dataset();
    let d = ds.n_features();
    let mut outside = ExactVec::new(1);
    outside.add(
        0,
        if ds.features_in_unit_interval() {
            0.0
        } else {
            1.0
        },
    );
    comm.sum_exact(&mut outside)?;
    if outside.value(0) == 0.0 {
        return Ok(vec![1.0; d]);
    }
    // Σ over pairs (i, j) of one query of (x_if − x_jf)² = n_q Σ_i x_if² − (Σ_i x_if)², scaled by the share of
    // pairs with different grades (the pairs the loss has).
    let labels = ds.labels();
    let mut sums = exact_sum_over_queries(
        ds.n_queries(),
        d + 2,
        || (),
        |q, acc, ()| {
            let range = ds.query_range(q);
            let n = range.len() as f64;
            let (mut sum, mut sum2) = (vec![0.0; d], vec![0.0; d]);
            for i in range.clone() {
                for (f, v) in ds.row(i).entries() {
                    let v = v as f64;
                    sum[f] += v;
                    sum2[f] += v * v;
                }
            }
            for f in 0..d {
                acc.add(f, n * sum2[f] - sum[f] * sum[f]);
            }
            // Pairs with different grades: (n² − Σ_g n_g²) / 2, from the grade histogram.
            let mut counts: std::collections::BTreeMap<u32, f64> =
                std::collections::BTreeMap::new();
            for y in &labels[range] {
                *counts.entry(y.to_bits()).or_default() += 1.0;
            }
            let same: f64 = counts.values().map(|k| k * k).sum();
            acc.add(d, (n * n - same) / 2.0);
            acc.add(d + 1, n * (n - 1.0) / 2.0);
        },
    );
    comm.sum_exact(&mut sums)?;
    let (graded, all) = (sums.value(d), sums.value(d + 1));
    let share = if all > 0.0 { graded / all } else { 0.0 };
    Ok((0..d)
        .map(|f| 1.0 + c * 2.0 * share * sums.value(f).max(0.0))
        .collect())
}
