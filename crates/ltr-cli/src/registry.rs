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
        Self {
            model: Model::Linear(w),
            chosen: BTreeMap::new(),
            diagnostics: None,
        }
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
        params: "c=1|default (SVMlight 1/mean‖x‖²), solver=newton|dual|gd|cutting-plane, loss=squared-hinge|hinge, step=backtracking|fixed, eta, tol, max-iter, pairs=all|adjacent",
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
        params: "variant=qp|gd|rank|query, tau=closed|simulated, tau-repeats=1000, missing-grade=zero|skip, c=1|default, solver=cutting-plane|dual|gd|newton (default cutting-plane; gd for variant=gd), loss, step, eta, tol (cutting-plane: relative duality gap, default 1e-5), max-iter",
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
    Algorithm {
        name: "mhr",
        source: "Qin et al. 2007, Ranking with Multiple Hyperplanes (seed 001)",
        params: "pairs=all|adjacent|S-T;S-T, aggregate=borda|wborda|median|markov, tune-on=train|validation, grid-step=0.05, base=ranksvm|ranksvm-hinge, c=default|number, diagnostics=true",
        train: mhr,
    },
    Algorithm {
        name: "sigmoid",
        source: "Carvalho, Elsas, Cohen, Carbonell 2008, sigmoid meta-ranker (seed 003)",
        params: "seed-algo=NAME (any algorithm here; its params as seed-KEY=V) | seed-model=FILE | seed-init=zero|random, sigma=1, lambda (default: chosen on --validate from 1/(2C), C in 1e-5..1e1), eta=0.05, step-scale=per-pair|absolute (η on the mean or the summed pair gradient), tol=1e-8, max-iter=500",
        train: sigmoid,
    },
    Algorithm {
        name: "rankboost",
        source: "Freund, Iyer, Schapire, Singer 2003 (baseline of seeds 000 and 003)",
        params: "rounds=300, thresholds=10 (0 = every distinct value), select-rounds=true (needs --validate)",
        train: |ctx, p| {
            let s = ltr_ensemble::RankBoostParams {
                rounds: p.int_in("rounds", 300, 1, 1_000_000)?,
                thresholds: p.int_in("thresholds", 10, 0, 1_000_000)?,
                select_rounds: p.flag("select-rounds", true)?,
                metric: ctx.metric,
                convention: ctx.convention,
            };
            p.finish("rankboost")?;
            let fit = s.fit(ctx.train, ctx.validation)?;
            let mut chosen = BTreeMap::new();
            chosen.insert("rounds-used".into(), fit.rounds_used.to_string());
            Ok(Trained { model: Model::Stumps(fit.model), chosen, diagnostics: Some(serde_json::json!({"validation_curve": fit.validation_curve})) })
        },
    },
    Algorithm {
        name: "slam-perceptron",
        source: "Chaudhuri & Tewari 2015, Algorithm 1 (seed 002): online SLAM perceptron, the file replayed as a stream",
        params: "measure=ndcg|ap, k=10 (mistake test NDCG@k), margin=scaled|constant, delta=1, tie-average=true, eta=inv-sqrt|constant, eta0=1, ties=reverse|input, violators=worst|mean (mean: extension, not the paper), passes=1, keep=1 (per-pass keep probability)",
        train: |ctx, p| online(ctx, p, "slam-perceptron"),
    },
    Algorithm {
        name: "pure-online",
        source: "Chaudhuri & Tewari 2015, Algorithm 2 (seed 002): most-violated pair, step scaled by the measure loss",
        params: "measure=ndcg|ap, k=10, eta=constant|inv-sqrt, eta0=1, ties=reverse|input, passes=1, keep=1",
        train: |ctx, p| online(ctx, p, "pure-online"),
    },
    Algorithm {
        name: "online-listnet",
        source: "top-one ListNet updated every round (seed 002's baseline)",
        params: "eta=inv-sqrt|constant, eta0=1, passes=1, keep=1",
        train: |ctx, p| online(ctx, p, "online-listnet"),
    },
    Algorithm {
        name: "listnet",
        source: "Cao et al. 2007, batch top-one ListNet (baseline of seed 003; sigmoid seed)",
        params: "epochs=100, learning-rate=0.1, select-epochs=true (needs --validate), shuffle=true",
        train: |ctx, p| {
            let s = ltr_online::ListNetParams {
                epochs: p.int_in("epochs", 100, 1, 10_000_000)?,
                learning_rate: p.float_in("learning-rate", 0.1, 1e-300, 1e300)?,
                select_epochs: p.flag("select-epochs", true)?,
                shuffle: p.flag("shuffle", true)?.then_some(ctx.seed),
                metric: ctx.metric,
                convention: ctx.convention,
            };
            p.finish("listnet")?;
            let fit = s.fit(ctx.train, ctx.validation)?;
            let mut chosen = BTreeMap::new();
            chosen.insert("epochs-used".into(), fit.epochs_used.to_string());
            Ok(Trained { model: Model::Linear(fit.model), chosen, diagnostics: Some(serde_json::json!({"validation_curve": fit.curve})) })
        },
    },
];

