//! Tests of `src/doubly_robust.rs`.

use ltr_clicks::*;
use ltr_data::Dataset;

use crate::common;

/// Query qa: a0..a3, feature 1 rising with the row (a3 is never shown below); query qb: b0, b1.
fn features() -> Dataset {
    common::two_queries(&["a0", "a1", "a2", "a3", "b0", "b1"], 4)
}

/// A session showing `docs` of `qid` at ranks 1, 2, … with `clicks`, propensity 1/rank logged.
fn session(id: u64, qid: &str, docs: &[&str], clicks: &[bool]) -> Vec<ClickRecord> {
    common::session(id, qid, docs, clicks, |rank| Some(1.0 / f64::from(rank)))
}

/// The paper's estimator: the unshown documents kept, labelled by the direct model.
fn direct() -> DoublyRobustSettings {
    DoublyRobustSettings {
        unshown: UnshownDocuments::Direct,
        ..Default::default()
    }
}

fn set(log: &[ClickRecord]) -> (Dataset, DoublyRobustStats) {
    doubly_robust_set(log, &features(), &PropensitySource::Logged, &direct()).unwrap()
}

/// Four sessions of qa (a0..a2 shown two ways, a3 never) and one of qb.
fn log() -> Vec<ClickRecord> {
    let mut log = Vec::new();
    log.extend(session(0, "qa", &["a0", "a1", "a2"], &[true, false, true]));
    log.extend(session(
        1,
        "qa",
        &["a0", "a1", "a2"],
        &[false, false, false],
    ));
    log.extend(session(2, "qa", &["a1", "a0", "a2"], &[true, false, false]));
    log.extend(session(3, "qa", &["a1", "a0", "a2"], &[true, true, false]));
    log.extend(session(4, "qb", &["b1", "b0"], &[false, true]));
    log
}

#[test]
fn shown_documents_are_labelled_clicks_over_expected_examination() {
    let (ds, stats) = set(&log());
    assert_eq!(ds.qids(), ["qa", "qb"]);
    assert_eq!(ds.query_offsets(), [0, 4, 6]);
    assert_eq!(ds.query_weights().unwrap(), [4.0, 1.0]);
    assert!(ds.propensities().is_none() && ds.positions().is_none());
    // By hand. a0: ranks 1, 1, 2, 2 → ρ = (1 + 1 + ½ + ½)/4 = 0.75; clicks 2 of 4 sessions → 0.5/0.75.
    // a1: ranks 2, 2, 1, 1 → ρ = 0.75; clicks 2 → 2/3. a2: rank 3 four times → ρ = ⅓; one click → 0.25·3.
    // b1: rank 1, no click → 0; b0: rank 2, a click → 1/0.5.
    let want = [
        (0, 2.0 / 3.0),
        (1, 2.0 / 3.0),
        (2, 0.75),
        (4, 2.0),
        (5, 0.0),
    ];
    for (row, label) in want {
        assert!(
            (f64::from(ds.labels()[row]) - label).abs() < 1e-6,
            "row {row}: {} against {label}",
            ds.labels()[row]
        );
    }
    // a3 was never shown: the direct model's probability, strictly between 0 and 1.
    let a3 = ds.labels()[3];
    assert!(a3 > 0.0 && a3 < 1.0, "{a3}");
    assert_eq!(stats.sessions, 5);
    assert_eq!(stats.clicks, 6);
    assert_eq!((stats.shown_documents, stats.unshown_documents), (5, 1));
    assert!(stats.direct_model_log_loss.unwrap() > 0.0);
}

#[test]
fn left_out_unshown_documents_leave_the_shown_labels_as_they_are() {
    let (kept, _) = set(&log());
    let (left, stats) = doubly_robust_set(
        &log(),
        &features(),
        &PropensitySource::Logged,
        &DoublyRobustSettings::default(),
    )
    .unwrap();
    assert_eq!(left.query_offsets(), [0, 3, 5]);
    let shown = [0, 1, 2, 4, 5];
    let want: Vec<f32> = shown.iter().map(|&r| kept.labels()[r]).collect();
    assert_eq!(left.labels(), &want[..]);
    assert_eq!(left.query_weights().unwrap(), [4.0, 1.0]);
    assert_eq!((stats.shown_documents, stats.unshown_documents), (5, 1));
    assert_eq!(stats.direct_model_log_loss, None);
    assert_eq!(
        UnshownDocuments::parse("direct").unwrap(),
        UnshownDocuments::Direct
    );
    assert!(UnshownDocuments::parse("keep").is_err());
}

#[test]
fn the_order_of_the_sessions_changes_nothing() {
    let log = log();
    let mut reversed = Vec::new();
    for id in (0..5).rev() {
        reversed.extend(log.iter().filter(|r| r.session == id).cloned());
    }
    let (a, _) = set(&log);
    let (b, _) = set(&reversed);
    assert_eq!(a, b);
}

