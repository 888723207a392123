//! The registry table: every algorithm's name, paper, parameter specs and the function that reads its parameters
//! and fits it. One module per learner family; a newcomer finds an algorithm by its paper name here.

pub(crate) mod clicks;
pub(crate) mod ensemble;
pub(crate) mod listwise;
// pub for the tests in tests/unit/algorithms_neural.rs; not API.
#[doc(hidden)]
pub mod neural;
pub(crate) mod online;
pub(crate) mod perceptron;
mod start;
// pub for the tests in tests/unit/algorithms_svm.rs and memory.rs; not API.
#[doc(hidden)]
pub mod svm;
pub(crate) mod trees;

use ltr_core::{Allreduce, FitContext, Fitted, LtrError, Params, Result, SingleProcess};
use ltr_data::{Dataset, NormalizeKind, PreprocessSpec};
use serde::Serialize;
use std::borrow::Cow;

use crate::memory::{Memory, Switch};
use crate::spec::{ParamSpec, SpecReader};

pub use ensemble::{refine_sigmoid, SIGMOID_LAMBDA_GRID};

type FitFn = fn(&SpecReader<'_>, &Dataset, &FitContext<'_>) -> Result<Fitted>;
type OnlineFn = fn(&SpecReader<'_>) -> Result<ltr_online::OnlineValidParams>;
type DistributedFitFn =
    fn(&SpecReader<'_>, &Dataset, &FitContext<'_>, &dyn Allreduce) -> Result<Fitted>;
type OwnedFitFn = fn(&SpecReader<'_>, Dataset, &FitContext<'_>, &dyn Allreduce) -> Result<Fitted>;

/// What a learner makes of clicks. A learner that would read a click training set as judged data (its 0/1 click
/// labels as relevance, its query weights and propensities ignored, every click at its logged position taken as
/// unbiased) trains silently wrong, so every row says which click set it reads or why it takes none; `TrainJob`
/// refuses `--clicks` for a refused row, and [`Algorithm::fit`] refuses click data given to one in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClickUse {
    /// The click training set of one query per click (`ltr_clicks::click_training_set`): it multiplies each
    /// query's loss by [`Dataset::click_weights`] (the click count over the propensity).
    ClickQueries,
    /// Sessions with positions (`ltr_clicks::click_session_set`, a LightGBM `.position` sidecar): each session a
    /// query of its displayed documents labelled by click, weighted by its count, each row with its
    /// [`Dataset::positions`], which the learner debiases by itself; under `debias=dr` the doubly robust set
    /// instead ([`ClickUse::DoublyRobust`]).
    Sessions,
    /// Either, by its `debias` parameter: one query per click without it (`debias=none`: the queries weighted by
    /// `weighting`, which a known propensity table or the log's column sets), sessions with positions with it
    /// (`debias=dla`: the propensities learned with the ranker), or the doubly robust set (`debias=dr`).
    ClickQueriesOrSessions,
    /// The doubly robust set (`ltr_clicks::doubly_robust_set`): every document of each logged query labelled by its
    /// doubly robust relevance estimate, each query weighted by its sessions. Only a `debias=dr` setting reads it.
    DoublyRobust,
    /// Refused, with the reason (shown by `ltr train --clicks` and `ltr algorithms --json`).
    Refused(&'static str),
}

impl ClickUse {
    /// Whether it learns from clicks.
    pub fn accepts(&self) -> bool {
        !matches!(self, ClickUse::Refused(_))
    }
    /// The click set one setting reads, `debias` its `debias` value (`None`: not given, the default `none`):
    /// [`ClickUse::ClickQueriesOrSessions`] resolved, [`ClickUse::Sessions`] under `debias=dr` the doubly robust
    /// set, any other row as it is.
    pub fn under(&self, debias: Option<&str>) -> ClickUse {
        match self {
            ClickUse::ClickQueriesOrSessions => match debias {
                None | Some("none") => ClickUse::ClickQueries,
                Some("dr") => ClickUse::DoublyRobust,
                Some(_) => ClickUse::Sessions,
            },
            ClickUse::Sessions if debias == Some("dr") => ClickUse::DoublyRobust,
            other => *other,
        }
    }
}

/// Why `ranksvm` takes no clicks.
const RANKSVM_CLICKS: &str = "it trains on relevance labels and reads no click weights: use propensity-ranksvm, \
                              the same objective over clicks weighted by inverse propensity (weighting=naive is its \
                              naive control)";

/// Why `mart` and `random-forest` take no clicks.
const POINTWISE_CLICKS: &str = "it fits the labels pointwise: a click set's 0/1 clicks would be fitted as \
                                relevance, biased by the rank each was shown at, and its click counts and \
                                propensities ignored; use lambdamart";

/// The message refusing clicks to `name` for `why`, naming the algorithms that take them.
pub(crate) fn click_refusal(name: &str, why: &str) -> String {
    format!(
        "`{name}` does not learn from clicks: {why}. Algorithms that learn from clicks: {}",
        click_names().join(", ")
    )
}

/// The algorithms that learn from a click log ([`ClickUse`]).
pub fn click_names() -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .filter(|a| a.clicks.accepts())
        .map(|a| a.name)
        .collect()
}

