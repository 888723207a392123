//! `ltr clicks simulate`: a click log from judged data and a production ranker (any model file), under the
//! position-based, cascade, DCM, UBM or DBN user; `ltr clicks propensity`; `ltr clicks fit` and `evaluate`: a click
//! model fitted to a log, and its held-out log-likelihood and perplexity; `ltr clicks estimate` and `convert`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use ltr_clicks::{ClickModel, ClickSimulation, Intervention};

/// `ltr clicks …`.
#[derive(Debug, Subcommand)]
pub enum ClicksCommand {
    /// Sample sessions and clicks from judged data ranked by a production model; write a click log (TSV).
    Simulate(SimulateArgs),
    /// Estimate relative examination propensities p_k / p_1: from swap interventions, or by (regression) EM.
    Propensity(PropensityArgs),
    /// Fit a click model (pbm, cascade, dcm, ubm, dbn) to a log as PyClick does; write its parameters (JSON).
    Fit(FitArgs),
    /// Held-out log-likelihood and perplexity per rank of a fitted click model on a log.
    Evaluate(EvaluateArgs),
    /// A new ranker's click metric estimated from a log another ranker displayed (IPS, SNIPS, DR; with intervals).
    Estimate(EstimateArgs),
    /// Write a log of another layout (`ltr_clicks::read_log_layout`: table, baidu) as the click-log TSV.
    Convert(ConvertArgs),
}

/// Arguments of `ltr clicks convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The layout of --input.
    #[arg(long, value_parser = ["table", "baidu"])]
    pub from: String,
    /// The log to read.
    #[arg(long)]
    pub input: PathBuf,
    /// The click log to write (TSV).
    #[arg(long)]
    pub out: PathBuf,
}

/// Arguments of `ltr clicks estimate` (`ltr_clicks::estimate_click_metric`).
#[derive(Debug, Args)]
pub struct EstimateArgs {
    /// The click log (TSV).
    #[arg(long)]
    pub clicks: PathBuf,
    /// The feature file the log's (qid, docid) join to.
    #[arg(long)]
    pub features: PathBuf,
    /// The new ranker: a model file (--model), or a score file (--scores: one score per row of --features).
    #[arg(long = "model", visible_alias = "scores")]
    pub ranker: PathBuf,
    /// Propensities by rank (`ltr clicks propensity --out`) instead of the log's column.
    #[arg(long)]
    pub propensities: Option<PathBuf>,
    /// ips (mean click gain per session), snips (click gain over the displayed relevance) or dr (doubly robust:
    /// a relevance model corrected by the clicks' IPS-weighted residual; needs --relevance-model or
    /// --relevance-scores).
    #[arg(long, default_value = "ips", value_parser = ["ips", "snips", "dr"])]
    pub estimator: String,
    /// dr's direct model: a click model fitted to a log (`ltr clicks fit --out`); its attractiveness of each
    /// (qid, docid) is the click probability when examined, 0 for documents it lacks.
    #[arg(long, conflicts_with = "relevance_scores")]
    pub relevance_model: Option<PathBuf>,
    /// dr's direct model as a score file (one click probability per row of --features) or a model file.
    #[arg(long)]
    pub relevance_scores: Option<PathBuf>,
    /// How the log's displays were chosen, for dr's expected examination: deterministic, or swap-top (`ltr
    /// clicks simulate --intervention swap-top`; every line needs its production rank).
    #[arg(long, default_value = "deterministic", value_parser = ["deterministic", "swap-top"])]
    pub logging_policy: String,
    /// dcg@K, clicks@K or expected-clicks.
    #[arg(long, default_value = "dcg@10")]
    pub metric: String,
    /// Bootstrap replicates over sessions (0: none); the intervals are ±1.96 standard errors (95%).
    #[arg(long, default_value_t = 200)]
    pub bootstrap: usize,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Which sessions of --clicks to read: `every` (a query --features lacks is an error), or `feature-queries`
    /// (only --features' queries', a test split of the log's data, say; the others are skipped and counted).
    #[arg(long, default_value = "every", value_parser = ["every", "feature-queries"])]
    pub click_sessions: String,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
}

