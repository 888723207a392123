//! The Dual Learning Algorithm (Ai, Bi, Luo, Guo & Croft, SIGIR 2018, "Unbiased Learning to Rank with Unbiased
//! Propensity Estimation") for a linear ranker: a propensity model and the ranker learned together from click
//! sessions (`ltr_clicks::click_session_set`: each session a query of its displayed documents labelled by click,
//! each row with its display position, [`Dataset::positions`]).
//!
//! Two towers, each the other's inverse weight:
//! - the **ranker** `s_i = w·x_i` gives each displayed document a softmax relevance `P(r_i) = e^{s_i} / Σ_j e^{s_j}`
//!   over its session;
//! - the **propensity tower** is a logit `φ_k` per position, and a softmax over the positions a session shows,
//!   `P(o_k) = e^{φ_k} / Σ_{k'} e^{φ_{k'}}`; the propensities it reports are `θ_k = P(o_k)/P(o_0) = e^{φ_k − φ_0}`.
//!
//! Both are trained with the listwise DLA loss, the softmax cross-entropy of each session's clicks:
//! - ranker: `l_r(w) = Σ_sessions u Σ_{clicked i} ω_i · (−log P(r_i))`, each click weighted by the inverse
//!   propensity `ω_i = P(o_0)/P(o_{k_i})` of its position (the paper's inverse propensity weighting);
//! - propensity: `l_o(φ) = Σ_sessions u Σ_{clicked i} ρ_i · (−log P(o_{k_i}))`, each click weighted by the inverse
//!   relevance `ρ_i = P(r_top)/P(r_i) = e^{s_top − s_i}` of its document (`top` the document at the session's
//!   first position: the paper's inverse relevance weighting).
//!
//! `u` is the session's weight (how many identical sessions it stands for). Each loss is divided by the sum of its
//! click weights, as ULTRA's `softmax_loss` divides by Σ labels·weights, and the weights of the other tower are
//! held fixed while a tower steps (no gradient flows through them). Both weights can be capped
//! ([`DlaParams::max_weight`], ULTRA's `max_propensity_weight`). With [`DlaLoss::Lambda`] the ranker's loss is
//! LambdaRank's instead (each pair of a clicked and an unclicked document weighted by |ΔNDCG@k| and by ω of the
//! clicked one), as ULTRA lets DLA's ranker use other losses.
//!
//! The paper trains both towers by stochastic gradient steps on batches of sessions. Here every step is a full-batch
//! gradient step with a backtracking (Armijo) step size, as [`crate::LambdaRankParams`] takes them: one ranker step
//! per epoch, then [`DlaParams::propensity_steps`] steps of the propensity tower. Each tower's loss, with the other's
//! weights fixed, is convex, so the steps never climb. Sums over sessions are exact (`ExactVec`) or taken in
//! session order, so the model does not depend on the thread count. The epoch is chosen on validation data (judged
//! data).

use ltr_core::{
    BestSoFar, Fit, FitContext, FitReport, Fitted, LinearModel, LtrError, Model, Result,
};
use ltr_data::{exact_transpose_times, Dataset};
use ltr_metrics::{Convention, Metric};
use ltr_pairs::split_by_offsets;
use rayon::prelude::*;

use crate::lambdarank::{for_each_pair, freeze, softplus, FrozenRanking};
use crate::measure::{ListMeasure, QueryMeasure};

/// The ranker's loss in DLA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DlaLoss {
    /// The paper's: softmax cross-entropy of each session's scores against its inverse-propensity weighted clicks
    /// (ListNet's top-one loss on clicks).
    Softmax,
    /// LambdaRank's: each pair (clicked, unclicked) of a session, weighted by |ΔNDCG@k| of swapping it in the
    /// current ranking and by the inverse propensity of the clicked document's position.
    Lambda,
}

/// DLA settings.
#[derive(Debug, Clone, PartialEq)]
pub struct DlaParams {
    epochs: usize,
    loss: DlaLoss,
    k: Option<usize>,
    convention: Convention,
    sigma: f64,
    l2: f64,
    max_weight: f64,
    propensity_steps: usize,
    select_epochs: bool,
    known: Option<Vec<f64>>,
}

