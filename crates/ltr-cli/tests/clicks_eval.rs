//! Evaluation from clicks through the binary: `ltr clicks estimate` (IPS, SNIPS and DR of a new ranker on a
//! simulated log, from a model or a score file; DR's model a PBM fitted by `ltr clicks fit`) and `ltr clicks convert` (the per-document table and Baidu-ULTR's layout).

use std::path::PathBuf;
use std::sync::OnceLock;

use crate::common;

use common::{err, generate_letor, ok, s, simulate_clicks, train_production};

/// What both estimate tests start from: 30 generated queries (seed 6), a production ranker that sees one feature's
/// worth of training (C = 0.0001) and a new one that sees all of it, each a RankSVM model file.
struct Rankers {
    train: PathBuf,
    prod: PathBuf,
    new: PathBuf,
}

/// The [`Rankers`], made once per test process in cargo's scratch directory for integration tests (read-only after).
fn rankers() -> &'static Rankers {
    static RANKERS: OnceLock<Rankers> = OnceLock::new();
    RANKERS.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("clicks-eval-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap()
            .keep();
        let train = generate_letor(&dir.join("data"), 30, 6);
        let (prod, new) = (dir.join("prod.json"), dir.join("new.json"));
        train_production(&train, &prod, &["c=0.0001"]);
        train_production(&train, &new, &[]);
        Rankers { train, prod, new }
    })
}

#[test]
fn estimate_a_new_rankers_clicks_from_a_log_and_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let r = rankers();
    let (train, prod, new) = (r.train.clone(), r.prod.clone(), r.new.clone());
    let (new_scores, log, short) = (p("new.scores"), p("log.tsv"), p("short.scores"));
    simulate_clicks(&train, &prod, 4000, &log, &[]);
    ok(&[
        "predict",
        "--model",
        s(&new),
        "--data",
        s(&train),
        "--out",
        s(&new_scores),
    ]);
    let estimate = |ranker: &[&str], extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "clicks",
            "estimate",
            "--clicks",
            s(&log),
            "--features",
            s(&train),
            "--bootstrap",
            "30",
            "--json",
        ];
        args.extend_from_slice(ranker);
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&args)).unwrap()
    };
    let by_model = estimate(&["--model", s(&new)], &[]);
    let by_scores = estimate(&["--scores", s(&new_scores)], &[]);
    assert_eq!(by_model["metric"], "dcg@10");
    assert_eq!(by_model["sessions"], 4000);
    assert_eq!(by_model["bootstrap"]["replicates"], 30);
    let v = by_model["value"].as_f64().unwrap();
    let (lo, hi) = (
        by_model["normal"]["low"].as_f64().unwrap(),
        by_model["normal"]["high"].as_f64().unwrap(),
    );
    assert!(v > 0.0 && lo < v && v < hi, "{by_model}");
    // `ltr predict`'s scores print with rounding: the same estimate to 1e-6.
    assert!((by_scores["value"].as_f64().unwrap() - v).abs() < 1e-6);
    // On a part of the log's queries (a test split): the sessions of that part read, the others counted.
    let text = std::fs::read_to_string(&train).unwrap();
    let first_qid = text.split_whitespace().nth(1).unwrap().to_string();
    let part = p("part.txt");
    let part_text: String = text
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some(first_qid.as_str()))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&part, part_text).unwrap();
    ok(&[
        "predict",
        "--model",
        s(&new),
        "--data",
        s(&part),
        "--out",
        s(&p("part.scores")),
    ]);
    let scoped: serde_json::Value = serde_json::from_str(&ok(&[
        "clicks",
        "estimate",
        "--clicks",
        s(&log),
        "--features",
        s(&part),
        "--scores",
        s(&p("part.scores")),
        "--bootstrap",
        "0",
        "--click-sessions",
        "feature-queries",
        "--json",
    ]))
    .unwrap();
    let (read, outside) = (
        scoped["sessions"].as_u64().unwrap(),
        scoped["sessions_outside"].as_u64().unwrap(),
    );
    assert!(
        read > 0 && outside > 0 && read + outside == 4000,
        "{scoped}"
    );
    let snips = estimate(
        &["--model", s(&new)],
        &["--estimator", "snips", "--metric", "clicks@3"],
    );
    let sv = snips["value"].as_f64().unwrap();
    assert!(sv > 0.0 && sv <= 1.0, "{snips}");
    // The text form.
    let text = ok(&[
        "clicks",
        "estimate",
        "--clicks",
        s(&log),
        "--features",
        s(&train),
        "--model",
        s(&new),
        "--bootstrap",
        "0",
    ]);
    assert!(
        text.starts_with("ips dcg@10: ") && text.contains("normal"),
        "{text}"
    );
    // Errors: no ranker, a bad metric, a short score file, a log without propensities and no table.
    let base = [
        "clicks",
        "estimate",
        "--clicks",
        s(&log),
        "--features",
        s(&train),
    ];
    let e = err(&base);
    assert!(e.contains("--model") || e.contains("--scores"), "{e}");
    let mut a = base.to_vec();
    a.extend(["--model", s(&new), "--metric", "ndcg@3"]);
    assert!(err(&a).contains("unknown click metric `ndcg@3`"));
    std::fs::write(&short, "1.0\n").unwrap();
    let mut a = base.to_vec();
    a.extend(["--scores", s(&short)]);
    assert!(err(&a).contains("short.scores:2"));
    let cascade = p("cascade.tsv");
    simulate_clicks(&train, &prod, 300, &cascade, &["--click-model", "cascade"]);
    let e = err(&[
        "clicks",
        "estimate",
        "--clicks",
        s(&cascade),
        "--features",
        s(&train),
        "--model",
        s(&new),
    ]);
    assert!(
        e.contains("cascade.tsv") && e.contains("without a propensity"),
        "{e}"
    );
}

