//! The `ltr` binary as users call it: the CLI contract of DEVELOPERS.md, bad inputs, determinism.

use crate::common;
use std::path::Path;

use common::{fails_mentioning, ltr, ok};
use std::process::Command;

fn fails(args: &[&str], needle: &str) {
    fails_mentioning(args, &[needle]);
}

fn data(dir: &Path) -> (String, String, String) {
    ok(&[
        "generate",
        "--out",
        dir.to_str().unwrap(),
        "--queries",
        "60",
        "--max-docs",
        "40",
        "--features",
        "12",
        "--seed",
        "3",
    ]);
    let p = |n: &str| dir.join(n).to_str().unwrap().to_string();
    (p("train.txt"), p("vali.txt"), p("test.txt"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn inspect_json_has_the_contract_fields() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _, _) = data(dir.path());
    let v: serde_json::Value = serde_json::from_str(&ok(&["inspect", &train, "--json"])).unwrap();
    for k in [
        "queries",
        "documents",
        "features",
        "labels",
        "docs_per_query",
    ] {
        assert!(!v[k].is_null(), "missing {k}");
    }
    assert_eq!(v["features"], 12);
    let labels: u64 = v["labels"]
        .as_object()
        .unwrap()
        .values()
        .map(|x| x.as_u64().unwrap())
        .sum();
    assert_eq!(labels, v["documents"].as_u64().unwrap());
    for k in ["min", "median", "max"] {
        assert!(v["docs_per_query"][k].is_number());
    }
}

#[test]
fn train_predict_eval_compare_roundtrip() {
    let dir = tempfile::tempdir().unwrap();
    let (train, vali, test) = data(dir.path());
    let m1 = dir.path().join("svm.json");
    let m2 = dir.path().join("perc.bin");
    ok(&[
        "train",
        "--train",
        &train,
        "--validate",
        &vali,
        "--algo",
        "ranksvm",
        "--param",
        "c=0.01,1",
        "--metric",
        "MAP",
        "--model",
        s(&m1),
    ]);
    ok(&[
        "train",
        "--train",
        &train,
        "--algo",
        "perceptron",
        "--param",
        "epochs=3",
        "--param",
        "output=average",
        "--model",
        s(&m2),
    ]);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", s(&m1), "--json"])).unwrap();
    assert_eq!(info["algorithm"], "ranksvm");
    assert!(
        info["params"]["c"] == "0.01" || info["params"]["c"] == "1",
        "grid value kept: {}",
        info["params"]
    );
    let s1 = dir.path().join("a.txt");
    let s2 = dir.path().join("b.txt");
    ok(&[
        "predict",
        "--model",
        s(&m1),
        "--data",
        &test,
        "--out",
        s(&s1),
    ]);
    ok(&[
        "predict",
        "--model",
        s(&m2),
        "--data",
        &test,
        "--out",
        s(&s2),
    ]);
    let trec = ok(&[
        "predict",
        "--model",
        s(&m1),
        "--data",
        &test,
        "--format",
        "trec",
    ]);
    assert!(trec.lines().next().unwrap().contains(" Q0 "));
    let ev: serde_json::Value = serde_json::from_str(&ok(&[
        "eval",
        "--data",
        &test,
        "--scores",
        s(&s1),
        "--metric",
        "NDCG@10",
        "--metric",
        "MAP",
        "--convention",
        "letor4",
        "--per-query",
        "--json",
    ]))
    .unwrap();
    assert_eq!(ev["convention"], "letor4");
    let ndcg = ev["metrics"]["NDCG@10"]["mean"].as_f64().unwrap();
    assert!(ndcg > 0.3 && ndcg <= 1.0);
    let pq = ev["metrics"]["MAP"]["per_query"].as_object().unwrap();
    assert!(!pq.is_empty());
    let cmp: serde_json::Value = serde_json::from_str(&ok(&[
        "compare",
        "--data",
        &test,
        "--scores",
        s(&s1),
        "--scores",
        s(&s2),
        "--metric",
        "NDCG@10",
        "--test",
        "wilcoxon",
        "--json",
    ]))
    .unwrap();
    for k in ["difference", "statistic", "p_value", "test"] {
        assert!(!cmp[k].is_null(), "compare --json lacks {k}");
    }
    let diff = cmp["a"]["mean"].as_f64().unwrap() - cmp["b"]["mean"].as_f64().unwrap();
    assert!((cmp["difference"].as_f64().unwrap() - diff).abs() < 1e-12);
}

#[test]
fn every_registered_algorithm_trains_and_predicts() {
    let dir = tempfile::tempdir().unwrap();
    let (train, vali, test) = data(dir.path());
    let list = ok(&["algorithms"]);
    let names: Vec<&str> = list
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.is_empty())
        .collect();
    assert_eq!(names.len(), 19, "{names:?}");
    // Propensity SVM-Rank learns from clicks: a log simulated on the training queries with a first model.
    let production = dir.path().join("production.bin");
    ok(&[
        "train",
        "--train",
        &train,
        "--algo",
        "ranksvm",
        "--model",
        s(&production),
    ]);
    let clicks = dir.path().join("clicks.tsv");
    ok(&[
        "clicks",
        "simulate",
        "--data",
        &train,
        "--model",
        s(&production),
        "--sessions",
        "2000",
        "--out",
        s(&clicks),
    ]);
    for name in names {
        let m = dir.path().join(format!("{name}.bin"));
        let mut args = vec![
            "train",
            "--train",
            &train,
            "--validate",
            &vali,
            "--algo",
            name,
            "--model",
            s(&m),
        ];
        let extra: &[&str] = match name {
            "committee-perceptron" | "perceptron" => &["--param", "epochs=3"],
            "rankboost" => &["--param", "rounds=20"],
            "sigmoid" => &["--param", "lambda=0.01", "--param", "max-iter=5"],
            "listnet" => &["--param", "epochs=5"],
            "neural" => &["--param", "epochs=3"],
            "propensity-ranksvm" => &["--clicks", s(&clicks)],
            _ => &[],
        };
        args.extend_from_slice(extra);
        ok(&args);
        let out = ok(&["predict", "--model", s(&m), "--data", &test]);
        assert_eq!(
            out.lines().count(),
            std::fs::read_to_string(&test).unwrap().lines().count(),
            "{name}"
        );
    }
}

