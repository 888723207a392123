//! Training by name with model selection: a [`Grid`] of settings (`--param c=0.01,0.1,1`), each trained through
//! the registry and measured on validation data by a metric under a convention; the best is kept by
//! [`best_by_validation`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Mutex;

use ltr_core::{
    best_by_validation, FitContext, Fitted, LtrError, Measure, ModelFile, Params, Progress, Result,
    Scorer, Silent, TrainingSummary, WarmStarts,
};
use ltr_data::{Dataset, Preprocess, PreprocessSpec};
use ltr_metrics::{evaluate_mean, Convention, Metric};

use crate::algorithms::{find_or_err, Algorithm};

/// A metric under a convention, as the [`Measure`] learners validate with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricMeasure {
    /// The metric.
    pub metric: Metric,
    /// Its convention.
    pub convention: Convention,
}

impl Measure for MetricMeasure {
    fn measure(&self, data: &Dataset, scores: &[f64]) -> Result<f64> {
        evaluate_mean(data, scores, self.metric, &self.convention).map_err(LtrError::measure)
    }
    fn names(&self) -> Option<(String, String)> {
        Some((self.metric.to_string(), self.convention.name.to_string()))
    }
}

/// Hyperparameter settings: each name with one value, or several (a grid axis searched on validation).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grid {
    axes: Vec<(String, Vec<String>)>,
}

impl Grid {
    /// Parse `name=value` and `name=v1,v2,v3` items (the CLI's `--param`); a name given twice is an error.
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Self> {
        let mut axes: Vec<(String, Vec<String>)> = Vec::new();
        for item in items {
            let item = item.as_ref();
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| LtrError::param(item, "expected name=value"))?;
            let k = k.trim();
            if k.is_empty() {
                return Err(LtrError::param(item, "empty name"));
            }
            if axes.iter().any(|(n, _)| n.eq_ignore_ascii_case(k)) {
                return Err(LtrError::param(
                    k,
                    "given twice; give a grid as one comma list (name=v1,v2)",
                ));
            }
            let vals: Vec<String> = v.split(',').map(|s| s.trim().to_string()).collect();
            if vals.iter().any(String::is_empty) {
                return Err(LtrError::param(k, format!("`{item}`: empty value")));
            }
            axes.push((k.to_string(), vals));
        }
        Ok(Self { axes })
    }
    /// One setting (no grid) from `(name, value)` pairs.
    pub fn single<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Self {
            axes: pairs
                .into_iter()
                .map(|(k, v)| (k.as_ref().to_string(), vec![v.as_ref().to_string()]))
                .collect(),
        }
    }
    /// Every combination, the first axis varying slowest.
    pub fn settings(&self) -> Vec<Vec<(String, String)>> {
        let mut out: Vec<Vec<(String, String)>> = vec![vec![]];
        for (k, vals) in &self.axes {
            let mut next = Vec::with_capacity(out.len() * vals.len());
            for prefix in &out {
                for v in vals {
                    let mut p = prefix.clone();
                    p.push((k.clone(), v.clone()));
                    next.push(p);
                }
            }
            out = next;
        }
        out
    }
    /// Check that every name of the grid is a parameter of `algorithm` ([`Algorithm::check_names`]), before any
    /// data is read: `ltr train` and `ltr experiment` report a misspelt name at once, not after loading the data
    /// (or after the cells of the methods before it).
    pub fn check_names(&self, algorithm: &Algorithm) -> Result<()> {
        algorithm.check_names(&Params::new(
            self.axes.iter().map(|(name, values)| (name, &values[0])),
        ))
    }
    /// Number of settings.
    pub fn len(&self) -> usize {
        self.axes.iter().map(|(_, v)| v.len()).product()
    }
    /// Always false: a grid has at least the empty setting.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// The training data of a [`TrainRequest`]: borrowed, or handed over for the learner to own.
