//! `ltr export`: a trained model to each engine's format, and a RankLib model read back. Export is one pass over
//! the weights (linear models) or the stumps (RankBoost, each threshold carried back through the stored
//! preprocessing by bisection over float bit patterns), so these figures are microseconds to milliseconds.

use criterion::{criterion_group, criterion_main, Criterion};
use ltr_core::TrainingSummary;
use ltr_data::{generate_web, WebConfig};
use ltr_export::{export, read_ranklib, ExportOptions, Target};
use ltr_learn::{Grid, TrainRequest};

fn export_models(c: &mut Criterion) {
    // MSLR-shaped: 136 raw features, z-scored by the default `auto` preprocessing.
    let train = generate_web(&WebConfig {
        queries: 60,
        seed: 3,
        ..Default::default()
    })
    .unwrap();
    let req = TrainRequest::new(&train);
    let model = |algo: &str| {
        ltr_learn::train(algo, &Grid::default(), &req)
            .unwrap()
            .into_model_file(TrainingSummary::default())
    };
    let (svm, boost) = (model("ranksvm"), model("rankboost"));
    let opts = ExportOptions::default();
    let mut g = c.benchmark_group("export");
    for (name, target) in Target::ALL {
        g.bench_function(format!("ranksvm (136 features) to {name}"), |b| {
            b.iter(|| export(&svm, target, &opts).unwrap())
        });
        g.bench_function(format!("rankboost (stumps) to {name}"), |b| {
            b.iter(|| export(&boost, target, &opts).unwrap())
        });
    }
    let xml = export(&boost, Target::RankLib, &opts).unwrap().model;
    g.bench_function("read a RankLib MART model back", |b| {
        b.iter(|| read_ranklib(&xml, "bench").unwrap())
    });
    g.finish();
}

criterion_group!(benches, export_models);
criterion_main!(benches);