#[test]
fn bad_inputs_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let (train, vali, test) = data(dir.path());
    let m = dir.path().join("m.bin");
    ok(&[
        "train",
        "--train",
        &train,
        "--algo",
        "ranksvm",
        "--model",
        s(&m),
    ]);
    let short = dir.path().join("short.txt");
    std::fs::write(&short, "1\n2\n").unwrap();
    fails(
        &["eval", "--data", &test, "--scores", s(&short)],
        "short.txt",
    );
    let nan = dir.path().join("nan.txt");
    let n = std::fs::read_to_string(&test).unwrap().lines().count();
    std::fs::write(&nan, "0.5\n".repeat(n - 1) + "nan\n").unwrap();
    fails(
        &["eval", "--data", &test, "--scores", s(&nan)],
        &format!("nan.txt:{n}"),
    );
    fails(
        &[
            "eval",
            "--data",
            &test,
            "--scores",
            s(&nan),
            "--metric",
            "NDGC@10",
        ],
        "unknown metric",
    );
    fails(
        &[
            "train",
            "--train",
            &train,
            "--algo",
            "ranksvm",
            "--param",
            "bogus=1",
            "--model",
            s(&m),
        ],
        "bogus",
    );
    fails(
        &[
            "train",
            "--train",
            &train,
            "--algo",
            "ranksvm",
            "--param",
            "c=-1",
            "--model",
            s(&m),
        ],
        "c",
    );
    fails(
        &[
            "train",
            "--train",
            &train,
            "--algo",
            "nope",
            "--model",
            s(&m),
        ],
        "--algo: unknown algorithm `nope`",
    );
    // A misspelt parameter is reported before the training file is read (here it does not exist).
    fails(
        &[
            "train",
            "--train",
            "no-such-train.txt",
            "--algo",
            "ranksvm",
            "--param",
            "cc=1",
            "--model",
            s(&m),
        ],
        "--param: parameter `cc`: unknown parameter for `ranksvm`",
    );
    fails(
        &[
            "train",
            "--train",
            &train,
            "--algo",
            "ranksvm",
            "--param",
            "c=1,2",
            "--model",
            s(&m),
        ],
        "--validate",
    );
    fails(
        &[
            "train",
            "--train",
            "/no/such/file.txt",
            "--algo",
            "ranksvm",
            "--model",
            s(&m),
        ],
        "/no/such/file.txt",
    );
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "1 qid:1 1:0.5\nx qid:1 1:0.2\n").unwrap();
    fails(&["inspect", s(&bad)], "bad.txt:2");
    // Model/data dimension mismatch.
    let wide = dir.path().join("wide.txt");
    std::fs::write(&wide, "1 qid:1 1:0.5 40:1\n0 qid:1 2:0.1\n").unwrap();
    fails(
        &["predict", "--model", s(&m), "--data", s(&wide)],
        "features",
    );
    // A model file that is not one.
    fails(
        &["predict", "--model", &vali, "--data", &test],
        "not an ltr model",
    );
    fails(
        &[
            "compare",
            "--data",
            &test,
            "--scores",
            s(&short),
            "--metric",
            "MAP",
        ],
        "twice",
    );
}

