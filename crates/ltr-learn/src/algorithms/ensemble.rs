//! `mhr` (seed 001), `sigmoid` (seed 003) and `rankboost`: parameters → the `ltr-ensemble` learners, plus the
//! sigmoid's model selection (its seed by name, its λ on validation).

use ltr_core::{
    best_by_validation, Aggregation, Allreduce, Fit, FitContext, FitDistributed, FitWith, Fitted,
    LinearModel, LtrError, ParamGuard, Params, Result,
};
use ltr_data::Dataset;
use ltr_ensemble::BaseLearner;
use ltr_ensemble::{
    GradePairs, MhrParams, RankBoostParams, RankBoostValidParams, SigmoidParams,
    SigmoidValidParams, TuneOn,
};
use ltr_svm::{CSetting, RankSvmParams, Solver};

use crate::spec::{choice, float, int, Allowed, ParamSpec, SpecReader};

/// `mhr`'s parameters.
pub(crate) const MHR_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "pairs",
        "all",
        Allowed::Text,
        "grade pairs with a hyperplane each: all, adjacent, or a list S-T;S-T (e.g. 2-1;2-0)",
    ),
    ParamSpec::new(
        "aggregate",
        "borda",
        choice(&["borda", "wborda", "median", "markov"]),
        "rank aggregation: BordaCount, weighted BordaCount, median rank, Markov chain MC4",
    ),
    ParamSpec::new(
        "weighted",
        "false",
        Allowed::Bool,
        "tune the list weights (implied by wborda)",
    ),
    ParamSpec::new(
        "base",
        "ranksvm",
        choice(&["ranksvm", "ranksvm-hinge"]),
        "base ranker: RankSVM (Newton, squared hinge) or hinge RankSVM (cutting plane)",
    ),
    ParamSpec::new(
        "c",
        "default",
        Allowed::CValue,
        "C of every base ranker (default: SVMlight's 1/mean‖x‖², as in the paper)",
    ),
    ParamSpec::new(
        "tune-on",
        "train",
        choice(&["train", "validation"]),
        "where the list weights are tuned",
    ),
    ParamSpec::new(
        "grid-step",
        "0.05",
        float(1e-3, 1.0),
        "simplex grid step of the weight tuning",
    ),
    ParamSpec::new(
        "diagnostics",
        "true",
        Allowed::Bool,
        "also train the single RankSVM for cosines and order error rates",
    ),
];

/// `sigmoid`'s parameters.
pub(crate) const SIGMOID_SPECS: &[ParamSpec] = &[
    ParamSpec::new("seed-model", "", Allowed::Text, "a linear model file to start from"),
    ParamSpec::new("seed-algo", "", Allowed::Text, "an algorithm of this registry trained first as the start (its parameters as seed-KEY=V)"),
    ParamSpec::new("seed-KEY", "", Allowed::Text, "parameter KEY of the seed algorithm").when("seed-algo=ranksvm"),
    ParamSpec::new("seed-init", "random", choice(&["zero", "random"]), "the start without seed-model or seed-algo: zeros, or seeded uniform(−½, ½)"),
    ParamSpec::new("sigma", "1", float(1e-12, 1e12), "σ, the sigmoid's steepness"),
    ParamSpec::new("lambda", "", float(0.0, 1e300), "λ of the ridge term (empty: chosen on --validate from 1/(2C), C in 1e-5..1e1; 1e-3 without)"),
    ParamSpec::new("eta", "0.05", float(1e-300, 1e300), "initial step η"),
    ParamSpec::new("step-scale", "per-pair", choice(&["per-pair", "absolute"]), "η on the mean pair gradient, or on the summed gradient (the literal reading)"),
    ParamSpec::new("tol", "1e-8", float(1e-300, 1.0), "stop when the relative loss decrease is below this"),
    ParamSpec::new("max-iter", "500", int(1, 100_000_000), "iteration cap"),
];

/// `rankboost`'s parameters.
pub(crate) const RANKBOOST_SPECS: &[ParamSpec] = &[
    ParamSpec::new("rounds", "300", int(1, 1_000_000), "rounds T_max"),
    ParamSpec::new(
        "thresholds",
        "10",
        int(0, 1_000_000),
        "candidate thresholds per feature (0 = every distinct value)",
    ),
    ParamSpec::new(
        "select-rounds",
        "true",
        Allowed::Bool,
        "choose T ≤ T_max on --validate",
    ),
];

/// The λ candidates of seed 003 (algorithms.md §4.4): 1/(2C) for C in 1e-5 … 1e1.
pub const SIGMOID_LAMBDA_GRID: [f64; 7] = [
    1.0 / (2.0 * 1e-5),
    1.0 / (2.0 * 1e-4),
    1.0 / (2.0 * 1e-3),
    1.0 / (2.0 * 1e-2),
    1.0 / (2.0 * 1e-1),
    1.0 / (2.0 * 1.0),
    1.0 / (2.0 * 10.0),
];

fn grade_pairs(text: &str) -> Result<GradePairs> {
    Ok(match text.to_ascii_lowercase().as_str() {
        "all" => GradePairs::All,
        "adjacent" => GradePairs::Adjacent,
        list => {
            let mut v = Vec::new();
            for part in list.split(';').filter(|s| !s.is_empty()) {
                let (a, b) = part.split_once('-').ok_or_else(|| {
                    LtrError::param("pairs", format!("`{part}`: expected S-T (e.g. 2-1)"))
                })?;
                let grade = |g: &str| {
                    g.trim()
                        .parse::<f32>()
                        .map_err(|_| LtrError::param("pairs", format!("`{g}` is not a grade")))
                };
                v.push((grade(a)?, grade(b)?));
            }
            GradePairs::Subset(v)
        }
    })
}

