//! Counterfactual estimates of a new ranker's click metric: by hand on a two-session log, against the exact value
//! of a simulated position-based user, SNIPS's smaller relative error, and the bootstrap at any thread count; the
//! doubly robust estimator by hand, as IPS under a deterministic policy, unbiased on swap logs with less error
//! than IPS when its model is good.

use ltr_clicks::{
    estimate_click_metric, estimate_click_metric_from_log, write_click_log, ClickGain,
    ClickModelParams, ClickRecord, ClickSimulation, CounterfactualSettings, DirectModel, Estimator,
    FittedClickModel, Intervention, LoggingPolicy, PropensitySource, SessionScope,
};
use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};

/// One query `qa` of three documents a0, a1, a2.
fn features() -> Dataset {
    crate::common::read_text(
        "0 qid:qa 1:1 #docid = a0\n0 qid:qa 1:2 #docid = a1\n0 qid:qa 1:3 #docid = a2\n",
    )
}

fn record(session: u64, docid: &str, rank: u32, clicked: bool, p: f64) -> ClickRecord {
    ClickRecord {
        session,
        qid: "qa".into(),
        docid: docid.into(),
        rank,
        clicked,
        propensity: Some(p),
        production_rank: None,
    }
}

/// Session 1 clicks a0 (rank 1, p = 1) and a2 (rank 3, p = ¼); session 2 clicks a1 (rank 2, p = ½).
fn log() -> Vec<ClickRecord> {
    vec![
        record(1, "a0", 1, true, 1.0),
        record(1, "a1", 2, false, 0.5),
        record(1, "a2", 3, true, 0.25),
        record(2, "a0", 1, false, 1.0),
        record(2, "a1", 2, true, 0.5),
        record(2, "a2", 3, false, 0.25),
    ]
}

fn settings(estimator: Estimator, gain: ClickGain) -> CounterfactualSettings {
    CounterfactualSettings {
        estimator,
        gain,
        bootstrap: 0,
        ..Default::default()
    }
}

#[test]
fn a_two_session_log_gives_the_hand_computed_estimates() {
    let f = features();
    // The new ranker orders a2, a0, a1 (scores by row: a0 2, a1 1, a2 3).
    let scores = [2.0, 1.0, 3.0];
    let est = |e, g| estimate_click_metric(&log(), &f, &scores, &settings(e, g)).unwrap();
    // clicks@1: session 1 — a2 at new rank 1 over p = ¼: X = 4, Y = 1 + 4 = 5; session 2 — a1 at new rank 3:
    // X = 0, Y = 2. IPS = (4 + 0)/2 = 2 with se √(((4−2)² + (0−2)²)/1/2) = 2; SNIPS = 4/7, and its delta-method
    // residuals (X − R·Y)/mean Y = ±(8/7)/3.5 give se 16/49.
    let ips = est(Estimator::Ips, ClickGain::ClicksAt(1));
    assert_eq!(ips.value, 2.0);
    assert!((ips.normal.std_error - 2.0).abs() < 1e-12);
    assert!((ips.normal.low - (2.0 - 1.96 * 2.0)).abs() < 1e-12);
    assert_eq!((ips.sessions, ips.clicks), (2, 3));
    let snips = est(Estimator::Snips, ClickGain::ClicksAt(1));
    assert!((snips.value - 4.0 / 7.0).abs() < 1e-15);
    assert!((snips.normal.std_error - 16.0 / 49.0).abs() < 1e-12);
    // dcg@3: session 1 — a0 at new rank 2 (1/log2 3) over 1, a2 at rank 1 over ¼; session 2 — a1 at rank 3
    // (1/log2 4 = ½) over ½.
    let dcg = est(Estimator::Ips, ClickGain::DcgAt(3));
    let want = (1.0 / 3f64.log2() + 4.0 + 1.0) / 2.0;
    assert!((dcg.value - want).abs() < 1e-12, "{} vs {want}", dcg.value);
    // expected-clicks with the logged propensities: λ(r) = p(r) = 1, ½, ¼ at the new ranks.
    let clicks = est(Estimator::Ips, ClickGain::Examination);
    let want = ((0.5 / 1.0 + 1.0 / 0.25) + 0.25 / 0.5) / 2.0;
    assert!((clicks.value - want).abs() < 1e-12);
    // A propensity table by rank replaces the logged column.
    let table = CounterfactualSettings {
        propensities: PropensitySource::ByRank(vec![1.0, 0.5]),
        ..settings(Estimator::Ips, ClickGain::ClicksAt(1))
    };
    // Rank 3 takes the table's last value, ½: X₁ = 1/½ = 2.
    let v = estimate_click_metric(&log(), &f, &scores, &table).unwrap();
    assert_eq!(v.value, 1.0);
}

