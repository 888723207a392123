//! Learning from clicks: `propensity-ranksvm` (Joachims, Swaminathan & Schnabel, WSDM 2017) and the click
//! weighting that `lambdarank` and `listnet` read on a click training set (`ltr_clicks::click_training_set`).

use ltr_core::{Fit, FitContext, Fitted, LtrError, ParamGuard, Result};
use ltr_data::{ClickWeighting, Dataset};
use ltr_svm::{CSetting, Weighting};

/// `propensity-ranksvm`'s default C (the spec's default, as a number).
const DEFAULT_C: f64 = 100.0;

use crate::spec::{choice, float, Allowed, ParamSpec, SpecReader};

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
