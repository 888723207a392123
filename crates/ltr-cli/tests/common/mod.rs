//! Running the `ltr` binary from the integration tests.

use std::process::{Command, Output};

/// Run `ltr` with `args` (logs at warn).
pub fn ltr(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ltr"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run ltr")
}

/// Run `ltr`, require success, return stdout.
pub fn ok(args: &[&str]) -> String {
    let o = ltr(args);
    assert!(
        o.status.success(),
        "ltr {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// A path as the `&str` an argument list takes.
#[allow(dead_code)] // not every test file uses every helper
pub fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// The `model` part of a JSON model file (weights or members, without provenance and timings).
#[allow(dead_code)]
pub fn model_part(path: &std::path::Path) -> serde_json::Value {
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["model"].clone()
}

/// `ltr generate --profile web` into `dir`; the path of its `train.txt`.
#[allow(dead_code)]
pub fn generate_web(dir: &std::path::Path, queries: usize, seed: u64) -> std::path::PathBuf {
    let (q, sd) = (queries.to_string(), seed.to_string());
    ok(&[
        "generate",
        "--profile",
        "web",
        "--queries",
        &q,
        "--seed",
        &sd,
        "--out",
        s(dir),
    ]);
    dir.join("train.txt")
}

/// A small web-profile training file at `path`: 12 queries of 10–20 documents and 10 raw features, from `seed`
/// (written by the library, so no `ltr generate` process is spent on it).
#[allow(dead_code)]
pub fn write_small_web(path: &std::path::Path, seed: u64) {
    let web = ltr_data::generate_web(&ltr_data::WebConfig {
        queries: 12,
        min_docs: 10,
        max_docs: 20,
        features: 10,
        seed,
        ..Default::default()
    })
    .unwrap();
    ltr_data::write_letor(&web, path).unwrap();
}

/// `ltr generate` (the LETOR-like profile) into `root/Fold1` … `root/Fold{folds}`, fold `k` from seed `k`.
#[allow(dead_code)]
pub fn generate_folds(root: &std::path::Path, folds: usize, queries: usize) {
    let q = queries.to_string();
    for k in 1..=folds {
        let fold = root.join(format!("Fold{k}"));
        ok(&[
            "generate",
            "--out",
            s(&fold),
            "--queries",
            &q,
            "--seed",
            &k.to_string(),
        ]);
    }
}

/// Run `ltr`, require failure with every one of `needles` in stderr, and no panic.
#[allow(dead_code)]
pub fn fails_mentioning(args: &[&str], needles: &[&str]) {
    let o = ltr(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "ltr {args:?} should fail");
    for needle in needles {
        assert!(
            err.contains(needle),
            "ltr {args:?}: stderr `{err}` should mention `{needle}`"
        );
    }
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "no panic: {err}"
    );
}

/// Run `ltr`, require failure without a panic, return stderr.
#[allow(dead_code)]
pub fn err(args: &[&str]) -> String {
    let o = ltr(args);
    assert!(!o.status.success(), "{args:?} should fail");
    let e = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!e.contains("panicked"), "{e}");
    e
}

/// `ltr generate` (the LETOR-like profile) of `queries` queries from `seed` into `dir`; the path of its
/// `train.txt`.
#[allow(dead_code)]
pub fn generate_letor(dir: &std::path::Path, queries: usize, seed: u64) -> std::path::PathBuf {
    let (q, sd) = (queries.to_string(), seed.to_string());
    ok(&["generate", "--out", s(dir), "--queries", &q, "--seed", &sd]);
    dir.join("train.txt")
}

/// The production ranker of the click tests: `ltr train --algo ranksvm` on `train` (with `params`, each a
/// `--param` value) into `model`.
#[allow(dead_code)]
pub fn train_production(train: &std::path::Path, model: &std::path::Path, params: &[&str]) {
    let mut args = vec!["train", "--train", s(train), "--algo", "ranksvm"];
    for p in params {
        args.extend(["--param", p]);
    }
    args.extend(["--model", s(model)]);
    ok(&args);
}

/// `ltr clicks simulate` of `sessions` sessions on `train` ranked by `model` into `out`, with `extra` flags.
#[allow(dead_code)]
pub fn simulate_clicks(
    train: &std::path::Path,
    model: &std::path::Path,
    sessions: usize,
    out: &std::path::Path,
    extra: &[&str],
) {
    let n = sessions.to_string();
    let mut args = vec![
        "clicks",
        "simulate",
        "--data",
        s(train),
        "--model",
        s(model),
        "--sessions",
        &n,
    ];
    args.extend_from_slice(extra);
    args.extend(["--out", s(out)]);
    ok(&args);
}
