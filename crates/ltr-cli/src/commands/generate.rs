//! `ltr generate`: write a seeded synthetic LETOR-like dataset (train/vali/test) for offline runs and benchmarks.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use ltr_data::{generate_letor_like, split_by_queries, write_letor, SyntheticConfig};

/// Arguments of `ltr generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Output folder (created); receives train.txt, vali.txt and test.txt.
    #[arg(long)]
    pub out: PathBuf,
    /// Number of queries (split 60/20/20).
    #[arg(long, default_value_t = 300)]
    pub queries: usize,
    /// Smallest query.
    #[arg(long, default_value_t = 20)]
    pub min_docs: usize,
    /// Largest query.
    #[arg(long, default_value_t = 120)]
    pub max_docs: usize,
    /// Features.
    #[arg(long, default_value_t = 40)]
    pub features: usize,
    /// Relevance grades.
    #[arg(long, default_value_t = 3)]
    pub grades: u32,
    /// Noise of the hidden relevance.
    #[arg(long, default_value_t = 0.6)]
    pub noise: f64,
    /// Fraction of flipped labels.
    #[arg(long, default_value_t = 0.02)]
    pub outliers: f64,
    /// Seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// Run the command.
pub fn run(a: GenerateArgs) -> Result<()> {
    let cfg = SyntheticConfig {
        queries: a.queries,
        min_docs: a.min_docs,
        max_docs: a.max_docs,
        features: a.features,
        grades: a.grades,
        noise: a.noise,
        outlier_fraction: a.outliers,
        query_level_norm: true,
        seed: a.seed,
    };
    let ds = generate_letor_like(&cfg)?;
    let parts = split_by_queries(&ds, &[0.6, 0.2, 0.2], a.seed)?;
    std::fs::create_dir_all(&a.out).map_err(|e| anyhow::anyhow!("{}: {e}", a.out.display()))?;
    for (name, part) in ["train.txt", "vali.txt", "test.txt"].iter().zip(&parts) {
        write_letor(part, &a.out.join(name))?;
    }
    tracing::info!(
        "wrote {} queries ({} documents) to {}",
        ds.n_queries(),
        ds.n_docs(),
        a.out.display()
    );
    Ok(())
}
