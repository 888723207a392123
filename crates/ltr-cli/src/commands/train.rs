//! `ltr train`: fit a model by name through the `ltr-learn` registry, with a validation grid over comma-listed
//! parameters.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_core::TrainingSummary;
use ltr_learn::{Grid, TrainRequest};

use crate::progress::Bar;

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
    /// Normalisation fitted on --train and stored in the model (none, auto, zscore, minmax, query-zscore,
    /// query-minmax, query-sum). `auto`: z-score when a training feature lies outside [0, 1], nothing otherwise.
    #[arg(long, default_value = "auto")]
    pub normalize: String,
    /// Features given a sign-preserving log1p before normalising (e.g. `1-5,12`; file numbering).
    #[arg(long)]
    pub log1p: Option<String>,
    /// Keep only these features (e.g. `1-5,12`, or `@FILE` with one feature number per line as RankLib's
    /// -feature file); stored in the model, so predict reads the full file.
    #[arg(long)]
    pub features: Option<String>,
    /// Merge the runs of a qid that reappears later in a file (default: an error).
    #[arg(long)]
    pub regroup: bool,
    /// Feature names stored in the model: one per line (line k names feature k) or `id name` pairs.
    #[arg(long)]
    pub feature_names: Option<PathBuf>,
    /// Accept the same `#docid` twice within one query (default: an error naming both lines).
    #[arg(long)]
    pub allow_duplicate_docids: bool,
    /// Train on this click log (`ltr clicks simulate`'s TSV) instead of --train's labels: --train holds the
    /// features its (qid, docid) pairs join to; each click becomes a query (the clicked document over the others
    /// displayed) with its propensity, for propensity-ranksvm, lambdarank and listnet.
    #[arg(long)]
    pub clicks: Option<PathBuf>,
    /// Propensities by rank (`ltr clicks propensity --out`) for a log without a propensity column.
    #[arg(long, requires = "clicks")]
    pub propensities: Option<PathBuf>,
    /// Data-parallel training (`ltr algorithms` marks which algorithms can): the queries are split over ranks —
    /// threads of this process (--ranks), or the processes of `mpirun -n P ltr train --distributed …` in a build
    /// with the `mpi` feature. A --train path containing `{rank}` is read per rank (one shard file each, as `ltr
    /// shard` writes them); otherwise each rank keeps its share of the one file, balanced by pairs.
    #[arg(long, conflicts_with_all = ["validate", "clicks"])]
    pub distributed: bool,
    /// Ranks of the thread backend of --distributed (default: the number of CPUs).
    #[arg(long, requires = "distributed")]
    pub ranks: Option<usize>,
}

/// The click training set of `--clicks` on the features of `--train`; errors name the log's line.
fn click_training(
    a: &TrainArgs,
    log_path: &std::path::Path,
    features: &ltr_data::Dataset,
) -> Result<ltr_data::Dataset> {
    let log = ltr_clicks::read_click_log(log_path)?;
    let source = match &a.propensities {
        Some(p) => ltr_clicks::PropensitySource::ByRank(ltr_clicks::read_propensity_table(p)?),
        None => ltr_clicks::PropensitySource::Logged,
    };
    let (ds, stats) = ltr_clicks::click_training_set(&log, features, &source).map_err(|e| {
        // A session that cannot be joined: point at its first line of the log.
        let line = match &e {
            ltr_data::DataError::ClickSession { session, .. } => {
                first_line_of_session(log_path, &session.to_string())
            }
            _ => None,
        };
        match line {
            Some(n) => {
                anyhow::anyhow!("{}:{n}: {e} ({})", log_path.display(), a.train.display())
            }
            None => anyhow::anyhow!("{}: {e} ({})", log_path.display(), a.train.display()),
        }
    })?;
    tracing::info!(
        "{}: {} sessions ({} without clicks), {} clicks -> {} training queries",
        log_path.display(),
        stats.sessions,
        stats.sessions_without_clicks,
        stats.clicks,
        stats.queries
    );
    Ok(ds)
}

fn first_line_of_session(path: &std::path::Path, session: &str) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    let prefix = format!("{session}\t");
    text.lines()
        .position(|l| l.starts_with(&prefix))
        .map(|i| i + 1)
}

fn feature_list(text: &str) -> Result<Vec<usize>> {
    match text.strip_prefix('@') {
        Some(path) => {
            let body = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the feature file {path}"))?;
            let mut out = Vec::new();
            for (i, line) in body.lines().enumerate() {
                let t = line.split('#').next().unwrap_or("").trim();
                if t.is_empty() {
                    continue;
                }
                out.extend(
                    ltr_data::parse_feature_list(t).with_context(|| format!("{path}:{}", i + 1))?,
                );
            }
            Ok(out)
        }
        None => Ok(ltr_data::parse_feature_list(text)?),
    }
}

