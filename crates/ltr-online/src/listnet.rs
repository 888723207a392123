//! Batch top-one ListNet (Cao et al. 2007): stochastic gradient steps query by query over several epochs, the
//! epoch count chosen on validation data. A baseline of seed 003 and a seed model for the sigmoid meta-ranker.
//!
//! On a click training set (`ltr_clicks::click_training_set`) each query's step and loss are scaled by its clicks
//! over their propensity (IPS-weighted ListNet) or by its clicks alone (the naive control), normalised to mean 1.
//! On the doubly robust set (`ltr_clicks::doubly_robust_set`, [`ListNetParams::doubly_robust`]) the target of a
//! query is its labels over their sum instead of their softmax, and its weight its sessions times that sum, so that
//! the loss is linear in the relevance estimates (what keeps an unbiased estimate unbiased).
//!
//! Data-parallel training ([`FitDistributed::fit_distributed`](ltr_core::FitDistributed)) mixes parameters after every epoch (McDonald, Hall &
//! Mann 2010), like the perceptron: ListNet's steps are per query, so there is no batch gradient to sum.

use ltr_core::{
    Allreduce, BestSoFar, Fit, FitContext, FitDistributed, FitReport, Fitted, LinearModel,
    LtrError, Model, Result, SingleProcess,
};
use ltr_data::{ClickWeighting, Dataset, ExactVec};
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::learners::{listnet_gradient, top_one_gradient};

/// Retries of one epoch, each at half the rate, before it is skipped (by then the rate is 2⁻³⁰ of what it was).
const MAX_RETRIES: usize = 30;

/// Batch ListNet settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ListNetParams {
    /// Epochs at most.
    epochs: usize,
    /// Learning rate of each per-query step.
    learning_rate: f64,
    /// Choose the epoch on validation (by the fit context's measure).
    select_epochs: bool,
    /// Shuffle the query order every epoch with the context's seed (false: file order).
    shuffle: bool,
    /// What happens when an epoch raises the training loss.
    step_control: StepControl,
    /// Query weights of a click training set (`None`: every query counts once).
    clicks: Option<ClickWeighting>,
    /// Learn from the doubly robust set: linear targets, label-sum query weights.
    doubly_robust: bool,
}

/// ListNet's learning-rate control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StepControl {
    /// [`Backtrack`](Self::Backtrack) when some training feature lies outside [0, 1], else
    /// [`Fixed`](Self::Fixed): the fixed rate is the LETOR setting (and keeps seed 003's baseline as it was),
    /// backtracking keeps it from overshooting on wider features such as z-scored raw web data.
    #[default]
    Auto,
    /// The learning rate as given, every epoch.
    Fixed,
    /// An epoch that raises the training top-one loss is undone and retried at half the rate (monotone descent).
    Backtrack,
}

impl Default for ListNetParams {
    fn default() -> Self {
        Self {
            epochs: 100,
            learning_rate: 0.1,
            select_epochs: true,
            shuffle: true,
            step_control: StepControl::Auto,
            clicks: None,
            doubly_robust: false,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl ListNetParams {
    /// Set `epochs`: epochs at most.
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.epochs = epochs;
        self
    }
    /// Set `learning_rate`: learning rate of each per-query step.
    pub fn learning_rate(mut self, learning_rate: f64) -> Self {
        self.learning_rate = learning_rate;
        self
    }
    /// Set `select_epochs`: choose the epoch on validation (by the fit context's measure).
    pub fn select_epochs(mut self, select_epochs: bool) -> Self {
        self.select_epochs = select_epochs;
        self
    }
    /// Set `shuffle`: shuffle the query order every epoch with the context's seed (false: file order).
    pub fn shuffle(mut self, shuffle: bool) -> Self {
        self.shuffle = shuffle;
        self
    }
    /// Set `step_control`: what happens when an epoch raises the training loss.
    pub fn step_control(mut self, step_control: StepControl) -> Self {
        self.step_control = step_control;
        self
    }
    /// Weigh the queries of a click training set ([`Dataset::click_weights`]; `None`: each counts once).
    pub fn clicks(mut self, clicks: Option<ClickWeighting>) -> Self {
        self.clicks = clicks;
        self
    }
    /// Learn from the doubly robust set of a click log (`ltr_clicks::doubly_robust_set`: labels that are relevance
    /// estimates, query weights that are sessions). Each query's target is its labels over their sum (ListNet's
    /// top-one probabilities of the estimates taken as linear, not exponentiated), and its weight its sessions
    /// times that sum ([`Dataset::label_sum_weights`], mean 1): the loss is then Σ_q sessions_q Σ_i ŷ_i (−log
    /// P_s(i)), linear in the estimates ŷ, as an unbiased estimator needs. Not with [`ListNetParams::clicks`].
    pub fn doubly_robust(mut self, doubly_robust: bool) -> Self {
        self.doubly_robust = doubly_robust;
        self
    }
}

impl ListNetParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if self.epochs == 0 || !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(LtrError::param(
                "epochs/learning-rate",
                "need epochs >= 1 and a positive learning rate",
            ));
        }
        if self.doubly_robust && self.clicks.is_some() {
            return Err(LtrError::param(
                "weighting",
                "the doubly robust set's labels are already corrected for position; click weighting is for a set \
                 of one query per click",
            ));
        }
        Ok(())
    }
}