#[test]
fn same_seed_same_model_bytes_at_one_and_two_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (train, vali, _) = data(dir.path());
    for (algo, extra) in [
        ("committee-perceptron", &["epochs=4"][..]),
        ("ranksvm", &["c=0.1"]),
        ("mhr", &["aggregate=wborda"]),
        ("rankboost", &["rounds=15"]),
        ("listnet", &["epochs=4"]),
        // The cutting-plane solver (RSVM-IR-QP's default) and the factored sigmoid pass.
        ("rsvm-ir", &["variant=qp", "c=0.1"]),
        (
            "sigmoid",
            &["seed-algo=ranksvm", "lambda=0.5", "max-iter=30"],
        ),
        ("slam-perceptron", &["violators=mean", "passes=3"]),
        // Restarts in parallel, per-query line searches in parallel.
        ("coordinate-ascent", &["restarts=3", "metric=MAP"]),
        ("lambdarank", &["epochs=10"]),
        ("adarank", &["rounds=20"]),
    ] {
        let mut models = Vec::new();
        for threads in ["1", "2"] {
            let m = dir.path().join(format!("{algo}-{threads}.bin"));
            let o = Command::new(env!("CARGO_BIN_EXE_ltr"))
                .args([
                    "train",
                    "--train",
                    &train,
                    "--validate",
                    &vali,
                    "--algo",
                    algo,
                    "--seed",
                    "9",
                    "--model",
                    s(&m),
                ])
                .args(extra.iter().flat_map(|p| ["--param", p]))
                .env("RAYON_NUM_THREADS", threads)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            // Wall times (training summary, MHR diagnostics) may differ; the model and its parameters may not.
            let mf = ltr_core::ModelFile::load(&m).unwrap();
            models.push((mf.model, mf.params));
        }
        assert_eq!(
            models[0], models[1],
            "{algo}: models differ between 1 and 2 threads"
        );
    }
}

