//! The neural learner's hot path (issue 53): the two fixed-order f32 products of training (the forward product
//! `x W + b`, also `dy Wᵀ`, and the weight gradient `aᵀ dy`) at the widths of allRank's MLP, and one epoch of
//! allRank's published MLP configuration (256/512/1024/512/256, ReLU, dropout 0.3, NDCG-Loss2++, batches of 64
//! queries, slates of 240) on OHSUMED Fold1 (generated OHSUMED-like data without `../shared/datasets`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ltr_benches::ohsumed_like;
use ltr_core::neural::kernels;
use ltr_core::{Fit, FitContext, ParamGuard};
use ltr_neural::{Loss, NeuralParams};

/// Deterministic values in [-1, 1), every third one zero (ReLU's and dropout's zeros).
fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let h = (i * 2_654_435_761 + seed * 40_503) % 1_000_003;
            if h.is_multiple_of(3) {
                0.0
            } else {
                h as f32 / 500_001.5 - 1.0
            }
        })
        .collect()
}

fn products(c: &mut Criterion) {
    let mut g = c.benchmark_group("neural products, 128 rows");
    for (k_dim, o_dim) in [(45, 256), (512, 1024), (1024, 512)] {
        let rows = 128;
        let x = values(rows * k_dim, 1);
        let m = values(k_dim * o_dim, 2);
        let b = values(o_dim, 3);
        let dy = values(rows * o_dim, 4);
        let mut y = vec![0f32; rows * o_dim];
        let mut dw = vec![0f32; k_dim * o_dim];
        g.throughput(Throughput::Elements((rows * k_dim * o_dim) as u64));
        let shape = format!("{k_dim}x{o_dim}");
        g.bench_with_input(BenchmarkId::new("x W + b", &shape), &shape, |bn, _| {
            bn.iter(|| kernels::matmul_rows(&x, &m, Some(&b), &mut y, k_dim, o_dim))
        });
        g.bench_with_input(BenchmarkId::new("dW += aT dy", &shape), &shape, |bn, _| {
            bn.iter(|| kernels::weight_gradient(&x, &dy, &mut dw, k_dim, o_dim))
        });
    }
    g.finish();
}

fn epoch(c: &mut Criterion) {
    let ds = ohsumed_like();
    let params = NeuralParams::default()
        .sizes(vec![256, 512, 1024, 512, 256])
        .dropout(0.3)
        .loss(Loss::parse("ndcgloss2pp").expect("a loss"))
        .batch_size(64)
        .slate_length(240)
        .epochs(1)
        .check()
        .expect("valid parameters");
    let mut g = c.benchmark_group("neural");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ds.n_docs() as u64));
    for threads in [1, 2] {
        g.bench_with_input(
            BenchmarkId::new("epoch, allRank's MLP (OHSUMED Fold1), threads", threads),
            &threads,
            |bn, &t| bn.iter(|| params.fit(&ds, &FitContext::new(t)).expect("fit")),
        );
    }
    g.finish();
}

criterion_group!(benches, products, epoch);
criterion_main!(benches);
