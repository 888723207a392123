//! # ltr-svm
//!
//! Linear RankSVM (Herbrich et al. 2000; Joachims 2002) and RankSVM for IR (Cao et al. 2006, seed 004).
//!
//! ```
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//! use ltr_core::{Fit, FitContext, ParamGuard};
//! use ltr_svm::{CSetting, RankSvmParams};
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 20, seed: 3, ..Default::default() }).unwrap();
//! let params = RankSvmParams::default().c(CSetting::Value(0.1)).check().unwrap();
//! let fit = params.fit(&ds, &FitContext::new(1)).unwrap();
//! assert_eq!(fit.linear().unwrap().weights.len(), ds.n_features());
//! assert!(fit.report.objective.unwrap() > 0.0);
//! ```
//!
//! Four solvers, one problem family — min ½‖w‖² + Σ_pairs C_i ℓ(1 − ⟨w, x_i − x_j⟩):
//! - [`Solver::Newton`]: primal truncated Newton on the O(n log n) squared-hinge objective (the fast path; the
//!   objective of liblinear's RankSVM);
//! - [`Solver::DualCd`]: dual coordinate descent over explicit weighted pairs with a box 0 ≤ α_i ≤ C_i per pair
//!   (RSVM-IR-QP; hinge or squared hinge) — it reports the duality gap;
//! - [`Solver::GradientDescent`]: the paper's gradient descent (RSVM-IR-GD), fixed step or backtracking;
//! - [`Solver::CuttingPlane`]: SVMrank's 1-slack cutting-plane method for the hinge (RSVM-IR-QP's default), over
//!   the O(n log n) objective — the same optimum as the dual, with a cost that does not grow with the pairs.
//!
//! RSVM-IR ([`Weighting`]) multiplies each pair's cost by τ of its rank pair (the NDCG@1 drop of swapping those
//! grades, [`ltr_pairs::tau_closed_form`]) and μ of its query ([`ltr_pairs::query_weights_mu`]).
// Unit tests live in tests/: `cargo test --all-targets` (CI's one build) compiles a unit-test harness of every
// library and binary even when it has no tests, so under `cfg(test)` this crate is empty and that harness is free.
#![cfg(not(test))]
#![deny(missing_docs)]

mod cutting_plane;
mod dual_cd;
mod gd;
mod newton;
mod shared;

use std::collections::BTreeMap;
use std::time::Instant;

use ltr_core::{
    Allreduce, Fit, FitContext, FitDistributed, FitReport, Fitted, LinearModel, LtrError, Model,
    Result, SingleProcess, WarmStarts,
};
use ltr_data::{ClickWeighting, Dataset, ExactVec};
use ltr_pairs::{
    query_weights_mu_of, tau_closed_form_sums, tau_from_sums, tau_monte_carlo, LevelWeights,
    Levels, MissingGrade, PairLoss, PairScheme, PairSet, PairwiseObjective,
};

pub use cutting_plane::{cutting_plane, ocas, CuttingPlaneSettings};
use cutting_plane::{cutting_plane_shared, ocas_from};
pub use dual_cd::{dual_cd, DualSettings};
use gd::gradient_descent_shared;
pub use gd::{gradient_descent, GdSettings, StepRule};
pub use newton::{newton_cg, newton_cg_distributed, primal_objective, NewtonSettings};
use shared::SharedObjective;

/// What a solver reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SolveReport {
    /// Final primal objective ½‖w‖² + Σ C_i ℓ_i.
    pub objective: f64,
    /// Primal − dual objective (dual solver only).
    pub duality_gap: Option<f64>,
    /// Outer iterations (Newton steps, dual epochs, GD steps).
    pub iterations: usize,
    /// Inner iterations (CG steps for Newton).
    pub inner_iterations: usize,
    /// Final gradient norm where defined.
    pub gradient_norm: f64,
}

/// The regularisation constant C.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CSetting {
    /// An explicit C.
    Value(f64),
    /// SVMlight's default: 1 / mean ‖x‖² over the training documents.
    SvmLightDefault,
}

/// Which solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Solver {
    /// Primal truncated Newton (squared hinge only).
    Newton,
    /// Dual coordinate descent over explicit pairs.
    DualCd,
    /// Gradient descent (the RSVM-IR-GD algorithm).
    GradientDescent(StepRule),
    /// The 1-slack cutting-plane method of SVMrank (hinge only), over the O(n log n) objective.
    CuttingPlane,
    /// OCAS, the optimized cutting-plane method (hinge only): the same optimum in several times fewer planes.
    Ocas,
}

