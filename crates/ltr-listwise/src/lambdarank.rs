//! Linear LambdaRank (Burges 2010, "From RankNet to LambdaRank to LambdaMART: An Overview"): the RankNet
//! gradient of every pair, weighted by |ΔNDCG@k| of swapping the pair in the current ranking — the objective
//! LightGBM's `lambdarank` boosts trees with, here for a linear model.
//!
//! Per epoch, with the |ΔNDCG| weights frozen at the current ranking, the smoothed objective is
//! `L(w) = (1/Q) Σ_q Σ_{(i,j): l_i > l_j} |ΔNDCG_ij| · log(1 + e^{−σ(s_i − s_j)}) + (λ/2)‖w‖²`;
//! one gradient step is taken with a backtracking (Armijo) step size on it, then the weights are re-frozen.
//! Only pairs with a document in the top k are enumerated (the others have ΔNDCG@k = 0): O(n·k) per query.
//! The epoch is chosen on validation data.
//!
//! On a click training set (`ltr_clicks::click_training_set`) each query's term is weighted by its clicks over
//! their propensity instead of 1/Q (IPS-weighted LambdaRank, the linear form of LightGBM's position-debiased
//! objective's inverse-propensity correction), or by its clicks alone (the naive control): [`ClickWeighting`].
//!
//! The objective and its gradient are sums over queries, taken exactly ([`ExactVec`]), so the queries can be
//! spread over ranks (`LambdaRankParams::fit_distributed`) and every rank ends with the single-process model,
//! bit for bit.

use ltr_core::{
    Allreduce, BestSoFar, Fit, FitContext, FitDistributed, FitReport, FitWith, Fitted, LinearModel,
    LtrError, Model, Result, SingleProcess,
};
use ltr_data::{exact_transpose_times, ClickWeighting, Dataset, ExactVec};
use ltr_metrics::{Convention, Metric};
use ltr_pairs::split_by_offsets;
use rayon::prelude::*;

use crate::measure::{ListMeasure, QueryMeasure};

/// Linear LambdaRank settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LambdaRankParams {
    epochs: usize,
    k: Option<usize>,
    convention: Convention,
    sigma: f64,
    l2: f64,
    select_epochs: bool,
    clicks: Option<ClickWeighting>,
}

impl Default for LambdaRankParams {
    fn default() -> Self {
        Self {
            epochs: 100,
            k: Some(10),
            convention: Convention::STANDARD,
            sigma: 1.0,
            l2: 1e-4,
            select_epochs: true,
            clicks: None,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl LambdaRankParams {
    /// Epochs at most (100).
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.epochs = epochs;
        self
    }
    /// The k of ΔNDCG@k (10; `None`: the whole list).
    pub fn k(mut self, k: Option<usize>) -> Self {
        self.k = k;
        self
    }
    /// Gain and discount of ΔNDCG (standard: 2^l − 1, 1/log2(r + 1)).
    pub fn convention(mut self, convention: Convention) -> Self {
        self.convention = convention;
        self
    }
    /// σ of the pair sigmoid (1).
    pub fn sigma(mut self, sigma: f64) -> Self {
        self.sigma = sigma;
        self
    }
    /// λ of the L2 penalty (1e-4).
    pub fn l2(mut self, l2: f64) -> Self {
        self.l2 = l2;
        self
    }
    /// Keep the epoch best on validation (by the context's measure).
    pub fn select_epochs(mut self, select_epochs: bool) -> Self {
        self.select_epochs = select_epochs;
        self
    }
    /// Weigh the queries of a click training set ([`Dataset::click_weights`]; `None`: each counts 1/Q).
    pub fn clicks(mut self, clicks: Option<ClickWeighting>) -> Self {
        self.clicks = clicks;
        self
    }
}

impl LambdaRankParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if self.epochs == 0 || self.k == Some(0) {
            return Err(LtrError::param("epochs/k", "need epochs >= 1 and k >= 1"));
        }
        if !(self.sigma > 0.0 && self.sigma.is_finite() && self.l2 >= 0.0 && self.l2.is_finite()) {
            return Err(LtrError::param(
                "sigma/l2",
                "need sigma > 0 and l2 >= 0, finite",
            ));
        }
        Ok(())
    }
}

