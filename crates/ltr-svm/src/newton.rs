//! Primal truncated Newton (Newton–CG with a backtracking line search) for the squared-hinge RankSVM
//! f(w) = ½‖w‖² + C · Σ weighted (1 − ⟨w, x_i − x_j⟩)²₊ over all pairs, using the O(n log n) loss, gradient and
//! Hessian-vector product of [`PairwiseObjective`]. This is the objective of liblinear's RankSVM (Lee & Lin 2014).

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

/// Minimise ½‖w‖² + C·loss from `w0` (zeros if `None`).
pub fn newton_cg(
    obj: &PairwiseObjective<'_>,
    c: f64,
    w0: Option<Vec<f64>>,
    st: &NewtonSettings,
) -> (Vec<f64>, SolveReport) {
    let ds = obj.dataset();
    let d = ds.n_features();
    let mut w = w0.unwrap_or_else(|| vec![0.0; d]);
    let grad_at = |w: &[f64]| {
        let s = ds.scores(w);
        let sg = obj.gradient(&s);
        let mut g = ds.transpose_times(&sg.coef);
        for (gj, wj) in g.iter_mut().zip(w) {
            *gj = wj + c * *gj;
        }
        let f = 0.5 * dot(w, w) + c * sg.loss;
        (f, g, sg)
    };
    let (mut f, mut g, mut state) = grad_at(&w);
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
        // CG on H d = −g.
        let mut dvec = vec![0.0; d];
        let mut r: Vec<f64> = g.iter().map(|x| -x).collect();
        let mut p = r.clone();
        let mut rr = dot(&r, &r);
        for _ in 0..st.max_cg {
            if rr.sqrt() <= st.cg_tol * gnorm {
                break;
            }
            cg_total += 1;
            let xp = ds.scores(&p);
            let hs = obj.hessian_times(&state, &xp);
            let mut hp = ds.transpose_times(&hs);
            for (h, pj) in hp.iter_mut().zip(&p) {
                *h = pj + c * *h;
            }
            let php = dot(&p, &hp);
            if php <= 0.0 {
                break;
            }
            let alpha = rr / php;
            for j in 0..d {
                dvec[j] += alpha * p[j];
                r[j] -= alpha * hp[j];
            }
            let rr_new = dot(&r, &r);
            let beta = rr_new / rr;
            rr = rr_new;
            for j in 0..d {
                p[j] = r[j] + beta * p[j];
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
            let (fn_, gn, sn) = grad_at(&wn);
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
    (
        w,
        SolveReport {
            objective: f,
            duality_gap: None,
            iterations,
            inner_iterations: cg_total,
            gradient_norm: gnorm,
        },
    )
}