#[test]
fn logs_that_cannot_be_estimated_are_refused_naming_the_session() {
    let f = features();
    let scores = [2.0, 1.0, 3.0];
    let s = settings(Estimator::Ips, ClickGain::ClicksAt(1));
    let err = |log: &[ClickRecord]| {
        estimate_click_metric(log, &f, &scores, &s)
            .unwrap_err()
            .to_string()
    };
    let mut missing = log();
    missing[4].docid = "zz".into();
    let e = err(&missing);
    assert!(
        e.contains("session 2") && e.contains("zz of query qa, which the feature file lacks"),
        "{e}"
    );
    let mut no_p = log();
    no_p[2].propensity = None;
    let e = err(&no_p);
    assert!(
        e.contains("session 1") && e.contains("without a propensity"),
        "{e}"
    );
    let e = estimate_click_metric(&log(), &f, &[1.0, 2.0], &s)
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 scores for the 3 rows"), "{e}");
    let mut split = log();
    split.push(record(1, "a0", 1, true, 1.0));
    assert!(err(&split).contains("again"));
    let bad_z = CounterfactualSettings {
        z: 0.0,
        ..s.clone()
    };
    assert!(estimate_click_metric(&log(), &f, &scores, &bad_z).is_err());
    for name in ["clicks@0", "ndcg@3", "dcg", "expected"] {
        assert!(ClickGain::parse(name).is_err(), "{name}");
    }
    assert_eq!(ClickGain::parse("dcg@5").unwrap(), ClickGain::DcgAt(5));
}

fn web(seed: u64) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 40,
        min_docs: 12,
        max_docs: 25,
        features: 5,
        grades: 3,
        noise: 0.5,
        outlier_fraction: 0.0,
        query_level_norm: true,
        seed,
    })
    .unwrap()
}

/// The simulator's click probability of an examined document: ε₋ + (ε₊ − ε₋)(2^g − 1)/(2^max − 1).
fn relevance(ds: &Dataset, sim: &ClickSimulation) -> Vec<f64> {
    let max = ds.labels().iter().fold(0.0f32, |a, &b| a.max(b)).max(1.0) as f64;
    ds.labels()
        .iter()
        .map(|&g| {
            sim.eps_minus
                + (sim.eps_plus - sim.eps_minus) * ((g.max(0.0) as f64).exp2() - 1.0)
                    / (max.exp2() - 1.0)
        })
        .collect()
}

/// The exact `V = E[Σ ρ(d) λ(r(d))]` and `T = E[Σ ρ(d)]` over queries drawn uniformly, the production ranker
/// showing its top `sim.top` (ties by input order) and the new ranker re-ordering them.
fn truth(
    ds: &Dataset,
    sim: &ClickSimulation,
    production: &[f64],
    new: &[f64],
    gain: ClickGain,
) -> (f64, f64) {
    let rho = relevance(ds, sim);
    let (mut v, mut t) = (0.0, 0.0);
    for q in 0..ds.n_queries() {
        let r = ds.query_range(q);
        let mut shown: Vec<usize> = r.clone().collect();
        shown.sort_by(|&a, &b| production[b].total_cmp(&production[a]).then(a.cmp(&b)));
        shown.truncate(sim.top);
        let mut order: Vec<(usize, usize)> = shown.iter().copied().enumerate().collect();
        order.sort_by(|a, b| new[b.1].total_cmp(&new[a.1]).then(a.0.cmp(&b.0)));
        for (k, &(_, d)) in order.iter().enumerate() {
            let lambda = match gain {
                ClickGain::ClicksAt(c) => ((k + 1) <= c) as u8 as f64,
                ClickGain::DcgAt(c) if k < c => 1.0 / ((k + 2) as f64).log2(),
                ClickGain::DcgAt(_) => 0.0,
                ClickGain::Examination => sim.examination(k + 1),
            };
            v += rho[d] * lambda;
            t += rho[d];
        }
    }
    let n = ds.n_queries() as f64;
    (v / n, t / n)
}