/// Why a labelled learner takes no clicks: the click set's labels are clicks, read as judgments.
const LABELS_ONLY: &str = "it trains on relevance labels and reads no click weights or positions: a click set's \
                           clicked documents would count as judged relevant, every click once whatever its count and \
                           its rank's position bias";

/// One registered algorithm.
#[derive(Serialize)]
pub struct Algorithm {
    /// Name for `--algo` and `train(name, …)`.
    pub name: &'static str,
    /// The estimator class of `ltrkit` (`python/tools/gen_families.py` generates it from this row).
    pub class_name: &'static str,
    /// Source paper (and which seed it is) or role.
    pub paper: &'static str,
    /// Where the code lives.
    pub code: &'static str,
    /// Parameter groups (shared groups first).
    #[serde(serialize_with = "flatten_groups")]
    pub params: &'static [&'static [ParamSpec]],
    /// Whether `ltr train --distributed` can train it (data parallel over ranks).
    #[serde(serialize_with = "has_distributed")]
    pub distributed: Option<DistributedFitFn>,
    /// What it makes of a click log (`ltr train --clicks LOG`, or a click training set built in memory): the
    /// click set it reads, or why it is refused ([`ClickUse`]).
    pub clicks: ClickUse,
    /// Whether a NaN feature value is a missing value to it (the trees: a missing bin whose side each split learns,
    /// and where prediction sends a NaN). Every other algorithm refuses data holding a NaN ([`Algorithm::fit`]).
    /// Text files never hold one; data built in memory (`ltrkit`, the library) may.
    pub missing_values: bool,
    /// Whether it splits on bins of each feature's distinct values (the trees), so that its model does not move
    /// under a strictly increasing map of a feature: `--normalize auto` leaves such a learner's features as they
    /// are ([`Algorithm::preprocess_for`]), since a z-score could only merge neighbouring float32 values.
    pub binned: bool,
    #[serde(skip)]
    fit: FitFn,
    /// The learner on training data handed over, on the ranks joined by the `Allreduce` ([`SingleProcess`] for one
    /// process): the model of `fit` (one process) and of `distributed` (ranks), for a learner that frees what it no
    /// longer needs of the data while it trains (the trees: the f32 features once binned). See
    /// [`Algorithm::fit_owned`] and [`Algorithm::fit_distributed_owned`].
    #[serde(skip)]
    owned: Option<OwnedFitFn>,
    /// The online form (a learner updated one query at a time, replayed over a stream), for the online algorithms.
    #[serde(skip)]
    online: Option<OnlineFn>,
    /// Its working set ([`crate::memory_estimate`]), written down from its code.
    #[serde(skip)]
    pub memory: Memory,
}

fn has_distributed<S: serde::Serializer>(
    f: &Option<DistributedFitFn>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_bool(f.is_some())
}

fn flatten_groups<S: serde::Serializer>(
    g: &&'static [&'static [ParamSpec]],
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(g.iter().flat_map(|x| x.iter()))
}

