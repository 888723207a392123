//! Tests of `src/clicks.rs`.

use ltr_clicks::*;
use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};

fn data() -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 30,
        min_docs: 12,
        max_docs: 30,
        features: 5,
        grades: 3,
        noise: 0.5,
        outlier_fraction: 0.0,
        query_level_norm: true,
        seed: 4,
    })
    .unwrap()
}

#[test]
fn simulation_is_the_same_at_any_thread_count() {
    let ds = data();
    let scores: Vec<f64> = (0..ds.n_docs()).map(|i| ((i * 37) % 101) as f64).collect();
    let sim = ClickSimulation {
        sessions: 3000,
        seed: 9,
        ..Default::default()
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| sim.simulate(&ds, &scores).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one.len(), 3000 * 10);
    let other = ClickSimulation {
        seed: 10,
        ..sim.clone()
    }
    .simulate(&ds, &scores)
    .unwrap();
    assert_ne!(one, other);
}

#[test]
fn position_based_clicks_follow_examination_times_relevance() {
    // Every document of the top grade: the click rate at rank r is (1/r)^η · ε₊.
    let mut ds = data();
    let n = ds.n_docs();
    let labels = vec![2.0f32; n];
    ds = Dataset::new(
        ds.features().clone(),
        labels,
        ds.query_offsets().to_vec(),
        ds.qids().to_vec(),
    )
    .unwrap();
    let scores = vec![0.0; n];
    let sim = ClickSimulation {
        eta: 2.0,
        eps_plus: 0.8,
        sessions: 200_000,
        ..Default::default()
    };
    let log = sim.simulate(&ds, &scores).unwrap();
    for rank in [1u32, 2, 4] {
        let at: Vec<&ClickRecord> = log.iter().filter(|r| r.rank == rank).collect();
        let ctr = at.iter().filter(|r| r.clicked).count() as f64 / at.len() as f64;
        let want = 0.8 / (rank as f64).powi(2);
        assert!((ctr - want).abs() < 0.005, "rank {rank}: {ctr} vs {want}");
        assert_eq!(at[0].propensity, Some(1.0 / (rank as f64).powi(2)));
    }
    // ULTRA's curve.
    let ultra = ClickSimulation {
        model: ClickModel::PositionBased(Examination::Ultra),
        ..Default::default()
    };
    assert_eq!(ultra.examination(3), 0.48);
    assert_eq!(ultra.examination(25), 0.06);
}

#[test]
fn streamed_logs_are_the_written_logs_byte_for_byte() {
    let ds = data();
    let scores: Vec<f64> = (0..ds.n_docs()).map(|i| ((i * 7) % 13) as f64).collect();
    let dir = tempfile::tempdir().unwrap();
    for (model, intervention) in [
        (
            ClickModel::PositionBased(Examination::Ultra),
            Intervention::SwapWithTop,
        ),
        (ClickModel::Cascade, Intervention::None),
        (ClickModel::DynamicBayesian, Intervention::None),
    ] {
        let sim = ClickSimulation {
            model,
            intervention,
            sessions: 70_000,
            ..Default::default()
        };
        let (a, b) = (dir.path().join("a.tsv"), dir.path().join("b.tsv"));
        write_click_log(&a, &sim.simulate(&ds, &scores).unwrap()).unwrap();
        let (shown, _) = sim.write_log(&b, &ds, &scores).unwrap();
        assert_eq!(shown, 700_000);
        assert!(
            std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap(),
            "{model:?}"
        );
    }
}

#[test]
fn cascade_clicks_at_most_once_and_logs_round_trip() {
    let ds = data();
    let scores: Vec<f64> = ds.labels().iter().map(|&l| l as f64).collect();
    let sim = ClickSimulation {
        model: ClickModel::Cascade,
        sessions: 500,
        ..Default::default()
    };
    let log = sim.simulate(&ds, &scores).unwrap();
    for s in log.chunk_by(|a, b| a.session == b.session) {
        assert!(s.iter().filter(|r| r.clicked).count() <= 1);
    }
    assert!(log.iter().any(|r| r.clicked));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("clicks.tsv");
    write_click_log(&p, &log).unwrap();
    assert_eq!(read_click_log(&p).unwrap(), log);
}

