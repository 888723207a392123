//! The self-describing, versioned model file: JSON for people, postcard binary for speed; always written atomically.

use std::collections::BTreeMap;
use std::path::Path;

use std::borrow::Cow;

use ltr_data::{Dataset, Preprocess};
use serde::{Deserialize, Serialize};

use crate::error::{LtrError, Result};
use crate::learner::FitReport;
use crate::model::Model;
use crate::scorer::Scorer;

/// Version of the model file layout. Version 1 (before the typed [`FitReport`]) and version 2 (before the stored
/// [`Preprocess`]) files still load; any other version is refused with a clear error.
pub const MODEL_FORMAT_VERSION: u32 = 3;
// pub for the tests in tests/unit/model_file.rs; not API.
#[doc(hidden)]
pub const BINARY_MAGIC: &[u8; 8] = b"LTRMODEL";

/// What the model was trained on.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TrainingSummary {
    /// Training file (as given).
    pub train_file: String,
    /// Validation file, if any.
    pub validation_file: Option<String>,
    /// Training queries.
    pub queries: usize,
    /// Training documents.
    pub documents: usize,
    /// Training features.
    pub features: usize,
    /// Seed used.
    pub seed: u64,
    /// Wall time of training in seconds.
    pub seconds: f64,
}

/// A model with everything needed to know where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    /// [`MODEL_FORMAT_VERSION`] at writing time.
    pub format_version: u32,
    /// Version of the `ltr` crates that wrote it.
    pub crate_version: String,
    /// Algorithm name as given to `ltr train --algo`.
    pub algorithm: String,
    /// Hyperparameters in effect (after grid selection).
    pub params: BTreeMap<String, String>,
    /// Feature count of the training data.
    pub n_features: usize,
    /// Training data summary.
    pub training: TrainingSummary,
    /// Algorithm-specific diagnostics as JSON text (e.g. MHR hyperplane cosines), empty when none.
    pub diagnostics_json: String,
    /// The scoring function.
    pub model: Model,
    /// What training found out (iterations, objective, settings chosen on validation).
    #[serde(default)]
    pub fit: FitReport,
    /// The preprocessing fitted on the training data, applied to any data before scoring.
    #[serde(default)]
    pub preprocess: Option<Preprocess>,
    /// Names of the raw features (index k names file feature k + 1), when given at training time.
    #[serde(default)]
    pub feature_names: Vec<String>,
}

/// The layout of format version 2 (no stored preprocessing).
#[derive(Deserialize)]
struct ModelFileV2 {
    format_version: u32,
    crate_version: String,
    algorithm: String,
    params: BTreeMap<String, String>,
    n_features: usize,
    training: TrainingSummary,
    diagnostics_json: String,
    model: Model,
    fit: FitReport,
}

impl From<ModelFileV2> for ModelFile {
    fn from(v: ModelFileV2) -> Self {
        Self {
            format_version: v.format_version,
            crate_version: v.crate_version,
            algorithm: v.algorithm,
            params: v.params,
            n_features: v.n_features,
            training: v.training,
            diagnostics_json: v.diagnostics_json,
            model: v.model,
            fit: v.fit,
            preprocess: None,
            feature_names: Vec::new(),
        }
    }
}

/// The layout of format version 1 (no `fit` report: chosen settings were mixed into `params`).
#[derive(Deserialize)]
struct ModelFileV1 {
    format_version: u32,
    crate_version: String,
    algorithm: String,
    params: BTreeMap<String, String>,
    n_features: usize,
    training: TrainingSummary,
    diagnostics_json: String,
    model: Model,
}

/// Version 1 is version 2 without a fit report.
impl From<ModelFileV1> for ModelFileV2 {
    fn from(v: ModelFileV1) -> Self {
        Self {
            format_version: v.format_version,
            crate_version: v.crate_version,
            algorithm: v.algorithm,
            params: v.params,
            n_features: v.n_features,
            training: v.training,
            diagnostics_json: v.diagnostics_json,
            model: v.model,
            fit: FitReport::default(),
        }
    }
}

impl ModelFile {
    /// Wrap a model with its provenance.
    pub fn new(
        algorithm: &str,
        params: BTreeMap<String, String>,
        training: TrainingSummary,
        model: Model,
    ) -> Self {
        Self {
            format_version: MODEL_FORMAT_VERSION,
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            algorithm: algorithm.to_string(),
            params,
            // The model's own width when the summary does not say (a program's `TrainingSummary::default()`).
            n_features: training.features.max(model.n_features()),
            training,
            diagnostics_json: String::new(),
            model,
            fit: FitReport::default(),
            preprocess: None,
            feature_names: Vec::new(),
        }
    }

