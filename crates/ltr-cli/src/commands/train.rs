//! `ltr train`: the flags of a [`TrainJob`] (`ltr-learn`): an algorithm by name, a validation grid over
//! comma-listed parameters, preprocessing, a click log, and ranks (threads or MPI) for data-parallel training.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use ltr_learn::{ClickSource, Ranks, TrainData, TrainJob};

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
    /// How the data files are read.
    #[command(flatten)]
    pub read: super::DataOpts,
    /// Feature names stored in the model: one per line (line k names feature k) or `id name` pairs.
    #[arg(long)]
    pub feature_names: Option<PathBuf>,
    /// Train on this click log (`ltr clicks simulate`'s TSV) instead of --train's labels: --train holds the
    /// features its (qid, docid) pairs join to; each click becomes a query (the clicked document over the others
    /// displayed) with its propensity, for propensity-ranksvm, lambdarank and listnet.
    #[arg(long)]
    pub clicks: Option<PathBuf>,
    /// Propensities by rank (`ltr clicks propensity --out`) for a log without a propensity column.
    #[arg(long, requires = "clicks")]
    pub propensities: Option<PathBuf>,
    /// Which sessions of --clicks to read: `every` (a query --train lacks is an error), or `train-queries` (only
    /// --train's queries'; the others are checked, skipped and counted: a log over a data set --train is part of).
    #[arg(long, default_value = "every", value_parser = ["every", "train-queries"], requires = "clicks")]
    pub click_sessions: String,
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

/// Run the command: map the flags onto a [`TrainJob`], which checks them all before reading any data.
pub fn run(a: TrainArgs) -> Result<()> {
    let bar = Bar::for_terminal();
    let mut job = TrainJob::builder(&a.algo)
        .params(&a.params)
        .metric_name(&a.metric)
        .convention_name(&a.convention)
        .seed(a.seed)
        .normalize_name(&a.normalize);
    if let Some(list) = &a.log1p {
        job = job.log1p_list(list);
    }
    if let Some(list) = &a.features {
        job = job.features_list(list);
    }
    let ranks = if a.distributed {
        Ranks::Distributed { threads: a.ranks }
    } else {
        Ranks::Single
    };
    let scope = ltr_learn::SessionScope::parse(&a.click_sessions)?;
    let job = job
        .train(TrainData::File(a.train.clone()))
        .validation(a.validate.clone().map(TrainData::File))
        .data_options(a.read.regroup, a.read.allow_duplicate_docids)
        .clicks(a.clicks.clone().map(|log| ClickSource {
            log,
            propensities: a.propensities.clone(),
            scope,
        }))
        .ranks(ranks)
        .feature_names(a.feature_names.clone())
        .output(Some(a.model.clone()))
        .progress(&bar)
        .verbose(true)
        .build()?;
    job.run()?;
    Ok(())
}
