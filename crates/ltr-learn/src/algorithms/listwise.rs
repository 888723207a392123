//! `coordinate-ascent` (Metzler & Croft 2007), `adarank` (Xu & Li 2007) and `lambdarank` (Burges 2010):
//! parameters → [`CoordinateAscentParams`], [`AdaRankParams`], [`LambdaRankParams`].

use ltr_core::{
    Allreduce, Fit, FitContext, FitDistributed, Fitted, LtrError, ParamGuard, Result, SingleProcess,
};
use ltr_data::{ClickWeighting, Dataset};
use ltr_listwise::{
    AdaRankParams, CoordinateAscentParams, CoordinateAscentValidParams, LambdaRankParams,
    LambdaRankValidParams, LineExchange, LineSearch, ListMeasure,
};
use ltr_metrics::{Convention, Gain, Metric};

use crate::spec::{choice, float, int, Allowed, ParamSpec, SpecReader};

/// The measure a listwise learner optimises: `metric` and `convention`, each `auto` = `--metric`/`--convention`.
pub(crate) const MEASURE_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "metric",
        "auto",
        Allowed::Text,
        "measure optimised on the training data: NDCG[@k], DCG[@k], MAP[@k], P@k, MRR[@k], ERR[@k]; auto: --metric",
    ),
    ParamSpec::new(
        "convention",
        "auto",
        choice(&["auto", "letor3", "letor4", "mslr", "trec", "standard"]),
        "convention of that measure; auto: --convention",
    ),
];

/// `coordinate-ascent`'s parameters.
pub(crate) const COORDINATE_ASCENT_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "restarts",
        "5",
        int(1, 10_000),
        "random restarts (RankLib -r): uniform start, own feature order",
    ),
    ParamSpec::new(
        "tolerance",
        "0.001",
        float(0.0, 1e300),
        "a restart ends when a sweep gains less (RankLib -tolerance)",
    ),
    ParamSpec::new(
        "max-sweeps",
        "100",
        int(1, 1_000_000),
        "sweeps over all features at most per restart (warning when hit)",
    ),
    ParamSpec::new(
        "l2",
        "0",
        float(0.0, 1e300),
        "λ of the penalty λ‖w − w₀‖² towards the uniform start (RankLib -reg)",
    ),
    ParamSpec::new(
        "non-negative",
        "false",
        Allowed::Bool,
        "keep every weight ≥ 0",
    ),
    ParamSpec::new(
        "line-search",
        "exact",
        choice(&["exact", "ranklib"]),
        "exact: optimum over the whole line; ranklib: RankLib's geometric trial steps",
    ),
    ParamSpec::new(
        "iterations",
        "25",
        int(1, 1000),
        "trial steps per direction (RankLib -i)",
    )
    .when("line-search=ranklib"),
    ParamSpec::new(
        "step-base",
        "0.05",
        float(1e-300, 1e300),
        "first trial step relative to the weight",
    )
    .when("line-search=ranklib"),
    ParamSpec::new(
        "step-scale",
        "2",
        float(1.000001, 1e300),
        "growth of the trial steps",
    )
    .when("line-search=ranklib"),
    ParamSpec::new(
        "exchange",
        "auto",
        choice(&["auto", "points", "buckets"]),
        "how the ranks of `train --distributed` agree on each line (one process: no effect): points gathers every \
         crossing point (the single-process model bit for bit); buckets reduces bucket statistics and gathers only \
         the candidate buckets' points; auto: points up to 2^20 points a line, buckets above",
    )
    .when("line-search=exact"),
];

/// The optimised measure from `metric`/`convention` (`None`: take the context's).
pub(crate) fn read_measure(r: &SpecReader<'_>) -> Result<Option<ListMeasure>> {
    let metric = r.text("metric")?.unwrap_or_else(|| "auto".into());
    let convention = r.choice("convention")?;
    if metric.eq_ignore_ascii_case("auto") && convention == "auto" {
        return Ok(None);
    }
    let metric: Metric = if metric.eq_ignore_ascii_case("auto") {
        Metric::Ndcg(Some(10))
    } else {
        metric
            .parse()
            .map_err(|e: ltr_metrics::MetricParseError| LtrError::param("metric", e.to_string()))?
    };
    let convention: Convention = if convention == "auto" {
        Convention::STANDARD
    } else {
        convention
            .parse()
            .map_err(|e| LtrError::param("convention", e))?
    };
    ListMeasure::new(metric, convention).map(Some)
}

