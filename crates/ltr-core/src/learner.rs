//! The learner contract every algorithm implements, shaped like linfa's `Fit` / `FitWith` / `ParamGuard`.
//!
//! A learner's parameter struct is checked ([`ParamGuard`]) and then fitted ([`Fit`], or [`FitWith`] for learners
//! that refine a starting model) on a training [`Dataset`] with a [`FitContext`]: the seed, an optional validation
//! set, the [`Measure`] that judges rankings (a closure, so this crate needs no metric code) and a [`Progress`] sink.
//! Every fit returns a [`Fitted`]: the [`Model`] and a typed [`FitReport`].
//!
//! ```
//! use ltr_core::{best_by_validation, FitContext, LinearModel, Measure, Scorer};
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 8, ..Default::default() }).unwrap();
//! // A toy measure: the fraction of documents whose score is positive.
//! let measure = |_: &ltr_data::Dataset, s: &[f64]| Ok(s.iter().filter(|&&x| x > 0.0).count() as f64 / s.len() as f64);
//! let ctx = FitContext::new(7).with_validation(&ds, &measure);
//! let candidates = [-1.0, 0.5, 2.0].map(|w| LinearModel::new(vec![w; ds.n_features()]));
//! let best = best_by_validation(candidates, |m| Ok((ctx.validate(&m)?.unwrap_or_default(), m))).unwrap().unwrap();
//! assert!(best.item.weights[0] > 0.0 && best.score == 1.0);
//! ```

use std::collections::BTreeMap;

use ltr_data::Dataset;
use serde::{Deserialize, Serialize};

use crate::error::{LtrError, Result};
use crate::model::Model;
use crate::scorer::{LinearModel, Scorer};

/// Judges the ranking that `scores` induce on `data` (one score per document, in file order): higher is better.
/// Any `Fn(&Dataset, &[f64]) -> Result<f64> + Sync` is a measure; `ltr-learn` builds one from a metric and a
/// convention.
pub trait Measure: Sync {
    /// The mean quality of the ranking over the queries of `data`.
    fn measure(&self, data: &Dataset, scores: &[f64]) -> Result<f64>;
    /// The metric and convention this measure computes, by name (`("NDCG@10", "standard")`), when it is a named
    /// IR metric. Learners that optimise the measure itself (Coordinate Ascent, AdaRank) read it; closures have
    /// no names.
    fn names(&self) -> Option<(String, String)> {
        None
    }
}

impl<F> Measure for F
where
    F: Fn(&Dataset, &[f64]) -> Result<f64> + Sync,
{
    fn measure(&self, data: &Dataset, scores: &[f64]) -> Result<f64> {
        self(data, scores)
    }
}

/// Where a learner reports how far it has come (epochs, rounds, planes, settings of a grid).
/// Every method has an empty default, so a sink implements only what it shows.
pub trait Progress: Sync {
    /// A stage begins: `what` names the unit (e.g. "epochs"), `total` its count when known.
    fn begin(&self, _what: &str, _total: Option<u64>) {}
    /// `done` units of the current stage are finished; `message` is a short status (objective, validation).
    fn advance(&self, _done: u64, _message: &str) {}
    /// The current stage is over.
    fn end(&self) {}
    /// Run `work`, a step with no count to show (reading a file, joining a click log), under a display naming it
    /// ([`stage`] is the typed form).
    fn stage_dyn(&self, _what: &str, work: &mut dyn FnMut()) {
        work()
    }
}

/// Run `work` as a named step of `progress` ([`Progress::stage_dyn`]) and return its result.
pub fn stage<T>(progress: &dyn Progress, what: &str, work: impl FnOnce() -> T) -> T {
    let mut work = Some(work);
    let mut out = None;
    progress.stage_dyn(what, &mut || {
        if let Some(w) = work.take() {
            out = Some(w());
        }
    });
    match out {
        Some(v) => v,
        // A display that did not run the step: run it here.
        None => (work.take().expect("the step runs once"))(),
    }
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct Silent;

impl Progress for Silent {}

static SILENT: Silent = Silent;

/// State one setting of a grid leaves for the next, keyed by the learner (e.g. RSVM-IR's cutting planes, which are
/// valid lower bounds of the loss for every C). A grid runs its settings in order, so results stay deterministic.
#[derive(Default)]
pub struct WarmStarts {
    slots: std::sync::Mutex<std::collections::HashMap<String, Box<dyn std::any::Any + Send>>>,
}

impl std::fmt::Debug for WarmStarts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarmStarts").finish_non_exhaustive()
    }
}

