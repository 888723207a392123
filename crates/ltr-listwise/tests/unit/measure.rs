//! Tests of `src/measure.rs`.

use ltr_listwise::*;
use ltr_metrics::{evaluate_query, Convention, Metric};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

const METRICS: &[&str] = &[
    "NDCG@10", "NDCG@3", "NDCG", "DCG@5", "MAP", "MAP@5", "P@5", "P@20", "MRR", "MRR@3", "ERR@10",
    "ERR",
];

/// Scores that put `order` first-to-last without ties.
fn scores_of(order: &[u32]) -> Vec<f64> {
    let mut s = vec![0.0; order.len()];
    for (p, &d) in order.iter().enumerate() {
        s[d as usize] = (order.len() - p) as f64;
    }
    s
}

#[test]
fn values_and_exchanges_agree_with_ltr_metrics() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for conv in Convention::ALL {
        for name in METRICS {
            let metric: Metric = name.parse().unwrap();
            let lm = ListMeasure::new(metric, conv).unwrap();
            for _ in 0..30 {
                let n = rng.random_range(1..25);
                let labels: Vec<f32> = (0..n).map(|_| rng.random_range(0..3) as f32).collect();
                let qm = lm.query(&labels).unwrap();
                let mut order: Vec<u32> = (0..n as u32).collect();
                order.shuffle(&mut rng);
                let want = evaluate_query(metric, &labels, &scores_of(&order), &conv).unwrap();
                assert!(
                    (qm.value(&order) - want).abs() < 1e-12,
                    "{name} {}",
                    conv.name
                );
                let mut st = qm.state(order.clone());
                let mut value = want;
                for _ in 0..20 {
                    let p = rng.random_range(0..n);
                    let q = rng.random_range(0..n);
                    if p == q {
                        continue;
                    }
                    let (p, q) = (p.min(q), p.max(q));
                    value += st.exchange(p, q);
                    order.swap(p, q);
                    let want = evaluate_query(metric, &labels, &scores_of(&order), &conv).unwrap();
                    assert!(
                        (value - want).abs() < 1e-9,
                        "{name} {} after exchange",
                        conv.name
                    );
                    assert_eq!(st.pos(order[p]), p);
                }
            }
        }
    }
}

#[test]
fn unsupported_measures_are_refused_with_the_list() {
    let e = ListMeasure::new("bpref".parse().unwrap(), Convention::STANDARD).unwrap_err();
    assert!(e.to_string().contains("NDCG[@k]"), "{e}");
}
