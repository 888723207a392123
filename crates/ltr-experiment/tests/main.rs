//! ltr-experiment's integration tests: experiments and their plots.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-experiment --test integration <module>::`.
//!
//! `unit` holds the tests of the library's modules (one file per module of `src/`), which lived under
//! `#[cfg(test)]` there: the library is compiled once in `cargo test --all-targets` (its root is
//! `#![cfg(not(test))]`), not a second time as a unit-test harness.

mod clicks;
mod experiment;
mod plot_default;
mod unit;
