//! The unit tests of `src/`'s modules, one file each (`trec_join` is `src/trec/join.rs`), here rather than under
//! `cfg(test)` in `src/` so that `cargo test --all-targets` compiles the library once (its root is
//! `#![cfg(not(test))]`).

mod asked;
mod bounds;
mod evaluate;
mod fusion;
mod metric;
mod multiple_format;
mod rank;
mod runs;
mod significance;
mod trec_join;
mod trec_number;
mod trec_read;
mod trec_stream;
mod treceval_input;
