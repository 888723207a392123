//! `ltr experiment` through the binary: one cell equals separate `ltr train` / `predict` / `eval` calls, a killed
//! run resumes without recomputing a finished cell, and bad flags are refused.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{generate_folds, generate_letor, ltr, ok, s, simulate_clicks, train_production};

#[test]
fn a_cell_equals_separate_train_predict_eval() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_folds(&data, 2, 40);
    let out = dir.path().join("out");
    let stdout = ok(&[
        "experiment",
        "--fold-dir",
        s(&data),
        "--algo",
        "ranksvm:c=0.01,0.1,1",
        "--algo",
        "committee-perceptron:committee=5,epochs=10",
        "--metric",
        "MAP",
        "--convention",
        "letor4",
        "--seed",
        "3",
        "--keep-scores",
        "--out",
        s(&out),
        "--json",
    ]);
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["computed"], 4);
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    for (label, algo, params) in [
        ("ranksvm", "ranksvm", vec!["c=0.01,0.1,1"]),
        (
            "committee-perceptron",
            "committee-perceptron",
            vec!["committee=5", "epochs=10"],
        ),
    ] {
        let fold = data.join("Fold2");
        let model = dir.path().join(format!("{label}.bin"));
        let scores = dir.path().join(format!("{label}.scores"));
        let (train, vali) = (fold.join("train.txt"), fold.join("vali.txt"));
        let mut args = vec![
            "train",
            "--train",
            s(&train),
            "--validate",
            s(&vali),
            "--algo",
            algo,
            "--metric",
            "MAP",
            "--convention",
            "letor4",
            "--seed",
            "3",
            "--model",
            s(&model),
        ];
        let test = fold.join("test.txt");
        let owned: Vec<String> = params.iter().map(|p| p.to_string()).collect();
        for p in &owned {
            args.extend(["--param", p.as_str()]);
        }
        ok(&args);
        ok(&[
            "predict",
            "--model",
            s(&model),
            "--data",
            s(&test),
            "--out",
            s(&scores),
        ]);
        // The experiment's kept scores are the CLI's, byte for byte.
        assert_eq!(
            std::fs::read_to_string(&scores).unwrap(),
            std::fs::read_to_string(out.join(format!("scores/{label}/fold2.txt"))).unwrap(),
            "{label}"
        );
        let ev: serde_json::Value = serde_json::from_str(&ok(&[
            "eval",
            "--data",
            s(&test),
            "--scores",
            s(&scores),
            "--metric",
            "MAP",
            "--metric",
            "NDCG@10",
            "--convention",
            "letor4",
            "--json",
        ]))
        .unwrap();
        let cell = results["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["method"] == label && c["fold"] == 2)
            .unwrap();
        for metric in ["MAP", "NDCG@10"] {
            let want = ev["metrics"][metric]["mean"]
                .as_f64()
                .unwrap_or_else(|| panic!("{ev}"));
            let got = cell["means"][metric].as_f64().unwrap();
            assert_eq!(got, want, "{label} {metric}");
        }
    }
}

#[test]
fn a_killed_experiment_resumes_without_recomputing_finished_cells() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_folds(&data, 3, 60);
    let out = dir.path().join("out");
    let args = [
        "experiment",
        "--fold-dir",
        s(&data),
        "--algo",
        "rankboost:rounds=50",
        "--algo",
        "committee-perceptron:committee=5,epochs=10",
        "--algo",
        "listnet:epochs=50",
        "--out",
        s(&out),
        "--json",
    ];
    // One thread runs the cells one after another; the process holds at its second fit (ltr_core::test_hold), so
    // exactly one cell is stored when it is killed, on any machine.
    let hold = dir.path().join("hold");
    std::fs::create_dir(&hold).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ltr"))
        .args(args)
        .env("RUST_LOG", "warn")
        .env("RAYON_NUM_THREADS", "1")
        .env("LTR_TEST_HOLD_DIR", &hold)
        .env("LTR_TEST_HOLD_AT", "fit#2")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let holding = || {
        std::fs::read_dir(&hold).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("holding-")
        })
    };
    // The bound only ends a failing run (a process that never reaches its second fit).
    let t0 = std::time::Instant::now();
    while !holding() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the experiment ended before its second fit"
        );
        assert!(t0.elapsed().as_secs() < 300, "no second fit in 300 s");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let cells = out.join("cells");
    let stored: Vec<(std::path::PathBuf, Vec<u8>)> = std::fs::read_dir(&cells)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    assert_eq!(
        stored.len(),
        1,
        "cells stored at the kill: {:?}",
        stored.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    let summary: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(summary["reused"], stored.len(), "{summary}");
    assert_eq!(summary["computed"], 9 - stored.len(), "{summary}");
    for (p, bytes) in &stored {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            bytes,
            "{} rewritten",
            p.display()
        );
    }
    let again: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(
        (again["computed"].as_u64(), again["reused"].as_u64()),
        (Some(0), Some(9))
    );
}

