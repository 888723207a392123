//! Time NDCG@10 + AP + RBP(p=0.8) (trec convention) on a generated run of Q queries × 1,000 documents, reading
//! that run and its qrels as TREC files, and evaluating the run read against the qrels read (`cargo run --release -p
//! ltr-metrics --example trec_speed -- 10000 DIR [REPS] [eval|join]`; `eval` skips the files, `join` times only
//! `evaluate_run` on files an earlier run wrote, REPS times, for a profiler).
//! Prints a fingerprint of every per-query value's bits, so two builds can be compared for bit identity.
use std::time::Instant;

use ltr_metrics::{evaluate, read_qrels, read_run, Convention, Metric};

fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::INFINITY;
    let mut out = None;
    for _ in 0..reps {
        let t = Instant::now();
        let v = f();
        best = best.min(t.elapsed().as_secs_f64());
        out = Some(v);
    }
    (best, out.expect("at least one repetition"))
}

/// A fingerprint of every per-query value's bits, measure by measure.
fn fingerprint(ev: &ltr_metrics::Evaluation) -> u64 {
    let mut fp = 0u64;
    for r in &ev.results {
        for v in &r.per_query {
            fp = fp.rotate_left(7) ^ v.to_bits();
        }
    }
    fp
}

fn main() {
    let mut args = std::env::args().skip(1);
    let nq: usize = args.next().map_or(10_000, |s| s.parse().unwrap());
    let dir = std::path::PathBuf::from(args.next().unwrap_or_else(|| "/tmp".into()));
    let reps: usize = args.next().map_or(5, |s| s.parse().unwrap());
    let metrics: Vec<Metric> = ["nDCG@10", "AP", "RBP(p=0.8)"]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    let mode = args.next();
    if mode.as_deref() == Some("join") {
        let q = read_qrels(&dir.join(format!("qrels-{nq}.txt"))).unwrap();
        let r = read_run(&dir.join(format!("run-{nq}.txt"))).unwrap();
        let (secs, ev) = best(reps, || {
            ltr_metrics::evaluate_run(&r, &q, &metrics, &Convention::TREC).unwrap()
        });
        println!(
            "evaluate_run (joined by doc id), best of {reps}: {secs:.4} s; fingerprint {:016x}",
            fingerprint(&ev)
        );
        return;
    }
    // Generated only for the modes that use it (`join` reads files written by an earlier run).
    let (ds, scores) = ltr_data::generate_judged_run(nq, 1000, true).unwrap();
    let (secs, ev) = best(reps, || {
        evaluate(&ds, &scores, &metrics, &Convention::TREC).unwrap()
    });
    let fp = fingerprint(&ev);
    println!(
        "evaluate {} queries: {secs:.4} s; means {:?}; fingerprint {fp:016x}",
        nq,
        ev.results.iter().map(|r| r.mean).collect::<Vec<_>>()
    );
    let (secs2, _) = best(reps, || {
        evaluate(&ds, &scores, &metrics[..2], &Convention::TREC).unwrap()
    });
    println!("evaluate {nq} queries, NDCG@10 + AP only: {secs2:.4} s");
    if mode.as_deref() == Some("eval") {
        return;
    }
    let (qrels, run) = (
        dir.join(format!("qrels-{nq}.txt")),
        dir.join(format!("run-{nq}.txt")),
    );
    if !run.exists() {
        ltr_data::write_atomic(&qrels, |w| ltr_metrics::write_qrels_to(w, &ds)).unwrap();
        ltr_data::write_atomic(&run, |w| {
            ltr_metrics::write_run_to(w, &ds, &scores, "bench")
        })
        .unwrap();
    }
    let mb = |p: &std::path::Path| std::fs::metadata(p).unwrap().len() as f64 / 1e6;
    let (rs, r) = best(reps.min(3), || read_run(&run).unwrap());
    let (qs, q) = best(reps.min(3), || read_qrels(&qrels).unwrap());
    let docs: usize = r.iter().map(|q| q.len()).sum();
    let judged: usize = q.iter().map(|(_, j)| j.len()).sum();
    println!(
        "read_run {:.1} MB: {rs:.4} s = {:.0} MB/s ({} queries, {docs} lines)",
        mb(&run),
        mb(&run) / rs,
        r.len()
    );
    println!(
        "read_qrels {:.1} MB: {qs:.4} s = {:.0} MB/s ({} queries, {judged} judgments)",
        mb(&qrels),
        mb(&qrels) / qs,
        q.len()
    );
    // The run evaluated against the qrels in memory: the join by doc id included, as in the peers' timed parts.
    let (es, ev) = best(reps, || {
        ltr_metrics::evaluate_run(&r, &q, &metrics, &Convention::TREC).unwrap()
    });
    let (es2, ev2) = best(reps, || {
        ltr_metrics::evaluate_run(&r, &q, &metrics[..2], &Convention::TREC).unwrap()
    });
    println!(
        "evaluate_run (joined by doc id): {es:.4} s; NDCG@10 + AP only: {es2:.4} s; means {:?}; \
         fingerprint {:016x} (NDCG@10 + AP only {:016x})",
        ev.results.iter().map(|r| r.mean).collect::<Vec<_>>(),
        fingerprint(&ev),
        fingerprint(&ev2)
    );
    // RRF of three runs of 1,000 queries × 1,000 documents (the first run's scores, shifted per run).
    let (ds, scores) = ltr_data::generate_judged_run(1000, 1000, true).unwrap();
    let mut runs = Vec::new();
    for k in 0..3usize {
        let p = dir.join(format!("fuse-run{k}.txt"));
        if !p.exists() {
            let n = scores.len();
            let s: Vec<f64> = (0..n).map(|i| scores[(i + 7919 * k) % n]).collect();
            ltr_data::write_atomic(&p, |w| ltr_metrics::write_run_to(w, &ds, &s, "b")).unwrap();
        }
        runs.push(read_run(&p).unwrap());
    }
    let (fs, fused) = best(reps.min(3), || {
        ltr_metrics::fuse(
            &runs,
            ltr_metrics::FusionMethod::Rrf { k: 60.0 },
            ltr_metrics::FusionNorm::None,
            &[1.0; 3],
        )
    });
    println!(
        "fuse RRF of 3 runs of 1,000 × 1,000: {fs:.4} s ({} queries)",
        fused.len()
    );
}
