//! `lambdamart`, `mart` (gradient-boosted trees) and `random-forest`: parameters → [`GbdtParams`] and
//! [`RandomForestParams`] of `ltr-trees`.

use ltr_core::{
    Allreduce, FitContext, Fitted, InitModel, LtrError, ParamGuard, Result, SingleProcess,
};
use ltr_data::Dataset;
use ltr_trees::{GbdtParams, LambdaSettings, Objective, RandomForestParams, TreeParams};

use super::start::{read_start, start_model, Start, StartModel};
use crate::spec::{float, int, Allowed, ParamSpec, SpecReader};

/// Shape of each tree; shared by every tree learner (the random forest has its own defaults below).
macro_rules! tree_specs {
    ($leaves:literal, $min_docs:literal, $ff:literal, $qf:literal) => {
        [
            ParamSpec::new(
                "leaves",
                $leaves,
                int(2, 131_072),
                "leaves per tree at most",
            ),
            ParamSpec::new(
                "max-depth",
                "0",
                int(0, 1000),
                "depth per tree at most (0: unlimited)",
            ),
            ParamSpec::new(
                "min-docs-in-leaf",
                $min_docs,
                int(1, 1_000_000_000),
                "documents per leaf at least",
            ),
            ParamSpec::new(
                "max-bin",
                "255",
                int(2, 65_535),
                "bins per feature at most (every distinct training value up to this many, else quantiles; one byte a cell up to 256 bins, two beyond; a NaN gets one more bin whose side each split learns)",
            ),
            ParamSpec::new(
                "feature-fraction",
                $ff,
                float(1e-9, 1.0),
                "share of the features each tree may split on",
            ),
            ParamSpec::new(
                "query-fraction",
                $qf,
                float(1e-9, 1.0),
                "share of the queries each tree is grown on (drawn without replacement, by --seed)",
            ),
        ]
    };
}

const GBDT_TREE: [ParamSpec; 6] = tree_specs!("31", "20", "1", "1");
const FOREST_TREE: [ParamSpec; 6] = tree_specs!("63", "10", "0.5", "0.63");

/// The boosting settings of `lambdamart` and `mart`.
pub(crate) const BOOST_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "trees",
        "100",
        int(0, 1_000_000),
        "boosting rounds at most (0 only with init-model or init-algo: the start model alone)",
    ),
    ParamSpec::new(
        "learning-rate",
        "0.1",
        float(1e-9, 1000.0),
        "shrinkage of every leaf value",
    ),
    ParamSpec::new(
        "min-hessian-in-leaf",
        "0.001",
        float(0.0, 1e300),
        "hessian sum per leaf at least",
    ),
    ParamSpec::new("l2", "0", float(0.0, 1e300), "λ of the leaf values' L2 penalty"),
    ParamSpec::new(
        "stop-after",
        "100",
        int(0, 1_000_000),
        "with --validate: stop after this many rounds without a better validation measure (0: never); the \
         ensemble is cut back to its best round",
    ),
    GBDT_TREE[0],
    GBDT_TREE[1],
    GBDT_TREE[2],
    GBDT_TREE[3],
    GBDT_TREE[4],
    GBDT_TREE[5],
];

/// Where `lambdamart` and `mart` start boosting: another model's scores.
pub(crate) const INIT_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "init-model",
        "",
        Allowed::Text,
        "a model file of any kind to boost from: the trees start from its scores (through the preprocessing it \
         stored) and the saved model is it plus the trees",
    ),
    ParamSpec::new(
        "init-algo",
        "",
        Allowed::Text,
        "an algorithm of this registry trained first on the same data and seed, to boost from (its parameters as \
         init-KEY=V)",
    ),
    ParamSpec::new(
        "init-KEY",
        "",
        Allowed::Text,
        "parameter KEY of the start algorithm",
    )
    .when("init-algo=ranksvm"),
];

/// `lambdamart`'s pair weighting.
pub(crate) const LAMBDAMART_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "ndcg-at",
        "10",
        int(1, 1_000_000),
        "k of the ideal DCG@k that normalises each pair's |ΔNDCG|",
    ),
    ParamSpec::new(
        "truncation",
        "30",
        int(1, 1_000_000),
        "only pairs with a document in the current top `truncation` contribute",
    ),
    ParamSpec::new("sigma", "1", float(1e-300, 1e300), "σ of the pair sigmoid"),
    ParamSpec::new(
        "norm",
        "true",
        Allowed::Bool,
        "scale each query's gradients by log2(1 + Σλ)/Σλ",
    ),
    ParamSpec::new(
        "score-gap",
        "true",
        Allowed::Bool,
        "divide each pair's |ΔNDCG| by 0.01 + |s_i − s_j| (as LightGBM's lambdarank_norm)",
    ),
];