/// How τ is obtained.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TauSource {
    /// The exact expectation of the simulation (algorithms.md §5.2).
    ClosedForm,
    /// The paper's Monte-Carlo simulation with this many swaps per query and rank pair.
    Simulated {
        /// Swaps per query and rank pair.
        repeats: usize,
    },
}

/// RSVM-IR's cost factors.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Weighting {
    /// Rank-pair weights τ (None: τ ≡ 1).
    pub tau: Option<TauSource>,
    /// Query weights μ.
    pub mu: bool,
    /// Queries lacking a grade in the τ average.
    pub missing: MissingGrade,
    /// Propensity SVM-Rank (Joachims, Swaminathan & Schnabel 2017): weigh each query of a click training set
    /// (`ltr_clicks::click_training_set`) by its clicks over their propensity (or by its clicks alone, the naive
    /// control), normalised to sum to 1 (SVMrank's C/n). `None`: every query counts once.
    pub clicks: Option<ClickWeighting>,
}

/// From this many documents (on one rank) the cutting-plane solvers say that Newton is the faster choice.
const LARGE_FOR_PLANES: usize = 1_000_000;

/// The smallest stopping tolerance accepted (relative: objective decrease, duality gap or gradient norm).
pub const MIN_TOL: f64 = 1e-12;

/// Hyperparameters of RankSVM / RSVM-IR (a validated builder in the linfa style).
#[derive(Debug, Clone, PartialEq)]
pub struct RankSvmParams {
    /// C.
    c: CSetting,
    /// Hinge or squared hinge.
    loss: PairLoss,
    /// Solver.
    solver: Solver,
    /// Stopping tolerance (solver specific; `None` = the solver's default).
    tol: Option<f64>,
    /// Iteration cap (`None` = the solver's default).
    max_iter: Option<usize>,
    /// Newton's inner (CG) tolerance: a fraction of ‖∇f‖ (`None` = [`NewtonSettings`]' 0.1).
    cg_tol: Option<f64>,
    /// Seed (dual pair order).
    seed: u64,
    /// RSVM-IR weighting.
    weighting: Weighting,
    /// Which pairs.
    pairs: PairScheme,
}

