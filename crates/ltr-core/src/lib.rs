//! # ltr-core
//!
//! The vocabulary every learner shares, so that no learner crate depends on a sibling just for a type:
//! the [`Scorer`] trait, [`LinearModel`], the versioned [`ModelFile`], rank aggregation
//! ([`aggregate`](aggregate::aggregate): BordaCount, BordaFuse, median rank, Markov chain MC4), and [`Params`],
//! the strict hyperparameter map behind `ltr train --param k=v`.
//!
//! ```
//! use ltr_core::{LinearModel, Scorer};
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 5, ..Default::default() }).unwrap();
//! let model = LinearModel::new(vec![0.5; ds.n_features()]);
//! let scores = model.score_dataset(&ds); // one score per document, in file order
//! assert_eq!(scores.len(), ds.n_docs());
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness, which would compile
// every module again; the unit tests live in the integration binary instead (`tests/unit/`).
#![cfg(not(test))]
#![deny(missing_docs)]

mod aggregate;
pub mod boosted;
mod collective;
mod compiled_forest;
mod error;
mod forest;
mod learner;
mod model;
// pub for the tests in tests/unit/model_file.rs; not API.
#[doc(hidden)]
pub mod model_file;
mod model_summary;
pub mod neural;
mod params;
mod scorer;
pub mod test_hold;

pub use aggregate::{aggregate, positions, Aggregation, RankAggregate};
/// Trees boosted from a start [`Model`]'s scores (see [`boosted::Boosted`]).
pub type Boosted = boosted::Boosted<Model>;
/// The [`Model`] boosting started from, with its preprocessing (see [`boosted::InitModel`]).
pub type InitModel = boosted::InitModel<Model>;
pub use collective::{check_parts, Allreduce, SingleProcess, ThreadGroup};
pub use compiled_forest::CompiledForest;
pub use error::{print_error_line, LtrError, Result};
pub use forest::{Forest, ForestTree};
pub use learner::{
    best_by_validation, stage, Best, BestSoFar, EpochObserver, Fit, FitContext, FitDistributed,
    FitReport, FitWith, Fitted, Measure, ParamGuard, Progress, Silent, WarmStarts,
};
pub use model::Model;
pub use model_file::{ModelFile, Precision, TrainingSummary, MODEL_FORMAT_VERSION};
pub use neural::NeuralNet;
pub use params::{compact_number, Params};
pub use scorer::{LinearModel, Scorer, Stump, StumpEnsemble, Tree, TreeEnsemble, TreeNode};
