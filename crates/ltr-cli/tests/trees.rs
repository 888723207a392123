//! `lambdamart` and `mart` from the command line: boosting from another model (`init-model`, `init-algo`) into one
//! model file, and the bad inputs of tree training, each refused with the file or parameter named and no panic.

use crate::common;

use common::{fails_mentioning, ok, s};
use std::path::Path;

/// Small LETOR-like data: 30 queries, 12 features in [0, 1] (no preprocessing by default).
fn letor(dir: &Path) -> (String, String) {
    ok(&[
        "generate",
        "--out",
        s(dir),
        "--queries",
        "30",
        "--max-docs",
        "30",
        "--features",
        "12",
        "--seed",
        "4",
    ]);
    let p = |n: &str| s(&dir.join(n)).to_string();
    (p("train.txt"), p("test.txt"))
}

fn train(args: &[&str], model: &Path) {
    let mut all = vec!["train"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--model", s(model)]);
    ok(&all);
}

fn predict(model: &Path, data: &str, out: &Path) -> String {
    ok(&[
        "predict",
        "--model",
        s(model),
        "--data",
        data,
        "--out",
        s(out),
    ]);
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn boosting_from_ranksvm_saves_one_model_that_starts_at_its_scores() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (tr, test) = letor(d);
    let svm = d.join("svm.bin");
    train(&["--train", &tr, "--algo", "ranksvm", "--seed", "5"], &svm);
    let svm_scores = predict(&svm, &test, &d.join("svm.txt"));
    // Zero rounds: the start model alone, whether trained here (same data, same seed) or read from its file.
    for init in ["init-algo=ranksvm", &format!("init-model={}", s(&svm))] {
        for algo in ["lambdamart", "mart"] {
            let m = d.join("zero.bin");
            train(
                &[
                    "--train", &tr, "--algo", algo, "--seed", "5", "--param", init, "--param",
                    "trees=0",
                ],
                &m,
            );
            assert_eq!(predict(&m, &test, &d.join("z.txt")), svm_scores, "{init}");
        }
    }
    // With trees: one file, described as boosted, scoring differently from the start.
    let m = d.join("boosted.json");
    train(
        &[
            "--train",
            &tr,
            "--algo",
            "lambdamart",
            "--param",
            "init-algo=ranksvm",
            "--param",
            "trees=5",
            "--param",
            "min-docs-in-leaf=5",
        ],
        &m,
    );
    assert_ne!(predict(&m, &test, &d.join("b.txt")), svm_scores);
    let described = ok(&["inspect", s(&m)]);
    assert!(
        described.contains("5 regression trees")
            && described.contains("boosted from a start model: linear"),
        "{described}"
    );
    // No export target expresses a linear model plus trees: refused, saying why.
    for target in ["onnx", "ranklib", "es-ltr", "es8-ltr"] {
        fails_mentioning(
            &[
                "export",
                "--model",
                s(&m),
                "--to",
                target,
                "--out",
                s(&d.join("x")),
            ],
            &["boosted from another model"],
        );
    }
}

#[test]
fn a_start_model_file_keeps_its_own_normalisation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Raw web features: `ranksvm` stores a z-score in its file.
    let tr = common::generate_web(d, 30, 2);
    let tr = s(&tr).to_string();
    let svm = d.join("svm.bin");
    train(&["--train", &tr, "--algo", "ranksvm"], &svm);
    let init = format!("init-model={}", s(&svm));
    // Trees normalise nothing under `auto`, so the default job feeds the start model the raw features it expects.
    train(
        &[
            "--train",
            &tr,
            "--algo",
            "lambdamart",
            "--param",
            &init,
            "--param",
            "trees=2",
        ],
        &d.join("auto.bin"),
    );
    // Asked to z-score the features before the start model's own z-score: refused, naming the fix.
    fails_mentioning(
        &[
            "train",
            "--train",
            &tr,
            "--algo",
            "lambdamart",
            "--normalize",
            "zscore",
            "--param",
            &init,
            "--model",
            s(&d.join("m.bin")),
        ],
        &["init-model", "--normalize none"],
    );
    let m = d.join("m.bin");
    train(
        &[
            "--train",
            &tr,
            "--algo",
            "mart",
            "--normalize",
            "none",
            "--param",
            &init,
            "--param",
            "trees=0",
        ],
        &m,
    );
    assert_eq!(
        predict(&m, &tr, &d.join("m.txt")),
        predict(&svm, &tr, &d.join("s.txt"))
    );
}

