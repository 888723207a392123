//! `ltr experiment`: compare learners on the user's folds with `ltr-experiment`, the engine `cargo xtask
//! reproduce` shares; this module only turns flags (or an experiment file) into an `ExperimentSpec`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_experiment::{DataSpec, Experiment, ExperimentSpec, MethodSpec};

/// Arguments of `ltr experiment`.
#[derive(Debug, Args)]
pub struct ExperimentArgs {
    /// An experiment file (TOML, as written into every output folder); the flags below that describe the
    /// experiment may not be given with it.
    #[arg(long, conflicts_with_all = ["data", "fold_dir", "algos", "folds", "metric", "convention", "baseline",
        "normalize", "log1p", "seed", "report_metrics", "tests", "validation_share", "keep_scores", "regroup",
        "clicks", "propensities"])]
    pub config: Option<PathBuf>,
    /// One LETOR/SVMlight file, split by query into --folds parts (seeded, stratified by relevant documents).
    #[arg(long, conflicts_with = "fold_dir")]
    pub data: Option<PathBuf>,
    /// A LETOR fold folder (`Fold1..FoldN/train.txt, test.txt`, `vali.txt` optional).
    #[arg(long)]
    pub fold_dir: Option<PathBuf>,
    /// Number of folds for --data.
    #[arg(long)]
    pub folds: Option<usize>,
    /// A method, `NAME[:k=v,k=v1,v2,...]` (a comma list after `=` is a grid chosen on validation), or
    /// `model:FILE`, a trained model scored as it is (as `ltr predict` reads it); repeat it.
    #[arg(long = "algo")]
    pub algos: Vec<String>,
    /// Validation metric (grids, epochs, rounds) and the report's first metric.
    #[arg(long)]
    pub metric: Option<String>,
    /// More metrics to report (default NDCG@1, @3, @5, @10 and MAP); repeat or comma-separate.
    #[arg(long = "report-metric")]
    pub report_metrics: Vec<String>,
    /// Evaluator convention: standard, trec, letor3, letor4, mslr.
    #[arg(long)]
    pub convention: Option<String>,
    /// The method tested against, by label or algorithm (default: the first --algo).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Paired tests against the baseline (ttest, wilcoxon, permutation, sign); repeat or comma-separate.
    #[arg(long = "test")]
    pub tests: Vec<String>,
    /// Normalisation fitted on each fold's training data (as `ltr train --normalize`).
    #[arg(long)]
    pub normalize: Option<String>,
    /// Features given a sign-preserving log1p before normalising (as `ltr train --log1p`).
    #[arg(long)]
    pub log1p: Option<String>,
    /// Share of training queries held out for validation when a fold has no validation file (0: none).
    #[arg(long)]
    pub validation_share: Option<f64>,
    /// Seed of the split, the training and the permutation tests.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write each cell's test scores (and, for --data, each fold's test file) for `ltr eval` / `compare`.
    #[arg(long)]
    pub keep_scores: bool,
    /// Merge the runs of a qid that reappears later in a file.
    #[arg(long)]
    pub regroup: bool,
    /// Click logs (validation and test stay judged): `{fold}` for the fold number of --fold-dir, or one log over
    /// --data's queries, each fold reading its training queries' sessions. A judged row needs `judged = true`.
    #[arg(long)]
    pub clicks: Option<PathBuf>,
    /// The click logs' propensity table (as `ltr train --propensities`).
    #[arg(long)]
    pub propensities: Option<PathBuf>,
    /// Output folder (report.md, results.json, results.csv, plots/, cells/, experiment.toml).
    #[arg(long)]
    pub out: PathBuf,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
}

impl ExperimentArgs {
    /// The experiment the flags describe (without `--config`).
    fn spec(&self) -> Result<ExperimentSpec> {
        let mut data = match (&self.data, &self.fold_dir) {
            (Some(f), None) => DataSpec::file(f, self.folds.unwrap_or(5)),
            (None, Some(d)) => {
                if self.folds.is_some() {
                    bail!("--folds splits --data; a --fold-dir brings its own folds");
                }
                DataSpec::fold_dir(d)
            }
            _ => bail!(
                "give --data FILE (split into --folds parts), --fold-dir DIR, or --config FILE"
            ),
        };
        data.validation_share = self.validation_share.unwrap_or(data.validation_share);
        data.regroup = self.regroup;
        (data.clicks, data.propensities) = (self.clicks.clone(), self.propensities.clone());
        if self.algos.is_empty() {
            bail!("give at least one --algo NAME[:k=v,...] (see `ltr algorithms`)");
        }
        let methods = self
            .algos
            .iter()
            .map(|a| MethodSpec::parse(a))
            .collect::<Result<Vec<_>, _>>()?;
        let mut spec = ExperimentSpec::new(data, methods);
        spec.metric = self.metric.clone().unwrap_or(spec.metric);
        spec.convention = self.convention.clone().unwrap_or(spec.convention);
        spec.normalize = self.normalize.clone().unwrap_or(spec.normalize);
        spec.seed = self.seed.unwrap_or(spec.seed);
        spec.report_metrics = ltr_experiment::split_names(&self.report_metrics);
        let tests = ltr_experiment::split_names(&self.tests);
        if !tests.is_empty() {
            spec.tests = tests;
        }
        spec.baseline = self.baseline.clone();
        spec.log1p = self.log1p.clone();
        spec.keep_scores = self.keep_scores;
        Ok(spec)
    }
}

/// Run the command.
pub fn run(a: ExperimentArgs) -> Result<()> {
    let bar = crate::progress::Bar::for_terminal();
    // A refusal of an experiment file names it (`Experiment::from_file`).
    let exp = match &a.config {
        Some(path) => bar.stage("reading the data", || Experiment::from_file(path))?,
        None => {
            let spec = a.spec()?;
            bar.stage("reading the data", || Experiment::prepare(spec))?
        }
    };
    tracing::info!(
        "{} folds × {} methods = {} cells; output in {}",
        exp.folds().len(),
        exp.labels().len(),
        exp.folds().len() * exp.labels().len(),
        a.out.display()
    );
    let t0 = std::time::Instant::now();
    let outcome = exp
        .run(&a.out, &bar)
        .with_context(|| format!("experiment into {}", a.out.display()))?;
    tracing::info!(
        "{} cells trained, {} reused from {}; report {} ({:.1} s)",
        outcome.computed,
        outcome.reused,
        a.out.join("cells").display(),
        outcome.report.display(),
        t0.elapsed().as_secs_f64()
    );
    if a.output.json {
        let v = serde_json::json!({
            "report": outcome.report,
            "results": a.out.join("results.json"),
            "cells": outcome.cells.len(),
            "computed": outcome.computed,
            "reused": outcome.reused,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("{}", outcome.report.display());
    }
    Ok(())
}
