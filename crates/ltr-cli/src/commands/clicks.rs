//! `ltr clicks simulate`: a click log from judged data and a production ranker (any model file), under the
//! position-based or cascade user model — the protocol of Joachims, Swaminathan & Schnabel (WSDM 2017).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use ltr_clicks::{ClickModel, ClickSimulation, Examination, Intervention};

/// `ltr clicks …`.
#[derive(Debug, Subcommand)]
pub enum ClicksCommand {
    /// Sample sessions and clicks from judged data ranked by a production model; write a click log (TSV).
    Simulate(SimulateArgs),
    /// Estimate relative examination propensities p_k / p_1: from swap interventions, or by (regression) EM.
    Propensity(PropensityArgs),
}

/// Arguments of `ltr clicks propensity`.
#[derive(Debug, Args)]
pub struct PropensityArgs {
    /// The click log (from `ltr clicks simulate --intervention swap-top`, or logged with production ranks).
    #[arg(long)]
    pub clicks: PathBuf,
    /// Estimator: `swap` (the log's swap interventions, Joachims et al. 2017), `em` (per-document EM on a plain
    /// log, Wang et al. 2018) or `regression-em` (relevance from the documents' features; needs --features).
    #[arg(long, default_value = "swap", value_parser = ["swap", "em", "regression-em"])]
    pub method: String,
    /// The feature file the log's (qid, docid) join to (regression EM).
    #[arg(long)]
    pub features: Option<PathBuf>,
    /// Bootstrap replicates over sessions for the EM intervals.
    #[arg(long, default_value_t = 20)]
    pub bootstrap: usize,
    /// Seed of the EM bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Interval half-width in standard errors (1.96: 95%): of the log ratio (swap), of the bootstrap (EM).
    #[arg(long, default_value_t = 1.96)]
    pub z: f64,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
    /// Also write the table (TSV) to this file, atomically: the form `ltr train --propensities` reads.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `ltr clicks simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Judged data (LETOR/SVMlight; `#docid` comments name the documents in the log).
    #[arg(long)]
    pub data: PathBuf,
    /// The production ranker: a model file (`ltr train`, or RankLib's); its top documents are displayed.
    #[arg(long)]
    pub model: PathBuf,
    /// Sessions (queries drawn uniformly with replacement).
    #[arg(long, default_value_t = 10_000)]
    pub sessions: u64,
    /// User model: pbm (position-based, examination (1/rank)^eta), pbm-ultra (ULTRA's measured curve ^eta) or
    /// cascade (read from the top, stop after a click).
    #[arg(long, default_value = "pbm", value_parser = ["pbm", "pbm-ultra", "cascade"])]
    pub click_model: String,
    /// Severity of position bias η.
    #[arg(long, default_value_t = 1.0)]
    pub eta: f64,
    /// Documents displayed per session.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Click probability of an examined non-relevant document (noise ε₋).
    #[arg(long, default_value_t = 0.1)]
    pub eps_minus: f64,
    /// Click probability of an examined document of the top grade (ε₊).
    #[arg(long, default_value_t = 1.0)]
    pub eps_plus: f64,
    /// Seed (the log is the same at any thread count).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Randomised intervention: none, or swap-top (each session swaps rank 1 with a random rank k half the time,
    /// and logs production ranks, so `ltr clicks propensity` can estimate examination).
    #[arg(long, default_value = "none", value_parser = ["none", "swap-top"])]
    pub intervention: String,
    /// Output click log (TSV, written atomically).
    #[arg(long)]
    pub out: PathBuf,
}

/// Run `ltr clicks …`.
pub fn run(cmd: ClicksCommand) -> Result<()> {
    match cmd {
        ClicksCommand::Simulate(a) => simulate(a),
        ClicksCommand::Propensity(a) => propensity(a),
    }
}

fn propensity(a: PropensityArgs) -> Result<()> {
    if !(a.z.is_finite() && a.z > 0.0) {
        bail!(
            "--z must be a positive number of standard errors, not {}",
            a.z
        );
    }
    let log = ltr_clicks::read_click_log(&a.clicks)?;
    let est = match a.method.as_str() {
        "swap" => ltr_clicks::estimate_propensities(&log, a.z)
            .with_context(|| a.clicks.display().to_string())?,
        method => {
            let relevance = if method == "em" {
                ltr_clicks::RelevanceModel::PerDocument
            } else {
                ltr_clicks::RelevanceModel::Regression
            };
            let features = match (&a.features, relevance) {
                (Some(f), _) => Some(super::load_dataset(f, &Default::default())?),
                (None, ltr_clicks::RelevanceModel::Regression) => {
                    bail!("--method regression-em needs --features FILE (the data the log's documents join to)")
                }
                (None, _) => None,
            };
            let settings = ltr_clicks::EmSettings {
                relevance,
                bootstrap: a.bootstrap,
                z: a.z,
                seed: a.seed,
                ..Default::default()
            };
            let est = ltr_clicks::estimate_propensities_em(&log, features.as_ref(), &settings)
                .with_context(|| a.clicks.display().to_string())?;
            tracing::info!("EM: {} iterations", est.iterations);
            est.table
        }
    };
    if let Some(out) = &a.out {
        ltr_clicks::write_propensity_table(out, &est)?;
    }
    if a.output.json {
        let rows: Vec<serde_json::Value> = est
            .iter()
            .map(|e| {
                serde_json::json!({"rank": e.rank, "propensity": e.value, "low": e.low, "high": e.high,
                    "sessions": e.sessions})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        println!("rank\tp_k/p_1\tlow\thigh\tsessions");
        for e in &est {
            println!(
                "{}\t{:.4}\t{:.4}\t{:.4}\t{}",
                e.rank, e.value, e.low, e.high, e.sessions
            );
        }
    }
    Ok(())
}

fn simulate(a: SimulateArgs) -> Result<()> {
    if a.sessions == 0 {
        bail!("--sessions must be at least 1");
    }
    let mut model = ltr_export::load_model(&a.model)?;
    let bar = crate::progress::Bar::for_terminal();
    let ds = bar.stage(&format!("reading {}", a.data.display()), || {
        super::load_dataset(&a.data, &Default::default())
    })?;
    let scores = ltr_export::score_loaded(&mut model, &ds, &a.data.display().to_string())?;
    let sim = ClickSimulation {
        model: match a.click_model.as_str() {
            "pbm" => ClickModel::PositionBased(Examination::Inverse),
            "pbm-ultra" => ClickModel::PositionBased(Examination::Ultra),
            _ => ClickModel::Cascade,
        },
        eta: a.eta,
        top: a.top,
        eps_minus: a.eps_minus,
        eps_plus: a.eps_plus,
        sessions: a.sessions,
        seed: a.seed,
        intervention: if a.intervention == "swap-top" {
            Intervention::SwapWithTop
        } else {
            Intervention::None
        },
    };
    let log = bar.stage("simulating", || sim.simulate(&ds, &scores))?;
    ltr_clicks::write_click_log(&a.out, &log)
        .with_context(|| format!("writing {}", a.out.display()))?;
    let clicks = log.iter().filter(|r| r.clicked).count();
    tracing::info!(
        "{} sessions, {} displayed documents, {clicks} clicks → {}",
        a.sessions,
        log.len(),
        a.out.display()
    );
    Ok(())
}
