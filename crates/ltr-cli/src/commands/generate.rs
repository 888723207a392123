//! `ltr generate`: write a seeded synthetic dataset (train/vali/test) for offline runs and benchmarks: LETOR-like
//! (query-normalised, the default), raw web-style features (`--profile web`, MSLR-WEB-like) or raw web data as
//! public sets have it (`--profile web-raw`: exact zeros, most documents graded 0, queries of 5 to 1,000
//! documents, some with nothing relevant, query-level features).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use ltr_data::{
    generate_letor_like, generate_web, generate_web_raw, split_by_queries, write_letor,
    SyntheticConfig, WebConfig, WebRawConfig,
};

/// Arguments of `ltr generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Output folder (created); receives train.txt, vali.txt and test.txt.
    #[arg(long)]
    pub out: PathBuf,
    /// `letor`: query-normalised features in [0, 1] (LETOR-like); `web`: raw MSLR-WEB-like features (counts,
    /// BM25-like scores, heavy-tailed URL/page/link statistics, constant and duplicate columns, five grades with
    /// MSLR's skew). For web data the defaults become 136 features and 40–200 documents per query. `web-raw`:
    /// raw features with many exact zeros and heavy tails, 70% of documents graded 0 by one threshold set over all
    /// queries (so some queries have nothing relevant), query-level features constant within a query, 136
    /// features and 5–1,000 documents per query (log-uniform) by default.
    #[arg(long, default_value = "letor", value_parser = ["letor", "web", "web-raw"])]
    pub profile: String,
    /// Number of queries (split 60/20/20).
    #[arg(long, default_value_t = 300)]
    pub queries: usize,
    /// Smallest query (letor: 20; web: 40; web-raw: 5).
    #[arg(long)]
    pub min_docs: Option<usize>,
    /// Largest query (letor: 120; web: 200; web-raw: 1000).
    #[arg(long)]
    pub max_docs: Option<usize>,
    /// Features (letor: 40; web and web-raw: 136).
    #[arg(long)]
    pub features: Option<usize>,
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
    /// Web profiles only: the share in [0, 1] of relevance from non-linear terms (saturation, a threshold, an
    /// interaction, a demotion). 0: the original data byte for byte; 0.25 (default) matches MSLR-WEB30K's tree gap.
    #[arg(long, allow_negative_numbers = true)]
    pub nonlinearity: Option<f64>,
}

/// Run the command.
pub fn run(a: GenerateArgs) -> Result<()> {
    let ds = if a.profile == "web-raw" {
        generate_web_raw(&WebRawConfig {
            queries: a.queries,
            min_docs: a.min_docs.unwrap_or(5),
            max_docs: a.max_docs.unwrap_or(1000),
            features: a.features.unwrap_or(136),
            noise: a.noise,
            seed: a.seed,
            nonlinearity: a.nonlinearity.unwrap_or(WebConfig::CALIBRATED_NONLINEARITY),
        })?
    } else if a.profile == "web" {
        generate_web(&WebConfig {
            queries: a.queries,
            min_docs: a.min_docs.unwrap_or(40),
            max_docs: a.max_docs.unwrap_or(200),
            features: a.features.unwrap_or(136),
            noise: a.noise,
            seed: a.seed,
            nonlinearity: a.nonlinearity.unwrap_or(WebConfig::CALIBRATED_NONLINEARITY),
        })?
    } else {
        let web_only =
            "--nonlinearity shapes the web profile's relevance; add --profile web (or web-raw)";
        anyhow::ensure!(a.nonlinearity.is_none(), web_only);
        generate_letor_like(&SyntheticConfig {
            queries: a.queries,
            min_docs: a.min_docs.unwrap_or(20),
            max_docs: a.max_docs.unwrap_or(120),
            features: a.features.unwrap_or(40),
            grades: a.grades,
            noise: a.noise,
            outlier_fraction: a.outliers,
            query_level_norm: true,
            seed: a.seed,
        })?
    };
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