/// A production ranker that is the first feature and a better new ranker (the labels with a little noise).
fn rankers(ds: &Dataset) -> (Vec<f64>, Vec<f64>) {
    let production = (0..ds.n_docs())
        .map(|i| ds.row(i).get(0) as f64 + i as f64 * 1e-9)
        .collect();
    let new = ds
        .labels()
        .iter()
        .enumerate()
        .map(|(i, &l)| l as f64 + ((i * 37) % 11) as f64 * 0.1)
        .collect();
    (production, new)
}

#[test]
fn estimates_on_a_simulated_position_based_log_cover_the_exact_value() {
    let ds = web(11);
    let (production, new) = rankers(&ds);
    let sim = ClickSimulation {
        sessions: 30_000,
        seed: 4,
        ..Default::default()
    };
    let log = sim.simulate(&ds, &production).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.tsv");
    write_click_log(&path, &log).unwrap();
    for gain in [
        ClickGain::DcgAt(5),
        ClickGain::ClicksAt(3),
        ClickGain::Examination,
    ] {
        let (v, t) = truth(&ds, &sim, &production, &new, gain);
        for (estimator, want) in [(Estimator::Ips, v), (Estimator::Snips, v / t)] {
            let s = CounterfactualSettings {
                bootstrap: 50,
                z: 2.576,
                ..settings(estimator, gain)
            };
            let e = estimate_click_metric(&log, &ds, &new, &s).unwrap();
            // The log read from its file a session at a time gives the same estimate, bootstrap included.
            assert_eq!(
                estimate_click_metric_from_log(&path, &ds, &new, &s).unwrap(),
                e
            );
            let b = e.bootstrap.unwrap().1;
            println!(
                "{estimator:?} {}: {:.5} (truth {want:.5}) se {:.5}, bootstrap se {:.5}",
                gain.name(),
                e.value,
                e.normal.std_error,
                b.std_error
            );
            assert!(
                e.normal.low <= want && want <= e.normal.high,
                "{estimator:?} {}: truth {want} outside [{}, {}]",
                gain.name(),
                e.normal.low,
                e.normal.high
            );
            assert!(b.low <= want && want <= b.high);
            // The bootstrap and the central limit agree on the spread.
            let ratio = b.std_error / e.normal.std_error;
            assert!((0.7..1.4).contains(&ratio), "{ratio}");
        }
    }
}

#[test]
fn snips_has_a_smaller_relative_error_than_ips_over_many_logs() {
    // 40 logs of 2,000 sessions: the spread of each estimate around its own truth, relative to the truth.
    let ds = web(12);
    let (production, new) = rankers(&ds);
    let gain = ClickGain::DcgAt(10);
    let base = ClickSimulation {
        sessions: 2_000,
        eta: 1.5,
        ..Default::default()
    };
    let (v, t) = truth(&ds, &base, &production, &new, gain);
    let (mut ips, mut snips) = (Vec::new(), Vec::new());
    for seed in 0..40 {
        let log = ClickSimulation {
            seed,
            ..base.clone()
        }
        .simulate(&ds, &production)
        .unwrap();
        let est = |e| {
            estimate_click_metric(&log, &ds, &new, &settings(e, gain))
                .unwrap()
                .value
        };
        ips.push(est(Estimator::Ips) / v - 1.0);
        snips.push(est(Estimator::Snips) / (v / t) - 1.0);
    }
    let rmse = |e: &[f64]| (e.iter().map(|x| x * x).sum::<f64>() / e.len() as f64).sqrt();
    let (a, b) = (rmse(&ips), rmse(&snips));
    println!("relative RMSE over 40 logs: IPS {a:.4}, SNIPS {b:.4}");
    assert!(b < a, "SNIPS {b} against IPS {a}");
}

