//! Differential test against the paper's own code (HarrieO/2022-doubly-robust-LTR, Oosterhuis, TOIS 2023): a small
//! log's doubly robust labels equal those of its `compute_weights`, clipped and not, with and without a direct
//! model (`tests/fixtures/dr-paper/make_dr_paper_labels.py` made the fixture with that code).

use std::collections::HashMap;
use std::path::Path;

use ltr_clicks::{
    doubly_robust_label, doubly_robust_set, ClickRecord, DoublyRobustSettings, PropensitySource,
};
use ltr_data::Dataset;
use serde_json::Value;

fn fixture() -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dr-paper/dr-paper-labels.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The fixture's documents as a dataset (one feature, the row number) with their docids.
fn features(fx: &Value) -> Dataset {
    let mut text = String::new();
    for (i, d) in fx["docs"].as_array().unwrap().iter().enumerate() {
        text.push_str(&format!(
            "0 qid:{} 1:{i} #docid = {}\n",
            d["qid"].as_str().unwrap(),
            d["docid"].as_str().unwrap()
        ));
    }
    crate::common::read_text(&text)
}

fn log(fx: &Value) -> Vec<ClickRecord> {
    fx["log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| ClickRecord {
            session: r["session"].as_u64().unwrap(),
            qid: r["qid"].as_str().unwrap().into(),
            docid: r["docid"].as_str().unwrap().into(),
            rank: r["rank"].as_u64().unwrap() as u32,
            clicked: r["clicked"].as_bool().unwrap(),
            propensity: r["propensity"].as_f64(),
            production_rank: None,
        })
        .collect()
}

/// Clicks, expected examined impressions (the sum of the shown ranks' propensities) and the query's sessions, by
/// docid.
fn counts(log: &[ClickRecord]) -> HashMap<String, (f64, f64, f64)> {
    let mut sessions: HashMap<&str, std::collections::BTreeSet<u64>> = HashMap::new();
    let mut by_doc: HashMap<String, (f64, f64, String)> = HashMap::new();
    for r in log {
        sessions.entry(&r.qid).or_default().insert(r.session);
        let e = by_doc
            .entry(r.docid.clone())
            .or_insert((0.0, 0.0, r.qid.clone()));
        e.0 += f64::from(u8::from(r.clicked));
        e.1 += r.propensity.unwrap();
    }
    by_doc
        .into_iter()
        .map(|(d, (c, e, q))| (d, (c, e, sessions[q.as_str()].len() as f64)))
        .collect()
}

#[test]
fn labels_equal_the_papers_compute_weights() {
    let fx = fixture();
    let (data, log) = (features(&fx), log(&fx));
    let counts = counts(&log);
    let docs = fx["docs"].as_array().unwrap();
    let mut compared = 0;
    for case in fx["cases"].as_array().unwrap() {
        let clip = case["clip"].as_f64().unwrap();
        let theirs: Vec<f64> = case["labels"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        if case["direct"].as_bool().unwrap() {
            // The estimator's arithmetic with the paper's direct-model values, document by document.
            for (d, &want) in docs.iter().zip(&theirs) {
                let docid = d["docid"].as_str().unwrap();
                let r_hat = d["r_hat"].as_f64().unwrap();
                let label = match counts.get(docid) {
                    Some(&(c, e, n)) => {
                        let rho = d["expected_treatment"].as_f64().unwrap();
                        assert!(
                            (e / n - rho).abs() < 1e-12,
                            "{docid}: treatment {} against {rho}",
                            e / n
                        );
                        doubly_robust_label(c, e, n, r_hat, clip)
                    }
                    // Never shown: the paper's code gives the direct model's value only when it clips (with
                    // alpha_clip None its denominator is 1 and the label 0); ours is the direct model's value.
                    None if clip == 0.0 => continue,
                    None => doubly_robust_label(0.0, 0.0, 1.0, r_hat, clip),
                };
                assert!(
                    (label - want).abs() < 1e-12,
                    "clip {clip}, {docid}: ours {label}, the paper's {want}"
                );
                compared += 1;
            }
        } else {
            // No direct model: the set itself, the shown documents (the unshown are left out; the paper's 0).
            let settings = DoublyRobustSettings {
                clip: ltr_clicks::ClipThreshold::Fixed(clip),
                ..Default::default()
            };
            let (set, _) =
                doubly_robust_set(&log, &data, &PropensitySource::Logged, &settings).unwrap();
            let ids = set.docids().unwrap();
            assert_eq!(set.n_docs(), counts.len());
            for (row, &label) in set.labels().iter().enumerate() {
                let docid = ids.get(row);
                let i = docs.iter().position(|d| d["docid"] == docid).unwrap();
                let want = theirs[i];
                assert!(
                    (f64::from(label) - want).abs() <= 1e-6 * want.abs().max(1.0),
                    "clip {clip}, {docid}: ours {label}, the paper's {want}"
                );
                compared += 1;
            }
        }
    }
    // 16 shown documents in three IPS sets, 16 + 17 + 17 in the direct cases.
    assert_eq!(compared, 3 * 16 + 16 + 17 + 17);
}