#[test]
fn the_direct_model_ranks_an_unshown_document_by_its_features() {
    // Among the shown documents the one with the larger feature 1 (a2) is clicked more at the same ranks, so the
    // direct model puts the unshown a3 (feature 30) high and the unshown a0 (feature 0) low.
    let mut log = Vec::new();
    for id in 0..40u64 {
        // a1 and a2 alternate at rank 1; a2 is clicked there every time, a1 one time in four.
        let (top, clicked) = if id % 2 == 0 {
            ("a1", id % 8 == 0)
        } else {
            ("a2", true)
        };
        let other = if top == "a1" { "a2" } else { "a1" };
        log.extend(session(id, "qa", &[top, other], &[clicked, false]));
    }
    let (ds, _) = set(&log);
    let l = ds.labels();
    assert!(l[3] > l[0], "a3 {} a0 {}", l[3], l[0]);
    assert!(l[3] > 0.5 && l[0] < 0.5, "a3 {} a0 {}", l[3], l[0]);
}

#[test]
fn a_known_propensity_table_replaces_the_logged_column() {
    let mut log = log();
    log.iter_mut().for_each(|r| r.propensity = None);
    let err = doubly_robust_set(
        &log,
        &features(),
        &PropensitySource::Logged,
        &DoublyRobustSettings::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("session 0") && err.contains("rank 1 has no propensity"),
        "{err}"
    );
    let table = PropensitySource::ByRank(vec![1.0, 0.5, 1.0 / 3.0]);
    let (from_table, _) = doubly_robust_set(&log, &features(), &table, &direct()).unwrap();
    assert_eq!(from_table, set(&self::log()).0);
    let bad = PropensitySource::ByRank(vec![1.0, 0.0]);
    let err = doubly_robust_set(&log, &features(), &bad, &DoublyRobustSettings::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("propensity 0 of rank 2 is not a positive number"),
        "{err}"
    );
}

#[test]
fn bad_logs_are_refused_naming_the_session() {
    let f = features();
    let run = |log: &[ClickRecord]| {
        doubly_robust_set(
            log,
            &f,
            &PropensitySource::Logged,
            &DoublyRobustSettings::default(),
        )
        .unwrap_err()
        .to_string()
    };
    let mut missing = log();
    missing.extend(session(5, "qa", &["a0", "zz"], &[true, false]));
    let e = run(&missing);
    assert!(e.contains("session 5") && e.contains("zz"), "{e}");
    let mut twice = log();
    twice.extend(session(5, "qa", &["a0", "a0"], &[true, false]));
    assert!(run(&twice).contains("twice"), "{}", run(&twice));
    let mut zero = log();
    zero.extend(session(5, "qa", &["a0"], &[true]));
    zero.last_mut().unwrap().propensity = Some(0.0);
    let e = run(&zero);
    assert!(
        e.contains("session 5") && e.contains("not a positive number"),
        "{e}"
    );
    let silent: Vec<ClickRecord> = session(0, "qa", &["a0", "a1"], &[false, false]);
    assert!(run(&silent).contains("no click"), "{}", run(&silent));
    assert!(run(&[]).contains("no session"), "{}", run(&[]));
    // A clipping threshold outside [0, 1] is refused before a session is read, by the set and by the builder.
    let clip = DoublyRobustSettings {
        clip: ltr_clicks::ClipThreshold::Fixed(1.5),
        ..Default::default()
    };
    let e = doubly_robust_set(&[], &f, &PropensitySource::Logged, &clip)
        .unwrap_err()
        .to_string();
    assert!(e.contains("clipping threshold") && e.contains("1.5"), "{e}");
    assert!(DoublyRobustBuilder::new(&f, PropensitySource::Logged, clip).is_err());
}

#[test]
fn the_builder_is_the_log_join_of_the_same_sessions() {
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
    let log: Vec<ClickRecord> = sessions.iter().flat_map(|s| s.records(&ds)).collect();
    for settings in [DoublyRobustSettings::default(), direct()] {
        let logged = PropensitySource::Logged;
        let joined = doubly_robust_set(&log, &ds, &logged, &settings).unwrap();
        // Added in uneven pieces, and taken once midway: the final set does not depend on either.
        let mut builder = DoublyRobustBuilder::new(&ds, logged, settings).unwrap();
        builder.add_simulated(&ds, &sessions[..1_234]).unwrap();
        assert_eq!(builder.finish().unwrap().1.sessions, 1_234);
        builder.add_simulated(&ds, &sessions[1_234..]).unwrap();
        assert_eq!(builder.finish().unwrap(), joined);
        let e = builder
            .add_simulated(&ds.clone(), &sessions)
            .unwrap_err()
            .to_string();
        assert!(e.contains("own feature set"), "{e}");
    }
    // A cascade user's sessions carry no propensity: a table must give them.
    let cascade = ClickSimulation {
        model: ClickModel::Cascade,
        sessions: 10,
        ..ClickSimulation::default()
    }
    .simulate_compact(&ds, &scores, 0..10)
    .unwrap();
    let mut builder =
        DoublyRobustBuilder::new(&ds, PropensitySource::Logged, Default::default()).unwrap();
    let e = builder
        .add_simulated(&ds, &cascade)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no propensity"), "{e}");
}

