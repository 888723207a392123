//! # ltr-listwise
//!
//! Linear rankers that optimise the IR measure itself rather than a pairwise surrogate:
//! - [`CoordinateAscentParams`]: Coordinate Ascent (Metzler & Croft 2007; RankLib's `-ranker 4`) with an **exact
//!   line search** — along one weight every query's measure is a step function whose steps sit where two
//!   documents swap, so all crossings are swept in order and the best interval taken (`line_search/`);
//! - [`AdaRankParams`]: AdaRank (Xu & Li 2007; RankLib's `-ranker 3`), boosting single-feature rankers on a
//!   distribution over queries;
//! - [`LambdaRankParams`]: a linear model trained with LambdaRank gradients (Burges 2010): RankNet's pair gradient
//!   weighted by |ΔNDCG@k| of the swap, only pairs touching the top k, L2, the epoch chosen on validation;
//! - [`DlaParams`]: the Dual Learning Algorithm (Ai et al. 2018) for a linear ranker: a per-position propensity
//!   tower and the ranker learned together from click sessions, by the listwise (softmax) or LambdaRank loss;
//! - [`ListMeasure`]: the measures this can be done for (NDCG, DCG, MAP, P@k, MRR, ERR under any
//!   `ltr_metrics::Convention`), written as per-position terms so that an exchange of two documents costs O(1).
//!
//! ```
//! use ltr_core::{Fit, FitContext, ParamGuard};
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//! use ltr_listwise::CoordinateAscentParams;
//!
//! let train = generate_letor_like(&SyntheticConfig { queries: 30, ..Default::default() }).unwrap();
//! let params = CoordinateAscentParams::default().restarts(2).check().unwrap();
//! let fitted = params.fit(&train, &FitContext::new(1)).unwrap();
//! assert!(fitted.report.objective.unwrap() > 0.5); // training NDCG@10
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness (an explicit target
// selection ignores `test = false`), which would compile every module a second time. The unit tests are modules
// of the integration binary instead (`tests/unit/`), which links the library (CONTRIBUTING.md, "CI time").
#![cfg(not(test))]
#![deny(missing_docs)]

mod adarank;
mod coordinate_ascent;
// pub for the tests in tests/unit/ (the library's unit tests, moved there so that it compiles once); not API.
// Their state types (sessions, steps, rankings, the line-search problem) have no use for `Debug`.
#[doc(hidden)]
#[allow(missing_debug_implementations)]
pub mod dla;
#[doc(hidden)]
#[allow(missing_debug_implementations)]
pub mod lambdarank;
#[doc(hidden)]
#[allow(missing_debug_implementations)]
pub mod line_search;
#[doc(hidden)]
#[allow(missing_debug_implementations)]
pub mod measure;

pub use adarank::{AdaRankParams, AdaRankValidParams};
pub use coordinate_ascent::{CoordinateAscentParams, CoordinateAscentValidParams, LineSearch};
pub use dla::{dla_propensities, DlaLoss, DlaParams, DlaValidParams};
pub use lambdarank::{LambdaRankParams, LambdaRankValidParams};
pub use line_search::LineExchange;
pub use measure::ListMeasure;
