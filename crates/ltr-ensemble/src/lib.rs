//! # ltr-ensemble
//!
//! Learners that combine or refine other rankers:
//! - [`MhrParams`]: the Multiple Hyperplane Ranker (Qin et al., SIGIR 2007 — seed 001), one RankSVM per grade pair,
//!   aggregated by BordaCount, weighted BordaCount, median rank or an MC4 Markov chain;
//! - [`SigmoidParams`]: the sigmoid meta-ranker (Carvalho et al., LR4IR 2008 — seed 003), which refines any linear seed;
//! - [`RankBoostParams`]: RankBoost (Freund et al. 2003), the seeds' boosting baseline.
//!
//! ```
//! use ltr_core::{Fit, FitContext, Model, ParamGuard};
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//! use ltr_ensemble::MhrParams;
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 20, grades: 3, seed: 5, ..Default::default() }).unwrap();
//! let fit = MhrParams::default().check().unwrap().fit(&ds, &FitContext::new(1)).unwrap();
//! let Model::Aggregate(mhr) = &fit.model else { panic!("MHR aggregates") };
//! assert_eq!(mhr.members.len(), 3); // (2,1), (2,0), (1,0)
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness, which would compile
// every module again; the unit tests live in the integration binary instead (`tests/unit/`).
#![cfg(not(test))]
#![deny(missing_docs)]

mod mhr;
mod rankboost;
// pub for the tests in tests/unit/sigmoid.rs; not API.
#[doc(hidden)]
pub mod sigmoid;

pub use mhr::{
    tune_weights, BaseLearner, GradePairs, MhrDiagnostics, MhrFit, MhrParams, MhrValidParams,
    TuneOn,
};
pub use rankboost::{RankBoostFit, RankBoostParams, RankBoostValidParams};
pub use sigmoid::{
    pairwise_score_histogram, sigmoid, SigmoidFit, SigmoidParams, SigmoidStep, SigmoidValidParams,
};