#[test]
fn bad_tree_inputs_fail_naming_the_parameter_or_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (tr, test) = letor(d);
    let m = d.join("m.bin");
    let out = s(&m);
    // `ltr train --train DATA --algo ALGO EXTRA… --model m.bin` fails, its message holding every needle.
    let refused = |data: &str, algo: &str, extra: &[&str], needles: &[&str]| {
        let mut args = vec!["train", "--train", data, "--algo", algo];
        args.extend_from_slice(extra);
        args.extend(["--model", out]);
        fails_mentioning(&args, needles);
    };
    for (param, needle) in [
        ("leaves=1", "parameter `leaves`: 1 is outside [2,"),
        ("learning-rate=0", "parameter `learning-rate`: 0 is outside"),
        (
            "query-fraction=1.5",
            "parameter `query-fraction`: 1.5 is outside",
        ),
        ("max-bin=1", "parameter `max-bin`: 1 is outside [2, 65535]"),
        (
            "bin-sample-docs=0",
            "parameter `bin-sample-docs`: 0 is outside [1,",
        ),
        (
            "min-data-in-bin=0",
            "parameter `min-data-in-bin`: 0 is outside [1,",
        ),
        (
            "min-data-in-bin=x",
            "parameter `min-data-in-bin`",
        ),
        ("trees=0", "0 only when boosting from a start model"),
        (
            "init-algo=lambdamart",
            "`lambdamart` cannot start from itself",
        ),
        ("init-algo=nope", "unknown algorithm `nope`"),
        (
            "lambda-metric=ndgc",
            "parameter `lambda-metric`: `ndgc` is not one of ndcg, err, map",
        ),
        (
            "label-gain=0:1:x",
            "parameter `label-gain`: `x` in `0:1:x` is not a number",
        ),
        (
            "label-gain=0:1",
            "parameter `label-gain`: label 2 of the training data is beyond the gain list (labels 0 to 1)",
        ),
    ] {
        refused(&tr, "lambdamart", &["--param", param], &[needle]);
    }
    // Query weights: every training query needs one, and a bad line is named by file and line.
    let train_text = std::fs::read_to_string(&tr).unwrap();
    let mut qids: Vec<&str> = train_text
        .lines()
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    qids.dedup();
    let weights = d.join("weights.txt");
    let weights_param = format!("query-weights={}", s(&weights));
    let weighted = &["--param", weights_param.as_str()];
    let last = qids.pop().unwrap();
    let listed: String = qids.iter().map(|q| format!("{q} 1\n")).collect();
    std::fs::write(&weights, listed).unwrap();
    refused(
        &tr,
        "lambdamart",
        weighted,
        &[&format!(
            "weights.txt has no weight for training query {}",
            &last[4..]
        )],
    );
    std::fs::write(
        &weights,
        format!("# qid weight\n{last} 1\n{} 0.5 extra\n", qids[0]),
    )
    .unwrap();
    refused(
        &tr,
        "lambdamart",
        weighted,
        &[
            "parameter `query-weights`",
            "weights.txt:3: expected `qid weight`",
        ],
    );
    // A validation measure that does not exist.
    refused(
        &tr,
        "mart",
        &["--validate", &test, "--metric", "NDGC@10"],
        &["--metric: unknown metric `NDGC@10`"],
    );
    // A start model wider than the data, and a start "model" that is a data file.
    let wide = d.join("wide.txt");
    std::fs::write(
        &wide,
        "1 qid:1 1:0.5 20:1\n0 qid:1 2:0.1\n0 qid:2 3:0.2\n1 qid:2 1:0.7\n",
    )
    .unwrap();
    let wide_model = d.join("wide.bin");
    train(&["--train", s(&wide), "--algo", "ranksvm"], &wide_model);
    refused(
        &tr,
        "mart",
        &["--param", &format!("init-model={}", s(&wide_model))],
        &["wide.bin reads 20 features, more than the 12 of the training data"],
    );
    refused(
        &tr,
        "mart",
        &["--param", &format!("init-model={test}")],
        &["test.txt: not an ltr model file"],
    );
    // A label that is not a number.
    let nan = d.join("nan.txt");
    std::fs::write(&nan, "1 qid:1 1:0.5\nnan qid:1 1:0.2\n").unwrap();
    refused(
        s(&nan),
        "lambdamart",
        &[],
        &["nan.txt:2: the label is not finite"],
    );
    assert!(!m.exists(), "no model is written by a refused run");
}

/// The mean of `metric` of `scores` on `data` (letor4), from `ltr eval --json`.
fn mean(data: &str, scores: &Path, metric: &str) -> f64 {
    let v: serde_json::Value = serde_json::from_str(&ok(&[
        "eval",
        "--data",
        data,
        "--scores",
        s(scores),
        "--metric",
        metric,
        "--convention",
        "letor4",
        "--json",
    ]))
    .unwrap();
    v["metrics"][metric]["mean"].as_f64().unwrap()
}

/// Boosting from RankSVM on MQ2008 Fold1 keeps at least RankSVM's quality. First run (2026-11-27): RankSVM alone
/// NDCG@10 0.2133, MAP 0.4549; 100 trees at learning rate 0.02 from it 0.2260, 0.4630. Skipped without the
/// shared datasets; 0.8 s in a dev build on the loaded 2-core machine.
#[test]
fn boosting_from_ranksvm_on_mq2008_is_no_worse_than_ranksvm() {
    let fold = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/MQ2008/Fold1");
    if !fold.join("train.txt").exists() {
        println!("SKIP: {} is absent", fold.display());
        return;
    }
    let (tr, test) = (fold.join("train.txt"), fold.join("test.txt"));
    let (tr, test) = (s(&tr).to_string(), s(&test).to_string());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (svm, boosted) = (d.join("svm.bin"), d.join("boosted.bin"));
    train(&["--train", &tr, "--algo", "ranksvm"], &svm);
    train(
        &[
            "--train",
            &tr,
            "--algo",
            "lambdamart",
            "--param",
            "init-algo=ranksvm",
            "--param",
            "learning-rate=0.02",
        ],
        &boosted,
    );
    let (a, b) = (d.join("svm.txt"), d.join("boosted.txt"));
    predict(&svm, &test, &a);
    predict(&boosted, &test, &b);
    for metric in ["NDCG@10", "MAP"] {
        let (alone, plus) = (mean(&test, &a, metric), mean(&test, &b, metric));
        assert!(
            plus >= alone - 0.005,
            "{metric}: {plus} against RankSVM's {alone}"
        );
    }
}