fn online(ctx: &TrainContext<'_>, p: &Params, name: &str) -> Result<Trained> {
    use ltr_online::*;
    let d = ctx.train.n_features();
    let eta0 = p.float_in("eta0", 1.0, 1e-300, 1e300)?;
    let default_eta = if name == "pure-online" {
        "constant"
    } else {
        "inv-sqrt"
    };
    let eta = match p
        .choice("eta", default_eta, &["inv-sqrt", "constant"])?
        .as_str()
    {
        "constant" => Eta::Constant(eta0),
        _ => Eta::InvSqrt(eta0),
    };
    let ties = if name == "online-listnet" {
        PredictTies::ReverseInput
    } else {
        match p.choice("ties", "reverse", &["reverse", "input"])?.as_str() {
            "input" => PredictTies::InputOrder,
            _ => PredictTies::ReverseInput,
        }
    };
    let mut learner: Box<dyn OnlineRanker> = match name {
        "slam-perceptron" | "pure-online" => {
            let k = p.int_in("k", 10, 1, 1_000_000)?;
            let ap = p.choice("measure", "ndcg", &["ndcg", "ap"])? == "ap";
            let rml_m = if ap { Rml::Ap } else { Rml::Ndcg(k) };
            if name == "pure-online" {
                Box::new(PureOnline {
                    w: vec![0.0; d],
                    rml: rml_m,
                    eta,
                    ties,
                })
            } else {
                let delta = p.float_in("delta", 1.0, 0.0, 1e12)?;
                let margin = match p
                    .choice("margin", "scaled", &["scaled", "constant"])?
                    .as_str()
                {
                    "constant" => Margin::Constant(delta),
                    _ => Margin::RelevanceScaled(delta),
                };
                Box::new(SlamPerceptron {
                    w: vec![0.0; d],
                    rml: rml_m,
                    surrogate: if ap { Measure::Ap } else { Measure::Ndcg },
                    tie_average: p.flag("tie-average", true)?,
                    margin,
                    eta,
                    ties,
                    violators: match p.choice("violators", "worst", &["worst", "mean"])?.as_str() {
                        "mean" => Violators::Mean,
                        _ => Violators::Worst,
                    },
                    updates: 0,
                })
            }
        }
        _ => Box::new(OnlineListNet {
            w: vec![0.0; d],
            eta,
        }),
    };
    let cfg = StreamConfig {
        passes: p.int_in("passes", 1, 1, 1_000_000)?,
        keep_probability: p.float_in("keep", 1.0, 0.0, 1.0)?,
        seed: ctx.seed,
        k: 10,
        ties,
    };
    p.finish(name)?;
    let res = replay(learner.as_mut(), &[ctx.train], &cfg);
    let mut chosen = BTreeMap::new();
    let last = res.average_cumulative.last().copied().unwrap_or(0.0);
    chosen.insert("rounds".into(), res.per_round.len().to_string());
    chosen.insert("average-cumulative-ndcg10".into(), format!("{last:.6}"));
    let step = (res.average_cumulative.len() / 200).max(1);
    let curve: Vec<f64> = res
        .average_cumulative
        .iter()
        .step_by(step)
        .copied()
        .collect();
    Ok(Trained {
        model: Model::Linear(ltr_core::LinearModel::new(learner.weights().to_vec())),
        chosen,
        diagnostics: Some(
            serde_json::json!({"average_cumulative_ndcg10_every": step, "curve": curve}),
        ),
    })
}

