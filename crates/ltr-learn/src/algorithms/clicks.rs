//! Learning from clicks: `propensity-ranksvm` (Joachims, Swaminathan & Schnabel, WSDM 2017) and the click
//! weighting that `lambdarank` and `listnet` read on a click training set (`ltr_clicks::click_training_set`), and
//! their `debias=dla` on click sessions (`ltr_listwise::DlaParams`).

use ltr_core::{Fit, FitContext, Fitted, LtrError, ParamGuard, Result};
use ltr_data::{ClickWeighting, Dataset};
use ltr_listwise::{DlaLoss, DlaParams};
use ltr_svm::{CSetting, Weighting};

/// `propensity-ranksvm`'s default C (the spec's default, as a number).
const DEFAULT_C: f64 = 100.0;

use crate::spec::{choice, float, int, Allowed, ParamSpec, SpecReader};

/// How the queries of a click training set are weighted (every click-aware learner reads these).
pub(crate) const CLICK_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "weighting",
        "ips",
        choice(&["ips", "naive"]),
        "on a click training set (ltr train --clicks): ips weighs each click by 1/propensity of its rank \
         (unbiased under the position-based model); naive counts every click once (the biased control)",
    ),
    ParamSpec::new(
        "clip",
        "0",
        float(0.0, 1.0),
        "propensities below this count as this (weights capped at 1/clip; 0: no clipping, the unbiased estimator \
         of the paper)",
    ),
];

/// `propensity-ranksvm`'s own parameters.
pub(crate) const PROPENSITY_RANKSVM_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "c",
        "100",
        Allowed::CValue,
        "regularisation C of ½‖w‖² + C·Σ_clicks w_click·Σ_pairs loss, the click weights normalised to sum to 1 \
         (SVMrank's C/n: one C fits 10³ and 10⁶ clicks)",
    ),
    ParamSpec::new(
        "solver",
        "newton",
        choice(super::svm::SOLVERS),
        "newton (squared hinge, liblinear's RankSVM objective), or ocas / cutting-plane for the hinge of SVMrank \
         that the paper modified (same quality on our folds, about 10x slower on click sets), dual or gd",
    ),
];

/// The click weighting of a learner that also trains on judged data: `None` when `train` is not a click
/// training set.
pub(crate) fn click_weighting(
    r: &SpecReader<'_>,
    train: &Dataset,
) -> Result<Option<ClickWeighting>> {
    // `clip` is read whatever the weighting, so that a grid over both never trips the unused-parameter check.
    let clip = r.float("clip")?;
    let w = match r.choice("weighting")?.as_str() {
        "naive" => ClickWeighting::Naive,
        _ => ClickWeighting::Ips { clip },
    };
    Ok((train.query_weights().is_some() || train.propensities().is_some()).then_some(w))
}

/// `propensity-ranksvm`: RankSVM on a click training set, each click's pairs (clicked ≻ every other displayed
/// document) weighted by 1/propensity — Propensity SVM-Rank.
pub(crate) fn propensity_ranksvm(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    let clicks = click_weighting(r, train)?.ok_or_else(|| {
        LtrError::Training(
            "propensity-ranksvm trains on clicks: give a click log with `ltr train --clicks LOG --train FEATURES` \
             (the training data has no click weights)"
                .into(),
        )
    })?;
    let name = r.choice("solver")?;
    let s = super::svm::solver_params(r, &name)?
        .c(super::svm::c_setting(r, CSetting::Value(DEFAULT_C))?)
        .weighting(Weighting {
            clicks: Some(clicks),
            ..Weighting::default()
        })
        .check()?;
    r.finish("propensity-ranksvm")?;
    s.fit(train, ctx)
}

/// DLA's cap of the inverse weights.
const MAX_PROPENSITY_WEIGHT: ParamSpec = ParamSpec::new(
    "max-propensity-weight",
    "0",
    float(0.0, 1e300),
    "cap of every inverse-propensity weight of the ranker's clicks and inverse-relevance weight of the propensity \
     tower's (ULTRA's max_propensity_weight; 0: no cap)",
)
.when("debias=dla");

/// DLA's propensity steps an epoch.
const PROPENSITY_STEPS: ParamSpec = ParamSpec::new(
    "propensity-steps",
    "10",
    int(1, 1_000_000),
    "full-batch gradient steps (Armijo step size) of the propensity tower after each epoch's ranker step",
)
.when("debias=dla");

/// The DLA ranker loss documentation.
const DLA_LOSS_DOC: &str = "the ranker's DLA loss: softmax (the paper's: each session's softmax cross-entropy \
                            against its clicks, each weighted by its position's inverse propensity) or lambda \
                            (LambdaRank's pairs of a clicked and an unclicked document, |ΔNDCG@k|-weighted, times \
                            the clicked one's inverse propensity: it ranks, but LambdaRank's scores have no softmax scale, so the \
                            relevance ratios e^(s_top - s_k) the propensity tower is weighted by are off and so are its \
                            propensities); the propensity tower always fits the softmax loss";

