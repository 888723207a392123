//! [`TrainJob`]: the one description of a training run, which every front end builds — `ltr train` (one process,
//! thread ranks or MPI), `ltr experiment`'s cells, `ltrkit`, the facade and `cargo xtask`.
//!
//! In the manner of ripgrep's LowArgs → HiArgs: a [`TrainJobBuilder`] takes strings or typed values as a front end
//! has them; [`TrainJobBuilder::build`] checks everything (the algorithm, every parameter name, the metric and
//! convention, the preprocessing, that a grid has validation data, that a distributed run has a distributed
//! trainer) before any data is read; the built [`TrainJob`] then knows how to run: it reads or shards the data,
//! joins a click log, logs the memory it will need, preprocesses, trains through the registry on one process,
//! thread ranks or MPI ranks, and returns the model file — written atomically when an output is set.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use ltr_core::{
    Allreduce, LtrError, ModelFile, Progress, Silent, SingleProcess, ThreadGroup, TrainingSummary,
};
use ltr_data::{Dataset, NormalizeKind, ParseOptions, PreprocessSpec, RepeatedQid};
use ltr_metrics::{Convention, Metric};

use crate::algorithms::{find, Algorithm, ALGORITHMS};
use crate::click_join::ClickSource;
use crate::job_error::{JobError, JobInput};
use crate::select::{
    prepare, train, train_distributed, Grid, Handover, Prepared, TrainRequest, TrainSet, Trained,
};
use crate::shards;

/// Training or validation data: a file, or data already in memory.
#[derive(Debug, Clone)]
pub enum TrainData<'a> {
    /// A LETOR/SVMlight file or a `.ltrcache`. For a distributed run, a path containing `{rank}` names one shard
    /// file per rank (as `ltr shard` writes them); otherwise each rank keeps its share of the one file.
    File(PathBuf),
    /// Data in memory, named `name` in the model's provenance.
    Memory {
        /// The data.
        data: &'a Dataset,
        /// What the model file records as its source.
        name: String,
    },
}

impl TrainData<'_> {
    fn label(&self) -> String {
        match self {
            Self::File(p) => p.display().to_string(),
            Self::Memory { name, .. } => name.clone(),
        }
    }
}

/// Where training runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ranks {
    /// One process; the learners use the rayon thread pool.
    #[default]
    Single,
    /// Data parallel over ranks, each training on whole queries: the processes of an MPI launcher (`mpirun -n P`,
    /// in a build with the `mpi` feature), or else `threads` thread ranks of this process (`None`: one per CPU).
    Distributed {
        /// Thread ranks when no MPI launcher started the process.
        threads: Option<usize>,
    },
}

/// The unchecked description of a training run, as front ends have it (strings or typed values); [`build`]
/// checks it.
///
/// [`build`]: TrainJobBuilder::build
pub struct TrainJobBuilder<'a> {
    algorithm: String,
    grid: std::result::Result<Grid, String>,
    metric: std::result::Result<Metric, String>,
    convention: std::result::Result<Convention, String>,
    seed: u64,
    normalize: std::result::Result<Option<NormalizeKind>, String>,
    log1p: std::result::Result<Vec<usize>, String>,
    features: std::result::Result<Option<Vec<usize>>, String>,
    train: Option<TrainData<'a>>,
    validation: Option<TrainData<'a>>,
    parse: ParseOptions,
    clicks: Option<ClickSource>,
    ranks: Ranks,
    feature_names: Option<PathBuf>,
    output: Option<PathBuf>,
    progress: &'a dyn Progress,
    verbose: bool,
    epochs: Option<&'a ltr_core::EpochObserver<'a>>,
}