/// `mhr`.
pub(crate) fn mhr(r: &SpecReader<'_>, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
    let pairs = grade_pairs(&r.text("pairs")?.unwrap_or_else(|| "all".into()))?;
    let aggregate = r.choice("aggregate")?;
    let weighted = r.flag("weighted")? || aggregate == "wborda";
    let aggregation = Aggregation::parse(&aggregate).expect("listed choices parse");
    let base = match r.choice("base")?.as_str() {
        "ranksvm-hinge" => RankSvmParams::default()
            .loss(ltr_pairs::PairLoss::Hinge)
            .solver(Solver::CuttingPlane),
        _ => RankSvmParams::default(),
    }
    .c(super::svm::c_setting(r, CSetting::SvmLightDefault)?);
    let s = MhrParams::default()
        .pairs(pairs)
        .base(BaseLearner::RankSvm(base))
        .aggregation(aggregation)
        .weighted(weighted)
        .tune_on(match r.choice("tune-on")?.as_str() {
            "validation" => TuneOn::Validation,
            _ => TuneOn::Train,
        })
        .grid_step(r.float("grid-step")?)
        .diagnostics(r.flag("diagnostics")?)
        .check()?;
    r.finish("mhr")?;
    s.fit(train, ctx)
}

fn rankboost_params(r: &SpecReader<'_>) -> Result<RankBoostValidParams> {
    let s = RankBoostParams::default()
        .rounds(r.int("rounds")?)
        .thresholds(r.int("thresholds")?)
        .select_rounds(r.flag("select-rounds")?)
        .check()?;
    r.finish("rankboost")?;
    Ok(s)
}

/// `rankboost`.
pub(crate) fn rankboost(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    rankboost_params(r)?.fit(train, ctx)
}

/// `rankboost` on this rank's shard of the queries: each round's threshold sums exact across ranks.
pub(crate) fn rankboost_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    rankboost_params(r)?.fit_distributed(shard, ctx, comm)
}

/// `sigmoid`: the start (a file, another algorithm by name, or a fixed start), then [`FitWith`] for every λ
/// candidate, the best kept on validation.
pub(crate) fn sigmoid(r: &SpecReader<'_>, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
    let start = super::start::read_start(r, "seed", &["seed-init"])?;
    let zero = start.is_none() && r.choice("seed-init")? == "zero";
    let (base, lambda) = sigmoid_settings(r)?;
    r.finish("sigmoid")?;
    let d = train.n_features();
    let (seed_model, seeded_by) = match start {
        Some(start) => super::start::resolve_start(start, "seed", "sigmoid", train, ctx, None)?,
        None if zero => (LinearModel::new(vec![0.0; d]), None),
        None => {
            use rand::{Rng, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(ctx.seed());
            (
                LinearModel::new((0..d).map(|_| rng.random::<f64>() - 0.5).collect()),
                None,
            )
        }
    };
    let mut fit = select_lambda(&base, lambda, &seed_model, train, ctx)?;
    if let Some(name) = seeded_by {
        fit.report = fit.report.select("seed-algo", name);
    }
    Ok(fit)
}

/// The sigmoid's own settings (everything but its start) and the λ if given.
fn sigmoid_settings(r: &SpecReader<'_>) -> Result<(SigmoidValidParams, Option<f64>)> {
    let base = SigmoidParams::default()
        .sigma(r.float("sigma")?)
        .lambda(0.0)
        .eta(r.float("eta")?)
        .tolerance(r.float("tol")?)
        .max_iter(r.int("max-iter")?)
        .min_eta(1e-20)
        .per_pair_step(r.choice("step-scale")? == "per-pair")
        .check()?;
    Ok((base, r.opt_float("lambda")?))
}

/// Refine `start` for every λ candidate (the given λ; else [`SIGMOID_LAMBDA_GRID`] with validation data, 1e-3
/// without) and keep the best on validation.
fn select_lambda(
    base: &SigmoidParams,
    lambda: Option<f64>,
    start: &LinearModel,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    let candidates: Vec<f64> = match (lambda, ctx.validation()) {
        (Some(l), _) => vec![l],
        (None, Some(_)) => SIGMOID_LAMBDA_GRID.to_vec(),
        (None, None) => vec![1e-3],
    };
    let best = best_by_validation(candidates, |l| {
        let fit = base
            .clone()
            .lambda(l)
            .check()?
            .fit_with(start, train, ctx)?;
        Ok((ctx.validate(&fit.model)?.unwrap_or(0.0), (l, fit)))
    })?
    .expect("at least one candidate");
    let (l, mut fit) = best.item;
    fit.report = fit.report.select("lambda", l);
    if ctx.validation().is_some() {
        fit.report.validation = Some(best.score);
    }
    Ok(fit)
}

/// The sigmoid meta-ranker from an in-memory start (the [`FitWith`] form by name): `params` are the sigmoid's
/// own (`sigma`, `lambda`, `eta`, `step-scale`, `tol`, `max-iter`), λ chosen on validation when not given.
pub fn refine_sigmoid(
    start: &LinearModel,
    params: &Params,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    let r = SpecReader::new(params, &[SIGMOID_SPECS]);
    let (base, lambda) = sigmoid_settings(&r)?;
    r.finish("sigmoid")?;
    select_lambda(&base, lambda, start, train, ctx)
}
