//! `xtask-lab`'s integration tests, one binary: workspace hygiene (`tidy`), the fuzzers' inputs replayed
//! (`fuzz_regressions`) and the staleness check of `results/` (`results_slice`).

mod fuzz_regressions;
mod results_slice;
mod tidy;
