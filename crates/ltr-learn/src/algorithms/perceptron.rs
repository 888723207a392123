//! `perceptron` and `committee-perceptron` (seed 000): parameters → [`PerceptronParams`].

use ltr_core::{Allreduce, Fit, FitContext, FitDistributed, Fitted, ParamGuard, Result};
use ltr_data::Dataset;
use ltr_perceptron::{
    AlphaBound, Combine, CommitteeParams, LoopSettings, MemberWeight, Output, PairOrder,
    PerceptronParams, PerceptronValidParams, StepSize, Transform,
};

use crate::spec::{choice, float, int, Allowed, ParamSpec, SpecReader};

/// The loop's parameters, shared by both perceptron algorithms.
pub(crate) const LOOP_SPECS: &[ParamSpec] = &[
    ParamSpec::new("epochs", "50", int(1, 1_000_000), "T_max, epochs to run"),
    ParamSpec::new(
        "select-epochs",
        "true",
        Allowed::Bool,
        "choose T ≤ T_max on --validate",
    ),
    ParamSpec::new(
        "alpha-bound",
        "0.85",
        float(0.0, 1.0),
        "α-bound: drop pairs misclassified in more than this share of epochs (0 = off)",
    ),
    ParamSpec::new(
        "alpha-rule",
        "epoch",
        choice(&["epoch", "planned"]),
        "α-bound per epoch so far (the paper's prose) or of the planned epochs",
    ),
    ParamSpec::new(
        "step",
        "query",
        choice(&["query", "global"]),
        "η_q = 1/|S_q| per query, or one global rate",
    ),
    ParamSpec::new(
        "rate",
        "1",
        float(1e-300, 1e300),
        "the global learning rate",
    )
    .when("step=global"),
    ParamSpec::new(
        "shuffle",
        "true",
        Allowed::Bool,
        "visit pairs in a seeded shuffled order (false: file order)",
    ),
    ParamSpec::new(
        "stream-pairs",
        "auto",
        choice(&["auto", "true", "false"]),
        "visit the pairs in a seeded order computed pair by pair instead of shuffling stored records \
         (2 bytes a pair instead of 28; another order, so another model); auto: above 2^25 pairs",
    )
    .when("shuffle=true"),
];

/// `perceptron`'s own parameters.
pub(crate) const PERCEPTRON_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "output",
        "pocket",
        choice(&["last", "pocket", "average", "voted"]),
        "which hypothesis the run returns",
    ),
    ParamSpec::new(
        "vote-from",
        "0",
        int(0, u64::MAX),
        "first hypothesis allowed to vote (0: the voted perceptron)",
    )
    .when("output=voted"),
];

/// `committee-perceptron`'s own parameters.
pub(crate) const COMMITTEE_SPECS: &[ParamSpec] = &[
    ParamSpec::new(
        "committee",
        "30",
        int(1, 1_000_000),
        "N_com, the committee size",
    ),
    ParamSpec::new(
        "combine",
        "average",
        choice(&["average", "borda"]),
        "weighted averaging (A) or weighted BordaFuse (B)",
    ),
    ParamSpec::new(
        "member-metric",
        "validation",
        choice(&["validation", "success", "uniform"]),
        "member weights: validation measure, success count, or equal",
    ),
    ParamSpec::new(
        "member-transform",
        "raw",
        choice(&["raw", "power", "softmax"]),
        "transform of a member's validation measure a_k",
    )
    .when("member-metric=validation"),
    ParamSpec::new("member-power", "2", float(-1e6, 1e6), "p of a_k^p")
        .when("member-transform=power"),
    ParamSpec::new(
        "member-temperature",
        "0.01",
        float(1e-12, 1e12),
        "T of exp(a_k / T)",
    )
    .when("member-transform=softmax"),
    ParamSpec::new(
        "normalize-members",
        "false",
        Allowed::Bool,
        "unit-normalise members before averaging",
    )
    .when("combine=average"),
    ParamSpec::new(
        "offer-final",
        "true",
        Allowed::Bool,
        "offer the final hypothesis to the committee at the end",
    ),
];