/// A checked training run: [`run`](TrainJob::run) it.
pub struct TrainJob<'a> {
    algorithm: &'static Algorithm,
    grid: Grid,
    metric: Metric,
    convention: Convention,
    seed: u64,
    preprocess: PreprocessSpec,
    train: TrainData<'a>,
    validation: Option<TrainData<'a>>,
    parse: ParseOptions,
    clicks: Option<ClickSource>,
    /// The click set the settings read ([`crate::ClickUse::under`] their `debias`).
    click_set: crate::click_join::ClickSet,
    ranks: Ranks,
    feature_names: Vec<String>,
    feature_names_file: Option<PathBuf>,
    output: Option<PathBuf>,
    progress: &'a dyn Progress,
    verbose: bool,
    epochs: Option<&'a ltr_core::EpochObserver<'a>>,
}

/// What a finished run gives.
#[derive(Debug)]
pub struct TrainOutcome {
    /// The model file (`None` on the MPI ranks other than 0, which write nothing).
    pub model: Option<ModelFile>,
    /// The validation score of every grid setting, in grid order (empty without validation).
    pub grid_scores: Vec<(std::collections::BTreeMap<String, String>, f64)>,
    /// Seconds from reading the data to the model file.
    pub seconds: f64,
}

impl std::fmt::Debug for TrainJobBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainJobBuilder")
            .field("algorithm", &self.algorithm)
            .field("seed", &self.seed)
            .field("ranks", &self.ranks)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for TrainJob<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainJob")
            .field("algorithm", &self.algorithm.name)
            .field("grid", &self.grid)
            .field("metric", &self.metric)
            .field("convention", &self.convention.name)
            .field("seed", &self.seed)
            .field("ranks", &self.ranks)
            .finish_non_exhaustive()
    }
}

fn feature_list(text: &str) -> std::result::Result<Vec<usize>, String> {
    let Some(path) = text.strip_prefix('@') else {
        return ltr_data::parse_feature_list(text).map_err(|e| e.to_string());
    };
    // RankLib's -feature file: one feature number (or range) per line, `#` comments.
    let body = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the feature file {path}: {e}"))?;
    let mut out = Vec::new();
    for (i, line) in body.lines().enumerate() {
        let t = line.split('#').next().unwrap_or("").trim();
        if !t.is_empty() {
            out.extend(
                ltr_data::parse_feature_list(t).map_err(|e| format!("{path}:{}: {e}", i + 1))?,
            );
        }
    }
    Ok(out)
}

impl<'a> TrainJob<'a> {
    /// Start describing a run of `algorithm` (a registry name, checked by [`TrainJobBuilder::build`]) with its
    /// defaults: no parameters, NDCG@10 under the standard convention, seed 1, `auto` normalisation, one process.
    pub fn builder(algorithm: &str) -> TrainJobBuilder<'a> {
        TrainJobBuilder {
            algorithm: algorithm.to_string(),
            grid: Ok(Grid::default()),
            metric: Ok(Metric::Ndcg(Some(10))),
            convention: Ok(Convention::STANDARD),
            seed: 1,
            normalize: Ok(Some(NormalizeKind::Auto)),
            log1p: Ok(Vec::new()),
            features: Ok(None),
            train: None,
            validation: None,
            parse: ParseOptions::default(),
            clicks: None,
            ranks: Ranks::Single,
            feature_names: None,
            output: None,
            progress: &Silent,
            verbose: false,
            epochs: None,
        }
    }
}

