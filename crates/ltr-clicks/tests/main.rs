//! ltr-clicks' integration tests: click models against PyClick and by hand.
//!
//! One module per file of tests/, all in one test binary. One module alone:
//! `cargo test -p ltr-clicks --test integration <module>::`.

mod click_models;
mod em_recovery;
mod estimate;
mod interleaving;
mod pyclick;
mod readers;