impl Default for DlaParams {
    fn default() -> Self {
        Self {
            epochs: 100,
            loss: DlaLoss::Softmax,
            k: Some(10),
            convention: Convention::STANDARD,
            sigma: 1.0,
            l2: 1e-4,
            max_weight: 0.0,
            propensity_steps: 10,
            select_epochs: true,
            known: None,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl DlaParams {
    /// Epochs at most (100): each one ranker step, then the propensity tower's steps.
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.epochs = epochs;
        self
    }
    /// The ranker's loss ([`DlaLoss::Softmax`], the paper's).
    pub fn loss(mut self, loss: DlaLoss) -> Self {
        self.loss = loss;
        self
    }
    /// The k of ΔNDCG@k under [`DlaLoss::Lambda`] (10; `None`: the whole session).
    pub fn k(mut self, k: Option<usize>) -> Self {
        self.k = k;
        self
    }
    /// Gain and discount of ΔNDCG under [`DlaLoss::Lambda`].
    pub fn convention(mut self, convention: Convention) -> Self {
        self.convention = convention;
        self
    }
    /// σ of the pair sigmoid under [`DlaLoss::Lambda`] (1).
    pub fn sigma(mut self, sigma: f64) -> Self {
        self.sigma = sigma;
        self
    }
    /// λ of the ranker's L2 penalty (1e-4).
    pub fn l2(mut self, l2: f64) -> Self {
        self.l2 = l2;
        self
    }
    /// Cap of every inverse-propensity and inverse-relevance weight (ULTRA's `max_propensity_weight`; 0: none).
    pub fn max_weight(mut self, max_weight: f64) -> Self {
        self.max_weight = max_weight;
        self
    }
    /// Gradient steps of the propensity tower after each ranker step (10).
    pub fn propensity_steps(mut self, steps: usize) -> Self {
        self.propensity_steps = steps;
        self
    }
    /// Keep the epoch best on validation (by the context's measure).
    pub fn select_epochs(mut self, select_epochs: bool) -> Self {
        self.select_epochs = select_epochs;
        self
    }
    /// Known propensities by position (relative to the top; `None`: learned). Given, the propensity tower is not
    /// trained: the ranker is inverse-propensity weighted by them (the known-propensity control).
    pub fn known_propensities(mut self, known: Option<Vec<f64>>) -> Self {
        self.known = known;
        self
    }
}

impl DlaParams {
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
        if !(self.max_weight >= 0.0 && self.max_weight.is_finite()) {
            return Err(LtrError::param(
                "max-propensity-weight",
                format!(
                    "must be finite and ≥ 0 (0: no cap), got {}",
                    self.max_weight
                ),
            ));
        }
        if self.propensity_steps == 0 && self.known.is_none() {
            return Err(LtrError::param(
                "propensity-steps",
                "must be at least 1 (the propensity tower is learned)",
            ));
        }
        if let Some(k) = &self.known {
            if let Some(p) = k.iter().find(|p| !(**p > 0.0 && p.is_finite())) {
                return Err(LtrError::param(
                    "propensities",
                    format!("every propensity must be positive and finite, got {p}"),
                ));
            }
            if k.is_empty() {
                return Err(LtrError::param("propensities", "no propensity given"));
            }
        }
        Ok(())
    }
}

ltr_core::param_guard!(DlaParams => DlaValidParams);

/// The click sessions of a training set: per row its position and click weight, per session its first-position row.
// pub for the tests in tests/unit/dla.rs; not API.
#[doc(hidden)]
pub struct Sessions<'a> {
    data: &'a Dataset,
    pub positions: &'a [u32],
    /// Per row: the session's weight times the row's clicks (its label; 0 when not clicked).
    pub clicks: Vec<f64>,
    /// Per session: the row (within the session) shown at its first position.
    top: Vec<usize>,
    /// Positions: one more than the largest.
    width: usize,
}

