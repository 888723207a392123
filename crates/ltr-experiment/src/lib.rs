//! The experiment engine behind `ltr experiment` and `cargo xtask reproduce`: compare learners on the user's own
//! judged data — k folds split by query from one file, or a LETOR fold folder — with grids chosen on validation,
//! paired significance tests against a baseline and a report.
//!
//! An experiment is an [`ExperimentSpec`] (TOML, so a run is repeatable and reviewable). [`Experiment::prepare`]
//! checks it and loads the folds; [`Experiment::run`] trains every (fold × method) cell through the `ltr-learn`
//! registry — the same path as `ltr train` then `ltr predict` — in parallel, checkpoints each cell in a [`Cells`]
//! store as it finishes (a killed run resumes with nothing finished recomputed) and writes `report.md`,
//! `report.html`, `results.json`, `results.csv` and SVG plots. A method `model:FILE` is a model trained elsewhere
//! (anything `ltr_export::load_model` reads): it is not trained, it scores each fold's test set as `ltr predict`
//! does. With `data.clicks` each fold's methods learn from its click log (`ltr train --clicks`), reading the
//! sessions of the fold's training queries, and are judged on its judged test set; a method with `judged = true`
//! learns from the judgments.
//!
//! ```
//! use ltr_experiment::{DataSpec, Experiment, ExperimentSpec, MethodSpec};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let data = dir.path().join("all.txt");
//! # let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig { queries: 30, seed: 5, ..Default::default() })?;
//! # ltr_data::write_letor(&ds, &data)?;
//! let spec = ExperimentSpec::new(
//!     DataSpec::file(&data, 3),
//!     vec![MethodSpec::parse("ranksvm:c=0.1,1")?, MethodSpec::parse("rankboost:rounds=50")?],
//! );
//! let outcome = Experiment::prepare(spec)?.run(&dir.path().join("out"), &ltr_core::Silent)?;
//! assert_eq!(outcome.computed, 6); // 3 folds × 2 methods
//! assert!(outcome.report.is_file());
//! # Ok(()) }
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness (an explicit target
// selection ignores `test = false`), which would compile every module a second time. The unit tests are modules
// of the integration binary instead (`tests/unit/`), which links the library (CONTRIBUTING.md, "CI time").
#![cfg(not(test))]
#![deny(missing_docs)]

mod cells;
mod click_logs;
mod error;
mod experiment;
mod folds;
// pub for the tests in tests/unit/html.rs; not API.
#[doc(hidden)]
pub mod html;
mod plot;
mod report;
mod run;
mod spec;

pub use cells::{CellOrigin, Cells};
pub use error::{ExperimentError, Result};
pub use experiment::{CellRecord, Experiment, GridPoint, Outcome};
pub use folds::{carve_validation, load_folds, stratified_kfold, ExperimentFold};
pub use plot::{bar_chart, line_chart, line_chart_styled, palette, ChartStyle, Series};
pub use report::{md_table, mean, Comparison};
pub use spec::{split_names, DataSpec, ExperimentSpec, MethodSpec};