impl std::fmt::Debug for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Algorithm")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Algorithm {
    /// `spec` as this algorithm applies it: for a [`binned`](Self::binned) learner, `--normalize auto` (or unset)
    /// is `none` (on the generated web set of issue 51, a z-score merged 404,374 distinct values of 68 of 136
    /// features in float32 and moved the tree model); any other normalisation asked for by name stays.
    pub fn preprocess_for<'s>(&self, spec: &'s PreprocessSpec) -> Cow<'s, PreprocessSpec> {
        if self.binned && matches!(spec.normalize, None | Some(NormalizeKind::Auto)) {
            Cow::Owned(PreprocessSpec {
                normalize: Some(NormalizeKind::None),
                ..spec.clone()
            })
        } else {
            Cow::Borrowed(spec)
        }
    }
    /// Every parameter spec, in listing order.
    pub fn param_specs(&self) -> impl Iterator<Item = &'static ParamSpec> {
        self.params.iter().flat_map(|g| g.iter())
    }
    /// Check, before any data is read, that every name in `params` is one of this algorithm's parameters
    /// ([`SpecReader::check_known`]); [`Algorithm::fit`] checks the rest (values, names a setting leaves unused).
    pub fn check_names(&self, params: &Params) -> Result<()> {
        SpecReader::new(params, self.params).check_known(self.name)
    }
    /// Train one setting: read `params` by the specs (unknown or unused names are errors), then fit. Data holding
    /// a NaN is refused unless the algorithm takes missing values.
    pub fn fit(&self, params: &Params, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        self.check_clicks(train)?;
        self.check_missing_values(train, ctx)?;
        (self.fit)(&SpecReader::new(params, self.params), train, ctx)
    }
    /// [`Algorithm::fit`] on training data handed over: the same model, and a learner with an owned form frees
    /// what it no longer needs of `train` as it goes (the trees free the f32 features once binned, so the peak is
    /// the features, not the features plus their bins); any other learner borrows it.
    pub fn fit_owned(
        &self,
        params: &Params,
        train: Dataset,
        ctx: &FitContext<'_>,
    ) -> Result<Fitted> {
        self.check_clicks(&train)?;
        self.check_missing_values(&train, ctx)?;
        let reader = SpecReader::new(params, self.params);
        match self.owned {
            Some(fit) => fit(&reader, train, ctx, &SingleProcess),
            None => (self.fit)(&reader, &train, ctx),
        }
    }
    /// An error for click data given to an algorithm that does not learn from it ([`ClickUse::Refused`], with the
    /// reason), or in the form it does not read: a set of one query per click carries query weights or
    /// propensities, a session set positions.
    fn check_clicks(&self, train: &Dataset) -> Result<()> {
        let per_click = train.positions().is_none()
            && (train.query_weights().is_some() || train.propensities().is_some());
        let sessions = train.positions().is_some();
        // The doubly robust set is for `debias=dr`, which the learner checks.
        let doubly_robust = clicks::is_doubly_robust_set(train);
        let problem = match self.clicks {
            ClickUse::Refused(why) if per_click || sessions => click_refusal(self.name, why),
            // Which set a setting reads is its `debias`: the learner checks it (`debias_for_clicks`).
            ClickUse::ClickQueriesOrSessions => return Ok(()),
            ClickUse::ClickQueries if sessions => format!(
                "`{}` learns from one query per click (ltr train --clicks LOG builds it), not from sessions with \
                 positions",
                self.name
            ),
            ClickUse::Sessions if per_click && !doubly_robust => format!(
                "`{}` learns from click sessions with positions (ltr train --clicks LOG builds them), not from the \
                 set of one query per click",
                self.name
            ),
            _ => return Ok(()),
        };
        Err(LtrError::param("algo", problem))
    }
    /// An error naming the first NaN of the training or validation data, for an algorithm that takes no missing
    /// values: to a linear model a NaN would be a NaN score, not a missing value.
    fn check_missing_values(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<()> {
        if self.missing_values {
            return Ok(());
        }
        for (what, data) in [("training", Some(train)), ("validation", ctx.validation())] {
            let Some((row, column)) = data.and_then(Dataset::first_nan) else {
                continue;
            };
            return Err(ltr_data::DataError::Invalid(format!(
                "{what} data: row {row}, column {column} (feature {}) is NaN: `{}` takes no missing values (NaN \
                 is a missing value to {} only)",
                column + 1,
                self.name,
                missing_value_names().join(", ")
            ))
            .into());
        }
        Ok(())
    }
    /// Train one setting on this rank's `shard` of the queries, the ranks joined by `comm` (see
    /// [`crate::train_distributed`]); an error for algorithms without a distributed trainer.
    pub fn fit_distributed(
        &self,
        params: &Params,
        shard: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        let Some(fit) = self.distributed else {
            return Err(LtrError::param(
                "algo",
                format!(
                    "`{}` has no distributed trainer; distributed training supports: {}",
                    self.name,
                    distributed_names().join(", ")
                ),
            ));
        };
        self.check_clicks(shard)?;
        self.check_missing_values(shard, ctx)?;
        fit(&SpecReader::new(params, self.params), shard, ctx, comm)
    }
    /// [`Algorithm::fit_distributed`] on a shard handed over: the same model, and a learner with an owned form
    /// frees what it no longer needs of `shard` as it goes (each rank's trees free the f32 features once binned);
    /// any other learner borrows it.
    pub fn fit_distributed_owned(
        &self,
        params: &Params,
        shard: Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        match self.owned {
            Some(fit) if self.distributed.is_some() => {
                self.check_clicks(&shard)?;
                self.check_missing_values(&shard, ctx)?;
                fit(&SpecReader::new(params, self.params), shard, ctx, comm)
            }
            _ => self.fit_distributed(params, &shard, ctx, comm),
        }
    }
}