impl<'a> Sessions<'a> {
    pub fn new(data: &'a Dataset, ctx: &FitContext<'_>) -> Result<Self> {
        let Some(positions) = data.positions() else {
            return Err(LtrError::param(
                "debias",
                "DLA learns from click sessions with positions: train with `ltr train --clicks LOG` (or a LightGBM \
                 `.position` file beside the training file)",
            ));
        };
        let labels = data.labels();
        if let Some(i) = labels.iter().position(|l| !(*l >= 0.0 && l.is_finite())) {
            return Err(LtrError::Training(format!(
                "DLA reads labels as clicks: row {i} has label {}, not a count ≥ 0",
                labels[i]
            )));
        }
        let mut clicks = vec![0.0; data.n_docs()];
        let mut top = Vec::with_capacity(data.n_queries());
        for q in 0..data.n_queries() {
            let r = data.query_range(q);
            let u = data.query_weights().map_or(1.0, |w| w[q]) * ctx.query_weight(q);
            for i in r.clone() {
                clicks[i] = u * f64::from(labels[i]);
            }
            let first = r
                .clone()
                .min_by_key(|&i| positions[i])
                .map_or(0, |i| i - r.start);
            top.push(first);
        }
        if clicks.iter().all(|&c| c == 0.0) {
            return Err(LtrError::Training(
                "DLA found no click in the training sessions".into(),
            ));
        }
        let width = positions.iter().max().map_or(0, |&m| m as usize + 1);
        Ok(Self {
            data,
            positions,
            clicks,
            top,
            width,
        })
    }

    /// Positions: one more than the largest shown.
    pub fn width(&self) -> usize {
        self.width
    }
}

/// `steps` Armijo steps of the propensity tower's logits `phi` on DLA's propensity loss, the ranker's `scores`
/// (one per row of the sessions' data) fixed; `step` carries the step size from call to call. Returns whether
/// the logits moved. The linear and the neural DLA fits take their tower steps here.
// pub for ltr-neural's DLA; not API.
#[doc(hidden)]
pub fn propensity_tower_steps(
    sessions: &Sessions<'_>,
    scores: &[f64],
    max_weight: f64,
    steps: usize,
    phi: &mut Vec<f64>,
    step: &mut f64,
) -> Result<bool> {
    let tower = PropensityStep::new(sessions, scores, max_weight);
    let mut moved = false;
    if tower.total > 0.0 {
        let mut grad = vec![0.0; phi.len()];
        for _ in 0..steps {
            let f0 = tower.loss(phi, Some(&mut grad));
            match armijo(phi, f0, &grad, step, |p| Ok(tower.loss(p, None)))? {
                Some((next, _)) => {
                    *phi = next;
                    moved = true;
                }
                None => break,
            }
        }
    }
    Ok(moved)
}

/// The propensities `θ_k = P(o_k)/P(o_0) = e^{φ_k − φ_0}` of the tower's logits `phi`, from position 0: what a DLA
/// fit reports.
// pub for ltr-neural's DLA; not API.
#[doc(hidden)]
pub fn propensities_of_logits(phi: &[f64]) -> Vec<f64> {
    phi.iter().map(|p| (p - phi[0]).exp()).collect()
}

/// Each position's inverse propensity `ω_k = P(o_0)/P(o_k) = e^{φ_0 − φ_k}` (capped at `max_weight`; 0: no cap).
// pub for ltr-neural's DLA; not API.
#[doc(hidden)]
pub fn inverse_propensities(phi: &[f64], max_weight: f64) -> Vec<f64> {
    phi.iter()
        .map(|&p| capped_exp(phi[0] - p, max_weight))
        .collect()
}

/// `e^{x}` capped at `max` (0: no cap).
fn capped_exp(x: f64, max: f64) -> f64 {
    let v = x.exp();
    if max > 0.0 {
        v.min(max)
    } else {
        v
    }
}

