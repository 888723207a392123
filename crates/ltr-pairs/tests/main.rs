//! ltr-pairs' integration tests, one binary: the O(n log n) objective against its explicit sums (`objective`) and
//! the unit tests of the library's modules (`unit`), which live here rather than under `cfg(test)` in `src/` so that
//! `cargo test --all-targets` compiles the library once (its root is `#![cfg(not(test))]`).

mod objective;
mod unit;