ltr_core::param_guard!(ListNetParams => ListNetValidParams);

/// A trained ListNet (the [`Fit`] impl turns it into a [`Fitted`]).
#[derive(Debug, Clone)]
pub struct ListNetFit {
    /// The model.
    pub model: LinearModel,
    /// Epoch kept.
    pub epochs_used: usize,
    /// Validation metric per epoch (empty without validation).
    pub curve: Vec<f64>,
    /// Tries of an epoch that raised the training loss, were undone and halved the learning rate.
    pub rate_halvings: usize,
    /// The learning rate at the end.
    pub final_rate: f64,
}

impl ListNetParams {
    /// Train, measuring every epoch on the context's validation data.
    pub fn train(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<ListNetFit> {
        self.train_mixing(train, ctx, &SingleProcess)
    }

    fn train_mixing(
        &self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<ListNetFit> {
        let validation = ctx.validation();
        self.validate()?;
        let mut w = vec![0.0; train.n_features()];
        let mut order: Vec<usize> = (0..train.n_queries()).collect();
        let seed = if self.shuffle { ctx.seed() } else { 0 };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed.wrapping_add(comm.rank() as u64));
        let mut curve = Vec::new();
        let mut best = BestSoFar::new();
        ctx.progress().begin("epochs", Some(self.epochs as u64));
        let mut s = Vec::new();
        // Click weights, rescaled to mean 1 so that the learning rate means what it means on judged data.
        let weights: Option<Vec<f64>> = match self.clicks {
            None if self.doubly_robust => Some(train.label_sum_weights()?),
            Some(c) => Some(train.click_weights(c).ok_or_else(|| {
                LtrError::Training(
                    "click weighting needs a click training set (`ltr train --clicks LOG`)".into(),
                )
            })?),
            None => None,
        }
        .map(|w| {
            let nq = train.n_queries() as f64;
            w.into_iter().map(|x| x * nq).collect()
        });
        let weights = weights.as_deref();
        // An epoch that raises the training loss is undone and the rate halved: the LETOR default (0.1) suits
        // features in [0, 1], and on wider features (z-scored raw data) it overshoots every query's softmax.
        // Large inverse-propensity weights make single steps large: weighted training always backtracks. Raw
        // features on any rank make the whole run backtrack.
        let backtrack = match self.step_control {
            StepControl::Auto => {
                let mut wide = [i64::from(
                    !train.features_in_unit_interval() || weights.is_some(),
                )];
                comm.sum_i64(&mut wide)?;
                wide[0] > 0
            }
            StepControl::Fixed => false,
            StepControl::Backtrack => true,
        };
        let mut queries = [train.n_queries() as f64];
        comm.sum_ordered(&mut queries)?;
        let share = if queries[0] > 0.0 {
            train.n_queries() as f64 / queries[0]
        } else {
            0.0
        };
        let mut rate = self.learning_rate;
        let mut loss = if backtrack {
            listnet_loss(train, &w, weights, self.doubly_robust, comm)?
        } else {
            0.0
        };
        let mut halvings = 0usize;
        for e in 1..=self.epochs {
            if self.shuffle {
                order.shuffle(&mut rng);
            }
            // An epoch that raises the loss is retried from the same weights at half the rate until it does
            // not (a bounded number of times: past that the epoch is skipped), so that every epoch counted is
            // a step down — on 3.77 M z-scored documents the default rate needed ten halvings, and undoing the
            // epoch without a retry spent ten of twenty epochs learning nothing.
            let before = w.clone();
            let mut tries = 0;
            loop {
                tries += 1;
                for &qi in &order {
                    let q = train.query(qi);
                    s.resize(q.len(), 0.0);
                    q.scores_into(&w, &mut s);
                    let step = weights.map_or(-rate, |qw| -rate * qw[qi]);
                    if self.doubly_robust {
                        linear_target_gradient(&q, &s, step, &mut w);
                    } else {
                        listnet_gradient(&q, &s, step, &mut w);
                    }
                }
                if comm.size() > 1 {
                    w.iter_mut().for_each(|v| *v *= share);
                    comm.sum_ordered(&mut w)?;
                }
                if !backtrack {
                    break;
                }
                let after = listnet_loss(train, &w, weights, self.doubly_robust, comm)?;
                if after <= loss && after.is_finite() {
                    loss = after;
                    break;
                }
                w.copy_from_slice(&before);
                rate *= 0.5;
                halvings += 1;
                if tries > MAX_RETRIES {
                    break;
                }
            }
            if let (true, Some(v)) = (self.select_epochs, validation) {
                let val = ctx.measure(v, &v.scores(&w))?;
                curve.push(val);
                best.offer_with(val, || (e, w.clone()));
            }
            ctx.progress().advance(e as u64, "");
        }
        ctx.progress().end();
        Ok(match best.into_best().map(|b| b.item) {
            Some((e, bw)) => ListNetFit {
                model: LinearModel::new(bw),
                epochs_used: e,
                curve,
                rate_halvings: halvings,
                final_rate: rate,
            },
            None => ListNetFit {
                model: LinearModel::new(w),
                epochs_used: self.epochs,
                curve,
                rate_halvings: halvings,
                final_rate: rate,
            },
        })
    }

    fn fitted(&self, fit: ListNetFit) -> Fitted {
        let report = FitReport {
            iterations: Some(self.epochs as u64),
            validation: fit.curve.get(fit.epochs_used.wrapping_sub(1)).copied(),
            ..Default::default()
        }
        .select("epochs", fit.epochs_used);
        Fitted::new(Model::Linear(fit.model))
            .with_report(report)
            .with_diagnostics(serde_json::json!({
                "validation_curve": fit.curve,
                "rate_halvings": fit.rate_halvings,
                "final_learning_rate": fit.final_rate,
            }))
    }
}

impl FitDistributed for ListNetValidParams {
    /// Data-parallel ListNet by iterative parameter mixing (McDonald, Hall & Mann, NAACL 2010): every rank runs
    /// each epoch's per-query steps over its own queries from the shared weights (rank r shuffles with the seed
    /// plus r), then the weights are averaged with each rank's share of the queries as its weight, in rank order.
    /// Backtracking judges the mixture by the training loss of all ranks (an exact sum), so every rank undoes the
    /// same epochs and halves the same rates. With one rank: [`ListNetParams::train`], bit for bit (it is this
    /// code). Deterministic for a given number of ranks; across rank counts the model differs, within ListNet's
    /// own spread in quality (test). Click weights and epoch selection on validation need one process.
    fn fit_distributed(
        &self,
        shard: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        if comm.size() > 1 && (self.clicks.is_some() || ctx.validation().is_some()) {
            return Err(LtrError::param(
                "weighting",
                "distributed ListNet takes judged data without validation (click weights and epoch selection \
                 need one process)",
            ));
        }
        let fit = self.train_mixing(shard, ctx, comm)?;
        Ok(self.fitted(fit))
    }
}

impl Fit for ListNetValidParams {
    /// [`ListNetParams::train`]; the report holds the epochs kept (`epochs`), the diagnostics the validation curve.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let fit = self.train(train, ctx)?;
        Ok(self.fitted(fit))
    }
}