ltr_core::param_guard!(LambdaRankParams => LambdaRankValidParams);

/// The ranking an epoch freezes, for every query: its documents by descending score (indices within the query) and
/// each document's position in that order — 8 bytes a document. The pairs and their |ΔNDCG| are enumerated from it
/// again on every pass ([`for_each_pair`], O(n·k) per query): stored, they took 16 bytes a pair and as much again
/// for their lambda terms, about 1.8 GB on 3.77 M documents, where the data itself is 2.1 GB.
// pub for the tests in tests/unit/lambdarank.rs; not API.
#[doc(hidden)]
pub struct FrozenRanking {
    order: Vec<u32>,
    rank: Vec<u32>,
}

/// The ranking by `scores` of every query whose measure can change.
// pub for the tests in tests/unit/lambdarank.rs; not API.
#[doc(hidden)]
pub fn freeze(data: &Dataset, measures: &[QueryMeasure], scores: &[f64]) -> FrozenRanking {
    let n = data.n_docs();
    let (mut order, mut rank) = (vec![0u32; n], vec![0u32; n]);
    let offsets = data.query_offsets();
    split_by_offsets(&mut order, offsets)
        .into_par_iter()
        .zip(split_by_offsets(&mut rank, offsets))
        .enumerate()
        .for_each(|(q, (order, rank))| {
            if measures[q].constant {
                return;
            }
            let s = &scores[data.query_range(q)];
            for (k, o) in order.iter_mut().enumerate() {
                *o = k as u32;
            }
            order.sort_by(|&a, &b| s[b as usize].total_cmp(&s[a as usize]).then(a.cmp(&b)));
            for (p, &d) in order.iter().enumerate() {
                rank[d as usize] = p as u32;
            }
        });
    FrozenRanking { order, rank }
}

/// Visit query `q`'s pairs with a document in the top `cut` of the frozen ranking, in a fixed order, as
/// `(more relevant, less relevant, |ΔNDCG@k|)` with indices within the query.
// pub for the tests in tests/unit/lambdarank.rs; not API.
#[doc(hidden)]
pub fn for_each_pair(
    data: &Dataset,
    q: usize,
    m: &QueryMeasure,
    frozen: &FrozenRanking,
    mut visit: impl FnMut(usize, usize, f64),
) {
    if m.constant {
        return;
    }
    let r = data.query_range(q);
    let (order, rank) = (&frozen.order[r.clone()], &frozen.rank[r.clone()]);
    let labels = &data.labels()[r];
    for (p, &i) in order.iter().enumerate().take(m.cut) {
        let i = i as usize;
        for j in 0..labels.len() {
            let rj = rank[j] as usize;
            // A pair with both documents in the top k is met twice: keep it from its higher-ranked member.
            if labels[i] == labels[j] || (rj < m.cut && rj < p) {
                continue;
            }
            let dw = m.swap_gain(p, rj, m.weight[i], m.weight[j]);
            if dw > 0.0 {
                if labels[i] > labels[j] {
                    visit(i, j, dw);
                } else {
                    visit(j, i, dw);
                }
            }
        }
    }
}

