//! Agreement with the oracles (fixtures built by `fixtures/make_fixtures.py`): pytrec_eval for `trec`, the LETOR
//! 3.0 / 4.0 / MSLR formulas for `letor3`, `letor4`, `mslr`, textbook formulas for `standard`, brute-force
//! enumeration for expected ties, and scipy.stats for the significance tests. Tolerance 1e-9 everywhere.

use ltr_data::{Dataset, FeatureMatrix, TextColumn};
use ltr_metrics::*;
use serde_json::Value;

fn fixtures() -> Value {
    serde_json::from_str(include_str!("fixtures/oracle.json")).unwrap()
}

fn dataset(queries: &Value) -> (Dataset, Vec<f64>) {
    let mut labels = Vec::new();
    let mut scores = Vec::new();
    let mut offsets = vec![0];
    let mut qids = Vec::new();
    let mut ids = TextColumn::new();
    for q in queries.as_array().unwrap() {
        for l in q["labels"].as_array().unwrap() {
            labels.push(l.as_f64().unwrap() as f32);
        }
        for s in q["scores"].as_array().unwrap() {
            scores.push(s.as_f64().unwrap());
        }
        for d in q["docids"].as_array().unwrap() {
            ids.push(d.as_str().unwrap());
        }
        offsets.push(labels.len());
        qids.push(q["qid"].as_str().unwrap().to_string());
    }
    let x = FeatureMatrix::Dense(ndarray::Array2::zeros((labels.len(), 1)));
    let ds = Dataset::new(x, labels, offsets, qids)
        .unwrap()
        .with_docids(ids)
        .unwrap();
    (ds, scores)
}

fn check(group: &str, conv_name: &str, conv: Convention) {
    let f = fixtures();
    let (ds, scores) = dataset(&f[group]["queries"]);
    let expected = f[group][conv_name].as_object().unwrap();
    let metrics: Vec<Metric> = expected.keys().map(|k| k.parse().unwrap()).collect();
    let ev = evaluate(&ds, &scores, &metrics, &conv).unwrap();
    for (r, (name, values)) in ev.results.iter().zip(expected) {
        let values: Vec<f64> = values
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        for (q, (got, want)) in r.per_query.iter().zip(&values).enumerate() {
            assert!(
                (got - want).abs() < 1e-9,
                "{conv_name} {name} query {}: ltr {got} vs oracle {want}",
                q + 1
            );
        }
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        assert!((r.mean - mean).abs() < 1e-9, "{conv_name} {name} mean");
    }
    assert!(!ev.results.is_empty());
}

#[test]
fn letor3_matches_eval_score_3() {
    check("letor", "letor3", Convention::LETOR3);
}

#[test]
fn letor4_matches_eval_score_4() {
    check("letor", "letor4", Convention::LETOR4);
}

#[test]
fn mslr_matches_the_mslr_script() {
    check("mslr", "mslr", Convention::MSLR);
}

#[test]
fn trec_matches_pytrec_eval() {
    check("trec", "trec", Convention::TREC);
}

#[test]
fn standard_matches_textbook_formulas() {
    check("standard", "standard", Convention::STANDARD);
}

#[test]
fn expected_ties_match_brute_force_enumeration() {
    check(
        "expected_ties",
        "standard",
        Convention::STANDARD.with_ties(TiePolicy::Expected),
    );
}

#[test]
fn seed_000_worked_example_under_letor3() {
    // R N R N R N, N R R R N N, R R N N N R with R = label 1 (seed 000 §3).
    let lists: [[f32; 6]; 3] = [
        [1., 0., 1., 0., 1., 0.],
        [0., 1., 1., 1., 0., 0.],
        [1., 1., 0., 0., 0., 1.],
    ];
    // The paper prints three digits; check.py (numbers.md §1.1) gives NDCG 0.7836, 0.8100, 0.9072.
    let expect = [
        (0.783, 0.7836, 1.0, 0.756, 3.0),
        (0.810, 0.8100, 0.5, 0.639, 3.0),
        (0.907, 0.9072, 1.0, 0.833, 3.0),
    ];
    let scores = [6.0, 5.0, 4.0, 3.0, 2.0, 1.0];
    for (labels, (ndcg, ndcg4, rr, ap, q)) in lists.iter().zip(expect) {
        let c = Convention::LETOR3;
        let v = |m: &str| evaluate_query(m.parse().unwrap(), labels, &scores, &c).unwrap();
        assert!((v("NDCG") - ndcg).abs() < 1e-3, "NDCG {}", v("NDCG"));
        assert!((v("NDCG") - ndcg4).abs() < 5e-5, "NDCG {}", v("NDCG"));
        assert_eq!(v("MRR"), rr);
        assert!((v("MAP") - ap).abs() < 1e-3, "AP {}", v("MAP"));
        assert_eq!(v("Q"), q);
    }
    // The standard discount does not reproduce the paper (metrics-and-numbers.md §1.1).
    let std = evaluate_query(
        Metric::Ndcg(None),
        &lists[0],
        &scores,
        &Convention::STANDARD,
    )
    .unwrap();
    assert!((std - 0.8855).abs() < 1e-4);
}