fn mhr(ctx: &TrainContext<'_>, p: &Params) -> Result<Trained> {
    use ltr_ensemble::{GradePairs, MhrParams, TuneOn};
    let pairs = match p
        .get::<String>("pairs", "all".into())?
        .to_ascii_lowercase()
        .as_str()
    {
        "all" => GradePairs::All,
        "adjacent" => GradePairs::Adjacent,
        list => {
            let mut v = Vec::new();
            for part in list.split(';').filter(|s| !s.is_empty()) {
                let (a, b) = part.split_once('-').ok_or_else(|| {
                    ltr_core::LtrError::param("pairs", format!("`{part}`: expected S-T (e.g. 2-1)"))
                })?;
                let a: f32 = a.trim().parse().map_err(|_| {
                    ltr_core::LtrError::param("pairs", format!("`{a}` is not a grade"))
                })?;
                let b: f32 = b.trim().parse().map_err(|_| {
                    ltr_core::LtrError::param("pairs", format!("`{b}` is not a grade"))
                })?;
                v.push((a, b));
            }
            GradePairs::Subset(v)
        }
    };
    let aggregate = p.choice(
        "aggregate",
        "borda",
        &["borda", "wborda", "median", "markov"],
    )?;
    let weighted = aggregate == "wborda" || p.flag("weighted", false)?;
    let aggregation = ltr_core::Aggregation::parse(&aggregate).expect("listed choices parse");
    let mut base = match p
        .choice("base", "ranksvm", &["ranksvm", "ranksvm-hinge"])?
        .as_str()
    {
        "ranksvm-hinge" => ltr_svm::RankSvmParams::default()
            .loss(ltr_pairs::PairLoss::Hinge)
            .solver(ltr_svm::Solver::CuttingPlane),
        _ => ltr_svm::RankSvmParams::default(),
    };
    base.c = match p.get::<String>("c", "default".into())?.as_str() {
        "default" | "svmlight" => ltr_svm::CSetting::SvmLightDefault,
        v => ltr_svm::CSetting::Value(v.parse().map_err(|_| {
            ltr_core::LtrError::param("c", format!("`{v}` is not a number or `default`"))
        })?),
    };
    base.seed = ctx.seed;
    let s = MhrParams {
        pairs,
        base: ltr_ensemble::mhr::BaseLearner::RankSvm(base),
        aggregation,
        weighted,
        tune_on: if p.choice("tune-on", "train", &["train", "validation"])? == "validation" {
            TuneOn::Validation
        } else {
            TuneOn::Train
        },
        grid_step: p.float_in("grid-step", 0.05, 1e-3, 1.0)?,
        metric: ctx.metric,
        convention: ctx.convention,
        diagnostics: p.flag("diagnostics", true)?,
    };
    p.finish("mhr")?;
    let fit = s.fit(ctx.train, ctx.validation)?;
    let diagnostics = serde_json::to_value(&fit.diagnostics).ok();
    Ok(Trained {
        model: Model::Aggregate(fit.model),
        chosen: BTreeMap::new(),
        diagnostics,
    })
}

