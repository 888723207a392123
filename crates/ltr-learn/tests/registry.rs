//! The registry's specs match what each learner reads: every name read is listed, every listed name is read
//! (under its `when` setting), defaults parse, and misspelt or unused names are errors that say what to do.

use ltr_core::{FitContext, Params};
use ltr_data::{generate_letor_like, split_by_queries, Dataset, SyntheticConfig};
use ltr_learn::{Allowed, MetricMeasure, ALGORITHMS};

fn data() -> (Dataset, Dataset) {
    let all = generate_letor_like(&SyntheticConfig {
        queries: 24,
        max_docs: 20,
        features: 6,
        seed: 5,
        ..Default::default()
    })
    .unwrap();
    let mut p = split_by_queries(&all, &[0.6, 0.4], 1).unwrap();
    let v = p.pop().unwrap();
    (p.pop().unwrap(), v)
}

/// Small budgets so that every algorithm trains in milliseconds.
fn quick(algo: &str) -> Vec<(&'static str, &'static str)> {
    match algo {
        "perceptron" | "committee-perceptron" => vec![("epochs", "2")],
        "rankboost" => vec![("rounds", "5")],
        "listnet" => vec![("epochs", "2")],
        "sigmoid" => vec![("max-iter", "2"), ("lambda", "0.1")],
        "rsvm-ir" => vec![("c", "0.1")],
        "neural" => vec![("epochs", "2"), ("sizes", "8")],
        _ => vec![],
    }
}

/// Clicks on `train` simulated with the first feature as the production ranker.
fn simulated_log(train: &Dataset) -> Vec<ltr_clicks::ClickRecord> {
    let production: Vec<f64> = (0..train.n_docs())
        .map(|i| train.row(i).get(0) as f64)
        .collect();
    ltr_clicks::ClickSimulation {
        sessions: 300,
        ..Default::default()
    }
    .simulate(train, &production)
    .unwrap()
}

/// `train` as a click training set of [`simulated_log`].
fn as_clicks(train: &Dataset) -> Dataset {
    let logged = ltr_clicks::PropensitySource::Logged;
    ltr_clicks::click_training_set(&simulated_log(train), train, &logged)
        .unwrap()
        .0
}

/// `train` as click sessions with positions of [`simulated_log`].
fn as_sessions(train: &Dataset) -> Dataset {
    ltr_clicks::click_session_set(&simulated_log(train), train)
        .unwrap()
        .0
}

/// `train` as the doubly robust set of [`simulated_log`] (the unshown documents left out).
fn as_doubly_robust(train: &Dataset) -> Dataset {
    let logged = ltr_clicks::PropensitySource::Logged;
    ltr_clicks::doubly_robust_set(&simulated_log(train), train, &logged, &Default::default())
        .unwrap()
        .0
}

fn read_names(algo: &str, extra: &[(&str, &str)]) -> Vec<String> {
    let (train, vali) = data();
    let train = if algo == "propensity-ranksvm" {
        as_clicks(&train)
    } else if extra.contains(&("debias", "dr")) {
        as_doubly_robust(&train)
    } else if extra.iter().any(|(k, _)| *k == "debias") {
        as_sessions(&train)
    } else {
        train
    };
    let a = ltr_learn::find(algo).unwrap();
    let mut kv = quick(algo);
    kv.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    kv.extend_from_slice(extra);
    let params = Params::new(kv);
    let m = MetricMeasure {
        metric: "NDCG@10".parse().unwrap(),
        convention: Default::default(),
    };
    let ctx = FitContext::new(1).with_validation(&vali, &m);
    a.fit(&params, &train, &ctx)
        .unwrap_or_else(|e| panic!("{algo} with {extra:?}: {e}"));
    params.read_names()
}