impl WarmStarts {
    /// Take the state left under `key`, if it is a `T`.
    pub fn take<T: 'static>(&self, key: &str) -> Option<T> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let boxed = slots.remove(key)?;
        boxed.downcast::<T>().ok().map(|b| *b)
    }
    /// Leave `state` under `key` for the next setting.
    pub fn put<T: Send + 'static>(&self, key: &str, state: T) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.insert(key.to_string(), Box::new(state));
    }
}

/// What a learner may use besides its training data and parameters.
#[derive(Clone, Copy)]
pub struct FitContext<'a> {
    seed: u64,
    validation: Option<&'a Dataset>,
    measure: Option<&'a dyn Measure>,
    progress: &'a dyn Progress,
    warm: Option<&'a WarmStarts>,
    epochs: Option<&'a EpochObserver<'a>>,
    query_weights: Option<&'a [f64]>,
}

/// Sees the model after every epoch of a learner that reports them, with its 1-based number: the perceptrons' epochs,
/// the boosting rounds of LambdaMART and MART. An error stops the training. Reproductions draw learning curves with
/// it while training through the registry.
pub type EpochObserver<'o> = dyn Fn(usize, &crate::Model) -> Result<()> + Sync + 'o;

impl std::fmt::Debug for FitContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FitContext")
            .field("seed", &self.seed)
            .field("validation_docs", &self.validation.map(Dataset::n_docs))
            .field("has_measure", &self.measure.is_some())
            .finish()
    }
}

impl<'a> FitContext<'a> {
    /// A context with this seed, no validation data, no measure and no progress display.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            validation: None,
            measure: None,
            progress: &SILENT,
            warm: None,
            epochs: None,
            query_weights: None,
        }
    }
    /// Show the model after every epoch or boosting round to `observer` (the perceptrons, LambdaMART, MART).
    pub fn with_epoch_observer(mut self, observer: &'a EpochObserver<'a>) -> Self {
        self.epochs = Some(observer);
        self
    }
    /// The epoch observer, if any.
    pub fn epoch_observer(&self) -> Option<&'a EpochObserver<'a>> {
        self.epochs
    }
    /// Let the learner keep state between the settings of a grid (see [`WarmStarts`]).
    pub fn with_warm_starts(mut self, warm: &'a WarmStarts) -> Self {
        self.warm = Some(warm);
        self
    }
    /// The warm-start store of the grid this fit belongs to, if any.
    pub fn warm_starts(&self) -> Option<&'a WarmStarts> {
        self.warm
    }
    /// Add validation data and the measure that judges it.
    pub fn with_validation(mut self, data: &'a Dataset, measure: &'a dyn Measure) -> Self {
        self.validation = Some(data);
        self.measure = Some(measure);
        self
    }
    /// Add a measure without validation data (learners that tune on the training set use it).
    pub fn with_measure(mut self, measure: &'a dyn Measure) -> Self {
        self.measure = Some(measure);
        self
    }
    /// Report progress to `progress`.
    pub fn with_progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = progress;
        self
    }
    /// Multiply each training query's share of the objective by its weight: one weight per query of the data
    /// given to `fit`, in its order. Only `lambdamart` reads them (its `query-weights` file, checked and matched
    /// to the queries by the registry); they are a context and not a parameter because a parameter type is `Copy`
    /// and the weights belong to one training set.
    pub fn with_query_weights(mut self, weights: &'a [f64]) -> Self {
        self.query_weights = Some(weights);
        self
    }
    /// The weight of training query `q`: 1 without weights, and for a query past the end of a shorter list (the
    /// registry always gives one weight per query).
    pub fn query_weight(&self, q: usize) -> f64 {
        self.query_weights
            .and_then(|w| w.get(q).copied())
            .unwrap_or(1.0)
    }
    /// The seed of every random choice.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The validation data, if any.
    pub fn validation(&self) -> Option<&'a Dataset> {
        self.validation
    }
    /// The progress sink.
    pub fn progress(&self) -> &'a dyn Progress {
        self.progress
    }
    /// The metric and convention names of the context's measure (see [`Measure::names`]).
    pub fn measure_names(&self) -> Option<(String, String)> {
        self.measure.and_then(|m| m.names())
    }
    /// Whether the context carries a measure for [`Self::measure`].
    pub fn has_measure(&self) -> bool {
        self.measure.is_some()
    }
    /// Judge `scores` on `data` with the context's measure; an error when the context has none.
    pub fn measure(&self, data: &Dataset, scores: &[f64]) -> Result<f64> {
        match self.measure {
            Some(m) => m.measure(data, scores),
            None => Err(LtrError::Training(
                "this learner needs a measure to tune on, and none was given".into(),
            )),
        }
    }
    /// The measure of `model` on the validation data, or `None` without validation data.
    pub fn validate(&self, model: &dyn Scorer) -> Result<Option<f64>> {
        match self.validation {
            Some(v) => self.measure(v, &model.score_dataset(v)).map(Some),
            None => Ok(None),
        }
    }
}

