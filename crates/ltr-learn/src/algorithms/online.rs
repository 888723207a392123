//! `listnet`, `slam-perceptron`, `pure-online`, `online-listnet` (seed 002 and its baselines): parameters →
//! [`ListNetParams`] and [`OnlineParams`].

use ltr_core::{Allreduce, Fit, FitContext, FitDistributed, Fitted, LtrError, ParamGuard, Result};
use ltr_data::Dataset;
use ltr_online::{
    Eta, ListNetParams, ListNetValidParams, Margin, OnlineAlgorithm, OnlineParams,
    OnlineValidParams, PredictTies, Rml, StepControl, Violators,
};

use crate::spec::{choice, float, int, Allowed, ParamSpec, SpecReader};

/// `listnet`'s parameters.
pub(crate) const LISTNET_SPECS: &[ParamSpec] = &[
    ParamSpec::new("epochs", "100", int(1, 10_000_000), "epochs at most"),
    ParamSpec::new(
        "learning-rate",
        "0.1",
        float(1e-300, 1e300),
        "step of each per-query update",
    ),
    ParamSpec::new(
        "step-control",
        "auto",
        choice(&["auto", "fixed", "backtrack"]),
        "backtrack: an epoch that raises the training loss is undone and retried at half the rate; fixed: never; auto: backtrack when a training feature lies outside [0, 1] (raw or z-scored data), fixed otherwise (LETOR)",
    ),
    ParamSpec::new(
        "select-epochs",
        "true",
        Allowed::Bool,
        "choose the epoch on --validate",
    ),
    ParamSpec::new(
        "shuffle",
        "true",
        Allowed::Bool,
        "seeded query order per epoch (false: file order)",
    ),
];

/// The stream parameters of every online learner.
pub(crate) const STREAM_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "eta0",
        "1",
        float(1e-300, 1e300),
        "c of η_t = c/√t or of a constant η",
    ),
    ParamSpec::new(
        "passes",
        "1",
        int(1, 1_000_000),
        "passes over the training file",
    ),
    ParamSpec::new(
        "keep",
        "1",
        float(0.0, 1.0),
        "per-pass probability of keeping a query",
    ),
];

const ETA: &[&str] = &["inv-sqrt", "constant"];
const TIES: ParamSpec = ParamSpec::new(
    "ties",
    "reverse",
    choice(&["reverse", "input"]),
    "tie order of the predicted ranking: later document first (the authors' code) or earlier",
);
const MEASURE: ParamSpec = ParamSpec::new(
    "measure",
    "ndcg",
    choice(&["ndcg", "ap"]),
    "the measure of the mistake test and the loss",
);
const K: ParamSpec = ParamSpec::new("k", "10", int(1, 1_000_000), "k of NDCG@k");

/// `slam-perceptron`'s own parameters.
pub(crate) const SLAM_SPECS: &[ParamSpec] = &[
    ParamSpec::new("eta", "inv-sqrt", choice(ETA), "step schedule"),
    TIES,
    MEASURE,
    K,
    ParamSpec::new("delta", "1", float(0.0, 1e12), "margin δ"),
    ParamSpec::new(
        "margin",
        "scaled",
        choice(&["scaled", "constant"]),
        "margin scaled by relevance (the authors' code) or constant",
    ),
    ParamSpec::new(
        "tie-average",
        "true",
        Allowed::Bool,
        "average the surrogate weights over tied grades",
    ),
    ParamSpec::new(
        "violators",
        "worst",
        choice(&["worst", "mean"]),
        "worst violator (the paper) or the mean over less relevant documents (extension)",
    ),
];

/// `pure-online`'s own parameters.
pub(crate) const PURE_ONLINE_SPECS: &[ParamSpec] = &[
    ParamSpec::new("eta", "constant", choice(ETA), "step schedule"),
    TIES,
    MEASURE,
    K,
];

/// `online-listnet`'s own parameters.
pub(crate) const ONLINE_LISTNET_SPECS: &[ParamSpec] = &[ParamSpec::new(
    "eta",
    "inv-sqrt",
    choice(ETA),
    "step schedule",
)];

