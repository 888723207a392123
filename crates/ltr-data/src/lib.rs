//! # ltr-data
//!
//! Learning-to-rank datasets: documents grouped by query, with their relevance labels and features.
//! This crate reads and writes LETOR / SVMlight text, stores features dense ([`ndarray::Array2`]) or sparse
//! ([`sprs`] CSR), normalises them, splits them into folds, caches them in a checked binary form, and generates
//! synthetic data.
//!
//! ```
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 10, seed: 7, ..Default::default() }).unwrap();
//! assert_eq!(ds.n_queries(), 10);
//! // Score every document of every query with a weight vector, in parallel over queries.
//! let w = vec![1.0; ds.n_features()];
//! let per_query: Vec<f64> = ds.queries().map(|q| (0..q.len()).map(|i| q.row(i).dot(&w)).sum()).collect();
//! assert_eq!(per_query.len(), 10);
//! ```
//!
//! Reading a file: [`read_letor`] (or [`read_letor_with`] and [`ParseOptions`]). A query is a contiguous run of
//! one `qid`; a qid that reappears later is an error by default ([`RepeatedQid`]). Every parse error names the
//! file, the line, the token and what was expected ([`DataError::Parse`]).
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness (an explicit target
// selection ignores `test = false`), which would compile every module a second time. The unit tests are modules
// of the integration binary instead (`tests/unit/`), which links the library (CONTRIBUTING.md, "CI time").
#![cfg(not(test))]
#![deny(missing_docs)]

mod cache;
mod dataset;
mod error;
mod exact_sum;
mod folds;
mod generate;
mod generate_web;
mod generate_web_raw;
mod load;
mod parse;
mod preprocess;
mod simd;
mod transform;
mod web_world;
mod write;

pub use cache::{load_cache, read_cached, save_cache, CACHE_FORMAT_VERSION};
pub use dataset::{
    dot_dense, ClickWeighting, Dataset, DatasetSummary, FeatureMatrix, QueryView, Row, RowEntries,
    SparseMatrix, Storage, TextColumn, AUTO_DENSE_DENSITY,
};
pub use error::{DataError, Result};
pub use exact_sum::{
    add_query_transpose_times, exact_sum_over, exact_sum_over_queries, exact_transpose_times,
    ExactVec, TransposeScratch, LIMBS_PER_VALUE,
};
pub use folds::{
    kfold_queries, letor_folds, load_letor_folds, split_by_queries, LetorFold, LoadedFold,
    QuerySplit,
};
pub use generate::{
    generate_judged_run, generate_letor_like, generate_slam_stream, SyntheticConfig,
    SLAM_SIM_RELEVANCE,
};
pub use generate_web::{generate_web, WebConfig};
pub use generate_web_raw::{generate_web_raw, WebRawConfig};
pub use load::read_dataset;
pub use parse::{
    default_block_size, extract_docid, read_group_file, read_letor, read_letor_with, NullPolicy,
    ParseOptions, QueryFile, RepeatedQid,
};
pub use preprocess::{
    read_feature_names, Local, Normalization, NormalizeKind, Preprocess, PreprocessSpec,
    StatsReduce,
};
pub use simd::{simd_level, SimdLevel};
pub use transform::{normalize_query_minmax, parse_feature_list, select_features, ZScore};
pub use write::{write_atomic, write_letor, write_letor_to, write_scores};

// pub for the tests in tests/unit/ (the library's unit tests, moved there so that it compiles once); not API.
#[doc(hidden)]
pub use {
    dataset::{dot_dense_rows, dot_sparse},
    exact_sum::TIER_ADDS,
    generate_web::{LINK_SCORE, TITLE_MATCH},
    parse::{short_decimal, split_sub_chunks},
};
