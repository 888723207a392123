//! # ltr-neural
//!
//! Neural rankers on feature vectors, as allRank (Pobrotyn et al. 2020) and PT-Ranking train them:
//! - the scorer is [`ltr_core::NeuralNet`] — optional input layer normalisation, hidden layers (width, activation,
//!   layer normalisation, dropout in training), optionally allRank's self-attention encoder over the documents of a
//!   query ([`NeuralParams::blocks`], `encoder.rs`), and a linear output; with no hidden layer, the linear model;
//! - the losses ([`Loss`]) are each one function of a query's scores and labels that returns the loss and its
//!   gradient, written from the papers with allRank's conventions and checked against allRank's autograd;
//! - training ([`NeuralParams`]) runs Adam or AdamW with a per-epoch schedule over batches of whole queries,
//!   keeps the epoch best on validation and stops early.
//!
//! The forward and backward passes are written by hand over `Vec<f32>` (`net.rs`); ARCHITECTURE.md has the
//! measurements (build time, speed, determinism) that chose this over candle and burn.
//!
//! ```
//! use ltr_core::{Fit, FitContext, ParamGuard};
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//! use ltr_neural::{Loss, NeuralParams};
//!
//! let train = generate_letor_like(&SyntheticConfig { queries: 20, ..Default::default() }).unwrap();
//! let params = NeuralParams::default()
//!     .sizes(vec![16])
//!     .loss(Loss::parse("listnet").unwrap())
//!     .epochs(3)
//!     .check()
//!     .unwrap();
//! let fitted = params.fit(&train, &FitContext::new(1)).unwrap();
//! assert!(matches!(fitted.model, ltr_core::Model::Neural(_)));
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness, which would compile
// every module again; the unit tests live in the integration binary instead (`tests/unit/`).
#![cfg(not(test))]
#![deny(missing_docs)]

// pub for the tests in tests/unit/dense.rs; not API.
#[doc(hidden)]
pub mod dense;
mod dla;
// pub for the tests in tests/unit/encoder.rs; not API.
#[doc(hidden)]
pub mod encoder;
mod loss_value;
// pub for the tests in tests/unit/losses.rs; not API.
#[doc(hidden)]
pub mod losses;
mod memory;
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
pub mod net;
mod neural_sort;
mod optim;
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
pub mod step;
mod train;

pub use dla::NeuralDla;
pub use losses::{LambdaScheme, Loss, QueryLoss, Reduction, EPS};
pub use memory::NeuralMemory;
pub use optim::{Optimizer, Schedule};
pub use step::{loss_and_gradient, loss_and_gradient_in_pieces, update_batch_norm_statistics};
pub use train::{NeuralParams, NeuralValidParams};
