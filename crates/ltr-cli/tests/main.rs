//! ltr-cli's integration tests: the `ltr` command run as a user runs it.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-cli --test integration <module>::`.
//! `tests/mpi.rs` stays a binary of its own: its `mpirun` jobs never share the machine with the other tests
//! (one launch failed beside chromium's processes when they ran together).

mod cli;
mod clicks;
mod clicks_eval;
mod common;
mod compare;
mod debias;
mod distributed;
mod experiment;
mod export;
mod facade;
mod measures;
mod preprocess;
mod report_html;
mod simd_dispatch;
mod trees;