fn loop_settings(r: &SpecReader<'_>, seed: u64) -> Result<(usize, LoopSettings)> {
    let epochs = r.int("epochs")?;
    let alpha = r.float("alpha-bound")?;
    let alpha_bound = match (alpha, r.choice("alpha-rule")?.as_str()) {
        (0.0, _) => AlphaBound::Off,
        (a, "planned") => AlphaBound::Planned(a),
        (a, _) => AlphaBound::PerEpoch(a),
    };
    let step = match r.choice("step")?.as_str() {
        "global" => StepSize::Global(r.float("rate")?),
        _ => StepSize::PerQuery,
    };
    let order = if r.flag("shuffle")? {
        match r.choice("stream-pairs")?.as_str() {
            "true" => PairOrder::Streamed(seed),
            "false" => PairOrder::Shuffled(seed),
            _ => PairOrder::Auto(seed),
        }
    } else {
        PairOrder::File
    };
    Ok((
        epochs,
        LoopSettings {
            step,
            order,
            alpha_bound,
            init: None,
            pairs: ltr_pairs::PairScheme::AllDifferent,
        },
    ))
}

fn committee_output(r: &SpecReader<'_>) -> Result<Output> {
    let weight = match r.choice("member-metric")?.as_str() {
        "success" => MemberWeight::Success,
        "uniform" => MemberWeight::Uniform,
        _ => MemberWeight::Validation(match r.choice("member-transform")?.as_str() {
            "power" => Transform::Power(r.float("member-power")?),
            "softmax" => Transform::Softmax(r.float("member-temperature")?),
            _ => Transform::Raw,
        }),
    };
    let combine = match r.choice("combine")?.as_str() {
        "borda" => Combine::Borda,
        _ => Combine::Average {
            normalize_members: r.flag("normalize-members")?,
        },
    };
    Ok(Output::Committee(CommitteeParams {
        size: r.int("committee")?,
        offer_final: r.flag("offer-final")?,
        weight,
        combine,
    }))
}

fn single_output(r: &SpecReader<'_>) -> Result<Output> {
    Ok(match r.choice("output")?.as_str() {
        "last" => Output::Last,
        "average" => Output::Average,
        "voted" => Output::Voted {
            from: r.int("vote-from")?,
        },
        _ => Output::Pocket,
    })
}

/// The perceptron's parameters (`committee` selects the committee perceptron's output parameters).
pub(crate) fn perceptron_params(
    r: &SpecReader<'_>,
    committee: bool,
    seed: u64,
) -> Result<PerceptronValidParams> {
    let (epochs, settings) = loop_settings(r, seed)?;
    let output = if committee {
        committee_output(r)?
    } else {
        single_output(r)?
    };
    PerceptronParams::default()
        .epochs(epochs)
        .select_epochs(r.flag("select-epochs")?)
        .settings(settings)
        .output(output)
        .check()
}

/// `perceptron`.
pub(crate) fn perceptron(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    let s = perceptron_params(r, false, ctx.seed())?;
    r.finish("perceptron")?;
    s.fit(train, ctx)
}

/// `perceptron` on this rank's shard: iterative parameter mixing after every epoch.
pub(crate) fn perceptron_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let s = perceptron_params(r, false, ctx.seed())?;
    r.finish("perceptron")?;
    s.fit_distributed(shard, ctx, comm)
}

/// `committee-perceptron`.
pub(crate) fn committee(
    r: &SpecReader<'_>,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<Fitted> {
    let s = perceptron_params(r, true, ctx.seed())?;
    r.finish("committee-perceptron")?;
    s.fit(train, ctx)
}

/// `committee-perceptron` on this rank's shard: iterative parameter mixing, the committee drawn from the mixtures.
pub(crate) fn committee_distributed(
    r: &SpecReader<'_>,
    shard: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let s = perceptron_params(r, true, ctx.seed())?;
    r.finish("committee-perceptron")?;
    s.fit_distributed(shard, ctx, comm)
}