/// `log Σ e^{x}` without overflow.
fn log_sum_exp(x: impl Iterator<Item = f64> + Clone) -> f64 {
    let top = x.clone().fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() {
        return top;
    }
    top + x.map(|v| (v - top).exp()).sum::<f64>().ln()
}

/// The ranker's side of one epoch: the inverse-propensity weight of every row, the measures and the frozen ranking
/// (LambdaRank's loss only), and the sum of the weighted clicks the loss is divided by.
// pub for the tests in tests/unit/dla.rs; not API.
#[doc(hidden)]
pub struct RankerStep<'a> {
    pub s: &'a Sessions<'a>,
    /// Per row: its clicks times ω of its position.
    pub weighted: Vec<f64>,
    pub total: f64,
    pub lambda: Option<(&'a [QueryMeasure], FrozenRanking)>,
    pub sigma: f64,
}

impl RankerStep<'_> {
    /// Per session: the loss (not yet divided by `total`), and with `lambdas` the gradient with respect to the
    /// scores, divided by `total`.
    pub fn losses(&self, scores: &[f64], lambdas: Option<&mut [f64]>) -> Vec<f64> {
        let data = self.s.data;
        let query = |q: usize, grad: Option<&mut [f64]>| -> f64 {
            let r = data.query_range(q);
            let (s, a) = (&scores[r.clone()], &self.weighted[r]);
            match &self.lambda {
                None => softmax_loss(s, a, self.total, grad),
                Some((measures, frozen)) => {
                    let mut grad = grad;
                    let mut loss = 0.0;
                    for_each_pair(data, q, &measures[q], frozen, |i, j, dw| {
                        // `i` is the clicked one (the higher label); a pair is weighted by its click weight.
                        let dw = dw * a[i];
                        if dw == 0.0 {
                            return;
                        }
                        let z = self.sigma * (s[i] - s[j]);
                        loss += dw * softplus(-z);
                        if let Some(g) = grad.as_deref_mut() {
                            let rho = dw * self.sigma / (1.0 + z.exp()) / self.total;
                            g[i] -= rho;
                            g[j] += rho;
                        }
                    });
                    loss
                }
            }
        };
        match lambdas {
            Some(l) => split_by_offsets(l, data.query_offsets())
                .into_par_iter()
                .enumerate()
                .map(|(q, g)| query(q, Some(g)))
                .collect(),
            None => (0..data.n_queries())
                .into_par_iter()
                .map(|q| query(q, None))
                .collect(),
        }
    }
}

/// One session's softmax cross-entropy `Σ a_i (log Σ_j e^{s_j} − s_i)` of scores `s` against click weights `a`, and
/// its gradient `(A p_i − a_i) / total` (`A = Σ a`, `p` the softmax) written to `grad`.
fn softmax_loss(s: &[f64], a: &[f64], total: f64, grad: Option<&mut [f64]>) -> f64 {
    let sum_a: f64 = a.iter().sum();
    if sum_a == 0.0 {
        return 0.0;
    }
    let lse = log_sum_exp(s.iter().copied());
    let loss = s.iter().zip(a).map(|(&si, &ai)| ai * (lse - si)).sum();
    if let Some(g) = grad {
        for ((gi, &si), &ai) in g.iter_mut().zip(s).zip(a) {
            *gi = (sum_a * (si - lse).exp() - ai) / total;
        }
    }
    loss
}

/// The propensity tower's side: per row the click weight times ρ of its document (0 when not clicked) and
/// their sum.
// pub for the tests in tests/unit/dla.rs; not API.
#[doc(hidden)]
pub struct PropensityStep<'a> {
    s: &'a Sessions<'a>,
    weighted: Vec<f64>,
    total: f64,
}