/// `random-forest`'s parameters.
pub(crate) const RANDOM_FOREST_SPECS: &[ParamSpec] = &[
    ParamSpec::new("trees", "100", int(1, 1_000_000), "trees (averaged)"),
    FOREST_TREE[0],
    FOREST_TREE[1],
    FOREST_TREE[2],
    FOREST_TREE[3],
    FOREST_TREE[4],
    FOREST_TREE[5],
];

fn read_tree(r: &SpecReader<'_>, base: TreeParams) -> Result<TreeParams> {
    Ok(TreeParams {
        leaves: r.int("leaves")?,
        max_depth: r.int("max-depth")?,
        min_docs_in_leaf: r.int("min-docs-in-leaf")?,
        max_bin: r.int("max-bin")?,
        feature_fraction: r.float("feature-fraction")?,
        query_fraction: r.float("query-fraction")?,
        ..base
    })
}

fn read_boost(r: &SpecReader<'_>, objective: Objective) -> Result<GbdtParams> {
    let tree = read_tree(
        r,
        TreeParams {
            min_hessian_in_leaf: r.float("min-hessian-in-leaf")?,
            l2: r.float("l2")?,
            ..TreeParams::default()
        },
    )?;
    Ok(GbdtParams {
        objective,
        trees: r.int("trees")?,
        learning_rate: r.float("learning-rate")?,
        stop_after: r.int("stop-after")?,
        tree,
    })
}

/// The start model named by `init-model`/`init-algo` (trained now for `init-algo`), checked against the training
/// data's width.
fn resolve_init(
    start: Start,
    owner: &str,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<InitModel> {
    let distributed = (comm.size() > 1).then_some(comm);
    let StartModel {
        label,
        model,
        preprocess,
        file_width,
        ..
    } = start_model(start, "init", owner, train, ctx, distributed)?;
    let init = InitModel {
        model: Box::new(model),
        preprocess,
    };
    // The start must read every column of the data, and nothing the data lacks.
    let (d, width) = (
        train.n_features(),
        file_width.unwrap_or(init.raw_features()),
    );
    let wrong = if width > d || init.raw_features() > d {
        Some("more")
    } else if init.preprocess.is_some() && init.raw_features() < d {
        Some("fewer")
    } else {
        None
    };
    if let Some(which) = wrong {
        return Err(LtrError::Shape(format!(
            "init-model {label} reads {width} features, {which} than the {d} of the training data; boost from a \
             model trained on data of this width"
        )));
    }
    Ok(init)
}

/// `lambdamart` or `mart` with `objective`: from a start model when `init-…` names one; on this rank's shard of
/// the queries, the ranks joined by `comm` (one process: [`SingleProcess`]).
fn boost(
    r: &SpecReader<'_>,
    objective: Objective,
    owner: &str,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let p = read_boost(r, objective)?;
    let start = read_start(r, "init", &[])?;
    // Every setting is checked before a start algorithm trains; zero rounds are allowed from a start model.
    let rounds = if start.is_some() {
        p.trees.max(1)
    } else {
        p.trees
    };
    GbdtParams { trees: rounds, ..p }.validate()?;
    r.finish(owner)?;
    let init = match start {
        Some(s) => Some(resolve_init(s, owner, train, ctx, comm)?),
        None => None,
    };
    ltr_trees::fit_gbdt_ranks(&p, train, ctx, init, comm)
}

/// `lambdamart`.
pub(crate) fn lambdamart(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    lambdamart_on(r, train, ctx, &SingleProcess)
}

/// `lambdamart` on this rank's shard of the queries: the one-process model at any number of ranks.
pub(crate) fn lambdamart_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    lambdamart_on(r, shard, ctx, comm)
}

fn lambdamart_on(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let lambda = LambdaSettings {
        ndcg_at: r.int("ndcg-at")?,
        truncation: r.int("truncation")?,
        sigma: r.float("sigma")?,
        norm: r.flag("norm")?,
        score_gap: r.flag("score-gap")?,
    };
    boost(
        r,
        Objective::LambdaRank(lambda),
        "lambdamart",
        train,
        ctx,
        comm,
    )
}

/// `mart`.
pub(crate) fn mart(r: &SpecReader<'_>, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
    boost(
        r,
        Objective::SquaredError,
        "mart",
        train,
        ctx,
        &SingleProcess,
    )
}

/// `mart` on this rank's shard of the queries: the one-process model at any number of ranks.
pub(crate) fn mart_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    boost(r, Objective::SquaredError, "mart", shard, ctx, comm)
}

/// `random-forest`.
pub(crate) fn random_forest(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    random_forest_distributed(r, train, ctx, &SingleProcess)
}

/// `random-forest` on this rank's shard of the queries: the one-process forest at any number of ranks (without
/// the out-of-bag estimate on more than one).
pub(crate) fn random_forest_distributed(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let p = RandomForestParams {
        trees: r.int("trees")?,
        tree: read_tree(r, RandomForestParams::default().tree)?,
    }
    .check()?;
    r.finish("random-forest")?;
    ltr_trees::fit_random_forest_ranks(&p, train, ctx, comm)
}
