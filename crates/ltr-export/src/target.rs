//! Where a model goes and how ([`Target`], [`ExportOptions`]), and what comes out ([`Exported`]): the types every
//! writer (`formats.rs` for linear models and RankLib trees, `forest.rs` for tree ensembles) shares.

use crate::{ExportError, Result};

/// Where a model goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The Elasticsearch LTR plugin (`POST _ltr/_featureset/<set>/_createmodel`, `model/linear`).
    EsLtr,
    /// The OpenSearch LTR plugin (the same request and format as Elasticsearch's).
    OpenSearchLtr,
    /// Solr LTR: an `org.apache.solr.ltr.model.LinearModel` (`PUT /solr/<core>/schema/model-store`) and a
    /// feature-store skeleton.
    SolrLtr,
    /// Vespa: a rank profile whose first phase is the linear expression.
    Vespa,
    /// RankLib: a Coordinate Ascent model file (`-load`), normalisers folded into the weights; tree models as
    /// RankLib's LambdaMART/MART ensemble XML.
    RankLib,
    /// ONNX: a binary `ModelProto` that onnxruntime scores (`features` float32 [N, F] → `scores` [N, 1]); tree
    /// models as an `ai.onnx.ml` `TreeEnsembleRegressor`, linear models as `MatMul` with the stored normalisation.
    Onnx,
    /// Elasticsearch 8's own learning to rank (`PUT _ml/trained_models/<name>`: a `tree_ensemble` with a
    /// `learning_to_rank` inference config); tree models only.
    Es8Ltr,
}

impl Target {
    /// Every target with its command-line name.
    pub const ALL: [(&'static str, Target); 6] = [
        ("es-ltr", Target::EsLtr),
        ("opensearch-ltr", Target::OpenSearchLtr),
        ("solr-ltr", Target::SolrLtr),
        ("vespa", Target::Vespa),
        ("ranklib", Target::RankLib),
        ("onnx", Target::Onnx),
    ];

    /// Targets that take only tree models (`lambdamart`, `mart`, `random-forest`), with their command-line names.
    pub const TREES_ONLY: [(&'static str, Target); 1] = [("es8-ltr", Target::Es8Ltr)];

    fn every() -> impl Iterator<Item = &'static (&'static str, Target)> {
        Self::ALL.iter().chain(Self::TREES_ONLY.iter())
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        Self::every()
            .find(|(_, t)| *t == self)
            .map(|(n, _)| *n)
            .expect("every target is listed")
    }
}

impl std::str::FromStr for Target {
    type Err = ExportError;
    fn from_str(s: &str) -> Result<Self> {
        Self::every()
            .find(|(n, _)| n.eq_ignore_ascii_case(s))
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::every().map(|(n, _)| *n).collect();
                ExportError::Option(format!(
                    "unknown export target `{s}`; use one of {}",
                    names.join(", ")
                ))
            })
    }
}

/// Options of [`export`](crate::export).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportOptions {
    /// The model's name in the engine.
    pub name: String,
    /// The feature set (Elasticsearch/OpenSearch) or feature store (Solr) the model's features live in.
    pub feature_set: String,
    /// Fold the normalisers into the weights instead of writing them (RankLib always folds: it has none).
    pub fold_normalizer: bool,
    /// The Elasticsearch/OpenSearch plugin's model type for tree models.
    pub es_model: EsModel,
    /// What to do when the engine treats a missing feature or a NaN value otherwise than `ltr predict`.
    pub missing: MissingPolicy,
}

/// The Elasticsearch/OpenSearch LTR plugin's model type for a tree model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EsModel {
    /// `model/xgboost+json`: XGBoost's JSON dump, features by name.
    #[default]
    XgboostJson,
    /// `model/ranklib`: RankLib's ensemble XML, features by position in the feature set.
    Ranklib,
}

impl std::str::FromStr for EsModel {
    type Err = ExportError;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "xgboost" | "xgboost+json" | "model/xgboost+json" => Ok(EsModel::XgboostJson),
            "ranklib" | "model/ranklib" => Ok(EsModel::Ranklib),
            _ => Err(ExportError::Option(format!(
                "unknown Elasticsearch/OpenSearch model type `{s}`; use xgboost or ranklib"
            ))),
        }
    }
}

/// What [`export`](crate::export) does when the engine routes a missing feature or a NaN value of a tree model otherwise than
/// `ltr predict` (an absent feature is 0, a NaN follows the split's `default_left`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingPolicy {
    /// Export, and say where they differ in the notes.
    #[default]
    Note,
    /// Refuse to export.
    Strict,
}

impl std::str::FromStr for MissingPolicy {
    type Err = ExportError;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "note" => Ok(MissingPolicy::Note),
            "strict" => Ok(MissingPolicy::Strict),
            _ => Err(ExportError::Option(format!(
                "unknown --missing policy `{s}`; use note or strict"
            ))),
        }
    }
}

impl Default for ExportOptions {
    fn default() -> Self {
        Self {
            name: "ltr_model".into(),
            feature_set: "ltr_features".into(),
            fold_normalizer: false,
            es_model: EsModel::default(),
            missing: MissingPolicy::default(),
        }
    }
}

/// An exported model.
#[derive(Debug, Clone, PartialEq)]
pub struct Exported {
    /// The model in the engine's format (empty when the format is binary: see `binary`).
    pub model: String,
    /// The model's bytes when the format is binary (ONNX).
    pub binary: Option<Vec<u8>>,
    /// Solr's feature-store skeleton (feature names, a placeholder query for each to fill in).
    pub feature_store: Option<String>,
    /// Further files the model needs, as (suffix added to the model file's name, bytes): Vespa's XGBoost JSON
    /// (text) for a tree model, its ONNX graph (binary) for a neural network.
    pub side_files: Vec<(String, Vec<u8>)>,
    /// What the user must know: the request that uploads it, the missing-feature rule, what was folded.
    pub notes: Vec<String>,
}

impl Exported {
    /// What goes into the model file: the binary model, or the text.
    pub fn contents(&self) -> &[u8] {
        self.binary.as_deref().unwrap_or(self.model.as_bytes())
    }
}
