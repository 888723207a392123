//! The registry table: every algorithm's name, paper, parameter specs and the function that reads its parameters
//! and fits it. One module per learner family; a newcomer finds an algorithm by its paper name here.

pub(crate) mod clicks;
pub(crate) mod ensemble;
pub(crate) mod listwise;
pub(crate) mod online;
pub(crate) mod perceptron;
mod start;
pub(crate) mod svm;
pub(crate) mod trees;

use ltr_core::{Allreduce, FitContext, Fitted, Params, Result};
use ltr_data::Dataset;
use serde::Serialize;

use crate::spec::{ParamSpec, SpecReader};

pub use ensemble::{refine_sigmoid, SIGMOID_LAMBDA_GRID};

type FitFn = fn(&SpecReader<'_>, &Dataset, &FitContext<'_>) -> Result<Fitted>;
type DistributedFitFn =
    fn(&SpecReader<'_>, &Dataset, &FitContext<'_>, &dyn Allreduce) -> Result<Fitted>;

/// One registered algorithm.
#[derive(Serialize)]
pub struct Algorithm {
    /// Name for `--algo` and `train(name, …)`.
    pub name: &'static str,
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
    #[serde(skip)]
    fit: FitFn,
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
    /// Every parameter spec, in listing order.
    pub fn param_specs(&self) -> impl Iterator<Item = &'static ParamSpec> {
        self.params.iter().flat_map(|g| g.iter())
    }
    /// Check, before any data is read, that every name in `params` is one of this algorithm's parameters
    /// ([`SpecReader::check_known`]); [`Algorithm::fit`] checks the rest (values, names a setting leaves unused).
    pub fn check_names(&self, params: &Params) -> Result<()> {
        SpecReader::new(params, self.params).check_known(self.name)
    }
    /// Train one setting: read `params` by the specs (unknown or unused names are errors), then fit.
    pub fn fit(&self, params: &Params, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        (self.fit)(&SpecReader::new(params, self.params), train, ctx)
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
            return Err(ltr_core::LtrError::param(
                "algo",
                format!(
                    "`{}` has no distributed trainer; distributed training supports: {}",
                    self.name,
                    distributed_names().join(", ")
                ),
            ));
        };
        fit(&SpecReader::new(params, self.params), shard, ctx, comm)
    }
}

/// The algorithms `ltr train --distributed` can train.
pub fn distributed_names() -> Vec<&'static str> {
    ALGORITHMS
        .iter()
        .filter(|a| a.distributed.is_some())
        .map(|a| a.name)
        .collect()
}

impl Algorithm {}

use clicks::{CLICK_SPECS, PROPENSITY_RANKSVM_SPECS};
use ensemble::{MHR_SPECS, RANKBOOST_SPECS, SIGMOID_SPECS};
use listwise::{ADARANK_SPECS, COORDINATE_ASCENT_SPECS, LAMBDARANK_SPECS, MEASURE_SPECS};
use online::{LISTNET_SPECS, ONLINE_LISTNET_SPECS, PURE_ONLINE_SPECS, SLAM_SPECS, STREAM_SPECS};
use perceptron::{COMMITTEE_SPECS, LOOP_SPECS, PERCEPTRON_SPECS};
use svm::{RANKSVM_SPECS, RSVM_IR_SPECS, SOLVER_SPECS};
use trees::{BOOST_SPECS, LAMBDAMART_SPECS, RANDOM_FOREST_SPECS};

