//! Time NDCG@10 + MAP on a generated run of Q queries × 1,000 documents (`cargo run --release -p ltr-metrics --example eval_speed -- 10000`).
use ltr_metrics::{evaluate, Convention, Metric};

fn main() {
    let nq: usize = std::env::args()
        .nth(1)
        .map_or(10_000, |s| s.parse().unwrap());
    let (ds, scores) = ltr_data::generate_judged_run(nq, 1000, true).unwrap();
    let m = [Metric::Ndcg(Some(10)), Metric::Ap(None)];
    for conv in [Convention::TREC, Convention::STANDARD, Convention::LETOR4] {
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let e = evaluate(&ds, &scores, &m, &conv).unwrap();
            best = best.min(t.elapsed().as_secs_f64());
            std::hint::black_box(e);
        }
        println!("{}: {best:.3}s", conv.name);
    }
}
