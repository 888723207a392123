//! Tests of `src/click_sessions.rs`.

use ltr_clicks::*;
use ltr_data::Dataset;

use crate::common;

/// Two queries of three documents a0..a2 and b0..b2; feature 1 is ten times the row number.
fn features() -> Dataset {
    common::two_queries(&["a0", "a1", "a2", "b0", "b1", "b2"], 3)
}

/// A session showing `docs` of `qid` at ranks 1, 2, … with `clicks`.
fn session(id: u64, qid: &str, docs: &[&str], clicks: &[bool]) -> Vec<ClickRecord> {
    common::session(id, qid, docs, clicks, |_| None)
}

fn error(log: &[ClickRecord]) -> String {
    click_session_set(log, &features()).unwrap_err().to_string()
}

#[test]
fn identical_sessions_are_one_weighted_query_with_positions() {
    let f = features();
    let mut log = Vec::new();
    for id in 0..3 {
        log.extend(session(
            id,
            "qa",
            &["a2", "a0", "a1"],
            &[false, true, false],
        ));
    }
    log.extend(session(
        3,
        "qa",
        &["a2", "a0", "a1"],
        &[false, false, false],
    ));
    log.extend(session(4, "qb", &["b1", "b0"], &[true, true]));
    log.extend(session(5, "qa", &["a2", "a0", "a1"], &[true, false, true]));
    let (ds, stats) = click_session_set(&log, &f).unwrap();
    assert_eq!(
        stats,
        SessionSetStats {
            sessions: 6,
            sessions_without_clicks: 1,
            clicks: 7,
            queries: 3,
            sessions_outside: 0
        }
    );
    // Ordered by displayed rows, then clicks: qa's two patterns (no click first at rank 1), then qb's.
    assert_eq!(ds.qids(), ["qa", "qa", "qb"]);
    assert_eq!(ds.query_weights().unwrap(), [3.0, 1.0, 1.0]);
    assert_eq!(ds.labels(), [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0]);
    assert_eq!(ds.positions().unwrap(), [0, 1, 2, 0, 1, 2, 0, 1]);
    let first: Vec<f32> = (0..ds.n_docs()).map(|i| ds.row(i).get(0)).collect();
    assert_eq!(ds.docids().unwrap().get(0), "a2");
    assert_eq!(first, [20.0, 0.0, 10.0, 20.0, 0.0, 10.0, 40.0, 30.0]);
    // The order of the sessions in the log does not matter.
    let mut reordered = session(9, "qb", &["b1", "b0"], &[true, true]);
    reordered.extend(log[..12].iter().cloned());
    reordered.extend(log[14..].iter().cloned());
    assert_eq!(click_session_set(&reordered, &f).unwrap().0, ds);
}

#[test]
fn sessions_that_do_not_hold_together_are_refused_naming_the_session() {
    let mut bad = session(7, "qa", &["a0", "a1", "a2"], &[true, false, false]);
    bad[2].rank = 2;
    assert!(error(&bad).contains("session 7") && error(&bad).contains("two documents at rank 2"));
    bad[2].rank = 5;
    assert!(
        error(&bad).contains("at rank 5 but shows 3 documents"),
        "{}",
        error(&bad)
    );
    let twice = session(8, "qa", &["a0", "a1", "a0"], &[true, false, false]);
    assert!(error(&twice).contains("displays document a0 twice"));
    let missing = session(9, "qa", &["a0", "b1"], &[true, false]);
    assert!(error(&missing).contains("b1 of query qa, which the feature file lacks"));
    let mut two_queries = session(10, "qa", &["a0", "a1"], &[true, false]);
    two_queries[1].qid = "qb".into();
    assert!(error(&two_queries).contains("two queries"));
    let mut split = session(11, "qa", &["a0", "a1"], &[true, false]);
    split.extend(session(12, "qb", &["b0", "b1"], &[true, false]));
    split.extend(session(11, "qa", &["a0", "a1"], &[true, false]));
    assert!(error(&split).contains("session 11") && error(&split).contains("again"));
    let no_click = session(13, "qa", &["a0", "a1"], &[false, false]);
    assert!(error(&no_click).contains("no click"));
}

