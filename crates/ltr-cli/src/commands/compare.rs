//! `ltr compare`: two score files on one metric, with a paired significance test and a bootstrap interval.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_metrics::{bootstrap_ci, evaluate, run_test, Alternative, TestKind};
use ltr_metrics::{check_scores_fit, read_scores};

/// Arguments of `ltr compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The data file.
    #[arg(long)]
    pub data: PathBuf,
    /// Two score files (give --scores twice): A then B.
    #[arg(long = "scores", num_args = 1, required = true)]
    pub scores: Vec<PathBuf>,
    /// The metric compared per query.
    #[arg(long, default_value = "NDCG@10")]
    pub metric: String,
    /// ttest, wilcoxon, sign or permutation.
    #[arg(long, default_value = "ttest")]
    pub test: String,
    /// two-sided, greater (A better) or less.
    #[arg(long, default_value = "two-sided")]
    pub alternative: String,
    /// Evaluator convention.
    #[arg(long, default_value = "standard")]
    pub convention: String,
    /// Seed of the permutation test and the bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
    /// How the data file is read.
    #[command(flatten)]
    pub read: super::DataOpts,
}

/// Run the command.
pub fn run(a: CompareArgs) -> Result<()> {
    if a.scores.len() != 2 {
        bail!(
            "--scores must be given exactly twice (A and B), got {}",
            a.scores.len()
        );
    }
    let metric: ltr_metrics::Metric = a.metric.parse().context("--metric")?;
    let conv = super::convention(&a.convention, None)?;
    let test: TestKind = a
        .test
        .parse()
        .map_err(anyhow::Error::msg)
        .context("--test")?;
    let alt: Alternative = a
        .alternative
        .parse()
        .map_err(anyhow::Error::msg)
        .context("--alternative")?;
    let ds = crate::progress::Bar::for_terminal()
        .stage(&format!("reading {}", a.data.display()), || {
            super::load_dataset(&a.data, &a.read)
        })?;
    let mut per_query = Vec::new();
    for p in &a.scores {
        let s = read_scores(p)?;
        check_scores_fit(&s, &ds, p, &a.data)?;
        per_query.push(evaluate(&ds, &s, &[metric], &conv)?.results.remove(0));
    }
    let (ra, rb) = (&per_query[0], &per_query[1]);
    let t = run_test(test, &ra.per_query, &rb.per_query, alt, a.seed);
    let (lo, hi) = bootstrap_ci(&ra.per_query, &rb.per_query, 0.95, 10_000, a.seed);
    let wins = ra
        .per_query
        .iter()
        .zip(&rb.per_query)
        .filter(|(x, y)| x > y)
        .count();
    let losses = ra
        .per_query
        .iter()
        .zip(&rb.per_query)
        .filter(|(x, y)| x < y)
        .count();
    if a.output.json {
        let v = serde_json::json!({
            "metric": metric.to_string(),
            "convention": conv.name,
            "queries": ds.n_queries(),
            "a": {"file": a.scores[0].display().to_string(), "mean": ra.mean},
            "b": {"file": a.scores[1].display().to_string(), "mean": rb.mean},
            "difference": ra.mean - rb.mean,
            "test": t.test,
            "alternative": alt_name(t.alternative),
            "method": t.method,
            "statistic": t.statistic,
            "p_value": t.p_value,
            "n": t.n,
            "wins": wins,
            "losses": losses,
            "bootstrap_ci95": [lo, hi],
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("{} ({}), {} queries", metric, conv.name, ds.n_queries());
        println!("A {:.4}  {}", ra.mean, a.scores[0].display());
        println!("B {:.4}  {}", rb.mean, a.scores[1].display());
        println!(
            "A − B = {:+.4}  (95% bootstrap CI [{:+.4}, {:+.4}]); A wins {wins}, loses {losses}",
            ra.mean - rb.mean,
            lo,
            hi
        );
        println!(
            "{} ({}, {}): statistic {:.4}, p = {:.4e}",
            t.test,
            alt_name(t.alternative),
            t.method,
            t.statistic,
            t.p_value
        );
    }
    Ok(())
}

fn alt_name(a: Alternative) -> &'static str {
    match a {
        Alternative::TwoSided => "two-sided",
        Alternative::Greater => "greater",
        Alternative::Less => "less",
    }
}
