//! The doubly robust learner (Oosterhuis, TOIS 2023) through the registry (issue 52): `lambdarank debias=dr` learns
//! from the doubly robust set of a click log, beats the naive control, gives one model at 1 and 2 threads, and
//! refuses the inputs it cannot use.

use ltr_clicks::{ClickRecord, ClickSimulation, DoublyRobustSettings, PropensitySource};
use ltr_core::{FitContext, Params, Scorer};
use ltr_data::Dataset;
use ltr_learn::{train, Grid, TrainRequest};
use ltr_metrics::{Convention, Metric};

use crate::common;

fn grid(settings: &[&str]) -> Grid {
    Grid::parse(&settings.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
}

/// Generated web data, a production RankSVM trained on 1% of the training queries showing its top 10, and its log.
fn clicked(sessions: u64) -> ([Dataset; 3], Vec<ClickRecord>) {
    let [train_set, vali, test] = common::web_fold(500, 20, 40, 2018);
    let n_prod = ((train_set.n_queries() as f64 * 0.01).round() as usize).max(3);
    let prod_set = train_set.select_queries(&(0..n_prod).collect::<Vec<_>>());
    let prod = train("ranksvm", &grid(&["c=0.1"]), &TrainRequest::new(&prod_set)).unwrap();
    let production = prod.fitted.model.score_dataset(&train_set);
    let sim = ClickSimulation {
        sessions,
        seed: 7,
        ..Default::default()
    };
    let log = sim.simulate(&train_set, &production).unwrap();
    ([train_set, vali, test], log)
}

fn dr_set(log: &[ClickRecord], train_set: &Dataset) -> Dataset {
    ltr_clicks::doubly_robust_set(
        log,
        train_set,
        &PropensitySource::Logged,
        &DoublyRobustSettings::default(),
    )
    .unwrap()
    .0
}

fn test_ndcg(t: &ltr_learn::Trained, test: &Dataset) -> f64 {
    let scores = t.fitted.model.score_dataset(test);
    let per_query = ltr_metrics::evaluate(
        test,
        &scores,
        &[Metric::Ndcg(Some(10))],
        &Convention::LETOR4,
    )
    .unwrap();
    per_query.mean(Metric::Ndcg(Some(10))).unwrap()
}

#[test]
fn dr_beats_the_naive_control_on_generated_web_data() {
    let ([train_set, vali, test], log) = clicked(20_000);
    let request = |data| {
        TrainRequest::new(data)
            .metric(Metric::Ndcg(Some(10)), Convention::LETOR4)
            .validation(&vali)
    };
    let set = dr_set(&log, &train_set);
    let dr = train("lambdarank", &grid(&["debias=dr"]), &request(&set)).unwrap();
    let per_click = ltr_clicks::click_training_set(&log, &train_set, &PropensitySource::Logged)
        .unwrap()
        .0;
    let naive = train(
        "lambdarank",
        &grid(&["weighting=naive"]),
        &request(&per_click),
    )
    .unwrap();
    let (dr, naive) = (test_ndcg(&dr, &test), test_ndcg(&naive, &test));
    eprintln!("test NDCG@10: dr {dr:.4}, naive {naive:.4}");
    assert!(dr > naive + 0.01, "dr {dr:.4} naive {naive:.4}");
}

#[test]
fn dr_gives_one_model_at_one_and_two_threads() {
    let ([train_set, ..], log) = clicked(3_000);
    let data = dr_set(&log, &train_set);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            // The set too: its direct model is fitted in parallel blocks.
            let again = dr_set(&log, &train_set);
            assert_eq!(again, data);
            let t = train(
                "lambdarank",
                &grid(&["debias=dr", "epochs=10"]),
                &TrainRequest::new(&data),
            )
            .unwrap();
            t.fitted.linear().unwrap().weights.clone()
        })
    };
    let (one, two) = (run(1), run(2));
    assert!(one.iter().any(|&w| w != 0.0));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&one), bits(&two));
}

/// The inputs `debias=dr` cannot use are refused, naming the fix.
#[test]
fn dr_refuses_what_it_cannot_use() {
    let ([train_set, ..], log) = clicked(500);
    let ctx = FitContext::new(1);
    let a = ltr_learn::find("lambdarank").unwrap();
    let err = |params: &[(&str, &str)], data: &Dataset| {
        a.fit(&Params::new(params.to_vec()), data, &ctx)
            .expect_err("refused")
            .to_string()
    };
    // Judged data, the per-click set and the session set are not the doubly robust set.
    let per_click = ltr_clicks::click_training_set(&log, &train_set, &PropensitySource::Logged)
        .unwrap()
        .0;
    let sessions = ltr_clicks::click_session_set(&log, &train_set).unwrap().0;
    for data in [&train_set, &per_click] {
        let e = err(&[("debias", "dr")], data);
        assert!(e.contains("debias=dr") && e.contains("--clicks"), "{e}");
    }
    let e = err(&[("debias", "dr")], &sessions);
    assert!(e.contains("debias=dr"), "{e}");
    // Its naive control is another setting; DLA's parameters are not its own; listnet has no dr.
    let set = dr_set(&log, &train_set);
    let e = err(&[("debias", "dr"), ("weighting", "naive")], &set);
    assert!(e.contains("debias=none weighting=naive"), "{e}");
    let e = err(&[("debias", "dr"), ("propensity-steps", "3")], &set);
    assert!(e.contains("only with debias=dla"), "{e}");
    let listnet = ltr_learn::find("listnet").unwrap();
    let e = listnet
        .fit(&Params::new(vec![("debias", "dr")]), &set, &ctx)
        .expect_err("listnet")
        .to_string();
    assert!(e.contains("dr"), "{e}");
    // A grid mixing click sets is refused before any data is read; a propensity table is read.
    let job = |settings: &[&str], table: Option<&str>| {
        ltr_learn::TrainJob::builder("lambdarank")
            .train(ltr_learn::TrainData::File("no-such-train.txt".into()))
            .params(settings)
            .clicks(Some(ltr_learn::ClickSource {
                log: "no-such-log.tsv".into(),
                propensities: table.map(Into::into),
            }))
            .build()
    };
    for grid in [
        &["debias=none,dr"][..],
        &["debias=dr", "dr-unshown=leave-out,direct"],
    ] {
        let e = job(grid, None).expect_err("grid").to_string();
        assert!(e.contains("different click sets"), "{e}");
    }
    let e = job(&["debias=dr", "dr-unshown=all"], None)
        .expect_err("value")
        .to_string();
    assert!(
        e.contains("dr-unshown") && e.contains("leave-out or direct"),
        "{e}"
    );
    let e = job(
        &["debias=dr", "dr-unshown=direct", "dr-direct-steps=0"],
        None,
    )
    .expect_err("steps")
    .to_string();
    assert!(e.contains("dr-direct-steps"), "{e}");
    assert!(job(&["debias=dr"], Some("table.tsv")).is_ok());
}
