//! ltr-learn's integration tests: the registry, the `TrainJob` and distributed training.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-learn --test integration <module>::`.

mod clicks;
mod common;
mod debias;
mod distributed;
mod dla;
mod doubly_robust;
mod registry;
mod ties;
mod tree_invariance;
mod unit;
mod web_data;
