use std::collections::BTreeMap;

use ltr_core::model_file::BINARY_MAGIC;
use ltr_core::*;
use ltr_data::Preprocess;
use serde::Serialize;

fn sample() -> ModelFile {
    let mut p = BTreeMap::new();
    p.insert("c".to_string(), "0.1".to_string());
    let t = TrainingSummary {
        train_file: "t.txt".into(),
        features: 3,
        ..Default::default()
    };
    ModelFile::new(
        "ranksvm",
        p,
        t,
        Model::Linear(LinearModel::new(vec![0.1, -2.5e-17, 1.0 / 3.0])),
    )
}

#[test]
fn unnamed_and_blank_named_features_are_called_by_number() {
    let mut m = sample();
    m.feature_names = vec!["bm25".into(), String::new()];
    let names: Vec<String> = (1..=3).map(|k| m.feature_name(k)).collect();
    assert_eq!(names, ["bm25", "f2", "f3"]);
    assert_eq!(
        m.input_features(),
        [(1, "bm25".into()), (2, "f2".into()), (3, "f3".into())]
    );
    assert_eq!(m.feature_name(0), "f0");
}

#[test]
fn json_and_binary_roundtrip_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let m = sample();
    assert_roundtrips(dir.path(), &m, ["m.json", "m.bin"]);
}

#[test]
fn forest_models_roundtrip_and_old_variants_keep_their_encoding() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = sample();
    let linear_bytes = postcard::to_stdvec(&m.model).unwrap();
    // Linear is still variant 0 after appending Forest.
    assert_eq!(linear_bytes[0], 0);
    m.model = Model::Forest(ltr_core::Forest {
        trees: vec![
            ltr_core::ForestTree {
                split_feature: vec![2],
                threshold: vec![0.25],
                default_left: vec![false],
                left: vec![!0],
                right: vec![!1],
                leaf_value: vec![-0.5, 1.0 / 3.0],
                weight: 1.0,
                split_gain: vec![0.75],
            },
            ltr_core::ForestTree::leaf(0.1, 0.5),
        ],
        base_score: 0.125,
        n_features: 3,
    });
    assert_eq!(postcard::to_stdvec(&m.model).unwrap()[0], 4);
    assert_roundtrips(dir.path(), &m, ["f.json", "f.bin"]);
}

#[test]
fn version_1_files_still_load_in_both_forms() {
    #[derive(Serialize)]
    struct V1<'a> {
        format_version: u32,
        crate_version: &'a str,
        algorithm: &'a str,
        params: &'a BTreeMap<String, String>,
        n_features: usize,
        training: &'a TrainingSummary,
        diagnostics_json: &'a str,
        model: &'a Model,
    }
    let m = sample();
    let v1 = V1 {
        format_version: 1,
        crate_version: "0.1.0",
        algorithm: &m.algorithm,
        params: &m.params,
        n_features: m.n_features,
        training: &m.training,
        diagnostics_json: "",
        model: &m.model,
    };
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("old.json");
    std::fs::write(&j, serde_json::to_vec(&v1).unwrap()).unwrap();
    let b = dir.path().join("old.bin");
    let mut bytes = BINARY_MAGIC.to_vec();
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend(postcard::to_stdvec(&v1).unwrap());
    std::fs::write(&b, bytes).unwrap();
    for p in [j, b] {
        let old = ModelFile::load(&p).unwrap();
        assert_eq!(old.format_version, 1);
        assert_eq!((&old.model, &old.params), (&m.model, &m.params));
        assert_eq!(old.fit, FitReport::default());
    }
}

#[test]
fn version_2_binary_files_still_load() {
    #[derive(Serialize)]
    struct V2<'a> {
        format_version: u32,
        crate_version: &'a str,
        algorithm: &'a str,
        params: &'a BTreeMap<String, String>,
        n_features: usize,
        training: &'a TrainingSummary,
        diagnostics_json: &'a str,
        model: &'a Model,
        fit: FitReport,
    }
    let m = sample();
    let fit = FitReport::default().select("c", 0.5);
    let v2 = V2 {
        format_version: 2,
        crate_version: "0.1.0",
        algorithm: &m.algorithm,
        params: &m.params,
        n_features: m.n_features,
        training: &m.training,
        diagnostics_json: "",
        model: &m.model,
        fit: fit.clone(),
    };
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("v2.bin");
    let mut bytes = BINARY_MAGIC.to_vec();
    bytes.extend_from_slice(&2u32.to_le_bytes());
    bytes.extend(postcard::to_stdvec(&v2).unwrap());
    std::fs::write(&b, bytes).unwrap();
    let old = ModelFile::load(&b).unwrap();
    assert_eq!(
        (old.format_version, &old.fit, &old.preprocess),
        (2, &fit, &None)
    );
    assert_eq!(old.model, m.model);
}