impl<'a> TrainJobBuilder<'a> {
    /// Parameters as `name=value`; `name=v1,v2` is a grid axis chosen on the validation data.
    pub fn params<S: AsRef<str>>(mut self, items: &[S]) -> Self {
        self.grid = Grid::parse(items).map_err(|e| e.to_string());
        self
    }
    /// Parameters as a parsed grid.
    pub fn grid(mut self, grid: Grid) -> Self {
        self.grid = Ok(grid);
        self
    }
    /// The validation metric by name (`NDCG@10`, ir_measures names too).
    pub fn metric_name(mut self, name: &str) -> Self {
        self.metric = name.parse::<Metric>().map_err(|e| e.to_string());
        self
    }
    /// The convention by name (`standard`, `letor3`, `letor4`, `trec`, …).
    pub fn convention_name(mut self, name: &str) -> Self {
        self.convention = name.parse::<Convention>().map_err(|e| e.to_string());
        self
    }
    /// The validation metric and its convention, typed.
    pub fn metric(mut self, metric: Metric, convention: Convention) -> Self {
        self.metric = Ok(metric);
        self.convention = Ok(convention);
        self
    }
    /// The seed of every random choice.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// The normalisation by name (`none`, `auto`, `zscore`, `minmax`, `query-zscore`, `query-minmax`, `query-sum`).
    pub fn normalize_name(mut self, name: &str) -> Self {
        self.normalize = name
            .parse::<NormalizeKind>()
            .map(Some)
            .map_err(|e| e.to_string());
        self
    }
    /// Features given a sign-preserving `log1p` before normalising (`1-5,12`; file numbering).
    pub fn log1p_list(mut self, list: &str) -> Self {
        self.log1p = ltr_data::parse_feature_list(list).map_err(|e| e.to_string());
        self
    }
    /// Keep only these features (`1-5,12`, or `@FILE` with one feature number per line as RankLib's -feature).
    pub fn features_list(mut self, list: &str) -> Self {
        self.features = feature_list(list).map(Some);
        self
    }
    /// The whole preprocessing, typed.
    pub fn preprocess(mut self, spec: PreprocessSpec) -> Self {
        self.normalize = Ok(spec.normalize);
        self.log1p = Ok(spec.log1p);
        self.features = Ok(spec.features);
        self
    }
    /// The training data.
    pub fn train(mut self, data: TrainData<'a>) -> Self {
        self.train = Some(data);
        self
    }
    /// Validation data: chooses grid settings and, for some algorithms, epochs, rounds or member weights.
    pub fn validation(mut self, data: Option<TrainData<'a>>) -> Self {
        self.validation = data;
        self
    }
    /// How files are parsed (regrouping repeated qids, duplicate docids).
    pub fn parse_options(mut self, opts: ParseOptions) -> Self {
        self.parse = opts;
        self
    }
    /// Merge the runs of a qid that reappears later in a file, and accept a docid twice within a query.
    pub fn data_options(mut self, regroup: bool, allow_duplicate_docids: bool) -> Self {
        self.parse.repeated_qid = if regroup {
            RepeatedQid::Regroup
        } else {
            RepeatedQid::Error
        };
        self.parse.allow_duplicate_docids = allow_duplicate_docids;
        self
    }
    /// Train on a click log instead of the training data's labels.
    pub fn clicks(mut self, clicks: Option<ClickSource>) -> Self {
        self.clicks = clicks;
        self
    }
    /// Where training runs.
    pub fn ranks(mut self, ranks: Ranks) -> Self {
        self.ranks = ranks;
        self
    }
    /// Feature names stored in the model: one per line (line k names feature k) or `id name` pairs.
    pub fn feature_names(mut self, path: Option<PathBuf>) -> Self {
        self.feature_names = path;
        self
    }
    /// Write the model file here (atomically; `.json` for JSON, anything else for the compact binary form).
    pub fn output(mut self, path: Option<PathBuf>) -> Self {
        self.output = path;
        self
    }
    /// Report progress to `p`.
    pub fn progress(mut self, p: &'a dyn Progress) -> Self {
        self.progress = p;
        self
    }
    /// Show the model after every epoch to `observer` (learners with epochs: the perceptrons), as reproductions
    /// draw learning curves.
    pub fn epoch_observer(mut self, observer: &'a ltr_core::EpochObserver<'a>) -> Self {
        self.epochs = Some(observer);
        self
    }
    /// Log the run's summary (memory estimate, every grid setting's score, the setting kept, the stored
    /// preprocessing) at `info` rather than `debug`: what `ltr train` shows.
    pub fn verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Check every input before any data is read.
    pub fn build(self) -> Result<TrainJob<'a>, JobError> {
        use JobInput as I;
        let algorithm = find(&self.algorithm).ok_or_else(|| {
            let names: Vec<&str> = ALGORITHMS.iter().map(|a| a.name).collect();
            JobError::invalid(
                I::Algo,
                format!(
                    "unknown algorithm `{}`; known: {}",
                    self.algorithm,
                    names.join(", ")
                ),
            )
        })?;
        if let (Some(_), crate::ClickUse::Refused(why)) = (&self.clicks, algorithm.clicks) {
            return Err(JobError::invalid(
                I::Clicks,
                crate::algorithms::click_refusal(algorithm.name, why),
            ));
        }
        let metric = self.metric.map_err(|e| JobError::invalid(I::Metric, e))?;
        let convention = self
            .convention
            .map_err(|e| JobError::invalid(I::Convention, e))?;
        let grid = self.grid.map_err(|e| JobError::invalid(I::Param, e))?;
        grid.check_names(algorithm)
            .map_err(|e| JobError::invalid(I::Param, e))?;
        // The click set the grid's settings read: one for all of them.
        let click_set = crate::click_join::click_set(algorithm, &grid)
            .map_err(|e| JobError::invalid(I::Param, e))?;
        if let (Some(c), crate::ClickUse::Sessions) = (&self.clicks, click_set.reads) {
            if c.propensities.is_some() {
                return Err(JobError::invalid(
                    I::Clicks,
                    crate::click_join::no_propensity_table(algorithm.name),
                ));
            }
        }
        let distributed = matches!(self.ranks, Ranks::Distributed { .. });
        if distributed {
            if grid.len() > 1 {
                return Err(JobError::invalid(
                    I::Param,
                    "distributed training takes one setting; choose C (or any other value) on a sample first",
                ));
            }
            if self.validation.is_some() {
                return Err(JobError::invalid(
                    I::Validate,
                    "distributed training does not use validation data (it selects nothing)",
                ));
            }
            if self.clicks.is_some() {
                return Err(JobError::invalid(
                    I::Clicks,
                    "a click set trains in one process",
                ));
            }
            if algorithm.distributed.is_none() {
                return Err(JobError::invalid(
                    I::Algo,
                    format!(
                        "`{}` has no distributed trainer; distributed training supports: {}",
                        algorithm.name,
                        crate::distributed_names().join(", ")
                    ),
                ));
            }
            if let Ranks::Distributed { threads: Some(0) } = self.ranks {
                return Err(JobError::invalid(I::Ranks, "must be at least 1"));
            }
            if matches!(self.train, Some(TrainData::Memory { .. })) {
                return Err(JobError::invalid(
                    I::Train,
                    "distributed training reads its data from files",
                ));
            }
        } else if grid.len() > 1 && self.validation.is_none() {
            return Err(JobError::invalid(
                I::Validate,
                format!(
                        "the parameters list a grid of {} settings; give validation data to choose among them",
                        grid.len()
                    ),
            ));
        }
        let preprocess = PreprocessSpec {
            features: self
                .features
                .map_err(|e| JobError::invalid(I::Features, e))?,
            log1p: self.log1p.map_err(|e| JobError::invalid(I::Log1p, e))?,
            normalize: self
                .normalize
                .map_err(|e| JobError::invalid(I::Normalize, e))?,
        };
        // `auto` is `none` for the trees (they split on bins of distinct values).
        let preprocess = algorithm.preprocess_for(&preprocess).into_owned();
        let train = self
            .train
            .ok_or_else(|| JobError::invalid(I::Train, "no training data given"))?;
        let feature_names = match &self.feature_names {
            Some(path) => ltr_data::read_feature_names(path)
                .map_err(|e| JobError::invalid(I::FeatureNames, e))?,
            None => Vec::new(),
        };
        Ok(TrainJob {
            algorithm,
            grid,
            metric,
            convention,
            seed: self.seed,
            preprocess,
            train,
            validation: self.validation,
            parse: self.parse,
            clicks: self.clicks,
            click_set,
            ranks: self.ranks,
            feature_names,
            feature_names_file: self.feature_names,
            output: self.output,
            progress: self.progress,
            verbose: self.verbose,
            epochs: self.epochs,
        })
    }
}

