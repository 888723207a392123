//! `lambdamart`, `mart` (gradient-boosted trees) and `random-forest`: parameters → [`GbdtParams`] and
//! [`RandomForestParams`] of `ltr-trees`.

use ltr_core::{
    Allreduce, FitContext, Fitted, InitModel, LtrError, ParamGuard, Result, SingleProcess,
};
use ltr_data::Dataset;
use std::borrow::Cow;
use std::collections::HashMap;

use ltr_trees::{
    BiasLoss, Debias, GainTable, GbdtParams, LabelGain, LambdaMetric, LambdaSettings, LeafCount,
    Objective, PairMethod, PenaltyUnit, PropensityTable, RandomForestParams, TieBreak, TreeParams,
    MAX_ERR_GRADE,
};

use super::start::{read_start, start_model, Start, StartModel};
use crate::spec::{choice, float, int, Allowed, ParamSpec, SpecReader};

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
                "bins per feature at most (every distinct training value its own bin up to this many, else LightGBM's greedy bins: a frequent value gets its own; thresholds midway between neighbouring values; one byte a cell up to 256 bins, two beyond; a NaN gets one more bin whose side each split learns)",
            ),
            ParamSpec::new(
                "min-data-in-bin",
                "3",
                int(1, 1_000_000_000),
                "documents a bin holds at least: rarer values share a bin with their neighbours (LightGBM's min_data_in_bin)",
            ),
            ParamSpec::new(
                "bin-sample-docs",
                "262144",
                int(1, 1_000_000_000_000),
                "documents whose values set the bin bounds, at most (above it, this many spread evenly over the training documents; LightGBM's bin_construct_sample_cnt)",
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

const GBDT_TREE: [ParamSpec; 8] = tree_specs!("31", "20", "1", "1");
const FOREST_TREE: [ParamSpec; 8] = tree_specs!("63", "10", "0.5", "0.63");

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
    ParamSpec::new(
        "min-docs-count",
        "hessian",
        choice(&["documents", "hessian"]),
        "how min-docs-in-leaf counts a split's sides: as LightGBM does, each histogram bin round(its hessian sum · \
         the leaf's documents / the leaf's hessian sum) (under LambdaRank a query of one grade counts for nothing; \
         under MART the two agree), or the documents themselves",
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
    GBDT_TREE[6],
    GBDT_TREE[7],
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
        "lambda-metric",
        "ndcg",
        choice(&["ndcg", "err", "map"]),
        "the measure whose |Δ| of swapping a pair's two documents in the current ranking weights the pair: ndcg \
         (gains from label-gain, normalised by the ideal DCG@ndcg-at), err (Chapelle et al. 2009 over the whole \
         list: a grade g stops with probability (2^g − 1)/2^gmax, gmax the training data's largest label) or map \
         (average precision over the whole list, relevant = label ≥ 1 as the standard convention's MAP)",
    ),
    ParamSpec::new(
        "label-gain",
        "exp",
        Allowed::Text,
        "gain of a label: exp (2^g − 1), linear (g; negative labels 0), or one gain per integer label 0, 1, 2, … \
         separated by colons, e.g. 0:1:3:7:15 (LightGBM's label_gain; colons because commas make a grid); a list \
         has 2 to 32 gains, ≥ 0 and non-decreasing, and a training label it does not cover is an error",
    )
    .when("lambda-metric=ndcg"),
    ParamSpec::new(
        "ndcg-at",
        "0",
        int(0, 1_000_000),
        "k of the ideal DCG@k that normalises each pair's |ΔNDCG|; 0: the truncation level with pair-method=topk \
         (as LightGBM), the whole list with pair-method=mean",
    )
    .when("lambda-metric=ndcg"),
    ParamSpec::new(
        "pair-method",
        "topk",
        choice(&["topk", "mean"]),
        "which pairs contribute: topk (every pair of different labels with a document in the current top \
         `truncation`) or mean (for each document, pairs-per-doc partners of another label drawn at random from \
         --seed, the round and the query; XGBoost's lambdarank_pair_method)",
    ),
    ParamSpec::new(
        "truncation",
        "30",
        int(1, 1_000_000),
        "only pairs with a document in the current top `truncation` contribute",
    )
    .when("pair-method=topk"),
    ParamSpec::new(
        "pairs-per-doc",
        "1",
        int(1, 100_000),
        "partners drawn (with replacement) for each document among those of another label \
         (XGBoost's lambdarank_num_pair_per_sample)",
    )
    .when("pair-method=mean"),
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
        "divide each pair's |Δ| by 0.01 + |s_i − s_j| (as LightGBM's lambdarank_norm)",
    ),
    ParamSpec::new(
        "ties",
        "file-order",
        choice(&["file-order", "seeded-shuffle"]),
        "the order of equal-scored documents in the ranking each pair's |Δ| is read from (all of a query's \
         documents tie in the first round): file-order (as LightGBM; biased where file order follows relevance) or \
         seeded-shuffle (an order drawn for every query and round from --seed: the same model for the same seed at \
         any thread count)",
    ),
    ParamSpec::new(
        "debias",
        "none",
        choice(&["none", "position-factors", "pairwise", "dla", "ips", "dr"]),
        "position debiasing of clicks (ltr train --clicks LOG, or a LightGBM .position file beside the training \
         file): none (clicks read as labels: the naive control), position-factors (a factor per position added \
         to each score while training and learned with the trees by a Newton step a round, as LightGBM's \
         lambdarank_position_bias) or pairwise (Unbiased LambdaMART, Hu et al. 2019: each pair divided by the \
         click bias of the clicked document's position and the non-click bias of the other's, both learned \
         jointly, as XGBoost's lambdarank_unbiased) or dla (the Dual Learning Algorithm, Ai et al. 2018: a \
         propensity per position and the trees learned together, the trees fitting DLA's inverse-propensity \
         weighted softmax loss over each session's clicks instead of LambdaRank's pairs) or ips (known \
         propensities from `propensities`: each pair divided by the propensity of its clicked document's position) \
         or dr (doubly robust, Oosterhuis 2023: not sessions but each logged query's documents labelled by their DR \
         relevance estimates, a shown one's clicks over its expected examination, propensities from the log's \
         column or --propensities; the unshown ones by `dr-unshown`; NDCG with the labels as linear gains, each \
         query weighted by its sessions)",
    ),
    ParamSpec::new(
        "propensities",
        "",
        Allowed::Text,
        "with debias=ips: the propensity table file (`ltr clicks propensity --out`: a header line, then `rank \
         propensity …` lines from rank 1, the form `ltr train --propensities` reads), giving every position the \
         sessions show",
    ),
    ParamSpec::new(
        "position-bias-regularization",
        "1",
        float(0.0, 1e300),
        "L2 penalty on the position factors, weighted by the sessions at each position (LightGBM's \
         lambdarank_position_bias_regularization, which counts rows); their Newton step is scaled by \
         learning-rate, as LightGBM's. Default 1 by a rule over three sets (BENCHMARKS.md, \"Position factors on \
         OHSUMED\"): where each query is always shown one way the unpenalised factors take relevance for position \
         bias (OHSUMED +0.050 NDCG@10 with it), at -0.015 on a generated web fold. At 10^6 sessions it holds the \
         factors near 0 (within 0.03 on OHSUMED), close to the naive model; 0 (LightGBM's default) lets them \
         grow, which gained 0.01-0.06 where queries are many. At 0 the factors are LightGBM's algorithm (a \
         differential test) and level with LightGBM's position bias over four click seeds (MQ2008 eta=2: \
         -0.0005; OHSUMED: +0.022), where 1 is -0.048 and +0.061 (BENCHMARKS.md, \"P1 over four more click \
         seeds\")",
    )
    .when("debias=position-factors"),
    ParamSpec::new(
        "position-bias-regularization-unit",
        "session",
        choice(&["session", "row"]),
        "what position-bias-regularization is multiplied by at each position: session (the sessions shown it, \
         the rows' query weights summed: the same strength at any log size) or row (the rows shown it, each \
         once, as LightGBM counts them: a row of a click session set stands for every session with its pattern, \
         so the penalty weakens as the log grows). Without clicks or query-weights each query weighs 1 and both count rows. session by a rule over three sets \
         and LightGBM (BENCHMARKS.md, The position-factor penalty in LightGBM's units): row 1 and row 10 gained \
         nowhere significantly and lost LightGBM's MQ2008 eta=2 cell as session 1 does (0.4100 and 0.3929)",
    )
    .when("debias=position-factors"),
    ParamSpec::new(
        "bias-norm",
        "1",
        float(0.0, 1e300),
        "p of the exponent 1/(1 + p) of each bias update (XGBoost's lambdarank_bias_norm)",
    )
    .when("debias=pairwise"),
    ParamSpec::new(
        "max-propensity",
        "1",
        float(1.0, 1e300),
        "the most a learned propensity may be relative to the top position's (1: no position is examined more \
         than the first; without a bound, large ranker steps can drive the propensities up without end)",
    )
    .when("debias=dla"),
    ParamSpec::new(
        "bias-loss",
        "reversed",
        choice(&["ranknet", "reversed"]),
        "the pair loss t+ and t- are estimated from: ranknet (log(1 + e^(-σ(s_i - s_j))) of the clicked i over \
         the other j, Hu et al.'s) or reversed (log(1 + e^(σ(s_i - s_j))), the reversed pair's, which XGBoost's \
         lambdarank_unbiased sums; the default, chosen on simulated clicks of MQ2008 and OHSUMED: BENCHMARKS.md, \
         Choosing `bias-loss`). Both assume a position-based user; for users who read on after a click (simulated \
         DCM) ranknet did better, and debias=none as well as ranknet (BENCHMARKS.md, DCM clicks over simulation \
         seeds), both measured at pair-hessian=1; at the default pair-hessian=2 reversed scored above \
         debias=none under DCM on MQ2008 and level with it on OHSUMED (BENCHMARKS.md, Why XGBoost keeps its score \
         under DCM)",
    )
    .when("debias=pairwise"),
    ParamSpec::new(
        "pair-hessian",
        "2",
        float(1e-300, 1e300),
        "each pair's hessian is multiplied by this (2, the default: XGBoost's lambdarank_unbiased, whose pair \
         hessian is 2σ(1 − σ)|Δ| where LightGBM's and plain lambdamart's is σ(1 − σ)|Δ|); at l2 = 0 the same model \
         as learning-rate divided by it (bit for bit for a power of two), unless a leaf's hessian sum lies within \
         this factor of min-hessian-in-leaf. Chosen on simulated clicks (BENCHMARKS.md, Why XGBoost keeps its score \
         under DCM): above 1 under DCM users on OHSUMED and MQ2008, not below it under ULTRA's position-based user \
         there; on generated web data (1,620 training queries, one set) 1 did better by about 0.005 under both \
         users and two click seeds (BENCHMARKS.md, The new pair-hessian default on the generated web set)",
    )
    .when("debias=pairwise"),
    ParamSpec::new(
        "query-weights",
        "",
        Allowed::Text,
        "a file of lines `qid weight` (the qid as the data writes it, with or without `qid:`; weight finite and \
         ≥ 0; blank lines and lines starting with # are skipped): each training query's gradients and hessians are \
         multiplied by its weight (after norm); every training query must be listed, other qids may be",
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
    FOREST_TREE[6],
    FOREST_TREE[7],
];