#[test]
fn learners_stopped_by_their_caps_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _, _) = data(dir.path());
    let model = dir.path().join("m.json");
    for (algo, cap, needle) in [
        (
            "sigmoid",
            "max-iter=2",
            "stopped at its cap of max-iter = 2",
        ),
        (
            "ranksvm",
            "max-iter=1",
            "stopped at its cap of 1 iterations",
        ),
        (
            "coordinate-ascent",
            "max-sweeps=1",
            "stopped at max-sweeps = 1",
        ),
    ] {
        let o = ltr(&[
            "train",
            "--train",
            &train,
            "--algo",
            algo,
            "--param",
            cap,
            "--model",
            s(&model),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{algo}: {err}");
        assert!(
            err.contains(needle),
            "{algo}: stderr `{err}` should say `{needle}`"
        );
        assert!(model.exists(), "{algo}: the capped model is still written");
    }
}

/// A validation metric the data cannot give — ERR under LETOR 4.0's convention (largest grade 2) on web data with
/// grades up to 4 — is refused before training, naming the metric, the file and the grade; no model is written.
#[test]
fn a_validation_metric_the_data_cannot_give_is_refused_before_training() {
    let dir = tempfile::tempdir().unwrap();
    let train = common::generate_web(dir.path(), 60, 3);
    let vali = dir.path().join("vali.txt");
    let model = dir.path().join("m.json");
    for algo in ["lambdamart", "ranksvm", "coordinate-ascent"] {
        let o = ltr(&[
            "train",
            "--train",
            common::s(&train),
            "--validate",
            common::s(&vali),
            "--algo",
            algo,
            "--metric",
            "ERR@10",
            "--convention",
            "letor4",
            "--model",
            common::s(&model),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{algo}: {err}");
        assert!(
            err.contains("--metric: ERR@10 cannot be computed on")
                && err.contains("vali.txt")
                && err.contains("largest ERR grade 2"),
            "{algo}: {err}"
        );
        // Refused before any training: no memory estimate was logged, no model written.
        assert!(!err.contains("memory: about"), "{algo}: {err}");
        assert!(!model.exists(), "{algo}");
    }
}

/// `--nonlinearity` reaches the web generator: no flag means the calibrated value, 0 the earlier linear data
/// (other grades, same features), and values it cannot take are refused with the reason.
#[test]
fn generate_nonlinearity_defaults_to_the_calibrated_profile_and_refuses_bad_values() {
    let dir = tempfile::tempdir().unwrap();
    let gen = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec![
            "generate",
            "--profile",
            "web",
            "--queries",
            "6",
            "--seed",
            "4",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        ok(&args);
        std::fs::read_to_string(out.join("train.txt")).unwrap()
    };
    let default = gen("default", &[]);
    let calibrated = gen("calibrated", &["--nonlinearity", "0.25"]);
    let linear = gen("linear", &["--nonlinearity", "0"]);
    assert!(
        default == calibrated,
        "no flag must mean --nonlinearity 0.25"
    );
    assert!(default != linear, "the grades must differ at 0");
    // The features are the same; only the grade, each line's first token, differs.
    let features = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split_once(' ').unwrap().1.to_string())
            .collect()
    };
    assert_eq!(features(&default), features(&linear));
    let out = dir.path().join("bad");
    let out = out.to_str().unwrap();
    for bad in ["1.5", "-0.2", "NaN"] {
        fails(
            &[
                "generate",
                "--profile",
                "web",
                "--nonlinearity",
                bad,
                "--out",
                out,
            ],
            "nonlinearity must lie in [0, 1]",
        );
    }
    fails(
        &["generate", "--nonlinearity", "0.5", "--out", out],
        "--nonlinearity shapes the web profile's relevance; add --profile web",
    );
    fails(
        &[
            "generate",
            "--profile",
            "web",
            "--features",
            "12",
            "--nonlinearity",
            "0.5",
            "--out",
            out,
        ],
        "needs features >= 14",
    );
}

/// `--profile web-raw` reaches the raw generator with its own defaults (136 features, 5 to 1,000 documents a
/// query), the same seed writes the same files, `--nonlinearity` moves grades only, and too few features are
/// refused with the reason.
#[test]
fn generate_web_raw_profile_is_seeded_and_refuses_too_few_features() {
    let dir = tempfile::tempdir().unwrap();
    let gen = |name: &str, extra: &[&str]| -> Vec<String> {
        let out = dir.path().join(name);
        let mut args = vec![
            "generate",
            "--profile",
            "web-raw",
            "--queries",
            "10",
            "--seed",
            "5",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        ok(&args);
        ["train.txt", "vali.txt", "test.txt"]
            .iter()
            .map(|f| std::fs::read_to_string(out.join(f)).unwrap())
            .collect()
    };
    let a = gen("a", &[]);
    assert_eq!(a, gen("b", &[]), "same seed, other files");
    let all: Vec<&str> = a.iter().flat_map(|t| t.lines()).collect();
    let mut sizes = std::collections::BTreeMap::<&str, usize>::new();
    for line in &all {
        assert!(line.contains(" 136:"), "136 features: {line}");
        *sizes
            .entry(line.split_whitespace().nth(1).unwrap())
            .or_default() += 1;
    }
    assert_eq!(sizes.len(), 10);
    assert!(
        sizes.values().all(|&m| (5..=1000).contains(&m)),
        "{sizes:?}"
    );
    // The nonlinearity changes grades (each line's first token), not features.
    let linear = gen("linear", &["--nonlinearity", "0"]);
    assert!(a != linear);
    let features = |t: &[String]| -> Vec<String> {
        t.iter()
            .flat_map(|t| t.lines())
            .map(|l| l.split_once(' ').unwrap().1.to_string())
            .collect()
    };
    assert_eq!(features(&a), features(&linear));
    let out = dir.path().join("bad");
    fails(
        &[
            "generate",
            "--profile",
            "web-raw",
            "--features",
            "19",
            "--out",
            out.to_str().unwrap(),
        ],
        "needs features >= 20",
    );
}

/// The self-attention scorer through the CLI: trained, predicted, described by `ltr inspect`; heads that do not
/// divide the width are refused naming the parameter.
#[test]
fn the_attention_scorer_trains_predicts_and_is_described() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _, test) = data(dir.path());
    let m = dir.path().join("att.bin");
    let base = [
        "train",
        "--train",
        &train,
        "--algo",
        "neural",
        "--param",
        "scorer=attention",
        "--param",
        "sizes=8",
        "--param",
        "blocks=2",
        "--param",
        "heads=2",
        "--param",
        "d-ff=8",
        "--param",
        "epochs=2",
        "--model",
        s(&m),
    ];
    ok(&base);
    let out = ok(&["predict", "--model", s(&m), "--data", &test]);
    assert_eq!(
        out.lines().count(),
        std::fs::read_to_string(&test).unwrap().lines().count()
    );
    let about = ok(&["inspect", s(&m)]);
    assert!(
        about.contains("self-attention encoder of 2 blocks (2 heads, width 8, d_ff 8)"),
        "{about}"
    );
    let mut bad = base.to_vec();
    bad[12] = "heads=3";
    fails(&bad, "do not divide");
    // Its hidden layer's product in bfloat16, the encoder in f32: one score per line still.
    let fast = ok(&predict_at(s(&m), &test, "bf16"));
    assert_eq!(fast.lines().count(), out.lines().count());
    let int8 = ok(&predict_at(s(&m), &test, "int8"));
    assert_eq!(int8.lines().count(), out.lines().count());
}