/// Arguments of `ltr clicks fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// The click log (TSV) to fit.
    #[arg(long)]
    pub clicks: PathBuf,
    /// The click model.
    #[arg(long, value_parser = ["pbm", "cascade", "dcm", "ubm", "dbn"])]
    pub click_model: String,
    /// EM iterations (pbm, ubm, dbn; dcm with --dcm-em).
    #[arg(long, default_value_t = 50)]
    pub iterations: usize,
    /// Fit the DCM by EM on its exact likelihood instead of PyClick's counting.
    #[arg(long)]
    pub dcm_em: bool,
    /// Held-out log to evaluate the fit on.
    #[arg(long)]
    pub test: Option<PathBuf>,
    /// Output options (the evaluation's).
    #[command(flatten)]
    pub output: super::OutputOpts,
    /// The fitted parameters (JSON, written atomically).
    #[arg(long)]
    pub out: PathBuf,
}

/// Arguments of `ltr clicks evaluate`.
#[derive(Debug, Args)]
pub struct EvaluateArgs {
    /// A fitted click model (`ltr clicks fit --out`).
    #[arg(long)]
    pub params: PathBuf,
    /// The held-out click log (TSV).
    #[arg(long)]
    pub clicks: PathBuf,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
}

/// Arguments of `ltr clicks propensity`.
#[derive(Debug, Args)]
pub struct PropensityArgs {
    /// The click log (from `ltr clicks simulate --intervention swap-top`, or logged with production ranks).
    #[arg(long, required_unless_present = "from_model")]
    pub clicks: Option<PathBuf>,
    /// Instead of estimating from a log: the propensities a model learned from clicks (`debias=dla` of
    /// `lambdarank`, `listnet`, `lambdamart` or `neural`), as a table any learner reads with `ltr train
    /// --propensities` (for instance a linear DLA's propensities for a wide network's inverse-propensity weights).
    #[arg(long, conflicts_with_all = ["clicks", "features"])]
    pub from_model: Option<PathBuf>,
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
    /// User model: pbm (position-based, examination (1/rank)^eta), pbm-ultra (ULTRA's measured curve ^eta),
    /// cascade (read from the top, stop after a click), dcm, ubm or dbn (see `ltr_clicks::ClickModel`).
    #[arg(long, default_value = "pbm", value_parser = ["pbm", "pbm-ultra", "cascade", "dcm", "ubm", "dbn"])]
    pub click_model: String,
    /// ULTRA's protocol in one flag: pbm-ultra, top 10, eps- 0.1, eps+ 1 (overriding those flags); the production
    /// --model is ULTRA's when trained on 1% of the training queries.
    #[arg(long, value_parser = ["ultra"])]
    pub preset: Option<String>,
    /// DBN persistence γ: the probability that an unsatisfied user reads on.
    #[arg(long, default_value_t = 0.9)]
    pub persistence: f64,
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
        ClicksCommand::Fit(a) => fit(a),
        ClicksCommand::Evaluate(a) => {
            let model = ltr_clicks::FittedClickModel::read_json(&a.params)?;
            evaluate(&model, &a.clicks, a.output.json)
        }
        ClicksCommand::Estimate(a) => estimate(a),
        ClicksCommand::Convert(a) => {
            let log = ltr_clicks::read_log_layout(&a.from, &a.input)?;
            Ok(ltr_clicks::write_click_log(&a.out, &log)?)
        }
    }
}

fn estimate(a: EstimateArgs) -> Result<()> {
    let ds = super::load_dataset(&a.features, &Default::default())?;
    let mut settings = ltr_clicks::CounterfactualSettings::parse(
        &a.estimator,
        &a.metric,
        a.propensities.as_deref(),
        a.bootstrap,
        a.seed,
    )?;
    settings.logging = ltr_clicks::LoggingPolicy::parse(&a.logging_policy)?;
    settings.scope = ltr_clicks::SessionScope::parse(&a.click_sessions)?;
    settings.direct = match (&a.relevance_model, &a.relevance_scores) {
        (Some(path), _) => {
            let direct = ltr_clicks::DirectModel::read(path, &ds)?;
            if let Some(note) = direct.note() {
                tracing::info!("{note}");
            }
            Some(direct.values)
        }
        (None, Some(path)) => Some(super::interleave::scores(path, &ds, &a.features)?),
        (None, None) => None,
    };
    let scores = super::interleave::scores(&a.ranker, &ds, &a.features)?;
    let est = in_log(
        &a.clicks,
        ltr_clicks::estimate_click_metric_from_log(&a.clicks, &ds, &scores, &settings),
    )?;
    match a.output.json {
        true => println!("{}", serde_json::to_string_pretty(&est.to_json())?),
        false => print!("{est}"),
    }
    Ok(())
}