#[derive(Debug, Clone, Copy)]
pub enum TrainSet<'a> {
    /// The caller keeps the data; a learner that needs a changed copy makes one.
    Borrowed(&'a Dataset),
    /// [`train`] takes the data out of the [`Handover`]: with one setting it gives it to the learner
    /// ([`Algorithm::fit_owned`]), which frees what it no longer needs while it trains.
    HandedOver(&'a Handover),
}

impl<'a> TrainSet<'a> {
    /// The data, lent or taken out of its [`Handover`] (an error when taken before).
    fn take(self) -> Result<Cow<'a, Dataset>> {
        Ok(match self {
            TrainSet::Borrowed(t) => Cow::Borrowed(t),
            TrainSet::HandedOver(h) => Cow::Owned(h.take()?),
        })
    }
}

/// Training data handed over to [`train`] ([`TrainRequest::handed_over`]), which takes it out once: a second
/// [`train`] on the same handover is an error. `ltr train` hands over the data it read, so that the tree learners
/// can free the f32 features once they are binned (issue 40's peak memory at 3.77 M documents).
#[derive(Debug)]
pub struct Handover(Mutex<Option<Dataset>>);

impl Handover {
    /// Hand `data` over.
    pub fn new(data: Dataset) -> Self {
        Self(Mutex::new(Some(data)))
    }
    /// The data, taken out; an error when it was taken before.
    fn take(&self) -> Result<Dataset> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                LtrError::Training("the training data handed over was already trained on".into())
            })
    }
}

/// Everything training by name needs besides the algorithm and its settings.
#[derive(Clone, Copy)]
pub struct TrainRequest<'a> {
    /// Training data.
    pub train: TrainSet<'a>,
    /// Validation data: chooses grid settings and, inside learners, epochs, rounds, member weights, λ.
    pub validation: Option<&'a Dataset>,
    /// The validation metric (and what MHR tunes its weights by).
    pub metric: Metric,
    /// Its convention.
    pub convention: Convention,
    /// Seed of every random choice.
    pub seed: u64,
    /// Progress sink.
    pub progress: &'a dyn Progress,
    /// Preprocessing fitted on `train` and stored with the model (default: `auto` normalisation — a z-score on raw
    /// features, nothing on data already in [0, 1]).
    pub preprocess: &'a PreprocessSpec,
    /// `train` is already preprocessed by this (from [`prepare`]): nothing is fitted, this is stored with the model
    /// and applied to the validation data.
    pub prepared: Option<&'a Option<Preprocess>>,
    /// Sees the model after every epoch ([`FitContext::with_epoch_observer`]).
    pub epochs: Option<&'a ltr_core::EpochObserver<'a>>,
}

/// Training data preprocessed in place by [`prepare`].
#[derive(Debug)]
pub struct Prepared {
    /// The data to train on.
    pub data: Dataset,
    /// The preprocessing fitted on it (`None`: the features are used as given).
    pub preprocess: Option<Preprocess>,
}

/// Fit `spec` on `train` (over all ranks of `comm`; [`ltr_core::SingleProcess`] for one process) and apply it in
/// place, so that raw data is held once: then train with [`TrainRequest::prepared`]. `ltr train` does this; on
/// 3.77 M raw documents it keeps the peak at the data's own size instead of twice it.
pub fn prepare(
    spec: &PreprocessSpec,
    train: Dataset,
    comm: &dyn ltr_core::Allreduce,
) -> Result<Prepared> {
    let mut train = train;
    let width = common_width(&train, comm)?;
    if width > train.n_features() {
        train.set_n_features(width)?;
    }
    let (preprocess, data) = spec.fit_transform_owned(train, &Ranks(comm))?;
    Ok(Prepared { data, preprocess })
}

/// The widest shard's width: every rank must train at it (a shard whose last features are zero is narrower).
fn common_width(shard: &Dataset, comm: &dyn ltr_core::Allreduce) -> Result<usize> {
    let widths = comm.gather_f64(&[shard.n_features() as f64])?;
    Ok(widths.iter().fold(0.0f64, |a, &b| a.max(b)) as usize)
}

