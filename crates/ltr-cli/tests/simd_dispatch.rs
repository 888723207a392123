//! Bit-identical on every CPU: the kernels `multiversion` compiles for AVX2, AVX2 with FMA and AVX-512 (chosen at
//! run time) must give the bits of the baseline code. Every algorithm is trained (with validation, small settings)
//! and scores the test file with the dispatch pinned by `LTR_SIMD` to each level this CPU has; the models (timings
//! aside) and the scores must be equal byte for byte. On a CPU with fewer levels, fewer are compared (printed).

use std::process::Command;

use crate::common::{ok, s, simulate_clicks, train_production};

/// The model file as JSON without wall-clock fields (a key naming seconds) and the binary's version.
fn normalised(path: &std::path::Path) -> serde_json::Value {
    fn strip(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => m
                .into_iter()
                .filter(|(k, _)| !k.contains("seconds"))
                .map(|(k, x)| (k, strip(x)))
                .collect(),
            serde_json::Value::Array(a) => a.into_iter().map(strip).collect(),
            other => other,
        }
    }
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let o = m.as_object_mut().unwrap();
    o.remove("crate_version");
    if let Some(d) = o
        .get("diagnostics_json")
        .and_then(|d| d.as_str())
        .filter(|d| !d.is_empty())
    {
        let d: serde_json::Value = serde_json::from_str(d).unwrap();
        o.insert("diagnostics_json".into(), d);
    }
    strip(m)
}

/// Quick settings: every learner finishes in well under a second on the small set.
fn small(algo: &str) -> &'static [&'static str] {
    match algo {
        "perceptron" | "committee-perceptron" => &["--param", "epochs=3"],
        "rankboost" => &["--param", "rounds=15"],
        "sigmoid" => &["--param", "max-iter=20"],
        "listnet" | "lambdarank" => &["--param", "epochs=5"],
        "coordinate-ascent" => &["--param", "restarts=2"],
        "adarank" => &["--param", "rounds=10"],
        "lambdamart" | "mart" | "random-forest" => &["--param", "trees=20"],
        "ranksvm" => &["--param", "c=0.01,0.1,1"],
        // Hidden layers with layer norm and dropout: every kernel of the network runs.
        "neural" => &[
            "--param",
            "epochs=10",
            "--param",
            "sizes=32/16",
            "--param",
            "layer-norm=true",
            "--param",
            "dropout=0.1",
        ],
        _ => &[],
    }
}

/// The network with an attention encoder, dropout inside it: the softmax's clones run in training and scoring.
const ATTENTION: &[&str] = &[
    "--param",
    "epochs=4",
    "--param",
    "scorer=attention",
    "--param",
    "sizes=16",
    "--param",
    "blocks=1",
    "--param",
    "heads=2",
    "--param",
    "d-ff=16",
    "--param",
    "attention-dropout=0.1",
];

#[test]
fn every_algorithm_gives_the_same_model_and_scores_at_every_simd_level() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "generate",
        "--queries",
        "60",
        "--seed",
        "11",
        "--out",
        s(dir.path()),
    ]);
    let levels: Vec<&str> = ltr_data::SimdLevel::available()
        .into_iter()
        .map(ltr_data::SimdLevel::name)
        .collect();
    println!("SIMD levels compared: {levels:?}");
    let algos: serde_json::Value = serde_json::from_str(&ok(&["algorithms", "--json"])).unwrap();
    let (train_file, vali_file, test_file) = (
        dir.path().join("train.txt"),
        dir.path().join("vali.txt"),
        dir.path().join("test.txt"),
    );
    let mut compared = 0;
    // Every learner with its small settings, and the network once more with an attention encoder (its softmax and
    // `exp` are kernels of their own).
    let mut runs: Vec<(&str, String, &[&str])> = algos
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        // propensity-ranksvm trains on a click log: the test below.
        .filter(|algo| *algo != "propensity-ranksvm")
        .map(|algo| (algo, algo.to_string(), small(algo)))
        .collect();
    runs.push(("neural", "neural-attention".into(), ATTENTION));
    // The same lean: the generated training set's queries hold a mean of 66 documents, so its step computes the
    // encoder's `dx` from `W` itself (`dense_dx_unpacked`), whose model must be the default's.
    let lean: Vec<&str> = ATTENTION
        .iter()
        .copied()
        .chain(["--param", "memory=lean"])
        .collect();
    runs.push(("neural", "neural-attention-lean".into(), &lean[..]));
    for (algo, label, params) in runs {
        let mut first: Option<(serde_json::Value, Vec<u8>)> = None;
        for level in &levels {
            let model = dir.path().join(format!("{label}-{level}.json"));
            let scores = dir.path().join(format!("{label}-{level}.scores"));
            let run = |args: &[&str]| {
                let o = Command::new(env!("CARGO_BIN_EXE_ltr"))
                    .args(args)
                    .env("RUST_LOG", "warn")
                    .env("LTR_SIMD", level)
                    .output()
                    .unwrap();
                assert!(
                    o.status.success(),
                    "LTR_SIMD={level} ltr {args:?}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
            };
            let mut train = vec![
                "train",
                "--train",
                s(&train_file),
                "--validate",
                s(&vali_file),
                "--algo",
                algo,
                "--seed",
                "7",
                "--model",
                s(&model),
            ];
            train.extend(params);
            run(&train);
            run(&[
                "predict",
                "--model",
                s(&model),
                "--data",
                s(&test_file),
                "--out",
                s(&scores),
            ]);
            let now = (normalised(&model), std::fs::read(&scores).unwrap());
            match &first {
                None => first = Some(now),
                Some(f) => {
                    assert!(
                        f.0 == now.0,
                        "{label}: the model at LTR_SIMD={level} differs from the one at {}",
                        levels[0]
                    );
                    assert!(
                        f.1 == now.1,
                        "{label}: test scores at LTR_SIMD={level} differ from those at {}",
                        levels[0]
                    );
                }
            }
        }
        compared += 1;
    }
    assert!(compared >= 15, "only {compared} algorithms compared");
    // Lean and the default (speed on this small set) score with the same bytes at every level.
    for level in &levels {
        let read = |label: &str| {
            std::fs::read(dir.path().join(format!("{label}-{level}.scores"))).unwrap()
        };
        assert!(
            read("neural-attention") == read("neural-attention-lean"),
            "memory=lean changed the scores at LTR_SIMD={level}"
        );
    }
}

