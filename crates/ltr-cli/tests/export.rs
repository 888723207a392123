//! `ltr export`: every target from the command line, Solr's two files, names from --feature-names, and refusals
//! that exit non-zero with the reason.

use crate::common;

use common::{ltr, ok, write_small_web};

#[test]
fn export_writes_each_engine_format_and_refuses_what_it_cannot_express() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    write_small_web(p("train.txt").as_ref(), 2);
    ok(&[
        "train",
        "--train",
        &p("train.txt"),
        "--algo",
        "ranksvm",
        "--model",
        &p("m.json"),
    ]);
    let names: String = (1..=10).map(|k| format!("{k} bm25_field_{k}\n")).collect();
    std::fs::write(p("names.txt"), names).unwrap();

    let es = ok(&[
        "export",
        "--model",
        &p("m.json"),
        "--to",
        "es-ltr",
        "--feature-names",
        &p("names.txt"),
    ]);
    let v: serde_json::Value = serde_json::from_str(&es).unwrap();
    assert_eq!(v["model"]["model"]["type"], "model/linear");
    assert!(v["model"]["model"]["definition"]["bm25_field_1"].is_number());
    assert!(
        v["model"]["model"]["feature_normalizers"]["bm25_field_1"]["standard"]
            ["standard_deviation"]
            .is_number()
    );

    // Solr writes the model and a feature-store skeleton, and needs --out for the pair.
    let o = ltr(&["export", "--model", &p("m.json"), "--to", "solr-ltr"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("give --out FILE"));
    ok(&[
        "export",
        "--model",
        &p("m.json"),
        "--to",
        "solr-ltr",
        "--out",
        &p("solr.json"),
        "--name",
        "web_ranker",
    ]);
    let solr: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("solr.json")).unwrap()).unwrap();
    assert_eq!(solr["name"], "web_ranker");
    let store = std::fs::read_to_string(p("solr.json.feature-store.json")).unwrap();
    assert!(store.contains("SolrFeature") && store.contains("\"store\": \"ltr_features\""));

    let vespa = ok(&["export", "--model", &p("m.json"), "--to", "vespa"]);
    assert!(vespa.contains("\nrank-profile ltr_model inherits default"));
    let ranklib = ok(&["export", "--model", &p("m.json"), "--to", "ranklib"]);
    assert!(ranklib.starts_with("## Coordinate Ascent") && ranklib.contains("1:"));
    // `ltr predict` reads RankLib models: the round trip ranks as the original (scores shifted by a constant).
    std::fs::write(p("m.ranklib"), &ranklib).unwrap();
    let parse = |t: String| -> Vec<f64> { t.lines().map(|l| l.parse().unwrap()).collect() };
    let a = parse(ok(&[
        "predict",
        "--model",
        &p("m.json"),
        "--data",
        &p("train.txt"),
    ]));
    let b = parse(ok(&[
        "predict",
        "--model",
        &p("m.ranklib"),
        "--data",
        &p("train.txt"),
    ]));
    let scale = a.iter().map(|x: &f64| x.abs()).fold(0.0, f64::max);
    for (x, y) in a.iter().zip(&b) {
        assert!((x - y - (a[0] - b[0])).abs() <= 1e-5 * scale, "{x} vs {y}");
    }

    ok(&[
        "train",
        "--train",
        &p("train.txt"),
        "--algo",
        "ranksvm",
        "--normalize",
        "query-zscore",
        "--model",
        &p("q.json"),
    ]);
    let o = ltr(&["export", "--model", &p("q.json"), "--to", "opensearch-ltr"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("per query") && err.contains("q.json"),
        "{err}"
    );
    let o = ltr(&["export", "--model", &p("m.json"), "--to", "lucene"]);
    assert!(
        !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("unknown export target")
    );
}