/// The algorithms to which a NaN feature value is a missing value ([`Algorithm::missing_values`]).
pub fn missing_value_names() -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .filter(|a| a.missing_values)
        .map(|a| a.name)
        .collect()
}

/// The algorithms `ltr train --distributed` can train.
pub fn distributed_names() -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .filter(|a| a.distributed.is_some())
        .map(|a| a.name)
        .collect()
}

use clicks::{
    CLICK_SPECS, LINEAR_DEBIAS_SPECS, NEURAL_DEBIAS_SPECS, PROPENSITY_RANKSVM_SPECS, TREE_DR_SPECS,
};
use ensemble::{MHR_SPECS, RANKBOOST_SPECS, SIGMOID_SPECS};
use listwise::{ADARANK_SPECS, COORDINATE_ASCENT_SPECS, LAMBDARANK_SPECS, MEASURE_SPECS};
use neural::NEURAL_SPECS;
use online::{LISTNET_SPECS, ONLINE_LISTNET_SPECS, PURE_ONLINE_SPECS, SLAM_SPECS, STREAM_SPECS};
use perceptron::{COMMITTEE_SPECS, LOOP_SPECS, PERCEPTRON_SPECS};
use svm::{RANKSVM_SPECS, RSVM_IR_SPECS, SOLVER_SPECS};
use trees::{BOOST_SPECS, INIT_SPECS, LAMBDAMART_SPECS, RANDOM_FOREST_SPECS};

/// The boosted trees' working set (see the `lambdamart` row).
const TREE_MEMORY: Memory = Memory::new(56, 0, 1)
    .wide_above("max-bin", 255, 2)
    .freeing_features()
    .row_copy_from(ltr_trees::ROWS_FROM_CELLS as u64);