#[test]
fn the_bootstrap_is_the_same_at_any_thread_count() {
    let ds = web(13);
    let (production, new) = rankers(&ds);
    let log = ClickSimulation {
        sessions: 3_000,
        ..Default::default()
    }
    .simulate(&ds, &production)
    .unwrap();
    let s = CounterfactualSettings {
        bootstrap: 64,
        seed: 9,
        ..settings(Estimator::Snips, ClickGain::DcgAt(10))
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| estimate_click_metric(&log, &ds, &new, &s).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(3));
    let other =
        estimate_click_metric(&log, &ds, &new, &CounterfactualSettings { seed: 10, ..s }).unwrap();
    assert_ne!(one.bootstrap, other.bootstrap);
    assert_eq!(one.value, other.value);
}

fn swapped(session: u64, docid: &str, rank: u32, clicked: bool, production: u32) -> ClickRecord {
    ClickRecord {
        production_rank: Some(production),
        ..record(
            session,
            docid,
            rank,
            clicked,
            [1.0, 0.5, 0.25][rank as usize - 1],
        )
    }
}

fn dr_settings(
    gain: ClickGain,
    direct: Vec<f64>,
    logging: LoggingPolicy,
) -> CounterfactualSettings {
    CounterfactualSettings {
        direct: Some(direct),
        logging,
        ..settings(Estimator::Dr, gain)
    }
}

#[test]
fn dr_on_a_two_session_swap_log_gives_the_hand_computed_estimate() {
    let f = features();
    // The new ranker orders a2, a0, a1. Session 1 swapped ranks 1 and 3 (a2 shown first, clicked; a0 shown third,
    // clicked); session 2 shows the production order a0, a1, a2 and clicks a1. p = 1, ½, ¼ by displayed rank.
    let log = vec![
        swapped(1, "a2", 1, true, 3),
        swapped(1, "a1", 2, false, 2),
        swapped(1, "a0", 3, true, 1),
        swapped(2, "a0", 1, false, 1),
        swapped(2, "a1", 2, true, 2),
        swapped(2, "a2", 3, false, 3),
    ];
    let scores = [2.0, 1.0, 3.0];
    let model = vec![0.5, 0.2, 0.8];
    // Expected examination under swap-top with n = 3 (q = ¼): ρ(a0) = ½·1 + ¼(½ + ¼) = 11/16,
    // ρ(a1) = ¾·½ + ¼·1 = 5/8, ρ(a2) = ¾·¼ + ¼·1 = 7/16.
    let (r0, r1, r2) = (11.0 / 16.0, 5.0 / 8.0, 7.0 / 16.0);
    // clicks@1: only a2 (new rank 1) counts. Session 1: 0.8 + (1 − 1·0.8)/ρ₂ = 0.8 + 16/35; session 2:
    // 0.8 + (0 − ¼·0.8)/ρ₂ = 0.8 − 16/35. Mean 0.8, se √((2·(16/35)²)/1/2) = 16/35.
    let s = dr_settings(
        ClickGain::ClicksAt(1),
        model.clone(),
        LoggingPolicy::SwapWithTop,
    );
    let e = estimate_click_metric(&log, &f, &scores, &s).unwrap();
    assert!((e.value - 0.8).abs() < 1e-15, "{}", e.value);
    assert!((e.normal.std_error - 16.0 / 35.0).abs() < 1e-12);
    assert_eq!((e.estimator, e.sessions, e.clicks), (Estimator::Dr, 2, 3));
    // dcg@3: λ = 1 (a2), 1/log₂3 (a0), ½ (a1); every displayed document adds λ·(R̂ + (c − p·R̂)/ρ).
    let l0 = 1.0 / 3f64.log2();
    let s1 = (0.8 + (1.0 - 1.0 * 0.8) / r2)
        + 0.5 * (0.2 + (0.0 - 0.5 * 0.2) / r1)
        + l0 * (0.5 + (1.0 - 0.25 * 0.5) / r0);
    let s2 = l0 * (0.5 + (0.0 - 1.0 * 0.5) / r0)
        + 0.5 * (0.2 + (1.0 - 0.5 * 0.2) / r1)
        + (0.8 + (0.0 - 0.25 * 0.8) / r2);
    let s = dr_settings(
        ClickGain::DcgAt(3),
        model.clone(),
        LoggingPolicy::SwapWithTop,
    );
    let e = estimate_click_metric(&log, &f, &scores, &s).unwrap();
    assert!((e.value - (s1 + s2) / 2.0).abs() < 1e-12);
    assert!((e.normal.std_error - (s1 - s2).abs() / 2.0).abs() < 1e-12);
    // Under the deterministic policy ρ is the shown rank's p, and DR is IPS: the same log's IPS value.
    let det = dr_settings(ClickGain::DcgAt(3), model, LoggingPolicy::Deterministic);
    let ips = settings(Estimator::Ips, ClickGain::DcgAt(3));
    let a = estimate_click_metric(&log, &f, &scores, &det)
        .unwrap()
        .value;
    let b = estimate_click_metric(&log, &f, &scores, &ips)
        .unwrap()
        .value;
    assert!((a - b).abs() < 1e-12, "{a} {b}");
}

