//! ir_measures' syntax and the trec_eval measures, against the oracle fixture `fixtures/measures.json` built by
//! `fixtures/make_measures.py`: trec_eval (pytrec_eval through ir_measures) on a run with score ties, unjudged and
//! missed documents, queries without relevant documents and queries of 1,000 documents; ir_measures' `judged`
//! provider for Judged@k; the formulas of Moffat & Zobel (RBP and its residual) and Chapelle et al. (ERR) computed
//! in the script. Every measure key is ir_measures' own syntax, parsed here as `ltr eval --metric` parses it.
//! Tolerance 1e-9. The tie-aware forms are checked against enumeration over every order of the documents.

use crate::common;

use common::{fixture, run};
use ltr_metrics::*;
use serde_json::Value;

fn run_and_qrels(f: &Value, qrels_key: &str) -> (Vec<RunQuery>, Qrels) {
    let run = run(f);
    let mut qrels = Qrels::new();
    for row in f[qrels_key].as_array().unwrap() {
        qrels.insert(
            row[0].as_str().unwrap(),
            row[1].as_str().unwrap(),
            row[2].as_f64().unwrap() as f32,
        );
    }
    (run, qrels)
}

#[test]
fn trec_measures_match_trec_eval_and_ir_measures() {
    let f = fixture();
    let checked = check_against(&f, "qrels", "expected");
    assert!(checked >= 60 * 28, "{checked}");
}

/// infAP's sampled pool: a third of the judged documents marked -1 (pooled, unjudged). infAP counts them as pooled;
/// every other trec_eval measure (and ir_measures' Judged@k) must treat them as trec_eval does.
#[test]
fn sampled_qrels_match_trec_eval() {
    let f = fixture();
    let checked = check_against(&f, "sampled_qrels", "expected_sampled");
    assert!(checked >= 55 * 28, "{checked}");
    let (run, qrels) = run_and_qrels(&f, "sampled_qrels");
    let infap = ["infAP".parse().unwrap(), Metric::Ap(None)];
    let ev = evaluate_run(&run, &qrels, &infap, &Convention::TREC).unwrap();
    // On a sampled pool the estimate differs from AP over the judged sample: the test can tell them apart.
    assert!(ev.results[0].per_query != ev.results[1].per_query);
}

/// Every measure of `expected_key` on the fixture's run against `qrels_key`, to 1e-9; returns the values checked.
fn check_against(f: &Value, qrels_key: &str, expected_key: &str) -> usize {
    let (run, qrels) = run_and_qrels(f, qrels_key);
    let expected = f[expected_key].as_object().unwrap();
    let metrics: Vec<Metric> = expected
        .keys()
        .map(|k| k.parse().unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let ev = evaluate_run(&run, &qrels, &metrics, &Convention::TREC).unwrap();
    let mut checked = 0;
    for (r, (name, values)) in ev.results.iter().zip(expected) {
        let values = values.as_object().unwrap();
        assert_eq!(ev.qids.len(), values.len(), "{name}: evaluated queries");
        for (qid, got) in ev.qids.iter().zip(&r.per_query) {
            let want = values[qid].as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-9,
                "{name} ({}) query {qid}: ltr {got} vs oracle {want}",
                r.metric
            );
            checked += 1;
        }
    }
    assert!(expected.len() >= 55, "{}", expected.len());
    checked
}

/// All orders of `labels`/`scores` (each tie order equally often), evaluated with input-order ties, averaged.
fn brute_force(metric: Metric, labels: &[f32], scores: &[f64]) -> f64 {
    fn permute(idx: &mut Vec<usize>, k: usize, out: &mut Vec<Vec<usize>>) {
        if k == idx.len() {
            out.push(idx.clone());
            return;
        }
        for i in k..idx.len() {
            idx.swap(k, i);
            permute(idx, k + 1, out);
            idx.swap(k, i);
        }
    }
    let mut perms = Vec::new();
    permute(&mut (0..labels.len()).collect(), 0, &mut perms);
    let c = Convention::TREC.with_ties(TiePolicy::InputOrder);
    let total: f64 = perms
        .iter()
        .map(|p| {
            let l: Vec<f32> = p.iter().map(|&i| labels[i]).collect();
            let s: Vec<f64> = p.iter().map(|&i| scores[i]).collect();
            evaluate_query(metric, &l, &s, &c).unwrap()
        })
        .sum();
    total / perms.len() as f64
}

