//! ltr-clicks' integration tests: click models against PyClick and by hand.
//!
//! One module per file of tests/, all in one test binary. One module alone:
//! `cargo test -p ltr-clicks --test integration <module>::`.
//!
//! `unit` holds the tests of the library's modules (one file per module of `src/`), which lived under
//! `#[cfg(test)]` there: the library is compiled once in `cargo test --all-targets` (its root is
//! `#![cfg(not(test))]`), not a second time as a unit-test harness.

mod click_models;
mod common;
mod dr_paper;
mod em_recovery;
mod estimate;
mod interleaving;
mod pyclick;
mod readers;
mod unit;