#[test]
fn every_spec_is_read_and_every_read_is_specified() {
    for a in ALGORITHMS {
        let names: Vec<&str> = a.param_specs().map(|s| s.name).collect();
        let default_reads = read_names(a.name, &[]);
        for r in &default_reads {
            assert!(
                names.contains(&r.as_str()),
                "{}: reads `{r}` without a ParamSpec",
                a.name
            );
        }
        for s in a.param_specs() {
            // `PREFIX-KEY` stands for the start algorithm's parameters: RankSVM's `c` under the prefix.
            let start_c = s.name.strip_suffix("-KEY").map(|p| format!("{p}-c"));
            let reads = match s.when {
                None => default_reads.clone(),
                Some(setting) => {
                    let (k, v) = setting.split_once('=').unwrap();
                    let mut extra = vec![(k, v)];
                    // A setting that is itself read under another (`dr-unshown=direct` under `debias=dr`).
                    let mut parent = a.param_specs().find(|p| p.name == k).and_then(|p| p.when);
                    while let Some(setting) = parent {
                        let (k, v) = setting.split_once('=').unwrap();
                        extra.push((k, v));
                        parent = a.param_specs().find(|p| p.name == k).and_then(|p| p.when);
                    }
                    if let Some(c) = &start_c {
                        extra.push((c.as_str(), "0.1"));
                    }
                    read_names(a.name, &extra)
                }
            };
            let name = start_c.as_deref().unwrap_or(s.name);
            assert!(
                reads.iter().any(|r| r == name),
                "{}: `{}` is listed (when {:?}) but never read",
                a.name,
                s.name,
                s.when
            );
            // Defaults are valid values of their own kind.
            if !s.default.is_empty() && !s.default.starts_with('(') {
                match s.allowed {
                    Allowed::Choice { values } => assert!(values.contains(&s.default)),
                    Allowed::Int { min, max } => {
                        let v: u64 = s.default.parse().unwrap();
                        assert!((min..=max).contains(&v), "{}: {}", a.name, s.name);
                    }
                    Allowed::Float { min, max } => {
                        let v: f64 = s.default.parse().unwrap();
                        assert!((min..=max).contains(&v), "{}: {}", a.name, s.name);
                    }
                    Allowed::Bool => assert!(["true", "false"].contains(&s.default)),
                    Allowed::CValue | Allowed::Text => {}
                }
            }
        }
    }
}

#[test]
fn misspelt_and_unused_parameters_are_errors_naming_what_is_known() {
    let (train, _) = data();
    let ctx = FitContext::new(1);
    let svm = ltr_learn::find("ranksvm").unwrap();
    let e = svm
        .fit(&Params::new([("solvr", "dual")]), &train, &ctx)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`solvr`") && e.contains("known: c, solver, pairs, loss"),
        "{e}"
    );
    let p = ltr_learn::find("perceptron").unwrap();
    let e = p
        .fit(&Params::new([("rate", "2"), ("epochs", "1")]), &train, &ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("only with step=global"), "{e}");
    let e = p
        .fit(
            &Params::new([("shuffle", "false"), ("stream-pairs", "true")]),
            &train,
            &ctx,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("only with shuffle=true"), "{e}");
    // Streaming asked for on small data trains (another order than the default's records).
    let streamed = p
        .fit(
            &Params::new([("stream-pairs", "true"), ("epochs", "3")]),
            &train,
            &ctx,
        )
        .unwrap();
    let records = p
        .fit(&Params::new([("epochs", "3")]), &train, &ctx)
        .unwrap();
    assert_ne!(streamed.model, records.model);
    let e = svm
        .fit(&Params::new([("c", "-1")]), &train, &ctx)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a positive number"), "{e}");
}