impl PropensityStep<'_> {
    /// `ρ_i = e^{s_top − s_i}` (capped) times each row's clicks, at the ranker's `scores`. A session whose weights
    /// overflow (no cap, scores far apart) is left out.
    pub fn new<'a>(s: &'a Sessions<'a>, scores: &[f64], max_weight: f64) -> PropensityStep<'a> {
        let data = s.data;
        let mut weighted = vec![0.0; data.n_docs()];
        let mut total = 0.0;
        for q in 0..data.n_queries() {
            let r = data.query_range(q);
            let top = scores[r.start + s.top[q]];
            let mut sum = 0.0;
            for i in r.clone() {
                if s.clicks[i] > 0.0 {
                    weighted[i] = s.clicks[i] * capped_exp(top - scores[i], max_weight);
                    sum += weighted[i];
                }
            }
            if sum.is_finite() {
                total += sum;
            } else {
                weighted[r].fill(0.0);
            }
        }
        PropensityStep { s, weighted, total }
    }

    /// The loss at logits `phi` (divided by the total weight) and its gradient, summed in session order.
    pub fn loss(&self, phi: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let data = self.s.data;
        let positions = self.s.positions;
        let mut grad = grad;
        if let Some(g) = grad.as_deref_mut() {
            g.fill(0.0);
        }
        let mut loss = 0.0;
        for q in 0..data.n_queries() {
            let r = data.query_range(q);
            let b = &self.weighted[r.clone()];
            let sum_b: f64 = b.iter().sum();
            if sum_b == 0.0 {
                continue;
            }
            let pos = &positions[r];
            let lse = log_sum_exp(pos.iter().map(|&k| phi[k as usize]));
            for (&k, &bi) in pos.iter().zip(b) {
                let k = k as usize;
                if bi > 0.0 {
                    loss += bi * (lse - phi[k]);
                }
                if let Some(g) = grad.as_deref_mut() {
                    g[k] += sum_b * (phi[k] - lse).exp() - bi;
                }
            }
        }
        if let Some(g) = grad {
            for v in g.iter_mut() {
                *v /= self.total;
            }
        }
        loss / self.total
    }
}

/// Armijo backtracking from `step` (doubled first) along −`g` from `x`, where `f(x) = f0`: the accepted point and its
/// value, `step` left at the accepted size; `None` when 60 halvings find no decrease.
fn armijo(
    x: &[f64],
    f0: f64,
    g: &[f64],
    step: &mut f64,
    mut f: impl FnMut(&[f64]) -> Result<f64>,
) -> Result<Option<(Vec<f64>, f64)>> {
    let gg: f64 = g.iter().map(|v| v * v).sum();
    if gg == 0.0 || !gg.is_finite() {
        return Ok(None);
    }
    *step *= 2.0;
    for _ in 0..60 {
        let trial: Vec<f64> = x.iter().zip(g).map(|(xj, gj)| xj - *step * gj).collect();
        let f1 = f(&trial)?;
        if f1 <= f0 - 1e-4 * *step * gg {
            return Ok(Some((trial, f1)));
        }
        *step *= 0.5;
    }
    Ok(None)
}