#[test]
fn dr_refuses_what_it_cannot_estimate() {
    let f = features();
    let scores = [2.0, 1.0, 3.0];
    let err = |log: &[ClickRecord], s: &CounterfactualSettings| {
        estimate_click_metric(log, &f, &scores, s)
            .unwrap_err()
            .to_string()
    };
    let swap = dr_settings(
        ClickGain::ClicksAt(1),
        vec![0.1; 3],
        LoggingPolicy::SwapWithTop,
    );
    // A plain log has no production ranks.
    let e = err(&log(), &swap);
    assert!(
        e.contains("session 1") && e.contains("production rank"),
        "{e}"
    );
    // DR needs every shown rank's propensity, not only the clicked ones'.
    let mut no_p = log();
    no_p[1].propensity = None;
    let e = err(
        &no_p,
        &dr_settings(
            ClickGain::ClicksAt(1),
            vec![0.1; 3],
            LoggingPolicy::Deterministic,
        ),
    );
    assert!(e.contains("session 1") && e.contains("a1 at rank 2"), "{e}");
    let e = err(&log(), &settings(Estimator::Dr, ClickGain::ClicksAt(1)));
    assert!(e.contains("needs a direct model"), "{e}");
    let e = err(
        &log(),
        &CounterfactualSettings {
            direct: Some(vec![0.1; 3]),
            ..settings(Estimator::Ips, ClickGain::ClicksAt(1))
        },
    );
    assert!(e.contains("only by the dr estimator"), "{e}");
    let short = dr_settings(
        ClickGain::ClicksAt(1),
        vec![0.1; 2],
        LoggingPolicy::Deterministic,
    );
    assert!(err(&log(), &short).contains("2 direct-model values for the 3 rows"));
    let nan = dr_settings(
        ClickGain::ClicksAt(1),
        vec![0.1, f64::NAN, 0.1],
        LoggingPolicy::Deterministic,
    );
    assert!(err(&log(), &nan).contains("row 2 is not finite"));
    assert!(LoggingPolicy::parse("swap").is_err());
    assert_eq!(Estimator::parse("dr").unwrap(), Estimator::Dr);
}

