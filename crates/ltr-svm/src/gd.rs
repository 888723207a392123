//! RSVM-IR's gradient descent (seed 004, Figure 3): w ← w + η·(Σ_active z τ μ Δx − 2λw) on
//! L(w) = Σ τ μ [1 − ⟨w, Δx⟩]₊ + λ‖w‖², with the sub-gradient over all pairs computed in O(n log n) per query.
//! The step is fixed (the paper) or found by backtracking (Armijo) from an initial η.

use ltr_core::Result;
use ltr_pairs::PairwiseObjective;

use crate::shared::SharedObjective;
use crate::SolveReport;

/// Step-size rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepRule {
    /// The paper's constant η.
    Fixed(f64),
    /// Backtracking line search starting at η, halving until the objective decreases sufficiently.
    Backtracking(f64),
}

/// Settings of [`gradient_descent`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GdSettings {
    /// Step rule.
    pub step: StepRule,
    /// Stop when the relative decrease of L over an iteration is below this.
    pub tol: f64,
    /// Iterations at most.
    pub max_iter: usize,
}

impl Default for GdSettings {
    fn default() -> Self {
        Self {
            step: StepRule::Backtracking(1.0),
            tol: 1e-6,
            max_iter: 2000,
        }
    }
}

/// Minimise Σ weighted hinge + λ‖w‖² by (sub)gradient descent from zero; returns the best iterate seen.
pub fn gradient_descent(
    obj: &PairwiseObjective<'_>,
    lambda: f64,
    st: &GdSettings,
) -> (Vec<f64>, SolveReport) {
    gradient_descent_shared(&SharedObjective::single(obj), lambda, st)
        .expect("a single process has no other rank whose failure could stop it")
}

/// [`gradient_descent`] over the queries of every rank (the loss and gradient summed exactly across ranks, so
/// every rank takes the same steps). An error means another rank failed.
pub(crate) fn gradient_descent_shared(
    shared: &SharedObjective<'_>,
    lambda: f64,
    st: &GdSettings,
) -> Result<(Vec<f64>, SolveReport)> {
    let ds = shared.dataset();
    let d = ds.n_features();
    let value = |w: &[f64]| -> Result<f64> {
        Ok(shared.loss(&ds.scores(w))? + lambda * w.iter().map(|x| x * x).sum::<f64>())
    };
    let mut w = vec![0.0; d];
    let mut f = value(&w)?;
    let (mut best_w, mut best_f) = (w.clone(), f);
    let mut iterations = 0;
    let mut gnorm = f64::NAN;
    let mut eta = match st.step {
        StepRule::Fixed(e) | StepRule::Backtracking(e) => e,
    };
    while iterations < st.max_iter {
        iterations += 1;
        let (_, mut g) = shared.loss_and_gradient(&ds.scores(&w))?;
        for (gj, wj) in g.iter_mut().zip(&w) {
            *gj += 2.0 * lambda * wj;
        }
        gnorm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
        if gnorm == 0.0 {
            break;
        }
        let f_new;
        match st.step {
            StepRule::Fixed(e) => {
                w.iter_mut().zip(&g).for_each(|(wj, gj)| *wj -= e * gj);
                f_new = value(&w)?;
            }
            StepRule::Backtracking(_) => {
                let gg = gnorm * gnorm;
                let mut trial = eta * 2.0;
                loop {
                    let wn: Vec<f64> = w.iter().zip(&g).map(|(a, b)| a - trial * b).collect();
                    let fv = value(&wn)?;
                    if fv <= f - 1e-4 * trial * gg || trial < 1e-20 {
                        w = wn;
                        f_new = fv;
                        eta = trial;
                        break;
                    }
                    trial *= 0.5;
                }
            }
        }
        let rel = (f - f_new) / f.abs().max(1e-300);
        f = f_new;
        if f < best_f {
            best_f = f;
            best_w = w.clone();
        }
        if rel.abs() < st.tol {
            break;
        }
    }
    Ok((
        best_w,
        SolveReport {
            objective: best_f,
            duality_gap: None,
            iterations,
            inner_iterations: 0,
            gradient_norm: gnorm,
        },
    ))
}