/// A LambdaMART model goes out to every engine's tree format; RankLib's file scores as the model through
/// `ltr predict`; Vespa writes its XGBoost file next to the profile; the missing-value rule is on stderr, and
/// `--missing strict` refuses where the engine differs.
#[test]
fn export_writes_tree_models_for_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    write_small_web(p("train.txt").as_ref(), 3);
    ok(&[
        "train",
        "--train",
        &p("train.txt"),
        "--algo",
        "lambdamart",
        "--param",
        "trees=15",
        "--param",
        "leaves=6",
        "--model",
        &p("t.json"),
    ]);
    let names: String = (1..=10).map(|k| format!("{k} bm25_field_{k}\n")).collect();
    std::fs::write(p("names.txt"), names).unwrap();
    let model = p("t.json");
    let export = |extra: &[&str]| {
        let mut args = vec!["export", "--model", &model];
        args.extend_from_slice(extra);
        std::process::Command::new(env!("CARGO_BIN_EXE_ltr"))
            .args(&args)
            .env("RUST_LOG", "info")
            .output()
            .unwrap()
    };

    let o = export(&["--to", "es-ltr", "--feature-names", &p("names.txt")]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["model"]["model"]["type"], "model/xgboost+json");
    let tree = &v["model"]["model"]["definition"][0];
    assert!(
        tree.get("leaf").is_some() || tree["split"].as_str().unwrap().starts_with("bm25_field_")
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("missing features:") && err.contains("NaN values:"),
        "{err}"
    );

    let es = ok(&[
        "export",
        "--model",
        &p("t.json"),
        "--to",
        "opensearch-ltr",
        "--es-model",
        "ranklib",
    ]);
    let v: serde_json::Value = serde_json::from_str(&es).unwrap();
    assert!(v["model"]["model"]["definition"]
        .as_str()
        .unwrap()
        .contains("<ensemble>"));

    let es8 = ok(&["export", "--model", &p("t.json"), "--to", "es8-ltr"]);
    let v: serde_json::Value = serde_json::from_str(&es8).unwrap();
    assert!(v["definition"]["trained_model"]["ensemble"]["trained_models"].is_array());
    assert!(
        v["inference_config"]["learning_to_rank"]["feature_extractors"][0]["query_extractor"]
            .is_object()
    );

    // Vespa: the profile and, next to it, the XGBoost model it names; both need --out.
    let o = ltr(&["export", "--model", &p("t.json"), "--to", "vespa"]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("give --out FILE"));
    ok(&[
        "export",
        "--model",
        &p("t.json"),
        "--to",
        "vespa",
        "--out",
        &p("ltr.profile"),
    ]);
    let profile = std::fs::read_to_string(p("ltr.profile")).unwrap();
    assert!(profile.contains("xgboost(\"ltr_model.json\")"), "{profile}");
    let xgb: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("ltr.profile.xgboost.json")).unwrap())
            .unwrap();
    assert!(xgb.as_array().unwrap().len() >= 15);

    ok(&[
        "export",
        "--model",
        &p("t.json"),
        "--to",
        "solr-ltr",
        "--out",
        &p("solr.json"),
    ]);
    let solr: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p("solr.json")).unwrap()).unwrap();
    assert_eq!(
        solr["class"],
        "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
    );
    assert!(std::fs::read_to_string(p("solr.json.feature-store.json"))
        .unwrap()
        .contains("SolrFeature"));

    // RankLib: `ltr predict` reads the file back and scores exactly as the model.
    let ranklib = ok(&["export", "--model", &p("t.json"), "--to", "ranklib"]);
    assert!(ranklib.starts_with("## LambdaMART"));
    std::fs::write(p("t.ranklib"), &ranklib).unwrap();
    let a = ok(&[
        "predict",
        "--model",
        &p("t.json"),
        "--data",
        &p("train.txt"),
    ]);
    let b = ok(&[
        "predict",
        "--model",
        &p("t.ranklib"),
        "--data",
        &p("train.txt"),
    ]);
    assert_eq!(a, b);

    // ltr-trees sends NaN left everywhere; Solr sends it right: strict refuses, naming the rule.
    let o = ltr(&[
        "export",
        "--model",
        &p("t.json"),
        "--to",
        "solr-ltr",
        "--out",
        &p("s2.json"),
        "--missing",
        "strict",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("--missing strict") && err.contains("goes right"),
        "{err}"
    );
    let o = ltr(&[
        "export",
        "--model",
        &p("t.json"),
        "--to",
        "es-ltr",
        "--missing",
        "lenient",
    ]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("note or strict"));
}

