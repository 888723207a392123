//! The Multiple Hyperplane Ranker (Qin et al., SIGIR 2007 — seed 001): one linear ranker per pair of relevance
//! grades (s, t), each trained only on the document pairs with exactly those labels, combined by rank aggregation.

use std::time::Instant;

use ltr_core::{
    aggregate, positions, Aggregation, Fit, FitContext, Fitted, LinearModel, LtrError, Measure,
    Model, RankAggregate, Result, Scorer,
};
use ltr_data::Dataset;
use ltr_metrics::pair_counts;
use ltr_pairs::{Levels, PairScheme};
use ltr_svm::{CSetting, RankSvmParams};
use rayon::prelude::*;
use serde::Serialize;

/// Which grade pairs get a base ranker.
#[derive(Debug, Clone, PartialEq)]
pub enum GradePairs {
    /// All K(K−1)/2 pairs (the paper).
    All,
    /// Adjacent grades only (K−1 rankers).
    Adjacent,
    /// A user-chosen list of (higher, lower) labels.
    Subset(Vec<(f32, f32)>),
}

/// Where weighted-Borda weights are tuned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuneOn {
    /// The whole training set (the paper).
    Train,
    /// The validation set.
    Validation,
}

/// The base learner of each hyperplane.
#[derive(Debug, Clone, PartialEq)]
pub enum BaseLearner {
    /// RankSVM with these settings (its pair scheme is replaced by the grade pair).
    RankSvm(RankSvmParams),
}

/// MHR hyperparameters.
#[derive(Debug, Clone, PartialEq)]
pub struct MhrParams {
    /// Grade pairs.
    pairs: GradePairs,
    /// Base learner.
    base: BaseLearner,
    /// Aggregation; `Borda` with `weighted = true` is MHR-WBC.
    aggregation: Aggregation,
    /// Tune the list weights (weighted BordaCount / weighted median / weighted MC4).
    weighted: bool,
    /// Where to tune.
    tune_on: TuneOn,
    /// Simplex grid step for up to 3 rankers (coordinate search above that). The tuning maximises the fit
    /// context's measure.
    grid_step: f64,
    /// Also train the single RankSVM for the diagnostics (cosines, order error rates, time).
    diagnostics: bool,
}

