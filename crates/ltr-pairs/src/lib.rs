//! # ltr-pairs
//!
//! The pair-construction and query-balancing core shared by every pairwise learner of the workspace:
//!
//! - [`PairSet`]: pairs as row indices grouped by query (all different-label pairs, adjacent grades, one grade pair
//!   for an MHR base ranker, or a seeded sample) — never difference vectors; [`count_pairs_per_query`] and
//!   [`count_pairs_per_grade`] count them without enumerating; [`PairIndex`] numbers them without storing them and
//!   [`PairPermutation`] visits the numbers in a seeded random order (a shuffled epoch in O(documents) memory).
//! - Weights: η_q = 1/|S_q| ([`perceptron_query_steps`], seed 000), μ_q ([`query_weights_mu`], seed 004 §5.3),
//!   τ_(s,t) ([`tau_closed_form`] and the paper's simulation [`tau_monte_carlo`], seed 004 §5.2), or any
//!   [`LevelWeights`] / per-query weights of your own.
//! - [`PairwiseObjective`]: hinge and squared-hinge loss over all weighted pairs, its gradient and Hessian-vector
//!   product, in O(n log n + n·K) per query by sorting scores.
//!
//! ```
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//! use ltr_pairs::{PairLoss, PairScheme, PairSet, PairwiseObjective};
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 8, max_docs: 30, ..Default::default() }).unwrap();
//! let pairs = PairSet::build(&ds, &PairScheme::AllDifferent);
//! let scores = vec![0.0; ds.n_docs()];
//! let obj = PairwiseObjective::new(&ds, PairLoss::Hinge);
//! // At zero scores every pair has margin 1, so the hinge loss counts the pairs.
//! assert_eq!(obj.loss(&scores), pairs.len() as f64);
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness, which would compile
// every module again; the unit tests live in the integration binary instead (`tests/unit/`).
#![cfg(not(test))]
#![deny(missing_docs)]

mod levels;
// pub for the tests in tests/unit/objective.rs; not API.
#[doc(hidden)]
pub mod objective;
mod pair_index;
mod pairset;
mod shared_rows;
mod weights;

pub use levels::{LevelWeights, Levels};
pub use objective::{split_by_offsets, PairLoss, PairwiseObjective, ScoreGradient};
pub use pair_index::{IndexedPair, PairIndex, PairPermutation, PairSlot};
pub use pairset::{
    balanced_query_ranges, count_ordered_pairs, count_ordered_pairs_with, count_pairs_per_grade,
    count_pairs_per_query, Pair, PairScheme, PairSet,
};
pub use shared_rows::SharedRows;
pub use weights::{
    perceptron_query_steps, query_weights_mu, query_weights_mu_of, tau_closed_form,
    tau_closed_form_sums, tau_from_sums, tau_monte_carlo, MissingGrade,
};
