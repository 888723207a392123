//! `ltr export`: a trained model in a search engine's format (Elasticsearch/OpenSearch LTR, Solr LTR, Vespa,
//! RankLib), with its stored normalisation; the logic is `ltr-export`'s.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_core::ModelFile;
use ltr_export::{export, ExportOptions, Target};

/// Arguments of `ltr export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The model file (`ltr train --model`).
    #[arg(long)]
    pub model: PathBuf,
    /// es-ltr, opensearch-ltr, solr-ltr, vespa or ranklib.
    #[arg(long)]
    pub to: String,
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
    /// Output file (default: stdout). Solr's feature-store skeleton goes next to it as FILE.feature-store.json.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Run `ltr export`.
pub fn run(a: ExportArgs) -> Result<()> {
    let target: Target = a.to.parse()?;
    let mut model = ModelFile::load(&a.model)?;
    if let Some(p) = &a.feature_names {
        model.feature_names = ltr_data::read_feature_names(p)?;
    }
    let opts = ExportOptions {
        name: a.name.clone(),
        feature_set: a.feature_set.clone(),
        fold_normalizer: a.fold_normalizer,
    };
    let out = export(&model, target, &opts)
        .with_context(|| format!("exporting {}", a.model.display()))?;
    match (&a.out, &out.feature_store) {
        (Some(path), store) => {
            ltr_data::write_atomic(path, |w| w.write_all(out.model.as_bytes()))?;
            if let Some(store) = store {
                let mut p = path.as_os_str().to_owned();
                p.push(".feature-store.json");
                let p = PathBuf::from(p);
                ltr_data::write_atomic(&p, |w| w.write_all(store.as_bytes()))?;
                tracing::info!("feature store skeleton: {}", p.display());
            }
        }
        (None, Some(_)) => bail!(
            "{} writes two files (the model and its feature store); give --out FILE",
            target.name()
        ),
        (None, None) => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(out.model.as_bytes())?;
            stdout.flush()?;
        }
    }
    for note in &out.notes {
        tracing::info!("{note}");
    }
    Ok(())
}