/// Every algorithm, in the order `ltr algorithms` lists them.
pub static ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "ranksvm",
        paper: "Herbrich et al. 2000; Joachims 2002 (the baseline of every seed)",
        code: "crates/ltr-svm",
        params: &[RANKSVM_SPECS, SOLVER_SPECS],
        distributed: Some(svm::ranksvm_distributed),
        fit: svm::ranksvm,
    },
    Algorithm {
        name: "rsvm-ir",
        paper: "Cao et al., SIGIR 2006, Adapting Ranking SVM to Document Retrieval (seed 004)",
        code: "crates/ltr-svm (cutting_plane.rs, dual_cd.rs, gd.rs); τ, μ in crates/ltr-pairs/src/weights.rs",
        params: &[RSVM_IR_SPECS, SOLVER_SPECS],
        distributed: Some(svm::rsvm_ir_distributed),
        fit: svm::rsvm_ir,
    },
    Algorithm {
        name: "propensity-ranksvm",
        paper: "Joachims, Swaminathan & Schnabel, WSDM 2017, Unbiased Learning-to-Rank with Biased Feedback: Propensity SVM-Rank on clicks (weighting=naive: the naive control)",
        code: "crates/ltr-learn/src/algorithms/clicks.rs; click training sets in crates/ltr-clicks/src/click_training.rs",
        params: &[PROPENSITY_RANKSVM_SPECS, CLICK_SPECS, SOLVER_SPECS],
        distributed: None,
        fit: clicks::propensity_ranksvm,
    },
    Algorithm {
        name: "perceptron",
        paper: "Elsas, Carvalho, Carbonell, WSDM 2008 (seed 000): pairwise perceptron with η_q = 1/|S_q|",
        code: "crates/ltr-perceptron",
        params: &[PERCEPTRON_SPECS, LOOP_SPECS],
        distributed: Some(perceptron::perceptron_distributed),
        fit: perceptron::perceptron,
    },
    Algorithm {
        name: "committee-perceptron",
        paper: "Elsas, Carvalho, Carbonell, WSDM 2008 (seed 000): the committee perceptron",
        code: "crates/ltr-perceptron (outputs.rs)",
        params: &[COMMITTEE_SPECS, LOOP_SPECS],
        distributed: Some(perceptron::committee_distributed),
        fit: perceptron::committee,
    },
    Algorithm {
        name: "mhr",
        paper: "Qin et al., SIGIR 2007, Ranking with Multiple Hyperplanes (seed 001)",
        code: "crates/ltr-ensemble/src/mhr.rs",
        params: &[MHR_SPECS],
        distributed: None,
        fit: ensemble::mhr,
    },
    Algorithm {
        name: "sigmoid",
        paper: "Carvalho, Elsas, Cohen, Carbonell, LR4IR 2008, the sigmoid meta-ranker (seed 003)",
        code: "crates/ltr-ensemble/src/sigmoid.rs",
        params: &[SIGMOID_SPECS],
        distributed: None,
        fit: ensemble::sigmoid,
    },
    Algorithm {
        name: "rankboost",
        paper: "Freund, Iyer, Schapire, Singer, JMLR 2003 (baseline of seeds 000 and 003)",
        code: "crates/ltr-ensemble/src/rankboost.rs",
        params: &[RANKBOOST_SPECS],
        distributed: Some(ensemble::rankboost_distributed),
        fit: ensemble::rankboost,
    },
    Algorithm {
        name: "listnet",
        paper: "Cao et al., ICML 2007, batch top-one ListNet (baseline of seed 003; a sigmoid seed)",
        code: "crates/ltr-online/src/listnet.rs",
        params: &[LISTNET_SPECS, CLICK_SPECS],
        distributed: Some(online::listnet_distributed),
        fit: online::listnet,
    },
    Algorithm {
        name: "coordinate-ascent",
        paper: "Metzler & Croft 2007, Linear feature-based models for IR (RankLib -ranker 4), with an exact line search",
        code: "crates/ltr-listwise (coordinate_ascent.rs, line_search.rs)",
        params: &[COORDINATE_ASCENT_SPECS, MEASURE_SPECS],
        distributed: Some(listwise::coordinate_ascent_distributed),
        fit: listwise::coordinate_ascent,
    },
    Algorithm {
        name: "adarank",
        paper: "Xu & Li, SIGIR 2007, AdaRank: boosting single-feature rankers on the IR measure (RankLib -ranker 3)",
        code: "crates/ltr-listwise/src/adarank.rs",
        params: &[ADARANK_SPECS, MEASURE_SPECS],
        distributed: None,
        fit: listwise::adarank,
    },
    Algorithm {
        name: "lambdarank",
        paper: "Burges 2010, From RankNet to LambdaRank to LambdaMART: LambdaRank gradients for a linear model",
        code: "crates/ltr-listwise/src/lambdarank.rs",
        params: &[LAMBDARANK_SPECS, CLICK_SPECS],
        distributed: Some(listwise::lambdarank_distributed),
        fit: listwise::lambdarank,
    },
    Algorithm {
        name: "slam-perceptron",
        paper: "Chaudhuri & Tewari 2015, Algorithm 1 (seed 002): the online SLAM perceptron, the file replayed as a stream",
        code: "crates/ltr-online (slam.rs, learners.rs)",
        params: &[SLAM_SPECS, STREAM_SPECS],
        distributed: None,
        fit: |r, t, c| online::online(r, "slam-perceptron", t, c),
    },
    Algorithm {
        name: "pure-online",
        paper: "Chaudhuri & Tewari 2015, Algorithm 2 (seed 002): most-violated pair, step scaled by the measure loss",
        code: "crates/ltr-online/src/learners.rs",
        params: &[PURE_ONLINE_SPECS, STREAM_SPECS],
        distributed: None,
        fit: |r, t, c| online::online(r, "pure-online", t, c),
    },
    Algorithm {
        name: "online-listnet",
        paper: "top-one ListNet updated every round (seed 002's baseline)",
        code: "crates/ltr-online/src/learners.rs",
        params: &[ONLINE_LISTNET_SPECS, STREAM_SPECS],
        distributed: None,
        fit: |r, t, c| online::online(r, "online-listnet", t, c),
    },
    Algorithm {
        name: "lambdamart",
        paper: "Burges 2010, From RankNet to LambdaRank to LambdaMART: gradient-boosted trees on |ΔNDCG|-weighted LambdaRank gradients",
        code: "crates/ltr-trees (boost.rs, grow.rs, objective.rs)",
        params: &[BOOST_SPECS, LAMBDAMART_SPECS],
        distributed: None,
        fit: trees::lambdamart,
    },
    Algorithm {
        name: "mart",
        paper: "Friedman 2001, Greedy Function Approximation: gradient-boosted regression trees on the labels (RankLib -ranker 0)",
        code: "crates/ltr-trees (boost.rs, grow.rs)",
        params: &[BOOST_SPECS],
        distributed: None,
        fit: trees::mart,
    },
    Algorithm {
        name: "random-forest",
        paper: "Breiman 2001, Random Forests: regression trees on query and feature subsamples, averaged (RankLib -ranker 8)",
        code: "crates/ltr-trees/src/boost.rs",
        params: &[RANDOM_FOREST_SPECS],
        distributed: None,
        fit: trees::random_forest,
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

/// Build the typed parameters of an online algorithm by name (for stream experiments that replay their own data).
pub fn online_params(name: &str, params: &Params) -> Result<ltr_online::OnlineParams> {
    let a = find_or_err(name)?;
    if !matches!(a.name, "slam-perceptron" | "pure-online" | "online-listnet") {
        return Err(ltr_core::LtrError::param(
            "algo",
            format!("`{}` is not an online algorithm", a.name),
        ));
    }
    let r = SpecReader::new(params, a.params);
    let p = online::online_params(&r, a.name)?;
    r.finish(a.name)?;
    Ok(p)
}