/// Run the command.
pub fn run(a: TrainArgs) -> Result<()> {
    let algo = ltr_learn::find(&a.algo).with_context(|| {
        let names: Vec<&str> = ltr_learn::ALGORITHMS.iter().map(|x| x.name).collect();
        format!("unknown --algo `{}`; known: {}", a.algo, names.join(", "))
    })?;
    let metric: ltr_metrics::Metric = a.metric.parse().context("--metric")?;
    let convention = super::convention(&a.convention, None)?;
    let grid = Grid::parse(&a.params).context("--param")?;
    grid.check_names(algo).context("--param")?;
    if grid.len() > 1 && a.validate.is_none() && !a.distributed {
        bail!(
            "--param lists a grid of {} settings; give --validate to choose among them",
            grid.len()
        );
    }
    let preprocess = ltr_data::PreprocessSpec {
        features: a
            .features
            .as_deref()
            .map(feature_list)
            .transpose()
            .context("--features")?,
        log1p: a
            .log1p
            .as_deref()
            .map(ltr_data::parse_feature_list)
            .transpose()
            .context("--log1p")?
            .unwrap_or_default(),
        normalize: Some(
            a.normalize
                .parse::<ltr_data::NormalizeKind>()
                .map_err(anyhow::Error::msg)
                .context("--normalize")?,
        ),
    };
    if a.distributed {
        return super::distributed::train(&a, algo.name, &grid, &preprocess, metric, convention);
    }
    let bar = Bar::for_terminal();
    let mut train = bar.stage(&format!("reading {}", a.train.display()), || {
        super::load_dataset(&a.train, a.regroup, a.allow_duplicate_docids)
    })?;
    if let Some(log) = &a.clicks {
        train = bar.stage(&format!("joining {}", log.display()), || {
            click_training(&a, log, &train)
        })?;
    }
    let validation = match &a.validate {
        Some(v) => {
            let mut ds = bar.stage(&format!("reading {}", v.display()), || {
                super::load_dataset(v, a.regroup, a.allow_duplicate_docids)
            })?;
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
    log_memory(algo.name, &train, validation.as_ref(), &preprocess);
    let t0 = Instant::now();
    let raw_features = train.n_features();
    // Preprocess in place: raw data is held once, not as the raw and the normalised copy.
    let prepared = ltr_learn::prepare(&preprocess, train, &ltr_core::SingleProcess)
        .with_context(|| format!("preprocessing {}", a.train.display()))?;
    let train = &prepared.data;
    let mut req = TrainRequest::new(train)
        .metric(metric, convention)
        .seed(a.seed)
        .progress(&bar)
        .prepared(&prepared.preprocess);
    if let Some(v) = &validation {
        req = req.validation(v);
    }
    let trained = ltr_learn::train(algo.name, &grid, &req)
        .with_context(|| format!("training {}", algo.name))?;
    if trained.grid_scores.len() > 1 {
        for (setting, score) in &trained.grid_scores {
            tracing::info!(
                "{}: validation {metric} = {score:.4}",
                ltr_learn::describe(setting)
            );
        }
    }
    if let Some(p) = &trained.preprocess {
        tracing::info!(
            "preprocessing stored in the model: {}",
            p.describe().join("; ")
        );
    }
    if let Some(v) = trained.fitted.report.validation {
        tracing::info!(
            "kept {} (validation {metric} = {v:.4})",
            ltr_learn::describe(&trained.params)
        );
    }
    let summary = TrainingSummary {
        train_file: a.train.display().to_string(),
        validation_file: a.validate.as_ref().map(|p| p.display().to_string()),
        queries: train.n_queries(),
        documents: train.n_docs(),
        features: raw_features,
        seed: a.seed,
        seconds: t0.elapsed().as_secs_f64(),
    };
    save(&a, trained.into_model_file(summary), t0)
}

/// Say before training how much memory the run will need (the data is loaded; the rest is estimated).
fn log_memory(
    algo: &str,
    train: &ltr_data::Dataset,
    validation: Option<&ltr_data::Dataset>,
    preprocess: &ltr_data::PreprocessSpec,
) {
    use ltr_data::NormalizeKind;
    let copies = preprocess.features.is_some()
        || !preprocess.log1p.is_empty()
        || match preprocess.normalize.unwrap_or(NormalizeKind::Auto) {
            NormalizeKind::None => false,
            NormalizeKind::Auto => !train.features_in_unit_interval(),
            _ => true,
        };
    // The normalisation is applied in place; only selection/log1p build a (narrower) copy, and a sparse file
    // grows to dense under a z-score.
    let selects = preprocess.features.is_some() || !preprocess.log1p.is_empty();
    let est = ltr_learn::memory_estimate(algo, train, copies && (selects || !train.is_dense()));
    let vali = validation.map_or(0, |v| v.memory_bytes() * if copies { 2 } else { 1 });
    let h = ltr_learn::human_bytes;
    tracing::info!(
        "memory: about {} (training data {}, preprocessed copy {}, validation {}, {algo}'s working set {})",
        h(est.total() + vali),
        h(est.dataset),
        h(est.preprocessed),
        h(vali),
        h(est.working)
    );
}

/// Attach `--feature-names` and write the model atomically.
pub(crate) fn save(a: &TrainArgs, mut mf: ltr_core::ModelFile, t0: Instant) -> Result<()> {
    if let Some(f) = &a.feature_names {
        mf.feature_names = ltr_data::read_feature_names(f)?;
        if mf.feature_names.len() > mf.training.features {
            bail!(
                "{} names {} features but {} has {}",
                f.display(),
                mf.feature_names.len(),
                a.train.display(),
                mf.training.features
            );
        }
    }
    mf.save(&a.model)?;
    tracing::info!(
        "wrote {} in {:.3}s",
        a.model.display(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}
