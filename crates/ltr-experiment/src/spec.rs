//! What an experiment is: its data, its methods and how they are judged. Read from and written to TOML so that a
//! run is repeatable and reviewable; `ltr experiment` writes the file it ran into the output folder.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{ExperimentError, Result};

/// One experiment: datasets split into folds, methods trained on each fold, metrics on each fold's test set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentSpec {
    /// Where the folds come from.
    pub data: DataSpec,
    /// The validation metric: grids, epochs and rounds are chosen by it; the report leads with it.
    #[serde(default = "default_metric")]
    pub metric: String,
    /// Evaluator convention of every metric (`standard`, `trec`, `letor3`, `letor4`, `mslr`).
    #[serde(default = "default_convention")]
    pub convention: String,
    /// Metrics reported on the test sets (default: the validation metric, then NDCG@1, @3, @5, @10 and MAP).
    #[serde(default)]
    pub report_metrics: Vec<String>,
    /// The method the others are tested against, by label (default: the first method).
    #[serde(default)]
    pub baseline: Option<String>,
    /// Paired tests run against the baseline over all test queries (`ttest`, `wilcoxon`, `permutation`, `sign`).
    #[serde(default = "default_tests")]
    pub tests: Vec<String>,
    /// Preprocessing fitted on each fold's training data and stored with its model (as `ltr train --normalize`).
    #[serde(default = "default_normalize")]
    pub normalize: String,
    /// Features given a sign-preserving log1p before normalising (`ltr train --log1p`), e.g. `"1-5,12"`.
    #[serde(default)]
    pub log1p: Option<String>,
    /// Seed of training, of the fold split and of the permutation tests.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Write every cell's test scores (`scores/LABEL/foldN.txt`, one per line in the fold's test-file order) and,
    /// for folds split from one file, the test files themselves, so `ltr eval`/`compare` or trec_eval can rerun.
    #[serde(default)]
    pub keep_scores: bool,
    /// The methods compared, in report order.
    #[serde(rename = "algorithm")]
    pub algorithms: Vec<MethodSpec>,
}

/// Where an experiment's folds come from: one file split by query, or a LETOR fold folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSpec {
    /// One LETOR/SVMlight file, split into `folds` parts by query (seeded, stratified by relevant documents).
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// A LETOR fold folder: `Fold1..FoldN/{train,vali,test}.txt`; `vali.txt` may be absent.
    #[serde(default)]
    pub fold_dir: Option<PathBuf>,
    /// Number of folds when splitting `file`.
    #[serde(default = "default_folds")]
    pub folds: usize,
    /// Share of each fold's training queries held out for validation when the fold has no validation file
    /// (0 = no validation: grids are then refused). The default 0.25 gives LETOR's 3:1:1 with 5 folds.
    #[serde(default = "default_validation_share")]
    pub validation_share: f64,
    /// Merge the runs of a qid that reappears later in a file (`--regroup`).
    #[serde(default)]
    pub regroup: bool,
    /// A click log over each fold's training file, as `ltr train --clicks` reads it, `{fold}` in the path standing
    /// for the fold number (`logs/fold{fold}.tsv`); with `file`, one log over the file's queries may serve every
    /// fold. Every method then learns from its fold's log, as the click set its `debias` reads (a method with
    /// `judged = true` from the judgments, a reference row); validation and test stay judged. A fold reads only the
    /// sessions of its own training queries: those of its validation and test queries are skipped, and counted in
    /// the log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clicks: Option<PathBuf>,
    /// The examination probability of each rank for the click logs (`ltr train --propensities`), when their
    /// propensity column is absent or not to be trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propensities: Option<PathBuf>,
}

/// One method: an algorithm of the registry with fixed parameters or grids (chosen on validation per fold), or a
/// model trained elsewhere, `model:FILE` (any file `ltr predict` reads), which scores every fold's test set as it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MethodSpec {
    /// The name in the report (default: the algorithm, or the whole `--algo` text when the algorithm repeats).
    #[serde(default)]
    pub label: Option<String>,
    /// The registry name (`ltr algorithms`), or `model:FILE` for a model that is not trained (relative to the
    /// experiment file's folder in a file).
    pub algo: String,
    /// `name=value` or a grid `name=v1,v2,v3`, as `ltr train --param`.
    #[serde(default)]
    pub params: Vec<String>,
    /// Learn from the fold's judgments although the data names click logs (`data.clicks`): the reference a
    /// click-trained method is measured against.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub judged: bool,
}

/// What starts a method that is a model file rather than an algorithm.
const MODEL_PREFIX: &str = "model:";

fn default_metric() -> String {
    "NDCG@10".into()
}
fn default_convention() -> String {
    "standard".into()
}
fn default_tests() -> Vec<String> {
    vec!["ttest".into(), "wilcoxon".into(), "permutation".into()]
}
fn default_normalize() -> String {
    "auto".into()
}
fn default_seed() -> u64 {
    1
}
fn default_folds() -> usize {
    5
}
fn default_validation_share() -> f64 {
    0.25
}

impl DataSpec {
    /// Split one file into `folds` parts.
    pub fn file(path: impl Into<PathBuf>, folds: usize) -> Self {
        Self {
            file: Some(path.into()),
            fold_dir: None,
            folds,
            validation_share: default_validation_share(),
            regroup: false,
            clicks: None,
            propensities: None,
        }
    }
    /// Use a LETOR fold folder.
    pub fn fold_dir(path: impl Into<PathBuf>) -> Self {
        Self {
            file: None,
            fold_dir: Some(path.into()),
            folds: default_folds(),
            validation_share: default_validation_share(),
            regroup: false,
            clicks: None,
            propensities: None,
        }
    }
}