/// The smoothed objective with frozen weights, per query, and (`with_lambdas`) its gradient with respect to the
/// scores (the lambdas). Each query counts 1/`nq`, or its own weight when `weights` are given (they sum to 1).
// pub for the tests in tests/unit/lambdarank.rs; not API.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn loss_and_lambdas(
    data: &Dataset,
    measures: &[QueryMeasure],
    frozen: &FrozenRanking,
    scores: &[f64],
    sigma: f64,
    nq: f64,
    weights: Option<&[f64]>,
    with_lambdas: bool,
) -> (Vec<f64>, Vec<f64>) {
    let query_loss = |q: usize, mut lambdas: Option<&mut [f64]>| -> f64 {
        let s = &scores[data.query_range(q)];
        let qw = weights.map(|w| w[q]);
        let mut loss = 0.0;
        for_each_pair(data, q, &measures[q], frozen, |i, j, dw| {
            let z = sigma * (s[i] - s[j]);
            // log(1 + e^{−z}) and its derivative −σ/(1 + e^{z}), in forms that do not overflow.
            let dw = qw.map_or(dw, |qw| qw * nq * dw);
            loss += dw * softplus(-z);
            if let Some(lambdas) = lambdas.as_deref_mut() {
                let rho = dw * sigma / (1.0 + z.exp());
                lambdas[i] += -rho / nq;
                lambdas[j] += rho / nq;
            }
        });
        loss
    };
    if with_lambdas {
        let mut lambdas = vec![0.0; scores.len()];
        let losses = split_by_offsets(&mut lambdas, data.query_offsets())
            .into_par_iter()
            .enumerate()
            .map(|(q, l)| query_loss(q, Some(l)))
            .collect();
        (losses, lambdas)
    } else {
        let losses = (0..data.n_queries())
            .into_par_iter()
            .map(|q| query_loss(q, None))
            .collect();
        (losses, Vec::new())
    }
}

pub(crate) fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

impl Fit for LambdaRankValidParams {
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        self.fit_distributed(train, ctx, &SingleProcess)
    }
}

/// Fine-tuning: the epochs start from `start` (e.g. a RankSVM) instead of zeros, and with validation data the
/// start itself is epoch 0, kept when no epoch beats it on validation.
impl FitWith for LambdaRankValidParams {
    fn fit_with(
        &self,
        start: &LinearModel,
        train: &Dataset,
        ctx: &FitContext<'_>,
    ) -> Result<Fitted> {
        self.fit_distributed_with(Some(start), train, ctx, &SingleProcess)
    }
}