/// `dr-clip=auto` is the paper's `τ = min(10/√N, 1)` for the log's N sessions: the labels of a fixed τ of that value,
/// which clip a document shown below it (a2, ρ = ⅓) and leave the others (ρ = ¾).
#[test]
fn an_automatic_clip_is_ten_over_the_root_of_the_sessions() {
    let mut log = Vec::new();
    for copy in 0..100 {
        for mut r in self::log() {
            r.session += copy * 5;
            log.push(r);
        }
    }
    let with = |clip| {
        let s = DoublyRobustSettings { clip, ..direct() };
        doubly_robust_set(&log, &features(), &PropensitySource::Logged, &s).unwrap()
    };
    let (auto, stats) = with(ClipThreshold::Auto);
    let tau = 10.0 / 500f64.sqrt();
    assert_eq!(stats.sessions, 500);
    assert_eq!(stats.clip, tau);
    let (fixed, _) = with(ClipThreshold::Fixed(tau));
    assert_eq!(auto.labels(), fixed.labels());
    let (none, _) = with(ClipThreshold::Fixed(0.0));
    let differs: Vec<usize> = (0..none.labels().len())
        .filter(|&i| none.labels()[i] != auto.labels()[i])
        .collect();
    assert_eq!(differs, [2], "only a2 is clipped");
    assert_eq!(ClipThreshold::Auto.tau(5), 1.0);
}

/// A log over more queries than the training data holds (an experiment's fold of one log): with
/// `SessionScope::FeatureQueries` each of the three joins reads the sessions of the feature file's queries and
/// nothing else, giving the sets of the log cut to those sessions, and counts the others; `dr-clip=auto`'s N is the
/// sessions read. `SessionScope::Every` refuses the log, and a log none of whose sessions is of a feature query is
/// refused naming its session count.
#[test]
fn a_scoped_join_reads_only_the_sessions_of_the_feature_queries() {
    let dir = tempfile::tempdir().unwrap();
    let mut wide = self::log();
    wide.extend(session(5, "qz", &["z0", "z1"], &[true, false]));
    wide.extend(session(6, "qa", &["a2", "a1", "a0"], &[false, true, false]));
    wide.extend(session(7, "qz", &["z1", "z0"], &[false, false]));
    let cut: Vec<ClickRecord> = wide.iter().filter(|r| r.qid != "qz").cloned().collect();
    let path = dir.path().join("wide.tsv");
    write_click_log(&path, &wide).unwrap();
    let f = features();
    let scope = SessionScope::FeatureQueries;
    let settings = DoublyRobustSettings {
        clip: ClipThreshold::Auto,
        ..direct()
    };
    let logged = PropensitySource::Logged;
    let (dr, stats) = doubly_robust_set_from_log(&path, &f, &logged, &settings, scope).unwrap();
    assert_eq!(
        (dr, stats),
        (doubly_robust_set(&cut, &f, &logged, &settings)
            .map(|(d, s)| (
                d,
                DoublyRobustStats {
                    sessions_outside: 2,
                    ..s
                }
            ))
            .unwrap())
    );
    assert_eq!((stats.sessions, stats.clip), (6, 1.0));
    let (pairs, stats) = click_training_set_from_log(&path, &f, &logged, scope).unwrap();
    assert_eq!(pairs, click_training_set(&cut, &f, &logged).unwrap().0);
    assert_eq!((stats.sessions, stats.sessions_outside), (6, 2));
    let (sessions, stats) = click_session_set_from_log(&path, &f, scope).unwrap();
    assert_eq!(sessions, click_session_set(&cut, &f).unwrap().0);
    assert_eq!((stats.sessions, stats.sessions_outside), (6, 2));
    // Read whole, the log is refused at its first session of another query.
    let e = click_session_set_from_log(&path, &f, SessionScope::Every)
        .unwrap_err()
        .to_string();
    assert!(e.contains("session 5") && e.contains("qz"), "{e}");
    let elsewhere: Vec<ClickRecord> = wide.iter().filter(|r| r.qid == "qz").cloned().collect();
    write_click_log(&path, &elsewhere).unwrap();
    let e = click_training_set_from_log(&path, &f, &logged, scope)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("wide.tsv") && e.contains("none of the log's 2 sessions"),
        "{e}"
    );
    // The flag's names.
    assert_eq!(SessionScope::parse("every").unwrap(), SessionScope::Every);
    for name in ["train-queries", "feature-queries"] {
        assert_eq!(SessionScope::parse(name).unwrap(), scope);
    }
    let e = SessionScope::parse("some").unwrap_err().to_string();
    assert!(e.contains("`some`") && e.contains("train-queries"), "{e}");
}
