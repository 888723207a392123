//! The 1-slack cutting-plane method for the hinge-loss RankSVM (Joachims 2006, "Training linear SVMs in linear
//! time" — the algorithm of SVMrank), here over the O(n log n) weighted pairwise objective of `ltr-pairs`, so each
//! iteration costs one scoring pass and two sorted sweeps per query whatever the number of pairs.
//!
//! Problem: min_w ½‖w‖² + C·L(w), L(w) = Σ_q μ_q Σ_{pairs} τ · max(0, 1 − ⟨w, x_i − x_j⟩). At w_t the hinge sum is
//! the affine function b_t − ⟨a_t, w⟩ over the pairs active at w_t, and L(w) ≥ b_t − ⟨a_t, w⟩ everywhere, so
//! L(w) ≥ max_t (b_t − ⟨a_t, w⟩) — the cutting-plane model. Each iteration adds the plane at the current w and solves
//! the small dual over the planes,
//!
//! max_α Σ_t α_t b_t − ½‖Σ_t α_t a_t‖²   s.t. α ≥ 0, Σ_t α_t ≤ C,   w = Σ_t α_t a_t,
//!
//! by SMO steps on the simplex (a zero plane carries the slack of Σ α ≤ C). The dual value is a lower bound on the
//! optimum and every iterate's primal value an upper bound: the method stops when the relative gap between the best
//! primal value seen and the dual value falls below `tol`. The solution is the same as the dual coordinate
//! descent's (RSVM-IR-QP); the cost does not grow with the number of pairs, which is what makes large C affordable.

use ltr_pairs::{PairLoss, PairwiseObjective};

use crate::SolveReport;

/// Settings of [`cutting_plane`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CuttingPlaneSettings {
    /// Stop when (best primal − dual) ≤ tol · best primal.
    pub tol: f64,
    /// Cutting planes at most.
    pub max_iter: usize,
}