fn fit(a: FitArgs) -> Result<()> {
    let log = ltr_clicks::SessionLog::read(&a.clicks)?;
    let settings = ltr_clicks::ClickModelFit {
        iterations: a.iterations,
        dcm_by_em: a.dcm_em,
        ..ltr_clicks::ClickModelFit::new(ltr_clicks::ClickModelKind::parse(&a.click_model)?)
    };
    let model = ltr_clicks::fit_click_model(&log, &settings)
        .with_context(|| a.clicks.display().to_string())?;
    model.write_json(&a.out)?;
    tracing::info!(
        "{} sessions, {} documents → {}",
        log.n_sessions(),
        log.n_pairs(),
        a.out.display()
    );
    match &a.test {
        Some(test) => evaluate(&model, test, a.output.json),
        None => Ok(()),
    }
}

fn evaluate(model: &ltr_clicks::FittedClickModel, log: &std::path::Path, json: bool) -> Result<()> {
    let sessions = ltr_clicks::SessionLog::read(log)?;
    let eval = model
        .evaluate(&sessions)
        .with_context(|| log.display().to_string())?;
    match json {
        true => println!("{}", serde_json::to_string_pretty(&eval.to_json())?),
        false => print!("{eval}"),
    }
    Ok(())
}

/// An error of a computation that read the click log `path` a session at a time: the reader's own errors name the
/// file and line already; the others are given the file.
fn in_log<T>(path: &std::path::Path, r: ltr_data::Result<T>) -> Result<T> {
    match r {
        Err(e @ (ltr_data::DataError::Parse { .. } | ltr_data::DataError::Io { .. })) => {
            Err(e.into())
        }
        r => r.with_context(|| path.display().to_string()),
    }
}

fn propensity(a: PropensityArgs) -> Result<()> {
    let clicks = a.clicks.clone().unwrap_or_default();
    let est = match (&a.from_model, a.method.as_str()) {
        (Some(model), _) => {
            ltr_clicks::learned_propensities(&ltr_export::load_model(model)?.diagnostics_json)
                .with_context(|| model.display().to_string())?
        }
        (None, "swap") => in_log(
            &clicks,
            ltr_clicks::estimate_propensities_from_log(&clicks, a.z),
        )?,
        (None, method) => {
            let features = a
                .features
                .as_ref()
                .map(|f| super::load_dataset(f, &Default::default()))
                .transpose()?;
            let settings = ltr_clicks::EmSettings {
                relevance: ltr_clicks::RelevanceModel::parse(method)?,
                bootstrap: a.bootstrap,
                z: a.z,
                seed: a.seed,
                ..Default::default()
            };
            let est = in_log(
                &clicks,
                ltr_clicks::estimate_propensities_em_from_log(
                    &clicks,
                    features.as_ref(),
                    &settings,
                ),
            )?;
            tracing::info!("EM: {} iterations", est.iterations);
            est.table
        }
    };
    if let Some(out) = &a.out {
        ltr_clicks::write_propensity_table(out, &est)?;
    }
    match a.output.json {
        true => println!(
            "{}",
            serde_json::to_string_pretty(&ltr_clicks::propensity_json(&est))?
        ),
        false => print!("{}", ltr_clicks::propensity_text(&est)),
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
    let ultra = a.preset.is_some();
    let sim = ClickSimulation {
        model: ClickModel::parse(if ultra { "pbm-ultra" } else { &a.click_model })?,
        eta: a.eta,
        top: if ultra { 10 } else { a.top },
        eps_minus: if ultra { 0.1 } else { a.eps_minus },
        eps_plus: if ultra { 1.0 } else { a.eps_plus },
        persistence: a.persistence,
        sessions: a.sessions,
        seed: a.seed,
        intervention: Intervention::parse(&a.intervention)?,
    };
    let (shown, clicks) = bar.stage("simulating", || sim.write_log(&a.out, &ds, &scores))?;
    tracing::info!(
        "{} sessions, {shown} displayed documents, {clicks} clicks → {}",
        a.sessions,
        a.out.display()
    );
    Ok(())
}