#[test]
fn names_are_checked_before_any_data_against_every_spec() {
    for a in ltr_learn::ALGORITHMS {
        // Every listed name (a `PREFIX-KEY` spec as `PREFIX-c`), any case, `_` for `-`, passes the early check.
        let names: Vec<String> = a
            .param_specs()
            .map(|s| s.name.replace("KEY", "c").to_uppercase().replace('-', "_"))
            .collect();
        a.check_names(&Params::new(names.iter().map(|n| (n, "1"))))
            .unwrap_or_else(|e| panic!("{}: {e}", a.name));
        let e = a
            .check_names(&Params::new([("no-such-name", "1")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`no-such-name`")
                && e.contains(&format!("unknown parameter for `{}`", a.name)),
            "{e}"
        );
    }
    // The same message as fitting gives; a grid is checked by its names.
    let svm = ltr_learn::find("ranksvm").unwrap();
    let grid = ltr_learn::Grid::parse(&["c=0.1,1", "solvr=dual"]).unwrap();
    let early = grid.check_names(svm).unwrap_err().to_string();
    let (train, _) = data();
    let late = svm
        .fit(
            &Params::new([("solvr", "dual")]),
            &train,
            &FitContext::new(1),
        )
        .unwrap_err()
        .to_string();
    assert_eq!(early, late);
    // A name a setting leaves unused is only known once the settings are read: fitting reports it.
    let p = ltr_learn::find("perceptron").unwrap();
    assert!(p.check_names(&Params::new([("rate", "2")])).is_ok());
}

#[test]
fn a_start_model_must_be_another_linear_algorithm_or_a_linear_file() {
    let (train, _) = data();
    let ctx = FitContext::new(1);
    let fit_err = |algo: &str, kv: &[(&str, &str)]| {
        let kv: Vec<(&str, &str)> = kv.to_vec();
        ltr_learn::find(algo)
            .unwrap()
            .fit(&Params::new(kv), &train, &ctx)
            .unwrap_err()
            .to_string()
    };
    let e = fit_err("lambdarank", &[("init-algo", "lambdarank")]);
    assert!(
        e.contains("init-algo") && e.contains("cannot start from itself"),
        "{e}"
    );
    let e = fit_err("sigmoid", &[("seed-algo", "sigmoid")]);
    assert!(
        e.contains("seed-algo") && e.contains("cannot start from itself"),
        "{e}"
    );
    let e = fit_err(
        "lambdarank",
        &[("init-algo", "rankboost"), ("init-rounds", "3")],
    );
    assert!(
        e.contains("init-algo") && e.contains("not a linear model"),
        "{e}"
    );
    let e = fit_err("lambdarank", &[("init-algo", "no-such")]);
    assert!(e.contains("unknown algorithm `no-such`"), "{e}");
    // The start algorithm's own parameters are checked by it.
    let e = fit_err(
        "lambdarank",
        &[("init-algo", "ranksvm"), ("init-solvr", "dual")],
    );
    assert!(e.contains("`solvr`"), "{e}");
    // A start file with more features than the data names the file.
    let path = std::env::temp_dir().join(format!("ltr-registry-{}-wide.json", std::process::id()));
    let wide = ltr_core::Model::Linear(ltr_core::LinearModel::new(vec![1.0; 9]));
    ltr_core::ModelFile::new("ranksvm", Default::default(), Default::default(), wide)
        .save(&path)
        .unwrap();
    let e = fit_err("lambdarank", &[("init-model", path.to_str().unwrap())]);
    std::fs::remove_file(&path).unwrap();
    assert!(e.contains("wide.json") && e.contains("9 features"), "{e}");
}

/// Every row carries what the other places read from it: `ltrkit`'s generator a unique class name, stream
/// experiments an online form for every algorithm that replays a stream (its `passes` parameter says so), and the
/// memory estimate a working set.
#[test]
fn every_row_carries_what_the_front_ends_derive_from_it() {
    let mut classes = std::collections::BTreeSet::new();
    let (train, _) = data();
    for a in ltr_learn::ALGORITHMS {
        let c = a.class_name;
        assert!(
            c.chars().next().is_some_and(|ch| ch.is_ascii_uppercase())
                && c.chars().all(|ch| ch.is_ascii_alphanumeric()),
            "{}: class name `{c}` is not a Python class name",
            a.name
        );
        assert!(classes.insert(c), "{}: class name `{c}` twice", a.name);
        let streams = a.param_specs().any(|p| p.name == "passes");
        let online = ltr_learn::online_params(a.name, &ltr_core::Params::default());
        assert_eq!(
            online.is_ok(),
            streams,
            "{}: an algorithm replayed as a stream has an online form, and only it ({online:?})",
            a.name
        );
        let m = ltr_learn::memory_estimate(a.name, &train, false, &ltr_learn::Grid::default());
        assert!(m.working > 0 && m.dataset > 0, "{}: {m:?}", a.name);
    }
}

/// A NaN feature value is a missing value to the rows that say so (the trees learn its side, and their model sends
/// it there), and an error naming where it is for every other algorithm, for a start algorithm or start model file
/// of a tree learner, and in validation data.
#[test]
fn nan_is_a_missing_value_to_the_trees_only() {
    let (mut train, vali) = data();
    train.to_dense();
    let ltr_data::FeatureMatrix::Dense(x) = train.features_mut() else {
        unreachable!("made dense above")
    };
    for i in (3..x.nrows()).step_by(4) {
        x[(i, 1)] = f32::NAN;
    }
    let ctx = FitContext::new(1);
    let fit = |algo: &str, kv: &[(&str, &str)], ctx: &FitContext<'_>| {
        ltr_learn::find(algo)
            .unwrap()
            .fit(&Params::new(kv.to_vec()), &train, ctx)
    };
    for a in ALGORITHMS {
        let trees = [("trees", "3")];
        let kv: &[(&str, &str)] = if a.missing_values { &trees } else { &[] };
        match fit(a.name, kv, &ctx) {
            Ok(f) => {
                assert!(a.missing_values, "{}", a.name);
                assert!(f.model.takes_missing_values(), "{}", a.name);
                let s = ltr_core::Scorer::score_dataset(&f.model, &train);
                assert!(s.iter().all(|v| v.is_finite()), "{}", a.name);
            }
            Err(e) => {
                let e = e.to_string();
                assert!(!a.missing_values, "{}: {e}", a.name);
                assert!(
                    e.contains("training data: row 3, column 1 (feature 2) is NaN")
                        && e.contains(&format!("`{}` takes no missing values", a.name))
                        && e.contains("lambdamart, mart, random-forest"),
                    "{e}"
                );
            }
        }
    }
    let e = fit("mart", &[("init-algo", "ranksvm")], &ctx).unwrap_err();
    assert!(
        e.to_string().contains("`ranksvm` takes no missing values"),
        "{e}"
    );
    let path = std::env::temp_dir().join(format!("ltr-registry-{}-nan.json", std::process::id()));
    let linear = ltr_core::Model::Linear(ltr_core::LinearModel::new(vec![1.0; 6]));
    ltr_core::ModelFile::new("ranksvm", Default::default(), Default::default(), linear)
        .save(&path)
        .unwrap();
    let e = fit("mart", &[("init-model", path.to_str().unwrap())], &ctx).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(
        e.to_string()
            .contains("init-model`: ")
            && e.to_string().contains("a ranksvm model takes no missing values, and the training data's row 3, column 1 is NaN"),
        "{e}"
    );
    // Validation data is checked as training data is.
    let (clean, _) = data();
    let mut vali = vali;
    vali.to_dense();
    if let ltr_data::FeatureMatrix::Dense(v) = vali.features_mut() {
        v[(2, 0)] = f32::NAN;
    }
    let m = MetricMeasure {
        metric: "NDCG@10".parse().unwrap(),
        convention: Default::default(),
    };
    let e = ltr_learn::find("ranksvm")
        .unwrap()
        .fit(
            &Params::default(),
            &clean,
            &FitContext::new(1).with_validation(&vali, &m),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("validation data: row 2, column 0"),
        "{e}"
    );
}

/// `lambdamart`'s query weights reach the gradients: weights of 1 (with LETOR's `qid:` prefix, a comment and a
/// qid the data lacks) train the unweighted model bit for bit, a silenced query changes it; ERR, AP and sampled
/// pairs train models of their own.
#[test]
fn lambdamart_reads_its_query_weights_file_and_every_pair_weighting() {
    let (train, _) = data();
    let ctx = FitContext::new(1);
    let lambdamart = ltr_learn::find("lambdamart").unwrap();
    let fit = |kv: &[(&str, &str)]| {
        let mut kv = kv.to_vec();
        kv.extend([("trees", "5"), ("min-docs-in-leaf", "3")]);
        let fitted = lambdamart.fit(&Params::new(kv), &train, &ctx).unwrap();
        format!("{:?}", fitted.model)
    };
    let path = std::env::temp_dir().join(format!(
        "ltr-registry-{}-query-weights.txt",
        std::process::id()
    ));
    let write = |silenced: Option<usize>| {
        let mut text = String::from("# qid weight\n\n");
        for (q, qid) in train.qids().iter().enumerate() {
            let w = if Some(q) == silenced { "0" } else { "1" };
            text += &format!("qid:{qid} {w}\n");
        }
        text += "not-in-the-data 7\n";
        std::fs::write(&path, text).unwrap();
    };
    let file = format!("query-weights={}", path.display());
    let (key, value) = file.split_once('=').unwrap();
    let plain = fit(&[]);
    write(None);
    assert_eq!(fit(&[(key, value)]), plain);
    write(Some(0));
    let silenced = fit(&[(key, value)]);
    std::fs::remove_file(&path).unwrap();
    assert_ne!(silenced, plain);
    for setting in [
        ("lambda-metric", "err"),
        ("lambda-metric", "map"),
        ("pair-method", "mean"),
        ("label-gain", "0:1:1"),
    ] {
        assert_ne!(fit(&[setting]), plain, "{setting:?}");
    }
}