/// One query's gradient of the cross-entropy against the linear target P_y(j) = R_j / Σ R (the doubly robust
/// set's): Σ_j (P_s(j) − P_y(j)) x_j, added to `g` scaled by `scale`. A query whose labels sum to 0 adds nothing
/// (its weight is 0).
fn linear_target_gradient(q: &ltr_data::QueryView<'_>, s: &[f64], scale: f64, g: &mut [f64]) {
    let labels = q.labels();
    let sum: f64 = labels.iter().map(|&y| f64::from(y)).sum();
    if sum <= 0.0 {
        return;
    }
    top_one_gradient(q, s, scale, g, |i| f64::from(labels[i]) / sum);
}

/// The top-one cross-entropy Σ_q −Σ_j P_y(j) log P_s(j), P_y ∝ exp(grade) (`linear`: P_y = grade / Σ grades),
/// P_s = softmax(scores), summed exactly over the queries of every rank (so the backtracking decisions do not
/// depend on how the queries are split).
fn listnet_loss(
    train: &Dataset,
    w: &[f64],
    weights: Option<&[f64]>,
    linear: bool,
    comm: &dyn Allreduce,
) -> Result<f64> {
    let scores = train.scores(w);
    let mut total = ExactVec::new(1);
    for (q, r) in train.query_offsets().windows(2).enumerate() {
        let (s, y) = (&scores[r[0]..r[1]], &train.labels()[r[0]..r[1]]);
        let log_z = log_sum_exp(s.iter().copied());
        let target: Vec<f64> = if linear {
            let sum: f64 = y.iter().map(|&g| f64::from(g)).sum();
            y.iter()
                .map(|&g| if sum > 0.0 { f64::from(g) / sum } else { 0.0 })
                .collect()
        } else {
            let log_zy = log_sum_exp(y.iter().map(|&g| g as f64));
            y.iter().map(|&g| (g as f64 - log_zy).exp()).collect()
        };
        let loss = s
            .iter()
            .zip(&target)
            .map(|(&si, &ti)| -ti * (si - log_z))
            .sum::<f64>()
            * weights.map_or(1.0, |qw| qw[q]);
        total.add(0, loss);
    }
    comm.sum_exact(&mut total)?;
    Ok(total.value(0))
}

fn log_sum_exp(v: impl Iterator<Item = f64> + Clone) -> f64 {
    let m = v.clone().fold(f64::NEG_INFINITY, f64::max);
    m + v.map(|x| (x - m).exp()).sum::<f64>().ln()
}
