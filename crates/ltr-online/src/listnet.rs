//! Batch top-one ListNet (Cao et al. 2007): stochastic gradient steps query by query over several epochs, the
//! epoch count chosen on validation data. A baseline of seed 003 and a seed model for the sigmoid meta-ranker.

use ltr_core::{
    BestSoFar, Fit, FitContext, FitReport, Fitted, LinearModel, LtrError, Model, Result,
};
use ltr_data::Dataset;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::learners::listnet_gradient;

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
}

impl Default for ListNetParams {
    fn default() -> Self {
        Self {
            epochs: 100,
            learning_rate: 0.1,
            select_epochs: true,
            shuffle: true,
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
        Ok(())
    }
}

ltr_core::param_guard!(ListNetParams);

/// A trained ListNet (the [`Fit`] impl turns it into a [`Fitted`]).
#[derive(Debug, Clone)]
pub struct ListNetFit {
    /// The model.
    pub model: LinearModel,
    /// Epoch kept.
    pub epochs_used: usize,
    /// Validation metric per epoch (empty without validation).
    pub curve: Vec<f64>,
}

impl ListNetParams {
    /// Train, measuring every epoch on the context's validation data.
    pub fn train(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<ListNetFit> {
        let validation = ctx.validation();
        if self.epochs == 0 || !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(LtrError::param(
                "epochs/learning-rate",
                "need epochs >= 1 and a positive learning rate",
            ));
        }
        let mut w = vec![0.0; train.n_features()];
        let mut order: Vec<usize> = (0..train.n_queries()).collect();
        let mut rng =
            rand_chacha::ChaCha8Rng::seed_from_u64(if self.shuffle { ctx.seed() } else { 0 });
        let mut curve = Vec::new();
        let mut best = BestSoFar::new();
        ctx.progress().begin("epochs", Some(self.epochs as u64));
        let mut s = Vec::new();
        for e in 1..=self.epochs {
            if self.shuffle {
                order.shuffle(&mut rng);
            }
            for &qi in &order {
                let q = train.query(qi);
                s.resize(q.len(), 0.0);
                q.scores_into(&w, &mut s);
                listnet_gradient(&q, &s, -self.learning_rate, &mut w);
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
            },
            None => ListNetFit {
                model: LinearModel::new(w),
                epochs_used: self.epochs,
                curve,
            },
        })
    }
}

impl Fit for ListNetParams {
    /// [`ListNetParams::train`]; the report holds the epochs kept (`epochs`), the diagnostics the validation curve.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let fit = self.train(train, ctx)?;
        let report = FitReport {
            iterations: Some(self.epochs as u64),
            validation: fit.curve.get(fit.epochs_used.wrapping_sub(1)).copied(),
            ..Default::default()
        }
        .select("epochs", fit.epochs_used);
        Ok(Fitted::new(Model::Linear(fit.model))
            .with_report(report)
            .with_diagnostics(serde_json::json!({"validation_curve": fit.curve})))
    }
}
