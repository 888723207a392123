//! `ltr compare` with many runs: five TREC runs whose per-query reciprocal ranks are known by construction, the
//! Tukey HSD matrix in Markdown, LaTeX and JSON, the library's numbers bit for bit, and the bad inputs.

use crate::common;

use common::{ltr, ok, s};
use std::path::{Path, PathBuf};

const QUERIES: usize = 24;

/// Where run `r` ranks query `q`'s one relevant document (1-based; 10 documents per query).
fn rank(r: usize, q: usize) -> usize {
    match r {
        0 => 1 + (q * 7) % 6,   // the baseline: ranks 1..6
        1 => 1 + (q * 5) % 6,   // the same spread in another order
        2 => 1 + q % 3,         // ranks 1..3: better
        3 => 1 + (q % 2),       // ranks 1..2: better still
        _ => 1 + (q * 11) % 10, // ranks 1..10: worse
    }
}

fn write_runs(dir: &Path, skip_last_in_run4: bool) -> (Vec<PathBuf>, PathBuf) {
    let mut qrels = String::new();
    for q in 0..QUERIES {
        qrels.push_str(&format!("q{q} 0 rel 1\nq{q} 0 n0 0\n"));
    }
    let qrels_path = dir.join("qrels.txt");
    std::fs::write(&qrels_path, qrels).unwrap();
    let names = ["bm25", "bm25_rm3", "monot5", "colbert", "random"];
    let mut paths = Vec::new();
    for (r, name) in names.iter().enumerate() {
        let mut run = String::new();
        for q in 0..QUERIES {
            if skip_last_in_run4 && r == 4 && q == QUERIES - 1 {
                continue;
            }
            let at = rank(r, q);
            let mut others = 0;
            for pos in 1..=10 {
                let doc = if pos == at {
                    "rel".to_string()
                } else {
                    others += 1;
                    format!("n{others}")
                };
                run.push_str(&format!("q{q} Q0 {doc} {pos} {} {name}\n", 20 - pos));
            }
        }
        let p = dir.join(format!("{name}.trec"));
        std::fs::write(&p, run).unwrap();
        paths.push(p);
    }
    (paths, qrels_path)
}

fn args<'a>(paths: &'a [PathBuf], qrels: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec!["compare", "--qrels", s(qrels), "--measure", "RR"];
    for p in paths {
        a.extend(["--run", s(p)]);
    }
    a.extend(extra);
    a
}

/// `ltr` exits with `code`: 2 for a flag value clap refuses (an unknown name), 1 for a bad input found later.
fn fails(a: &[&str], code: i32, needle: &str) {
    let o = ltr(a);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(code),
        "ltr {a:?} should exit {code}: {err}"
    );
    assert!(
        err.contains(needle),
        "ltr {a:?}: `{err}` should mention `{needle}`"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(o.stdout.is_empty(), "nothing on stdout when failing");
}

