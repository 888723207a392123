//! Preprocessing stored in the model: `ltr predict` on raw data equals the plain weights on a pre-normalised copy;
//! `inspect` shows it; bad options fail with a message.

use crate::common;

use common::{ltr, ok};

use ltr::prelude::*;

/// Raw web-like features: one column of counts in the thousands, one constant column.
fn raw_data(seed: u64) -> Dataset {
    let mut ds = generate_letor_like(&SyntheticConfig {
        queries: 40,
        features: 8,
        query_level_norm: false,
        seed,
        ..Default::default()
    })
    .unwrap();
    ds.to_dense();
    let ltr::data::FeatureMatrix::Dense(a) = ds.features_mut() else {
        unreachable!()
    };
    a.column_mut(2)
        .mapv_inplace(|v| (v * 500.0).abs().round() + 3.0);
    a.column_mut(5).fill(42.0);
    ds
}

fn scores(text: &str) -> Vec<f64> {
    text.lines().map(|l| l.trim().parse().unwrap()).collect()
}

#[test]
fn a_normalised_model_scores_raw_data_as_the_weights_score_a_normalised_copy() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    write_letor(&raw_data(1), p("train.txt").as_ref()).unwrap();
    write_letor(&raw_data(2), p("test.txt").as_ref()).unwrap();
    for normalize in ["zscore", "minmax", "query-zscore", "query-sum", "auto"] {
        let model = p(&format!("{normalize}.json"));
        ok(&[
            "train",
            "--train",
            &p("train.txt"),
            "--algo",
            "ranksvm",
            "--param",
            "c=0.1",
            "--normalize",
            normalize,
            "--log1p",
            "3",
            "--model",
            &model,
        ]);
        let raw_scores = scores(&ok(&[
            "predict",
            "--model",
            &model,
            "--data",
            &p("test.txt"),
        ]));

        // The same model without its preprocessing, applied to a copy normalised by hand.
        let mut mf = ModelFile::load(model.as_ref()).unwrap();
        let pre = mf
            .preprocess
            .take()
            .expect("the model stores its preprocessing");
        let normalised = pre.apply(&read_letor(p("test.txt")).unwrap()).unwrap();
        write_letor(&normalised, p("test-norm.txt").as_ref()).unwrap();
        mf.save(p("plain.json").as_ref()).unwrap();
        let plain_scores = scores(&ok(&[
            "predict",
            "--model",
            &p("plain.json"),
            "--data",
            &p("test-norm.txt"),
        ]));
        assert_eq!(raw_scores.len(), plain_scores.len());
        for (a, b) in raw_scores.iter().zip(&plain_scores) {
            assert!(
                (a - b).abs() <= 1e-12 * a.abs().max(1.0),
                "{normalize}: {a} vs {b}"
            );
        }
        let shown = ok(&["inspect", &model]);
        assert!(
            shown.contains("preprocess:") && shown.contains("log1p"),
            "{shown}"
        );
    }
}

#[test]
fn feature_names_are_stored_and_inspect_lists_weights_by_name_through_the_selection() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    write_letor(&raw_data(3), p("train.txt").as_ref()).unwrap();
    std::fs::write(p("names.txt"), "1 bm25\n3 clicks\n4 pagerank\n").unwrap();
    let model = p("m.json");
    ok(&[
        "train",
        "--train",
        &p("train.txt"),
        "--algo",
        "ranksvm",
        "--features",
        "3,4,1",
        "--feature-names",
        &p("names.txt"),
        "--model",
        &model,
    ]);
    let v: serde_json::Value = serde_json::from_str(&ok(&["inspect", &model, "--json"])).unwrap();
    let ranked = v["weights_by_magnitude"].as_array().unwrap();
    assert_eq!(ranked.len(), 3);
    let mut names: Vec<&str> = ranked.iter().map(|r| r["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["bm25", "clicks", "pagerank"]);
    let w: Vec<f64> = ranked
        .iter()
        .map(|r| r["weight"].as_f64().unwrap().abs())
        .collect();
    assert!(w.windows(2).all(|x| x[0] >= x[1]), "{w:?}");
    let text = ok(&["inspect", &model]);
    assert!(text.contains("clicks (feature 3)"), "{text}");
}

#[test]
fn letor_data_is_left_alone_by_auto_and_bad_options_fail() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let letor = generate_letor_like(&SyntheticConfig {
        queries: 20,
        ..Default::default()
    })
    .unwrap();
    write_letor(&letor, p("train.txt").as_ref()).unwrap();
    ok(&[
        "train",
        "--train",
        &p("train.txt"),
        "--algo",
        "ranksvm",
        "--model",
        &p("m.json"),
    ]);
    assert!(ModelFile::load(p("m.json").as_ref())
        .unwrap()
        .preprocess
        .is_none());
    let (train, out) = (p("train.txt"), p("x.json"));
    for (args, needle) in [
        (vec!["--normalize", "bogus"], "unknown normalisation"),
        (vec!["--log1p", "99"], "outside 1..="),
        (vec!["--features", "0-3"], "expected N or N-M"),
        (
            vec!["--features", "@/nonexistent/features.txt"],
            "cannot read the feature file",
        ),
        (
            vec!["--feature-names", "/nonexistent/names.txt"],
            "names.txt",
        ),
        (vec!["--log1p", "2,x"], "expected N or N-M"),
    ] {
        let mut a = vec![
            "train", "--train", &train, "--algo", "ranksvm", "--model", &out,
        ];
        a.extend(args);
        let o = ltr(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(needle), "{a:?}: {err}");
    }
}

#[test]
fn generated_web_data_is_raw_and_auto_normalises_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    ok(&[
        "generate",
        "--profile",
        "web",
        "--out",
        out,
        "--queries",
        "20",
        "--seed",
        "5",
    ]);
    let train = dir.path().join("train.txt");
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", train.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(v["features"], 136, "{v}");
    let model = dir.path().join("m.json");
    ok(&[
        "train",
        "--train",
        train.to_str().unwrap(),
        "--algo",
        "ranksvm",
        "--model",
        model.to_str().unwrap(),
    ]);
    let mf = ModelFile::load(&model).unwrap();
    assert!(
        matches!(
            mf.preprocess.and_then(|p| p.normalization),
            Some(ltr::data::Normalization::ZScore(_))
        ),
        "auto must z-score raw web features"
    );
}
