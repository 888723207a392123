//! [`Model`]: every kind of trained scoring function, as one serialisable type. Learners produce it
//! (`learner.rs`), model files store it (`model_file.rs`); it depends on neither.

use ltr_data::{Dataset, QueryView};
use serde::{Deserialize, Serialize};

use crate::aggregate::RankAggregate;
use crate::boosted;
use crate::forest::Forest;
use crate::neural::NeuralNet;
use crate::scorer::{LinearModel, Scorer, StumpEnsemble, TreeEnsemble};

/// A trained scoring function of any kind the workspace produces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Model {
    /// A single linear function (perceptrons, RankSVM, RSVM-IR, sigmoid, ListNet, SLAM, committee "A").
    Linear(LinearModel),
    /// Several linear functions whose rankings are aggregated (committee "B", MHR).
    Aggregate(RankAggregate),
    /// Threshold weak rankers (RankBoost).
    Stumps(StumpEnsemble),
    /// Regression trees (RankLib MART/LambdaMART models read for evaluation).
    Trees(TreeEnsemble),
    /// A flat tree ensemble trained here (`lambdamart`, `mart`, `random-forest`). Appended last: postcard encodes
    /// the variant by its index, so files of the earlier variants read as before.
    Forest(Forest),
    /// Trees boosted from another model's scores (`lambdamart`/`mart` with `init-model` or `init-algo`). Appended
    /// after `Forest` for the same reason.
    Boosted(boosted::Boosted<Model>),
    /// A feed-forward network (`neural`, crate `ltr-neural`). Appended after `Boosted` for the same reason.
    Neural(NeuralNet),
}

impl Model {
    /// Whether it scores a NaN feature value as a missing value: a [`Forest`] (trained here by `lambdamart`, `mart`
    /// or `random-forest`, or read from LightGBM or XGBoost) sends it down the side each split learned, and a
    /// [`Boosted`](boosted::Boosted) model does when its start model does. To the others a NaN is no value (a
    /// linear score becomes NaN; a RankLib tree's `v <= t` sends it right by accident), so callers refuse it.
    pub fn takes_missing_values(&self) -> bool {
        match self {
            Model::Forest(_) => true,
            Model::Boosted(b) => b.init.model.takes_missing_values(),
            Model::Linear(_)
            | Model::Aggregate(_)
            | Model::Stumps(_)
            | Model::Trees(_)
            | Model::Neural(_) => false,
        }
    }
}

impl Scorer for Model {
    fn score_query(&self, q: &QueryView<'_>, out: &mut [f64]) {
        match self {
            Model::Linear(m) => m.score_query(q, out),
            Model::Aggregate(m) => m.score_query(q, out),
            Model::Stumps(m) => m.score_query(q, out),
            Model::Trees(m) => m.score_query(q, out),
            Model::Forest(m) => m.score_query(q, out),
            Model::Boosted(m) => m.score_query(q, out),
            Model::Neural(m) => m.score_query(q, out),
        }
    }
    fn n_features(&self) -> usize {
        match self {
            Model::Linear(m) => m.n_features(),
            Model::Aggregate(m) => m.n_features(),
            Model::Stumps(m) => m.n_features(),
            Model::Trees(m) => m.n_features(),
            Model::Forest(m) => m.n_features(),
            Model::Boosted(m) => m.n_features(),
            Model::Neural(m) => m.n_features(),
        }
    }
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        match self {
            Model::Linear(m) => m.score_dataset(ds),
            Model::Aggregate(m) => m.score_dataset(ds),
            Model::Stumps(m) => m.score_dataset(ds),
            Model::Trees(m) => m.score_dataset(ds),
            Model::Forest(m) => m.score_dataset(ds),
            Model::Boosted(m) => m.score_dataset(ds),
            Model::Neural(m) => m.score_dataset(ds),
        }
    }
}
