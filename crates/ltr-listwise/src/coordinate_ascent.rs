//! Coordinate Ascent (Metzler & Croft 2007, "Linear feature-based models for information retrieval"), RankLib's
//! `-ranker 4`: a linear model whose weights are improved one at a time to maximise the IR measure itself.
//! Each restart starts from uniform weights, visits the features in a seeded random order per sweep, and stops when
//! a sweep gains less than the tolerance; weights are L1-normalised after every sweep (the measure is
//! scale-invariant). The best restart is kept on validation data (training measure without).
//!
//! The step along one coordinate is an **exact line search** (`line_search/`): the optimum over the whole
//! line, not the best of RankLib's 2 × 25 geometric trial steps. RankLib's trial steps stay available
//! (`LineSearch::RankLibSteps`) for comparison.

use std::sync::atomic::{AtomicU64, Ordering};

use ltr_core::{
    Allreduce, BestSoFar, Fit, FitContext, FitDistributed, FitReport, Fitted, LinearModel,
    LtrError, Model, Result, SingleProcess,
};
use ltr_data::Dataset;
use ltr_metrics::{Convention, Metric};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;

use crate::line_search::{Choice, Exchanged, LineExchange, LineScratch, Problem};
use crate::measure::ListMeasure;

/// How a coordinate's new weight is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineSearch {
    /// The optimum of the measure over the whole line (every crossing of two documents examined).
    #[default]
    Exact,
    /// RankLib's search: from the current weight, steps growing geometrically (`step_base`, `step_scale`,
    /// `iterations` of them) in one direction, then the other if nothing improved; keep the best seen.
    RankLibSteps,
}

/// Coordinate Ascent settings (RankLib's names in parentheses).
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinateAscentParams {
    restarts: usize,
    max_sweeps: usize,
    tolerance: f64,
    l2: f64,
    non_negative: bool,
    measure: Option<ListMeasure>,
    line_search: LineSearch,
    exchange: LineExchange,
    iterations: usize,
    step_base: f64,
    step_scale: f64,
}

impl Default for CoordinateAscentParams {
    fn default() -> Self {
        Self {
            restarts: 5,
            max_sweeps: 100,
            tolerance: 0.001,
            l2: 0.0,
            non_negative: false,
            measure: None,
            line_search: LineSearch::Exact,
            exchange: LineExchange::Auto,
            iterations: 25,
            step_base: 0.05,
            step_scale: 2.0,
        }
    }
}

/// From this many training documents one process runs its restarts one after another (see `fit_distributed`).
const RESTARTS_IN_TURN_FROM: usize = 1_000_000;

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl CoordinateAscentParams {
    /// Random restarts (`-r`, 5): each starts from uniform weights with its own feature order.
    pub fn restarts(mut self, restarts: usize) -> Self {
        self.restarts = restarts;
        self
    }
    /// Sweeps over all features at most per restart (RankLib has no cap; 100 here, with a warning when hit).
    pub fn max_sweeps(mut self, max_sweeps: usize) -> Self {
        self.max_sweeps = max_sweeps;
        self
    }
    /// A restart ends when a sweep gains less than this (`-tolerance`, 0.001).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }
    /// λ of the penalty λ·‖w − w₀‖² towards the uniform start (`-reg`; 0 = none).
    pub fn l2(mut self, l2: f64) -> Self {
        self.l2 = l2;
        self
    }
    /// Keep every weight ≥ 0.
    pub fn non_negative(mut self, non_negative: bool) -> Self {
        self.non_negative = non_negative;
        self
    }
    /// The measure to optimise (`-metric2t`); `None`: the fit context's measure (`--metric` under
    /// `--convention`), NDCG@10 under `standard` when the context has no named measure.
    pub fn measure(mut self, measure: Option<ListMeasure>) -> Self {
        self.measure = measure;
        self
    }
    /// Exact line search (default) or RankLib's trial steps.
    pub fn line_search(mut self, line_search: LineSearch) -> Self {
        self.line_search = line_search;
        self
    }
    /// How the ranks of a distributed run agree on each line of the exact search ([`LineExchange`]; one process
    /// exchanges nothing): `Auto` gathers every crossing point (the single-process model bit for bit) up to 2²⁰
    /// points a line and exchanges bucket statistics above.
    pub fn exchange(mut self, exchange: LineExchange) -> Self {
        self.exchange = exchange;
        self
    }
    /// Trial steps per direction of [`LineSearch::RankLibSteps`] (`-i`, 25).
    pub fn iterations(mut self, iterations: usize) -> Self {
        self.iterations = iterations;
        self
    }
    /// First trial step relative to the weight, [`LineSearch::RankLibSteps`] (0.05).
    pub fn step_base(mut self, step_base: f64) -> Self {
        self.step_base = step_base;
        self
    }
    /// Growth of the trial steps, [`LineSearch::RankLibSteps`] (2).
    pub fn step_scale(mut self, step_scale: f64) -> Self {
        self.step_scale = step_scale;
        self
    }
}

