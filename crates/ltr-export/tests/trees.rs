//! Tree models (`lambdamart`, `mart`, `random-forest`) in every engine's format, each scored by an independent
//! reference scorer written here from the engine's rules (its comparison, its threshold parsing, what it does
//! with a feature that is not there), must score raw test data as `ltr predict` does (`ModelFile::score_raw`) to
//! 1e-6 of the largest score — with every feature present, and with documents that lack features (sparse rows: the
//! engine does not find those features).
//!
//! The scorers route in the engine's precision (float32 thresholds and values, Solr's 1e-6 slack, Elasticsearch 8's
//! doubles) and add the outputs in f64: the engines' float32 sums move a score by ~1e-7 relative, not a route.

use ltr_core::{Forest, ForestTree, Model, ModelFile, TrainingSummary};
use ltr_data::{Dataset, NormalizeKind, PreprocessSpec};
use ltr_export::{export, read_ranklib, widen_to, EsModel, ExportOptions, MissingPolicy, Target};
use ltr_learn::{Grid, TrainRequest};
use serde_json::Value;

use crate::common;
use common::{data, with_missing};

fn trained(algo: &str, params: &[(&str, &str)], spec: PreprocessSpec) -> ModelFile {
    let (train, _) = data();
    let req = TrainRequest::new(&train).preprocess(&spec);
    let mut m = ltr_learn::train(algo, &Grid::single(params.iter().copied()), &req)
        .unwrap()
        .into_model_file(TrainingSummary::default());
    m.feature_names = (1..=train.n_features())
        .map(|k| format!("feat_{k}"))
        .collect();
    m
}

fn normalize(kind: NormalizeKind) -> PreprocessSpec {
    PreprocessSpec {
        normalize: Some(kind),
        ..Default::default()
    }
}

/// A document's raw feature `feat_k`: `None` when the document does not have it (absent from a sparse row).
fn feature(test: &Dataset, i: usize, k: usize) -> Option<f32> {
    match test.row(i) {
        ltr_data::Row::Dense(x) => Some(x.get(k - 1).copied().unwrap_or(0.0)),
        ltr_data::Row::Sparse { indices, values } => indices
            .binary_search(&((k - 1) as u32))
            .ok()
            .map(|p| values[p]),
    }
}

fn by_name(test: &Dataset, i: usize, name: &str) -> Option<f32> {
    feature(
        test,
        i,
        name.strip_prefix("feat_").unwrap().parse().unwrap(),
    )
}

/// Elasticsearch/OpenSearch `model/xgboost+json`: a feature without a value is NaN; NaN goes to `missing` (yes if it
/// names yes), else `split_condition` (a float) `> value` goes to yes.
fn es_xgboost_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let v: Value = serde_json::from_str(text).unwrap();
    let m = &v["model"]["model"];
    assert_eq!(m["type"], "model/xgboost+json");
    let trees = m["definition"].as_array().unwrap().clone();
    fn walk(n: &Value, x: &dyn Fn(&str) -> f32) -> f64 {
        if let Some(l) = n.get("leaf") {
            return l.as_f64().unwrap();
        }
        let t = n["split_condition"].as_f64().unwrap() as f32;
        let value = x(n["split"].as_str().unwrap());
        let target = if value.is_nan() {
            n["missing"].as_i64().unwrap()
        } else if t > value {
            n["yes"].as_i64().unwrap()
        } else {
            n["no"].as_i64().unwrap()
        };
        let children = n["children"].as_array().unwrap();
        assert_eq!(children.len(), 2);
        assert_eq!(children[0]["nodeid"], n["yes"]);
        assert_eq!(children[1]["nodeid"], n["no"]);
        let c = children.iter().find(|c| c["nodeid"] == target).unwrap();
        walk(c, x)
    }
    (0..test.n_docs())
        .map(|i| {
            let x = |name: &str| by_name(test, i, name).unwrap_or(f32::NAN);
            trees.iter().map(|t| walk(t, &x)).sum()
        })
        .collect()
}