#[test]
fn wrong_version_and_garbage_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.json");
    let mut m = sample();
    m.format_version = 99;
    std::fs::write(&p, serde_json::to_vec(&m).unwrap()).unwrap();
    let e = ModelFile::load(&p).unwrap_err().to_string();
    assert!(e.contains("version 99") && e.contains("m.json"), "{e}");
    std::fs::write(&p, b"garbage").unwrap();
    assert!(ModelFile::load(&p)
        .unwrap_err()
        .to_string()
        .contains("not an ltr model"));
    let b = dir.path().join("m.bin");
    std::fs::write(&b, b"LTRMODEL\x01\x00\x00\x00\xff").unwrap();
    assert!(ModelFile::load(&b)
        .unwrap_err()
        .to_string()
        .contains("corrupt"));
}

/// Found by the `model_load` fuzz target: a file whose aggregate had fewer weights than members loaded and then
/// panicked while scoring. Every inconsistency is now refused at load, naming the file.
#[test]
fn inconsistent_models_are_refused_at_load() {
    use ltr_core::{Aggregation, RankAggregate, Stump, StumpEnsemble};
    let dir = tempfile::tempdir().unwrap();
    // Binary, since JSON cannot hold the NaN case.
    let p = dir.path().join("bad.bin");
    let member = LinearModel::new(vec![1.0, 0.0, 2.0]);
    let cases: Vec<(Model, &str)> = vec![
        (
            Model::Aggregate(RankAggregate {
                members: vec![member.clone(), member.clone(), member.clone()],
                weights: vec![1.0, 1.0],
                method: Aggregation::Borda,
            }),
            "3 members but 2 member weights",
        ),
        (
            Model::Aggregate(RankAggregate {
                members: vec![member.clone(), LinearModel::new(vec![1.0])],
                weights: vec![1.0, 1.0],
                method: Aggregation::Borda,
            }),
            "differ in width",
        ),
        (
            Model::Linear(LinearModel::new(vec![1.0, f64::NAN, 0.0])),
            "not finite",
        ),
        (
            Model::Stumps(StumpEnsemble {
                stumps: vec![Stump {
                    feature: 7,
                    threshold: 0.5,
                    alpha: 1.0,
                }],
                n_features: 3,
            }),
            "column 7 of 3",
        ),
        (
            Model::Forest(ltr_core::Forest {
                trees: vec![ltr_core::ForestTree {
                    split_feature: vec![5],
                    threshold: vec![0.5],
                    default_left: vec![true],
                    left: vec![!0],
                    right: vec![!1],
                    leaf_value: vec![1.0, 2.0],
                    weight: 1.0,
                    split_gain: Vec::new(),
                }],
                base_score: 0.0,
                n_features: 3,
            }),
            "tree 0: split 0 is malformed",
        ),
    ];
    for (model, problem) in cases {
        let mut m = sample();
        m.model = model;
        m.save(&p).unwrap();
        let e = ModelFile::load(&p).unwrap_err().to_string();
        assert!(e.contains("bad.bin") && e.contains(problem), "{e}");
    }
    let mut m = sample();
    m.preprocess = Some(Preprocess {
        features: Some(vec![1, 9]),
        log1p: vec![],
        normalization: None,
        raw_features: 3,
    });
    m.save(&p).unwrap();
    let e = ModelFile::load(&p).unwrap_err().to_string();
    assert!(e.contains("selected feature 9 is outside 1..=3"), "{e}");
}

/// `m` saved under each name (`.json` or binary by the extension) loads back equal.
fn assert_roundtrips(dir: &std::path::Path, m: &ModelFile, names: [&str; 2]) {
    for name in names {
        let p = dir.join(name);
        m.save(&p).unwrap();
        assert_eq!(&ModelFile::load(&p).unwrap(), m, "{name}");
    }
}
