//! The unit tests of `src/`'s modules, one file each (`algorithms_svm` is `src/algorithms/svm.rs`), here rather
//! than under `cfg(test)` in `src/` so that `cargo test --all-targets` compiles the library once (its root is
//! `#![cfg(not(test))]`).

mod algorithms_neural;
mod algorithms_svm;
mod job;
mod memory;