static AUTO: PreprocessSpec = PreprocessSpec {
    features: None,
    log1p: Vec::new(),
    normalize: None,
};

impl std::fmt::Debug for TrainRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrainRequest")
            .field("metric", &self.metric)
            .field("convention", &self.convention.name)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl<'a> TrainRequest<'a> {
    /// Train on `train` with NDCG@10 under the standard convention, seed 1, no validation, no progress display.
    pub fn new(train: &'a Dataset) -> Self {
        Self::on(TrainSet::Borrowed(train))
    }
    /// [`TrainRequest::new`] on data handed over: [`train`] takes it out of `train`, and with one setting gives
    /// it to the learner (the same model; the trees free the f32 features once binned).
    pub fn handed_over(train: &'a Handover) -> Self {
        Self::on(TrainSet::HandedOver(train))
    }
    /// [`TrainRequest::new`] on `train`, borrowed or handed over.
    pub fn on(train: TrainSet<'a>) -> Self {
        Self {
            train,
            validation: None,
            metric: Metric::Ndcg(Some(10)),
            convention: Convention::STANDARD,
            seed: 1,
            progress: &Silent,
            preprocess: &AUTO,
            prepared: None,
            epochs: None,
        }
    }
    /// Show the model after every epoch to `observer` (learners with epochs: the perceptrons).
    pub fn epoch_observer(mut self, observer: &'a ltr_core::EpochObserver<'a>) -> Self {
        self.epochs = Some(observer);
        self
    }
    /// The training data is already preprocessed by `p` ([`prepare`]'s result): store it, fit nothing.
    pub fn prepared(mut self, p: &'a Option<Preprocess>) -> Self {
        self.prepared = Some(p);
        self
    }
    /// Fit this preprocessing on the training data (and store it with the model).
    pub fn preprocess(mut self, p: &'a PreprocessSpec) -> Self {
        self.preprocess = p;
        self
    }
    /// Add validation data.
    pub fn validation(mut self, v: &'a Dataset) -> Self {
        self.validation = Some(v);
        self
    }
    /// Set the validation metric and convention.
    pub fn metric(mut self, metric: Metric, convention: Convention) -> Self {
        self.metric = metric;
        self.convention = convention;
        self
    }
    /// Set the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
    /// Report progress to `p`.
    pub fn progress(mut self, p: &'a dyn Progress) -> Self {
        self.progress = p;
        self
    }
}

/// A model trained by name, with the setting kept.
#[derive(Debug, Clone)]
pub struct Trained {
    /// The algorithm.
    pub algorithm: &'static Algorithm,
    /// The setting kept (normalised names), as given or chosen from the grid.
    pub params: BTreeMap<String, String>,
    /// The model, its report (the grid's validation score in `report.validation`) and diagnostics.
    pub fitted: Fitted,
    /// The validation score of every setting tried, in grid order (empty without validation).
    pub grid_scores: Vec<(BTreeMap<String, String>, f64)>,
    /// The preprocessing fitted on the training data (`None`: the features are used as given).
    pub preprocess: Option<Preprocess>,
}

impl Trained {
    /// The model file `ltr train` writes: provenance, the setting, the typed report and the diagnostics.
    pub fn into_model_file(self, training: TrainingSummary) -> ModelFile {
        let mut mf = ModelFile::new(
            self.algorithm.name,
            self.params,
            training,
            self.fitted.model,
        );
        mf.fit = self.fitted.report;
        mf.preprocess = self.preprocess;
        if let Some(d) = self.fitted.diagnostics {
            mf.diagnostics_json = d.to_string();
        }
        mf
    }
}

