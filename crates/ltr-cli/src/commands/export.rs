//! `ltr export`: a trained model in a search engine's format (Elasticsearch/OpenSearch LTR, Solr LTR, Vespa,
//! RankLib) or as ONNX, with its stored normalisation; the logic is `ltr-export`'s.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_export::{export, ExportOptions, Target};

/// Arguments of `ltr export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The model file (`ltr train --model`).
    #[arg(long)]
    pub model: PathBuf,
    /// es-ltr, opensearch-ltr, solr-ltr, vespa, ranklib or onnx (a binary file); es8-ltr (Elasticsearch 8's
    /// own learning to rank) for lambdamart, mart and random-forest models.
    #[arg(long)]
    pub to: String,
    /// Tree models to es-ltr/opensearch-ltr: `xgboost` (model/xgboost+json, features by name) or `ranklib`
    /// (model/ranklib, features by position).
    #[arg(long, default_value = "xgboost")]
    pub es_model: String,
    /// Tree models: `note` says on stderr where the engine treats a missing feature or a NaN value otherwise than
    /// `ltr predict`; `strict` refuses to export then.
    #[arg(long, default_value = "note")]
    pub missing: String,
    /// Feature names (one per line, or `id name` pairs) when the model has none or others are needed; engines
    /// refer to features by name.
    #[arg(long)]
    pub feature_names: Option<PathBuf>,
    /// The model's name in the engine.
    #[arg(long, default_value = "ltr_model")]
    pub name: String,
    /// The feature set (Elasticsearch/OpenSearch) or feature store (Solr) holding the features.
    #[arg(long, default_value = "ltr_features")]
    pub feature_set: String,
    /// Fold the normalisers into the weights (same ranking, scores shifted by a constant).
    #[arg(long)]
    pub fold_normalizer: bool,
    /// Output file (default: stdout). Solr's feature-store skeleton goes next to it as FILE.feature-store.json,
    /// Vespa's XGBoost model (tree models) as FILE.xgboost.json, Vespa's ONNX graph (neural networks) as FILE.onnx.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Run `ltr export`.
pub fn run(a: ExportArgs) -> Result<()> {
    let target: Target = a.to.parse()?;
    // ltr models, and LightGBM, XGBoost and RankLib models, so that one trained elsewhere goes to any engine.
    let mut model = ltr_export::load_model(&a.model)?;
    if let Some(p) = &a.feature_names {
        model.feature_names = ltr_data::read_feature_names(p)?;
    }
    let opts = ExportOptions {
        name: a.name.clone(),
        feature_set: a.feature_set.clone(),
        fold_normalizer: a.fold_normalizer,
        es_model: a.es_model.parse()?,
        missing: a.missing.parse()?,
    };
    let out = export(&model, target, &opts)
        .with_context(|| format!("exporting {}", a.model.display()))?;
    let mut side: Vec<(&str, &[u8])> = out
        .side_files
        .iter()
        .map(|(suffix, bytes)| (suffix.as_str(), bytes.as_slice()))
        .collect();
    if let Some(store) = &out.feature_store {
        side.insert(0, (".feature-store.json", store.as_bytes()));
    }
    match &a.out {
        Some(path) => {
            ltr_data::write_atomic(path, |w| w.write_all(out.contents()))?;
            for (suffix, bytes) in side {
                let mut p = path.as_os_str().to_owned();
                p.push(suffix);
                let p = PathBuf::from(p);
                ltr_data::write_atomic(&p, |w| w.write_all(bytes))?;
                tracing::info!("also wrote {}", p.display());
            }
        }
        None if !side.is_empty() => bail!(
            "{} writes {} files (the model and {}); give --out FILE",
            target.name(),
            side.len() + 1,
            side.iter()
                .map(|(s, _)| format!("FILE{s}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(out.contents())?;
            stdout.flush()?;
        }
    }
    for note in &out.notes {
        tracing::info!("{note}");
    }
    Ok(())
}