/// `listnet`.
pub(crate) fn listnet(r: &SpecReader<'_>, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
    if r.choice("debias")? == "dr" {
        super::clicks::check_doubly_robust(r, train, "listnet")?;
        let p = listnet_settings(r)?.doubly_robust(true).check()?;
        r.finish("listnet")?;
        return p.fit(train, ctx);
    }
    if let Some(dla) = super::clicks::dla_settings(r, train, "listnet")? {
        // DLA's full-batch steps take their own (Armijo) step sizes: no learning rate, order or step control.
        let p = dla
            .epochs(r.int("epochs")?)
            .select_epochs(r.flag("select-epochs")?)
            .check()?;
        r.finish("listnet")?;
        return p.fit(train, ctx);
    }
    listnet_params(r, train)?.fit(train, ctx)
}

/// `listnet` on this rank's shard of the queries (iterative parameter mixing).
pub(crate) fn listnet_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    if r.choice("debias")? == "dr" {
        if comm.size() > 1 {
            return Err(LtrError::param("debias", "debias=dr trains in one process"));
        }
        return listnet(r, shard, ctx);
    }
    if super::clicks::dla_settings(r, shard, "listnet")?.is_some() {
        return Err(LtrError::param(
            "debias",
            "debias=dla trains in one process",
        ));
    }
    listnet_params(r, shard)?.fit_distributed(shard, ctx, comm)
}

fn listnet_params(r: &SpecReader<'_>, train: &Dataset) -> Result<ListNetValidParams> {
    let p = listnet_settings(r)?
        .clicks(super::clicks::click_weighting(r, train)?)
        .check()?;
    r.finish("listnet")?;
    Ok(p)
}

/// `listnet`'s own settings, the click weighting left to the caller; every parameter is read when this returns.
fn listnet_settings(r: &SpecReader<'_>) -> Result<ListNetParams> {
    let s = ListNetParams::default()
        .epochs(r.int("epochs")?)
        .learning_rate(r.float("learning-rate")?)
        .select_epochs(r.flag("select-epochs")?)
        .shuffle(r.flag("shuffle")?)
        .step_control(match r.choice("step-control")?.as_str() {
            "fixed" => StepControl::Fixed,
            "backtrack" => StepControl::Backtrack,
            _ => StepControl::Auto,
        });
    Ok(s)
}

/// The three online algorithms of seed 002, which share one parameter reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `slam-perceptron` (Algorithm 1).
    Slam,
    /// `pure-online` (Algorithm 2).
    PureOnline,
    /// `online-listnet` (the baseline).
    ListNet,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Self::Slam => "slam-perceptron",
            Self::PureOnline => "pure-online",
            Self::ListNet => "online-listnet",
        }
    }
}

/// An online learner's parameters (the registry row's online form).
pub(crate) fn online_params(r: &SpecReader<'_>, kind: Kind) -> Result<OnlineValidParams> {
    let eta0 = r.float("eta0")?;
    let eta = match r.choice("eta")?.as_str() {
        "constant" => Eta::Constant(eta0),
        _ => Eta::InvSqrt(eta0),
    };
    let ties = if kind == Kind::ListNet {
        PredictTies::ReverseInput
    } else {
        match r.choice("ties")?.as_str() {
            "input" => PredictTies::InputOrder,
            _ => PredictTies::ReverseInput,
        }
    };
    let algorithm = if kind == Kind::ListNet {
        OnlineAlgorithm::ListNet
    } else {
        let k = r.int("k")?;
        let measure = if r.choice("measure")? == "ap" {
            Rml::Ap
        } else {
            Rml::Ndcg(k)
        };
        if kind == Kind::PureOnline {
            OnlineAlgorithm::PureOnline { measure }
        } else {
            let delta = r.float("delta")?;
            OnlineAlgorithm::SlamPerceptron {
                measure,
                margin: match r.choice("margin")?.as_str() {
                    "constant" => Margin::Constant(delta),
                    _ => Margin::RelevanceScaled(delta),
                },
                tie_average: r.flag("tie-average")?,
                violators: match r.choice("violators")?.as_str() {
                    "mean" => Violators::Mean,
                    _ => Violators::Worst,
                },
            }
        }
    };
    OnlineParams::slam_ndcg()
        .algorithm(algorithm)
        .eta(eta)
        .ties(ties)
        .passes(r.int("passes")?)
        .keep_probability(r.float("keep")?)
        .check()
}

/// `slam-perceptron`, `pure-online` and `online-listnet`.
pub(crate) fn online(
    r: &SpecReader<'_>,
    kind: Kind,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    let s = online_params(r, kind)?;
    r.finish(kind.name())?;
    s.fit(train, ctx)
}
