//! `ltr train`: fit a model, with a validation grid over comma-listed parameters.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_core::{ModelFile, Params, Scorer, TrainingSummary};

use crate::registry::{self, TrainContext};

/// Arguments of `ltr train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Training data (LETOR/SVMlight).
    #[arg(long)]
    pub train: PathBuf,
    /// Validation data: selects grid values and, for some algorithms, epochs, rounds or member weights.
    #[arg(long)]
    pub validate: Option<PathBuf>,
    /// Algorithm (see `ltr algorithms`).
    #[arg(long)]
    pub algo: String,
    /// Hyperparameter `name=value`; `name=v1,v2,v3` is a grid searched on --validate.
    #[arg(long = "param")]
    pub params: Vec<String>,
    /// Validation metric.
    #[arg(long, default_value = "NDCG@10")]
    pub metric: String,
    /// Validation convention.
    #[arg(long, default_value = "standard")]
    pub convention: String,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output model (`.json` for JSON, anything else for the compact binary form); written atomically.
    #[arg(long)]
    pub model: PathBuf,
}

fn expand_grid(raw: &[String]) -> Result<Vec<Vec<(String, String)>>> {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for p in raw {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("--param `{p}`: expected name=value"))?;
        let k = k.trim();
        if k.is_empty() {
            bail!("--param `{p}`: empty name");
        }
        if axes.iter().any(|(n, _)| n.eq_ignore_ascii_case(k)) {
            bail!("--param `{k}` given twice; give a grid as one comma list (name=v1,v2)");
        }
        let vals: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
        if vals.iter().any(String::is_empty) {
            bail!("--param `{p}`: empty value");
        }
        axes.push((k.to_string(), vals));
    }
    let mut out: Vec<Vec<(String, String)>> = vec![vec![]];
    for (k, vals) in axes {
        let mut next = Vec::with_capacity(out.len() * vals.len());
        for prefix in &out {
            for v in &vals {
                let mut p = prefix.clone();
                p.push((k.clone(), v.clone()));
                next.push(p);
            }
        }
        out = next;
    }
    Ok(out)
}

/// Run the command.
pub fn run(a: TrainArgs) -> Result<()> {
    let algo = registry::find(&a.algo).with_context(|| {
        let names: Vec<&str> = registry::ALGORITHMS.iter().map(|x| x.name).collect();
        format!("unknown --algo `{}`; known: {}", a.algo, names.join(", "))
    })?;
    let metric: ltr_metrics::Metric = a.metric.parse().context("--metric")?;
    let convention = super::convention(&a.convention, None)?;
    let grid = expand_grid(&a.params)?;
    if grid.len() > 1 && a.validate.is_none() {
        bail!(
            "--param lists a grid of {} settings; give --validate to choose among them",
            grid.len()
        );
    }
    let train = super::load_dataset(&a.train, false)?;
    let validation = match &a.validate {
        Some(v) => {
            let mut ds = super::load_dataset(v, false)?;
            if ds.n_features() > train.n_features() {
                bail!(
                    "{} has {} features but the training file {} has {}",
                    v.display(),
                    ds.n_features(),
                    a.train.display(),
                    train.n_features()
                );
            }
            ds.set_n_features(train.n_features())?;
            Some(ds)
        }
        None => None,
    };
    let ctx = TrainContext {
        train: &train,
        validation: validation.as_ref(),
        metric,
        convention,
        seed: a.seed,
    };
    let t0 = Instant::now();
    let bar = indicatif::ProgressBar::new(grid.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} settings {elapsed_precise} {msg}",
        )
        .expect("valid template"),
    );
    if grid.len() == 1 {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut best: Option<(f64, BTreeMap<String, String>, registry::Trained)> = None;
    for combo in &grid {
        let params = Params::new(combo.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        let trained = (algo.train)(&ctx, &params)
            .with_context(|| format!("training {} with {}", algo.name, fmt_combo(combo)))?;
        let score = match &validation {
            Some(v) => {
                ltr_metrics::evaluate_mean(v, &trained.model.score_dataset(v), metric, &convention)?
            }
            None => f64::NAN,
        };
        if grid.len() > 1 {
            tracing::info!("{}: validation {} = {:.4}", fmt_combo(combo), metric, score);
        }
        bar.inc(1);
        if best.as_ref().is_none_or(|(b, _, _)| score > *b) {
            best = Some((score, params.effective(), trained));
        }
    }
    bar.finish_and_clear();
    let (score, mut params, trained) = best.expect("grid is never empty");
    params.extend(trained.chosen.clone());
    if validation.is_some() {
        params.insert(format!("validation-{metric}"), format!("{score:.6}"));
        tracing::info!(
            "kept {} (validation {} = {:.4})",
            fmt_map(&params),
            metric,
            score
        );
    }
    let summary = TrainingSummary {
        train_file: a.train.display().to_string(),
        validation_file: a.validate.as_ref().map(|p| p.display().to_string()),
        queries: train.n_queries(),
        documents: train.n_docs(),
        features: train.n_features(),
        seed: a.seed,
        seconds: t0.elapsed().as_secs_f64(),
    };
    let mut mf = ModelFile::new(algo.name, params, summary, trained.model);
    if let Some(d) = trained.diagnostics {
        mf.diagnostics_json = d.to_string();
    }
    mf.save(&a.model)?;
    tracing::info!(
        "wrote {} in {:.3}s",
        a.model.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

fn fmt_combo(c: &[(String, String)]) -> String {
    if c.is_empty() {
        return "defaults".into();
    }
    c.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn fmt_map(m: &BTreeMap<String, String>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}