/// What training found out besides the model: typed, recorded in the model file apart from the parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// Outer iterations run (epochs, rounds, Newton steps, cutting planes, stream rounds).
    pub iterations: Option<u64>,
    /// Final training objective, where the learner minimises one.
    pub objective: Option<f64>,
    /// Primal − dual objective, where the solver knows it.
    pub duality_gap: Option<f64>,
    /// Settings chosen during training (epochs kept, rounds kept, λ, grid values), by parameter name.
    pub selected: BTreeMap<String, String>,
    /// The validation measure of the returned model, when validation data was given.
    pub validation: Option<f64>,
}

impl FitReport {
    /// Record a setting chosen during training.
    pub fn select(mut self, name: &str, value: impl ToString) -> Self {
        self.selected.insert(name.to_string(), value.to_string());
        self
    }
}

/// A trained model with its report and algorithm-specific diagnostics.
#[derive(Debug, Clone)]
pub struct Fitted {
    /// The scoring function.
    pub model: Model,
    /// What training found out.
    pub report: FitReport,
    /// Learner-specific diagnostics (curves, traces, hyperplane cosines), shown by `ltr inspect`.
    pub diagnostics: Option<serde_json::Value>,
}

impl Fitted {
    /// A model with an empty report.
    pub fn new(model: Model) -> Self {
        Self {
            model,
            report: FitReport::default(),
            diagnostics: None,
        }
    }
    /// Replace the report.
    pub fn with_report(mut self, report: FitReport) -> Self {
        self.report = report;
        self
    }
    /// Attach diagnostics.
    pub fn with_diagnostics(mut self, d: serde_json::Value) -> Self {
        self.diagnostics = Some(d);
        self
    }
    /// The weights, when the model is a single linear function.
    pub fn linear(&self) -> Option<&LinearModel> {
        match &self.model {
            Model::Linear(l) => Some(l),
            _ => None,
        }
    }
}

/// Checked hyperparameters (linfa's `ParamGuard`): `check` verifies the combination of settings once and returns
/// the checked form, the only one the learner's `Fit` is implemented on.
pub trait ParamGuard {
    /// The checked form.
    type Checked;
    /// Check a copy, leaving these parameters as they are.
    fn check_ref(&self) -> Result<Self::Checked>;
    /// Check and convert.
    fn check(self) -> Result<Self::Checked>
    where
        Self: Sized;
}

/// `param_guard!(FooParams => FooValidParams)`: the checked form of a parameter struct whose `validate(&self) ->
/// Result<()>` checks the combination of its settings. `FooValidParams` can only be made by
/// [`ParamGuard::check`], so a learner that implements `Fit` on it never runs on unchecked settings, and each check
/// is written once, in `validate`. It reads as the parameters it wraps (`Deref`).
#[macro_export]
macro_rules! param_guard {
    ($t:ident => $valid:ident) => {
        #[doc = concat!("[`", stringify!($t), "`] that passed `validate` ([`ParamGuard::check`](ltr_core::ParamGuard::check)): the only form that fits.")]
        #[derive(Debug, Clone)]
        pub struct $valid($t);

        impl ::std::ops::Deref for $valid {
            type Target = $t;
            fn deref(&self) -> &$t {
                &self.0
            }
        }

        impl $valid {
            /// The parameters, to change (and check again).
            pub fn into_inner(self) -> $t {
                self.0
            }
        }

        impl $crate::ParamGuard for $t {
            type Checked = $valid;
            fn check_ref(&self) -> $crate::Result<$valid> {
                self.validate()?;
                Ok($valid(self.clone()))
            }
            fn check(self) -> $crate::Result<$valid> {
                self.validate()?;
                Ok($valid(self))
            }
        }
    };
}