/// Train `algorithm` by name on every setting of `grid` and keep the one best on validation (the only setting
/// without validation; a grid of several settings needs validation data).
pub fn train(algorithm: &str, grid: &Grid, req: &TrainRequest<'_>) -> Result<Trained> {
    let algo = find_or_err(algorithm)?;
    let settings = grid.settings();
    if settings.len() > 1 && req.validation.is_none() {
        return Err(LtrError::param(
            "grid",
            format!(
                "the parameters list a grid of {} settings; give validation data to choose among them",
                settings.len()
            ),
        ));
    }
    let spec = algo.preprocess_for(req.preprocess);
    let (preprocess, train_data) = match (req.prepared, req.train.take()?) {
        // Already applied to `req.train` (by `prepare`).
        (Some(p), given) => (p.clone(), given),
        // Data handed over is preprocessed in place.
        (None, Cow::Owned(t)) => {
            let Prepared { data, preprocess } = prepare(&spec, t, &ltr_core::SingleProcess)?;
            (preprocess, Cow::Owned(data))
        }
        (None, Cow::Borrowed(t)) => match spec.fit_transform(t)? {
            Some((p, train)) => (Some(p), Cow::Owned(train)),
            None => (None, Cow::Borrowed(t)),
        },
    };
    // The validation data gets the training data's preprocessing.
    let validation_data = match (&preprocess, req.validation) {
        (Some(p), Some(v)) => Some(Cow::Owned(p.apply(v)?)),
        (_, v) => v.map(Cow::Borrowed),
    };
    // A tree booster's `init-model` scores the raw features through its own stored preprocessing; features this
    // job transformed first would reach it changed.
    if let Some(p) = &preprocess {
        let boosts_from_file = matches!(algo.name, "lambdamart" | "mart")
            && settings
                .iter()
                .any(|s| s.iter().any(|(k, _)| k == "init-model"));
        if boosts_from_file {
            return Err(LtrError::param(
                "init-model",
                format!(
                    "the start model reads raw features, but this run preprocesses them first ({}); train with \
                     --normalize none (trees need no normalisation)",
                    p.describe().join("; ")
                ),
            ));
        }
    }
    let validation = validation_data.as_deref();
    let measure = MetricMeasure {
        metric: req.metric,
        convention: req.convention,
    };
    let mut ctx = FitContext::new(req.seed)
        .with_measure(&measure)
        .with_progress(req.progress);
    if let Some(observer) = req.epochs {
        ctx = ctx.with_epoch_observer(observer);
    }
    if let Some(v) = validation {
        ctx = ctx.with_validation(v, &measure);
    }
    let several = settings.len() > 1;
    // Data handed over goes to the learner of the one setting; a grid trains every setting on it in turn.
    let (mut handed, train_data) = match train_data {
        Cow::Owned(t) if !several => (Some(t), None),
        other => (None, Some(other)),
    };
    let warm = WarmStarts::default();
    if several {
        ctx = ctx.with_warm_starts(&warm);
    }
    let mut grid_scores = Vec::new();
    let best = best_by_validation(settings, |setting| {
        let params = Params::new(setting.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        ltr_core::test_hold::point("fit");
        let fitted = match (handed.take(), &train_data) {
            (Some(t), _) => algo.fit_owned(&params, t, &ctx),
            (None, Some(t)) => algo.fit(&params, t, &ctx),
            (None, None) => unreachable!("data handed over has one setting"),
        };
        let fitted = fitted.map_err(|e| match e {
            LtrError::Param { .. } | LtrError::Shape(_) | LtrError::Model { .. } => e,
            other if several => LtrError::Training(format!(
                "with {}: {other}",
                describe(setting.iter().map(|(k, v)| (k, v)))
            )),
            other => other,
        })?;
        let score = match validation {
            Some(v) => measure.measure(v, &fitted.model.score_dataset(v))?,
            None => f64::NAN,
        };
        if validation.is_some() {
            grid_scores.push((params.effective(), score));
        }
        Ok((score, (params.effective(), fitted)))
    })?
    .expect("a grid has at least one setting");
    let (params, mut fitted) = best.item;
    if req.validation.is_some() {
        fitted.report.validation = Some(best.score);
    }
    Ok(Trained {
        algorithm: algo,
        params,
        fitted,
        grid_scores,
        preprocess,
    })
}

/// `name=value name=value` (a grid setting or a model's parameters), or `defaults`.
pub fn describe<'a>(setting: impl IntoIterator<Item = (&'a String, &'a String)>) -> String {
    let parts: Vec<String> = setting
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    if parts.is_empty() {
        "defaults".into()
    } else {
        parts.join(" ")
    }
}