impl CoordinateAscentParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        let bad = |name: &str, why: &str| Err(LtrError::param(name, why));
        if self.restarts == 0 || self.max_sweeps == 0 || self.iterations == 0 {
            return bad("restarts/max-sweeps/iterations", "need at least 1");
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return bad("tolerance", "need a finite number >= 0");
        }
        if !(self.l2 >= 0.0 && self.l2.is_finite()) {
            return bad("l2", "need a finite number >= 0");
        }
        if !(self.step_base > 0.0
            && self.step_base.is_finite()
            && self.step_scale > 1.0
            && self.step_scale.is_finite())
        {
            return bad(
                "step-base/step-scale",
                "need step-base > 0 and step-scale > 1",
            );
        }
        Ok(())
    }
}

ltr_core::param_guard!(CoordinateAscentParams => CoordinateAscentValidParams);

/// The measure a learner optimises: the one given, else the context's named measure, else NDCG@10 (standard).
pub(crate) fn resolve_measure(
    given: Option<ListMeasure>,
    ctx: &FitContext<'_>,
) -> Result<ListMeasure> {
    if let Some(m) = given {
        return Ok(m);
    }
    let (metric, convention) = match ctx.measure_names() {
        Some((m, c)) => (
            m.parse::<Metric>()
                .map_err(|e| LtrError::param("metric", e.to_string()))?,
            c.parse::<Convention>()
                .map_err(|e| LtrError::param("convention", e))?,
        ),
        None => (Metric::Ndcg(Some(10)), Convention::STANDARD),
    };
    ListMeasure::new(metric, convention)
}

/// What one restart ended with.
#[derive(Debug, Clone)]
struct Restart {
    weights: Vec<f64>,
    train: f64,
    sweeps: usize,
    capped: bool,
    /// What the line searches exchanged across ranks (none in one process).
    exchanged: Exchanged,
}

impl Fit for CoordinateAscentValidParams {
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        self.fit_distributed(train, ctx, &SingleProcess)
    }
}