impl Default for MhrParams {
    fn default() -> Self {
        Self {
            pairs: GradePairs::All,
            base: BaseLearner::RankSvm(RankSvmParams::default().c(CSetting::SvmLightDefault)),
            aggregation: Aggregation::Borda,
            weighted: false,
            tune_on: TuneOn::Train,
            grid_step: 0.05,
            diagnostics: true,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl MhrParams {
    /// Set `pairs`: grade pairs.
    pub fn pairs(mut self, pairs: GradePairs) -> Self {
        self.pairs = pairs;
        self
    }
    /// Set `base`: base learner.
    pub fn base(mut self, base: BaseLearner) -> Self {
        self.base = base;
        self
    }
    /// Set `aggregation`: aggregation; `Borda` with `weighted = true` is MHR-WBC.
    pub fn aggregation(mut self, aggregation: Aggregation) -> Self {
        self.aggregation = aggregation;
        self
    }
    /// Set `weighted`: tune the list weights (weighted BordaCount / weighted median / weighted MC4).
    pub fn weighted(mut self, weighted: bool) -> Self {
        self.weighted = weighted;
        self
    }
    /// Set `tune_on`: where to tune.
    pub fn tune_on(mut self, tune_on: TuneOn) -> Self {
        self.tune_on = tune_on;
        self
    }
    /// Set `grid_step`: simplex grid step for up to 3 rankers (coordinate search above that). The tuning maximises the fit
    pub fn grid_step(mut self, grid_step: f64) -> Self {
        self.grid_step = grid_step;
        self
    }
    /// Set `diagnostics`: also train the single RankSVM for the diagnostics (cosines, order error rates, time).
    pub fn diagnostics(mut self, diagnostics: bool) -> Self {
        self.diagnostics = diagnostics;
        self
    }
}

impl MhrParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if !(self.grid_step > 0.0 && self.grid_step <= 1.0) {
            return Err(LtrError::param("grid-step", "must be in (0, 1]"));
        }
        let BaseLearner::RankSvm(base) = &self.base;
        base.validate()?;
        Ok(())
    }
}

ltr_core::param_guard!(MhrParams => MhrValidParams);

/// The paper's diagnostics (seed 001 Tables 5–7).
#[derive(Debug, Clone, Serialize)]
pub struct MhrDiagnostics {
    /// Grade pair (higher, lower) of each base ranker.
    pub grade_pairs: Vec<(f32, f32)>,
    /// Training seconds of each base ranker.
    pub seconds: Vec<f64>,
    /// Training seconds of the single RankSVM.
    pub ranksvm_seconds: f64,
    /// cos(w_a, w_b) for every pair of base rankers, as (a, b, cosine).
    pub cosines: Vec<(usize, usize, f64)>,
    /// cos(w, w_k) with the single RankSVM w.
    pub cosine_with_ranksvm: Vec<f64>,
    /// Order error rate on the training set per grade pair: (pair, MHR with its own hyperplane, single RankSVM).
    pub order_error: Vec<((f32, f32), f64, f64)>,
    /// List weights after tuning.
    pub weights: Vec<f64>,
}

/// A trained MHR.
#[derive(Debug, Clone)]
pub struct MhrFit {
    /// The aggregate model.
    pub model: RankAggregate,
    /// Diagnostics (the single-RankSVM parts are empty when `diagnostics` is off).
    pub diagnostics: MhrDiagnostics,
}

/// Per-query BordaCount points of every base ranker, for fast weight tuning: points[k][doc].
fn borda_points(members: &[LinearModel], ds: &Dataset) -> Vec<Vec<f64>> {
    members
        .par_iter()
        .map(|m| {
            let s = m.score_dataset(ds);
            let mut pts = vec![0.0; ds.n_docs()];
            for q in ds.queries() {
                let r = q.rows();
                let pos = positions(&s[r.clone()]);
                for (i, p) in pos.iter().enumerate() {
                    pts[r.start + i] = (q.len() - 1 - p) as f64;
                }
            }
            pts
        })
        .collect()
}

fn tune_value(
    points: &[Vec<f64>],
    weights: &[f64],
    ds: &Dataset,
    measure: &dyn Measure,
    method: Aggregation,
) -> f64 {
    let scores: Vec<f64> = if matches!(method, Aggregation::Borda | Aggregation::BordaFuse) {
        (0..ds.n_docs())
            .map(|d| points.iter().zip(weights).map(|(p, w)| w * p[d]).sum())
            .collect()
    } else {
        let mut out = vec![0.0; ds.n_docs()];
        for q in ds.queries() {
            let r = q.rows();
            let lists: Vec<Vec<f64>> = points.iter().map(|p| p[r.clone()].to_vec()).collect();
            aggregate(&lists, weights, method, &mut out[r]);
        }
        out
    };
    measure.measure(ds, &scores).unwrap_or(f64::NEG_INFINITY)
}

/// Maximise the metric over non-negative weights summing to 1: the full simplex grid with step `h` for up to three
/// lists, else coordinate search (each coordinate tried at 0, ½×, 2× and the grid values, renormalised, until no
/// improvement). Ties keep the earlier candidate, starting from uniform weights.
pub fn tune_weights(
    points: &[Vec<f64>],
    ds: &Dataset,
    measure: &dyn Measure,
    method: Aggregation,
    h: f64,
) -> Vec<f64> {
    let k = points.len();
    let uniform = vec![1.0 / k as f64; k];
    let mut best = (tune_value(points, &uniform, ds, measure, method), uniform);
    if k <= 3 {
        let steps = (1.0 / h).round() as usize;
        let mut cands = Vec::new();
        match k {
            1 => {}
            2 => (0..=steps).for_each(|a| {
                cands.push(vec![
                    a as f64 / steps as f64,
                    (steps - a) as f64 / steps as f64,
                ])
            }),
            _ => {
                for a in 0..=steps {
                    for b in 0..=steps - a {
                        let c = steps - a - b;
                        cands.push(vec![
                            a as f64 / steps as f64,
                            b as f64 / steps as f64,
                            c as f64 / steps as f64,
                        ]);
                    }
                }
            }
        }
        let vals: Vec<f64> = cands
            .par_iter()
            .map(|w| tune_value(points, w, ds, measure, method))
            .collect();
        for (w, v) in cands.into_iter().zip(vals) {
            if v > best.0 {
                best = (v, w);
            }
        }
        return best.1;
    }
    loop {
        let mut improved = false;
        for j in 0..k {
            for f in [0.0, 0.5, 2.0, 4.0] {
                let mut w = best.1.clone();
                w[j] = if f == 0.0 { 0.0 } else { (w[j] * f).max(h) };
                let s: f64 = w.iter().sum();
                if s <= 0.0 {
                    continue;
                }
                w.iter_mut().for_each(|x| *x /= s);
                let v = tune_value(points, &w, ds, measure, method);
                if v > best.0 + 1e-12 {
                    best = (v, w);
                    improved = true;
                }
            }
        }
        if !improved {
            return best.1;
        }
    }
}

impl MhrParams {
    fn grade_pairs(&self, ds: &Dataset) -> Result<Vec<(f32, f32)>> {
        let levels = Levels::new(ds).values;
        let k = levels.len();
        if k < 2 {
            return Err(LtrError::Training(
                "MHR needs at least two relevance grades in the training data".into(),
            ));
        }
        Ok(match &self.pairs {
            GradePairs::All => {
                let mut v = Vec::new();
                for a in (0..k).rev() {
                    for b in (0..a).rev() {
                        v.push((levels[a], levels[b]));
                    }
                }
                v
            }
            GradePairs::Adjacent => (1..k).rev().map(|a| (levels[a], levels[a - 1])).collect(),
            GradePairs::Subset(s) => {
                for &(a, b) in s {
                    if a <= b || !levels.contains(&a) || !levels.contains(&b) {
                        return Err(LtrError::param(
                            "pairs",
                            format!(
                                "grade pair ({a},{b}) must be two grades of the data, higher first"
                            ),
                        ));
                    }
                }
                s.clone()
            }
        })
    }