/// Every algorithm, in the order `ltr algorithms` lists them.
pub static ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "ranksvm",
        class_name: "RankSVM",
        paper: "Herbrich et al. 2000; Joachims 2002 (the baseline of every seed)",
        code: "crates/ltr-svm",
        params: &[RANKSVM_SPECS, SOLVER_SPECS],
        distributed: Some(svm::ranksvm_distributed),
        clicks: ClickUse::Refused(RANKSVM_CLICKS),
        missing_values: false,
        binned: false,
        fit: svm::ranksvm,
        owned: None,
        online: None,
        // Newton: scores, score gradient, sort order, Hessian product and the line search's copies.
        memory: Memory::per_doc(72),
    },
    Algorithm {
        name: "rsvm-ir",
        class_name: "RankSVMIR",
        paper: "Cao et al., SIGIR 2006, Adapting Ranking SVM to Document Retrieval (seed 004)",
        code: "crates/ltr-svm (cutting_plane.rs, dual_cd.rs, gd.rs); τ, μ in crates/ltr-pairs/src/weights.rs",
        params: &[RSVM_IR_SPECS, SOLVER_SPECS],
        distributed: Some(svm::rsvm_ir_distributed),
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: svm::rsvm_ir,
        owned: None,
        online: None,
        // OCAS / cutting plane: scores, plane coefficients, sort order. From a million documents it solves by
        // Newton unless told otherwise (one that asks for OCAS by name then gets a little more than it needs).
        memory: Memory::per_doc(40).switching(Switch::FromDocs(svm::NEWTON_FROM_DOCS, 72)),
    },
    Algorithm {
        name: "propensity-ranksvm",
        class_name: "PropensityRankSVM",
        paper: "Joachims, Swaminathan & Schnabel, WSDM 2017, Unbiased Learning-to-Rank with Biased Feedback: Propensity SVM-Rank on clicks (weighting=naive: the naive control)",
        code: "crates/ltr-learn/src/algorithms/clicks.rs; click training sets in crates/ltr-clicks/src/click_training.rs",
        params: &[PROPENSITY_RANKSVM_SPECS, CLICK_SPECS, SOLVER_SPECS],
        distributed: None,
        clicks: ClickUse::ClickQueries,
        missing_values: false,
        binned: false,
        fit: clicks::propensity_ranksvm,
        owned: None,
        online: None,
        // Newton, as ranksvm.
        memory: Memory::per_doc(72),
    },
    Algorithm {
        name: "perceptron",
        class_name: "Perceptron",
        paper: "Elsas, Carvalho, Carbonell, WSDM 2008 (seed 000): pairwise perceptron with η_q = 1/|S_q|",
        code: "crates/ltr-perceptron",
        params: &[PERCEPTRON_SPECS, LOOP_SPECS],
        distributed: Some(perceptron::perceptron_distributed),
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: perceptron::perceptron,
        owned: None,
        online: None,
        // Pair records of 16 bytes, shuffled per epoch (two row numbers, the query, a mistake counter), built from
        // a pair set of 12 bytes a pair that is alive at the same time (measured: 6.5 GiB on 3.77 M documents).
        // Above `STREAM_PAIRS_ABOVE` pairs the default streams them: each query's rows by grade (4 B) and their
        // levels while the index is built (2 B), scores and weights (16 B); the α-bound's counter of 2 B a pair.
        memory: Memory::new(16, 30, 0).switching(Switch::StreamedPairs(22, 2)),
    },
    Algorithm {
        name: "committee-perceptron",
        class_name: "CommitteePerceptron",
        paper: "Elsas, Carvalho, Carbonell, WSDM 2008 (seed 000): the committee perceptron",
        code: "crates/ltr-perceptron (outputs.rs)",
        params: &[COMMITTEE_SPECS, LOOP_SPECS],
        distributed: Some(perceptron::committee_distributed),
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: perceptron::committee,
        owned: None,
        online: None,
        // As perceptron.
        memory: Memory::new(16, 30, 0).switching(Switch::StreamedPairs(22, 2)),
    },
    Algorithm {
        name: "mhr",
        class_name: "MultipleHyperplaneRanker",
        paper: "Qin et al., SIGIR 2007, Ranking with Multiple Hyperplanes (seed 001)",
        code: "crates/ltr-ensemble/src/mhr.rs",
        params: &[MHR_SPECS],
        distributed: None,
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: ensemble::mhr,
        owned: None,
        online: None,
        // One Newton at a time on one grade pair, with every finished base ranker's scores kept for the
        // aggregation (measured peaks: 2.49 GiB on 3.77 M documents, 6.40 GiB on 10 M).
        memory: Memory::per_doc(112),
    },
    Algorithm {
        name: "sigmoid",
        class_name: "SigmoidRanker",
        paper: "Carvalho, Elsas, Cohen, Carbonell, LR4IR 2008, the sigmoid meta-ranker (seed 003)",
        code: "crates/ltr-ensemble/src/sigmoid.rs",
        params: &[SIGMOID_SPECS],
        distributed: None,
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: ensemble::sigmoid,
        owned: None,
        online: None,
        memory: Memory::per_doc(48),
    },
    Algorithm {
        name: "rankboost",
        class_name: "RankBoost",
        paper: "Freund, Iyer, Schapire, Singer, JMLR 2003 (baseline of seeds 000 and 003)",
        code: "crates/ltr-ensemble/src/rankboost.rs",
        params: &[RANKBOOST_SPECS],
        distributed: Some(ensemble::rankboost_distributed),
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: ensemble::rankboost,
        owned: None,
        online: None,
        // Scores, potentials and levels per document; each cell's bucket among its feature's thresholds (one
        // byte up to 255 thresholds, the default 10; `thresholds=0` presorts columns instead, 8 bytes a cell).
        memory: Memory::new(24, 0, 1),
    },
    Algorithm {
        name: "listnet",
        class_name: "ListNet",
        paper: "Cao et al., ICML 2007, batch top-one ListNet (baseline of seed 003; a sigmoid seed); debias=dla: Ai et al., SIGIR 2018, the Dual Learning Algorithm; debias=dr: Oosterhuis, TOIS 2023 (SIGIR 2023), Doubly-Robust Estimation for Correcting Position-Bias in Click Feedback",
        code: "crates/ltr-online/src/listnet.rs; debias=dla in crates/ltr-listwise/src/dla.rs; debias=dr's set in crates/ltr-clicks/src/doubly_robust.rs",
        params: &[LISTNET_SPECS, CLICK_SPECS, LINEAR_DEBIAS_SPECS],
        distributed: Some(online::listnet_distributed),
        clicks: ClickUse::ClickQueriesOrSessions,
        missing_values: false,
        binned: false,
        fit: online::listnet,
        owned: None,
        online: None,
        memory: Memory::per_doc(48),
    },
    Algorithm {
        name: "coordinate-ascent",
        class_name: "CoordinateAscent",
        paper: "Metzler & Croft 2007, Linear feature-based models for IR (RankLib -ranker 4), with an exact line search",
        code: "crates/ltr-listwise (coordinate_ascent.rs, line_search/)",
        params: &[COORDINATE_ASCENT_SPECS, MEASURE_SPECS],
        distributed: Some(listwise::coordinate_ascent_distributed),
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: listwise::coordinate_ascent,
        owned: None,
        online: None,
        // One running restart: scores and trial scores, a line search's crossing points (about one per document,
        // 16 bytes, plus its bucket number). From 1 M documents the restarts take turns (two side by side passed
        // 1.3× the data on 3.77 M documents); below, one per thread runs, on data small enough not to matter. Dense
        // data is read in place (measured on 3.77 M documents, one restart: 2.60 GB peak for 2.23 GB of data).
        memory: Memory::per_doc(96),
    },
    Algorithm {
        name: "adarank",
        class_name: "AdaRank",
        paper: "Xu & Li, SIGIR 2007, AdaRank: boosting single-feature rankers on the IR measure (RankLib -ranker 3)",
        code: "crates/ltr-listwise/src/adarank.rs",
        params: &[ADARANK_SPECS, MEASURE_SPECS],
        distributed: None,
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: listwise::adarank,
        owned: None,
        online: None,
        // Scores, each document's weak-ranker values and the ensemble's scores, one measure value per feature and
        // query (measured peaks: 2.30 GiB on 3.77 M documents, 6.02 GiB on 10 M).
        memory: Memory::per_doc(64),
    },
    Algorithm {
        name: "lambdarank",
        class_name: "LambdaRank",
        paper: "Burges 2010, From RankNet to LambdaRank to LambdaMART: LambdaRank gradients for a linear model; debias=dla: Ai et al., SIGIR 2018, the Dual Learning Algorithm; debias=dr: Oosterhuis, TOIS 2023 (SIGIR 2023), Doubly-Robust Estimation for Correcting Position-Bias in Click Feedback",
        code: "crates/ltr-listwise/src/lambdarank.rs; debias=dla in crates/ltr-listwise/src/dla.rs; debias=dr's set in crates/ltr-clicks/src/doubly_robust.rs",
        params: &[LAMBDARANK_SPECS, CLICK_SPECS, LINEAR_DEBIAS_SPECS],
        distributed: Some(listwise::lambdarank_distributed),
        clicks: ClickUse::ClickQueriesOrSessions,
        missing_values: false,
        binned: false,
        fit: listwise::lambdarank,
        owned: None,
        online: None,
        // Scores, trial scores and lambdas, each document's gain, and the epoch's frozen ranking (order and rank,
        // 8 bytes); the pairs are enumerated from it on every pass, never stored (measured on 3.77 M documents,
        // 5 epochs: 2.27 GiB peak for 2.08 GiB of data).
        memory: Memory::per_doc(56),
    },
    Algorithm {
        name: "slam-perceptron",
        class_name: "SlamPerceptron",
        paper: "Chaudhuri & Tewari 2015, Algorithm 1 (seed 002): the online SLAM perceptron, the file replayed as a stream",
        code: "crates/ltr-online (slam.rs, learners.rs)",
        params: &[SLAM_SPECS, STREAM_SPECS],
        distributed: None,
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: |r, t, c| online::online(r, online::Kind::Slam, t, c),
        owned: None,
        online: Some(|r| online::online_params(r, online::Kind::Slam)),
        memory: Memory::per_doc(16),
    },
    Algorithm {
        name: "pure-online",
        class_name: "PureOnline",
        paper: "Chaudhuri & Tewari 2015, Algorithm 2 (seed 002): most-violated pair, step scaled by the measure loss",
        code: "crates/ltr-online/src/learners.rs",
        params: &[PURE_ONLINE_SPECS, STREAM_SPECS],
        distributed: None,
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: |r, t, c| online::online(r, online::Kind::PureOnline, t, c),
        owned: None,
        online: Some(|r| online::online_params(r, online::Kind::PureOnline)),
        memory: Memory::per_doc(16),
    },
    Algorithm {
        name: "online-listnet",
        class_name: "OnlineListNet",
        paper: "top-one ListNet updated every round (seed 002's baseline)",
        code: "crates/ltr-online/src/learners.rs",
        params: &[ONLINE_LISTNET_SPECS, STREAM_SPECS],
        distributed: None,
        clicks: ClickUse::Refused(LABELS_ONLY),
        missing_values: false,
        binned: false,
        fit: |r, t, c| online::online(r, online::Kind::ListNet, t, c),
        owned: None,
        online: Some(|r| online::online_params(r, online::Kind::ListNet)),
        memory: Memory::per_doc(16),
    },
    Algorithm {
        name: "lambdamart",
        class_name: "LambdaMART",
        paper: "Burges 2010, From RankNet to LambdaRank to LambdaMART: gradient-boosted trees on LambdaRank gradients weighted by |ΔNDCG|, |ΔERR| or |ΔAP|; debias=dr: Oosterhuis, TOIS 2023 (SIGIR 2023), Doubly-Robust Estimation for Correcting Position-Bias in Click Feedback",
        code: "crates/ltr-trees (boost.rs, grow.rs, objective.rs); debias=dr's set in crates/ltr-clicks/src/doubly_robust.rs",
        params: &[BOOST_SPECS, LAMBDAMART_SPECS, TREE_DR_SPECS, INIT_SPECS],
        distributed: Some(trees::lambdamart_distributed),
        clicks: ClickUse::Sessions,
        missing_values: true,
        binned: true,
        fit: trees::lambdamart,
        owned: Some(trees::lambdamart_owned),
        online: None,
        // Each cell's bin (one byte up to max-bin 255; above it two for a feature of more than 256 bins, counted
        // for every feature: an upper bound, as a feature of few distinct values keeps one byte) and, while
        // binning, one column of f32 values per thread (sparse data: a transposed f32 copy of all columns); per
        // document its score, gradient, hessian, their fixed-point copy (16 B), its place in the leaf partition (4 B)
        // and the partition's scratch (4 B); histograms are per leaf and feature. Handed over (`ltr train`), the data
        // loses its f32 features as they are binned, a block of rows at a time: the peak is the larger of the data
        // and the data without its features plus this working set.
        memory: TREE_MEMORY,
    },
    Algorithm {
        name: "mart",
        class_name: "MART",
        paper: "Friedman 2001, Greedy Function Approximation: gradient-boosted regression trees on the labels (RankLib -ranker 0)",
        code: "crates/ltr-trees (boost.rs, grow.rs)",
        params: &[BOOST_SPECS, INIT_SPECS],
        distributed: Some(trees::mart_distributed),
        clicks: ClickUse::Refused(POINTWISE_CLICKS),
        missing_values: true,
        binned: true,
        fit: trees::mart,
        owned: Some(trees::mart_owned),
        online: None,
        // As lambdamart.
        memory: TREE_MEMORY,
    },
    Algorithm {
        name: "random-forest",
        class_name: "RandomForest",
        paper: "Breiman 2001, Random Forests: regression trees on query and feature subsamples, averaged (RankLib -ranker 8)",
        code: "crates/ltr-trees/src/boost.rs",
        params: &[RANDOM_FOREST_SPECS],
        distributed: Some(trees::random_forest_distributed),
        clicks: ClickUse::Refused(POINTWISE_CLICKS),
        missing_values: true,
        binned: true,
        fit: trees::random_forest,
        owned: Some(trees::random_forest_owned),
        online: None,
        // No scores or gradients a round: the labels as gradients and hessians and their fixed-point copy, each
        // tree's document bag; the bins as lambdamart's.
        memory: Memory::new(40, 0, 1)
            .wide_above("max-bin", 255, 2)
            .freeing_features()
            .row_copy_from(ltr_trees::ROWS_FROM_CELLS as u64),
    },    Algorithm {
        name: "neural",
        class_name: "NeuralRanker",
        paper: "Pobrotyn et al. 2020, Context-Aware Learning to Rank with Self-Attention (allRank): a feed-forward scorer, optionally followed by self-attention encoder blocks over the documents of a query (Vaswani et al. 2017's Transformer encoder, allRank's context-aware scorer), trained with RankNet, ListNet, ListMLE, LambdaLoss (Wang et al. 2018: NDCG-Loss2, NDCG-Loss2++), ApproxNDCG (Qin et al. 2010) or NeuralNDCG (Pobrotyn & Białobrzeski 2021)",
        code: "crates/ltr-neural (losses.rs, neural_sort.rs, net.rs, encoder.rs, optim.rs, train.rs); the scorer in crates/ltr-core/src/neural.rs and neural/encoder.rs",
        params: &[NEURAL_SPECS, CLICK_SPECS, NEURAL_DEBIAS_SPECS],
        distributed: None,
        clicks: ClickUse::ClickQueriesOrSessions,
        missing_values: false,
        binned: false,
        fit: neural::neural,
        owned: None,
        online: None,
        // Labels (the features are read in place), the parameters with Adam's moments and gradients, and the
        // largest piece's activations (per layer rows × width, per encoder block n × width and one head's n² a
        // query): computed from the setting by `NeuralValidParams::memory_estimate`; the terms here are the
        // fallback for a setting that cannot be read.
        memory: Memory::new(16, 0, 4).sized_by(neural::memory),
    },
];

/// The algorithm called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS
        .iter()
        .find(|a| a.name.eq_ignore_ascii_case(name.trim()))
}

/// `find`, or an error listing the known names.
pub fn find_or_err(name: &str) -> Result<&'static Algorithm> {
    find(name).ok_or_else(|| {
        ltr_core::LtrError::param(
            "algo",
            format!(
                "unknown algorithm `{name}`; known: {}",
                ALGORITHMS
                    .iter()
                    .map(|a| a.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

/// Build the typed parameters of an online algorithm by name (for stream experiments that replay their own data):
/// the row's online form, an error for an algorithm without one.
pub fn online_params(name: &str, params: &Params) -> Result<ltr_online::OnlineValidParams> {
    let a = find_or_err(name)?;
    let Some(online) = a.online else {
        return Err(ltr_core::LtrError::param(
            "algo",
            format!("`{}` is not an online algorithm", a.name),
        ));
    };
    let r = SpecReader::new(params, a.params);
    let p = online(&r)?;
    r.finish(a.name)?;
    Ok(p)
}