impl Fit for DlaValidParams {
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let sessions = Sessions::new(train, ctx)?;
        let width = sessions.width;
        let d = train.n_features();
        // The propensity tower's logits: learned from 0 (every position alike: the naive model), or the known ones.
        let mut phi = match &self.known {
            Some(known) => {
                if known.len() < width {
                    return Err(LtrError::param(
                        "propensities",
                        format!(
                            "{} propensities, but the sessions show {width} positions",
                            known.len()
                        ),
                    ));
                }
                known[..width].iter().map(|p| p.ln()).collect()
            }
            None => vec![0.0; width],
        };
        let measures = match self.loss {
            DlaLoss::Softmax => None,
            DlaLoss::Lambda => {
                let m = ListMeasure::new(Metric::Ndcg(self.k), self.convention)?;
                Some(
                    (0..train.n_queries())
                        .map(|q| m.query(&train.labels()[train.query_range(q)]))
                        .collect::<Result<Vec<_>>>()?,
                )
            }
        };
        let l2_term = |w: &[f64]| 0.5 * self.l2 * w.iter().map(|v| v * v).sum::<f64>();
        let mut w = vec![0.0; d];
        let (mut step, mut phi_step) = (1.0, 1.0);
        let mut best = BestSoFar::new();
        let mut curve = Vec::new();
        let mut last_loss = f64::NAN;
        ctx.progress().begin("epochs", Some(self.epochs as u64));
        for epoch in 1..=self.epochs {
            // The propensity tower's steps, the ranker fixed (first: from w = 0, every relevance weight is 1).
            let tower_moved = self.known.is_none()
                && propensity_tower_steps(
                    &sessions,
                    &train.scores(&w),
                    self.max_weight,
                    self.propensity_steps,
                    &mut phi,
                    &mut phi_step,
                )?;
            // The ranker's step, the propensities fixed.
            let scores = train.scores(&w);
            let omega = inverse_propensities(&phi, self.max_weight);
            let weighted: Vec<f64> = sessions
                .clicks
                .iter()
                .zip(sessions.positions)
                .map(|(&c, &k)| if c > 0.0 { c * omega[k as usize] } else { 0.0 })
                .collect();
            let total: f64 = weighted.iter().sum();
            let ranker = RankerStep {
                s: &sessions,
                weighted,
                total,
                lambda: measures.as_deref().map(|m| (m, freeze(train, m, &scores))),
                sigma: self.sigma,
            };
            let mut lambdas = vec![0.0; train.n_docs()];
            let losses = ranker.losses(&scores, Some(&mut lambdas));
            let sums = exact_transpose_times(train, &lambdas, &[&losses]);
            let f0 = sums.value(d) / total + l2_term(&w);
            let g: Vec<f64> = (0..d).map(|j| sums.value(j) + self.l2 * w[j]).collect();
            let objective = |trial: &[f64]| -> Result<f64> {
                let losses = ranker.losses(&train.scores(trial), None);
                let mut sum = ltr_data::ExactVec::new(1);
                for l in &losses {
                    sum.add(0, *l);
                }
                Ok(sum.value(0) / total + l2_term(trial))
            };
            let moved = match armijo(&w, f0, &g, &mut step, objective)? {
                Some((next, f1)) => {
                    w = next;
                    last_loss = f1;
                    true
                }
                None => false,
            };
            if !moved && !tower_moved {
                break;
            }
            let model = LinearModel::new(w.clone());
            let v = if self.select_epochs {
                ctx.validate(&model)?
            } else {
                None
            };
            curve.push(v.unwrap_or(f64::NAN));
            best.offer(
                v.unwrap_or(-last_loss),
                (epoch, w.clone(), last_loss, phi.clone()),
            );
            ctx.progress().advance(
                epoch as u64,
                &format!(
                    "loss {last_loss:.5}{}",
                    v.map(|v| format!(", validation {v:.4}"))
                        .unwrap_or_default()
                ),
            );
        }
        ctx.progress().end();
        let epochs_run = curve.len();
        let (epochs_used, weights, loss, phi, validation) = match best.into_best() {
            Some(b) if ctx.validation().is_some() && self.select_epochs => {
                (b.item.0, b.item.1, b.item.2, b.item.3, Some(b.score))
            }
            _ => (epochs_run, w, last_loss, phi, None),
        };
        let propensities = propensities_of_logits(&phi);
        let report = FitReport {
            iterations: Some(epochs_run as u64),
            objective: loss.is_finite().then_some(loss),
            validation,
            ..FitReport::default()
        }
        .select("epochs", epochs_used);
        Ok(Fitted::new(Model::Linear(LinearModel::new(weights)))
            .with_report(report)
            .with_diagnostics(serde_json::json!({
                "validation_curve": curve,
                "position_bias": { "propensities": propensities },
            })))
    }
}

/// The propensities (θ_k/θ_0 by position) a DLA fit learned, from its diagnostics.
pub fn dla_propensities(fitted: &Fitted) -> Option<Vec<f64>> {
    fitted.diagnostics.as_ref()?["position_bias"]["propensities"]
        .as_array()?
        .iter()
        .map(serde_json::Value::as_f64)
        .collect()
}