#[test]
fn experiment_flags_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_folds(&data, 1, 40);
    let out = dir.path().join("out");
    let err = |args: &[&str]| {
        let o = ltr(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    let train = data.join("Fold1/train.txt");
    assert!(err(&["experiment", "--data", s(&train), "--out", s(&out)]).contains("--algo"));
    assert!(err(&["experiment", "--out", s(&out), "--algo", "ranksvm"]).contains("--data FILE"));
    assert!(err(&[
        "experiment",
        "--data",
        s(&train),
        "--algo",
        "ranksvm:x=1",
        "--out",
        s(&out)
    ])
    .contains("x"));
    assert!(err(&[
        "experiment",
        "--data",
        s(&train),
        "--algo",
        "ranksvm",
        "--test",
        "magic",
        "--out",
        s(&out)
    ])
    .contains("unknown test `magic`"));
    assert!(err(&[
        "experiment",
        "--fold-dir",
        s(&data),
        "--folds",
        "3",
        "--algo",
        "ranksvm",
        "--out",
        s(&out)
    ])
    .contains("--folds"));
    assert!(err(&[
        "experiment",
        "--config",
        "x.toml",
        "--algo",
        "ranksvm",
        "--out",
        s(&out)
    ])
    .contains("cannot be used with"));
    // What an experiment file describes is refused naming the file, not only its syntax.
    let config = dir.path().join("typo.toml");
    std::fs::write(
        &config,
        format!(
            "[data]\nfile = {:?}\n[[algorithm]]\nalgo = \"ranksvn\"\n",
            s(&train)
        ),
    )
    .unwrap();
    let e = err(&["experiment", "--config", s(&config), "--out", s(&out)]);
    assert!(
        e.contains("typo.toml") && e.contains("unknown algorithm `ranksvn`"),
        "{e}"
    );
    // A malformed line in the data names the file and line, and nothing panics.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "1 qid:1 1:0.5\n0 qid:1 1:zz\n").unwrap();
    let e = err(&[
        "experiment",
        "--data",
        s(&bad),
        "--algo",
        "ranksvm",
        "--out",
        s(&out),
    ]);
    assert!(e.contains("bad.txt") && e.contains('2'), "{e}");
    assert!(!e.contains("panicked"));
}

#[test]
fn clicks_simulate_writes_a_reproducible_log_and_checks_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let train = generate_letor(&data, 30, 2);
    let model = dir.path().join("prod.bin");
    train_production(&train, &model, &[]);
    let log = |name: &str, threads: &str| {
        let out = dir.path().join(name);
        let o = Command::new(env!("CARGO_BIN_EXE_ltr"))
            .args([
                "clicks",
                "simulate",
                "--data",
                s(&train),
                "--model",
                s(&model),
                "--sessions",
                "2000",
            ])
            .args(["--eta", "2", "--seed", "5", "--out", s(&out)])
            .env("RUST_LOG", "warn")
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        std::fs::read_to_string(out).unwrap()
    };
    let one = log("one.tsv", "1");
    assert_eq!(one, log("two.tsv", "2"), "the same log at 1 and 2 threads");
    let lines: Vec<&str> = one.lines().collect();
    assert_eq!(lines[0], ltr_clicks::CLICK_LOG_HEADER);
    // 2000 sessions of 10 displayed documents (every generated query has at least 20); rank 2 has propensity 1/4.
    assert_eq!(lines.len(), 1 + 2000 * 10);
    assert!(
        lines[2].ends_with("\t2\t0\t0.25\t") || lines[2].ends_with("\t2\t1\t0.25\t"),
        "{}",
        lines[2]
    );
    // Swap interventions, then the propensities they estimate: (1/k)^2 within the 99% intervals.
    let swapped = dir.path().join("swap.tsv");
    simulate_clicks(
        &train,
        &model,
        300000,
        &swapped,
        &["--eta", "2", "--intervention", "swap-top", "--top", "5"],
    );
    let est: serde_json::Value = serde_json::from_str(&ok(&[
        "clicks",
        "propensity",
        "--clicks",
        s(&swapped),
        "--z",
        "2.576",
        "--json",
    ]))
    .unwrap();
    let est = est.as_array().unwrap();
    assert_eq!(est.len(), 5);
    for e in est {
        let k = e["rank"].as_f64().unwrap();
        let truth = 1.0 / (k * k);
        assert!(
            e["low"].as_f64().unwrap() <= truth && truth <= e["high"].as_f64().unwrap(),
            "{e}"
        );
    }
    let plain_err = ltr(&[
        "clicks",
        "propensity",
        "--clicks",
        s(&dir.path().join("one.tsv")),
    ]);
    assert!(!plain_err.status.success());
    assert!(String::from_utf8_lossy(&plain_err.stderr).contains("swap"));
    let err = |extra: &[&str]| {
        let mut args = vec![
            "clicks",
            "simulate",
            "--data",
            s(&train),
            "--model",
            s(&model),
            "--out",
        ];
        let out = dir.path().join("x.tsv");
        args.push(s(&out));
        args.extend(extra);
        let o = ltr(&args);
        assert!(!o.status.success());
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    assert!(err(&["--eps-minus", "0.5", "--eps-plus", "0.2"]).contains("eps- <= eps+"));
    assert!(err(&["--sessions", "0"]).contains("--sessions"));
    // Every model of ltr-clicks simulates (dbn included since issue 52); an unknown name is refused by name.
    assert!(err(&["--click-model", "dbm"]).contains("invalid value 'dbm'"));
}

/// The scores a kept-scores experiment wrote for `label` on `fold`.
fn kept(out: &Path, label: &str, fold: usize) -> String {
    std::fs::read_to_string(out.join(format!("scores/{label}/fold{fold}.txt"))).unwrap()
}

#[test]
fn a_model_file_scores_each_fold_as_ltr_predict_does() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_folds(&data, 2, 40);
    let fold1 = data.join("Fold1");
    // The ranksvm of fold 1, trained beforehand as the experiment trains it (defaults, seed 1, vali.txt).
    let model = dir.path().join("ranksvm-fold1.json");
    ok(&[
        "train",
        "--train",
        s(&fold1.join("train.txt")),
        "--validate",
        s(&fold1.join("vali.txt")),
        "--algo",
        "ranksvm",
        "--model",
        s(&model),
    ]);
    let out = dir.path().join("out");
    let model_algo = format!("model:{}", s(&model));
    let stdout = ok(&[
        "experiment",
        "--fold-dir",
        s(&data),
        "--algo",
        "ranksvm",
        "--algo",
        &model_algo,
        "--keep-scores",
        "--out",
        s(&out),
        "--json",
    ]);
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["computed"], 4);
    // Fold 1: the file is the model the experiment trains there, so every score is the same.
    let label = model_algo.replace(
        |c: char| !c.is_ascii_alphanumeric() && !"-_.".contains(c),
        "_",
    );
    assert_eq!(kept(&out, "ranksvm", 1), kept(&out, &label, 1));
    // Fold 2: the same file, not retrained, scores fold 2's test set as `ltr predict` does.
    let predicted = ok(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        s(&data.join("Fold2/test.txt")),
    ]);
    assert_eq!(kept(&out, &label, 2), predicted);
    assert_ne!(
        kept(&out, "ranksvm", 2),
        predicted,
        "fold 2's ranksvm is retrained"
    );
    // It takes part in the tables and the tests: the baseline (ranksvm) against it, with no difference on fold 1.
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let sig = results["significance"].as_array().unwrap();
    assert!(
        sig.iter().any(|c| c["method"] == model_algo.as_str()),
        "{sig:?}"
    );
    let means = |fold: u64, method: &str| {
        results["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["fold"] == fold && c["method"] == method)
            .unwrap()["means"]
            .clone()
    };
    assert_eq!(means(1, "ranksvm"), means(1, &model_algo));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains(&format!("| {model_algo} |")), "{report}");
}

