//! Integration tests of `ltr-neural`: the losses against allRank and finite differences, training; and the unit
//! tests of the library's modules (`unit`), which live here rather than under `cfg(test)` in `src/` so that
//! `cargo test --all-targets` compiles the library once (its root is `#![cfg(not(test))]`).
mod attention;
mod batch_norm;
mod common;
mod losses;
mod memory;
mod training;
mod unit;
