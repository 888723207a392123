//! The types of an experiment: [`Experiment`] (checked, its folds loaded), what each cell leaves
//! ([`CellRecord`]) and what a run did ([`Outcome`]). `run.rs` fills them, `report.rs` reads them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ltr_data::PreprocessSpec;
use ltr_learn::Grid;
use ltr_metrics::{Convention, Metric, TestKind};
use serde::{Deserialize, Serialize};

use crate::folds::ExperimentFold;
use crate::spec::ExperimentSpec;

/// What one cell (one method on one fold) leaves: the setting kept, its timings and its test scores. Metrics are
/// computed from the scores when the report is written, so asking for another metric retrains nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellRecord {
    /// Fold number.
    pub fold: usize,
    /// Method label.
    pub label: String,
    /// Registry name of the algorithm.
    pub algo: String,
    /// The setting kept (chosen on validation when a grid was given).
    pub params: BTreeMap<String, String>,
    /// Every setting tried with its validation score (empty without validation).
    pub grid: Vec<GridPoint>,
    /// Validation score of the kept setting, when there was validation data.
    pub validation: Option<f64>,
    /// Seconds of `ltr_learn::train` (preprocessing, every grid setting, the validation passes).
    pub train_seconds: f64,
    /// Seconds to score the test set with the model file (stored preprocessing included).
    pub predict_seconds: f64,
    /// One score per test document, in the fold's test-set order.
    pub test_scores: Vec<f64>,
}

/// One setting of a grid and its validation score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridPoint {
    /// `name=value …`.
    pub setting: String,
    /// The validation metric (absent when not finite).
    pub validation: Option<f64>,
}

/// An experiment ready to run: its description checked, its data loaded and split.
#[derive(Debug)]
pub struct Experiment {
    pub(crate) spec: ExperimentSpec,
    pub(crate) labels: Vec<String>,
    pub(crate) grids: Vec<Grid>,
    /// For each method, the model of a `model:FILE` method (scored, never trained); `None` for a trained one.
    pub(crate) fixed: Vec<Option<FixedModel>>,
    pub(crate) folds: Vec<ExperimentFold>,
    pub(crate) metric: Metric,
    pub(crate) convention: Convention,
    pub(crate) report_metrics: Vec<Metric>,
    pub(crate) tests: Vec<TestKind>,
    pub(crate) baseline: usize,
    pub(crate) preprocess: PreprocessSpec,
    pub(crate) fingerprint: String,
    /// Each fold's click log (`data.clicks`), when the methods learn from clicks.
    pub(crate) click_logs: Option<crate::click_logs::FoldClickLogs>,
}

/// A `model:FILE` method's model, loaded once by `ltr_export::load_model` (what `ltr predict` reads).
#[derive(Debug)]
pub(crate) struct FixedModel {
    pub(crate) model: ltr_core::ModelFile,
    /// A hash of the file's bytes: the cell key's identity of the model, whatever path names it.
    pub(crate) hash: String,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Every cell, fold-major in method order.
    pub cells: Vec<CellRecord>,
    /// Cells trained by this run.
    pub computed: usize,
    /// Cells read back from an earlier run.
    pub reused: usize,
    /// The report.
    pub report: PathBuf,
}
