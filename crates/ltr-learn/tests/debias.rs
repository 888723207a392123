//! Clicks through the registry (issue 52): every row says what it makes of a click log, the rows that cannot use
//! one refuse it by name (in `TrainJob` before any data is read, and in `Algorithm::fit` for data built in memory),
//! and `lambdamart` trains on click sessions with positions under each `debias`.

use ltr_core::{FitContext, Params};
use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};
use ltr_learn::{ClickSource, ClickUse, TrainData, TrainJob, ALGORITHMS};

fn judged() -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 20,
        max_docs: 20,
        features: 6,
        seed: 7,
        ..Default::default()
    })
    .unwrap()
}

fn log(train: &Dataset) -> Vec<ltr_clicks::ClickRecord> {
    let production: Vec<f64> = (0..train.n_docs())
        .map(|i| train.row(i).get(0) as f64)
        .collect();
    ltr_clicks::ClickSimulation {
        sessions: 400,
        seed: 3,
        ..Default::default()
    }
    .simulate(train, &production)
    .unwrap()
}

/// `train`'s simulated log ([`log`]) as click sessions with positions, the data `lambdamart` debiases from.
fn sessions(train: &Dataset) -> Dataset {
    ltr_clicks::click_session_set(&log(train), train).unwrap().0
}

const ACCEPTING: [&str; 5] = [
    "propensity-ranksvm",
    "listnet",
    "lambdarank",
    "lambdamart",
    "neural",
];

#[test]
fn every_row_says_what_it_makes_of_clicks() {
    for a in ALGORITHMS {
        let json = serde_json::to_value(a).unwrap();
        let clicks = &json["clicks"];
        match a.clicks {
            ClickUse::ClickQueries => assert_eq!(clicks, "click-queries", "{}", a.name),
            ClickUse::Sessions => assert_eq!(clicks, "sessions", "{}", a.name),
            ClickUse::DoublyRobust => assert_eq!(clicks, "doubly-robust", "{}", a.name),
            ClickUse::ClickQueriesOrSessions => {
                assert_eq!(clicks, "click-queries-or-sessions", "{}", a.name)
            }
            ClickUse::Refused(why) => {
                assert!(why.len() > 40, "{}: {why}", a.name);
                assert_eq!(clicks["refused"], why, "{}", a.name);
            }
        }
        assert_eq!(
            a.clicks.accepts(),
            ACCEPTING.contains(&a.name),
            "{}",
            a.name
        );
    }
    assert_eq!(ltr_learn::click_names(), ACCEPTING);
    assert_eq!(
        ltr_learn::find("lambdamart").unwrap().clicks,
        ClickUse::Sessions
    );
    for linear in ["lambdarank", "listnet"] {
        let row = ltr_learn::find(linear).unwrap().clicks;
        assert_eq!(row, ClickUse::ClickQueriesOrSessions);
        assert_eq!(row.under(None), ClickUse::ClickQueries);
        assert_eq!(row.under(Some("none")), ClickUse::ClickQueries);
        assert_eq!(row.under(Some("dla")), ClickUse::Sessions);
        assert_eq!(row.under(Some("dr")), ClickUse::DoublyRobust);
    }
}

#[test]
fn rows_that_cannot_use_clicks_refuse_them_by_name() {
    let train = judged();
    let log = log(&train);
    let per_click =
        ltr_clicks::click_training_set(&log, &train, &ltr_clicks::PropensitySource::Logged)
            .unwrap()
            .0;
    let sessions = ltr_clicks::click_session_set(&log, &train).unwrap().0;
    let ctx = FitContext::new(1);
    for a in ALGORITHMS {
        for (what, data) in [("per-click", &per_click), ("sessions", &sessions)] {
            // Without parameters a row that reads either set reads one query per click (`debias=none`).
            let fits = matches!(
                (a.clicks.under(None), what),
                (ClickUse::ClickQueries, "per-click") | (ClickUse::Sessions, "sessions")
            );
            if fits {
                continue;
            }
            let err = a
                .fit(&Params::new(Vec::<(&str, &str)>::new()), data, &ctx)
                .expect_err(a.name)
                .to_string();
            assert!(err.contains(&format!("`{}`", a.name)), "{}: {err}", a.name);
            if let ClickUse::Refused(why) = a.clicks {
                assert!(
                    err.contains("does not learn from clicks") && err.contains(why),
                    "{err}"
                );
                assert!(
                    err.contains("propensity-ranksvm, listnet, lambdarank, lambdamart"),
                    "{err}"
                );
            }
        }
        // `ltr train --clicks` refuses before reading anything (the files do not exist).
        let built = TrainJob::builder(a.name)
            .train(TrainData::File("no-such-train.txt".into()))
            .clicks(Some(ClickSource {
                log: "no-such-log.tsv".into(),
                propensities: None,
                scope: ltr_learn::SessionScope::Every,
            }))
            .build();
        match a.clicks {
            ClickUse::Refused(why) => {
                let err = built.expect_err(a.name).to_string();
                assert!(
                    err.contains("--clicks") && err.contains(why),
                    "{}: {err}",
                    a.name
                );
            }
            _ => assert!(built.is_ok(), "{}", a.name),
        }
    }
    // A propensity table is for the rows that weigh clicks by it; lambdamart learns the bias itself.
    let err = lambdamart_given_a_propensity_table_error();
    assert!(err.contains("propensity table"), "{err}");
}