    /// Save atomically: JSON when the path ends in `.json`, compact binary (postcard) otherwise.
    pub fn save(&self, path: &Path) -> Result<()> {
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        let bytes = self.encode(is_json, path)?;
        ltr_data::write_atomic(path, |w| w.write_all(&bytes))?;
        Ok(())
    }

    /// The bytes [`ModelFile::save`] writes: pretty JSON when `json`, else the compact binary form (what the Python
    /// package pickles).
    pub fn to_bytes(&self, json: bool) -> Result<Vec<u8>> {
        self.encode(json, Path::new("<memory>"))
    }

    fn encode(&self, json: bool, path: &Path) -> Result<Vec<u8>> {
        Ok(if json {
            serde_json::to_vec_pretty(self)
                .map_err(|e| model_err(path, format!("cannot encode: {e}")))?
        } else {
            let mut b = BINARY_MAGIC.to_vec();
            b.extend_from_slice(&MODEL_FORMAT_VERSION.to_le_bytes());
            b.extend(
                postcard::to_stdvec(self)
                    .map_err(|e| model_err(path, format!("cannot encode: {e}")))?,
            );
            b
        })
    }

    /// Load a model file of either form, checking the format version.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes =
            std::fs::read(path).map_err(|e| model_err(path, format!("cannot read: {e}")))?;
        Self::decode(&bytes, path)
    }

    /// A model from the bytes of a model file of either form (checked as [`ModelFile::load`] checks a file);
    /// `origin` names them in errors.
    pub fn from_bytes(bytes: &[u8], origin: &str) -> Result<Self> {
        Self::decode(bytes, Path::new(origin))
    }

    fn decode(bytes: &[u8], path: &Path) -> Result<Self> {
        let mf: ModelFile = if let Some(rest) = bytes.strip_prefix(BINARY_MAGIC.as_slice()) {
            if rest.len() < 4 {
                return Err(model_err(path, "truncated model file".into()));
            }
            let v = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
            check_version(path, v)?;
            let corrupt =
                |e: postcard::Error| model_err(path, format!("corrupt binary model: {e}"));
            if v == 1 {
                ModelFileV2::from(postcard::from_bytes::<ModelFileV1>(&rest[4..]).map_err(corrupt)?)
                    .into()
            } else if v == 2 {
                postcard::from_bytes::<ModelFileV2>(&rest[4..])
                    .map_err(corrupt)?
                    .into()
            } else {
                postcard::from_bytes(&rest[4..]).map_err(corrupt)?
            }
        } else {
            #[derive(Deserialize)]
            struct Probe {
                format_version: u32,
            }
            let probe: Probe = serde_json::from_slice(bytes).map_err(|e| {
                model_err(
                    path,
                    format!("not an ltr model file (neither binary nor JSON): {e}"),
                )
            })?;
            check_version(path, probe.format_version)?;
            serde_json::from_slice(bytes)
                .map_err(|e| model_err(path, format!("invalid JSON model: {e}")))?
        };
        if let Some(problem) = mf.inconsistency() {
            return Err(model_err(path, format!("inconsistent model: {problem}")));
        }
        Ok(mf)
    }

    /// Why this model cannot be used, if its parts disagree (files are data: a hand-edited or corrupt one must be
    /// refused at load, not fail while scoring).
    fn inconsistency(&self) -> Option<String> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        let width = self.model.n_features();
        let problem = match &self.model {
            Model::Linear(m) => (!finite(&m.weights)).then(|| "a weight is not finite".to_string()),
            Model::Aggregate(a) => {
                if a.members.is_empty() {
                    Some("an aggregate without members".into())
                } else if a.members.len() != a.weights.len() {
                    Some(format!(
                        "{} members but {} member weights",
                        a.members.len(),
                        a.weights.len()
                    ))
                } else if let Some(p) = markov_problem(&a.method) {
                    Some(p)
                } else if !finite(&a.weights) || a.weights.iter().any(|w| *w < 0.0) {
                    Some("a member weight is negative or not finite".into())
                } else if a
                    .members
                    .iter()
                    .any(|m| m.weights.len() != width || !finite(&m.weights))
                {
                    Some("members differ in width or hold a weight that is not finite".into())
                } else {
                    None
                }
            }
            Model::Stumps(e) => e
                .stumps
                .iter()
                .find(|s| s.feature >= e.n_features || !s.alpha.is_finite() || s.threshold.is_nan())
                .map(|s| {
                    format!(
                        "weak ranker on column {} of {} is malformed",
                        s.feature, e.n_features
                    )
                }),
            Model::Trees(t) => t.trees.iter().enumerate().find_map(|(k, tree)| {
                tree.inconsistency(t.n_features)
                    .map(|p| format!("tree {k}: {p}"))
            }),
            Model::Forest(f) => f.inconsistency(),
            Model::Boosted(b) => b.inconsistency(),
            Model::Neural(n) => n.inconsistency(),
        };
        if problem.is_some() {
            return problem;
        }
        // Data up to `n_features` wide is accepted for scoring, so the model must have an input for each.
        if width < self.n_features && self.preprocess.is_none() {
            return Some(format!(
                "the model has {width} inputs but the file accepts data with {} features",
                self.n_features
            ));
        }
        let p = self.preprocess.as_ref()?;
        if let Some(problem) = p.inconsistency() {
            return Some(problem);
        }
        let staged = p.features.as_ref().map_or(p.raw_features, Vec::len);
        (staged != width).then(|| {
            format!("the preprocessing yields {staged} features but the model has {width} inputs")
        })
    }

    /// The data as the model sees it: `ds` itself, or its preprocessed copy when the model stores a preprocessing.
    pub fn prepare<'d>(&self, ds: &'d Dataset) -> Result<Cow<'d, Dataset>> {
        Ok(match &self.preprocess {
            Some(p) => Cow::Owned(p.apply(ds)?),
            None => Cow::Borrowed(ds),
        })
    }

    /// The raw feature (1-based, file numbering) and its name for each model input column: through the stored
    /// feature selection, named by `feature_names` or `f<k>`.
    pub fn input_features(&self) -> Vec<(usize, String)> {
        let width = self.model.n_features();
        (0..width)
            .map(|j| {
                let raw = self
                    .preprocess
                    .as_ref()
                    .and_then(|p| p.features.as_ref())
                    .map_or(j + 1, |f| f[j]);
                (raw, self.feature_name(raw))
            })
            .collect()
    }

    /// The name of raw feature `feature` (1-based, file numbering): its `feature_names` entry, or `f<feature>` when
    /// it has none or an empty one (a blank line of a one-name-per-line file leaves its feature unnamed).
    pub fn feature_name(&self, feature: usize) -> String {
        feature
            .checked_sub(1)
            .and_then(|i| self.feature_names.get(i))
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("f{feature}"))
    }

    /// Scores of raw data `ds` (one per document, file order): preprocessing, then the model.
    pub fn score_raw(&self, ds: &Dataset) -> Result<Vec<f64>> {
        let prepared = self.prepare(ds)?;
        Ok(self.model.score_dataset(prepared.as_ref()))
    }

    /// What a front end says before scoring in `precision`: [`crate::neural::bf16::PORTABLE_WARNING`] or
    /// [`crate::neural::int8::PORTABLE_WARNING`] when a neural model's reduced-precision products would run in
    /// portable code (no tiles for them on this CPU), else nothing.
    pub fn precision_warning(&self, precision: Precision) -> Option<&'static str> {
        if !matches!(self.model, Model::Neural(_)) {
            return None;
        }
        match precision {
            Precision::Full => None,
            Precision::Bf16 => (!crate::neural::bf16::tiles_available())
                .then_some(crate::neural::bf16::PORTABLE_WARNING),
            Precision::Int8 => (!crate::neural::int8::tiles_available())
                .then_some(crate::neural::int8::PORTABLE_WARNING),
        }
    }

    /// [`ModelFile::score_raw`] in the arithmetic `precision` names: [`Precision::Bf16`] and [`Precision::Int8`]
    /// run an MLP's hidden-layer products in bfloat16 ([`crate::neural::Bf16Net`]) or 8-bit integers
    /// ([`crate::neural::Int8Net`]) and are refused for any other kind of model.
    pub fn score_raw_with(&self, ds: &Dataset, precision: Precision) -> Result<Vec<f64>> {
        match (precision, &self.model) {
            (Precision::Full, _) => self.score_raw(ds),
            (Precision::Bf16, Model::Neural(net)) => {
                let prepared = self.prepare(ds)?;
                Ok(net.to_bf16().score_dataset(prepared.as_ref()))
            }
            (Precision::Int8, Model::Neural(net)) => {
                let prepared = self.prepare(ds)?;
                Ok(net.to_int8().score_dataset(prepared.as_ref()))
            }
            (_, other) => Err(LtrError::Param {
                name: "precision".into(),
                problem: format!(
                    "`{}` applies to neural models (`--algo neural`); this model is {}, which scores in its \
                     own arithmetic only (use `full`)",
                    precision.name(),
                    kind_of(other)
                ),
            }),
        }
    }

    /// Check that `ds` can be scored by this model: the data may not have more features than the model knows.
    pub fn check_data(&self, ds: &Dataset, data_path: &str) -> Result<()> {
        let known = self
            .preprocess
            .as_ref()
            .map_or(self.n_features, |p| p.raw_features);
        if ds.n_features() > known {
            return Err(LtrError::Shape(format!(
                "the model was trained on {} features but {data_path} has {}; use a model trained on data of this width",
                known,
                ds.n_features()
            )));
        }
        Ok(())
    }
}