impl Default for RankSvmParams {
    fn default() -> Self {
        Self {
            c: CSetting::Value(1.0),
            loss: PairLoss::SquaredHinge,
            solver: Solver::Newton,
            tol: None,
            max_iter: None,
            cg_tol: None,
            seed: 1,
            weighting: Weighting::default(),
            pairs: PairScheme::AllDifferent,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl RankSvmParams {
    /// Set `max_iter`: iteration cap (`None` = the solver's default).
    pub fn max_iter(mut self, max_iter: Option<usize>) -> Self {
        self.max_iter = max_iter;
        self
    }
}

ltr_core::param_guard!(RankSvmParams => RankSvmValidParams);

/// A trained RankSVM.
#[derive(Debug, Clone, PartialEq)]
pub struct SvmFit {
    /// The linear model.
    pub model: LinearModel,
    /// The solver report.
    pub report: SolveReport,
    /// The C actually used.
    pub c: f64,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// A solver's weights as a fit, or an error saying what to `lower` when they diverged.
fn finished(w: Vec<f64>, report: SolveReport, c: f64, t0: Instant, lower: &str) -> Result<SvmFit> {
    if w.iter().any(|x| !x.is_finite()) {
        return Err(LtrError::Training(format!(
            "the solver diverged (non-finite weights); {lower}"
        )));
    }
    Ok(SvmFit {
        model: LinearModel::new(w),
        report,
        c,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The distinct labels of this rank's documents and of every rank's, each ascending.
fn label_values(ds: &Dataset, comm: &dyn Allreduce) -> Result<(Vec<f32>, Vec<f32>)> {
    let mine = Levels::distinct_labels(ds);
    if comm.size() == 1 {
        return Ok((mine.clone(), mine));
    }
    let longest = comm
        .gather_f64(&[mine.len() as f64])?
        .into_iter()
        .fold(0.0, f64::max) as usize;
    let mut padded: Vec<f64> = mine.iter().map(|&v| f64::from(v)).collect();
    padded.resize(longest, f64::NAN);
    let mut all: Vec<f32> = comm
        .gather_f64(&padded)?
        .into_iter()
        .filter(|v| !v.is_nan())
        .map(|v| v as f32)
        .collect();
    all.sort_by(f32::total_cmp);
    all.dedup();
    Ok((mine, all))
}

/// SVMlight's default C: 1 / mean ‖x‖² over documents.
pub fn svmlight_default_c(ds: &Dataset) -> f64 {
    svmlight_default_c_distributed(ds, &SingleProcess)
        .expect("a single process has no other rank whose failure could stop it")
}

/// [`svmlight_default_c`] over the documents of every rank (the norms are summed exactly, so every rank and every
/// split of the documents gives the same C).
pub fn svmlight_default_c_distributed(ds: &Dataset, comm: &dyn Allreduce) -> Result<f64> {
    let mut sums = ExactVec::new(2);
    for i in 0..ds.n_docs() {
        sums.add(0, ds.row(i).squared_norm());
    }
    sums.add(1, ds.n_docs() as f64);
    comm.sum_exact(&mut sums)?;
    let mean = sums.value(0) / sums.value(1).max(1.0);
    Ok(if mean > 0.0 { 1.0 / mean } else { 1.0 })
}

impl Fit for RankSvmValidParams {
    /// Solve with the context's seed; the report carries the solver's iterations, objective and duality gap, and
    /// the C used when it was SVMlight's default.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        // Checked settings with the context's seed (a seed has no range to check).
        let fit = (**self)
            .clone()
            .seed(ctx.seed())
            .solve_warm(train, ctx.warm_starts())?;
        Ok(self.fitted(fit))
    }
}

impl RankSvmParams {
    fn fitted(&self, fit: SvmFit) -> Fitted {
        let mut report = FitReport {
            iterations: Some(fit.report.iterations as u64),
            objective: Some(fit.report.objective),
            duality_gap: fit.report.duality_gap,
            ..Default::default()
        };
        if self.c == CSetting::SvmLightDefault {
            report = report.select("c", fit.c);
        }
        Fitted::new(Model::Linear(fit.model)).with_report(report)
    }
}

impl FitDistributed for RankSvmValidParams {
    /// [`Fit::fit`] on this rank's `shard` of the queries (`solve_distributed`): the
    /// same model and report as `fit` on all the queries.
    fn fit_distributed(
        &self,
        shard: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        // Checked settings with the context's seed (a seed has no range to check).
        let fit = (**self)
            .clone()
            .seed(ctx.seed())
            .solve_distributed_checked(shard, comm)?;
        Ok(self.fitted(fit))
    }
}

impl RankSvmParams {
    /// Set C.
    pub fn c(mut self, c: CSetting) -> Self {
        self.c = c;
        self
    }
    /// Set the loss.
    pub fn loss(mut self, l: PairLoss) -> Self {
        self.loss = l;
        self
    }
    /// Set the solver.
    pub fn solver(mut self, s: Solver) -> Self {
        self.solver = s;
        self
    }
    /// Set the RSVM-IR weighting.
    pub fn weighting(mut self, w: Weighting) -> Self {
        self.weighting = w;
        self
    }
    /// Set the pair scheme.
    pub fn pairs(mut self, p: PairScheme) -> Self {
        self.pairs = p;
        self
    }
    /// Set the tolerance (`None`: the solver's default).
    pub fn tolerance(mut self, t: impl Into<Option<f64>>) -> Self {
        self.tol = t.into();
        self
    }
    /// Set Newton's inner tolerance: each step's conjugate gradients stop once the residual is below this
    /// fraction of ‖∇f‖ (`None`: 0.1, liblinear's value). Looser steps cost fewer Hessian products per Newton
    /// iteration and may need more iterations; the stopping rule on ‖∇f‖ (`tol`) is the same.
    pub fn cg_tolerance(mut self, t: Option<f64>) -> Self {
        self.cg_tol = t;
        self
    }
    /// Set the seed.
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }

    /// Check the combination of settings.
    pub fn validate(&self) -> Result<()> {
        if let CSetting::Value(c) = self.c {
            if !(c > 0.0 && c.is_finite()) {
                return Err(LtrError::param(
                    "c",
                    format!("`{c}` is not a positive number or `default` (SVMlight's rule)"),
                ));
            }
        }
        if self.solver == Solver::Newton && self.loss != PairLoss::SquaredHinge {
            return Err(LtrError::param(
                "solver",
                "the Newton solver needs loss=squared-hinge (use solver=dual or gd for the hinge)",
            ));
        }
        if matches!(self.solver, Solver::CuttingPlane | Solver::Ocas)
            && self.loss != PairLoss::Hinge
        {
            return Err(LtrError::param(
                "solver",
                "the cutting-plane solver needs loss=hinge (use solver=newton or dual for the squared hinge)",
            ));
        }
        if matches!(self.pairs, PairScheme::Sampled { .. }) && self.solver != Solver::DualCd {
            return Err(LtrError::param(
                "pairs",
                "sampled pairs need solver=dual (the other solvers use all pairs implicitly)",
            ));
        }
        if let Some(t) = self.cg_tol {
            if !(t > 0.0 && t < 1.0) {
                return Err(LtrError::param(
                    "cg-tol",
                    format!(
                        "{t} must lie strictly between 0 and 1 (a fraction of the gradient's norm)"
                    ),
                ));
            }
            if self.solver != Solver::Newton {
                return Err(LtrError::param(
                    "cg-tol",
                    "is the Newton solver's inner tolerance; the chosen solver has no conjugate gradients",
                ));
            }
        }
        if let Some(t) = self.tol {
            if !t.is_finite() || t <= 0.0 {
                return Err(LtrError::param("tol", "must be positive"));
            }
            // Objectives and gaps are sums in f64: a relative tolerance below ~1e-12 is never reached, and every
            // solver would run to its iteration cap (fuzzing: tol=1e-36 at C = 421 ran for over ten minutes).
            if t < MIN_TOL {
                return Err(LtrError::param(
                    "tol",
                    format!("{t:e} is below {MIN_TOL:e}, finer than f64 sums resolve; no solver could meet it"),
                ));
            }
        }
        Ok(())
    }

    /// The level-pair weights over `levels` (every rank's labels): the pair scheme's, times τ.
    fn level_weights(
        &self,
        ds: &Dataset,
        levels: &Levels,
        comm: &dyn Allreduce,
    ) -> Result<LevelWeights> {
        let k = levels.count();
        let mut base = match &self.pairs {
            PairScheme::Adjacent => LevelWeights::adjacent(k),
            PairScheme::Grades(s, t) => match (levels.index_of(*s), levels.index_of(*t)) {
                (Some(a), Some(b)) if a > b => LevelWeights::single(k, a, b),
                _ => LevelWeights::zeros(k),
            },
            _ => LevelWeights::uniform(k),
        };
        if let Some(src) = self.weighting.tau {
            let tau = match src {
                TauSource::ClosedForm => {
                    let mut sums = tau_closed_form_sums(levels, ds, self.weighting.missing);
                    comm.sum_exact(&mut sums)?;
                    tau_from_sums(k, &sums)
                }
                TauSource::Simulated { repeats } => {
                    tau_monte_carlo(ds, repeats, self.seed, self.weighting.missing)
                }
            };
            for a in 0..k {
                for b in 0..a {
                    let v = base.get(a, b) * tau.get(a, b);
                    base.set(a, b, v);
                }
            }
        }
        Ok(base)
    }

    /// The settings a distributed solve cannot honour, as the error naming the parameter to change.
    fn refuse_distributed(&self) -> Result<()> {
        let refuse = |param: &str, why: &str| Err(LtrError::param(param, why.to_string()));
        if self.solver == Solver::DualCd {
            return refuse(
                "solver",
                "distributed RankSVM is solved by newton, ocas, cutting-plane or gd; the dual coordinate descent \
                 updates one pair at a time and needs every pair in one process",
            );
        }
        if matches!(self.weighting.tau, Some(TauSource::Simulated { .. })) {
            return refuse(
                "tau",
                "distributed RSVM-IR computes τ in closed form (tau=closed, the default); the simulation draws one \
                 random stream over all the queries in file order",
            );
        }
        if self.weighting.clicks.is_some() {
            return refuse(
                "clicks",
                "click weights are normalised over the whole click set; train propensity-ranksvm in one process",
            );
        }
        Ok(())
    }

    /// Data-parallel training: `shard` holds this rank's whole queries, `comm` connects the ranks, and every rank
    /// returns the model that [`solve`](Self::solve) gives on all the queries together — bit for bit, at any number
    /// of ranks: every sum over queries (the loss, its gradient and Hessian products, the cutting planes, the line
    /// searches, τ and SVMlight's C) is exact, and the rest is computed alike on every rank. Newton, OCAS, the
    /// cutting plane and gradient descent, with RSVM-IR's closed-form τ and μ; not the dual coordinate descent,
    /// simulated τ or click weights.
    pub fn solve_distributed(&self, shard: &Dataset, comm: &dyn Allreduce) -> Result<SvmFit> {
        self.validate()?;
        self.solve_distributed_checked(shard, comm)
    }

    /// [`solve_distributed`](Self::solve_distributed) on settings already checked.
    fn solve_distributed_checked(&self, shard: &Dataset, comm: &dyn Allreduce) -> Result<SvmFit> {
        self.refuse_distributed()?;
        self.solve_on(shard, None, comm)
    }

    fn newton_settings(&self) -> NewtonSettings {
        let mut st = NewtonSettings::default();
        if let Some(t) = self.tol {
            st.tol = t;
        }
        if let Some(m) = self.max_iter {
            st.max_iter = m;
        }
        if let Some(t) = self.cg_tol {
            st.cg_tol = t;
        }
        st
    }

    fn cutting_plane_settings(&self) -> CuttingPlaneSettings {
        let mut st = CuttingPlaneSettings::default();
        if let Some(t) = self.tol {
            st.tol = t;
        }
        if let Some(m) = self.max_iter {
            st.max_iter = m;
        }
        st
    }

    /// Solve on `ds` with this struct's seed, returning the solver's own report (the [`Fit`] impl wraps this).
    pub fn solve(&self, ds: &Dataset) -> Result<SvmFit> {
        self.validate()?;
        self.solve_warm(ds, None)
    }

    /// [`solve`](Self::solve) on settings already checked, keeping OCAS's planes in `warm` for the next C of a grid
    /// on the same data and settings (the other solvers start cold: their reproductions stay bit for bit).
    fn solve_warm(&self, ds: &Dataset, warm: Option<&WarmStarts>) -> Result<SvmFit> {
        self.solve_on(ds, warm, &SingleProcess)
    }

    /// The one solve: `ds` is this rank's share of the queries (all of them with [`SingleProcess`]).
    fn solve_on(
        &self,
        ds: &Dataset,
        warm: Option<&WarmStarts>,
        comm: &dyn Allreduce,
    ) -> Result<SvmFit> {
        let t0 = Instant::now();
        let c = match self.c {
            CSetting::Value(c) => c,
            CSetting::SvmLightDefault => svmlight_default_c_distributed(ds, comm)?,
        };
        // Grades, τ and μ are statistics of all the queries: the levels are every rank's labels, and a shard's
        // objective gets the weights of the labels it has.
        let (mine, all) = label_values(ds, comm)?;
        let levels = Levels::with_values(ds, all);
        let lw = self.level_weights(ds, &levels, comm)?;
        let local_lw = lw.restricted(&levels.values, &mine);
        let mu = if self.weighting.mu {
            let most = ltr_pairs::count_pairs_per_query(ds)
                .into_iter()
                .max()
                .unwrap_or(0);
            let all = comm.gather_f64(&[most as f64])?;
            let most = all.into_iter().fold(0.0, f64::max) as u64;
            Some(query_weights_mu_of(ds, most))
        } else {
            None
        };
        let clicks = match self.weighting.clicks {
            Some(w) => Some(ds.click_weights(w).ok_or_else(|| {
                LtrError::Training(
                    "click weighting needs a click training set (`ltr train --clicks LOG`): the training data has \
                     no query weights or propensities"
                        .into(),
                )
            })?),
            None => None,
        };
        let mu = match (mu, clicks) {
            (Some(m), Some(c)) => Some(m.iter().zip(&c).map(|(a, b)| a * b).collect()),
            (m, c) => m.or(c),
        };
        // The O(n log n) objective with RSVM-IR's weights, for the solvers that never enumerate pairs.
        let objective = |loss: PairLoss| {
            let obj = PairwiseObjective::new(ds, loss).with_level_weights(local_lw.clone());
            match &mu {
                Some(m) => obj.with_query_weights(m.clone()),
                None => obj,
            }
        };
        if matches!(self.solver, Solver::Ocas | Solver::CuttingPlane)
            && ds.n_docs() >= LARGE_FOR_PLANES
        {
            // Measured on 3.77 M generated web documents (BENCHMARKS.md): about 4 s a plane on 2 cores, the
            // default gap not reached in 27 minutes; Newton on the same weighting took 39 s.
            tracing::info!(
                "the cutting-plane solvers sort every query for each plane and each line-search probe: on {} \
                 documents expect many minutes; solver=newton (squared hinge, the same pair weights) is far faster \
                 at this size, and max-iter bounds the planes",
                ds.n_docs()
            );
        }
        let (w, report) = match self.solver {
            Solver::Newton => {
                let obj = objective(PairLoss::SquaredHinge);
                newton_cg_distributed(&obj, c, None, &self.newton_settings(), comm)?
            }
            Solver::CuttingPlane => {
                let obj = objective(PairLoss::Hinge);
                let shared = SharedObjective::new(&obj, comm);
                cutting_plane_shared(&shared, c, &self.cutting_plane_settings())?
            }
            Solver::Ocas => {
                let obj = objective(PairLoss::Hinge);
                let shared = SharedObjective::new(&obj, comm);
                // Everything but C must match: the same data (by address, within one grid) and settings.
                let key = format!(
                    "ocas {:p} {:?}",
                    ds,
                    Self {
                        c: CSetting::Value(0.0),
                        ..self.clone()
                    }
                );
                let start = warm.and_then(|w| w.take(&key));
                let (w, report, state) =
                    ocas_from(&shared, c, &self.cutting_plane_settings(), start)?;
                if let Some(warm) = warm {
                    warm.put(&key, state);
                }
                (w, report)
            }
            Solver::GradientDescent(step) => {
                let obj = objective(self.loss);
                let shared = SharedObjective::new(&obj, comm);
                let mut st = GdSettings {
                    step,
                    ..Default::default()
                };
                if let Some(t) = self.tol {
                    st.tol = t;
                }
                if let Some(m) = self.max_iter {
                    st.max_iter = m;
                }
                let (w, mut r) = gradient_descent_shared(&shared, 1.0 / (2.0 * c), &st)?;
                r.objective *= c; // report in the C-form ½‖w‖² + C·loss
                (w, r)
            }
            Solver::DualCd => {
                let scheme = match &self.pairs {
                    PairScheme::Sampled { .. } | PairScheme::Grades(..) | PairScheme::Adjacent => {
                        self.pairs.clone()
                    }
                    PairScheme::AllDifferent => PairScheme::AllDifferent,
                };
                let pairs = PairSet::build(ds, &scheme);
                let qof = pairs.query_of_pairs();
                let costs: Vec<f64> = pairs
                    .pairs
                    .iter()
                    .zip(&qof)
                    .map(|(p, &q)| {
                        let (a, b) = (
                            levels.of_doc[p.hi as usize] as usize,
                            levels.of_doc[p.lo as usize] as usize,
                        );
                        c * lw.get(a, b) * mu.as_ref().map_or(1.0, |m| m[q as usize])
                    })
                    .collect();
                let mut st = DualSettings {
                    seed: self.seed,
                    ..Default::default()
                };
                if let Some(t) = self.tol {
                    st.tol = t;
                }
                if let Some(m) = self.max_iter {
                    st.max_epochs = m;
                }
                dual_cd(ds, &pairs, &costs, self.loss, &st)
            }
        };
        let lower = match self.solver {
            Solver::Newton => "lower C",
            _ => "lower C or the step size",
        };
        finished(w, report, c, t0, lower)
    }

    /// The effective settings as strings (for the model file).
    pub fn describe(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        m.insert(
            "c".into(),
            match self.c {
                CSetting::Value(c) => c.to_string(),
                CSetting::SvmLightDefault => "svmlight-default".into(),
            },
        );
        m.insert("loss".into(), format!("{:?}", self.loss));
        m.insert("solver".into(), format!("{:?}", self.solver));
        m.insert("tau".into(), format!("{:?}", self.weighting.tau));
        m.insert("mu".into(), self.weighting.mu.to_string());
        m
    }
}
