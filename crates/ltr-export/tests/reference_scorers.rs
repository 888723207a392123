//! Each exported format scored by an independent implementation of its engine's rule (written from the formats'
//! documentation, not from this crate's writers) must rank raw test data exactly as `ltr predict` does: the same
//! scores to float32 precision where the normalisers are written out, the same scores up to one constant where they
//! are folded into the weights.

use ltr_core::{ModelFile, TrainingSummary};
use ltr_data::{generate_web, split_by_queries, Dataset, NormalizeKind, PreprocessSpec, WebConfig};
use ltr_export::{export, ExportOptions, Target};
use ltr_learn::{Grid, TrainRequest};
use serde_json::Value;

fn data() -> (Dataset, Dataset) {
    let all = generate_web(&WebConfig {
        queries: 30,
        min_docs: 10,
        max_docs: 30,
        features: 24,
        seed: 4,
        ..Default::default()
    })
    .unwrap();
    let mut parts = split_by_queries(&all, &[0.7, 0.3], 2).unwrap();
    let test = parts.pop().unwrap();
    (parts.pop().unwrap(), test)
}

fn trained(
    algo: &str,
    params: &[(&str, &str)],
    normalize: NormalizeKind,
    log1p: Vec<usize>,
) -> ModelFile {
    let (train, _) = data();
    let spec = PreprocessSpec {
        normalize: Some(normalize),
        log1p,
        ..Default::default()
    };
    let req = TrainRequest::new(&train).preprocess(&spec);
    let mut m = ltr_learn::train(algo, &Grid::single(params.iter().copied()), &req)
        .unwrap()
        .into_model_file(TrainingSummary::default());
    m.feature_names = (1..=train.n_features())
        .map(|k| format!("feat_{k}"))
        .collect();
    m
}

/// Feature `feat_k` of document `i` (raw value).
fn raw(test: &Dataset, i: usize, name: &str) -> f64 {
    let k: usize = name.strip_prefix("feat_").unwrap().parse().unwrap();
    test.row(i).get(k - 1) as f64
}

fn es_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let v: Value = serde_json::from_str(text).unwrap();
    let m = &v["model"]["model"];
    assert_eq!(m["type"], "model/linear");
    let defs = m["definition"].as_object().unwrap();
    let norms = m.get("feature_normalizers").and_then(Value::as_object);
    (0..test.n_docs())
        .map(|i| {
            defs.iter()
                .map(|(name, w)| {
                    let x = raw(test, i, name);
                    let x = match norms.and_then(|n| n.get(name)) {
                        None => x,
                        Some(n) if n.get("standard").is_some() => {
                            let s = &n["standard"];
                            (x - s["mean"].as_f64().unwrap())
                                / s["standard_deviation"].as_f64().unwrap()
                        }
                        Some(n) => {
                            let s = &n["min_max"];
                            let (lo, hi) = (
                                s["minimum"].as_f64().unwrap(),
                                s["maximum"].as_f64().unwrap(),
                            );
                            (x - lo) / (hi - lo)
                        }
                    };
                    w.as_f64().unwrap() * x
                })
                .sum()
        })
        .collect()
}

fn solr_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["class"], "org.apache.solr.ltr.model.LinearModel");
    let weights = v["params"]["weights"].as_object().unwrap();
    let param = |n: &Value, k: &str| n["params"][k].as_str().unwrap().parse::<f64>().unwrap();
    (0..test.n_docs())
        .map(|i| {
            v["features"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let name = f["name"].as_str().unwrap();
                    let x = raw(test, i, name);
                    let x = match f.get("norm") {
                        None => x,
                        Some(n) if n["class"] == "org.apache.solr.ltr.norm.StandardNormalizer" => {
                            (x - param(n, "avg")) / param(n, "std")
                        }
                        Some(n) => (x - param(n, "min")) / (param(n, "max") - param(n, "min")),
                    };
                    weights[name].as_f64().unwrap() * x
                })
                .sum()
        })
        .collect()
}

