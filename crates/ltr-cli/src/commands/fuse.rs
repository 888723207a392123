//! `ltr fuse`: TREC runs combined into one ([`ltr_metrics::fuse`]), the weights optionally tuned on qrels.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use ltr_metrics::{Convention, FusionMethod, FusionNorm, Metric};

/// Arguments of `ltr fuse`.
#[derive(Debug, Args)]
pub struct FuseArgs {
    /// A TREC run (give two or more).
    #[arg(long = "run", required = true)]
    pub runs: Vec<PathBuf>,
    /// rrf, combsum, combmnz, combmax, borda, or wsum (CombSUM with --weights or tuned weights).
    #[arg(long, default_value = "rrf")]
    pub method: String,
    /// Per-query normalisation before a score method: none, minmax, zscore, sum, rank.
    #[arg(long, default_value = "minmax")]
    pub norm: String,
    /// RRF's constant k.
    #[arg(long, default_value_t = 60.0)]
    pub k: f64,
    /// One weight per run, comma separated (default: 1 each).
    #[arg(long, value_delimiter = ',')]
    pub weights: Vec<f64>,
    /// Tune the weights on these training qrels: each in {0, 0.1, …, 1}, the best by --measure (trec convention).
    #[arg(long)]
    pub tune_on: Option<PathBuf>,
    /// The measure --tune-on maximises.
    #[arg(long, default_value = "nDCG@10")]
    pub measure: String,
    /// The fused run (TREC format, written atomically).
    #[arg(long)]
    pub out: PathBuf,
}

/// Run the command.
pub fn run(a: FuseArgs) -> Result<()> {
    let method = a.method.parse::<FusionMethod>()?.with_rrf_k(a.k);
    let norm: FusionNorm = a.norm.parse()?;
    let mut weights = ltr_metrics::fusion_weights(a.runs.len(), &a.weights).context("--weights")?;
    let runs = a
        .runs
        .iter()
        .map(|r| ltr_metrics::read_run(r))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(q) = &a.tune_on {
        let measure: Metric = a.measure.parse().context("--measure")?;
        let qrels = ltr_metrics::read_qrels(q)?;
        let (w, score) =
            ltr_metrics::tune_weights(&runs, method, norm, &qrels, measure, &Convention::TREC)?;
        tracing::info!("weights {w:?}: {measure} = {score:.4} on {}", q.display());
        weights = w;
    }
    let fused = ltr_metrics::fuse(&runs, method, norm, &weights);
    ltr_metrics::write_trec_run(&a.out, &fused, &format!("ltr-fuse-{}", a.method))?;
    Ok(())
}