/// `coordinate-ascent`.
pub(crate) fn coordinate_ascent(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    coordinate_ascent_params(r)?.fit(train, ctx)
}

/// `coordinate-ascent` on this rank's shard of the queries (each line search gathers every rank's crossings).
pub(crate) fn coordinate_ascent_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    coordinate_ascent_params(r)?.fit_distributed(shard, ctx, comm)
}

fn coordinate_ascent_params(r: &SpecReader<'_>) -> Result<CoordinateAscentValidParams> {
    let exact = r.choice("line-search")? == "exact";
    let mut p = CoordinateAscentParams::default()
        .restarts(r.int("restarts")?)
        .tolerance(r.float("tolerance")?)
        .max_sweeps(r.int("max-sweeps")?)
        .l2(r.float("l2")?)
        .non_negative(r.flag("non-negative")?)
        .measure(read_measure(r)?)
        .line_search(if exact {
            LineSearch::Exact
        } else {
            LineSearch::RankLibSteps
        });
    if exact {
        p = p.exchange(match r.choice("exchange")?.as_str() {
            "points" => LineExchange::Points,
            "buckets" => LineExchange::Buckets,
            _ => LineExchange::Auto,
        });
    } else {
        p = p
            .iterations(r.int("iterations")?)
            .step_base(r.float("step-base")?)
            .step_scale(r.float("step-scale")?);
    }
    let p = p.check()?;
    r.finish("coordinate-ascent")?;
    Ok(p)
}

/// `lambdarank`'s parameters.
pub(crate) const LAMBDARANK_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "epochs",
        "100",
        int(1, 1_000_000),
        "full-batch gradient epochs at most",
    ),
    ParamSpec::new(
        "k",
        "10",
        int(0, 1_000_000),
        "the k of ΔNDCG@k that weights each pair (0: the whole list)",
    ),
    ParamSpec::new("sigma", "1", float(1e-300, 1e300), "σ of the pair sigmoid"),
    ParamSpec::new(
        "l2",
        "0.0001",
        float(0.0, 1e300),
        "λ of the penalty (λ/2)‖w‖²",
    ),
    ParamSpec::new(
        "select-epochs",
        "true",
        Allowed::Bool,
        "keep the epoch best on --validate",
    ),
    ParamSpec::new(
        "convention",
        "auto",
        choice(&["auto", "letor3", "letor4", "mslr", "trec", "standard"]),
        "gain and discount of ΔNDCG; auto: --convention",
    ),
    ParamSpec::new(
        "init-model",
        "",
        Allowed::Text,
        "a linear model file to fine-tune (with --validate, kept if no epoch beats it)",
    ),
    ParamSpec::new(
        "init-algo",
        "",
        Allowed::Text,
        "an algorithm of this registry trained first as the start (its parameters as init-KEY=V)",
    ),
    ParamSpec::new(
        "init-KEY",
        "",
        Allowed::Text,
        "parameter KEY of the start algorithm",
    )
    .when("init-algo=ranksvm"),
];

/// `lambdarank`.
pub(crate) fn lambdarank(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    lambdarank_from(r, train, ctx, None)
}

/// `lambdarank` on this rank's shard of the queries (exact sums: the single-process model at any rank count).
pub(crate) fn lambdarank_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    lambdarank_from(r, shard, ctx, Some(comm))
}

