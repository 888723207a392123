//! Tests of `src/click_training.rs`.

use ltr_clicks::*;
use ltr_data::{generate_letor_like, ClickWeighting, Dataset, SyntheticConfig};

/// Synthetic data without docids, so its documents are named `d0`, `d1`, … as in a simulated log.
fn data() -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 12,
        min_docs: 6,
        max_docs: 15,
        features: 4,
        grades: 3,
        noise: 0.5,
        outlier_fraction: 0.0,
        query_level_norm: true,
        seed: 2,
    })
    .unwrap()
    .without_docids()
}

fn rec(session: u64, qid: &str, docid: &str, rank: u32, clicked: bool, p: f64) -> ClickRecord {
    ClickRecord {
        session,
        qid: qid.into(),
        docid: docid.into(),
        rank,
        clicked,
        propensity: Some(p),
        production_rank: None,
    }
}

#[test]
fn identical_clicks_merge_and_weights_follow_the_propensities() {
    let ds = data();
    let q0 = ds.qids()[0].clone();
    let q1 = ds.qids()[1].clone();
    let log = vec![
        rec(0, &q0, "d2", 1, false, 1.0),
        rec(0, &q0, "d0", 2, true, 0.5),
        rec(1, &q0, "d0", 1, true, 1.0),
        rec(1, &q0, "d2", 2, true, 0.5),
        rec(2, &q0, "d2", 1, false, 1.0),
        rec(2, &q0, "d0", 2, true, 0.5),
        rec(3, &q1, "d1", 1, false, 1.0),
        rec(4, &q1, "d4", 1, true, 1.0),
    ];
    let (t, stats) = click_training_set(&log, &ds, &PropensitySource::Logged).unwrap();
    assert_eq!(
        stats,
        ClickTrainingStats {
            sessions: 5,
            sessions_without_clicks: 1,
            clicks: 4,
            clicks_dropped: 1,
            queries: 3,
            sessions_outside: 0
        }
    );
    // Sorted by (rows, clicked, p): d0 clicked at p 0.5 (twice), at p 1, then d2 clicked at p 0.5.
    assert_eq!(
        t.qids(),
        [format!("{q0}/c0"), format!("{q0}/c1"), format!("{q0}/c2")]
    );
    assert_eq!(t.query_weights().unwrap(), [2.0, 1.0, 1.0]);
    assert_eq!(t.propensities().unwrap(), [0.5, 1.0, 0.5]);
    assert_eq!(t.labels(), [1.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
    let dense = |d: &Dataset, r: usize| {
        (0..d.n_features())
            .map(|j| d.row(r).get(j))
            .collect::<Vec<_>>()
    };
    assert_eq!(dense(&t, 0), dense(&ds, 0));
    assert_eq!(dense(&t, 1), dense(&ds, 2));
    // IPS: 2/0.5, 1/1, 1/0.5 normalised; clipped at 0.8: 2/0.8, 1, 1/0.8; naive: the counts.
    let ips = t.click_weights(ClickWeighting::Ips { clip: 0.0 }).unwrap();
    assert_eq!(ips, [4.0 / 7.0, 1.0 / 7.0, 2.0 / 7.0]);
    let clipped = t.click_weights(ClickWeighting::Ips { clip: 0.8 }).unwrap();
    let total = 2.5 + 1.0 + 1.25;
    for (a, b) in clipped.iter().zip([2.5 / total, 1.0 / total, 1.25 / total]) {
        assert!((a - b).abs() < 1e-15);
    }
    assert_eq!(
        t.click_weights(ClickWeighting::Naive).unwrap(),
        [0.5, 0.25, 0.25]
    );
    assert_eq!(ds.click_weights(ClickWeighting::Naive), None);
    // A rank table instead of the logged column.
    let (t, _) = click_training_set(&log, &ds, &PropensitySource::ByRank(vec![1.0, 0.25])).unwrap();
    assert_eq!(t.propensities().unwrap(), [0.25, 1.0, 0.25]);
}

#[test]
fn bad_joins_name_the_session() {
    let ds = data();
    let q0 = ds.qids()[0].clone();
    let err = |log: Vec<ClickRecord>, src: PropensitySource| {
        click_training_set(&log, &ds, &src).unwrap_err().to_string()
    };
    let e = err(
        vec![rec(7, "nope", "d0", 1, true, 1.0)],
        PropensitySource::Logged,
    );
    assert!(e.contains("session 7") && e.contains("qid `nope`"), "{e}");
    let e = err(
        vec![
            rec(3, &q0, "d0", 1, true, 1.0),
            rec(3, &q0, "zz", 2, false, 0.5),
        ],
        PropensitySource::Logged,
    );
    assert!(e.contains("session 3") && e.contains("`zz`"), "{e}");
    let e = err(
        vec![
            rec(3, &q0, "d0", 1, true, 1.0),
            rec(3, &q0, "d0", 2, false, 0.5),
        ],
        PropensitySource::Logged,
    );
    assert!(e.contains("displayed twice"), "{e}");
    let mut r = rec(4, &q0, "d0", 3, true, 1.0);
    r.propensity = None;
    let e = err(
        vec![r.clone(), rec(4, &q0, "d1", 4, false, 1.0)],
        PropensitySource::Logged,
    );
    assert!(e.contains("no propensity"), "{e}");
    // Below the table, the last value.
    let (t, _) = click_training_set(
        &[r, rec(4, &q0, "d1", 4, false, 1.0)],
        &ds,
        &PropensitySource::ByRank(vec![1.0, 0.5]),
    )
    .unwrap();
    assert_eq!(t.propensities().unwrap(), [0.5]);
    let e = err(
        vec![rec(1, &q0, "d0", 1, false, 1.0)],
        PropensitySource::Logged,
    );
    assert!(e.contains("no usable click"), "{e}");
    let e = err(vec![], PropensitySource::ByRank(vec![1.0, 0.0]));
    assert!(e.contains("not a positive number"), "{e}");
}

#[test]
fn a_simulated_log_joins_back_to_its_data() {
    let ds = data();
    let scores: Vec<f64> = (0..ds.n_docs()).map(|i| (i % 7) as f64).collect();
    let sim = ClickSimulation {
        sessions: 2000,
        top: 5,
        ..Default::default()
    };
    let log = sim.simulate(&ds, &scores).unwrap();
    let (t, stats) = click_training_set(&log, &ds, &PropensitySource::Logged).unwrap();
    let clicks = log.iter().filter(|r| r.clicked).count();
    assert_eq!(stats.clicks, clicks);
    assert_eq!(
        t.query_weights().unwrap().iter().sum::<f64>(),
        clicks as f64
    );
    // Without an intervention a query always shows the same 5 documents at the same ranks: at most 5 groups.
    assert!(stats.queries <= 5 * ds.n_queries());
    // Every training query holds one clicked document and the propensity of its displayed rank, 1/rank.
    for q in 0..t.n_queries() {
        let labels = &t.labels()[t.query_range(q)];
        assert_eq!(labels.iter().filter(|&&l| l == 1.0).count(), 1);
        let p = t.propensities().unwrap()[q];
        assert!((1..=5).any(|r| p == 1.0 / r as f64), "{p}");
    }
    // Pieces of a simulation are the simulation.
    let a = sim.simulate_sessions(&ds, &scores, 0..700).unwrap();
    let b = sim.simulate_sessions(&ds, &scores, 700..2000).unwrap();
    assert_eq!([a, b].concat(), log);
    // The log read from its file a session at a time gives the same set, and the same propensity-table set.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.tsv");
    write_click_log(&path, &log).unwrap();
    assert_eq!(
        click_training_set_from_log(&path, &ds, &PropensitySource::Logged, SessionScope::Every)
            .unwrap(),
        (t, stats)
    );
    let table = PropensitySource::ByRank(vec![1.0, 0.6, 0.3]);
    assert_eq!(
        click_training_set_from_log(&path, &ds, &table, SessionScope::Every).unwrap(),
        click_training_set(&log, &ds, &table).unwrap()
    );
}

/// Joining a simulation by position gives the training set that joining its log by name gives, bit for bit:
/// with docids and without, with the swap intervention (production ranks), with a propensity table, and with
/// duplicate docids (both refuse the same session).
#[test]
fn simulations_joined_by_position_equal_their_logs_joined_by_name() {
    let unnamed = data();
    let named_by = |name: &dyn Fn(usize) -> String| {
        let mut ids = ltr_data::TextColumn::new();
        for i in 0..unnamed.n_docs() {
            ids.push(&name(i));
        }
        unnamed.clone().with_docids(ids).unwrap()
    };
    let named = named_by(&|i| format!("doc-{}", 1000 - i));
    let table = PropensitySource::ByRank(vec![1.0, 0.5, 0.3]);
    for (ds, intervention, source) in [
        (&named, Intervention::None, PropensitySource::Logged),
        (&named, Intervention::SwapWithTop, table.clone()),
        (&unnamed, Intervention::None, PropensitySource::Logged),
        (
            &unnamed,
            Intervention::SwapWithTop,
            PropensitySource::Logged,
        ),
    ] {
        let scores: Vec<f64> = (0..ds.n_docs()).map(|i| (i % 5) as f64).collect();
        let sim = ClickSimulation {
            sessions: 1500,
            top: 6,
            intervention,
            ..Default::default()
        };
        let log = sim.simulate(ds, &scores).unwrap();
        let compact = sim.simulate_compact(ds, &scores, 0..1500).unwrap();
        let by_name = click_training_set(&log, ds, &source).unwrap();
        let mut b = ClickTrainingBuilder::new(ds, source.clone()).unwrap();
        b.add_simulated(ds, &compact[..900]).unwrap();
        b.add_simulated(ds, &compact[900..]).unwrap();
        let by_position = b.finish().unwrap();
        assert_eq!(by_name.1, by_position.1);
        let (x, y) = (&by_name.0, &by_position.0);
        assert_eq!(x.labels(), y.labels());
        assert_eq!(x.query_offsets(), y.query_offsets());
        assert_eq!(x.qids(), y.qids());
        assert_eq!(x.query_weights(), y.query_weights());
        assert_eq!(x.propensities(), y.propensities());
        for i in 0..x.n_docs() {
            for j in 0..x.n_features() {
                assert_eq!(x.row(i).get(j).to_bits(), y.row(i).get(j).to_bits());
            }
        }
    }
    // Two documents of a query sharing a docid: both joins refuse the first clicked session that shows them.
    let twice = named_by(&|i| {
        if i == 1 {
            "doc-0".into()
        } else {
            format!("doc-{i}")
        }
    });
    let scores: Vec<f64> = (0..twice.n_docs()).map(|i| i as f64).collect();
    let sim = ClickSimulation {
        sessions: 300,
        ..Default::default()
    };
    let by_name = click_training_set(
        &sim.simulate(&twice, &scores).unwrap(),
        &twice,
        &PropensitySource::Logged,
    )
    .unwrap_err()
    .to_string();
    let mut b = ClickTrainingBuilder::new(&twice, PropensitySource::Logged).unwrap();
    let by_position = b
        .add_simulated(
            &twice,
            &sim.simulate_compact(&twice, &scores, 0..300).unwrap(),
        )
        .unwrap_err()
        .to_string();
    assert_eq!(by_name, by_position);
    assert!(by_name.contains("displayed twice"), "{by_name}");
    // Sessions simulated on another dataset are refused, not joined by position.
    let other = named.clone();
    let scores = vec![0.0; other.n_docs()];
    let compact = ClickSimulation::default()
        .simulate_compact(&other, &scores, 0..10)
        .unwrap();
    let mut b = ClickTrainingBuilder::new(&named, PropensitySource::Logged).unwrap();
    let err = b.add_simulated(&other, &compact).unwrap_err().to_string();
    assert!(err.contains("own feature set"), "{err}");
}