/// Data-parallel training by name: every rank calls this with its own `shard` of whole queries (in
/// `req.train`) and the same algorithm, parameters and seed; every rank gets the same [`Trained`]. For
/// `ranksvm` it is the model [`train`] gives on all the queries together, bit for bit, at any number of ranks.
///
/// One setting and no validation data. Preprocessing is fitted on all the ranks' queries (the z-score's sums are
/// exact, so it too is the single-process one, bit for bit).
pub fn train_distributed(
    algorithm: &str,
    grid: &Grid,
    req: &TrainRequest<'_>,
    comm: &dyn ltr_core::Allreduce,
) -> Result<Trained> {
    let algo = find_or_err(algorithm)?;
    let settings = grid.settings();
    if settings.len() > 1 {
        return Err(LtrError::param(
            "grid",
            "distributed training takes one setting; choose C (or any other value) on a sample first",
        ));
    }
    if req.validation.is_some() {
        return Err(LtrError::param(
            "validate",
            "distributed training does not use validation data (it selects nothing); drop --validate",
        ));
    }
    let given = req.train.take()?;
    let width = common_width(&given, comm)?;
    let train = if width > given.n_features() {
        let mut t = given.into_owned();
        t.set_n_features(width)?;
        Cow::Owned(t)
    } else {
        given
    };
    let (preprocess, train) = match req.prepared {
        Some(p) => (p.clone(), train),
        None => match algo
            .preprocess_for(req.preprocess)
            .fit_transform_with(&train, &Ranks(comm))?
        {
            Some((p, t)) => (Some(p), std::borrow::Cow::Owned(t)),
            None => (None, train),
        },
    };
    let measure = MetricMeasure {
        metric: req.metric,
        convention: req.convention,
    };
    let ctx = FitContext::new(req.seed)
        .with_measure(&measure)
        .with_progress(req.progress);
    let setting = &settings[0];
    let params = Params::new(setting.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    ltr_core::test_hold::point("fit");
    // A shard this call owns (handed over, widened or preprocessed here) is given to the learner, which frees what
    // it no longer needs; a borrowed one is lent.
    let fitted = match train {
        Cow::Owned(shard) => algo.fit_distributed_owned(&params, shard, &ctx, comm)?,
        Cow::Borrowed(shard) => algo.fit_distributed(&params, shard, &ctx, comm)?,
    };
    Ok(Trained {
        algorithm: algo,
        params: params.effective(),
        fitted,
        grid_scores: Vec::new(),
        preprocess,
    })
}

/// The ranks of a distributed run, as the preprocessing's way to combine statistics.
struct Ranks<'a>(&'a dyn ltr_core::Allreduce);

impl ltr_data::StatsReduce for Ranks<'_> {
    fn sum_exact(&self, acc: &mut ltr_data::ExactVec) -> ltr_data::Result<()> {
        self.0
            .sum_exact(acc)
            .map_err(|e| ltr_data::DataError::Invalid(e.to_string()))
    }
    fn min_max(&self, lo: &mut [f64], hi: &mut [f64]) -> ltr_data::Result<()> {
        let gather = |v: &[f64]| {
            self.0
                .gather_f64(v)
                .map_err(|e| ltr_data::DataError::Invalid(e.to_string()))
        };
        let (all_lo, all_hi) = (gather(lo)?, gather(hi)?);
        let n = lo.len().max(1);
        for (j, l) in lo.iter_mut().enumerate() {
            *l = all_lo[j..]
                .iter()
                .step_by(n)
                .fold(f64::INFINITY, |a, &b| a.min(b));
        }
        for (j, h) in hi.iter_mut().enumerate() {
            *h = all_hi[j..]
                .iter()
                .step_by(n)
                .fold(f64::NEG_INFINITY, |a, &b| a.max(b));
        }
        Ok(())
    }
}
