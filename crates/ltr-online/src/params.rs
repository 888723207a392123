//! The online learners' settings as one checked parameter struct: [`OnlineParams::learner`] builds a fresh
//! [`OnlineRanker`], and [`Fit`] replays the training data through it as a stream (the online form of the learner
//! contract).

use ltr_core::{Fit, FitContext, FitReport, Fitted, LinearModel, LtrError, Model, Result};
use ltr_data::Dataset;

use crate::learners::{
    Eta, OnlineListNet, OnlineRanker, PredictTies, PureOnline, Rml, SlamPerceptron,
};
use crate::runner::{replay, StreamConfig};
use crate::slam::{Margin, Measure, Violators};

/// Which online algorithm, with its own settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OnlineAlgorithm {
    /// Seed 002's Algorithm 1.
    SlamPerceptron {
        /// The measure of the mistake test and the surrogate's weights (NDCG@k or AP).
        measure: Rml,
        /// Average the surrogate weights over tied grades.
        tie_average: bool,
        /// Margin of the surrogate.
        margin: Margin,
        /// Worst violator (the paper) or mean violator (extension).
        violators: Violators,
    },
    /// Seed 002's Algorithm 2.
    PureOnline {
        /// The measure whose loss scales the step.
        measure: Rml,
    },
    /// Top-one ListNet updated every round.
    ListNet,
}

/// Settings of an online learner and of the stream it learns from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OnlineParams {
    /// The algorithm.
    algorithm: OnlineAlgorithm,
    /// Step sizes η_t.
    eta: Eta,
    /// Tie order of the predicted ranking.
    ties: PredictTies,
    /// Passes over the training data.
    passes: usize,
    /// Each query is kept in a pass with this probability.
    keep_probability: f64,
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl OnlineParams {
    /// Set `algorithm`: the algorithm.
    pub fn algorithm(mut self, algorithm: OnlineAlgorithm) -> Self {
        self.algorithm = algorithm;
        self
    }
    /// Set `eta`: step sizes η_t.
    pub fn eta(mut self, eta: Eta) -> Self {
        self.eta = eta;
        self
    }
    /// Set `ties`: tie order of the predicted ranking.
    pub fn ties(mut self, ties: PredictTies) -> Self {
        self.ties = ties;
        self
    }
    /// Set `passes`: passes over the training data.
    pub fn passes(mut self, passes: usize) -> Self {
        self.passes = passes;
        self
    }
    /// Set `keep_probability`: each query is kept in a pass with this probability.
    pub fn keep_probability(mut self, keep_probability: f64) -> Self {
        self.keep_probability = keep_probability;
        self
    }
}

ltr_core::param_guard!(OnlineParams => OnlineValidParams);

impl OnlineParams {
    /// The SLAM perceptron with the authors' defaults (NDCG@10, relevance-scaled margin, η_t = 1/√t).
    pub fn slam_ndcg() -> Self {
        Self {
            algorithm: OnlineAlgorithm::SlamPerceptron {
                measure: Rml::Ndcg(10),
                tie_average: true,
                margin: Margin::RelevanceScaled(1.0),
                violators: Violators::Worst,
            },
            eta: Eta::InvSqrt(1.0),
            ties: PredictTies::ReverseInput,
            passes: 1,
            keep_probability: 1.0,
        }
    }

    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if self.passes == 0 {
            return Err(LtrError::param("passes", "must be at least 1"));
        }
        if !(0.0..=1.0).contains(&self.keep_probability) {
            return Err(LtrError::param("keep", "must be in [0, 1]"));
        }
        let eta0 = match self.eta {
            Eta::Constant(e) | Eta::InvSqrt(e) => e,
        };
        if !(eta0 > 0.0 && eta0.is_finite()) {
            return Err(LtrError::param("eta0", "must be a positive number"));
        }
        Ok(())
    }

    /// A fresh learner with zero weights over `d` features.
    pub fn learner(&self, d: usize) -> Box<dyn OnlineRanker + Send> {
        match self.algorithm {
            OnlineAlgorithm::SlamPerceptron {
                measure,
                tie_average,
                margin,
                violators,
            } => Box::new(SlamPerceptron {
                rml: measure,
                surrogate: match measure {
                    Rml::Ap => Measure::Ap,
                    Rml::Ndcg(_) => Measure::Ndcg,
                },
                tie_average,
                margin,
                eta: self.eta,
                ties: self.ties,
                violators,
                ..SlamPerceptron::ndcg(d)
            }),
            OnlineAlgorithm::PureOnline { measure } => Box::new(PureOnline {
                rml: measure,
                eta: self.eta,
                ties: self.ties,
                ..PureOnline::new(d)
            }),
            OnlineAlgorithm::ListNet => Box::new(OnlineListNet {
                eta: self.eta,
                ..OnlineListNet::new(d)
            }),
        }
    }

    /// The stream protocol of these settings.
    pub fn stream(&self, seed: u64) -> StreamConfig {
        StreamConfig {
            passes: self.passes,
            keep_probability: self.keep_probability,
            seed,
            k: 10,
            ties: self.ties,
        }
    }
}

impl Fit for OnlineValidParams {
    /// Replay `train` (in file order, subsampled with the context's seed) through a fresh learner. The report
    /// holds the rounds; the diagnostics the final average cumulative NDCG@10 and its curve (200 points).
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let mut learner = self.learner(train.n_features());
        let res = replay(learner.as_mut(), &[train], &self.stream(ctx.seed()));
        let last = res.average_cumulative.last().copied().unwrap_or(0.0);
        let step = (res.average_cumulative.len() / 200).max(1);
        let curve: Vec<f64> = res
            .average_cumulative
            .iter()
            .step_by(step)
            .copied()
            .collect();
        let report = FitReport {
            iterations: Some(res.per_round.len() as u64),
            ..Default::default()
        };
        Ok(
            Fitted::new(Model::Linear(LinearModel::new(learner.weights().to_vec())))
                .with_report(report)
                .with_diagnostics(
                    serde_json::json!({"average_cumulative_ndcg10": last, "average_cumulative_ndcg10_every": step, "curve": curve}),
                ),
        )
    }
}