#[test]
fn five_runs_give_the_tukey_matrix_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, qrels) = write_runs(dir.path(), false);
    let json: serde_json::Value = serde_json::from_str(&ok(&args(
        &paths,
        &qrels,
        &["--format", "json", "--trials", "20000"],
    )))
    .unwrap();
    // The per-query values by construction: RR = 1/rank of the one relevant document.
    let values: Vec<Vec<f64>> = (0..5)
        .map(|r| (0..QUERIES).map(|q| 1.0 / rank(r, q) as f64).collect())
        .collect();
    let names: Vec<String> = json["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().into())
        .collect();
    assert_eq!(names, ["bm25", "bm25_rm3", "monot5", "colbert", "random"]);
    assert_eq!(json["queries"], QUERIES);
    assert_eq!(json["test"], "tukey-hsd");
    assert_eq!(json["baseline"], "bm25");
    for (r, run) in json["runs"].as_array().unwrap().iter().enumerate() {
        let mean = values[r].iter().sum::<f64>() / QUERIES as f64;
        assert!(
            (run["mean"].as_f64().unwrap() - mean).abs() < 1e-12,
            "{run}"
        );
    }
    // The library's numbers for the same values, seed and trials: the CLI adds nothing of its own.
    let opts = ltr::metrics::ManyOptions {
        trials: 20_000,
        ..Default::default()
    };
    let want = ltr::metrics::compare_runs(&names, &values, 0, "MRR (trec)", &opts).unwrap();
    assert_eq!(json, want.to_json());
    // bm25 vs bm25_rm3: the same values in another order, so no difference (p = 1); colbert (mean 0.75) beats
    // the baseline (mean 0.408, p 0.00015); monot5 (0.611, p 0.115) and random (0.331, p 0.89) do not differ
    // from it significantly. No trial was as extreme as colbert vs random: p = 0, shown as below 1/20000.
    assert_eq!(json["pairs"][0]["p_value"], 1.0);
    assert_eq!(json["better_than_baseline"], serde_json::json!(["colbert"]));
    assert_eq!(json["pairs"][9]["p_value"], 0.0);
    assert_eq!(json["worse_than_baseline"], serde_json::json!([]));
    // --json is --format json.
    let again: serde_json::Value =
        serde_json::from_str(&ok(&args(&paths, &qrels, &["--json", "--trials", "20000"]))).unwrap();
    assert_eq!(again, json);
    let md = ok(&args(&paths, &qrels, &["--trials", "20000"]));
    assert!(md.contains("| run | mean | 95% CI | vs baseline |"), "{md}");
    assert!(
        md.contains("|  | bm25_rm3 | monot5 | colbert | random |"),
        "{md}"
    );
    assert!(md.contains("| colbert | 0.7500 |"), "{md}");
    assert!(
        md.contains("| colbert |  |  |  | +0.4191 (p<5e-5*, d=+1.28) |"),
        "{md}"
    );
    let tex = ok(&args(
        &paths,
        &qrels,
        &["--format", "latex", "--trials", "20000"],
    ));
    assert!(
        tex.contains("\\begin{tabular}{lllll}") && tex.contains("bm25\\_rm3"),
        "{tex}"
    );
    assert_eq!(tex.matches("\\toprule").count(), 2, "{tex}");
    // A paired test with a correction instead: Bonferroni's p is Holm's or more.
    let p = |corr: &str| -> Vec<f64> {
        let v: serde_json::Value = serde_json::from_str(&ok(&args(
            &paths,
            &qrels,
            &["--json", "--test", "ttest", "--correction", corr],
        )))
        .unwrap();
        assert_eq!(v["correction"], corr);
        v["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["p_adjusted"].as_f64().unwrap_or(1.0))
            .collect()
    };
    let (holm, bonf) = (p("holm"), p("bonferroni"));
    assert!(
        holm.iter().zip(&bonf).all(|(h, b)| h <= b) && holm != bonf,
        "{holm:?} {bonf:?}"
    );
    // Another baseline by name.
    let v: serde_json::Value = serde_json::from_str(&ok(&args(
        &paths,
        &qrels,
        &["--json", "--baseline", "colbert"],
    )))
    .unwrap();
    assert_eq!(v["baseline"], "colbert");
    assert_eq!(v["better_than_baseline"], serde_json::json!([]));
}

#[test]
fn runs_with_different_queries_are_compared_on_the_shared_ones_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, qrels) = write_runs(dir.path(), true);
    let o = ltr(&args(&paths, &qrels, &["--json"]));
    assert!(o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    // Four runs lose the query the fifth does not answer.
    assert_eq!(
        err.matches("1 evaluated queries left out").count(),
        4,
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["queries"], QUERIES - 1);
}

