//! Export `ltr` models to the engines that serve rankings: the Elasticsearch and OpenSearch LTR plugins, Solr LTR,
//! Vespa and RankLib, and to ONNX (a `TreeEnsembleRegressor` or a linear graph, for onnxruntime).
//!
//! A model is first reduced to a [`LinearForm`]: one term per raw feature (its file number and name), a weight, and
//! the normaliser the engine must apply to the raw value (none, standard or min-max), read off the preprocessing
//! stored in the model. Each [`Target`] then writes that form in the engine's own format. What no engine can compute
//! — per-query normalisation, `log1p`, rank aggregates (Borda, median, Markov) — is refused with the reason and what
//! to train instead.
//!
//! ```
//! use ltr_core::{LinearModel, Model, ModelFile, TrainingSummary};
//! use ltr_export::{export, ExportOptions, Target};
//!
//! let mut model = ModelFile::new(
//!     "ranksvm",
//!     Default::default(),
//!     TrainingSummary { features: 2, ..Default::default() },
//!     Model::Linear(LinearModel::new(vec![0.5, -1.0])),
//! );
//! model.feature_names = vec!["bm25".into(), "pagerank".into()];
//! let out = export(&model, Target::RankLib, &ExportOptions::default()).unwrap();
//! assert!(out.model.ends_with("1:0.5 2:-1\n"));
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness (an explicit target
// selection ignores `test = false`), which would compile every module a second time. The unit tests are modules
// of the integration binary instead (`tests/unit/`), which links the library (CONTRIBUTING.md, "CI time").
#![cfg(not(test))]
#![deny(missing_docs)]

// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
pub mod foreign_tree;
// pub for the tests in tests/unit/forest.rs; not API.
#[doc(hidden)]
#[allow(missing_debug_implementations)] // `Cut`, one split's threshold, has no use for `Debug`.
pub mod forest;
mod formats;
mod import;
mod import_lightgbm;
mod import_xgboost;
mod linear;
mod onnx;
mod onnx_encoder;
// Generated from ONNX's onnx-ml.proto3 by tools/onnx-proto: the schema's own names, undocumented here.
#[allow(
    missing_docs,
    missing_debug_implementations,
    clippy::all,
    clippy::pedantic
)]
mod onnx_pb;
mod ranklib;
mod target;
// pub for the tests in tests/unit/trees.rs; not API.
#[doc(hidden)]
pub mod trees;
// pub for the tests in tests/unit/ubjson.rs; not API.
#[doc(hidden)]
pub mod ubjson;
mod vespa_onnx;

pub use formats::export;
pub use import::{
    is_foreign_model, is_model_file, load_model, model_width, score_loaded, score_loaded_with,
};
pub use import_lightgbm::{read_lightgbm, read_lightgbm_json, LIGHTGBM_OBJECTIVES};
pub use import_xgboost::{read_xgboost, read_xgboost_ubjson, XGBOOST_OBJECTIVES};
pub use linear::{linear_form, LinearForm, Normalizer, Term};
pub use ranklib::{read_ranklib, widen_to};
pub use target::{EsModel, ExportOptions, Exported, MissingPolicy, Target};
pub use trees::{raw_stumps, RawStump};

/// Why a model cannot be exported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The model (or its preprocessing) uses something the target cannot compute.
    #[error("{target} cannot run this model: {reason}")]
    Unsupported {
        /// The target format.
        target: String,
        /// Why, and what to train instead.
        reason: String,
    },
    /// A bad option.
    #[error("{0}")]
    Option(String),
    /// A model file that cannot be read.
    #[error("{file}: {problem}")]
    Read {
        /// The file.
        file: String,
        /// What is wrong (with the line where known).
        problem: String,
    },
    /// An `ltr` model file that cannot be loaded (the loader's message, naming the file).
    #[error("{0}")]
    Model(String),
}

/// Result of this crate.
pub type Result<T> = std::result::Result<T, ExportError>;