/// Vespa's expression as written: `[-]w * term` then `± w * term` per line; a term is a feature name or
/// `((name - a) / b)`.
fn vespa_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let body = text
        .split("expression {")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap();
    let terms: Vec<(f64, String, f64, f64)> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (sign, rest) = match l.strip_prefix("- ").or_else(|| l.strip_prefix('-')) {
                Some(r) => (-1.0, r),
                None => (1.0, l.strip_prefix("+ ").unwrap_or(l)),
            };
            let (w, term) = rest.split_once(" * ").unwrap();
            let w: f64 = w.parse().unwrap();
            let (name, a, b) = match term.strip_prefix("((") {
                None => (term.to_string(), 0.0, 1.0),
                Some(t) => {
                    let (name, t) = t.split_once(" - ").unwrap();
                    let (a, b) = t.trim_end_matches(')').split_once(") / ").unwrap();
                    (name.to_string(), a.parse().unwrap(), b.parse().unwrap())
                }
            };
            (sign * w, name, a, b)
        })
        .collect();
    (0..test.n_docs())
        .map(|i| {
            terms
                .iter()
                .map(|(w, n, a, b)| w * (raw(test, i, n) - a) / b)
                .sum()
        })
        .collect()
}

fn ranklib_scores(text: &str, test: &Dataset) -> Vec<f64> {
    assert!(text.starts_with("## Coordinate Ascent"));
    let line = text.lines().find(|l| !l.starts_with("##")).unwrap();
    let w: Vec<(usize, f64)> = line
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once(':').unwrap();
            (k.parse().unwrap(), v.parse().unwrap())
        })
        .collect();
    (0..test.n_docs())
        .map(|i| {
            w.iter()
                .map(|(k, v)| v * test.row(i).get(k - 1) as f64)
                .sum()
        })
        .collect()
}

/// Equal to float32 precision, or (`up_to_constant`) equal after removing one common shift.
fn assert_same(ours: &[f64], theirs: &[f64], up_to_constant: bool, what: &str) {
    let shift = if up_to_constant {
        theirs[0] - ours[0]
    } else {
        0.0
    };
    let scale = ours.iter().map(|s| s.abs()).fold(0.0, f64::max).max(1e-12);
    for (a, b) in ours.iter().zip(theirs) {
        assert!(
            (a + shift - b).abs() <= 1e-6 * scale,
            "{what}: ltr {a} vs engine {b} (shift {shift}, scale {scale})"
        );
    }
}

fn check_all_targets(model: &ModelFile, label: &str) {
    let (_, test) = data();
    check_all_targets_on(model, &test, label);
}

fn check_all_targets_on(model: &ModelFile, test: &Dataset, label: &str) {
    let test = test.clone();
    let ours = model.score_raw(&test).unwrap();
    for (target, scorer) in [
        (Target::EsLtr, es_scores as fn(&str, &Dataset) -> Vec<f64>),
        (Target::OpenSearchLtr, es_scores),
        (Target::SolrLtr, solr_scores),
        (Target::Vespa, vespa_scores),
        (Target::RankLib, ranklib_scores),
    ] {
        for fold in [false, true] {
            let opts = ExportOptions {
                fold_normalizer: fold,
                ..Default::default()
            };
            let out = match export(model, target, &opts) {
                Ok(o) => o,
                Err(e) => panic!("{label} → {}: {e}", target.name()),
            };
            let theirs = scorer(&out.model, &test);
            let folded = fold || target == Target::RankLib || model.preprocess.is_none();
            assert_same(
                &ours,
                &theirs,
                folded,
                &format!("{label} → {} (fold {fold})", target.name()),
            );
        }
    }
}

#[test]
fn ranksvm_with_each_normaliser_exports_to_every_engine() {
    check_all_targets(
        &trained("ranksvm", &[], NormalizeKind::ZScore, vec![]),
        "ranksvm zscore",
    );
    check_all_targets(
        &trained("ranksvm", &[], NormalizeKind::None, vec![]),
        "ranksvm none",
    );
    check_all_targets(
        &trained("ranksvm", &[], NormalizeKind::MinMax, vec![]),
        "ranksvm minmax",
    );
}

