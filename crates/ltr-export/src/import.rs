//! Recognising model files by their content and loading any of them ([`load_model`]): `ltr` models, RankLib
//! ensembles, LightGBM and XGBoost models (read into an exact forest by `foreign_tree.rs`).

use std::path::Path;

use ltr_core::{ModelFile, Precision};
use ltr_data::Dataset;

use crate::foreign_tree::bad;
use crate::{ExportError, Result};

/// What kind of foreign model `bytes` hold, judged by their content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    LightGbmText,
    /// A UBJSON object (XGBoost's `save_model("m.ubj")`): `{` then a key's length marker, where JSON has
    /// whitespace, `"` or `}`.
    Ubjson,
    /// A JSON document that is not an `ltr` model: XGBoost, a LightGBM dump, or something else.
    Json,
}

fn kind(bytes: &[u8]) -> Option<Kind> {
    if bytes.starts_with(b"tree\nversion=") || bytes.starts_with(b"tree\r\nversion=") {
        return Some(Kind::LightGbmText);
    }
    if let [b'{', b'i' | b'U' | b'I' | b'l' | b'L' | b'$' | b'#', ..] = bytes {
        return Some(Kind::Ubjson);
    }
    let rest = bytes.trim_ascii_start().strip_prefix(b"{")?;
    // `ltr` writes `format_version` first; anything else is parsed and told apart by its keys.
    let rest = rest.trim_ascii_start();
    (!rest.starts_with(b"\"format_version\"")).then_some(Kind::Json)
}

/// Whether the start of a file (a few hundred bytes are enough) looks like a LightGBM model (text, or the JSON of
/// `dump_model()`) or an XGBoost model (JSON or UBJSON), which [`load_model`] reads.
pub fn is_foreign_model(head: &[u8]) -> bool {
    match kind(head) {
        Some(Kind::LightGbmText) => true,
        Some(Kind::Ubjson) => head.windows(7).any(|w| w == b"learner"),
        Some(Kind::Json) => {
            let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
            text.contains("\"learner\"") || text.contains("\"tree_info\"") || {
                let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
                squeezed.contains("\"name\":\"tree\"")
            }
        }
        None => false,
    }
}

/// Whether `path` holds a model [`load_model`] reads, judged by its first 4 KiB: an `ltr` model (binary or JSON), a
/// RankLib ensemble or linear model, or a LightGBM/XGBoost model ([`is_foreign_model`]). `ltr inspect` uses it to
/// tell a model from a data file.
pub fn is_model_file(path: &Path) -> bool {
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 4096];
    let n = std::io::Read::read(&mut f, &mut head).unwrap_or(0);
    let head = &head[..n];
    let text = String::from_utf8_lossy(head);
    head.starts_with(b"LTRMODEL")
        || text.contains("\"format_version\"")
        || [
            "## Coordinate Ascent",
            "## AdaRank",
            "## MART",
            "## LambdaMART",
            "## Random Forests",
        ]
        .iter()
        .any(|h| text.starts_with(h))
        || is_foreign_model(head)
}

/// A model file of any kind this crate reads, told apart by content: an `ltr` model, a RankLib model (its first
/// line starts with `##`), a LightGBM model (text from `save_model`, or the JSON of `dump_model()`) or an XGBoost
/// model (`save_model("m.json")`, or `save_model("m.ubj")` in UBJSON).
pub fn load_model(path: &Path) -> Result<ModelFile> {
    let source = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| bad(&source, format!("cannot read: {e}")))?;
    match kind(&bytes) {
        Some(Kind::LightGbmText) => {
            let text = std::str::from_utf8(&bytes)
                .map_err(|_| bad(&source, "a LightGBM model must be UTF-8 text"))?;
            crate::import_lightgbm::read_lightgbm(text, &source)
        }
        Some(Kind::Ubjson) => crate::import_xgboost::read_xgboost_ubjson(&bytes, &source),
        Some(Kind::Json) => {
            let v: serde_json::Value = serde_json::from_slice(&bytes)
                .map_err(|e| bad(&source, format!("invalid JSON: {e}")))?;
            if v.get("learner").is_some() {
                crate::import_xgboost::from_value(&v, &source)
            } else if v.get("tree_info").is_some() {
                crate::import_lightgbm::from_json_value(&v, &source)
            } else {
                crate::ranklib::load_model(path)
            }
        }
        None => crate::ranklib::load_model(path),
    }
}

/// The number of raw features a loaded model reads: the input width of its stored preprocessing, else its own.
pub fn model_width(model: &ModelFile) -> usize {
    model
        .preprocess
        .as_ref()
        .map_or(model.n_features, |p| p.raw_features)
}

/// Scores of `ds` by a model from [`load_model`], one per document in file order — what `ltr predict` writes: a
/// RankLib model is widened to the data ([`crate::widen_to`]), data wider than the model is refused and the stored
/// preprocessing applied. `data` names the data in errors.
pub fn score_loaded(model: &mut ModelFile, ds: &Dataset, data: &str) -> Result<Vec<f64>> {
    score_loaded_with(model, ds, data, Precision::Full)
}

/// [`score_loaded`] in the arithmetic `precision` names (`ltr predict --precision`; [`Precision::Bf16`] for neural
/// models only, with a warning where it runs in portable code: [`ltr_core::neural::bf16::PORTABLE_WARNING`]).
pub fn score_loaded_with(
    model: &mut ModelFile,
    ds: &Dataset,
    data: &str,
    precision: Precision,
) -> Result<Vec<f64>> {
    if let Some(warning) = model.precision_warning(precision) {
        tracing::warn!("{warning}");
    }
    crate::widen_to(model, ds.n_features());
    model
        .check_data(ds, data)
        .and_then(|()| model.score_raw_with(ds, precision))
        .map_err(|e| ExportError::Model(e.to_string()))
}