#[test]
fn swap_interventions_recover_the_simulated_propensities() {
    let ds = data();
    let scores: Vec<f64> = ds.labels().iter().map(|&l| l as f64).collect();
    let sim = ClickSimulation {
        sessions: 400_000,
        intervention: Intervention::SwapWithTop,
        seed: 3,
        ..Default::default()
    };
    let log = sim.simulate(&ds, &scores).unwrap();
    // Every line of a swapped or unswapped session records its production rank.
    assert!(log.iter().all(|r| r.production_rank.is_some()));
    let est = estimate_propensities(&log, 2.576).unwrap();
    assert_eq!(est.len(), 10);
    // The log read from its file a session at a time gives the same estimate.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("swaps.tsv");
    write_click_log(&p, &log).unwrap();
    assert_eq!(estimate_propensities_from_log(&p, 2.576).unwrap(), est);
    for e in &est {
        let truth = 1.0 / e.rank as f64; // eta = 1: p_k / p_1 = 1/k
        assert!(
            e.low <= truth && truth <= e.high,
            "rank {}: {truth} outside [{}, {}]",
            e.rank,
            e.low,
            e.high
        );
        assert!(
            (e.value - truth).abs() < 0.03,
            "rank {}: {} vs {truth}",
            e.rank,
            e.value
        );
    }
    // A log without interventions cannot be used.
    let plain = ClickSimulation {
        sessions: 100,
        ..Default::default()
    }
    .simulate(&ds, &scores)
    .unwrap();
    assert!(estimate_propensities(&plain, 1.96)
        .unwrap_err()
        .to_string()
        .contains("swap"));
    // The interval needs a positive, finite z.
    for z in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let e = estimate_propensities(&log, z).unwrap_err().to_string();
        assert!(e.contains("positive number of standard errors"), "{e}");
    }
    assert_eq!(
        Intervention::parse("swap-top").unwrap(),
        Intervention::SwapWithTop
    );
    assert_eq!(Intervention::parse("none").unwrap(), Intervention::None);
    assert!(Intervention::parse("swap").is_err());
}

#[test]
fn malformed_logs_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("session\tqid\tdoc\trank\tclicked\n", 1, "header"),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\n",
            2,
            "fields",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\nx\tq\td\t1\t0\n",
            2,
            "bad session",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\td\t0\t0\n",
            2,
            "bad rank",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t2\n",
            2,
            "bad click",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\tpropensity\n1\tq\td\t1\t1\t0\n",
            2,
            "bad propensity",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\tpropensity\n1\tq\td\t1\t1\tNaN\n",
            2,
            "bad propensity",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t1\n1\tq\te\t3\t0\n",
            3,
            "rank after rank 1",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t1\n1\tr\te\t2\t0\n",
            3,
            "changes query",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\td\t1\t1\n2\tq\te\t1\t0\n1\tq\tf\t1\t0\n",
            4,
            "reappears",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\td\t2\t1\n",
            2,
            "below rank 1",
        ),
        ("", 1, "empty"),
        (
            "session\tqid\tdocid\trank\tclicked\tpropensity\tproduction_rank\n1\tq\td\t1\t1\t\t0\n",
            2,
            "bad production rank",
        ),
    ];
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("c{i}.tsv"));
        std::fs::write(&p, text).unwrap();
        let e = read_click_log(&p).unwrap_err().to_string();
        assert!(
            e.contains(&format!("c{i}.tsv:{line}:")) && e.contains(what),
            "{e}"
        );
    }
    // Comments, blank lines and an empty propensity are fine.
    let p = dir.path().join("ok.tsv");
    std::fs::write(
        &p,
        "# a log\nsession\tqid\tdocid\trank\tclicked\tpropensity\n\n7\tq\td\t1\t1\t\n",
    )
    .unwrap();
    assert_eq!(read_click_log(&p).unwrap()[0].propensity, None);
}

#[test]
fn propensity_tables_round_trip_and_fill_skipped_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.tsv");
    let est = |rank, value| PropensityEstimate {
        rank,
        value,
        low: value / 2.0,
        high: value * 1.5,
        sessions: 10,
    };
    write_propensity_table(&p, &[est(1, 1.0), est(2, 0.5), est(4, 0.2)]).unwrap();
    // Rank 3 had no estimate: it takes rank 2's value.
    assert_eq!(read_propensity_table(&p).unwrap(), [1.0, 0.5, 0.5, 0.2]);
    for (body, line, what) in [
        ("rank\tpropensity\n2\t0.5\n", 2, "rank 1"),
        ("rank\tpropensity\n1\t1\n1\t0.5\n", 3, "rank of 2 or more"),
        ("rank\tpropensity\n1\t0\n", 2, "positive"),
        ("rank\tpropensity\n1\tnan\n", 2, "positive"),
        ("r\tp\n1\t1\n", 1, "header"),
        ("rank\tpropensity\n", 1, "without ranks"),
    ] {
        std::fs::write(&p, body).unwrap();
        let e = read_propensity_table(&p).unwrap_err().to_string();
        assert!(
            e.contains(&format!("t.tsv:{line}")) && e.contains(what),
            "{body:?}: {e}"
        );
    }
}
