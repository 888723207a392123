//! ltr-experiment's integration tests: experiments and their plots.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-experiment --test integration <module>::`.

mod experiment;
mod plot_default;