/// The Markov chain's power iteration must be bounded: a corrupt file with an enormous cap and a zero tolerance would
/// run for ever on every query (found by fuzzing).
fn markov_problem(method: &crate::Aggregation) -> Option<String> {
    const MAX_POWER_ITERATIONS: usize = 10_000;
    match *method {
        crate::Aggregation::MarkovMc4 {
            teleport,
            max_iter,
            tol,
        } if !(0.0..=1.0).contains(&teleport)
            || max_iter > MAX_POWER_ITERATIONS
            || !(tol.is_finite() && tol >= 0.0) =>
        {
            Some(format!(
                "Markov aggregation needs teleport in [0, 1], at most {MAX_POWER_ITERATIONS} iterations and a finite tolerance (teleport {teleport}, {max_iter} iterations, tolerance {tol:e})"
            ))
        }
        _ => None,
    }
}

fn check_version(path: &Path, v: u32) -> Result<()> {
    if !(1..=MODEL_FORMAT_VERSION).contains(&v) {
        return Err(model_err(
            path,
            format!("model format version {v}, this build reads versions 1 to {MODEL_FORMAT_VERSION}; retrain the model"),
        ));
    }
    Ok(())
}

fn model_err(path: &Path, problem: String) -> LtrError {
    LtrError::Model {
        path: path.to_path_buf(),
        problem,
    }
}

