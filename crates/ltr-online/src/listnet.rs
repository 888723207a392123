//! Batch top-one ListNet (Cao et al. 2007): stochastic gradient steps query by query over several epochs, the
//! epoch count chosen on validation data. A baseline of seed 003 and a seed model for the sigmoid meta-ranker.

use ltr_core::{LinearModel, LtrError, Result, Scorer};
use ltr_data::Dataset;
use ltr_metrics::{evaluate_mean, Convention, Metric};
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::learners::listnet_gradient;

/// Batch ListNet settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ListNetParams {
    /// Epochs at most.
    pub epochs: usize,
    /// Learning rate of each per-query step.
    pub learning_rate: f64,
    /// Choose the epoch on validation.
    pub select_epochs: bool,
    /// Query order: shuffled per epoch with this seed (None: file order).
    pub shuffle: Option<u64>,
    /// Validation metric.
    pub metric: Metric,
    /// Its convention.
    pub convention: Convention,
}

impl Default for ListNetParams {
    fn default() -> Self {
        Self {
            epochs: 100,
            learning_rate: 0.1,
            select_epochs: true,
            shuffle: Some(1),
            metric: Metric::Ndcg(Some(10)),
            convention: Convention::STANDARD,
        }
    }
}

/// A trained ListNet.
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
    /// Train.
    pub fn fit(&self, train: &Dataset, validation: Option<&Dataset>) -> Result<ListNetFit> {
        if self.epochs == 0 || !(self.learning_rate > 0.0 && self.learning_rate.is_finite()) {
            return Err(LtrError::param(
                "epochs/learning-rate",
                "need epochs >= 1 and a positive learning rate",
            ));
        }
        let mut w = vec![0.0; train.n_features()];
        let mut order: Vec<usize> = (0..train.n_queries()).collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(self.shuffle.unwrap_or(0));
        let mut curve = Vec::new();
        let mut best: Option<(f64, usize, Vec<f64>)> = None;
        let mut s = Vec::new();
        for e in 1..=self.epochs {
            if self.shuffle.is_some() {
                order.shuffle(&mut rng);
            }
            for &qi in &order {
                let q = train.query(qi);
                s.resize(q.len(), 0.0);
                q.scores_into(&w, &mut s);
                listnet_gradient(&q, &s, -self.learning_rate, &mut w);
            }
            if let (true, Some(v)) = (self.select_epochs, validation) {
                let m = LinearModel::new(w.clone());
                let val = evaluate_mean(v, &m.score_dataset(v), self.metric, &self.convention)
                    .map_err(|e| LtrError::Training(e.to_string()))?;
                curve.push(val);
                if best.as_ref().is_none_or(|b| val > b.0) {
                    best = Some((val, e, w.clone()));
                }
            }
        }
        Ok(match best {
            Some((_, e, bw)) => ListNetFit {
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
