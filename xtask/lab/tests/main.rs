//! `xtask-lab`'s integration tests, one binary: workspace hygiene (`tidy`), the fuzzers' inputs replayed
//! (`fuzz_regressions`), the staleness check of `results/` (`results_slice`), and the tests of the library's modules
//! (`bench_report`, `compare_results`, `download`, `experiments`, `places`, `reproduce_online`, `slice_compare`; shared setup in `common`), which live here rather than under `cfg(test)` in
//! `src/` so that the library is compiled once (Cargo.toml, `[lib]`).

mod bench_report;
mod common;
mod compare_results;
#[cfg(feature = "download")]
mod download;
mod experiments;
mod fuzz_regressions;
mod places;
mod reproduce_online;
mod results_slice;
mod slice_compare;
mod tidy;
