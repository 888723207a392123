//! ltr-export's integration tests: exports to engines and formats, and imports of other libraries' models.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-export --test integration <module>::`.
//!
//! `unit` holds the tests of the library's modules (one file per module of `src/`), which lived under
//! `#[cfg(test)]` there: the library is compiled once in `cargo test --all-targets` (its root is
//! `#![cfg(not(test))]`), not a second time as a unit-test harness.

mod common;
mod imports;
mod onnx;
mod ranklib_models;
mod reference_scorers;
mod trees;
mod unit;
mod vespa_onnx;