/// On real LETOR data (MQ2008 Fold1, when ../shared/datasets is present): RankSVM with a z-score and RankBoost
/// go out to every engine and score its test file as `ltr predict` does.
#[test]
fn mq2008_models_export_to_every_engine() {
    let Some(root) = ltr_testdata::shared_datasets_dir() else {
        eprintln!("SKIP: ../shared/datasets is absent");
        return;
    };
    let fold = root.join("MQ2008/Fold1");
    let train = ltr_data::read_letor(fold.join("train.txt")).unwrap();
    let test = ltr_data::read_letor(fold.join("test.txt")).unwrap();
    let names: Vec<String> = (1..=train.n_features())
        .map(|k| format!("feat_{k}"))
        .collect();
    let spec = PreprocessSpec {
        normalize: Some(NormalizeKind::ZScore),
        ..Default::default()
    };
    for (algo, params) in [("ranksvm", vec![]), ("rankboost", vec![("rounds", "50")])] {
        let req = TrainRequest::new(&train).preprocess(&spec);
        let mut m = ltr_learn::train(algo, &Grid::single(params.iter().copied()), &req)
            .unwrap()
            .into_model_file(TrainingSummary::default());
        m.feature_names = names.clone();
        if algo == "ranksvm" {
            check_all_targets_on(&m, &test, "MQ2008 ranksvm zscore");
        } else {
            let ours = m.score_raw(&test).unwrap();
            let rl = export(&m, Target::RankLib, &ExportOptions::default()).unwrap();
            assert_same(
                &ours,
                &ranklib_tree_scores(&rl.model, &test),
                true,
                "MQ2008 rankboost → ranklib",
            );
            let solr = export(&m, Target::SolrLtr, &ExportOptions::default()).unwrap();
            assert_same(
                &ours,
                &solr_tree_scores(&solr.model, &test),
                true,
                "MQ2008 rankboost → solr",
            );
        }
    }
}

#[test]
fn committee_perceptron_weighted_average_is_linear_and_exports() {
    let m = trained(
        "committee-perceptron",
        &[("combine", "average")],
        NormalizeKind::ZScore,
        vec![],
    );
    check_all_targets(&m, "committee-perceptron");
}

#[test]
fn min_max_goes_out_where_the_engine_allows_it() {
    let m = trained("ranksvm", &[], NormalizeKind::MinMax, vec![]);
    let (_, test) = data();
    let ours = m.score_raw(&test).unwrap();
    // The web generator's features are non-negative: Elasticsearch's min_max accepts them.
    let es = export(&m, Target::EsLtr, &ExportOptions::default()).unwrap();
    assert!(es.model.contains("min_max"));
    assert_same(
        &ours,
        &es_scores(&es.model, &test),
        false,
        "minmax → es-ltr",
    );
    let solr = export(&m, Target::SolrLtr, &ExportOptions::default()).unwrap();
    assert!(solr.model.contains("MinMaxNormalizer"));
    assert_same(
        &ours,
        &solr_scores(&solr.model, &test),
        false,
        "minmax → solr-ltr",
    );
    assert!(solr
        .feature_store
        .unwrap()
        .contains("org.apache.solr.ltr.feature.SolrFeature"));
}

#[test]
fn what_engines_cannot_compute_is_refused_with_the_reason() {
    let cases = [
        (
            trained("ranksvm", &[], NormalizeKind::QueryZScore, vec![]),
            "per query",
        ),
        (
            trained("ranksvm", &[], NormalizeKind::ZScore, vec![3]),
            "log1p",
        ),
        (
            trained("mhr", &[], NormalizeKind::ZScore, vec![]),
            "aggregates the rankings",
        ),
    ];
    for (model, needle) in cases {
        for (name, target) in Target::ALL {
            let e = export(&model, target, &ExportOptions::default())
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle) && e.contains(name), "{name}: {e}");
        }
    }
    assert!("lucene"
        .parse::<Target>()
        .unwrap_err()
        .to_string()
        .contains("es-ltr, opensearch-ltr"));
}