/// `piece-rows` is `auto` (the default: the model records the piece it chose) or a number of documents; anything
/// else is refused naming the parameter.
#[test]
fn neural_pieces_are_auto_or_a_number() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _, _) = data(dir.path());
    let m = dir.path().join("mlp.bin");
    let model = s(&m);
    let train_at = |piece: &str| -> Vec<String> {
        let piece = format!("piece-rows={piece}");
        [
            "train", "--train", &train, "--algo", "neural", "--param", "epochs=2", "--param",
            &piece, "--model", model,
        ]
        .map(String::from)
        .to_vec()
    };
    ok(&args(&train_at("auto")));
    let about = ok(&["inspect", model]);
    assert!(about.contains("piece-rows=4096 (chosen)"), "{about}");
    ok(&args(&train_at("64")));
    let about = ok(&["inspect", model]);
    assert!(!about.contains("(chosen), piece-rows"), "{about}");
    assert!(!about.contains("piece-rows=4096"), "{about}");
    for bad in ["0", "abc", "-3"] {
        fails(&args(&train_at(bad)), "piece-rows");
    }
    // The memory line comes before training: said for parameters that check, not for ones the fit refuses (the
    // generic estimate it would fall back on is not the network's).
    let stderr_at = |piece: &str| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ltr"))
            .args(train_at(piece))
            .env("RUST_LOG", "info")
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(stderr_at("auto").contains("memory: about"));
    let refused = stderr_at("0");
    assert!(
        refused.contains("piece-rows") && !refused.contains("memory: about"),
        "{refused}"
    );
}

