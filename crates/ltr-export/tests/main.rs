//! ltr-export's integration tests: exports to engines and formats, and imports of other libraries' models.
//!
//! One module per file of tests/, all in one test binary: a binary per file was compiled and linked on its
//! own, minutes of CI in all. One module alone: `cargo test -p ltr-export --test integration <module>::`.

mod common;
mod imports;
mod onnx;
mod ranklib_models;
mod reference_scorers;
mod trees;
