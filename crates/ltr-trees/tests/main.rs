//! ltr-trees's integration tests: the tree engine, position debiasing, boosting from a start model, ranks and
//! MQ2008.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-trees --test integration <module>::`.

mod common;
mod debias;
mod engine;
mod init;
mod lightgbm;
mod mq2008;
mod ranks;
mod ties;