impl MethodSpec {
    /// Parse the CLI form `NAME[:k=v,k=v1,v2,...]`: after the colon, a piece with `=` starts a parameter and a
    /// piece without one adds a value to the previous parameter's grid (`ranksvm:c=0.01,0.1,1,solver=dual`).
    /// `model:FILE` is a model file as it is, every character after the colon its path.
    pub fn parse(text: &str) -> Result<Self> {
        if let Some(file) = text.trim().strip_prefix(MODEL_PREFIX) {
            if file.is_empty() {
                return Err(ExperimentError::Spec(format!(
                    "--algo `{text}`: no file after `{MODEL_PREFIX}`"
                )));
            }
            return Ok(Self {
                label: None,
                algo: format!("{MODEL_PREFIX}{file}"),
                params: Vec::new(),
                judged: false,
            });
        }
        let (algo, rest) = match text.split_once(':') {
            Some((a, r)) => (a.trim(), Some(r)),
            None => (text.trim(), None),
        };
        if algo.is_empty() {
            return Err(ExperimentError::Spec(format!(
                "--algo `{text}`: no algorithm name before the colon"
            )));
        }
        let mut params: Vec<String> = Vec::new();
        for piece in rest.into_iter().flat_map(|r| r.split(',')) {
            let piece = piece.trim();
            if piece.is_empty() {
                return Err(ExperimentError::Spec(format!(
                    "--algo `{text}`: an empty value between commas"
                )));
            }
            if piece.contains('=') {
                params.push(piece.to_string());
            } else {
                match params.last_mut() {
                    Some(p) => {
                        p.push(',');
                        p.push_str(piece);
                    }
                    None => {
                        return Err(ExperimentError::Spec(format!(
                        "--algo `{text}`: `{piece}` is not `name=value` (write NAME:k=v,k=v1,v2)"
                    )))
                    }
                }
            }
        }
        Ok(Self {
            label: None,
            algo: algo.to_string(),
            params,
            judged: false,
        })
    }

    /// The file of a `model:FILE` method, which is scored as it is rather than trained.
    pub fn model_file(&self) -> Option<&Path> {
        self.algo.strip_prefix(MODEL_PREFIX).map(Path::new)
    }

    /// Point a `model:FILE` method at `file` (the same file by another path), keeping the label it had: its own,
    /// else the `model:FILE` text as first written, so the report and the stored cells keep their names.
    pub(crate) fn set_model_file(&mut self, file: &Path) {
        if self.label.is_none() {
            self.label = Some(self.algo.clone());
        }
        self.algo = format!("{MODEL_PREFIX}{}", file.display());
    }

    /// The CLI form of this method (`NAME:k=v,k=v1,v2`).
    pub fn to_cli(&self) -> String {
        if self.params.is_empty() {
            self.algo.clone()
        } else {
            format!("{}:{}", self.algo, self.params.join(","))
        }
    }
}

impl ExperimentSpec {
    /// An experiment on `data` comparing `algorithms` with every other setting at its default.
    pub fn new(data: DataSpec, algorithms: Vec<MethodSpec>) -> Self {
        Self {
            data,
            metric: default_metric(),
            convention: default_convention(),
            report_metrics: Vec::new(),
            baseline: None,
            tests: default_tests(),
            normalize: default_normalize(),
            log1p: None,
            seed: default_seed(),
            keep_scores: false,
            algorithms,
        }
    }

    /// Read an experiment file. Relative data paths are taken relative to the file's folder.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| ExperimentError::SpecFile {
            path: path.to_path_buf(),
            message: format!("cannot read: {e}"),
        })?;
        let mut spec: Self = toml::from_str(&text).map_err(|e| ExperimentError::SpecFile {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let data = &mut spec.data;
        for p in [
            &mut data.file,
            &mut data.fold_dir,
            &mut data.clicks,
            &mut data.propensities,
        ]
        .into_iter()
        .flatten()
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
        for m in &mut spec.algorithms {
            if let Some(file) = m.model_file().filter(|f| f.is_relative()) {
                let absolute = base.join(file);
                m.set_model_file(&absolute);
            }
        }
        Ok(spec)
    }

    /// The TOML text of this experiment (what `ltr experiment` writes as `experiment.toml`).
    pub fn to_toml(&self) -> Result<String> {
        toml::to_string_pretty(self)
            .map_err(|e| ExperimentError::Spec(format!("cannot write the experiment as TOML: {e}")))
    }

    /// Labels of the methods, in order: the given label, else the algorithm name, else (when an algorithm repeats)
    /// its CLI form. Labels must be unique.
    pub fn labels(&self) -> Result<Vec<String>> {
        let mut out: Vec<String> = Vec::with_capacity(self.algorithms.len());
        for m in &self.algorithms {
            let repeats = self
                .algorithms
                .iter()
                .filter(|o| o.algo == m.algo && o.label.is_none())
                .count()
                > 1;
            let label = match (&m.label, repeats) {
                (Some(l), _) => l.clone(),
                (None, false) => m.algo.clone(),
                (None, true) => m.to_cli(),
            };
            if out.contains(&label) {
                return Err(ExperimentError::Spec(format!(
                    "two methods are both labelled `{label}`; give them different parameters or labels"
                )));
            }
            out.push(label);
        }
        Ok(out)
    }
}

/// Names given as repeated flags, comma lists or both (`--tests t,wilcoxon --tests permutation`), in order, blanks
/// dropped.
///
/// ```
/// let flags = ["t, wilcoxon".to_string(), "permutation,".to_string()];
/// assert_eq!(ltr_experiment::split_names(&flags), ["t", "wilcoxon", "permutation"]);
/// ```
pub fn split_names(items: &[String]) -> Vec<String> {
    items
        .iter()
        .flat_map(|s| s.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}