impl LambdaRankParams {
    /// `LambdaRankParams::fit_distributed` from `start` ([`FitWith::fit_with`]; `None`: zeros).
    pub fn fit_distributed_with(
        &self,
        start: Option<&LinearModel>,
        train: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        self.validate()?;
        if comm.size() > 1 && (self.clicks.is_some() || ctx.validation().is_some()) {
            return Err(LtrError::param(
                "weighting",
                "distributed LambdaRank takes judged data without validation (click weights and epoch selection \
                 need one process)",
            ));
        }
        let measure = ListMeasure::new(Metric::Ndcg(self.k), self.convention)?;
        let measures = (0..train.n_queries())
            .map(|q| measure.query(&train.labels()[train.query_range(q)]))
            .collect::<Result<Vec<_>>>()?;
        let d = train.n_features();
        let mut queries = ExactVec::new(1);
        queries.add(0, train.n_queries() as f64);
        comm.sum_exact(&mut queries)?;
        let nq = queries.value(0).max(1.0);
        let weights = match self.clicks {
            Some(c) => Some(train.click_weights(c).ok_or_else(|| {
                LtrError::Training(
                    "click weighting needs a click training set (`ltr train --clicks LOG`)".into(),
                )
            })?),
            None => None,
        };
        let mut w = match start {
            Some(m) if m.weights.len() > d => {
                return Err(LtrError::Shape(format!(
                    "the start model has {} features, the training data {d}",
                    m.weights.len()
                )))
            }
            Some(m) => {
                let mut w = m.weights.clone();
                w.resize(d, 0.0);
                w
            }
            None => vec![0.0; d],
        };
        let mut step = 1.0;
        let mut best = BestSoFar::new();
        let mut curve = Vec::new();
        let mut last_loss = f64::NAN;
        let l2_term = |w: &[f64]| 0.5 * self.l2 * w.iter().map(|v| v * v).sum::<f64>();
        if start.is_some() && self.select_epochs {
            if let Some(v) = ctx.validate(&LinearModel::new(w.clone()))? {
                best.offer(v, (0, w.clone(), f64::NAN));
            }
        }
        ctx.progress().begin("epochs", Some(self.epochs as u64));
        // The objective alone (line search trials): one exact sum over queries and ranks.
        let objective = |frozen: &FrozenRanking, w: &[f64]| -> Result<f64> {
            let scores = train.scores(w);
            let (losses, _) = loss_and_lambdas(
                train,
                &measures,
                frozen,
                &scores,
                self.sigma,
                nq,
                weights.as_deref(),
                false,
            );
            let mut sum = ExactVec::new(1);
            for l in &losses {
                sum.add(0, *l);
            }
            comm.sum_exact(&mut sum)?;
            Ok(sum.value(0) / nq + l2_term(w))
        };
        for epoch in 1..=self.epochs {
            let scores = train.scores(&w);
            let frozen = freeze(train, &measures, &scores);
            let (losses, lambdas) = loss_and_lambdas(
                train,
                &measures,
                &frozen,
                &scores,
                self.sigma,
                nq,
                weights.as_deref(),
                true,
            );
            let mut sums = exact_transpose_times(train, &lambdas, &[&losses]);
            comm.sum_exact(&mut sums)?;
            let f0 = sums.value(d) / nq + l2_term(&w);
            let mut g: Vec<f64> = (0..d).map(|j| sums.value(j)).collect();
            for (gj, wj) in g.iter_mut().zip(&w) {
                *gj += self.l2 * wj;
            }
            let gg: f64 = g.iter().map(|v| v * v).sum();
            if gg == 0.0 || !gg.is_finite() {
                break;
            }
            // Armijo backtracking from twice the last accepted step: scale-free on raw or z-scored features.
            step *= 2.0;
            let mut accepted = None;
            for _ in 0..60 {
                let trial: Vec<f64> = w.iter().zip(&g).map(|(wj, gj)| wj - step * gj).collect();
                let f1 = objective(&frozen, &trial)?;
                if f1 <= f0 - 1e-4 * step * gg {
                    accepted = Some((trial, f1));
                    break;
                }
                step *= 0.5;
            }
            let Some((next, f1)) = accepted else { break };
            w = next;
            last_loss = f1;
            let model = LinearModel::new(w.clone());
            let v = if self.select_epochs {
                ctx.validate(&model)?
            } else {
                None
            };
            curve.push(v.unwrap_or(f64::NAN));
            best.offer(v.unwrap_or(-f1), (epoch, w.clone(), f1));
            ctx.progress().advance(
                epoch as u64,
                &format!(
                    "loss {f1:.5}{}",
                    v.map(|v| format!(", validation {v:.4}"))
                        .unwrap_or_default()
                ),
            );
        }
        ctx.progress().end();
        let kept = best.into_best();
        let epochs_run = curve.len();
        let (epochs_used, weights, loss, validation) = match kept {
            Some(b) if ctx.validation().is_some() && self.select_epochs => {
                (b.item.0, b.item.1, b.item.2, Some(b.score))
            }
            _ => (epochs_run, w, last_loss, None),
        };
        let report = FitReport {
            iterations: Some(epochs_run.max(epochs_used) as u64),
            objective: loss.is_finite().then_some(loss),
            validation,
            ..FitReport::default()
        }
        .select("epochs", epochs_used);
        Ok(Fitted::new(Model::Linear(LinearModel::new(weights)))
            .with_report(report)
            .with_diagnostics(serde_json::json!({ "validation_curve": curve })))
    }
}

impl FitDistributed for LambdaRankValidParams {
    /// [`Fit::fit`] with the queries spread over the ranks of `comm` (`train` holds this rank's queries): every
    /// rank returns the model `fit` gives on all the queries, bit for bit. Click weights and validation data need
    /// one process.
    fn fit_distributed(
        &self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        self.fit_distributed_with(None, train, ctx, comm)
    }
}
