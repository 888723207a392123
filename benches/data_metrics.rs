//! Parser, cache and evaluator throughput.

use ltr_testdata::shared_datasets_dir;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ltr_benches::generated;
use ltr_data::{load_cache, read_letor, save_cache, write_letor};
use ltr_metrics::{evaluate, Convention, Metric};

fn parse(c: &mut Criterion) {
    let dir = tempfile_dir();
    let gen = dir.join("gen.txt");
    write_letor(&generated(400, 120, 136), &gen).unwrap();
    let sparse = dir.join("sparse.txt");
    std::fs::write(&sparse, ltr_benches::sparse_yahoo_like_text()).unwrap();
    let mut files = vec![
        ("generated 136 features", gen.clone()),
        ("sparse Yahoo-style, 700 features, 60 stored", sparse),
    ];
    if let Some(d) = shared_datasets_dir() {
        files.push(("MQ2008 Fold1 train", d.join("MQ2008/Fold1/train.txt")));
    }
    let mut g = c.benchmark_group("parse");
    g.sample_size(10);
    for (name, f) in &files {
        g.throughput(Throughput::Bytes(std::fs::metadata(f).unwrap().len()));
        g.bench_function(*name, |b| b.iter(|| read_letor(f).unwrap()));
    }
    let ds = read_letor(&gen).unwrap();
    let cache = dir.join("gen.ltrcache");
    save_cache(&ds, &cache, Some(&gen)).unwrap();
    g.bench_function("cache load (generated)", |b| {
        b.iter(|| load_cache(&cache, Some(&gen)).unwrap())
    });
    g.finish();
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ltr-bench-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn eval(c: &mut Criterion) {
    let ds = generated(2_000, 200, 1);
    let scores: Vec<f64> = (0..ds.n_docs())
        .map(|i| ((i * 7919) % 1009) as f64)
        .collect();
    let metrics = [Metric::Ndcg(Some(10)), Metric::Ap(None)];
    let mut g = c.benchmark_group("evaluate");
    g.throughput(Throughput::Elements(ds.n_docs() as u64));
    for conv in [Convention::LETOR4, Convention::TREC, Convention::STANDARD] {
        g.bench_function(format!("NDCG@10+MAP {}", conv.name), |b| {
            b.iter(|| evaluate(&ds, &scores, &metrics, &conv).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, parse, eval);
criterion_main!(benches);