    /// Train the base rankers (in parallel), tune the weights by the context's measure and collect the
    /// diagnostics (the [`Fit`] impl wraps this).
    pub fn train(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<MhrFit> {
        self.validate()?;
        let validation = ctx.validation();
        let gp = self.grade_pairs(train)?;
        let BaseLearner::RankSvm(base) = &self.base;
        let fits: Vec<Result<(LinearModel, f64)>> = gp
            .par_iter()
            .map(|&(s, t)| {
                let t0 = Instant::now();
                let f = base
                    .clone()
                    .seed(ctx.seed())
                    .pairs(PairScheme::Grades(s, t))
                    .solve(train)?;
                Ok((f.model, t0.elapsed().as_secs_f64()))
            })
            .collect();
        let mut members = Vec::with_capacity(gp.len());
        let mut seconds = Vec::with_capacity(gp.len());
        for f in fits {
            let (m, s) = f?;
            members.push(m);
            seconds.push(s);
        }
        let weights = if self.weighted && members.len() > 1 {
            let tune_ds = match (self.tune_on, validation) {
                (TuneOn::Validation, Some(v)) => v,
                (TuneOn::Validation, None) => {
                    return Err(LtrError::param("tune-on", "validation needs --validate"))
                }
                _ => train,
            };
            let points = borda_points(&members, tune_ds);
            let measure = |d: &Dataset, s: &[f64]| ctx.measure(d, s);
            tune_weights(&points, tune_ds, &measure, self.aggregation, self.grid_step)
        } else {
            vec![1.0; members.len()]
        };
        let mut diag = MhrDiagnostics {
            grade_pairs: gp.clone(),
            seconds,
            ranksvm_seconds: 0.0,
            cosines: Vec::new(),
            cosine_with_ranksvm: Vec::new(),
            order_error: Vec::new(),
            weights: weights.clone(),
        };
        for a in 0..members.len() {
            for b in a + 1..members.len() {
                diag.cosines.push((a, b, members[a].cosine(&members[b])));
            }
        }
        if self.diagnostics {
            let t0 = Instant::now();
            let single = base
                .clone()
                .seed(ctx.seed())
                .pairs(PairScheme::AllDifferent)
                .solve(train)?
                .model;
            diag.ranksvm_seconds = t0.elapsed().as_secs_f64();
            diag.cosine_with_ranksvm = members.iter().map(|m| single.cosine(m)).collect();
            let s_single = single.score_dataset(train);
            for (k, &(s, t)) in gp.iter().enumerate() {
                let s_own = members[k].score_dataset(train);
                let (mut own, mut one) = (
                    ltr_metrics::PairCounts::default(),
                    ltr_metrics::PairCounts::default(),
                );
                for q in train.queries() {
                    let r = q.rows();
                    let st = Some((s as u8, t as u8));
                    let a = pair_counts(q.labels(), &s_own[r.clone()], st);
                    let b = pair_counts(q.labels(), &s_single[r], st);
                    own.wrong += a.wrong + a.tied;
                    own.total += a.total;
                    one.wrong += b.wrong + b.tied;
                    one.total += b.total;
                }
                let rate = |p: ltr_metrics::PairCounts| {
                    if p.total > 0.0 {
                        p.wrong / p.total
                    } else {
                        0.0
                    }
                };
                diag.order_error.push(((s, t), rate(own), rate(one)));
            }
        }
        Ok(MhrFit {
            model: RankAggregate {
                members,
                weights,
                method: self.aggregation,
            },
            diagnostics: diag,
        })
    }
}

impl Fit for MhrValidParams {
    /// [`MhrParams::train`]; the diagnostics (grade pairs, cosines, order error rates, weights) go with the model.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let fit = self.train(train, ctx)?;
        let diagnostics = serde_json::to_value(&fit.diagnostics)
            .map_err(|e| LtrError::Training(format!("MHR diagnostics: {e}")))?;
        Ok(Fitted::new(Model::Aggregate(fit.model)).with_diagnostics(diagnostics))
    }
}