/// RankLib's ensemble XML: per tree, a value ≤ the threshold goes left; the score sums weight × output.
fn ranklib_tree_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let between = |s: &str, a: &str, b: &str| -> Vec<String> {
        s.split(a)
            .skip(1)
            .map(|p| p.split(b).next().unwrap().trim().to_string())
            .collect()
    };
    let trees: Vec<(usize, f32, f64, f64)> = text
        .split("<tree ")
        .skip(1)
        .map(|t| {
            let feature = between(t, "<feature>", "</feature>")[0].parse().unwrap();
            let threshold = between(t, "<threshold>", "</threshold>")[0]
                .parse()
                .unwrap();
            let outputs = between(t, "<output>", "</output>");
            (
                feature,
                threshold,
                outputs[0].parse().unwrap(),
                outputs[1].parse().unwrap(),
            )
        })
        .collect();
    (0..test.n_docs())
        .map(|i| {
            trees
                .iter()
                .map(|&(f, t, left, right)| {
                    if test.row(i).get(f - 1) <= t {
                        left
                    } else {
                        right
                    }
                })
                .sum()
        })
        .collect()
}

fn solr_tree_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(
        v["class"],
        "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
    );
    let num = |x: &Value| x.as_str().unwrap().parse::<f64>().unwrap();
    (0..test.n_docs())
        .map(|i| {
            v["params"]["trees"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let r = &t["root"];
                    let x = raw(test, i, r["feature"].as_str().unwrap()) as f32;
                    let thr: f32 = r["threshold"].as_str().unwrap().parse().unwrap();
                    num(&t["weight"])
                        * if x <= thr {
                            num(&r["left"]["value"])
                        } else {
                            num(&r["right"]["value"])
                        }
                })
                .sum()
        })
        .collect()
}

/// `if (name > t, a, 0)` terms joined by `+`.
fn vespa_tree_scores(text: &str, test: &Dataset) -> Vec<f64> {
    let body = text
        .split("expression {")
        .nth(1)
        .unwrap()
        .split("\n        }")
        .next()
        .unwrap();
    let terms: Vec<(String, f32, f64)> = body
        .split("if (")
        .skip(1)
        .map(|t| {
            let (cond, rest) = t.split_once(", ").unwrap();
            let (name, thr) = cond.split_once(" > ").unwrap();
            let a = rest.split(", ").next().unwrap();
            (name.to_string(), thr.parse().unwrap(), a.parse().unwrap())
        })
        .collect();
    (0..test.n_docs())
        .map(|i| {
            terms
                .iter()
                .map(|(n, t, a)| {
                    if (raw(test, i, n) as f32) > *t {
                        *a
                    } else {
                        0.0
                    }
                })
                .sum()
        })
        .collect()
}

#[test]
fn rankboost_exports_as_depth_one_trees_on_raw_values() {
    let (_, test) = data();
    for (normalize, log1p) in [
        (NormalizeKind::ZScore, vec![]),
        (NormalizeKind::None, vec![]),
        (NormalizeKind::MinMax, vec![2, 5]),
    ] {
        let m = trained("rankboost", &[("rounds", "40")], normalize, log1p.clone());
        let ours = m.score_raw(&test).unwrap();
        let label = format!("rankboost {normalize:?} log1p {log1p:?}");
        let opts = ExportOptions::default();
        let rl = export(&m, Target::RankLib, &opts).unwrap();
        assert!(rl.model.starts_with("## MART"));
        assert_same(
            &ours,
            &ranklib_tree_scores(&rl.model, &test),
            true,
            &format!("{label} → ranklib"),
        );
        for target in [Target::EsLtr, Target::OpenSearchLtr] {
            let es = export(&m, target, &opts).unwrap();
            let v: Value = serde_json::from_str(&es.model).unwrap();
            assert_eq!(v["model"]["model"]["type"], "model/ranklib");
            let def = v["model"]["model"]["definition"].as_str().unwrap();
            assert_same(
                &ours,
                &ranklib_tree_scores(def, &test),
                true,
                &format!("{label} → es"),
            );
        }
        let solr = export(&m, Target::SolrLtr, &opts).unwrap();
        assert_same(
            &ours,
            &solr_tree_scores(&solr.model, &test),
            true,
            &format!("{label} → solr"),
        );
        let vespa = export(&m, Target::Vespa, &opts).unwrap();
        assert_same(
            &ours,
            &vespa_tree_scores(&vespa.model, &test),
            true,
            &format!("{label} → vespa"),
        );
    }
}