/// The arithmetic [`ModelFile::score_raw_with`] scores in (`ltr predict --precision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// The model's own arithmetic, as trained and exported (f32 networks, f64 linear and tree models).
    #[default]
    Full,
    /// An MLP's hidden-layer products in bfloat16 with f32 sums ([`crate::neural::Bf16Net`]): about twice the
    /// documents a second on AMD Zen 4's AVX-512 BF16, slower than f32 on the Intel Xeon measured, and about 100
    /// times slower in the portable code that runs without AVX-512 BF16 (the same scores:
    /// [`crate::neural::bf16::PORTABLE_WARNING`]); each score moves by about 1e-3 of the scores' scale. Neural
    /// models only.
    Bf16,
    /// An MLP's hidden-layer products in 8-bit integers, dynamically quantized ([`crate::neural::Int8Net`]): about
    /// 1.8 times the documents a second of `full` with AVX2 (BENCHMARKS.md, "Scoring in 8-bit integers"), the
    /// same scores in slower portable code without it ([`crate::neural::int8::PORTABLE_WARNING`]); each score moves
    /// by about 1e-2 of the scores' scale. Neural models only.
    Int8,
}

impl Precision {
    /// The precision called `name` (`full`, `bf16`, `int8`).
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "full" => Some(Self::Full),
            "bf16" | "bfloat16" => Some(Self::Bf16),
            "int8" => Some(Self::Int8),
            _ => None,
        }
    }

    /// The name [`Precision::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Bf16 => "bf16",
            Self::Int8 => "int8",
        }
    }
}

/// What kind of model `m` is, in words (for errors).
fn kind_of(m: &Model) -> &'static str {
    match m {
        Model::Linear(_) => "a linear model",
        Model::Aggregate(_) => "an aggregate of linear models",
        Model::Stumps(_) => "a RankBoost ensemble",
        Model::Trees(_) | Model::Forest(_) => "a tree ensemble",
        Model::Boosted(_) => "trees boosted from another model",
        Model::Neural(_) => "a neural network",
    }
}