/// Vespa's `xgboost("file")`: each split is `if (f < t, yes, no)`, or `if (!(f >= t), yes, no)` when missing is
/// yes, `t` the split condition rounded to float then compared in double; an absent feature here is an unset float
/// attribute, NaN.
fn vespa_scores(profile: &str, json: &str, test: &Dataset) -> Vec<f64> {
    assert!(profile.contains("expression: xgboost(\"ltr_model.json\")"));
    let trees: Value = serde_json::from_str(json).unwrap();
    fn walk(n: &Value, x: &dyn Fn(&str) -> f64) -> f64 {
        if let Some(l) = n.get("leaf") {
            return l.as_f64().unwrap();
        }
        let t = n["split_condition"].as_f64().unwrap() as f32 as f64;
        let f = x(n["split"].as_str().unwrap());
        // Vespa's own expression, written as it writes it: a NaN makes `f >= t` false, so it goes to yes.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let condition = if n["missing"] == n["yes"] {
            !(f >= t)
        } else {
            f < t
        };
        let children = n["children"].as_array().unwrap();
        let yes = children.iter().find(|c| c["nodeid"] == n["yes"]).unwrap();
        let no = children.iter().find(|c| c["nodeid"] == n["no"]).unwrap();
        walk(if condition { yes } else { no }, x)
    }
    (0..test.n_docs())
        .map(|i| {
            let x = |name: &str| by_name(test, i, name).map_or(f64::NAN, f64::from);
            trees.as_array().unwrap().iter().map(|t| walk(t, &x)).sum()
        })
        .collect()
}

/// RankLib's ensemble XML (also the plugin's `model/ranklib`): features by 1-based number, an unknown feature reads
/// 0, `value <= threshold` (both float) goes left; Σ weight · output.
fn ranklib_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let xml: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("##"))
        .collect::<Vec<_>>()
        .join("\n");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "ensemble");
    fn text_of<'a>(n: roxmltree::Node<'a, '_>, tag: &str) -> Option<&'a str> {
        n.children()
            .find(|c| c.has_tag_name(tag))
            .map(|c| c.text().unwrap().trim())
    }
    fn walk(n: roxmltree::Node<'_, '_>, x: &dyn Fn(usize) -> f32) -> f64 {
        if let Some(o) = text_of(n, "output") {
            return o.parse().unwrap();
        }
        let k: usize = text_of(n, "feature").unwrap().parse().unwrap();
        let t: f32 = text_of(n, "threshold").unwrap().parse().unwrap();
        let pos = if x(k) <= t { "left" } else { "right" };
        let c = n
            .children()
            .find(|c| c.has_tag_name("split") && c.attribute("pos") == Some(pos))
            .unwrap();
        walk(c, x)
    }
    let trees: Vec<(f64, roxmltree::Node<'_, '_>)> = root
        .children()
        .filter(|t| t.has_tag_name("tree"))
        .map(|t| {
            let w: f64 = t.attribute("weight").unwrap().parse().unwrap();
            (w, t.children().find(|c| c.has_tag_name("split")).unwrap())
        })
        .collect();
    (0..test.n_docs())
        .map(|i| {
            let x = |k: usize| feature(test, i, k).filter(|v| !v.is_nan()).unwrap_or(0.0);
            trees.iter().map(|(w, t)| w * walk(*t, &x)).sum()
        })
        .collect()
}