fn read_tree(r: &SpecReader<'_>, base: TreeParams) -> Result<TreeParams> {
    Ok(TreeParams {
        leaves: r.int("leaves")?,
        max_depth: r.int("max-depth")?,
        min_docs_in_leaf: r.int("min-docs-in-leaf")?,
        max_bin: r.int("max-bin")?,
        min_data_in_bin: r.int("min-data-in-bin")?,
        bin_sample_docs: r.int("bin-sample-docs")?,
        feature_fraction: r.float("feature-fraction")?,
        query_fraction: r.float("query-fraction")?,
        ..base
    })
}

fn read_boost(r: &SpecReader<'_>, objective: Objective, debias: Debias) -> Result<GbdtParams> {
    let tree = read_tree(
        r,
        TreeParams {
            min_hessian_in_leaf: r.float("min-hessian-in-leaf")?,
            leaf_count: match r.choice("min-docs-count")?.as_str() {
                "hessian" => LeafCount::Hessian,
                _ => LeafCount::Documents,
            },
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
        debias,
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

/// `lambdamart` or `mart` with `objective`: from a start model when `init-…` names one, with `lambdamart`'s
/// query weights when `query_weights` names their file; on this rank's shard of the queries, the ranks joined by
/// `comm` (one process: [`SingleProcess`]). Data handed over (`Cow::Owned`) is given to the trees, which free its
/// features once binned.
#[allow(clippy::too_many_arguments)]
fn boost(
    r: &SpecReader<'_>,
    objective: Objective,
    debias: Debias,
    owner: &str,
    train: Cow<'_, Dataset>,
    ctx: &FitContext<'_>,
    query_weights: Option<&str>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let p = read_boost(r, objective, debias)?;
    let start = read_start(r, "init", &[])?;
    // Every setting is checked before a start algorithm trains; zero rounds are allowed from a start model.
    let rounds = if start.is_some() {
        p.trees.max(1)
    } else {
        p.trees
    };
    GbdtParams { trees: rounds, ..p }.validate()?;
    r.finish(owner)?;
    if let Objective::LambdaRank(l) = objective {
        l.check_labels(train.labels())?;
    }
    // A session set's queries stand for their count of identical sessions, the doubly robust set's for their
    // sessions.
    let sessions = (train.positions().is_some() || super::clicks::is_doubly_robust_set(&train))
        .then(|| train.query_weights())
        .flatten()
        .map(<[f64]>::to_vec);
    let weights = match (query_weights, sessions) {
        (Some(_), Some(_)) => {
            return Err(LtrError::param(
                "query-weights",
                "a click set weighs its queries by their session counts already",
            ))
        }
        (Some(file), None) => Some(read_query_weights(file, &train)?),
        (None, sessions) => sessions,
    };
    let init = match start {
        Some(s) => Some(resolve_init(s, owner, &train, ctx, comm)?),
        None => None,
    };
    match &weights {
        Some(w) => ltr_trees::fit_gbdt_ranks(&p, train, &ctx.with_query_weights(w), init, comm),
        None => ltr_trees::fit_gbdt_ranks(&p, train, ctx, init, comm),
    }
}

/// The weight of every query of `train`, in its order, from `file`'s lines `qid weight`. A qid may be written
/// with LETOR's `qid:` prefix; qids the data lacks are allowed (one file can serve every fold).
fn read_query_weights(file: &str, train: &Dataset) -> Result<Vec<f64>> {
    let bad = |problem: String| LtrError::param("query-weights", problem);
    let text = std::fs::read_to_string(file).map_err(|e| bad(format!("{file}: {e}")))?;
    let mut weights: HashMap<&str, (f64, usize)> = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [qid, weight] = fields[..] else {
            return Err(bad(format!(
                "{file}:{n}: expected `qid weight`, got `{line}`"
            )));
        };
        let qid = qid.strip_prefix("qid:").unwrap_or(qid);
        let w = match weight.parse::<f64>() {
            Ok(w) if w.is_finite() && w >= 0.0 => w,
            _ => {
                return Err(bad(format!(
                    "{file}:{n}: the weight `{weight}` of query {qid} is not a finite number ≥ 0"
                )))
            }
        };
        if let Some((_, first)) = weights.insert(qid, (w, n)) {
            return Err(bad(format!(
                "{file}:{n}: query {qid} is listed again (first on line {first})"
            )));
        }
    }
    train
        .qids()
        .iter()
        .map(|q| match weights.get(q.as_str()) {
            Some(&(w, _)) => Ok(w),
            None => Err(bad(format!(
                "{file} has no weight for training query {q} (every training query needs one)"
            ))),
        })
        .collect()
}

/// `label-gain`: `exp`, `linear` or a colon-separated list of gains.
fn parse_label_gain(text: &str) -> Result<LabelGain> {
    match text {
        "exp" => Ok(LabelGain::Exponential),
        "linear" => Ok(LabelGain::Linear),
        list if list.contains(':') => {
            let gains = list
                .split(':')
                .map(|g| {
                    g.trim().parse::<f64>().map_err(|_| {
                        LtrError::param(
                            "label-gain",
                            format!("`{g}` in `{list}` is not a number"),
                        )
                    })
                })
                .collect::<Result<Vec<f64>>>()?;
            Ok(LabelGain::Table(GainTable::new(&gains)?))
        }
        other => Err(LtrError::param(
            "label-gain",
            format!(
                "`{other}` is none of exp, linear or a list of gains per label separated by colons such as \
                 0:1:3:7:15 (colons: a comma makes a grid of settings)"
            ),
        )),
    }
}

/// ERR's gmax: the training data's largest label over every rank (0 when no label is positive).
fn largest_grade(train: &Dataset, comm: &dyn Allreduce) -> Result<f64> {
    let mut largest = [train.labels().iter().fold(0.0f32, |m, &l| m.max(l)) as f64];
    comm.max_nonnegative_f64(&mut largest)?;
    let [largest] = largest;
    if largest > MAX_ERR_GRADE {
        return Err(LtrError::param(
            "lambda-metric",
            format!(
                "err maps grades up to {MAX_ERR_GRADE} to stopping probabilities; the training data has label \
                 {largest}"
            ),
        ));
    }
    Ok(largest)
}

/// `lambdamart`.
pub(crate) fn lambdamart(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    lambdamart_on(r, Cow::Borrowed(train), ctx, &SingleProcess)
}

/// `lambdamart` on this rank's shard of the queries: the one-process model at any number of ranks.
pub(crate) fn lambdamart_distributed(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    lambdamart_on(r, Cow::Borrowed(train), ctx, comm)
}

/// `lambdamart` on data handed over (this rank's shard; all of it on one process): the same model, the features
/// freed once binned.
pub(crate) fn lambdamart_owned(
    r: &SpecReader<'_>,
    train: Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    lambdamart_on(r, Cow::Owned(train), ctx, comm)
}

/// `lambdamart` on borrowed data or data handed over, the ranks joined by `comm`.
fn lambdamart_on(
    r: &SpecReader<'_>,
    train: Cow<'_, Dataset>,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let metric = match r.choice("lambda-metric")?.as_str() {
        "ndcg" => LambdaMetric::Ndcg,
        "err" => LambdaMetric::Err {
            max_grade: largest_grade(&train, comm)?,
        },
        _ => LambdaMetric::Map,
    };
    let doubly_robust = r.choice("debias")? == "dr";
    if doubly_robust {
        super::clicks::check_doubly_robust_set(r, &train, "lambdamart")?;
        if metric != LambdaMetric::Ndcg {
            return Err(LtrError::param(
                "lambda-metric",
                "debias=dr's labels are relevance estimates, which NDCG takes as linear gains; ERR and AP need \
                 grades",
            ));
        }
    } else if super::clicks::is_doubly_robust_set(&train) {
        return Err(LtrError::param(
            "debias",
            "the doubly robust set of a click log (relevance estimates as labels) is for debias=dr",
        ));
    }
    // The gain and its normaliser belong to NDCG: ERR and AP have their own, and name neither. The doubly robust
    // set's labels are estimates of click probabilities, whose DCG is linear in them.
    let (gain, ndcg_at) = if doubly_robust {
        (LabelGain::Linear, r.int("ndcg-at")?)
    } else if metric == LambdaMetric::Ndcg {
        (
            parse_label_gain(&r.text_or_default("label-gain")?.to_ascii_lowercase())?,
            r.int("ndcg-at")?,
        )
    } else {
        (LabelGain::Exponential, 0)
    };
    let pairs = match r.choice("pair-method")?.as_str() {
        "topk" => PairMethod::TopK {
            truncation: r.int("truncation")?,
        },
        _ => PairMethod::Mean {
            pairs_per_doc: r.int("pairs-per-doc")?,
        },
    };
    let lambda = LambdaSettings {
        metric,
        gain,
        ndcg_at,
        pairs,
        sigma: r.float("sigma")?,
        norm: r.flag("norm")?,
        score_gap: r.flag("score-gap")?,
        ties: match r.choice("ties")?.as_str() {
            "file-order" => TieBreak::FileOrder,
            _ => TieBreak::SeededShuffle,
        },
    };
    let table = r.text("propensities")?;
    let debias_name = r.choice("debias")?;
    if table.is_some() && debias_name != "ips" {
        return Err(LtrError::param(
            "propensities",
            "a known propensity table is read only with debias=ips",
        ));
    }
    let debias = match debias_name.as_str() {
        // The doubly robust set is debiased already: LambdaRank on its labels, each query weighted by its sessions.
        "none" | "dr" => Debias::None,
        "position-factors" => Debias::PositionFactors {
            rate: r.float("learning-rate")?,
            regularization: r.float("position-bias-regularization")?,
            unit: match r.choice("position-bias-regularization-unit")?.as_str() {
                "row" => PenaltyUnit::Row,
                _ => PenaltyUnit::Session,
            },
        },
        "dla" => Debias::Dla {
            max_propensity: r.float("max-propensity")?,
        },
        "ips" => Debias::Ips(read_propensities(table.as_deref())?),
        _ => Debias::Pairwise {
            bias_norm: r.float("bias-norm")?,
            loss: match r.choice("bias-loss")?.as_str() {
                "ranknet" => BiasLoss::RankNet,
                _ => BiasLoss::Reversed,
            },
            hessian: r.float("pair-hessian")?,
        },
    };
    let weights = r.text("query-weights")?;
    boost(
        r,
        Objective::LambdaRank(lambda),
        debias,
        "lambdamart",
        train,
        ctx,
        weights.as_deref(),
        comm,
    )
}

/// The propensity table of `debias=ips` (`ltr_clicks::read_propensity_table`: errors name the file and line).
fn read_propensities(file: Option<&str>) -> Result<PropensityTable> {
    let Some(file) = file else {
        return Err(LtrError::param(
            "propensities",
            "debias=ips needs the known propensities: propensities=FILE (a table from `ltr clicks propensity --out`)",
        ));
    };
    let values = ltr_clicks::read_propensity_table(std::path::Path::new(file))?;
    PropensityTable::new(&values)
        .map_err(|e| LtrError::param("propensities", format!("{file}: {e}")))
}

/// `mart`.
pub(crate) fn mart(r: &SpecReader<'_>, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
    mart_on(r, Cow::Borrowed(train), ctx, &SingleProcess)
}

/// `mart` on this rank's shard of the queries: the one-process model at any number of ranks.
pub(crate) fn mart_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    mart_on(r, Cow::Borrowed(shard), ctx, comm)
}

