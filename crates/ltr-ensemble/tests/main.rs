//! ltr-ensemble's integration tests, one binary: MHR, the sigmoid meta-ranker and RankBoost (`ensemble`), and the
//! unit tests of the library's modules (`unit`), which live here rather than under `cfg(test)` in `src/` so that
//! `cargo test --all-targets` compiles the library once (its root is `#![cfg(not(test))]`).

mod ensemble;
mod unit;