#[test]
fn a_lightgbm_model_in_an_experiment_file_scores_as_ltr_predict() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../ltr-export/tests/fixtures/imports");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures.join("lgb_lambdarank.txt"),
        dir.path().join("lgb.txt"),
    )
    .unwrap();
    std::fs::copy(fixtures.join("test.txt"), dir.path().join("data.txt")).unwrap();
    // Relative paths in an experiment file are the file's folder's; the model is compared with a trained method.
    let config = dir.path().join("experiment.toml");
    std::fs::write(
        &config,
        "keep_scores = true\n[data]\nfile = \"data.txt\"\nfolds = 3\nvalidation_share = 0.0\n\
         [[algorithm]]\nalgo = \"model:lgb.txt\"\n[[algorithm]]\nalgo = \"ranksvm\"\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = || -> serde_json::Value {
        let args = [
            "experiment",
            "--config",
            s(&config),
            "--out",
            s(&out),
            "--json",
        ];
        serde_json::from_str(&ok(&args)).unwrap()
    };
    assert_eq!(run()["computed"], 6);
    for fold in 1..=3 {
        let test = out.join(format!("folds/fold{fold}/test.txt"));
        let lgb = dir.path().join("lgb.txt");
        let predicted = ok(&["predict", "--model", s(&lgb), "--data", s(&test)]);
        assert_eq!(kept(&out, "model_lgb.txt", fold), predicted, "fold {fold}");
    }
    // The written experiment file names the model by its absolute path and keeps its label: a rerun from it reuses
    // every cell.
    let written = out.join("experiment.toml");
    let args = [
        "experiment",
        "--config",
        s(&written),
        "--out",
        s(&out),
        "--json",
    ];
    let again: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    assert_eq!(
        (again["computed"].clone(), again["reused"].clone()),
        (0.into(), 6.into())
    );
}