#[test]
fn lambdamart_learns_from_sessions_under_each_debias() {
    let train = judged();
    let sessions = sessions(&train);
    let a = ltr_learn::find("lambdamart").unwrap();
    let ctx = FitContext::new(2);
    let mut models = Vec::new();
    for debias in ["none", "position-factors", "pairwise", "dla"] {
        let params = Params::new(vec![
            ("trees", "5"),
            ("min-docs-in-leaf", "5"),
            ("debias", debias),
        ]);
        let fitted = a.fit(&params, &sessions, &ctx).unwrap();
        let diagnostics = fitted.diagnostics.clone().unwrap_or_default();
        let bias = &diagnostics["position_bias"];
        match debias {
            "none" => assert!(bias.is_null()),
            "position-factors" => assert!(bias["factors"].is_array(), "{bias}"),
            "dla" => assert!(bias["propensities"].is_array(), "{bias}"),
            _ => assert!(
                bias["t_plus"].is_array() && bias["t_minus"].is_array(),
                "{bias}"
            ),
        }
        models.push(format!("{:?}", fitted.model));
    }
    assert_ne!(models[0], models[1]);
    assert_ne!(models[0], models[2]);
    assert_ne!(models[0], models[3]);
    // Debiasing data without positions is refused by name.
    let params = Params::new(vec![("trees", "2"), ("debias", "pairwise")]);
    let err = a.fit(&params, &train, &ctx).unwrap_err().to_string();
    assert!(err.contains("debias"), "{err}");
}

/// `debias=pairwise` doubles its pair hessians by default (`pair-hessian=2`, XGBoost's): at `l2 = 0` the scores of
/// `pair-hessian=1` at half the learning rate, bit for bit (the trees record split gains, which halve); plain
/// `lambdamart` keeps LightGBM's hessian, and `pair-hessian` is refused without `debias=pairwise`.
#[test]
fn pairwise_debiasing_doubles_the_pair_hessian_by_default() {
    let train = judged();
    let sessions = sessions(&train);
    let a = ltr_learn::find("lambdamart").unwrap();
    let ctx = FitContext::new(2);
    let fit = |extra: &[(&'static str, &'static str)]| {
        let mut kv = vec![("trees", "5"), ("min-docs-in-leaf", "5")];
        kv.extend_from_slice(extra);
        let model = a.fit(&Params::new(kv), &sessions, &ctx).unwrap().model;
        let scores = ltr_core::Scorer::score_dataset(&model, &train);
        scores.iter().map(|s| s.to_bits()).collect::<Vec<u64>>()
    };
    let default = fit(&[("debias", "pairwise")]);
    assert_eq!(
        default,
        fit(&[("debias", "pairwise"), ("pair-hessian", "2")])
    );
    let halved = [
        ("debias", "pairwise"),
        ("pair-hessian", "1"),
        ("learning-rate", "0.05"),
    ];
    assert_eq!(default, fit(&halved));
    assert_ne!(
        default,
        fit(&[("debias", "pairwise"), ("pair-hessian", "1")])
    );
    let params = Params::new(vec![("trees", "2"), ("pair-hessian", "2")]);
    assert!(a.fit(&params, &sessions, &ctx).is_err());
}