/// A learner trained from scratch.
pub trait Fit {
    /// Train on `train`.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted>;
}

/// A learner that trains data-parallel: every rank calls [`fit_distributed`](Self::fit_distributed) with its own
/// shard of whole queries and the same parameters and seed, the ranks joined by `comm`, and every rank returns the
/// same model. Each implementation says which model that is: the single-process model bit for bit (exact sums:
/// RankSVM, RankBoost, Coordinate Ascent, LambdaRank), or a mixture of per-rank models (iterative parameter mixing:
/// the perceptrons, ListNet). The registry's distributed trainers all go through this one trait.
pub trait FitDistributed {
    /// Train on this rank's `shard` of the queries.
    fn fit_distributed(
        &self,
        shard: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn crate::Allreduce,
    ) -> Result<Fitted>;
}

/// A learner that refines a starting linear model (the sigmoid meta-ranker).
pub trait FitWith {
    /// Train on `train` starting from `start`.
    fn fit_with(
        &self,
        start: &LinearModel,
        train: &Dataset,
        ctx: &FitContext<'_>,
    ) -> Result<Fitted>;
}

/// The best candidate of a selection and its measure.
#[derive(Debug, Clone, PartialEq)]
pub struct Best<T> {
    /// The candidate's position in the order offered (0-based).
    pub index: usize,
    /// Its measure.
    pub score: f64,
    /// The candidate.
    pub item: T,
}

/// Keeps the best candidate offered so far: the first one, then any with a strictly greater measure, so ties go
/// to the earlier candidate (the smaller C, the earlier epoch) and a NaN never displaces a number.
#[derive(Debug, Clone)]
pub struct BestSoFar<T> {
    best: Option<Best<T>>,
    offered: usize,
}

impl<T> Default for BestSoFar<T> {
    fn default() -> Self {
        Self {
            best: None,
            offered: 0,
        }
    }
}

impl<T> BestSoFar<T> {
    /// Nothing offered yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// Would a candidate with this measure be kept?
    pub fn improves(&self, score: f64) -> bool {
        self.best.as_ref().is_none_or(|b| score > b.score)
    }
    /// Offer a candidate; returns whether it was kept.
    pub fn offer(&mut self, score: f64, item: T) -> bool {
        let index = self.offered;
        self.offered += 1;
        let keep = self.improves(score);
        if keep {
            self.best = Some(Best { index, score, item });
        }
        keep
    }
    /// Offer a candidate built only if it would be kept.
    pub fn offer_with(&mut self, score: f64, item: impl FnOnce() -> T) -> bool {
        if self.improves(score) {
            self.offer(score, item())
        } else {
            self.offered += 1;
            false
        }
    }
    /// The best so far.
    pub fn best(&self) -> Option<&Best<T>> {
        self.best.as_ref()
    }
    /// The best candidate, or `None` if nothing was offered.
    pub fn into_best(self) -> Option<Best<T>> {
        self.best
    }
}

/// Train and measure every setting with `run` (which returns the measure and the trained item) and keep the best
/// by [`BestSoFar`]'s rule: the one model-selection loop behind grids, the sigmoid's λ and reproduction protocols.
/// `Ok(None)` when there are no settings; the first error stops the search.
pub fn best_by_validation<S, T>(
    settings: impl IntoIterator<Item = S>,
    mut run: impl FnMut(S) -> Result<(f64, T)>,
) -> Result<Option<Best<T>>> {
    let mut best = BestSoFar::new();
    for s in settings {
        let (score, item) = run(s)?;
        best.offer(score, item);
    }
    Ok(best.into_best())
}
