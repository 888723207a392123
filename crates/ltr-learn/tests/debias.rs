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

const ACCEPTING: [&str; 4] = ["propensity-ranksvm", "listnet", "lambdarank", "lambdamart"];

#[test]
fn every_row_says_what_it_makes_of_clicks() {
    for a in ALGORITHMS {
        let json = serde_json::to_value(a).unwrap();
        let clicks = &json["clicks"];
        match a.clicks {
            ClickUse::ClickQueries => assert_eq!(clicks, "click-queries", "{}", a.name),
            ClickUse::Sessions => assert_eq!(clicks, "sessions", "{}", a.name),
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
            let fits = matches!(
                (a.clicks, what),
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
    let err = TrainJob::builder("lambdamart")
        .train(TrainData::File("no-such-train.txt".into()))
        .clicks(Some(ClickSource {
            log: "no-such-log.tsv".into(),
            propensities: Some("no-such-table.tsv".into()),
        }))
        .build()
        .expect_err("propensities")
        .to_string();
    assert!(err.contains("propensity table"), "{err}");
}

#[test]
fn lambdamart_learns_from_sessions_under_each_debias() {
    let train = judged();
    let sessions = ltr_clicks::click_session_set(&log(&train), &train)
        .unwrap()
        .0;
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