/// Read the start (`init-…`) and the settings, train the start, then fine-tune it (or start from zeros).
fn lambdarank_from(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: Option<&dyn Allreduce>,
) -> Result<Fitted> {
    let start = super::start::read_start(r, "init", &[])?;
    let doubly_robust = r.choice("debias")? == "dr";
    if doubly_robust && comm.is_some_and(|c| c.size() > 1) {
        return Err(LtrError::param("debias", "debias=dr trains in one process"));
    }
    let dla = if doubly_robust {
        None
    } else {
        super::clicks::dla_settings(r, train, "lambdarank")?
    };
    if let Some(dla) = dla {
        if start.is_some() {
            return Err(LtrError::param(
                "init-model",
                "lambdarank with debias=dla starts from zeros (its propensities are learned with the ranker)",
            ));
        }
        if comm.is_some_and(|c| c.size() > 1) {
            return Err(LtrError::param(
                "debias",
                "debias=dla trains in one process",
            ));
        }
        let k = r.int("k")?;
        let p = dla
            .epochs(r.int("epochs")?)
            .k((k > 0).then_some(k))
            .sigma(r.float("sigma")?)
            .l2(r.float("l2")?)
            .select_epochs(r.flag("select-epochs")?)
            .convention(read_convention(r, ctx)?)
            .check()?;
        r.finish("lambdarank")?;
        return p.fit(train, ctx);
    }
    let p = lambdarank_params(r, train, ctx, doubly_robust)?;
    let start = match start {
        Some(s) => Some(super::start::resolve_start(
            s,
            "init",
            "lambdarank",
            train,
            ctx,
            comm,
        )?),
        None => None,
    };
    let model = start.as_ref().map(|(m, _)| m);
    let mut fit = p.fit_distributed_with(model, train, ctx, comm.unwrap_or(&SingleProcess))?;
    if let Some((_, Some(name))) = start {
        fit.report = fit.report.select("init-algo", name);
    }
    Ok(fit)
}

/// `convention` (`auto`: the run's `--convention`).
fn read_convention(r: &SpecReader<'_>, ctx: &FitContext<'_>) -> Result<Convention> {
    Ok(match r.choice("convention")?.as_str() {
        "auto" => ctx
            .measure_names()
            .and_then(|(_, c)| c.parse::<Convention>().ok())
            .unwrap_or(Convention::STANDARD),
        name => name.parse().map_err(|e| LtrError::param("convention", e))?,
    })
}

/// `lambdarank`'s settings; under `debias=dr` on the doubly robust set, its labels (relevance estimates) as linear
/// gains of ΔNDCG under the convention's discount and each query weighted by its sessions.
fn lambdarank_params(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
    doubly_robust: bool,
) -> Result<LambdaRankValidParams> {
    let (convention, clicks) = if doubly_robust {
        super::clicks::check_doubly_robust(r, train, "lambdarank")?;
        let convention = Convention {
            gain: Gain::Linear,
            ..read_convention(r, ctx)?
        };
        (convention, Some(ClickWeighting::Naive))
    } else {
        (
            read_convention(r, ctx)?,
            super::clicks::click_weighting(r, train)?,
        )
    };
    let k = r.int("k")?;
    let p = LambdaRankParams::default()
        .epochs(r.int("epochs")?)
        .k((k > 0).then_some(k))
        .sigma(r.float("sigma")?)
        .l2(r.float("l2")?)
        .select_epochs(r.flag("select-epochs")?)
        .convention(convention)
        .clicks(clicks)
        .check()?;
    r.finish("lambdarank")?;
    Ok(p)
}

/// `adarank`'s parameters.
pub(crate) const ADARANK_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "rounds",
        "500",
        int(1, 1_000_000),
        "boosting rounds at most (RankLib -round)",
    ),
    ParamSpec::new(
        "tolerance",
        "0.002",
        float(-1e300, 1e300),
        "stop when a round gains less on the training measure (RankLib -tolerance)",
    ),
    ParamSpec::new(
        "max-consecutive",
        "5",
        int(1, 1_000_000),
        "rounds one feature may win in a row (RankLib -max)",
    ),
];

/// `adarank`.
pub(crate) fn adarank(r: &SpecReader<'_>, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
    let p = AdaRankParams::default()
        .rounds(r.int("rounds")?)
        .tolerance(r.float("tolerance")?)
        .max_consecutive(r.int("max-consecutive")?)
        .measure(read_measure(r)?)
        .check()?;
    r.finish("adarank")?;
    p.fit(train, ctx)
}