impl Default for CuttingPlaneSettings {
    fn default() -> Self {
        Self {
            // Tight, because it is cheap (a few more planes) and rankings on data with near-duplicate documents are
            // sensitive to tiny weight differences: at 1e-5 the objective matches the dual solver's to 1e-5.
            tol: 1e-5,
            max_iter: 10_000,
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Keep `v[i]` exactly where `keep[i]`.
fn retain_flagged<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut flags = keep.iter();
    v.retain(|_| *flags.next().expect("one flag per element"));
}

/// The working set: planes (a_t, b_t), their Gram matrix and the dual variables, slack first.
struct Planes {
    a: Vec<Vec<f64>>,
    b: Vec<f64>,
    gram: Vec<Vec<f64>>,
    /// α_0 is the slack of Σ α ≤ C (its plane is zero); α_t for t ≥ 1 belong to `a[t − 1]`.
    alpha: Vec<f64>,
    /// (G α)_t for t ≥ 1 (the slack's row is zero).
    g_alpha: Vec<f64>,
    /// Consecutive solves each plane has ended with α_t = 0.
    idle: Vec<u32>,
}

impl Planes {
    fn new(c: f64) -> Self {
        Self {
            a: Vec::new(),
            b: Vec::new(),
            gram: Vec::new(),
            alpha: vec![c],
            g_alpha: Vec::new(),
            idle: Vec::new(),
        }
    }

    fn push(&mut self, a: Vec<f64>, b: f64) {
        let row: Vec<f64> = self.a.iter().map(|x| dot(x, &a)).collect();
        for (t, g) in self.gram.iter_mut().enumerate() {
            g.push(row[t]);
        }
        let mut row = row;
        row.push(dot(&a, &a));
        let ga = row[..self.a.len()]
            .iter()
            .zip(&self.alpha[1..])
            .map(|(g, al)| g * al)
            .sum();
        self.gram.push(row);
        self.a.push(a);
        self.b.push(b);
        self.alpha.push(0.0);
        self.g_alpha.push(ga);
        self.idle.push(0);
    }

    /// Drop planes whose α has been zero for `patience` consecutive solves (SVMrank does the same): they no longer
    /// shape the model, and the inner solve costs O(planes) per step.
    fn retire_idle(&mut self, patience: u32) {
        let keep: Vec<bool> = (0..self.a.len())
            .map(|t| self.alpha[t + 1] > 0.0 || self.idle[t] < patience)
            .collect();
        if keep.iter().all(|&k| k) {
            return;
        }
        retain_flagged(&mut self.a, &keep);
        retain_flagged(&mut self.b, &keep);
        retain_flagged(&mut self.g_alpha, &keep);
        retain_flagged(&mut self.idle, &keep);
        retain_flagged(&mut self.gram, &keep);
        for row in &mut self.gram {
            retain_flagged(row, &keep);
        }
        // α_0 (the slack) is not a plane and always stays.
        let keep_alpha: Vec<bool> = std::iter::once(true).chain(keep).collect();
        retain_flagged(&mut self.alpha, &keep_alpha);
    }

    /// Gradient of the dual objective with respect to α_t (t = 0 is the slack: 0).
    fn grad(&self, t: usize) -> f64 {
        if t == 0 {
            0.0
        } else {
            self.b[t - 1] - self.g_alpha[t - 1]
        }
    }

    fn g(&self, s: usize, t: usize) -> f64 {
        if s == 0 || t == 0 {
            0.0
        } else {
            self.gram[s - 1][t - 1]
        }
    }

    /// SMO on the simplex Σ α = C until the largest gradient gap is below `eps`; returns the steps taken.
    fn solve(&mut self, eps: f64, max_steps: usize) -> usize {
        let k = self.alpha.len();
        for step_no in 0..max_steps {
            let (mut up, mut up_g) = (0, f64::NEG_INFINITY);
            let (mut down, mut down_g) = (0, f64::INFINITY);
            for t in 0..k {
                let g = self.grad(t);
                if g > up_g {
                    (up, up_g) = (t, g);
                }
                if self.alpha[t] > 0.0 && g < down_g {
                    (down, down_g) = (t, g);
                }
            }
            if up == down || up_g - down_g <= eps {
                self.count_idle();
                return step_no;
            }
            let curvature = self.g(up, up) + self.g(down, down) - 2.0 * self.g(up, down);
            let step = if curvature > 0.0 {
                ((up_g - down_g) / curvature).min(self.alpha[down])
            } else {
                self.alpha[down]
            };
            self.alpha[up] += step;
            self.alpha[down] -= step;
            if self.alpha[down] < 1e-300 {
                self.alpha[down] = 0.0;
            }
            for t in 1..k {
                self.g_alpha[t - 1] += step * (self.g(t, up) - self.g(t, down));
            }
        }
        self.count_idle();
        max_steps
    }

    fn count_idle(&mut self) {
        for (idle, &al) in self.idle.iter_mut().zip(&self.alpha[1..]) {
            *idle = if al > 0.0 { 0 } else { *idle + 1 };
        }
    }

    fn weights(&self, d: usize) -> Vec<f64> {
        let mut w = vec![0.0; d];
        for (a, &al) in self.a.iter().zip(&self.alpha[1..]) {
            if al != 0.0 {
                for (wj, aj) in w.iter_mut().zip(a) {
                    *wj += al * aj;
                }
            }
        }
        w
    }

    /// Σ α_t b_t − ½ αᵀGα.
    fn dual_value(&self) -> f64 {
        self.alpha[1..]
            .iter()
            .zip(&self.b)
            .zip(&self.g_alpha)
            .map(|((al, b), ga)| al * (b - 0.5 * ga))
            .sum()
    }
}

/// Minimise ½‖w‖² + C·L(w) for the weighted pairwise hinge loss of `obj`; returns the best iterate and a report
/// with the final duality gap. Panics if `obj` is not a hinge objective.
pub fn cutting_plane(
    obj: &PairwiseObjective<'_>,
    c: f64,
    st: &CuttingPlaneSettings,
) -> (Vec<f64>, SolveReport) {
    assert_eq!(
        obj.loss_kind(),
        PairLoss::Hinge,
        "the cutting-plane method solves the hinge loss"
    );
    let ds = obj.dataset();
    let d = ds.n_features();
    let mut planes = Planes::new(c);
    let mut w = vec![0.0; d];
    let (mut best_w, mut best_p) = (w.clone(), f64::INFINITY);
    let mut gap = f64::INFINITY;
    let mut iterations = 0;
    let mut smo_steps = 0;
    let mut gnorm = f64::NAN;
    while iterations < st.max_iter {
        iterations += 1;
        let sg = obj.gradient(&ds.scores(&w));
        let primal = 0.5 * dot(&w, &w) + c * sg.loss;
        if primal < best_p {
            (best_p, best_w) = (primal, w.clone());
        }
        let dual = planes.dual_value();
        gap = best_p - dual;
        if gap <= st.tol * best_p.abs().max(f64::MIN_POSITIVE) {
            break;
        }
        // The plane at w: a = −∂L/∂w = −Xᵀ(∂L/∂s), b = L(w) + ⟨a, w⟩.
        let a: Vec<f64> = ds.transpose_times(&sg.coef).iter().map(|g| -g).collect();
        gnorm = w
            .iter()
            .zip(&a)
            .map(|(wj, aj)| (wj - c * aj).powi(2))
            .sum::<f64>()
            .sqrt();
        let b = sg.loss + dot(&a, &w);
        planes.push(a, b);
        planes.retire_idle(50);
        // Solve the inner dual a good deal tighter than the current gap (early planes need little precision) and
        // than the final tolerance; its gradient is in loss units, and α sums to C.
        let target = (0.1 * gap).max(0.01 * st.tol * best_p.abs());
        let eps = target.max(f64::MIN_POSITIVE) / c.max(f64::MIN_POSITIVE);
        smo_steps += planes.solve(eps, planes.alpha.len() * 200);
        w = planes.weights(d);
    }
    tracing::debug!(
        "cutting plane: {iterations} planes, {smo_steps} SMO steps, primal {best_p:.6}, gap {gap:.3e}"
    );
    let report = SolveReport {
        objective: best_p,
        duality_gap: Some(gap),
        iterations,
        inner_iterations: smo_steps,
        gradient_norm: gnorm,
    };
    (best_w, report)
}
