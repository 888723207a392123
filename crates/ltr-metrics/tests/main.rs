//! ltr-metrics's integration tests: measures against their oracles and many-run statistics, and the unit tests of
//! the library's modules (`unit`), which live here rather than under `cfg(test)` in `src/` so that
//! `cargo test --all-targets` compiles the library once (its root is `#![cfg(not(test))]`).
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-metrics --test integration <module>::`.

mod common;
mod diversity;
mod measures;
mod multiple;
mod oracle;
mod treceval;
mod unit;