/// `debias=ips` reads a known propensity table (the form `ltr train --propensities` reads): with every propensity 1
/// it is plain LambdaMART bit for bit, with 1/k it is another model reporting its table; a bad table is refused
/// naming the file and line, a table shorter than the sessions' positions and a table without `debias=ips` too.
#[test]
fn lambdamart_reads_known_propensities_under_debias_ips() {
    let train = judged();
    let sessions = sessions(&train);
    let shown = *sessions.positions().unwrap().iter().max().unwrap() as usize + 1;
    let a = ltr_learn::find("lambdamart").unwrap();
    let ctx = FitContext::new(2);
    let dir = tempfile::tempdir().unwrap();
    let table = |name: &str, body: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap();
        p.to_str().unwrap().to_string()
    };
    let rows = |values: &[f64]| {
        let mut t = String::from("rank\tpropensity\tlow\thigh\tsessions\n");
        for (k, v) in values.iter().enumerate() {
            t += &format!("{}\t{v}\t{v}\t{v}\t100\n", k + 1);
        }
        t
    };
    let fit = |extra: &[(&str, &str)]| {
        let mut p = vec![("trees", "5"), ("min-docs-in-leaf", "5")];
        p.extend_from_slice(extra);
        a.fit(&Params::new(p), &sessions, &ctx)
    };
    let ones = table("ones.tsv", &rows(&vec![1.0; shown]));
    let inverse: Vec<f64> = (1..=shown).map(|k| 1.0 / k as f64).collect();
    let inverse_file = table("inverse.tsv", &rows(&inverse));
    let plain = fit(&[]).unwrap();
    let by_ones = fit(&[("debias", "ips"), ("propensities", &ones)]).unwrap();
    assert_eq!(format!("{:?}", plain.model), format!("{:?}", by_ones.model));
    let ips = fit(&[("debias", "ips"), ("propensities", &inverse_file)]).unwrap();
    assert_ne!(format!("{:?}", plain.model), format!("{:?}", ips.model));
    let reported = &ips.diagnostics.unwrap()["position_bias"]["propensities"];
    assert_eq!(reported.as_array().unwrap().len(), shown, "{reported}");
    let err = |extra: &[(&str, &str)]| fit(extra).expect_err("refused").to_string();
    let bad = table("bad.tsv", "rank\tpropensity\n1\t1\n2\t-0.5\n");
    let e = err(&[("debias", "ips"), ("propensities", &bad)]);
    assert!(e.contains("bad.tsv:3") && e.contains("positive"), "{e}");
    let zero = table("zero.tsv", "rank\tpropensity\n1\t1\n2\t0\n");
    let e = err(&[("debias", "ips"), ("propensities", &zero)]);
    assert!(e.contains("zero.tsv:3"), "{e}");
    let malformed = table("malformed.tsv", "rank\tpropensity\n1\t1\nx\t0.5\n");
    let e = err(&[("debias", "ips"), ("propensities", &malformed)]);
    assert!(
        e.contains("malformed.tsv:3") && e.contains("bad rank"),
        "{e}"
    );
    let short = table("short.tsv", &rows(&inverse[..shown - 1]));
    let e = err(&[("debias", "ips"), ("propensities", &short)]);
    assert!(
        e.contains(&format!(
            "gives {} positions, but the sessions show {shown}",
            shown - 1
        )),
        "{e}"
    );
    let e = err(&[("debias", "ips")]);
    assert!(e.contains("propensities=FILE"), "{e}");
    let e = err(&[("debias", "dla"), ("propensities", &ones)]);
    assert!(e.contains("only with debias=ips"), "{e}");
    let missing = dir.path().join("missing.tsv");
    let e = err(&[
        ("debias", "ips"),
        ("propensities", missing.to_str().unwrap()),
    ]);
    assert!(e.contains("missing.tsv"), "{e}");
    // `ltr train --propensities` with lambdamart points to the parameter.
    let e = lambdamart_given_a_propensity_table_error();
    assert!(e.contains("debias=ips --param propensities=FILE"), "{e}");
}

/// The error of `lambdamart` given `--clicks` with a propensity table (`ltr train --propensities`).
fn lambdamart_given_a_propensity_table_error() -> String {
    TrainJob::builder("lambdamart")
        .train(TrainData::File("no-such-train.txt".into()))
        .clicks(Some(ClickSource {
            log: "no-such-log.tsv".into(),
            propensities: Some("no-such-table.tsv".into()),
            scope: ltr_learn::SessionScope::Every,
        }))
        .build()
        .expect_err("propensities")
        .to_string()
}