impl CoordinateAscentParams {
    fn restart(
        &self,
        p: &Problem<'_>,
        constant: &[bool],
        seed: u64,
        r: usize,
        comm: &dyn Allreduce,
    ) -> Result<Restart> {
        let data = p.data();
        let d = data.n_features();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
            seed ^ (r as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let start = vec![1.0 / d as f64; d];
        let mut w = start.clone();
        let mut scores = data.scores(&w);
        let penalty = |w: &[f64]| -> f64 {
            if self.l2 == 0.0 {
                0.0
            } else {
                self.l2
                    * w.iter()
                        .zip(&start)
                        .map(|(a, b)| (a - b).powi(2))
                        .sum::<f64>()
            }
        };
        let mut current = p.per_query_values(&scores);
        let mut measure = p.mean_over_ranks(&current, comm)?;
        let mut objective = measure - penalty(&w);
        let mut order: Vec<usize> = (0..d).collect();
        let mut sweeps = 0;
        let mut capped = true;
        let mut trial = scores.clone();
        let mut trial_values = Vec::with_capacity(current.len());
        let mut scratch = LineScratch::default();
        while sweeps < self.max_sweeps {
            sweeps += 1;
            let before = objective;
            order.shuffle(&mut rng);
            for &j in &order {
                if constant[j] {
                    continue;
                }
                // The penalty of every other coordinate (constant along this line).
                let pen_others = (measure - objective) - self.l2 * (w[j] - start[j]).powi(2);
                let candidate = match self.line_search {
                    LineSearch::Exact => {
                        let unit = w.iter().map(|v| v.abs()).sum::<f64>() / d as f64;
                        let choice = Choice {
                            current: w[j],
                            non_negative: self.non_negative,
                            l2: self.l2,
                            centre: start[j],
                            unit: unit.max(1e-12),
                        };
                        p.line_over_ranks(
                            &scores,
                            &current,
                            j,
                            w[j],
                            Some(&choice),
                            self.exchange,
                            &mut scratch,
                            comm,
                        )?
                        .best(&choice)
                        .map(|(t, _, _)| t)
                    }
                    LineSearch::RankLibSteps => self.trial_steps(
                        p,
                        &scores,
                        &mut trial,
                        j,
                        (w[j], start[j]),
                        pen_others,
                        objective,
                        comm,
                    )?,
                };
                let Some(t) = candidate else { continue };
                if t == w[j] {
                    continue;
                }
                // Verify on the real ranking (robust to rounding in the crossing points), then take the step.
                p.step_scores(j, t - w[j], &scores, &mut trial);
                p.per_query_values_into(&trial, &mut trial_values);
                let m = p.mean_over_ranks(&trial_values, comm)?;
                let o = m - pen_others - self.l2 * (t - start[j]).powi(2);
                if o > objective + 1e-12 {
                    w[j] = t;
                    std::mem::swap(&mut scores, &mut trial);
                    std::mem::swap(&mut current, &mut trial_values);
                    measure = m;
                    objective = o;
                }
            }
            let l1: f64 = w.iter().map(|v| v.abs()).sum();
            if l1 > 0.0 && l1.is_finite() {
                for v in &mut w {
                    *v /= l1;
                }
                scores = data.scores(&w);
                p.per_query_values_into(&scores, &mut current);
                measure = p.mean_over_ranks(&current, comm)?;
                objective = measure - penalty(&w);
            }
            tracing::debug!(
                "coordinate ascent restart {r}, sweep {sweeps}: training measure {measure:.6}"
            );
            if objective - before < self.tolerance {
                capped = false;
                break;
            }
        }
        Ok(Restart {
            weights: w,
            train: measure,
            sweeps,
            capped,
            exchanged: scratch.exchanged,
        })
    }

    /// RankLib's trial steps along coordinate `j` from its weight `wj` (penalty centre `centre`); `pen_others` is
    /// the other coordinates' penalty. Returns the best trial point if it beats the current objective.
    #[allow(clippy::too_many_arguments)]
    fn trial_steps(
        &self,
        p: &Problem<'_>,
        scores: &[f64],
        trial: &mut [f64],
        j: usize,
        (wj, centre): (f64, f64),
        pen_others: f64,
        current: f64,
        comm: &dyn Allreduce,
    ) -> Result<Option<f64>> {
        let mut best = (current, None);
        for dir in [1.0, -1.0] {
            let mut step: f64 = 0.001 * dir;
            if wj != 0.0 && step.abs() > 0.5 * wj.abs() {
                step = self.step_base * wj.abs() * dir;
            }
            let mut total = step;
            let mut improved = false;
            for _ in 0..self.iterations {
                let t = wj + total;
                if !(self.non_negative && t < 0.0) {
                    p.step_scores(j, total, scores, trial);
                    let value = p.mean_over_ranks(&p.per_query_values(trial), comm)?;
                    let o = value - pen_others - self.l2 * (t - centre).powi(2);
                    if o > best.0 {
                        best = (o, Some(t));
                        improved = true;
                    }
                }
                step *= self.step_scale;
                total += step;
            }
            if improved {
                break;
            }
        }
        Ok(best.1)
    }
}

impl FitDistributed for CoordinateAscentValidParams {
    /// [`Fit::fit`] with the queries spread over the ranks of `comm` (`train` holds this rank's queries). Every
    /// line search gathers the ranks' per-query values and crossing points in rank order, so every rank takes the
    /// same steps; with each rank holding a consecutive run of the queries, in rank order, the model is the
    /// single-process model bit for bit. Restarts run one after another (each is a sequence of collectives), the
    /// best kept by its training measure. Communication per line search: the crossing points of every rank, 16
    /// bytes each (ARCHITECTURE.md).
    fn fit_distributed(
        &self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        if comm.size() > 1 && ctx.validation().is_some() {
            return Err(LtrError::param(
                "validate",
                "distributed Coordinate Ascent keeps the restart best on the training measure; drop --validate",
            ));
        }
        let measure = resolve_measure(self.measure, ctx)?;
        let d = train.n_features();
        if d == 0 || train.n_docs() == 0 {
            return Err(LtrError::Training(
                "coordinate ascent needs at least one feature and one document".into(),
            ));
        }
        let side_by_side = comm.size() == 1 && train.n_docs() < RESTARTS_IN_TURN_FROM;
        let problem = Problem::new(train, &measure)?;
        // Restarts side by side, at least one a thread, keep the threads busy: each line search and ranking then
        // runs on its restart's thread instead of being split into rayon tasks (the same model either way).
        let problem = if side_by_side && self.restarts >= rayon::current_num_threads() {
            problem.sequential()
        } else {
            problem
        };
        let constant = problem.constant_features(comm)?;
        let done = AtomicU64::new(0);
        ctx.progress().begin("restarts", Some(self.restarts as u64));
        let run = |r: usize, comm: &dyn Allreduce| -> Result<Restart> {
            let out = self.restart(&problem, &constant, ctx.seed(), r, comm)?;
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            ctx.progress().advance(
                n,
                &format!(
                    "restart {r}: training {} {:.4}",
                    measure.metric(),
                    out.train
                ),
            );
            Ok(out)
        };
        // Restarts are independent and seeded by their index: parallel on one process, and the same at any thread
        // count; over ranks they take turns, so that every rank makes the same collectives in the same order. From
        // a million documents they take turns on one process too: each line search is parallel over the queries
        // already, and two restarts' working sets side by side (scores, trial scores, a line's crossing points —
        // about 200 bytes a document) took 3.77 M documents past 1.3× the data (2.76 GiB for 2.08, still rising
        // after 40 minutes), where one restart at a time peaks at 2.42 GiB.
        let restarts: Vec<Restart> = if side_by_side {
            (0..self.restarts)
                .into_par_iter()
                .map(|r| run(r, &SingleProcess))
                .collect::<Result<_>>()?
        } else {
            (0..self.restarts)
                .map(|r| run(r, comm))
                .collect::<Result<_>>()?
        };
        ctx.progress().end();
        let mut best = BestSoFar::new();
        let mut per_restart = Vec::new();
        for (r, out) in restarts.iter().enumerate() {
            let model = LinearModel::new(out.weights.clone());
            let judged = match ctx.validate(&model)? {
                Some(v) => v,
                None => out.train,
            };
            per_restart.push(serde_json::json!({
                "restart": r, "train": out.train, "validation": ctx.validation().map(|_| judged),
                "sweeps": out.sweeps,
                "lines_exchanged": out.exchanged.lines, "lines_by_buckets": out.exchanged.by_buckets,
                "points_gathered": out.exchanged.points,
            }));
            best.offer(judged, r);
        }
        let kept = best
            .into_best()
            .ok_or_else(|| LtrError::Training("no restart produced a finite measure".into()))?;
        let chosen = &restarts[kept.item];
        if chosen.capped {
            tracing::warn!(
                "coordinate ascent stopped at max-sweeps = {} before a sweep gained less than the tolerance {}",
                self.max_sweeps,
                self.tolerance
            );
        }
        let report = FitReport {
            iterations: Some(restarts.iter().map(|r| r.sweeps as u64).sum()),
            objective: Some(chosen.train),
            validation: ctx.validation().map(|_| kept.score),
            ..FitReport::default()
        }
        .select("restart", kept.item);
        Ok(
            Fitted::new(Model::Linear(LinearModel::new(chosen.weights.clone())))
                .with_report(report)
                .with_diagnostics(serde_json::json!({
                    "measure": measure.metric().to_string(),
                    "convention": measure.convention().name,
                    "line_search": format!("{:?}", self.line_search),
                    "restarts": per_restart,
                })),
        )
    }
}