#[test]
fn doubly_robust_estimate_from_a_fitted_click_model() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let r = rankers();
    let (train, prod, new) = (r.train.clone(), r.prod.clone(), r.new.clone());
    let (swap, plain, pbm) = (p("swap.tsv"), p("plain.tsv"), p("pbm.json"));
    simulate_clicks(&train, &prod, 3000, &swap, &["--intervention", "swap-top"]);
    simulate_clicks(&train, &prod, 3000, &plain, &[]);
    ok(&[
        "clicks",
        "fit",
        "--clicks",
        s(&swap),
        "--click-model",
        "pbm",
        "--out",
        s(&pbm),
    ]);
    let estimate = |log: &std::path::Path, extra: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "clicks",
            "estimate",
            "--clicks",
            s(log),
            "--features",
            s(&train),
            "--model",
            s(&new),
            "--bootstrap",
            "0",
            "--json",
        ];
        args.extend_from_slice(extra);
        serde_json::from_str(&ok(&args)).unwrap()
    };
    let dr_args = ["--estimator", "dr", "--relevance-model", s(&pbm)];
    let ips = estimate(&swap, &[]);
    let mut a = dr_args.to_vec();
    a.extend(["--logging-policy", "swap-top"]);
    let dr = estimate(&swap, &a);
    assert_eq!(dr["estimator"], "dr");
    let (v, lo, hi) = (
        dr["value"].as_f64().unwrap(),
        ips["normal"]["low"].as_f64().unwrap(),
        ips["normal"]["high"].as_f64().unwrap(),
    );
    // The same quantity as IPS, with a smaller standard error when the click model fits the log.
    assert!(lo < v && v < hi, "dr {dr} against ips {ips}");
    assert!(
        dr["normal"]["std_error"].as_f64().unwrap() < ips["normal"]["std_error"].as_f64().unwrap(),
        "dr {dr} against ips {ips}"
    );
    // Under a deterministic logging policy DR is IPS.
    let a = estimate(&plain, &dr_args);
    let b = estimate(&plain, &[]);
    assert!((a["value"].as_f64().unwrap() - b["value"].as_f64().unwrap()).abs() < 1e-9);
    // dr without a model; swap-top on a log without production ranks.
    let base = [
        "clicks",
        "estimate",
        "--clicks",
        s(&plain),
        "--features",
        s(&train),
        "--model",
        s(&new),
    ];
    let mut a = base.to_vec();
    a.extend(["--estimator", "dr"]);
    assert!(err(&a).contains("needs a direct model"));
    let mut a = base.to_vec();
    a.extend(dr_args);
    a.extend(["--logging-policy", "swap-top"]);
    let e = err(&a);
    assert!(
        e.contains("plain.tsv") && e.contains("production rank"),
        "{e}"
    );
}

#[test]
fn convert_reads_a_table_and_baidu_sessions_into_the_click_log() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let (table, baidu, out) = (p("t.csv"), p("baidu.txt"), p("log.tsv"));
    std::fs::write(
        &table,
        "qid,docid,position,click\nq1,b,2,1\nq1,a,1,0\nq1,c,,0\n",
    )
    .unwrap();
    ok(&[
        "clicks",
        "convert",
        "--from",
        "table",
        "--input",
        s(&table),
        "--out",
        s(&out),
    ]);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "session\tqid\tdocid\trank\tclicked\tpropensity\tproduction_rank\n1\tq1\ta\t1\t0\t\t\n1\tq1\tb\t2\t1\t\t\n"
    );
    std::fs::write(
        &baidu,
        "7\t1\x012\t\n1\tu1\t5\t6\t0\t1\t0\n2\tu2\t5\t6\t0\t0\t0\n",
    )
    .unwrap();
    ok(&[
        "clicks",
        "convert",
        "--from",
        "baidu",
        "--input",
        s(&baidu),
        "--out",
        s(&out),
    ]);
    let log = std::fs::read_to_string(&out).unwrap();
    assert!(
        log.contains("1\t7\tu1\t1\t1\t\t\n1\t7\tu2\t2\t0\t\t\n"),
        "{log}"
    );
    // A bad line is named, and nothing is written.
    std::fs::write(&table, "qid,docid,position,click\nq1,a,-3,0\n").unwrap();
    let bad = p("bad.tsv");
    let e = err(&[
        "clicks",
        "convert",
        "--from",
        "table",
        "--input",
        s(&table),
        "--out",
        s(&bad),
    ]);
    assert!(
        e.contains("t.csv:2") && e.contains("negative position"),
        "{e}"
    );
    assert!(!bad.exists());
}