#[test]
fn expected_ties_match_enumeration() {
    let nan = f32::NAN;
    let cases: [(&[f32], &[f64]); 4] = [
        (
            &[2.0, 0.0, nan, 1.0, 0.0, 3.0],
            &[1.0, 1.0, 1.0, 0.5, 0.5, 0.0],
        ),
        (
            &[0.0, 1.0, nan, nan, 2.0, 0.0, 1.0],
            &[2.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0],
        ),
        (&[0.0, 0.0, 1.0, nan, 0.0], &[3.0, 3.0, 3.0, 3.0, 3.0]),
        (
            &[1.0, nan, 0.0, 0.0, 2.0, 1.0],
            &[0.1, 0.2, 0.2, 0.3, 0.3, 0.3],
        ),
    ];
    let names = [
        "R@2",
        "R@4",
        "R",
        "Success@1",
        "Success@2",
        "Success@3",
        "Judged@2",
        "Judged@4",
        "Judged",
        "NumRet",
        "NumRel",
        "NumRelRet",
        "SetP",
        "SetR",
        "SetF(beta=0.5)",
        "RBP(p=0.5)",
        "RBPResidual(p=0.5)",
        "RBP(p=0.8,rel=2)",
        "P(rel=2)@3",
        "AP(rel=2)",
        "nDCG(judged_only=True)@3",
        "P(judged_only=True)@2",
        "AP(judged_only=True)",
        "RR(judged_only=True,rel=2)",
        "Success(judged_only=True)@1",
    ];
    let c = Convention::TREC.with_ties(TiePolicy::Expected);
    for (labels, scores) in cases {
        for name in names {
            let m: Metric = name.parse().unwrap();
            let got = evaluate_query(m, labels, scores, &c).unwrap();
            let want = brute_force(m, labels, scores);
            assert!(
                (got - want).abs() < 1e-12,
                "{name} {labels:?}: {got} vs {want}"
            );
        }
    }
    // IPrec has no tie-aware form: refused, not approximated.
    let e = evaluate_query("IPrec@0.5".parse().unwrap(), cases[0].0, cases[0].1, &c);
    assert!(e.is_err());
}

#[test]
fn letor_data_has_no_unjudged_documents() {
    // Every document of a LETOR list is judged: judged_only changes nothing, Judged@k = 1, the residual is p^n.
    let labels = [2.0, 0.0, 1.0, 0.0, 0.0];
    let scores = [0.9, 0.8, 0.7, 0.6, 0.5];
    for c in Convention::ALL {
        let v = |m: &str| evaluate_query(m.parse().unwrap(), &labels, &scores, &c).unwrap();
        assert_eq!(v("nDCG(judged_only=True)@3"), v("nDCG@3"), "{c}");
        assert_eq!(v("AP(judged_only=True)"), v("AP"), "{c}");
        assert_eq!(v("Judged@3"), 1.0);
        assert!((v("RBPResidual(p=0.8)") - 0.8f64.powi(5)).abs() < 1e-15);
    }
    // RBP by hand (trec: labels 2 and 1 relevant at ranks 1 and 3): 0.2 · (1 + 0.64).
    let c = Convention::TREC;
    let rbp = evaluate_query("RBP".parse().unwrap(), &labels, &scores, &c).unwrap();
    assert!((rbp - 0.2 * 1.64).abs() < 1e-15, "{rbp}");
    // rel=2 under mslr (whose own threshold is 2) equals the plain measure; under trec it differs.
    let p =
        |m: &str, c: &Convention| evaluate_query(m.parse().unwrap(), &labels, &scores, c).unwrap();
    assert_eq!(
        p("P(rel=2)@3", &Convention::MSLR),
        p("P@3", &Convention::MSLR)
    );
    assert!((p("P(rel=2)@3", &c) - 1.0 / 3.0).abs() < 1e-15);
    assert!((p("P@3", &c) - 2.0 / 3.0).abs() < 1e-15);
}