#[test]
fn model_files_that_cannot_score_the_data_are_refused_naming_the_file() {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../ltr-export/tests/fixtures/imports");
    let lgb = fixtures.join("lgb_lambdarank.txt");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_folds(&data, 1, 40);
    let refusal = |model: &Path, data_flag: &str, data: &Path| {
        let algo = format!("model:{}", s(model));
        let out = dir.path().join("out");
        let mut args = vec![
            "experiment",
            data_flag,
            s(data),
            "--algo",
            &algo,
            "--out",
            s(&out),
        ];
        if data_flag == "--data" {
            args.extend(["--folds", "2"]);
        }
        let o = ltr(&args);
        assert!(!o.status.success());
        assert!(!out.join("cells").exists(), "refused before any cell");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    // A missing file.
    let missing = dir.path().join("no-such-model.txt");
    let e = refusal(&missing, "--fold-dir", &data);
    assert!(e.contains(s(&missing)) && e.contains("cannot read"), "{e}");
    // The LightGBM model reads 8 features; five-feature data would score it on zeros.
    let narrow = dir.path().join("narrow.txt");
    let lines: String = (0..12)
        .map(|i| format!("{} qid:{} 1:0.{i} 2:{} 5:0.25\n", i % 3, 1 + i / 4, i % 4))
        .collect();
    std::fs::write(&narrow, lines).unwrap();
    let e = refusal(&lgb, "--data", &narrow);
    assert!(
        e.contains(s(&lgb)) && e.contains("reads 8 features") && e.contains("has 5"),
        "{e}"
    );
    // Data wider than the model (generated: 46 features) is refused as `ltr predict` refuses it.
    let e = refusal(&lgb, "--fold-dir", &data);
    assert!(
        e.contains(s(&lgb)) && e.contains("trained on 8 features"),
        "{e}"
    );
    // Not a model.
    let e = refusal(&data.join("Fold1/train.txt"), "--fold-dir", &data);
    assert!(e.contains("Fold1/train.txt"), "{e}");
}

/// `ltr experiment --clicks 'logs/fold{fold}.tsv'`: each fold's cell is `ltr train --clicks` on that fold's log; a
/// learner that does not learn from clicks is refused before anything trains, naming the way to a judged row.
#[test]
fn an_experiment_on_click_logs_trains_each_fold_on_its_own_log() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    generate_folds(&data, 2, 30);
    for k in 1..=2 {
        let train = data.join(format!("Fold{k}/train.txt"));
        let prod = dir.path().join(format!("prod{k}.bin"));
        train_production(&train, &prod, &[]);
        simulate_clicks(
            &train,
            &prod,
            2000,
            &dir.path().join(format!("fold{k}.tsv")),
            &[],
        );
    }
    let logs = dir.path().join("fold{fold}.tsv");
    let out = dir.path().join("out");
    let exp = |algo: &str| {
        Command::new(env!("CARGO_BIN_EXE_ltr"))
            .args([
                "experiment",
                "--fold-dir",
                s(&data),
                "--clicks",
                s(&logs),
                "--algo",
                algo,
            ])
            .args(["--keep-scores", "--out", s(&out)])
            .env("RUST_LOG", "warn")
            .output()
            .unwrap()
    };
    let o = exp("lambdarank:debias=dr,epochs=10");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fold = data.join("Fold2");
    let (model, scores) = (dir.path().join("dr.bin"), dir.path().join("dr.scores"));
    ok(&[
        "train",
        "--train",
        s(&fold.join("train.txt")),
        "--validate",
        s(&fold.join("vali.txt")),
        "--clicks",
        s(&dir.path().join("fold2.tsv")),
        "--algo",
        "lambdarank",
        "--param",
        "debias=dr",
        "--param",
        "epochs=10",
        "--seed",
        "1",
        "--model",
        s(&model),
    ]);
    ok(&[
        "predict",
        "--model",
        s(&model),
        "--data",
        s(&fold.join("test.txt")),
        "--out",
        s(&scores),
    ]);
    assert_eq!(
        std::fs::read_to_string(&scores).unwrap(),
        kept(&out, "lambdarank", 2)
    );
    let o = exp("ranksvm");
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && e.contains("judged = true"), "{e}");
}
