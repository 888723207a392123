//! Scoring with tree ensembles (issue #40): documents per second through a LambdaMART model of 100 and 500 trees ×
//! 31 leaves, walked tree by tree (`Forest::score_query`, the reference) and through the compiled QuickScorer-style
//! layout (`CompiledForest`, what `ltr predict` uses). Run with `RAYON_NUM_THREADS=1` for per-core figures.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ltr_benches::ohsumed_like;
use ltr_core::{Fit, FitContext, ParamGuard, Scorer};

fn scoring(c: &mut Criterion) {
    let ds = ohsumed_like();
    let mut p = ltr_trees::GbdtParams::lambdamart();
    p.trees = 500;
    p.stop_after = 0;
    let model = p
        .check()
        .unwrap()
        .check()
        .unwrap()
        .fit(&ds, &FitContext::new(1))
        .unwrap()
        .model;
    let ltr_core::Model::Forest(model) = model else {
        panic!("lambdamart trains a forest")
    };
    let mut g = c.benchmark_group("scoring");
    g.sample_size(10);
    g.throughput(Throughput::Elements(ds.n_docs() as u64));
    for trees in [100, 500] {
        let forest = model.truncated(trees);
        let compiled = forest.compile();
        assert_eq!(compiled.score_dataset(&ds), {
            let mut walked = vec![0.0; ds.n_docs()];
            let offsets = ds.query_offsets();
            for q in 0..ds.n_queries() {
                forest.score_query(&ds.query(q), &mut walked[offsets[q]..offsets[q + 1]]);
            }
            walked
        });
        g.bench_function(
            format!("walk {trees} trees x 31 leaves (OHSUMED Fold1)"),
            |b| {
                b.iter(|| {
                    let mut out = vec![0.0; ds.n_docs()];
                    let offsets = ds.query_offsets();
                    for q in 0..ds.n_queries() {
                        forest.score_query(&ds.query(q), &mut out[offsets[q]..offsets[q + 1]]);
                    }
                    out
                })
            },
        );
        g.bench_function(
            format!("compiled {trees} trees x 31 leaves (OHSUMED Fold1)"),
            |b| b.iter(|| compiled.score_dataset(&ds)),
        );
    }
    g.throughput(Throughput::Elements(1));
    g.bench_function("compile 500 trees x 31 leaves", |b| {
        b.iter(|| model.compile())
    });
    g.finish();
}

criterion_group!(benches, scoring);
criterion_main!(benches);