/// `memory=auto|speed|lean` of an attention network: the same model whichever is taken (training seconds aside,
/// so the scores are compared), auto's choice in the fit report, anything else refused by name.
#[test]
fn neural_memory_modes_train_one_model() {
    let dir = tempfile::tempdir().unwrap();
    let (train, test, _) = data(dir.path());
    let train_at = |mode: &str, model: &str| -> Vec<String> {
        let mode = format!("memory={mode}");
        [
            "train",
            "--train",
            &train,
            "--algo",
            "neural",
            "--param",
            "epochs=2",
            "--param",
            "scorer=attention",
            "--param",
            "sizes=8",
            "--param",
            "blocks=1",
            "--param",
            "heads=2",
            "--param",
            "d-ff=8",
            "--param",
            &mode,
            "--model",
            model,
        ]
        .map(String::from)
        .to_vec()
    };
    let mut scores = Vec::new();
    for mode in ["auto", "speed", "lean"] {
        let model = dir.path().join(format!("{mode}.bin"));
        let model = s(&model);
        ok(&args(&train_at(mode, model)));
        let about = ok(&["inspect", model]);
        assert_eq!(
            about.contains("memory=speed (chosen)"),
            mode == "auto",
            "{about}"
        );
        let out = dir.path().join(format!("{mode}.scores"));
        ok(&[
            "predict",
            "--model",
            model,
            "--data",
            &test,
            "--out",
            s(&out),
        ]);
        scores.push(std::fs::read_to_string(&out).unwrap());
    }
    assert_eq!(scores[0], scores[1]);
    assert_eq!(scores[0], scores[2]);
    let model = s(&dir.path().join("bad.bin")).to_string();
    fails(&args(&train_at("small", &model)), "memory");
    // Lean asked of a network that does not go query by query would change nothing: refused by name.
    let mlp = [
        "train",
        "--train",
        &train,
        "--algo",
        "neural",
        "--param",
        "memory=lean",
        "--model",
        &model,
    ];
    fails(&mlp, "memory=lean");
}

/// Owned arguments as the `&str`s `ok` and `fails` take.
fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `ltr predict --model MODEL --data DATA --precision PRECISION`'s arguments.
fn predict_at<'a>(model: &'a str, data: &'a str, precision: &'a str) -> [&'a str; 7] {
    [
        "predict",
        "--model",
        model,
        "--data",
        data,
        "--precision",
        precision,
    ]
}

/// `--precision bf16` and `int8` are for neural models; any other model, and a precision `ltr` does not know, are
/// refused by name.
#[test]
fn reduced_precision_is_refused_for_models_that_are_not_networks() {
    let dir = tempfile::tempdir().unwrap();
    let (train, _, test) = data(dir.path());
    let m = dir.path().join("svm.bin");
    ok(&[
        "train",
        "--train",
        &train,
        "--algo",
        "ranksvm",
        "--model",
        s(&m),
    ]);
    let predict = |precision| predict_at(s(&m), &test, precision);
    fails_mentioning(
        &predict("bf16"),
        &[
            "precision",
            "`bf16` applies to neural models",
            "a linear model",
        ],
    );
    fails_mentioning(
        &predict("int8"),
        &["`int8` applies to neural models", "a linear model"],
    );
    fails_mentioning(
        &predict("half"),
        &["--precision must be `full`, `bf16` or `int8`, not `half`"],
    );
    ok(&predict("full"));
}

/// A reader that stops early (`ltr algorithms | head -1`) closes the pipe under `ltr`: the write fails with EPIPE
/// (Rust ignores SIGPIPE), which must end the process quietly with success, not as an "internal error". The read
/// end is closed before `ltr` starts, so the first write fails on any machine.
#[test]
fn a_closed_stdout_ends_quietly() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ltr"))
        .arg("algorithms")
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("internal error"), "{stderr}");
}