/// `mart` on data handed over (this rank's shard; all of it on one process): the same model, the features freed
/// once binned.
pub(crate) fn mart_owned(
    r: &SpecReader<'_>,
    train: Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    mart_on(r, Cow::Owned(train), ctx, comm)
}

/// `mart` on borrowed data or data handed over, the ranks joined by `comm`.
fn mart_on(
    r: &SpecReader<'_>,
    train: Cow<'_, Dataset>,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    boost(
        r,
        Objective::SquaredError,
        Debias::None,
        "mart",
        train,
        ctx,
        None,
        comm,
    )
}

/// `random-forest`.
pub(crate) fn random_forest(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    random_forest_on(r, Cow::Borrowed(train), ctx, &SingleProcess)
}

/// `random-forest` on this rank's shard of the queries: the one-process forest and out-of-bag estimate at any number
/// of ranks.
pub(crate) fn random_forest_distributed(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    random_forest_on(r, Cow::Borrowed(train), ctx, comm)
}

/// `random-forest` on data handed over (this rank's shard; all of it on one process): the same forest and
/// estimate, the features freed once binned.
pub(crate) fn random_forest_owned(
    r: &SpecReader<'_>,
    train: Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    random_forest_on(r, Cow::Owned(train), ctx, comm)
}

/// `random-forest` on borrowed data or data handed over, the ranks joined by `comm`.
fn random_forest_on(
    r: &SpecReader<'_>,
    train: Cow<'_, Dataset>,
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
