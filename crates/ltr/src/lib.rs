//! # ltr — learning to rank in Rust
//!
//! One dependency for the whole toolkit: read LETOR / SVMlight data ([`data`]), train any learner of the
//! registry by name ([`learn`]: RankSVM, RankSVM for IR, the committee perceptron, MHR, the sigmoid meta-ranker,
//! RankBoost, ListNet, the online SLAM perceptron …), save and load self-describing model files, score, and
//! evaluate under the conventions of trec_eval and the LETOR scripts ([`metrics`]); learn from click logs
//! ([`clicks`]: simulation, propensities, click training sets).
//!
//! ```
//! use ltr::prelude::*;
//! # let dir = tempfile::tempdir().unwrap();
//! # let (train_file, model_file) = (dir.path().join("train.txt"), dir.path().join("m.bin"));
//! # write_letor(&generate_letor_like(&SyntheticConfig { queries: 30, ..Default::default() }).unwrap(), &train_file).unwrap();
//! // One training run, checked before any data is read, as `ltr train` runs it.
//! TrainJob::builder("committee-perceptron")
//!     .params(&["committee=10"])
//!     .train(TrainData::File(train_file.clone()))
//!     .output(Some(model_file.clone()))
//!     .build()?
//!     .run()?;
//! let model = ModelFile::load(&model_file)?;
//! let train = read_letor(&train_file)?;
//! let scores = model.score_raw(&train)?; // the stored preprocessing, then the model
//! let ndcg = evaluate(&train, &scores, &["NDCG@10".parse()?], &Convention::STANDARD)?;
//! assert!(ndcg.results[0].mean > 0.5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Each learner's own crate (`ltr-svm`, `ltr-perceptron`, `ltr-ensemble`, `ltr-online`, `ltr-listwise`) offers its typed
//! parameters and the [`Fit`](prelude::Fit) contract for users who want one algorithm without the registry.
// Unit tests live in tests/: `cargo test --all-targets` (CI's one build) compiles a unit-test harness of every
// library and binary even when it has no tests, so under `cfg(test)` this crate is empty and that harness is free.
#![cfg(not(test))]
#![deny(missing_docs)]

pub use ltr_clicks as clicks;
pub use ltr_core as core;
pub use ltr_data as data;
pub use ltr_export as export;
pub use ltr_learn as learn;
pub use ltr_metrics as metrics;

/// The names a program needs for read → train by name → save → load → score → evaluate.
pub mod prelude {
    pub use ltr_core::{
        Fit, FitContext, FitReport, FitWith, Fitted, LinearModel, Model, ModelFile, Params, Scorer,
        TrainingSummary,
    };
    pub use ltr_data::{generate_letor_like, read_letor, write_letor, Dataset, SyntheticConfig};
    pub use ltr_learn::{
        algorithms_json, find, train, train_one, Grid, Ranks, TrainData, TrainJob, TrainRequest,
        Trained,
    };
    pub use ltr_metrics::{evaluate, Convention, Metric};
}