/// DLA's ranker loss.
const DLA_LOSS: ParamSpec = ParamSpec::new(
    "dla-loss",
    "softmax",
    choice(&["lambda", "softmax"]),
    DLA_LOSS_DOC,
)
.when("debias=dla");

/// `debias=dr`: the documents no session showed (read by `click_join::click_set`, which builds the set).
pub(crate) const DR_UNSHOWN: ParamSpec = ParamSpec::new(
        "dr-unshown",
        "leave-out",
        choice(&["leave-out", "direct"]),
        "the documents of a logged query that no session showed: leave-out trains on the shown ones (each labelled \
         clicks over expected examination, the estimate restricted to what the log saw; under a production ranker \
         that always shows the same top 10 this is IPS with each document's clicks pooled); direct keeps them, \
         labelled by a logistic regression of clicks on the features (the paper's estimator, unbiased there only \
         when that model is: it lost 0.002–0.015 test NDCG@10 to leave-out on every MQ2008 fold and \
         0.019–0.116 on every OHSUMED fold, BENCHMARKS.md, The doubly robust learner)",
    )
    .when("debias=dr");

/// `debias=dr dr-unshown=direct`: the direct model's steps.
pub(crate) const DR_DIRECT_STEPS: ParamSpec = ParamSpec::new(
        "dr-direct-steps",
        "300",
        int(1, 1_000_000),
        "gradient steps (Armijo step size) of the direct model's logistic regression, on the shown documents' \
         clicks out of their expected examinations, features standardised",
    )
    .when("dr-unshown=direct");

/// `debias=dr`: the clipping threshold of the expected treatment.
pub(crate) const DR_CLIP: ParamSpec = ParamSpec::new(
    "dr-clip",
    "0",
    Allowed::Text,
    "clipping threshold τ of a shown document's expected examination ρ, a number in [0, 1] (0: none) or auto: \
     below it the label is (c̄ + (τ − ρ)·R̂)/τ, the inverse weight capped at 1/τ and the cap's bias filled in by the \
     direct model (with dr-unshown=leave-out, no direct model: c̄/τ, clipped IPS); auto is the paper's code's \
     min(10/√N, 1) for the N sessions of the log, which clips nothing of a top-10 log at 10⁶ sessions (measured: \
     it did not beat 0 at 10⁴ or 10⁵ sessions, BENCHMARKS.md)",
)
.when("debias=dr");

/// `lambdamart`'s settings of the doubly robust set (its `debias` lists `dr`).
pub(crate) const TREE_DR_SPECS: &[ParamSpec] = &[DR_UNSHOWN, DR_DIRECT_STEPS, DR_CLIP];

/// The click debiasing of the linear click learners (`lambdarank`, `listnet`): one query per click, DLA, and the
/// doubly robust set. Under `dla-loss=softmax` DLA's ranker loss is the top-one softmax, ListNet's own.
pub(crate) const LINEAR_DEBIAS_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "debias",
        "none",
        choice(&["none", "dla", "dr"]),
        "on clicks (ltr train --clicks LOG): none learns from one query per click weighted by `weighting` (inverse \
         propensities from the log's column or --propensities, or naive); dla (the Dual Learning Algorithm, Ai et al. \
         2018) learns from the sessions with positions, a propensity per position (a softmax over the positions a \
         session shows) learned with the ranker, each the other's inverse weight in DLA's listwise loss; dr (doubly \
         robust, Oosterhuis 2023) learns from each logged query's documents labelled by their doubly robust \
         relevance estimates (a shown one's clicks over its expected examination, propensities from the log's \
         column or --propensities; the unshown ones by `dr-unshown`), each query weighted by its sessions: \
         lambdarank's ΔNDCG takes the labels as linear gains, listnet's target is the labels over their sum (each \
         query weighted also by that sum, so that the loss is linear in the estimates)",
    ),
    DR_UNSHOWN,
    DR_DIRECT_STEPS,
    DR_CLIP,
    DLA_LOSS,
    MAX_PROPENSITY_WEIGHT,
    PROPENSITY_STEPS,
];

/// `neural`'s click debiasing: DLA with the network as the ranker (its loss is then `listnet-binary`, DLA's softmax
/// loss over the weighted clicks), or the doubly robust set (the same loss, linear in the estimates).
pub(crate) const NEURAL_DEBIAS_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "debias",
        "none",
        choice(&["none", "dla", "dr"]),
        "on clicks (ltr train --clicks LOG): none learns from one query per click weighted by `weighting` (inverse \
         propensities from the log's column or --propensities, or naive); dla (the Dual Learning Algorithm, Ai et al. \
         2018) learns from the sessions with positions a propensity per position with the network: each epoch the \
         network fits DLA's softmax loss, each session's clicks weighted by their positions' inverse propensities \
         (loss=listnet-binary, the loss under dla), then the propensity tower steps against the clicks weighted by \
         the network's inverse relevance; the first epoch is the naive model. It ranks above the naive network on \
         MQ2008, OHSUMED and web, but the wider the network the more of the position effect it takes for relevance: \
         the propensities were 13% off the truth at worst with sizes=none on MQ2008 Fold1, 45% at 256/128 \
         (BENCHMARKS.md, Neural DLA on the same protocol); dr (doubly robust, Oosterhuis 2023) learns from each \
         logged query's documents labelled by their doubly robust relevance estimates (as lambdarank's dr), with \
         loss=listnet-binary (the softmax cross-entropy against the labels over their sum) and each query weighted \
         by its sessions times that sum, so that the loss is linear in the estimates",
    ),
    DR_UNSHOWN,
    DR_DIRECT_STEPS,
    DR_CLIP,
    MAX_PROPENSITY_WEIGHT,
    PROPENSITY_STEPS,
];