/// Propensity SVM-Rank on a click log: its training set holds a copy of the displayed list per click, and Newton
/// reads runs of copies once (`ltr_pairs::SharedRows`, a kernel of its own per SIMD level), which data without copies
/// never reaches. The model must be the same at every level.
#[test]
fn propensity_ranksvm_on_clicks_gives_the_same_model_at_every_simd_level() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "generate",
        "--queries",
        "40",
        "--seed",
        "12",
        "--out",
        s(dir.path()),
    ]);
    let (train, production, clicks) = (
        dir.path().join("train.txt"),
        dir.path().join("production.json"),
        dir.path().join("clicks.tsv"),
    );
    train_production(&train, &production, &["c=0.1"]);
    simulate_clicks(&train, &production, 3000, &clicks, &["--seed", "3"]);
    let mut first: Option<serde_json::Value> = None;
    for level in ltr_data::SimdLevel::available() {
        let model = dir.path().join(format!("clicks-{}.json", level.name()));
        let o = Command::new(env!("CARGO_BIN_EXE_ltr"))
            .args(["train", "--train", s(&train), "--clicks", s(&clicks)])
            .args(["--algo", "propensity-ranksvm", "--model", s(&model)])
            .env("RUST_LOG", "warn")
            .env("LTR_SIMD", level.name())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let now = normalised(&model);
        match &first {
            None => first = Some(now),
            Some(f) => assert!(
                f == &now,
                "the click model at LTR_SIMD={} differs",
                level.name()
            ),
        }
    }
}

/// `ltr predict --precision bf16`: the hidden layers' products in bfloat16 run in AVX-512 BF16 tiles where the CPU
/// has them and in safe code at every other level; the scores must be the same bytes at every level, near the full
/// precision's and not equal to them. Layers of 70 and 16 outputs: a panel and a padded one, and a padded panel
/// alone.
#[test]
fn bfloat16_scores_are_the_same_at_every_simd_level() {
    reduced_precision_is_the_same_at_every_level(
        "bf16",
        |level| level >= ltr_data::SimdLevel::Avx512 && ltr_core::neural::bf16::cpu_has_tiles(),
        "run in portable code, about 100 times slower",
        0.02,
    );
}

/// `ltr predict --precision int8`: the products in 8-bit integers run in AVX2 tiles from `avx2` up and in portable
/// code below; the same bytes at every level, near the full precision's (seven bits an input and a weight) and not
/// equal to them. Layers of 70 and 16 outputs: panels of 16 with a padded one, and inputs padded to a step of 8.
#[test]
fn int8_scores_are_the_same_at_every_simd_level() {
    reduced_precision_is_the_same_at_every_level(
        "int8",
        |level| level >= ltr_data::SimdLevel::Avx2 && ltr_core::neural::int8::cpu_has_tiles(),
        "the integer products run in portable code",
        0.05,
    );
}

/// A small MLP trained on generated data, scored at `precision` under every `LTR_SIMD` level this CPU has: the
/// same bytes at each, `warning` on stderr exactly where `tiles(level)` is false, and every score within
/// `bound` of the scores' mean magnitude from the full precision's, some not equal.
fn reduced_precision_is_the_same_at_every_level(
    precision: &str,
    tiles: impl Fn(ltr_data::SimdLevel) -> bool,
    warning: &str,
    bound: f64,
) {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "generate",
        "--queries",
        "30",
        "--seed",
        "13",
        "--out",
        s(dir.path()),
    ]);
    let (train, test, model) = (
        dir.path().join("train.txt"),
        dir.path().join("test.txt"),
        dir.path().join("mlp.json"),
    );
    ok(&[
        "train",
        "--train",
        s(&train),
        "--algo",
        "neural",
        "--param",
        "epochs=3",
        "--param",
        "sizes=70/16",
        "--seed",
        "5",
        "--model",
        s(&model),
    ]);
    let full: Vec<f64> = ok(&["predict", "--model", s(&model), "--data", s(&test)])
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let mut first: Option<String> = None;
    for level in ltr_data::SimdLevel::available() {
        let o = Command::new(env!("CARGO_BIN_EXE_ltr"))
            .args(["predict", "--model", s(&model), "--data", s(&test)])
            .args(["--precision", precision])
            .env("RUST_LOG", "warn")
            .env("LTR_SIMD", level.name())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert_eq!(
            err.contains(warning),
            !tiles(level),
            "{precision} at LTR_SIMD={}: {err}",
            level.name()
        );
        let now = String::from_utf8(o.stdout).unwrap();
        match &first {
            None => first = Some(now),
            Some(f) => assert!(
                f == &now,
                "{precision} scores at LTR_SIMD={} differ",
                level.name()
            ),
        }
    }
    let fast: Vec<f64> = first.unwrap().lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(fast.len(), full.len());
    let scale = full.iter().map(|v| v.abs()).sum::<f64>() / full.len() as f64;
    let worst = full
        .iter()
        .zip(&fast)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst > 0.0, "{precision} scores equal the full ones");
    assert!(
        worst < bound * scale,
        "{precision}: worst {worst} against scale {scale}"
    );
}
