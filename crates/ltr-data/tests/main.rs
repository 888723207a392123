//! ltr-data's integration tests: reading, writing and checking LETOR data.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-data --test integration <module>::`.

mod bad_inputs;
mod real_data;