/// Solr's MultipleAdditiveTreesModel: a feature that does not match is its default, 0; each threshold is read as a
/// float plus 1e-6f, and `value <= threshold` goes left; Σ weight · value.
fn solr_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        v["class"],
        "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
    );
    let listed: Vec<&str> = v["features"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    fn walk(n: &Value, listed: &[&str], x: &dyn Fn(&str) -> f32) -> f64 {
        if let Some(val) = n.get("value") {
            return val.as_str().unwrap().parse().unwrap();
        }
        let name = n["feature"].as_str().unwrap();
        assert!(
            listed.contains(&name),
            "{name} is not among the model's features"
        );
        let t = n["threshold"].as_str().unwrap().parse::<f32>().unwrap() + 1e-6f32;
        walk(
            if x(name) <= t {
                &n["left"]
            } else {
                &n["right"]
            },
            listed,
            x,
        )
    }
    (0..test.n_docs())
        .map(|i| {
            let x = |name: &str| by_name(test, i, name).unwrap_or(0.0);
            v["params"]["trees"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let w: f64 = t["weight"].as_str().unwrap().parse().unwrap();
                    w * walk(&t["root"], &listed, &x)
                })
                .sum()
        })
        .collect()
}

/// Elasticsearch 8's tree_ensemble: an absent feature is missing and follows default_left; otherwise
/// `value <= threshold` (decision_type lte) in double; Σ weighted_sum weight · leaf_value.
fn es8_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let v: Value = serde_json::from_str(text).unwrap();
    let e = &v["definition"]["trained_model"]["ensemble"];
    let names: Vec<&str> = e["feature_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let extractors = v["inference_config"]["learning_to_rank"]["feature_extractors"]
        .as_array()
        .unwrap();
    assert_eq!(extractors.len(), names.len());
    let weights: Vec<f64> = e["aggregate_output"]["weighted_sum"]["weights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_f64().unwrap())
        .collect();
    let trees = e["trained_models"].as_array().unwrap();
    assert_eq!(trees.len(), weights.len());
    (0..test.n_docs())
        .map(|i| {
            trees
                .iter()
                .zip(&weights)
                .map(|(t, w)| {
                    let nodes = t["tree"]["tree_structure"].as_array().unwrap();
                    let find = |k: u64| nodes.iter().find(|n| n["node_index"] == k).unwrap();
                    let mut n = find(0);
                    while n.get("left_child").is_some() {
                        assert_eq!(n["decision_type"], "lte");
                        let name = names[n["split_feature"].as_u64().unwrap() as usize];
                        let left = match by_name(test, i, name).filter(|x| !x.is_nan()) {
                            None => n["default_left"].as_bool().unwrap(),
                            Some(x) => x as f64 <= n["threshold"].as_f64().unwrap(),
                        };
                        let c = if left { "left_child" } else { "right_child" };
                        n = find(n[c].as_u64().unwrap());
                    }
                    w * n["leaf_value"][0].as_f64().unwrap()
                })
                .sum()
        })
        .collect()
}

fn assert_same(ours: &[f64], theirs: &[f64], what: &str) {
    assert_eq!(ours.len(), theirs.len());
    let scale = ours.iter().map(|s| s.abs()).fold(0.0, f64::max).max(1e-12);
    for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert!(
            (a - b).abs() <= 1e-6 * scale,
            "{what}: document {k}: ltr {a} vs engine {b} (scale {scale})"
        );
    }
}

fn out(
    model: &ModelFile,
    target: Target,
    opts: &ExportOptions,
    label: &str,
) -> ltr_export::Exported {
    export(model, target, opts).unwrap_or_else(|e| panic!("{label} → {}: {e}", target.name()))
}