#[test]
fn position_files_are_read_and_bad_lines_named() {
    let dir = std::env::temp_dir().join(format!("ltr-position-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = features();
    let read = |text: &str| {
        let path = dir.join("train.txt.position");
        std::fs::write(&path, text).unwrap();
        read_position_file(&path, &f).map_err(|e| e.to_string())
    };
    assert_eq!(read("0\n1\n2\n2\n0\n1\n").unwrap(), [0, 1, 2, 2, 0, 1]);
    let err = read("0\n1\n-2\n0\n1\n2\n").unwrap_err();
    assert!(
        err.contains("train.txt.position:3: a negative position"),
        "{err}"
    );
    let err = read("0\n1\nx\n0\n1\n2\n").unwrap_err();
    assert!(err.contains(":3: not an integer"), "{err}");
    let err = read("0\n1\n2\n0\n1\n").unwrap_err();
    assert!(err.contains("5 positions for the 6 rows"), "{err}");
    let err = read("0\n1\n2\n0\n1\n1\n").unwrap_err();
    assert!(
        err.contains(":6: query qb shows two documents at this position (the other on line 5)"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Generated web data with a production ranker's scores (feature 1) and 3,000 simulated sessions.
fn simulated() -> (Dataset, Vec<SimulatedSession>) {
    let ds = ltr_data::generate_web(&ltr_data::WebConfig {
        queries: 12,
        min_docs: 5,
        max_docs: 25,
        seed: 3,
        ..Default::default()
    })
    .unwrap();
    let scores: Vec<f64> = (0..ds.n_docs()).map(|i| ds.row(i).get(0) as f64).collect();
    let sim = ClickSimulation {
        sessions: 3_000,
        ..ClickSimulation::default()
    };
    let sessions = sim.simulate_compact(&ds, &scores, 0..sim.sessions).unwrap();
    (ds, sessions)
}

#[test]
fn the_builder_is_the_log_join_of_the_same_sessions() {
    let (ds, sessions) = simulated();
    let log: Vec<ClickRecord> = sessions.iter().flat_map(|s| s.records(&ds)).collect();
    let (joined, joined_stats) = click_session_set(&log, &ds).unwrap();
    // Added in uneven pieces, and taken once midway: the final set does not depend on either.
    let mut builder = ClickSessionBuilder::new(&ds);
    builder.add_simulated(&ds, &sessions[..1_234]).unwrap();
    let (early, early_stats) = builder.finish().unwrap();
    assert_eq!(early_stats.sessions, 1_234);
    assert!(early.n_queries() <= joined.n_queries());
    builder.add_simulated(&ds, &sessions[1_234..]).unwrap();
    let (built, stats) = builder.finish().unwrap();
    assert_eq!(stats, joined_stats);
    assert_eq!(builder.stats(), joined_stats);
    assert_eq!(built, joined);
    // The weights count every session with a click once.
    let weight: f64 = built.query_weights().unwrap().iter().sum();
    assert_eq!(
        weight as usize,
        stats.sessions - stats.sessions_without_clicks
    );
}

#[test]
fn the_builder_refuses_another_dataset_and_a_log_without_clicks() {
    let (ds, sessions) = simulated();
    let other = ds.clone();
    let mut builder = ClickSessionBuilder::new(&ds);
    let e = builder
        .add_simulated(&other, &sessions)
        .unwrap_err()
        .to_string();
    assert!(e.contains("own feature set"), "{e}");
    let unclicked: Vec<SimulatedSession> = sessions
        .iter()
        .filter(|s| !s.shown.iter().any(|d| d.clicked))
        .take(5)
        .cloned()
        .collect();
    assert_eq!(unclicked.len(), 5);
    builder.add_simulated(&ds, &unclicked).unwrap();
    let e = builder.finish().unwrap_err().to_string();
    assert!(e.contains("5 sessions hold no click"), "{e}");
    let mut stray = sessions[0].clone();
    stray.query = ds.n_queries();
    let e = builder
        .add_simulated(&ds, &[stray])
        .unwrap_err()
        .to_string();
    assert!(e.contains("names query 12"), "{e}");
}

/// The session set read from a log file a session at a time equals the set of the records read whole, with
/// comments, blank lines and CRLF line ends in the file; `for_each_click_session` hands over each session once, in
/// log order; a session the features cannot join is the same error either way.
#[test]
fn the_session_set_read_a_session_at_a_time_equals_the_whole_log() {
    let f = features();
    let mut log = Vec::new();
    for id in 0..3 {
        log.extend(session(
            10 - id,
            "qa",
            &["a2", "a0", "a1"],
            &[false, true, id == 1],
        ));
    }
    log.extend(session(20, "qb", &["b1", "b0"], &[true, false]));
    log.extend(session(4, "qa", &["a1"], &[false]));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.tsv");
    write_click_log(&path, &log).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let crlf = format!("# a comment\n\n{}", text.replace('\n', "\r\n"));
    let messy = dir.path().join("messy.tsv");
    std::fs::write(&messy, crlf).unwrap();
    let whole = click_session_set(&read_click_log(&path).unwrap(), &f).unwrap();
    for p in [&path, &messy] {
        assert_eq!(
            click_session_set_from_log(p, &f, SessionScope::Every).unwrap(),
            whole
        );
        let mut seen = Vec::new();
        for_each_click_session(p, |s| {
            seen.push((s[0].session, s.len()));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [(10, 3), (9, 3), (8, 3), (20, 2), (4, 1)]);
    }
    let mut bad = log.clone();
    bad.extend(session(30, "qa", &["a0", "b1"], &[true, false]));
    write_click_log(&path, &bad).unwrap();
    let streamed = click_session_set_from_log(&path, &f, SessionScope::Every)
        .unwrap_err()
        .to_string();
    assert_eq!(streamed, error(&bad));
    assert!(streamed.contains("session 30"), "{streamed}");
}