/// RankLib files read back: our own exports (Coordinate Ascent, MART) score as the models they came from, an AdaRank
/// file scores as RankLib sums its weak rankers, and a
/// hand-written LambdaMART with depth-2 trees scores as RankLib's rule says.
#[test]
fn ranklib_models_read_back_and_score() {
    use ltr_export::{read_ranklib, widen_to};
    let (_, test) = data();
    for (algo, params) in [("ranksvm", vec![]), ("rankboost", vec![("rounds", "30")])] {
        let m = trained(algo, &params, NormalizeKind::ZScore, vec![]);
        let ours = m.score_raw(&test).unwrap();
        let text = export(&m, Target::RankLib, &ExportOptions::default())
            .unwrap()
            .model;
        let mut back = read_ranklib(&text, "exported.txt").unwrap();
        widen_to(&mut back, test.n_features());
        back.check_data(&test, "test.txt").unwrap();
        let theirs = back.score_raw(&test).unwrap();
        assert_same(&ours, &theirs, true, &format!("{algo} → ranklib → ltr"));
    }
    let lambdamart = "## LambdaMART\n## No. of trees = 2\n<ensemble>\n<tree id=\"1\" weight=\"0.1\">\n<split>\n<feature> 2 </feature>\n<threshold> 5.0 </threshold>\n<split pos=\"left\">\n<feature> 1 </feature>\n<threshold> 0.5 </threshold>\n<split pos=\"left\"><output> -1.0 </output></split>\n<split pos=\"right\"><output> 2.0 </output></split>\n</split>\n<split pos=\"right\"><output> 3.0 </output></split>\n</split>\n</tree>\n<tree id=\"2\" weight=\"0.5\">\n<split><output> 4.0 </output></split>\n</tree>\n</ensemble>\n";
    let mut m = read_ranklib(lambdamart, "lm.txt").unwrap();
    widen_to(&mut m, test.n_features());
    let scores = m.score_raw(&test).unwrap();
    for (i, s) in scores.iter().enumerate() {
        let (x1, x2) = (test.row(i).get(0), test.row(i).get(1));
        let first = if x2 <= 5.0 {
            if x1 <= 0.5 {
                -1.0
            } else {
                2.0
            }
        } else {
            3.0
        };
        assert_eq!(*s, 0.1 * first + 0.5 * 4.0);
    }
    // RankLib's AdaRank file (the header RankLib 2.x writes): a feature chosen in several rounds adds its α's, and
    // the score is RankLib's Σ_t α_t·x_{f_t}.
    let adarank = "## AdaRank\n## Iteration = 500\n## Train with enqueue: Yes\n## Tolerance = 0.002\n## Max consecutive selection count = 5\n2:0.5 1:0.25 2:0.125 3:-0.0625\n";
    let mut m = read_ranklib(adarank, "ada.txt").unwrap();
    assert_eq!(m.algorithm, "ranklib-adarank");
    widen_to(&mut m, test.n_features());
    let scores = m.score_raw(&test).unwrap();
    for (i, s) in scores.iter().enumerate() {
        let x = |f: usize| test.row(i).get(f) as f64;
        let ranklib = 0.5 * x(1) + 0.25 * x(0) + 0.125 * x(1) - 0.0625 * x(2);
        assert!(
            (s - ranklib).abs() <= 1e-12 * (1.0 + ranklib.abs()),
            "{s} vs {ranklib}"
        );
    }
    for (text, needle) in [
        ("## RankNet\n", "RankNet"),
        ("## AdaRank\n## Iteration = 5\n2:0.5 2:x\n", "line 3: `2:x` is not feature:weight"),
        ("## Coordinate Ascent\n1:0.5 x:2\n", "line 2: `x:2` is not feature:weight"),
        ("## MART\n<ensemble><tree><split><feature>1</feature><threshold>a</threshold></split></tree></ensemble>", "numeric threshold"),
        ("## MART\n<ensemble><tree>", "ensemble XML"),
    ] {
        let e = read_ranklib(text, "bad.txt").unwrap_err().to_string();
        assert!(e.contains("bad.txt") && e.contains(needle), "{e}");
    }
}
