//! The registry of algorithms `ltr train --algo NAME` knows: name → paper, parameters, training function.

use std::collections::BTreeMap;

use ltr_core::{Model, Params, Result};
use ltr_data::Dataset;
use ltr_metrics::{Convention, Metric};

/// Everything a training function may use.
#[derive(Debug)]
pub struct TrainContext<'a> {
    /// Training data.
    pub train: &'a Dataset,
    /// Validation data (for epochs, member weights, rounds, λ …), if given.
    pub validation: Option<&'a Dataset>,
    /// The validation metric.
    pub metric: Metric,
    /// The validation convention.
    pub convention: Convention,
    /// Seed.
    pub seed: u64,
}

/// A trained model with what the learner wants recorded.
#[derive(Debug)]
pub struct Trained {
    /// The scoring function.
    pub model: Model,
    /// Choices made during training (chosen epochs, C, …), recorded with the parameters.
    pub chosen: BTreeMap<String, String>,
    /// Algorithm-specific diagnostics (JSON), shown by `ltr inspect`.
    pub diagnostics: Option<serde_json::Value>,
}

impl Trained {
    fn linear(w: ltr_core::LinearModel) -> Self {
        Self { model: Model::Linear(w), chosen: BTreeMap::new(), diagnostics: None }
    }
}

/// One registered algorithm.
#[derive(Debug)]
pub struct Algorithm {
    /// Name for `--algo`.
    pub name: &'static str,
    /// Source paper or role.
    pub source: &'static str,
    /// Parameters and defaults.
    pub params: &'static str,
    /// Train.
    pub train: fn(&TrainContext<'_>, &Params) -> Result<Trained>,
}

/// All algorithms.
pub const ALGORITHMS: &[Algorithm] = &[
    Algorithm {
        name: "ranksvm",
        source: "Herbrich et al. 2000; Joachims 2002 (baseline of every seed)",
        params: "c=1|default (SVMlight 1/mean‖x‖²), solver=newton|dual|gd, loss=squared-hinge|hinge, step=backtracking|fixed, eta, tol, max-iter, pairs=all|adjacent",
        train: |ctx, p| {
            let s = ltr_svm::RankSvmParams::from_params(p, ctx.seed)?;
            p.finish("ranksvm")?;
            let fit = s.fit(ctx.train)?;
            let mut t = Trained::linear(fit.model);
            t.chosen.insert("objective".into(), format!("{:.6}", fit.report.objective));
            t.chosen.insert("iterations".into(), fit.report.iterations.to_string());
            Ok(t)
        },
    },
    Algorithm {
        name: "rsvm-ir",
        source: "Cao et al. 2006, Adapting Ranking SVM to Document Retrieval (seed 004)",
        params: "variant=qp|gd|rank|query, tau=closed|simulated, tau-repeats=1000, missing-grade=zero|skip, c=1|default, solver=dual|gd|newton, loss, step, eta, tol, max-iter",
        train: |ctx, p| {
            let s = ltr_svm::RankSvmParams::rsvm_ir_from_params(p, ctx.seed)?;
            p.finish("rsvm-ir")?;
            let fit = s.fit(ctx.train)?;
            let mut t = Trained::linear(fit.model);
            t.chosen.insert("objective".into(), format!("{:.6}", fit.report.objective));
            if let Some(g) = fit.report.duality_gap {
                t.chosen.insert("duality-gap".into(), format!("{g:.3e}"));
            }
            Ok(t)
        },
    },
    Algorithm {
        name: "perceptron",
        source: "Elsas, Carvalho, Carbonell 2008 (seed 000): pairwise perceptron, eta_q = 1/|S_q|",
        params: "output=pocket|last|average|voted, vote-from=0, epochs=50, select-epochs=true (needs --validate), alpha-bound=0.85 (0 = off), alpha-rule=epoch|planned, step=query|global, rate=1, shuffle=true",
        train: |ctx, p| perceptron(ctx, p, false),
    },
    Algorithm {
        name: "committee-perceptron",
        source: "Elsas, Carvalho, Carbonell 2008 (seed 000): the committee perceptron",
        params: "committee=30, combine=average|borda, member-metric=validation|success|uniform, member-transform=raw|power|softmax, member-power=2, member-temperature=0.01, normalize-members=false, offer-final=true, epochs=50, select-epochs=true, alpha-bound=0.85, alpha-rule=epoch|planned, step=query|global, rate, shuffle=true",
        train: |ctx, p| perceptron(ctx, p, true),
    },
];

fn perceptron(ctx: &TrainContext<'_>, p: &Params, committee: bool) -> Result<Trained> {
    let s = ltr_perceptron::PerceptronParams::from_params(p, committee, ctx.seed, ctx.metric, ctx.convention)?;
    p.finish(if committee { "committee-perceptron" } else { "perceptron" })?;
    let fit = s.fit(ctx.train, ctx.validation)?;
    let mut chosen = BTreeMap::new();
    chosen.insert("epochs-used".into(), fit.epochs_used.to_string());
    let curve: Vec<serde_json::Value> = fit
        .curve
        .iter()
        .map(|r| serde_json::json!({"epoch": r.epoch, "mistakes": r.stats.mistakes, "active_pairs": r.stats.active_pairs, "validation": if r.validation.is_finite() { serde_json::json!(r.validation) } else { serde_json::Value::Null }}))
        .collect();
    Ok(Trained { model: fit.model, chosen, diagnostics: Some(serde_json::json!({"pairs": fit.pairs, "curve": curve})) })
}

/// Find an algorithm by name.
pub fn find(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.name.eq_ignore_ascii_case(name))
}

/// Print the registry.
pub fn print_algorithms() {
    for a in ALGORITHMS {
        println!("{}\n  source: {}\n  params: {}\n", a.name, a.source, a.params);
    }
}