#[test]
fn dr_is_ips_under_a_deterministic_logging_policy() {
    // ρ(d) = p(k(d)): the correction cancels the direct term, whatever the model.
    let ds = web(15);
    let (production, new) = rankers(&ds);
    let log = ClickSimulation {
        sessions: 3_000,
        seed: 2,
        ..Default::default()
    }
    .simulate(&ds, &production)
    .unwrap();
    let model: Vec<f64> = (0..ds.n_docs())
        .map(|i| ((i * 13) % 7) as f64 / 7.0)
        .collect();
    let gain = ClickGain::DcgAt(10);
    let ips = estimate_click_metric(&log, &ds, &new, &settings(Estimator::Ips, gain)).unwrap();
    let dr = estimate_click_metric(
        &log,
        &ds,
        &new,
        &dr_settings(gain, model, LoggingPolicy::Deterministic),
    )
    .unwrap();
    assert!(
        (dr.value - ips.value).abs() < 1e-9 * ips.value,
        "{} {}",
        dr.value,
        ips.value
    );
    assert!((dr.normal.std_error - ips.normal.std_error).abs() < 1e-9);
}

#[test]
fn dr_is_unbiased_on_swap_logs_and_has_less_error_than_ips_with_a_good_model() {
    // Logs with the swap intervention (a randomised logging policy), 30 seeds each: the error of each estimate
    // from the exact value. IPS and DR with any model are unbiased; DR with the true relevance as its model has
    // the smaller spread; DR's error shrinks with the sessions.
    let ds = web(14);
    let (production, new) = rankers(&ds);
    let gain = ClickGain::DcgAt(10);
    let base = ClickSimulation {
        intervention: Intervention::SwapWithTop,
        eta: 1.5,
        ..Default::default()
    };
    let (v, _) = truth(&ds, &base, &production, &new, gain);
    let good = relevance(&ds, &base);
    let flat = vec![0.5; ds.n_docs()];
    let run = |sessions: u64, seeds: u64| {
        let mut errors = vec![Vec::new(); 3];
        for seed in 0..seeds {
            let sim = ClickSimulation {
                sessions,
                seed: 100 + seed,
                ..base.clone()
            };
            let log = sim.simulate(&ds, &production).unwrap();
            let est = |s: &CounterfactualSettings| {
                estimate_click_metric(&log, &ds, &new, s).unwrap().value - v
            };
            errors[0].push(est(&settings(Estimator::Ips, gain)));
            errors[1].push(est(&dr_settings(
                gain,
                good.clone(),
                LoggingPolicy::SwapWithTop,
            )));
            errors[2].push(est(&dr_settings(
                gain,
                flat.clone(),
                LoggingPolicy::SwapWithTop,
            )));
        }
        errors
    };
    let mean = |e: &[f64]| e.iter().sum::<f64>() / e.len() as f64;
    let rmse = |e: &[f64]| (e.iter().map(|x| x * x).sum::<f64>() / e.len() as f64).sqrt();
    let big = run(2_000, 30);
    for (name, e) in ["ips", "dr (true model)", "dr (flat model)"]
        .iter()
        .zip(&big)
    {
        let m = mean(e);
        let sd = (e.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (e.len() - 1) as f64).sqrt();
        println!(
            "{name}: mean error {m:.5} (sd of the mean {:.5}), rmse {:.5}, truth {v:.5}",
            sd / 30f64.sqrt(),
            rmse(e)
        );
        // Unbiased: the mean error over 30 logs within 3.5 standard errors of zero.
        assert!(m.abs() < 3.5 * sd / 30f64.sqrt(), "{name}: {m} (sd {sd})");
    }
    assert!(
        rmse(&big[1]) < 0.8 * rmse(&big[0]),
        "{} {}",
        rmse(&big[1]),
        rmse(&big[0])
    );
    let small = run(250, 30);
    assert!(
        rmse(&big[2]) < 0.5 * rmse(&small[2]),
        "{} {}",
        rmse(&big[2]),
        rmse(&small[2])
    );
    assert!(rmse(&big[1]) < 0.5 * rmse(&small[1]));
}

