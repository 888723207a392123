//! LightGBM and XGBoost models (fixtures made by `fixtures/imports/make_fixtures.py`) read into `ltr` forests must
//! score the fixture test file as the libraries themselves did.
//!
//! Tolerance: 1e-6 relative to max(|score|, 1). LightGBM sums its f64 leaves in f64 in the same order, so it agrees
//! to rounding; XGBoost adds f32 leaves into an f32 margin where `ltr` sums in f64, so the two differ by f32 rounding
//! of the partial sums (about 1e-7 per tree at these magnitudes). Every split must take the same branch: one wrong
//! branch moves a score by a whole leaf, far more than the tolerance.

use std::path::{Path, PathBuf};

use ltr_core::Model;
use ltr_data::{read_letor, Dataset};
use ltr_export::{load_model, read_lightgbm, read_xgboost};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/imports")
        .join(name)
}

fn test_data() -> Dataset {
    read_letor(fixture("test.txt")).unwrap()
}

fn expected(name: &str) -> Vec<f64> {
    std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn check(model: &str, scores: &str, algorithm: &str) {
    let m = load_model(&fixture(model)).unwrap();
    assert_eq!(m.algorithm, algorithm);
    assert!(matches!(m.model, Model::Forest(_)));
    assert_eq!(m.n_features, 8);
    let ds = test_data();
    m.check_data(&ds, "test.txt").unwrap();
    let got = m.score_raw(&ds).unwrap();
    let want = expected(scores);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "{model}: document {i}: ltr {g} but the library {w}"
        );
    }
    // The model survives an ltr model file round trip.
    let dir = std::env::temp_dir().join(format!("ltr-imports-{}-{model}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("m.json");
    m.save(&p).unwrap();
    let back = load_model(&p).unwrap();
    assert_eq!(back.score_raw(&ds).unwrap(), got);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn lightgbm_text_scores_as_lightgbm() {
    check(
        "lgb_lambdarank.txt",
        "lgb_lambdarank.scores",
        "lightgbm-lambdarank",
    );
}

#[test]
fn lightgbm_json_dump_scores_as_lightgbm() {
    check(
        "lgb_lambdarank.json",
        "lgb_lambdarank.scores",
        "lightgbm-lambdarank",
    );
}

#[test]
fn lightgbm_zero_as_missing_scores_as_lightgbm() {
    check(
        "lgb_zero_as_missing.txt",
        "lgb_zero_as_missing.scores",
        "lightgbm-lambdarank",
    );
}

#[test]
fn xgboost_json_scores_as_xgboost() {
    check("xgb_ndcg.json", "xgb_ndcg.scores", "xgboost-rank:ndcg");
    let m = load_model(&fixture("xgb_ndcg.json")).unwrap();
    let Model::Forest(f) = &m.model else { panic!() };
    assert_eq!(f.base_score, 0.3f32 as f64);
    assert_eq!(f.trees.len(), 20);
}

#[test]
fn xgboost_ubjson_scores_as_xgboost_and_is_the_json_model() {
    check("xgb_ndcg.ubj", "xgb_ndcg.scores", "xgboost-rank:ndcg");
    assert!(ltr_export::is_model_file(&fixture("xgb_ndcg.ubj")));
    // The same booster saved both ways: every threshold, leaf and base score is the same f32 (the JSON prints f32
    // values that read back exactly), so the forests are equal.
    let ubj = load_model(&fixture("xgb_ndcg.ubj")).unwrap();
    let json = load_model(&fixture("xgb_ndcg.json")).unwrap();
    assert_eq!(ubj.model, json.model);
    assert_eq!(ubj.n_features, json.n_features);
}

#[test]
fn damaged_ubjson_models_are_refused_naming_the_file() {
    let bytes = std::fs::read(fixture("xgb_ndcg.ubj")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("cut.ubj");
    let err = |b: &[u8]| {
        std::fs::write(&p, b).unwrap();
        load_model(&p).unwrap_err().to_string()
    };
    let e = err(&bytes[..bytes.len() / 2]);
    assert!(
        e.contains("cut.ubj") && e.contains("UBJSON: truncated at byte"),
        "{e}"
    );
    // Still told apart from data by its head, so `ltr inspect` reports the truncation instead of a LETOR error.
    assert!(ltr_export::is_model_file(&p));
    let e = err(&bytes[..bytes.len() - 1]);
    assert!(e.contains("cut.ubj") && e.contains("truncated"), "{e}");
    let mut extra = bytes.clone();
    extra.push(b'Z');
    let e = err(&extra);
    assert!(e.contains("1 bytes after the document"), "{e}");
    // A UBJSON document that is not an XGBoost model.
    let e = err(b"{i\x03abci\x01}");
    assert!(
        e.contains("cut.ubj") && e.contains("without `learner`"),
        "{e}"
    );
    // An objective outside the accepted list is refused as in JSON (the name is stored as a string).
    let at = bytes.windows(9).position(|w| w == b"rank:ndcg").unwrap();
    let mut other = bytes.clone();
    other[at..at + 9].copy_from_slice(b"rank:xxxx");
    let e = err(&other);
    assert!(e.contains("objective `rank:xxxx` is not read"), "{e}");
}

#[test]
fn wider_data_is_refused_with_both_widths() {
    let m = load_model(&fixture("lgb_lambdarank.txt")).unwrap();
    let wide = read_letor_text("1 qid:1 1:0.5 9:2\n");
    let e = m.check_data(&wide, "wide.txt").unwrap_err().to_string();
    assert!(
        e.contains("8 features") && e.contains("wide.txt has 9"),
        "{e}"
    );
}

fn read_letor_text(text: &str) -> Dataset {
    let p = std::env::temp_dir().join(format!(
        "ltr-imports-{}-{}.txt",
        std::process::id(),
        text.len()
    ));
    std::fs::write(&p, text).unwrap();
    let ds = read_letor(&p).unwrap();
    std::fs::remove_file(&p).ok();
    ds
}

fn lightgbm_text() -> String {
    std::fs::read_to_string(fixture("lgb_lambdarank.txt")).unwrap()
}

fn xgboost_text() -> String {
    std::fs::read_to_string(fixture("xgb_ndcg.json")).unwrap()
}

fn lgb_err(text: &str) -> String {
    read_lightgbm(text, "m.txt").unwrap_err().to_string()
}

fn xgb_err(text: &str) -> String {
    read_xgboost(text, "m.json").unwrap_err().to_string()
}

#[test]
fn bad_lightgbm_files_are_refused_by_file_and_line() {
    let t = lightgbm_text();
    // Truncated in the middle of the trees.
    let cut = &t[..t.find("Tree=5").unwrap() + 40];
    let e = lgb_err(cut);
    assert!(e.starts_with("m.txt: ") && e.contains("truncated"), "{e}");
    // A malformed number names its line.
    let line = t.lines().position(|l| l.starts_with("threshold=")).unwrap() + 1;
    let e = lgb_err(&t.replacen("threshold=", "threshold=x ", 1));
    assert!(
        e.contains(&format!("line {line}:")) && e.contains("`x`"),
        "{e}"
    );
    // A short array.
    let e = lgb_err(&t.replacen("leaf_value=", "leaf_value=1 ", 1));
    assert!(e.contains("leaf_value has 8 values, not 7"), "{e}");
    // Unknown objective, with the accepted list.
    let e = lgb_err(&t.replace("objective=lambdarank", "objective=poisson"));
    assert!(
        e.contains("`poisson`") && e.contains("lambdarank, rank_xendcg"),
        "{e}"
    );
    // Multi-class.
    let e = lgb_err(&t.replace("num_class=1", "num_class=3"));
    assert!(e.contains("multi-class"), "{e}");
    // A categorical split.
    let e = lgb_err(&t.replacen("decision_type=2", "decision_type=3", 1));
    assert!(e.contains("categorical"), "{e}");
    let e = lgb_err(&t.replacen("num_cat=0", "num_cat=1", 1));
    assert!(e.contains("categorical"), "{e}");
    // A split feature beyond the model's features.
    let e = lgb_err(&t.replace("max_feature_idx=7", "max_feature_idx=2"));
    assert!(
        e.contains("feature index") && e.contains("3 features"),
        "{e}"
    );
    // A child out of range.
    let e = lgb_err(&t.replacen("left_child=1 ", "left_child=9 ", 1));
    assert!(e.contains("out of range"), "{e}");
}

#[test]
fn bad_xgboost_files_are_refused_by_file_and_path() {
    let t = xgboost_text();
    let e = xgb_err(&t[..t.len() / 2]);
    assert!(
        e.starts_with("m.json: invalid JSON") && e.contains("line"),
        "{e}"
    );
    let e = xgb_err(&t.replace("\"rank:ndcg\"", "\"reg:gamma\""));
    assert!(
        e.contains("`reg:gamma`") && e.contains("rank:ndcg, rank:pairwise"),
        "{e}"
    );
    let e = xgb_err(&t.replace("\"num_class\":\"0\"", "\"num_class\":\"3\""));
    assert!(e.contains("multi-class"), "{e}");
    let e = xgb_err(&t.replacen("\"split_type\":[0,", "\"split_type\":[1,", 1));
    assert!(e.contains("trees[0]: node 0 is a categorical split"), "{e}");
    let e = xgb_err(&t.replace("\"num_feature\":\"8\"", "\"num_feature\":\"3\""));
    assert!(
        e.contains("feature index") && e.contains("3 features"),
        "{e}"
    );
    let e = xgb_err(&t.replacen("\"left_children\":[1,", "\"left_children\":[0,", 1));
    assert!(e.contains("reached twice"), "{e}");
}

#[test]
fn other_files_still_load_as_before() {
    let e = load_model(&fixture("test.txt")).unwrap_err().to_string();
    assert!(e.contains("test.txt"), "{e}");
}

/// What `ltr export --model m.txt` does after loading: every imported model goes to every engine, or is refused
/// with a reason (never a panic).
#[test]
fn imported_models_reach_the_exporters() {
    use ltr_export::{export, ExportOptions, Target};
    for model in [
        "lgb_lambdarank.txt",
        "lgb_zero_as_missing.txt",
        "xgb_ndcg.json",
    ] {
        let m = load_model(&fixture(model)).unwrap();
        for t in [
            "es-ltr",
            "opensearch-ltr",
            "solr-ltr",
            "vespa",
            "ranklib",
            "es8-ltr",
        ] {
            let target: Target = t.parse().unwrap();
            match export(&m, target, &ExportOptions::default()) {
                Ok(out) => assert!(!out.model.is_empty()),
                Err(e) => eprintln!("{model} → {t}: {e}"),
            }
        }
    }
}

fn forest_score(m: &ltr_core::ModelFile, x: &[f32]) -> f64 {
    let Model::Forest(f) = &m.model else { panic!() };
    let mut out = [0.0];
    f.score_rows(&[ltr_data::Row::Dense(x)], &mut out);
    out[0]
}

/// NaN cannot be written in a LETOR file: check the missing-value rules on rows built here. LightGBM scores a NaN
/// as 0 under missing types None and Zero; XGBoost sends it the default way, walked here from the JSON.
#[test]
fn nan_follows_each_library_rule() {
    for model in ["lgb_lambdarank.txt", "lgb_zero_as_missing.txt"] {
        let m = load_model(&fixture(model)).unwrap();
        for k in 0..8 {
            let (mut nan, mut zero) = ([0.5f32; 8], [0.5f32; 8]);
            nan[k] = f32::NAN;
            zero[k] = 0.0;
            assert_eq!(
                forest_score(&m, &nan),
                forest_score(&m, &zero),
                "{model} feature {k}"
            );
        }
    }
    let m = load_model(&fixture("xgb_ndcg.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&xgboost_text()).unwrap();
    let trees = v["learner"]["gradient_booster"]["model"]["trees"]
        .as_array()
        .unwrap();
    let x = [f32::NAN, 2.0, f32::NAN, 0.0, f32::NAN, -1.0, 50.0, f32::NAN];
    let mut want = 0.3f32;
    for t in trees {
        let ints = |k: &str| -> Vec<i64> {
            t[k].as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap())
                .collect()
        };
        let (l, r, f, d) = (
            ints("left_children"),
            ints("right_children"),
            ints("split_indices"),
            ints("default_left"),
        );
        let c = |i: usize| t["split_conditions"][i].as_f64().unwrap() as f32;
        let mut i = 0usize;
        while l[i] != -1 {
            let v = x[f[i] as usize];
            let left = if v.is_nan() { d[i] == 1 } else { v < c(i) };
            i = if left { l[i] } else { r[i] } as usize;
        }
        want += c(i);
    }
    let got = forest_score(&m, &x);
    assert!((got - want as f64).abs() <= 1e-6, "{got} vs {want}");
}