/// Every format, on the test data as it is and with features missing.
fn check_every_format(model: &ModelFile, label: &str) {
    assert!(matches!(model.model, Model::Forest(_)), "{label}");
    let (_, test) = data();
    for (test, how) in [
        (test.clone(), "dense"),
        (with_missing(&test), "features missing"),
    ] {
        let ours = model.score_raw(&test).unwrap();
        let what = |t: &str| format!("{label} ({how}) → {t}");
        let opts = ExportOptions::default();
        for target in [Target::EsLtr, Target::OpenSearchLtr] {
            let e = out(model, target, &opts, label);
            assert!(e.notes.iter().any(|n| n.starts_with("missing features:")));
            assert_same(
                &ours,
                &es_xgboost_scores(&e.model, &test),
                &what("es xgboost"),
            );
            let ranklib_opts = ExportOptions {
                es_model: EsModel::Ranklib,
                ..Default::default()
            };
            let e = out(model, target, &ranklib_opts, label);
            let v: Value = serde_json::from_str(&e.model).unwrap();
            assert_eq!(v["model"]["model"]["type"], "model/ranklib");
            let def = v["model"]["model"]["definition"].as_str().unwrap();
            assert_same(&ours, &ranklib_scores(def, &test), &what("es ranklib"));
        }
        let r = out(model, Target::RankLib, &opts, label);
        assert_same(&ours, &ranklib_scores(&r.model, &test), &what("ranklib"));
        let s = out(model, Target::SolrLtr, &opts, label);
        assert!(s.feature_store.as_deref().unwrap().contains("SolrFeature"));
        assert_same(&ours, &solr_scores(&s.model, &test), &what("solr"));
        let v = out(model, Target::Vespa, &opts, label);
        assert_eq!(v.side_files.len(), 1);
        assert_same(
            &ours,
            &vespa_scores(
                &v.model,
                std::str::from_utf8(&v.side_files[0].1).unwrap(),
                &test,
            ),
            &what("vespa"),
        );
        let e8 = out(model, Target::Es8Ltr, &opts, label);
        assert_same(&ours, &es8_scores(&e8.model, &test), &what("es8"));

        // The way back: RankLib's file read by `ltr predict` scores exactly as the model (same routes, the same
        // additions in the same order).
        let mut back = read_ranklib(&r.model, "exported").unwrap();
        widen_to(&mut back, test.n_features());
        assert_eq!(
            back.score_raw(&test).unwrap(),
            ours,
            "{label} ({how}): RankLib round trip"
        );
    }
}

#[test]
fn lambdamart_on_raw_features_exports_to_every_format() {
    let m = trained(
        "lambdamart",
        &[("trees", "40"), ("leaves", "8")],
        normalize(NormalizeKind::None),
    );
    check_every_format(&m, "lambdamart raw");
}

#[test]
fn lambdamart_with_stored_zscore_carries_it_into_the_thresholds() {
    let m = trained(
        "lambdamart",
        &[("trees", "30"), ("leaves", "8")],
        normalize(NormalizeKind::ZScore),
    );
    assert!(m.preprocess.is_some());
    check_every_format(&m, "lambdamart zscore");
}

#[test]
fn mart_with_minmax_and_log1p_and_a_base_score_exports_to_every_format() {
    let spec = PreprocessSpec {
        normalize: Some(NormalizeKind::MinMax),
        log1p: vec![1, 2, 3],
        ..Default::default()
    };
    let m = trained("mart", &[("trees", "25"), ("leaves", "6")], spec);
    check_every_format(&m, "mart minmax log1p");
}

#[test]
fn random_forest_weights_carry_over() {
    let m = trained(
        "random-forest",
        &[("trees", "20"), ("leaves", "8")],
        normalize(NormalizeKind::ZScore),
    );
    let Model::Forest(f) = &m.model else {
        unreachable!()
    };
    assert!((f.trees[0].weight - 1.0 / 20.0).abs() < 1e-15);
    check_every_format(&m, "random-forest");
}

/// A hand-made forest: x1 <= -0.5 (NaN left, 0 right) and x2 <= 2, base 0.25, weight 0.5.
fn tiny() -> ModelFile {
    let tree = ForestTree {
        split_feature: vec![0, 1],
        threshold: vec![-0.5, 2.0],
        default_left: vec![true, true],
        left: vec![!0, !1],
        right: vec![1, !2],
        leaf_value: vec![1.0, 2.0, 3.0],
        weight: 0.5,
        split_gain: vec![],
    };
    let mut m = ModelFile::new(
        "lambdamart",
        Default::default(),
        TrainingSummary {
            features: 2,
            ..Default::default()
        },
        Model::Forest(Forest {
            trees: vec![tree],
            base_score: 0.25,
            n_features: 2,
        }),
    );
    m.feature_names = vec!["feat_1".into(), "feat_2".into()];
    m
}