/// `--to onnx` writes a binary ModelProto (to --out, or the same bytes to stdout); a model no graph can score is
/// refused with the reason and nothing is written. (The graph's scores are checked in ltr-export's tests/onnx.rs
/// and, through onnxruntime, in python/tests/test_onnx.py.)
#[test]
fn export_writes_onnx_and_refuses_rank_aggregates() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    write_small_web(p("train.txt").as_ref(), 4);
    let train = |algo: &str, model: &str| {
        ok(&[
            "train",
            "--train",
            &p("train.txt"),
            "--algo",
            algo,
            "--model",
            &p(model),
        ]);
    };
    train("lambdamart", "t.json");
    ok(&[
        "export",
        "--model",
        &p("t.json"),
        "--to",
        "onnx",
        "--out",
        &p("t.onnx"),
    ]);
    let bytes = std::fs::read(p("t.onnx")).unwrap();
    // Field 1 (ir_version) first, a varint: 8.
    assert_eq!(&bytes[..2], &[0x08, 0x08]);
    let has = |s: &str| bytes.windows(s.len()).any(|w| w == s.as_bytes());
    assert!(has("TreeEnsembleRegressor") && has("ai.onnx.ml") && has("BRANCH_LEQ"));
    let o = ltr(&["export", "--model", &p("t.json"), "--to", "onnx"]);
    assert!(o.status.success() && o.stdout == bytes);
    train("mhr", "mhr.json");
    let o = ltr(&[
        "export",
        "--model",
        &p("mhr.json"),
        "--to",
        "onnx",
        "--out",
        &p("mhr.onnx"),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success()
            && err.contains("onnx cannot run this model")
            && err.contains("aggregates the rankings")
            && err.contains("mhr.json"),
        "{err}"
    );
    assert!(!std::path::Path::new(&p("mhr.onnx")).exists());
}

/// `--to vespa` of a neural network writes the rank profile to --out and the network's ONNX graph next to it as
/// FILE.onnx, the bytes `--to onnx` writes; without --out it asks for one. (The profile's scores are checked in
/// ltr-export's tests/vespa_onnx.rs.)
#[test]
fn export_writes_a_neural_network_to_vespa_with_its_onnx_graph() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    write_small_web(p("train.txt").as_ref(), 4);
    ok(&[
        "train",
        "--train",
        &p("train.txt"),
        "--algo",
        "neural",
        "--param",
        "sizes=8",
        "--param",
        "epochs=1",
        "--model",
        &p("n.json"),
    ]);
    let o = ltr(&["export", "--model", &p("n.json"), "--to", "vespa"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("give --out FILE") && err.contains("FILE.onnx"),
        "{err}"
    );
    let (model, profile_out, onnx_out) = (p("n.json"), p("web.profile"), p("n.onnx"));
    ok(&[
        "export",
        "--model",
        &model,
        "--to",
        "vespa",
        "--name",
        "web_mlp",
        "--out",
        &profile_out,
    ]);
    let profile = std::fs::read_to_string(&profile_out).unwrap();
    assert!(
        profile.contains("rank-profile web_mlp inherits default")
            && profile.contains("onnx-model web_mlp {")
            && profile.contains("file: models/web_mlp.onnx")
            && profile.contains("expression: sum(onnx(web_mlp).scores)"),
        "{profile}"
    );
    ok(&[
        "export", "--model", &model, "--to", "onnx", "--name", "web_mlp", "--out", &onnx_out,
    ]);
    assert_eq!(
        std::fs::read(p("web.profile.onnx")).unwrap(),
        std::fs::read(&onnx_out).unwrap()
    );
}
