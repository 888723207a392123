//! Time NDCG@10 + MAP on a generated run of Q queries × 1,000 documents (`cargo run --release -p ltr-metrics --example eval_speed -- 10000`).
use ltr_data::{Dataset, FeatureMatrix, TextColumn};
use ltr_metrics::{evaluate, Convention, Metric};

fn main() {
    let nq: usize = std::env::args()
        .nth(1)
        .map_or(10_000, |s| s.parse().unwrap());
    let nd = 1000;
    let mut state = 12345u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut labels, mut scores) = (Vec::with_capacity(nq * nd), Vec::with_capacity(nq * nd));
    for _ in 0..nq * nd {
        labels.push((next() % 5) as f32 * if next() % 4 == 0 { 1.0 } else { 0.0 });
        scores.push((next() % 1_000_000_007) as f64 / 1e9);
    }
    let mut ids = TextColumn::new();
    for i in 0..nq * nd {
        ids.push(&format!("d{}", i % nd));
    }
    let x = FeatureMatrix::Dense(ndarray::Array2::zeros((nq * nd, 0)));
    let ds = Dataset::new(
        x,
        labels,
        (0..=nq).map(|q| q * nd).collect(),
        (0..nq).map(|q| q.to_string()).collect(),
    )
    .unwrap()
    .with_docids(ids)
    .unwrap();
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