#[test]
fn nan_routes_that_differ_are_noted_and_refused_when_strict() {
    let m = tiny();
    let strict = ExportOptions {
        missing: MissingPolicy::Strict,
        ..Default::default()
    };
    // Raw 0 goes right at x1 <= -0.5 while a NaN goes left: the engines that send NaN where 0 goes differ there.
    for target in [
        Target::EsLtr,
        Target::Vespa,
        Target::Es8Ltr,
        Target::RankLib,
    ] {
        let e = export(&m, target, &ExportOptions::default()).unwrap();
        assert!(
            e.notes
                .iter()
                .any(|n| n.contains("differs at 1 of 2 splits")),
            "{}: {:?}",
            target.name(),
            e.notes
        );
        let err = export(&m, target, &strict).unwrap_err().to_string();
        assert!(err.contains("--missing strict"), "{err}");
    }
    // Solr sends NaN right: it differs at both splits (NaN goes left in both).
    let e = export(&m, Target::SolrLtr, &ExportOptions::default()).unwrap();
    assert!(e
        .notes
        .iter()
        .any(|n| n.contains("differs at 2 of 2 splits")));
    assert!(export(&m, Target::SolrLtr, &strict).is_err());
    // With NaN going where 0 goes at every split, strict exports.
    let mut ok = m.clone();
    if let Model::Forest(f) = &mut ok.model {
        f.trees[0].default_left = vec![false, true];
    }
    for target in [
        Target::EsLtr,
        Target::Vespa,
        Target::Es8Ltr,
        Target::RankLib,
    ] {
        let e = export(&ok, target, &strict).unwrap();
        assert!(e.notes.iter().any(|n| n.contains("as in `ltr predict`")));
    }

    // The hand-made model scores as `ltr predict` in each format, on values either side of both thresholds.
    let rows = "0 qid:1 1:-0.5 2:2\n0 qid:1 1:-0.49999997 2:2.0000002\n0 qid:1 2:1\n0 qid:1 1:-3\n";
    let dir = std::env::temp_dir().join(format!("ltr-export-trees-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("t.txt");
    std::fs::write(&p, rows).unwrap();
    let mut test = ltr_data::read_letor(&p).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    test.to_sparse();
    let ours = m.score_raw(&test).unwrap();
    assert_eq!(ours, [0.25 + 0.5, 0.25 + 1.5, 0.25 + 1.0, 0.25 + 0.5]);
    let o = ExportOptions::default();
    assert_same(
        &ours,
        &es_xgboost_scores(&export(&m, Target::EsLtr, &o).unwrap().model, &test),
        "tiny es",
    );
    assert_same(
        &ours,
        &ranklib_scores(&export(&m, Target::RankLib, &o).unwrap().model, &test),
        "tiny ranklib",
    );
    assert_same(
        &ours,
        &solr_scores(&export(&m, Target::SolrLtr, &o).unwrap().model, &test),
        "tiny solr",
    );
    assert_same(
        &ours,
        &es8_scores(&export(&m, Target::Es8Ltr, &o).unwrap().model, &test),
        "tiny es8",
    );
    let v = export(&m, Target::Vespa, &o).unwrap();
    assert_same(
        &ours,
        &vespa_scores(
            &v.model,
            std::str::from_utf8(&v.side_files[0].1).unwrap(),
            &test,
        ),
        "tiny vespa",
    );
}

#[test]
fn refusals_name_the_reason() {
    let mut m = tiny();
    m.feature_names = vec!["same".into(), "same".into()];
    let e = export(&m, Target::EsLtr, &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("both named"), "{e}");
    let m = trained("ranksvm", &[], normalize(NormalizeKind::ZScore));
    let e = export(&m, Target::Es8Ltr, &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("tree ensembles"), "{e}");
    let m = trained(
        "lambdamart",
        &[("trees", "3"), ("leaves", "4")],
        normalize(NormalizeKind::QueryZScore),
    );
    let e = export(&m, Target::SolrLtr, &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("per query"), "{e}");
}