fn sigmoid(ctx: &TrainContext<'_>, p: &Params) -> Result<Trained> {
    let mut chosen = BTreeMap::new();
    // The seed model: a file, another algorithm of the registry, or a fixed start.
    let seed_w: Vec<f64> = if let Some(path) = p.opt::<String>("seed-model")? {
        let mf = ltr_core::ModelFile::load(std::path::Path::new(&path))?;
        match mf.model {
            Model::Linear(l) if l.weights.len() <= ctx.train.n_features() => {
                let mut w = l.weights;
                w.resize(ctx.train.n_features(), 0.0);
                w
            }
            Model::Linear(_) => {
                return Err(ltr_core::LtrError::Shape(format!(
                    "{path}: the seed model has more features than the training data"
                )))
            }
            _ => {
                return Err(ltr_core::LtrError::param(
                    "seed-model",
                    format!("{path} is not a linear model"),
                ))
            }
        }
    } else if let Some(algo) = p.opt::<String>("seed-algo")? {
        let a = find(&algo).ok_or_else(|| {
            ltr_core::LtrError::param("seed-algo", format!("unknown algorithm `{algo}`"))
        })?;
        if a.name == "sigmoid" {
            return Err(ltr_core::LtrError::param(
                "seed-algo",
                "the sigmoid cannot seed itself",
            ));
        }
        let keys: Vec<String> = p
            .as_map()
            .keys()
            .filter(|k| {
                k.starts_with("seed-")
                    && *k != "seed-algo"
                    && *k != "seed-model"
                    && *k != "seed-init"
            })
            .cloned()
            .collect();
        let mut sub = Vec::new();
        for k in keys {
            let v: String = p.opt(&k)?.unwrap_or_default();
            sub.push((k["seed-".len()..].to_string(), v));
        }
        let sub = Params::new(sub);
        let t = (a.train)(ctx, &sub)?;
        chosen.insert("seed-algo".into(), a.name.to_string());
        match t.model {
            Model::Linear(l) => l.weights,
            _ => {
                return Err(ltr_core::LtrError::param(
                    "seed-algo",
                    format!("`{}` does not produce a linear model", a.name),
                ))
            }
        }
    } else {
        match p
            .choice("seed-init", "random", &["zero", "random"])?
            .as_str()
        {
            "zero" => vec![0.0; ctx.train.n_features()],
            _ => {
                use rand::{Rng, SeedableRng};
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(ctx.seed);
                (0..ctx.train.n_features())
                    .map(|_| rng.random::<f64>() - 0.5)
                    .collect()
            }
        }
    };
    let base = ltr_ensemble::SigmoidParams {
        sigma: p.float_in("sigma", 1.0, 1e-12, 1e12)?,
        lambda: 0.0,
        eta: p.float_in("eta", 0.05, 1e-300, 1e300)?,
        tol: p.float_in("tol", 1e-8, 1e-300, 1.0)?,
        max_iter: p.int_in("max-iter", 500, 1, 100_000_000)?,
        min_eta: 1e-20,
        per_pair_step: p.choice("step-scale", "per-pair", &["per-pair", "absolute"])? == "per-pair",
    };
    let lambda: Option<f64> = p.opt("lambda")?;
    p.finish("sigmoid")?;
    let candidates: Vec<f64> = match (lambda, ctx.validation) {
        (Some(l), _) => vec![l],
        (None, Some(_)) => [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]
            .iter()
            .map(|c| 1.0 / (2.0 * c))
            .collect(),
        (None, None) => vec![1e-3],
    };
    let mut best: Option<(f64, f64, ltr_ensemble::SigmoidFit)> = None;
    for l in candidates {
        let fit = ltr_ensemble::SigmoidParams {
            lambda: l,
            ..base.clone()
        }
        .fit(ctx.train, &seed_w)?;
        let v = match ctx.validation {
            Some(v) => ltr_metrics::evaluate_mean(
                v,
                &v.scores(&fit.model.weights),
                ctx.metric,
                &ctx.convention,
            )
            .map_err(|e| ltr_core::LtrError::Training(e.to_string()))?,
            None => 0.0,
        };
        if best.as_ref().is_none_or(|b| v > b.0) {
            best = Some((v, l, fit));
        }
    }
    let (_, l, fit) = best.expect("at least one candidate");
    chosen.insert("lambda".into(), l.to_string());
    chosen.insert("iterations".into(), (fit.trace.len() - 1).to_string());
    let diagnostics = serde_json::json!({"trace": fit.trace});
    Ok(Trained {
        model: Model::Linear(fit.model),
        chosen,
        diagnostics: Some(diagnostics),
    })
}

fn perceptron(ctx: &TrainContext<'_>, p: &Params, committee: bool) -> Result<Trained> {
    let s = ltr_perceptron::PerceptronParams::from_params(
        p,
        committee,
        ctx.seed,
        ctx.metric,
        ctx.convention,
    )?;
    p.finish(if committee {
        "committee-perceptron"
    } else {
        "perceptron"
    })?;
    let fit = s.fit(ctx.train, ctx.validation)?;
    let mut chosen = BTreeMap::new();
    chosen.insert("epochs-used".into(), fit.epochs_used.to_string());
    let curve: Vec<serde_json::Value> = fit
        .curve
        .iter()
        .map(|r| serde_json::json!({"epoch": r.epoch, "mistakes": r.stats.mistakes, "active_pairs": r.stats.active_pairs, "validation": if r.validation.is_finite() { serde_json::json!(r.validation) } else { serde_json::Value::Null }}))
        .collect();
    Ok(Trained {
        model: fit.model,
        chosen,
        diagnostics: Some(serde_json::json!({"pairs": fit.pairs, "curve": curve})),
    })
}

/// Find an algorithm by name.
pub fn find(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS
        .iter()
        .find(|a| a.name.eq_ignore_ascii_case(name))
}

/// Print the registry.
pub fn print_algorithms() {
    for a in ALGORITHMS {
        println!(
            "{}\n  source: {}\n  params: {}\n",
            a.name, a.source, a.params
        );
    }
}