/// Whether `debias=dla` is asked of click learner `name`, checked against the form of `train`: DLA needs sessions
/// with positions; `debias=none` refuses them (one query per click is its click set).
pub(crate) fn debias_is_dla(r: &SpecReader<'_>, train: &Dataset, name: &str) -> Result<bool> {
    let dla = r.choice("debias")? == "dla";
    let sessions = train.positions().is_some();
    if dla && !sessions {
        return Err(LtrError::param(
            "debias",
            format!(
                "`{name}` with debias=dla learns from click sessions with positions: train with `ltr train --clicks \
                 LOG` (or a LightGBM .position file beside the training file)"
            ),
        ));
    }
    if !dla && sessions {
        return Err(LtrError::param(
            "algo",
            format!(
                "`{name}` learns from one query per click (ltr train --clicks LOG builds it), not from sessions with \
                 positions, unless debias=dla (which learns the propensities from them)"
            ),
        ));
    }
    Ok(dla)
}

/// `debias` of a linear click learner (`name`), checked against the form of `train` ([`debias_is_dla`]): `Some`
/// DLA's own settings (the ranker's are the caller's to add) under `debias=dla`, `None` under `debias=none`.
pub(crate) fn dla_settings(
    r: &SpecReader<'_>,
    train: &Dataset,
    name: &str,
) -> Result<Option<DlaParams>> {
    if !debias_is_dla(r, train, name)? {
        return Ok(None);
    }
    Ok(Some(
        DlaParams::default()
            .loss(match r.choice("dla-loss")?.as_str() {
                "lambda" => DlaLoss::Lambda,
                _ => DlaLoss::Softmax,
            })
            .max_weight(r.float("max-propensity-weight")?)
            .propensity_steps(r.int("propensity-steps")?),
    ))
}

/// Whether `train` has the form of the doubly robust set (`ltr_clicks::doubly_robust_set`): query weights (the
/// sessions), no propensities, no positions.
pub(crate) fn is_doubly_robust_set(train: &Dataset) -> bool {
    train.query_weights().is_some() && train.propensities().is_none() && train.positions().is_none()
}

/// What every learner with `debias=dr` (`lambdarank`, `listnet`, `neural`, `lambdamart`) checks: the data must be
/// the doubly robust set (a click log joined by `ltr train --clicks LOG`). The set's own settings were applied when
/// the job built it (`click_join::click_set`); they are read again here so that none counts as unused.
pub(crate) fn check_doubly_robust_set(
    r: &SpecReader<'_>,
    train: &Dataset,
    name: &str,
) -> Result<()> {
    if !is_doubly_robust_set(train) {
        return Err(LtrError::param(
            "debias",
            format!(
                "`{name}` with debias=dr learns from the doubly robust set of a click log: train with `ltr train \
                 --clicks LOG` (the training data is not that set: judged labels, one query per click or sessions \
                 with positions)"
            ),
        ));
    }
    if r.choice("dr-unshown")? == "direct" {
        r.int("dr-direct-steps")?;
    }
    dr_clip(r)?;
    Ok(())
}

/// `dr-clip`: `auto` or a number in [0, 1].
pub(crate) fn dr_clip(r: &SpecReader<'_>) -> Result<ltr_clicks::ClipThreshold> {
    let v = r.text_or_default("dr-clip")?;
    ltr_clicks::ClipThreshold::parse(&v).map_err(|e| LtrError::param("dr-clip", e))
}

/// `debias=dr`'s checks for the linear and neural click learner `name`: [`check_doubly_robust_set`], and its naive
/// control is another setting. The learner then weighs each query by its sessions.
pub(crate) fn check_doubly_robust(r: &SpecReader<'_>, train: &Dataset, name: &str) -> Result<()> {
    check_doubly_robust_set(r, train, name)?;
    // Read whatever the weighting, as `click_weighting` does: a grid over both never trips the unused check.
    let _ = r.float("clip")?;
    if r.choice("weighting")? == "naive" {
        return Err(LtrError::param(
            "weighting",
            "debias=dr weighs each query by its sessions and each label is already corrected for position: its \
             naive control is debias=none weighting=naive",
        ));
    }
    Ok(())
}