#[test]
fn reference_test_vectors() {
    // Labels in ranked order [1,2,0,2,0]: NDCG@1..5 under the J-K and the standard discount (numbers.md §3.5).
    let labels = [1.0, 2.0, 0.0, 2.0, 0.0];
    let scores = [5.0, 4.0, 3.0, 2.0, 1.0];
    let jk = [0.3333, 0.6667, 0.6032, 0.8294, 0.8294];
    let st = [0.3333, 0.5912, 0.5364, 0.7760, 0.7760];
    let c_jk = Convention {
        gain: Gain::Exponential,
        ..Convention::STANDARD
    };
    let c_jk = Convention {
        discount: Discount::Letor,
        ..c_jk
    };
    for k in 1..=5 {
        let a = evaluate_query(Metric::Ndcg(Some(k)), &labels, &scores, &c_jk).unwrap();
        let b = evaluate_query(
            Metric::Ndcg(Some(k)),
            &labels,
            &scores,
            &Convention::STANDARD,
        )
        .unwrap();
        assert!(
            (a - jk[k - 1]).abs() < 5e-5 && (b - st[k - 1]).abs() < 5e-5,
            "k={k}: {a} {b}"
        );
    }
    // ERR of [2,0,1]: 0.7708 with l_max = 2, 0.2044 with l_max = 4.
    let labels = [2.0, 0.0, 1.0];
    let scores = [3.0, 2.0, 1.0];
    let e2 = evaluate_query(
        Metric::Err(None),
        &labels,
        &scores,
        &Convention {
            err_max_grade: 2.0,
            ..Convention::STANDARD
        },
    )
    .unwrap();
    let e4 = evaluate_query(Metric::Err(None), &labels, &scores, &Convention::STANDARD).unwrap();
    assert!(
        (e2 - 0.7708).abs() < 5e-5 && (e4 - 0.2044).abs() < 5e-5,
        "{e2} {e4}"
    );
}

#[test]
fn significance_tests_match_scipy() {
    let f = fixtures();
    for case in f["significance"].as_array().unwrap() {
        let v = |k: &str| -> Vec<f64> {
            case[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect()
        };
        let (a, b) = (v("a"), v("b"));
        for alt_name in ["two-sided", "greater", "less"] {
            let alt: Alternative = alt_name.parse().unwrap();
            let e = &case[alt_name];
            let pair = |k: &str| (e[k][0].as_f64().unwrap(), e[k][1].as_f64().unwrap());
            let close = |got: f64, want: f64, what: &str| {
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                    "{what} n={} {alt_name}: {got} vs scipy {want}",
                    a.len()
                );
            };
            let t = paired_t_test(&a, &b, alt);
            close(t.statistic, pair("ttest").0, "t");
            close(t.p_value, pair("ttest").1, "t p");
            let w = wilcoxon(&a, &b, alt);
            close(w.statistic, pair("wilcoxon").0, "wilcoxon T");
            close(w.p_value, pair("wilcoxon").1, "wilcoxon p");
            let s = sign_test(&a, &b, alt);
            close(s.statistic, pair("sign").0, "sign k");
            close(s.p_value, pair("sign").1, "sign p");
            if !e["permutation"].is_null() {
                let p = permutation_test(&a, &b, alt, 0, 0);
                close(p.statistic, pair("permutation").0, "perm stat");
                close(p.p_value, pair("permutation").1, "perm p");
            }
        }
        let (lo, hi) = bootstrap_ci(&a, &b, 0.95, 4000, 1);
        let mean = a.iter().zip(&b).map(|(x, y)| x - y).sum::<f64>() / a.len() as f64;
        assert!(
            lo < mean && mean < hi,
            "bootstrap interval [{lo}, {hi}] must contain the mean {mean}"
        );
    }
}

#[test]
fn ideal_dcg_orders_by_gain_not_label_for_table_gains() {
    // Under letor3 a label 3 gains 0 (outside the script's table): the ideal list puts the 2 first.
    let labels = [3.0, 2.0, 0.0];
    let scores = [3.0, 2.0, 1.0];
    let v = evaluate_query(Metric::Ndcg(None), &labels, &scores, &Convention::LETOR3).unwrap();
    // DCG = 0 + 3 (rank 2, no discount) = 3; ideal = 3 (rank 1) + 0 + 0 = 3.
    assert!((v - 1.0).abs() < 1e-12, "{v}");
}
