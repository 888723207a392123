//! Parser, cache and evaluator throughput.

use ltr_testdata::shared_datasets_dir;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ltr_benches::generated;
use ltr_data::{load_cache, read_letor, save_cache, write_letor};
use ltr_metrics::{evaluate, evaluate_run_against_qrels, read_qrels, Convention, Metric};

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

/// A TREC run and its qrels as `benches/treceval_peers.py gen` writes them (every document judged, a quarter graded
/// 1–4, scores of nine decimals), `queries` × `docs`, from a fixed seed.
fn trec_files(
    dir: &std::path::Path,
    queries: usize,
    docs: usize,
) -> (std::path::PathBuf, std::path::PathBuf) {
    use std::fmt::Write;
    let mut rng = ltr_testdata::XorShift64::new(55);
    let (mut run, mut qrels) = (String::new(), String::new());
    for q in 1..=queries {
        let mut scored: Vec<(u64, usize)> =
            (0..docs).map(|d| (rng.below(1_000_000_000), d)).collect();
        for d in 0..docs {
            let grade = if rng.below(4) == 0 { rng.below(5) } else { 0 };
            writeln!(qrels, "{q} 0 d{d} {grade}").unwrap();
        }
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        for (r, (s, d)) in scored.iter().enumerate() {
            writeln!(run, "{q} Q0 d{d} {} {:.9} gen", r + 1, *s as f64 / 1e9).unwrap();
        }
    }
    let (rp, qp) = (dir.join("trec.run"), dir.join("trec.qrels"));
    std::fs::write(&rp, run).unwrap();
    std::fs::write(&qp, qrels).unwrap();
    (rp, qp)
}

/// `ltr eval --run R --qrels Q` without the process: the qrels read, the run evaluated while read (nDCG@10 + AP),
/// on a 500-query × 1,000-document run (16 MB; the whole-process comparison with trec_eval is
/// `benches/trec-eval-speed.sh`).
fn trec_eval(c: &mut Criterion) {
    let dir = tempfile_dir();
    let (run, qrels) = trec_files(&dir, 500, 1000);
    let metrics = [Metric::Ndcg(Some(10)), Metric::Ap(None)];
    let bytes = std::fs::metadata(&run).unwrap().len() + std::fs::metadata(&qrels).unwrap().len();
    let mut g = c.benchmark_group("trec");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(std::fs::metadata(&qrels).unwrap().len()));
    g.bench_function("read_qrels", |b| b.iter(|| read_qrels(&qrels).unwrap()));
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("eval run against qrels (NDCG@10+MAP, TREC)", |b| {
        b.iter(|| evaluate_run_against_qrels(&run, &qrels, &metrics, &Convention::TREC).unwrap())
    });
    g.finish();
}

criterion_group!(benches, parse, eval, trec_eval);
criterion_main!(benches);