#[test]
fn a_click_model_file_is_read_as_the_direct_model_of_the_feature_rows() {
    let dir = tempfile::tempdir().unwrap();
    // The model knows a2, a0 and a document the features lack; the features add (qb, b0), which it lacks, and a1.
    let pair = |q: &str, d: &str| (q.to_string(), d.to_string());
    let model = FittedClickModel {
        pairs: vec![pair("qa", "a2"), pair("qa", "a0"), pair("qz", "z9")],
        params: ClickModelParams::Pbm {
            attr: vec![0.75, 0.25, 0.5],
            exam: vec![1.0, 0.5, 0.25],
        },
        iterations: 0,
    };
    let path = dir.path().join("pbm.json");
    model.write_json(&path).unwrap();
    let file = dir.path().join("features.txt");
    std::fs::write(
        &file,
        "0 qid:qa 1:1 #docid = a0\n0 qid:qa 1:2 #docid = a1\n0 qid:qa 1:3 #docid = a2\n\
         0 qid:qb 1:1 #docid = b0\n",
    )
    .unwrap();
    let f = ltr_data::read_dataset(&file, &Default::default()).unwrap();
    let d = DirectModel::read(&path, &f).unwrap();
    assert_eq!(d.values, [0.25, 0.0, 0.75, 0.0]);
    assert_eq!(d.missing, 2);
    let note = d.note().unwrap();
    assert!(
        note.starts_with("2 of 4 rows have no (qid, docid)") && note.contains("pbm.json"),
        "{note}"
    );
    assert_eq!(
        ltr_clicks::direct_model_from_click_model(&model, &f),
        (d.values.clone(), 2)
    );
    // Every row known: nothing to say.
    let all = FittedClickModel {
        pairs: vec![pair("qa", "a0"), pair("qa", "a1"), pair("qa", "a2")],
        params: ClickModelParams::Cascade {
            attr: vec![0.5, 0.125, 1.0],
        },
        iterations: 0,
    };
    all.write_json(&path).unwrap();
    let d = DirectModel::read(&path, &features()).unwrap();
    assert_eq!(
        (d.values.as_slice(), d.missing),
        ([0.5, 0.125, 1.0].as_slice(), 0)
    );
    assert_eq!(d.note(), None);
    // A file that is not a click model, and no file, are refused naming it.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"model\": \"pbm\"}").unwrap();
    for p in [bad, dir.path().join("absent.json")] {
        let e = DirectModel::read(&p, &f).unwrap_err().to_string();
        assert!(e.contains(p.file_name().unwrap().to_str().unwrap()), "{e}");
    }
}

/// A log over more queries than the evaluated features (a test split): with `SessionScope::FeatureQueries` the
/// estimate is the one of the sessions of the features' queries, and counts the others; read whole, the log is
/// refused at the first session of another query, naming the way to read it in part.
#[test]
fn a_scoped_estimate_reads_only_the_sessions_of_the_feature_queries() {
    let f = features();
    let scores = [2.0, 1.0, 3.0];
    let mut wide = log();
    for (k, r) in log().into_iter().enumerate() {
        wide.insert(
            3 + k,
            ClickRecord {
                session: 10 + r.session,
                qid: "qz".into(),
                ..r
            },
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.tsv");
    write_click_log(&path, &wide).unwrap();
    let s = CounterfactualSettings {
        scope: SessionScope::FeatureQueries,
        ..settings(Estimator::Ips, ClickGain::ClicksAt(1))
    };
    let scoped = estimate_click_metric_from_log(&path, &f, &scores, &s).unwrap();
    let cut = estimate_click_metric(&log(), &f, &scores, &s).unwrap();
    assert_eq!(scoped.value, 2.0);
    assert_eq!(
        scoped,
        ltr_clicks::CounterfactualEstimate {
            sessions_outside: 2,
            ..cut
        }
    );
    assert!(scoped
        .to_string()
        .contains("2 sessions of other queries skipped"));
    let every = CounterfactualSettings {
        scope: SessionScope::Every,
        ..s
    };
    let e = estimate_click_metric_from_log(&path, &f, &scores, &every)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("session 11") && e.contains("qz") && e.contains("--click-sessions"),
        "{e}"
    );
}