#[test]
fn bad_inputs_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, qrels) = write_runs(dir.path(), false);
    fails(
        &args(&paths, &qrels, &["--test", "anova"]),
        2,
        "unknown test `anova`",
    );
    fails(
        &args(&paths, &qrels, &["--correction", "sidak"]),
        2,
        "unknown correction `sidak`",
    );
    fails(
        &args(&paths, &qrels, &["--format", "html"]),
        2,
        "unknown format `html`",
    );
    fails(
        &args(&paths, &qrels, &["--baseline", "bm26"]),
        1,
        "baseline `bm26` is none of the runs",
    );
    fails(
        &args(&paths, &qrels, &["--alpha", "1.5"]),
        1,
        "alpha must lie in (0, 1)",
    );
    fails(&args(&paths, &qrels, &["--trials", "0"]), 1, "at least 1");
    fails(&args(&paths[..1], &qrels, &[]), 1, "two runs or more");
    // A run sharing no judged query with the others.
    let stray = dir.path().join("stray.trec");
    std::fs::write(&stray, "x9 Q0 rel 1 1 stray\n").unwrap();
    let mut two = vec![paths[0].clone(), stray];
    fails(&args(&two, &qrels, &[]), 1, "share no evaluated query");
    // A malformed run names its file and line.
    let bad = dir.path().join("bad.trec");
    std::fs::write(&bad, "q0 Q0 rel 1 1 bad\nq1 Q0 rel\n").unwrap();
    two[1] = bad;
    fails(&args(&two, &qrels, &[]), 1, "bad.trec:2");
}

#[test]
fn three_score_files_of_one_data_file_compare_like_the_library() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(&["generate", "--out", s(d), "--queries", "60", "--seed", "4"]);
    let data = d.join("test.txt");
    let ds = ltr::data::read_letor(&data).unwrap();
    // Three rankers: feature 1, feature 2, and their sum.
    let scores: Vec<Vec<f64>> = (0..3)
        .map(|k| {
            (0..ds.n_docs())
                .map(|i| {
                    let (a, b) = (ds.row(i).get(0) as f64, ds.row(i).get(1) as f64);
                    [a, b, a + b][k]
                })
                .collect()
        })
        .collect();
    let mut files = Vec::new();
    for (k, sc) in scores.iter().enumerate() {
        let p = d.join(format!("f{k}.txt"));
        let text: Vec<String> = sc.iter().map(|x| format!("{x:?}")).collect();
        std::fs::write(&p, text.join("\n") + "\n").unwrap();
        files.push(p);
    }
    let mut a = vec!["compare", "--data", s(&data), "--metric", "MAP"];
    for f in &files {
        a.extend(["--scores", s(f)]);
    }
    a.extend(["--test", "wilcoxon", "--correction", "bh", "--json"]);
    let got: serde_json::Value = serde_json::from_str(&ok(&a)).unwrap();
    let metric: ltr::metrics::Metric = "MAP".parse().unwrap();
    let conv = ltr::metrics::Convention::STANDARD;
    let values: Vec<Vec<f64>> = scores
        .iter()
        .map(|sc| {
            ltr::metrics::evaluate(&ds, sc, &[metric], &conv)
                .unwrap()
                .results[0]
                .per_query
                .clone()
        })
        .collect();
    let names: Vec<String> = ["f0", "f1", "f2"].iter().map(|n| n.to_string()).collect();
    let opts = ltr::metrics::ManyOptions {
        test: "wilcoxon".parse().unwrap(),
        correction: ltr::metrics::Correction::BenjaminiHochberg,
        ..Default::default()
    };
    let want = ltr::metrics::compare_runs(&names, &values, 0, "MAP (standard)", &opts).unwrap();
    assert_eq!(got, want.to_json());
    assert_eq!(got["queries"], ds.n_queries());
    // Two score files with --format keep the many-run tables; without, the two-run report.
    let two = [
        "compare",
        "--data",
        s(&data),
        "--scores",
        s(&files[0]),
        "--scores",
        s(&files[1]),
    ];
    let tables = ok(&[&two[..], &["--format", "markdown"]].concat());
    assert!(
        tables.contains("| run | mean | 95% CI | vs baseline |"),
        "{tables}"
    );
    assert!(ok(&two).contains("A − B = "));
}