impl TrainJob<'_> {
    /// The algorithm.
    pub fn algorithm(&self) -> &'static Algorithm {
        self.algorithm
    }

    /// Read the data, train and return (and write, when an output is set) the model file.
    pub fn run(&self) -> Result<TrainOutcome, JobError> {
        match self.ranks {
            Ranks::Single => self.run_single(),
            Ranks::Distributed { threads } => self.run_distributed(threads),
        }
    }

    /// A file is read; data in memory is borrowed, and copied only by whoever must change it.
    fn read<'d>(&self, data: &'d TrainData<'_>) -> Result<Cow<'d, Dataset>, JobError> {
        match data {
            TrainData::File(path) => ltr_core::stage(
                self.progress,
                &format!("reading {}", path.display()),
                || ltr_data::read_dataset(path, &self.parse).map_err(LtrError::from),
            )
            .map(Cow::Owned),
            TrainData::Memory { data, .. } => Ok(Cow::Borrowed(*data)),
        }
        .map_err(|e| JobError::failed("reading the data", e))
    }

    fn run_single(&self) -> Result<TrainOutcome, JobError> {
        let t0 = Instant::now();
        let algo = self.algorithm.name;
        let train_label = self.train.label();
        // In-memory data is borrowed and preprocessed into a copy; a file is read, then preprocessed in place.
        let owned_train = match (&self.train, &self.clicks) {
            (TrainData::Memory { .. }, None) => None,
            (source, clicks) => {
                let features = self.read(source)?;
                Some(match clicks {
                    Some(c) => ltr_core::stage(
                        self.progress,
                        &format!("joining {}", c.log.display()),
                        || {
                            crate::click_join::click_training(
                                c,
                                &features,
                                &train_label,
                                &self.click_set,
                            )
                        },
                    )?,
                    None => crate::click_join::with_position_file(source, features.into_owned())?,
                })
            }
        };
        let validation = match &self.validation {
            None => None,
            Some(v) => {
                let width = match (&owned_train, &self.train) {
                    (Some(t), _) => t.n_features(),
                    (None, TrainData::Memory { data, .. }) => data.n_features(),
                    (None, TrainData::File(_)) => unreachable!("a file is always read"),
                };
                let mut ds = self.read(v)?;
                if ds.n_features() > width {
                    return Err(JobError::failed(
                        "reading the validation data",
                        LtrError::Shape(format!(
                            "{} has {} features but the training data {train_label} has {width}",
                            v.label(),
                            ds.n_features()
                        )),
                    ));
                }
                if ds.n_features() < width {
                    ds.to_mut()
                        .set_n_features(width)
                        .map_err(|e| JobError::failed("reading the validation data", e))?;
                }
                // A metric the validation data cannot give (ERR on grades above the convention's largest, …) is
                // refused now, not after the first rounds of training.
                let zeros = vec![0.0; ds.n_docs()];
                ltr_metrics::evaluate_mean(&ds, &zeros, self.metric, &self.convention).map_err(
                    |e| {
                        JobError::invalid(
                            JobInput::Metric,
                            format!("{} cannot be computed on {}: {e}", self.metric, v.label()),
                        )
                    },
                )?;
                Some(ds)
            }
        };
        let training = |e: LtrError| JobError::failed(format!("training {algo}"), e);
        let preprocessed;
        let (trained, queries, documents, features) = match owned_train {
            Some(data) => {
                self.log_memory(&data, validation.as_deref(), true);
                let (queries, documents, raw) =
                    (data.n_queries(), data.n_docs(), data.n_features());
                // Preprocessed in place: raw data is held once, not as the raw and the normalised copy. Then
                // handed over: the learner owns it and frees what it no longer needs (the trees' features once
                // binned).
                let Prepared { data, preprocess } = prepare(&self.preprocess, data, &SingleProcess)
                    .map_err(|e| JobError::failed(format!("preprocessing {train_label}"), e))?;
                preprocessed = preprocess;
                let handover = Handover::new(data);
                let mut req = self
                    .request(TrainSet::HandedOver(&handover))
                    .prepared(&preprocessed);
                if let Some(v) = &validation {
                    req = req.validation(v);
                }
                (
                    train(algo, &self.grid, &req).map_err(training)?,
                    queries,
                    documents,
                    raw,
                )
            }
            None => {
                let TrainData::Memory { data, .. } = &self.train else {
                    unreachable!("only in-memory data is borrowed")
                };
                self.log_memory(data, validation.as_deref(), false);
                let mut req = self
                    .request(TrainSet::Borrowed(data))
                    .preprocess(&self.preprocess);
                if let Some(v) = &validation {
                    req = req.validation(v);
                }
                let trained = train(algo, &self.grid, &req).map_err(training)?;
                (trained, data.n_queries(), data.n_docs(), data.n_features())
            }
        };
        self.log_trained(&trained);
        let summary = TrainingSummary {
            train_file: train_label,
            validation_file: self.validation.as_ref().map(TrainData::label),
            queries,
            documents,
            features,
            seed: self.seed,
            seconds: t0.elapsed().as_secs_f64(),
        };
        let grid_scores = trained.grid_scores.clone();
        let model = self.finish(trained.into_model_file(summary), t0)?;
        Ok(TrainOutcome {
            model: Some(model),
            grid_scores,
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    fn request<'r>(&'r self, data: TrainSet<'r>) -> TrainRequest<'r> {
        let req = TrainRequest::on(data)
            .metric(self.metric, self.convention)
            .seed(self.seed)
            .progress(self.progress);
        match self.epochs {
            Some(observer) => req.epoch_observer(observer),
            None => req,
        }
    }

    /// A line of the run's summary (memory, grid scores, kept setting): `info` for a [`verbose`] job (`ltr
    /// train`), `debug` otherwise, so that experiment cells and reproductions training many models stay quiet.
    ///
    /// [`verbose`]: TrainJobBuilder::verbose
    fn say(&self, line: String) {
        if self.verbose {
            tracing::info!("{line}");
        } else {
            tracing::debug!("{line}");
        }
    }

    /// Say before training how much memory the run will need (the data is loaded; the rest is estimated), the
    /// data `handed_over` to the learner or borrowed.
    fn log_memory(&self, train: &Dataset, validation: Option<&Dataset>, handed_over: bool) {
        let algo = self.algorithm.name;
        if crate::memory::sizing_refuses(algo, train, &self.grid) {
            // The fit refuses these parameters next, with the reason; a generic estimate would only mislead.
            return;
        }
        let est = crate::memory_estimate(algo, train, self.preprocess.copies(train), &self.grid);
        let est = if handed_over { est } else { est.borrowed() };
        let copies = if self.preprocess.transforms(train) {
            2
        } else {
            1
        };
        let vali = validation.map_or(0, |v| v.memory_bytes() * copies);
        let h = crate::human_bytes;
        self.say(format!(
            "memory: about {} (training data {}, preprocessed copy {}, validation {}, {algo}'s working set {}{}{})",
            h(est.total() + vali),
            h(est.dataset),
            h(est.preprocessed),
            h(vali),
            h(est.working),
            if est.row_copy > 0 {
                format!(" and row-major copy {}", h(est.row_copy))
            } else {
                String::new()
            },
            if est.freed > 0 {
                format!(", built as it frees {} of the training data", h(est.freed))
            } else {
                String::new()
            }
        ));
    }

    fn log_trained(&self, trained: &Trained) {
        if trained.grid_scores.len() > 1 {
            for (setting, score) in &trained.grid_scores {
                self.say(format!(
                    "{}: validation {} = {score:.4}",
                    crate::describe(setting),
                    self.metric
                ));
            }
        }
        if let Some(p) = &trained.preprocess {
            self.say(format!(
                "preprocessing stored in the model: {}",
                p.describe().join("; ")
            ));
        }
        if let Some(v) = trained.fitted.report.validation {
            self.say(format!(
                "kept {} (validation {} = {v:.4})",
                crate::describe(&trained.params),
                self.metric
            ));
        }
    }

    /// Attach the feature names and write the model file when an output is set.
    fn finish(&self, mut mf: ModelFile, t0: Instant) -> Result<ModelFile, JobError> {
        if !self.feature_names.is_empty() {
            if self.feature_names.len() > mf.training.features {
                let file = self.feature_names_file.as_deref().unwrap_or(Path::new(""));
                return Err(JobError::invalid(
                    JobInput::FeatureNames,
                    LtrError::Shape(format!(
                        "{} names {} features but {} has {}",
                        file.display(),
                        self.feature_names.len(),
                        mf.training.train_file,
                        mf.training.features
                    )),
                ));
            }
            mf.feature_names = self.feature_names.clone();
        }
        if let Some(out) = &self.output {
            mf.save(out)
                .map_err(|e| JobError::failed("writing the model", e))?;
            tracing::info!(
                "wrote {} in {:.3}s",
                out.display(),
                t0.elapsed().as_secs_f64()
            );
        }
        Ok(mf)
    }

    fn run_distributed(&self, threads: Option<usize>) -> Result<TrainOutcome, JobError> {
        let t0 = Instant::now();
        #[cfg(feature = "mpi")]
        if let Some(mpi) = ltr_mpi::Mpi::from_launcher() {
            return Ok(self.run_mpi(&mpi, t0));
        }
        refuse_launcher_without_backend(ltr_mpi::ENABLED, ltr_mpi::launcher_variable())?;
        let ranks =
            threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let TrainData::File(pattern) = &self.train else {
            unreachable!("build refuses in-memory data for distributed runs")
        };
        // One process: read the shards up front (one file per rank, or the one file split by pairs).
        let shards = shards::load_all(pattern, &self.parse, ranks)
            .map_err(|e| JobError::failed("reading the shards", e))?;
        tracing::info!(
            "training {} on {ranks} ranks (threads) of {} queries: {}",
            self.algorithm.name,
            shards.iter().map(Dataset::n_queries).sum::<usize>(),
            shards
                .iter()
                .map(|s| s.n_docs().to_string())
                .collect::<Vec<_>>()
                .join(" + ")
        );
        // Each rank takes its shard (and frees it when done).
        let shards: Vec<std::sync::Mutex<Option<Dataset>>> = shards
            .into_iter()
            .map(|s| std::sync::Mutex::new(Some(s)))
            .collect();
        // A rank's own error is kept whole; the group only learns that it failed (and stops the others).
        let own_error = std::sync::Mutex::new(None);
        let results = ThreadGroup::run(ranks, |comm| {
            let shard = shards[comm.rank()]
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take()
                .expect("each rank takes its shard once");
            self.train_rank(shard, comm).map_err(|e| {
                let text = e.to_string();
                own_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
                LtrError::Training(text)
            })
        });
        let mut first = None;
        for r in results {
            match r {
                Ok(t) => {
                    first.get_or_insert(t);
                }
                Err(e) => {
                    let own = own_error.into_inner().unwrap_or_else(|p| p.into_inner());
                    return Err(own.unwrap_or_else(|| JobError::failed("distributed training", e)));
                }
            }
        }
        let (trained, mut summary) = first.expect("a group has at least one rank");
        summary.seconds = t0.elapsed().as_secs_f64();
        let model = self.finish(trained.into_model_file(summary), t0)?;
        Ok(TrainOutcome {
            model: Some(model),
            grid_scores: Vec::new(),
            seconds: t0.elapsed().as_secs_f64(),
        })
    }

    /// Train on this rank's shard; every rank returns the same model.
    fn train_rank(
        &self,
        shard: Dataset,
        comm: &dyn Allreduce,
    ) -> Result<(Trained, TrainingSummary), JobError> {
        let (algo, rank) = (self.algorithm.name, comm.rank());
        let t0 = Instant::now();
        // Preprocessed in place (statistics over all ranks): each rank holds its shard once.
        let prepared = prepare(&self.preprocess, shard, comm)
            .map_err(|e| JobError::failed(format!("preprocessing on rank {rank}"), e))?;
        let Prepared { data, preprocess } = prepared;
        let (shard_queries, shard_docs, shard_features) =
            (data.n_queries(), data.n_docs(), data.n_features());
        // Handed over, as `ltr train` on one process does: each rank's trees free the shard's f32 features once
        // binned, so a rank's peak is its shard, not its shard plus the bins.
        let handover = Handover::new(data);
        let req = TrainRequest::handed_over(&handover)
            .metric(self.metric, self.convention)
            .seed(self.seed)
            .prepared(&preprocess);
        let trained = train_distributed(algo, &self.grid, &req, comm)
            .map_err(|e| JobError::failed(format!("training {algo} on rank {rank}"), e))?;
        let totals = comm
            .gather_f64(&[shard_queries as f64, shard_docs as f64])
            .map_err(|e| JobError::failed(format!("training {algo} on rank {rank}"), e))?;
        let (queries, documents) = totals
            .chunks_exact(2)
            .fold((0.0, 0.0), |(q, d), c| (q + c[0], d + c[1]));
        tracing::debug!(
            "rank {rank}: {shard_queries} queries, {shard_docs} documents, trained in {:.3}s",
            t0.elapsed().as_secs_f64()
        );
        let features = match &trained.preprocess {
            Some(p) => p.raw_features,
            None => shard_features,
        };
        let summary = TrainingSummary {
            train_file: self.train.label(),
            validation_file: None,
            queries: queries as usize,
            documents: documents as usize,
            features,
            seed: self.seed,
            seconds: 0.0,
        };
        Ok((trained, summary))
    }

    /// One process of `mpirun -n P`: read this rank's shard, train, and write the model on rank 0. A rank that
    /// fails alone stops the job (the others would wait in their next collective forever), after saying why.
    #[cfg(feature = "mpi")]
    fn run_mpi(&self, mpi: &ltr_mpi::Mpi, t0: Instant) -> TrainOutcome {
        let (rank, size) = (mpi.rank(), mpi.size());
        if let Ranks::Distributed { threads: Some(r) } = self.ranks {
            if r != size {
                ltr_core::print_error_line(format_args!(
                    "--ranks {r} disagrees with the {size} MPI processes (drop --ranks under mpirun)"
                ));
                mpi.abort(2);
            }
        }
        let fail = |e: JobError| -> ! {
            ltr_core::print_error_line(format_args!("rank {rank} of {size}: {e}"));
            mpi.abort(1)
        };
        let TrainData::File(pattern) = &self.train else {
            unreachable!("build refuses in-memory data for distributed runs")
        };
        let shard = shards::load_shard(pattern, &self.parse, rank, size)
            .map_err(|e| JobError::failed("reading the shard", e))
            .unwrap_or_else(|e| fail(e));
        if rank == 0 {
            tracing::info!("training {} on {size} MPI ranks", self.algorithm.name);
        }
        let (trained, mut summary) = self.train_rank(shard, mpi).unwrap_or_else(|e| fail(e));
        let model = (rank == 0).then(|| {
            summary.seconds = t0.elapsed().as_secs_f64();
            self.finish(trained.into_model_file(summary), t0)
                .unwrap_or_else(|e| fail(e))
        });
        TrainOutcome {
            model,
            grid_scores: Vec::new(),
            seconds: t0.elapsed().as_secs_f64(),
        }
    }
}

/// An error when an MPI launcher started this process (`launcher`: its marking variable) but the build has no MPI
/// backend: every process of `mpirun -n P` would otherwise train alone — on rank 0's shard, as the only rank —
/// and write its own model, a silent wrong answer.
// pub for the tests in tests/unit/job.rs; not API.
#[doc(hidden)]
pub fn refuse_launcher_without_backend(
    backend: bool,
    launcher: Option<(&str, String)>,
) -> Result<(), JobError> {
    match launcher {
        Some((var, value)) if !backend => Err(JobError::invalid(
            JobInput::Ranks,
            LtrError::Training(format!(
                "this `ltr` was built without MPI but runs under an MPI launcher ({var}={value}): build it with \
                 `cargo build --release -p ltr-cli --features mpi` (scripts/setup-mpi.sh installs Open MPI), or \
                 drop mpirun and train on thread ranks with --ranks N"
            )),
        )),
        _ => Ok(()),
    }
}
