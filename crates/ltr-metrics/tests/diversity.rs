//! The diversity measures against ndeval (ndeval.c 4.5 through ir_measures' pyndeval provider), from the fixture
//! `fixtures/measures.json` built by `fixtures/make_measures.py`: subtopic qrels for the run of `measures.rs` (score
//! ties, unjudged documents, queries without relevant documents, queries of 1,000 documents). Tolerance 1e-9.

use crate::common;

use std::collections::HashSet;
use std::path::PathBuf;

use common::{fixture, run};
use ltr_metrics::*;
use serde_json::Value;

/// The fixture's diversity qrels, written as ndeval's file and read back by the reader under test.
fn qrels(f: &Value, name: &str) -> DiversityQrels {
    let mut text = String::new();
    for row in f["diversity"]["qrels"].as_array().unwrap() {
        text.push_str(&format!(
            "{} {} {} {}\n",
            row[0].as_str().unwrap(),
            row[1],
            row[2].as_str().unwrap(),
            row[3]
        ));
    }
    let path = temp(name, &text);
    let q = read_diversity_qrels(&path).unwrap();
    std::fs::remove_file(path).unwrap();
    q
}

fn temp(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("ltr-diversity-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

/// Subtopics with a document of grade ≥ 1: ndeval's N.
fn subtopics(q: &DiversityQrels, qid: &str) -> usize {
    let s: HashSet<u64> = q[qid]
        .values()
        .flatten()
        .filter(|(_, g)| *g >= 1)
        .map(|(s, _)| *s)
        .collect();
    s.len()
}

#[test]
fn diversity_measures_match_ndeval() {
    let f = fixture();
    let (run, qrels) = (run(&f), qrels(&f, "qrels"));
    let expected = f["diversity"]["expected"].as_object().unwrap();
    let metrics: Vec<Metric> = expected
        .keys()
        .map(|k| k.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let ev = evaluate_diversity_run(&run, &qrels, &metrics, &Convention::TREC).unwrap();
    let (mut checked, mut nonzero, mut empty) = (0, 0, 0);
    for (r, (name, values)) in ev.results.iter().zip(expected) {
        assert_eq!(r.metric.to_string().parse::<Metric>().unwrap(), r.metric);
        let values = values.as_object().unwrap();
        assert_eq!(ev.qids.len(), values.len(), "{name}: evaluated queries");
        for (qid, got) in ev.qids.iter().zip(&r.per_query) {
            // ndeval divides 0 by 0 for nNRBP on a query without relevant subtopics: ltr scores 0.
            let want = match values[qid].as_f64() {
                Some(v) => v,
                None => {
                    assert_eq!(subtopics(&qrels, qid), 0, "{name} {qid}");
                    empty += 1;
                    0.0
                }
            };
            assert!(
                (got - want).abs() < 1e-9,
                "{name} ({}) query {qid}: ltr {got} vs ndeval {want}",
                r.metric
            );
            checked += 1;
            nonzero += usize::from(want > 0.0);
        }
    }
    assert!(expected.len() >= 40 && checked >= 40 * 27, "{checked}");
    assert!(nonzero > checked / 2 && empty > 0, "{nonzero} {empty}");
}

/// ndeval leaves α-DCG@1 and ERR-IA@1 unnormalised (its normalising loop starts at rank 2); ltr divides by the
/// ideal-ideal value N there as at every other cut-off. The other measures at 1 are ndeval's.
#[test]
fn cutoff_one_differs_from_ndeval_by_the_subtopic_count() {
    let f = fixture();
    let (run, qrels) = (run(&f), qrels(&f, "one"));
    let expected = f["diversity"]["at_one"].as_object().unwrap();
    let metrics: Vec<Metric> = expected.keys().map(|k| k.parse().unwrap()).collect();
    let ev = evaluate_diversity_run(&run, &qrels, &metrics, &Convention::TREC).unwrap();
    let mut scaled = 0;
    for (r, (name, values)) in ev.results.iter().zip(expected) {
        for (qid, got) in ev.qids.iter().zip(&r.per_query) {
            let want = values[qid].as_f64().unwrap();
            let n = subtopics(&qrels, qid) as f64;
            let got = if name == "alpha_DCG@1" || name == "ERR_IA@1" {
                scaled += usize::from(n > 1.0 && *got > 0.0);
                got * n.max(1.0)
            } else {
                *got
            };
            assert!((got - want).abs() < 1e-9, "{name} {qid}: {got} vs {want}");
        }
    }
    assert!(scaled > 5, "{scaled}");
}

#[test]
fn diversity_qrels_errors_name_file_and_line() {
    for (text, problem) in [
        ("1 1 D1 1\n1 1 D2\n", ":2: 3 fields"),
        (
            "1 1 D1 1\n\n1 x D2 1\n",
            ":3: subtopic `x` is not a non-negative integer",
        ),
        ("1 -1 D1 1\n", ":1: subtopic `-1`"),
        ("1 1 D1 0.5\n", ":1: relevance `0.5` is not an integer"),
        (
            "1 1 D1 1\n1 2 D1 0\n1 1 D1 0\n",
            ":3: document `D1` is judged twice for query `1`, subtopic 1",
        ),
    ] {
        let path = temp("bad", text);
        let e = read_diversity_qrels(&path).unwrap_err().to_string();
        std::fs::remove_file(&path).unwrap();
        assert!(
            e.contains(&path.display().to_string()) && e.contains(problem),
            "{e}"
        );
    }
    let e = read_diversity_qrels(std::path::Path::new("/nonexistent/qrels")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/qrels"), "{e}");
}

#[test]
fn measures_decide_how_qrels_are_read() {
    let path = temp("judgments", "7 1 A 1\n7 2 B 1\n7 2 A 0\n");
    let m = |s: &str| s.parse::<Metric>().unwrap();
    let run = vec![RunQuery::with_docs("7", [("B", 2.0), ("A", 1.0)])];
    let div = read_judgments(&path, &[m("alpha_nDCG@2"), m("StRecall@1")]).unwrap();
    assert!(matches!(div, Judgments::Diversity(_)));
    let ev = div
        .evaluate(
            &run,
            &[m("alpha_nDCG@2"), m("StRecall@1")],
            &Convention::TREC,
        )
        .unwrap();
    // B covers subtopic 2, then A subtopic 1: the ideal order too (gain 1 each; ties to the larger doc id, B).
    assert!((ev.results[0].mean - 1.0).abs() < 1e-15);
    assert!((ev.results[1].mean - 0.5).abs() < 1e-15);
    assert!(matches!(
        read_judgments(&path, &[m("nDCG@2")]).unwrap(),
        Judgments::AdHoc(_)
    ));
    let e = read_judgments(&path, &[m("alpha_nDCG@2"), m("P@1")]).unwrap_err();
    assert!(e.to_string().contains("separate calls"), "{e}");
    std::fs::remove_file(&path).unwrap();
    // A diversity measure without subtopic qrels is refused, not scored.
    let e = evaluate_query(m("ERR_IA@5"), &[1.0, 0.0], &[1.0, 0.5], &Convention::TREC);
    assert!(e.unwrap_err().to_string().contains("diversity qrels"));
}

#[test]
fn diversity_names_parse_in_ir_measures_syntax() {
    for s in [
        "alpha_nDCG@20",
        "alpha_nDCG(alpha=0.3)@20",
        "alpha_DCG@5",
        "ERR_IA@20",
        "nERR_IA@10",
        "NRBP",
        "NRBP(alpha=0.3,beta=0.8)",
        "nNRBP(beta=0.9,rel=2)",
        "AP_IA",
        "P_IA@20",
        "StRecall@20",
        "alpha_nDCG(judged_only=True,rel=2)@10",
        "infAP",
        "infAP(rel=2)",
    ] {
        let m: Metric = s.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.to_string(), s);
    }
    let p = |s: &str| s.parse::<Metric>().unwrap();
    assert_eq!(p("alpha_nDCG(alpha=0.5)@20"), p("alpha_nDCG@20"));
    assert_eq!(p("alpha-nDCG@20"), p("alpha_nDCG@20"));
    assert_eq!(p("MAP-IA"), p("AP_IA"));
    assert_eq!(p("strec@5"), p("StRecall@5"));
    for bad in [
        "alpha_nDCG",
        "NRBP@10",
        "AP_IA@5",
        "alpha_nDCG(alpha=1.5)@20",
        "alpha_nDCG(beta=0.5)@20",
        "ERR_IA(alpha=0.3)@20",
        "NRBP(judged_only=True)",
        "StRecall(judged_only=True)@5",
        "NRBP(beta=-0.1)",
        "infAP@10",
        "infAP(judged_only=True)",
        "P_IA@0",
    ] {
        assert!(bad.parse::<Metric>().is_err(), "{bad}");
    }
}

proptest::proptest! {
    /// Any run and subtopic qrels (negative grades, subtopics without relevant documents, empty queries): every value
    /// finite and ≥ 0, subtopic recall and intent-aware precision at most 1.
    #[test]
    fn diversity_values_are_finite_and_bounded(
        judged in proptest::collection::vec((0u8..3, 0u64..5, 0u8..12, -1i64..3), 0..60),
        retrieved in proptest::collection::vec((0u8..3, 0u8..16, 0u8..4), 0..40),
        alpha in 0.0f64..=1.0,
    ) {
        let mut qrels = DiversityQrels::new();
        for (q, s, d, g) in judged {
            let js = qrels.entry(format!("q{q}")).or_default().entry(format!("d{d}")).or_default();
            if let Err(at) = js.binary_search_by_key(&s, |(t, _)| *t) {
                js.insert(at, (s, g));
            }
        }
        let mut run: Vec<RunQuery> = (0..3).map(|q| RunQuery::new(format!("q{q}"))).collect();
        for (q, d, score) in retrieved {
            let docs = &mut run[q as usize];
            let id = format!("d{d}");
            if docs.docs().all(|(x, _)| x != id) {
                docs.push(&id, f64::from(score));
            }
        }
        let names = [
            format!("alpha_nDCG(alpha={alpha})@5"), format!("alpha_DCG(alpha={alpha})@5"), "ERR_IA@3".into(),
            "nERR_IA@3".into(), format!("NRBP(alpha={alpha},beta=0.7)"), "nNRBP".into(), "AP_IA".into(),
            "P_IA@4".into(), "StRecall@4".into(), "alpha_nDCG(judged_only=True,rel=2)@4".into(),
        ];
        let metrics: Vec<Metric> = names.iter().map(|n| n.parse().unwrap()).collect();
        let ev = evaluate_diversity_run(&run, &qrels, &metrics, &Convention::TREC).unwrap();
        for r in &ev.results {
            for v in &r.per_query {
                proptest::prop_assert!(v.is_finite() && *v >= 0.0, "{}: {v}", r.metric);
            }
            if matches!(r.metric.to_string().as_str(), "P_IA@4" | "StRecall@4") {
                proptest::prop_assert!(r.per_query.iter().all(|v| *v <= 1.0 + 1e-12));
            }
        }
    }
}
