//! Every learner's hot path: pairwise loss, RankSVM, perceptron epochs (pair checks per second), MHR, sigmoid,
//! RankBoost, ListNet and the online SLAM perceptron; data-parallel Newton on thread ranks and its exact sums.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ltr_benches::{generated, ohsumed_like};
use ltr_core::{Fit, ParamGuard};
use ltr_pairs::{count_pairs_per_query, PairLoss, PairwiseObjective};
use ltr_perceptron::{LoopSettings, Observer, PerceptronLoop};

struct Nop;
impl Observer for Nop {
    fn retire(&mut self, _: usize, _: &[f64], _: u64) {}
}

fn pairwise(c: &mut Criterion) {
    let mut g = c.benchmark_group("pairwise squared-hinge gradient");
    for docs in [100, 1_000, 10_000] {
        let ds = generated(20, docs, 50);
        let obj = PairwiseObjective::new(&ds, PairLoss::SquaredHinge);
        let s: Vec<f64> = (0..ds.n_docs())
            .map(|i| ((i * 31) % 97) as f64 / 50.0)
            .collect();
        g.throughput(Throughput::Elements(ds.n_docs() as u64));
        g.bench_with_input(BenchmarkId::new("docs per query", docs), &docs, |b, _| {
            b.iter(|| obj.gradient(&s))
        });
    }
    g.finish();
}

fn svm(c: &mut Criterion) {
    let ds = ohsumed_like();
    let mut g = c.benchmark_group("ranksvm");
    g.sample_size(10);
    g.bench_function("newton C=1 (OHSUMED Fold1)", |b| {
        b.iter(|| ltr_svm::RankSvmParams::default().solve(&ds).unwrap())
    });
    g.bench_function("dual CD hinge C=0.01 (OHSUMED Fold1)", |b| {
        b.iter(|| {
            ltr_svm::RankSvmParams::default()
                .c(ltr_svm::CSetting::Value(0.01))
                .loss(PairLoss::Hinge)
                .solver(ltr_svm::Solver::DualCd)
                .tolerance(0.1)
                .solve(&ds)
                .unwrap()
        })
    });
    for (solver, c_value) in [
        (ltr_svm::Solver::CuttingPlane, 0.01),
        (ltr_svm::Solver::CuttingPlane, 1.0),
        (ltr_svm::Solver::Ocas, 0.01),
        (ltr_svm::Solver::Ocas, 1.0),
        (ltr_svm::Solver::Ocas, 100.0),
    ] {
        g.bench_function(
            format!("{solver:?} hinge, RSVM-IR-QP weights, C={c_value} (OHSUMED Fold1)"),
            |b| {
                b.iter(|| {
                    ltr_svm::RankSvmParams::default()
                        .c(ltr_svm::CSetting::Value(c_value))
                        .loss(PairLoss::Hinge)
                        .solver(solver)
                        .weighting(ltr_svm::Weighting {
                            tau: Some(ltr_svm::TauSource::ClosedForm),
                            mu: true,
                            ..Default::default()
                        })
                        .solve(&ds)
                        .unwrap()
                })
            },
        );
    }
    g.finish();
}

fn perceptron(c: &mut Criterion) {
    let ds = ohsumed_like();
    let pairs: u64 = count_pairs_per_query(&ds).iter().sum();
    let mut g = c.benchmark_group("perceptron");
    g.throughput(Throughput::Elements(pairs));
    // Stored shuffled records against the streamed order (a permutation and an index lookup per pair, no
    // records): the price of 2 bytes a pair instead of 28.
    for (name, order) in [
        ("records", ltr_perceptron::PairOrder::Shuffled(1)),
        ("streamed", ltr_perceptron::PairOrder::Streamed(1)),
    ] {
        g.bench_function(
            format!("one epoch, pair checks, {name} (OHSUMED Fold1)"),
            |b| {
                let mut lp = PerceptronLoop::new(
                    &ds,
                    LoopSettings {
                        // Off: every epoch visits every pair, so the iterations are alike.
                        alpha_bound: ltr_perceptron::AlphaBound::Off,
                        order,
                        ..Default::default()
                    },
                    1000,
                );
                b.iter(|| lp.epoch(&mut Nop))
            },
        );
    }
    g.finish();
}

fn others(c: &mut Criterion) {
    let ds = ohsumed_like();
    let mut g = c.benchmark_group("learners");
    g.sample_size(10);
    g.bench_function("mhr BordaCount (OHSUMED Fold1)", |b| {
        b.iter(|| {
            ltr_ensemble::MhrParams::default()
                .diagnostics(false)
                .check()
                .unwrap()
                .fit(&ds, &ltr_core::FitContext::new(1))
                .unwrap()
        })
    });
    let seed = vec![0.01; ds.n_features()];
    g.bench_function("sigmoid 10 iterations (OHSUMED Fold1)", |b| {
        b.iter(|| {
            ltr_ensemble::SigmoidParams::default()
                .max_iter(10)
                .refine(&ds, &seed)
                .unwrap()
        })
    });
    g.bench_function("rankboost 50 rounds (OHSUMED Fold1)", |b| {
        b.iter(|| {
            ltr_ensemble::RankBoostParams::default()
                .rounds(50)
                .check()
                .unwrap()
                .fit(&ds, &ltr_core::FitContext::new(1))
                .unwrap()
        })
    });
    g.bench_function("listnet 20 epochs (OHSUMED Fold1)", |b| {
        b.iter(|| {
            ltr_online::ListNetParams::default()
                .epochs(20)
                .select_epochs(false)
                .check()
                .unwrap()
                .fit(&ds, &ltr_core::FitContext::new(1))
                .unwrap()
        })
    });
    // One restart, so the figure is one sequential run of sweeps (the default five run in parallel).
    for metric in ["MAP", "NDCG@10"] {
        let m = ltr_listwise::ListMeasure::new(
            metric.parse().unwrap(),
            ltr_metrics::Convention::LETOR3,
        )
        .unwrap();
        g.bench_function(
            format!("coordinate ascent {metric}, 1 restart (OHSUMED Fold1)"),
            |b| {
                b.iter(|| {
                    ltr_listwise::CoordinateAscentParams::default()
                        .restarts(1)
                        .measure(Some(m))
                        .check()
                        .unwrap()
                        .fit(&ds, &ltr_core::FitContext::new(1))
                        .unwrap()
                })
            },
        );
    }
    g.bench_function("adarank (OHSUMED Fold1)", |b| {
        b.iter(|| {
            ltr_listwise::AdaRankParams::default()
                .check()
                .unwrap()
                .fit(&ds, &ltr_core::FitContext::new(1))
                .unwrap()
        })
    });
    g.bench_function("lambdarank 20 epochs (OHSUMED Fold1)", |b| {
        b.iter(|| {
            ltr_listwise::LambdaRankParams::default()
                .epochs(20)
                .select_epochs(false)
                .check()
                .unwrap()
                .fit(&ds, &ltr_core::FitContext::new(1))
                .unwrap()
        })
    });
    let stream = ltr_data::generate_slam_stream(1000, 1).unwrap();
    g.throughput(Throughput::Elements(1000));
    g.bench_function("slam perceptron, 1000 simulated rounds", |b| {
        b.iter(|| {
            let mut l = ltr_online::SlamPerceptron::ndcg(10);
            ltr_online::replay(&mut l, &[&stream], &ltr_online::StreamConfig::default())
        })
    });
    g.finish();
}

/// Learning from clicks: simulating sessions, building the click training set, Propensity SVM-Rank and the
/// neural ranker (IPS, DLA) on it, the EM propensity estimate (OHSUMED Fold1, the whole list displayed, η = 1), and
/// the doubly robust set of a top-10 log with `lambdarank`, `listnet`, `neural` and `lambdamart` `debias=dr` on it.
fn clicks(c: &mut Criterion) {
    use ltr_core::Scorer;
    let ds = ohsumed_like();
    let prod_set = ds.select_queries(&[0, 1, 2]);
    let prod = ltr_svm::RankSvmParams::default()
        .c(ltr_svm::CSetting::Value(0.1))
        .solve(&prod_set)
        .unwrap()
        .model;
    let scores = prod.score_dataset(&ds);
    let sim = ltr_clicks::ClickSimulation {
        top: usize::MAX,
        sessions: 10_000,
        ..Default::default()
    };
    let mut g = c.benchmark_group("clicks");
    g.sample_size(10);
    g.throughput(Throughput::Elements(10_000));
    g.bench_function("simulate 10k sessions, whole lists (OHSUMED Fold1)", |b| {
        b.iter(|| sim.simulate(&ds, &scores).unwrap())
    });
    let log = sim.simulate(&ds, &scores).unwrap();
    let logged = ltr_clicks::PropensitySource::Logged;
    g.bench_function("click training set of 10k sessions", |b| {
        b.iter(|| ltr_clicks::click_training_set(&log, &ds, &logged).unwrap())
    });
    let (clicks, _) = ltr_clicks::click_training_set(&log, &ds, &logged).unwrap();
    let params = ltr_svm::RankSvmParams::default()
        .c(ltr_svm::CSetting::Value(100.0))
        .weighting(ltr_svm::Weighting {
            clicks: Some(ltr_data::ClickWeighting::Ips { clip: 0.0 }),
            ..Default::default()
        });
    g.bench_function("propensity-ranksvm newton C=100, 10k sessions", |b| {
        b.iter(|| params.solve(&clicks).unwrap())
    });
    let swaps = ltr_clicks::ClickSimulation {
        top: 10,
        intervention: ltr_clicks::Intervention::SwapWithTop,
        ..sim.clone()
    }
    .simulate(&ds, &scores)
    .unwrap();
    let em = ltr_clicks::EmSettings {
        relevance: ltr_clicks::RelevanceModel::PerDocument,
        bootstrap: 0,
        ..Default::default()
    };
    g.bench_function("propensities by EM, 10k swap sessions of 10", |b| {
        b.iter(|| ltr_clicks::estimate_propensities_em(&swaps, None, &em).unwrap())
    });
    // The neural ranker on clicks (64 wide, 5 epochs, 1 thread): inverse-propensity weighted click queries of the
    // whole-list log, and DLA on the sessions of a top-10 log.
    let network = || {
        ltr_neural::NeuralParams::default()
            .sizes(vec![64])
            .epochs(5)
    };
    let ips = network()
        .loss(ltr_neural::Loss::ListNet)
        .clicks(Some(ltr_data::ClickWeighting::Ips { clip: 0.0 }))
        .check()
        .unwrap();
    g.bench_function("neural listnet IPS, 64 wide, 5 epochs, 10k sessions", |b| {
        b.iter(|| ips.fit(&clicks, &ltr_core::FitContext::new(1)).unwrap())
    });
    let top10 = ltr_clicks::ClickSimulation {
        top: 10,
        ..sim.clone()
    }
    .simulate(&ds, &scores)
    .unwrap();
    let (sessions, _) = ltr_clicks::click_session_set(&top10, &ds).unwrap();
    let dla = network()
        .loss(ltr_neural::Loss::ListNetBinary)
        .dla(Some(ltr_neural::NeuralDla {
            max_weight: 0.0,
            propensity_steps: 10,
        }))
        .check()
        .unwrap();
    g.bench_function("neural DLA, 64 wide, 5 epochs, 10k sessions of 10", |b| {
        b.iter(|| dla.fit(&sessions, &ltr_core::FitContext::new(1)).unwrap())
    });
    // The doubly robust set of the top-10 log (the unshown documents left out, or labelled by the direct model)
    // and `lambdarank debias=dr` on it, as the registry sets it up.
    let direct = ltr_clicks::DoublyRobustSettings {
        unshown: ltr_clicks::UnshownDocuments::Direct,
        ..Default::default()
    };
    for (name, settings) in [
        ("leave-out", ltr_clicks::DoublyRobustSettings::default()),
        ("direct", direct),
    ] {
        g.bench_function(
            format!("doubly robust set ({name}) of 10k sessions of 10"),
            |b| b.iter(|| ltr_clicks::doubly_robust_set(&top10, &ds, &logged, &settings).unwrap()),
        );
    }
    let (dr_set, _) = ltr_clicks::doubly_robust_set(
        &top10,
        &ds,
        &logged,
        &ltr_clicks::DoublyRobustSettings::default(),
    )
    .unwrap();
    for (algo, settings, label) in [
        (
            "lambdarank",
            &[("debias", "dr")][..],
            "lambdarank debias=dr",
        ),
        ("listnet", &[("debias", "dr")], "listnet debias=dr"),
        (
            "neural",
            &[("debias", "dr"), ("sizes", "64"), ("epochs", "5")],
            "neural debias=dr, 64 wide, 5 epochs",
        ),
    ] {
        let learner = ltr_learn::find(algo).unwrap();
        let params = ltr_core::Params::new(settings.to_vec());
        g.bench_function(format!("{label}, 10k sessions of 10"), |b| {
            b.iter(|| {
                learner
                    .fit(&params, &dr_set, &ltr_core::FitContext::new(1))
                    .unwrap()
            })
        });
    }
    let trees = ltr_learn::find("lambdamart").unwrap();
    let tree_params = ltr_core::Params::new(vec![("debias", "dr"), ("trees", "50")]);
    g.bench_function("lambdamart debias=dr, 50 trees, 10k sessions of 10", |b| {
        b.iter(|| {
            trees
                .fit(&tree_params, &dr_set, &ltr_core::FitContext::new(1))
                .unwrap()
        })
    });
    g.finish();
}

/// Data-parallel Newton RankSVM on the thread backend (the queries split over ranks, exact sums across them), and
/// the exact accumulation it rests on.
fn distributed(c: &mut Criterion) {
    let ds = generated(400, 120, 136);
    let mut g = c.benchmark_group("distributed");
    g.sample_size(10);
    let params = ltr_svm::RankSvmParams::default();
    g.bench_function(
        "ranksvm newton C=1, single process (400 queries x 120 docs x 136)",
        |b| b.iter(|| params.solve(&ds).unwrap()),
    );
    for ranks in [1, 2] {
        let parts: Vec<ltr_data::Dataset> = ltr_pairs::balanced_query_ranges(&ds, ranks)
            .unwrap()
            .into_iter()
            .map(|r| ds.select_queries(&r.collect::<Vec<_>>()))
            .collect();
        g.bench_function(
            format!("ranksvm newton C=1, {ranks} thread ranks (same data)"),
            |b| {
                b.iter(|| {
                    ltr_core::ThreadGroup::run(ranks, |comm| {
                        params.solve_distributed(&parts[ltr_core::Allreduce::rank(comm)], comm)
                    })
                })
            },
        );
    }
    // Few wide sparse queries: here the exact sums, not the data, are most of a Hessian product.
    let sparse = ltr_benches::sparse_yahoo_like();
    assert!(!sparse.is_dense(), "the Yahoo-style set is stored sparse");
    g.bench_function(
        "ranksvm newton C=1, sparse Yahoo-style (100 queries x 30 docs, 700 features, 60 stored)",
        |b| b.iter(|| params.solve(&sparse).unwrap()),
    );
    // One Hessian product's three parts on the sparse set: Xp, the pairwise sweep, Xᵀ(·) summed exactly.
    let objective = ltr_pairs::PairwiseObjective::new(&sparse, ltr_pairs::PairLoss::SquaredHinge);
    let direction: Vec<f64> = (0..sparse.n_features())
        .map(|j| ((j * 37) % 11) as f64 * 0.01 - 0.05)
        .collect();
    let scores = sparse.scores(&direction);
    let state = objective.gradient(&scores);
    let hs = objective.hessian_times(&state, &scores);
    g.bench_function("sparse Yahoo-style: scores Xp", |b| {
        b.iter(|| sparse.scores(&direction))
    });
    g.bench_function("sparse Yahoo-style: pairwise Hessian sweep", |b| {
        b.iter(|| objective.hessian_times(&state, &scores))
    });
    g.bench_function("sparse Yahoo-style: exact Xᵀ(Hs)", |b| {
        b.iter(|| ltr_data::exact_transpose_times(&sparse, &hs, &[]))
    });
    g.bench_function("sparse Yahoo-style: plain f64 Xᵀ(Hs) (for scale)", |b| {
        b.iter(|| sparse.transpose_times(&hs))
    });
    let values: Vec<f64> = (0..1_000_000)
        .map(|i| ((i * 7919) % 10007) as f64 * 1e-3 - 5.0)
        .collect();
    g.throughput(Throughput::Elements(values.len() as u64));
    g.bench_function("exact sum of 1M f64 (ExactVec::add)", |b| {
        b.iter(|| {
            let mut acc = ltr_data::ExactVec::new(1);
            for &v in &values {
                acc.add(0, v);
            }
            acc.value(0)
        })
    });
    // A query's partial sums added into d sums at a time, as a Hessian product on sparse data does (7% zeros).
    let partials: Vec<f64> = (0..70_000u64)
        .map(|i| {
            let h = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            if h % 100 < 7 {
                0.0
            } else {
                (h % 20_011) as f64 * 1e-4 - 1.0
            }
        })
        .collect();
    g.bench_function(
        "exact sums of 100 partial vectors of 700 (ExactVec::add_and_clear)",
        |b| {
            let mut scratch = partials.clone();
            b.iter(|| {
                scratch.copy_from_slice(&partials);
                let mut acc = ltr_data::ExactVec::new(700);
                for part in scratch.chunks_mut(700) {
                    acc.add_and_clear(0, part);
                }
                acc.value(0)
            })
        },
    );
    g.bench_function("plain f64 sum of 1M (for scale)", |b| {
        b.iter(|| values.iter().sum::<f64>())
    });
    // Coordinate Ascent over 2 thread ranks, one MAP sweep: every crossing point gathered against bucket
    // statistics and the candidate buckets' points (about 50 k points a line here).
    let web = ltr_data::generate_web(&ltr_data::WebConfig {
        queries: 40,
        min_docs: 50,
        max_docs: 100,
        seed: 6,
        ..Default::default()
    })
    .unwrap();
    let halves: Vec<ltr_data::Dataset> = ltr_pairs::balanced_query_ranges(&web, 2)
        .unwrap()
        .into_iter()
        .map(|r| web.select_queries(&r.collect::<Vec<_>>()))
        .collect();
    for exchange in ["points", "buckets"] {
        let grid = ltr_learn::Grid::parse(&[
            "restarts=1",
            "max-sweeps=1",
            "metric=MAP",
            &format!("exchange={exchange}"),
        ])
        .unwrap();
        g.bench_function(
            format!("coordinate ascent, MAP, one sweep, 2 thread ranks, exchange={exchange}"),
            |b| {
                b.iter(|| {
                    ltr_core::ThreadGroup::run(2, |comm| {
                        let req =
                            ltr_learn::TrainRequest::new(&halves[ltr_core::Allreduce::rank(comm)]);
                        ltr_learn::train_distributed("coordinate-ascent", &grid, &req, comm)
                    })
                })
            },
        );
    }
    g.finish();
}

/// The tree ensembles of `ltr-trees`: 20 rounds of LambdaMART and MART, 100 rounds of LambdaMART with leaves
/// counted by hessian as `ltr train` counts them (issue 51's small-data case, against RankLib), a 20-tree forest
/// (OHSUMED Fold1), and scoring with a 100-tree model (documents per second through the flat trees).
fn trees(c: &mut Criterion) {
    use ltr_core::{Fit, ParamGuard, Scorer};
    let ds = ohsumed_like();
    let mut g = c.benchmark_group("trees");
    g.sample_size(10);
    for (name, mut p) in [
        ("lambdamart", ltr_trees::GbdtParams::lambdamart()),
        ("mart", ltr_trees::GbdtParams::mart()),
    ] {
        p.trees = 20;
        let p = p.check().unwrap();
        g.bench_function(format!("{name} 20 trees, 31 leaves (OHSUMED Fold1)"), |b| {
            b.iter(|| p.fit(&ds, &ltr_core::FitContext::new(1)).unwrap())
        });
    }
    let mut p = ltr_trees::GbdtParams::lambdamart();
    p.trees = 100;
    p.stop_after = 0;
    p.tree.leaf_count = ltr_trees::LeafCount::Hessian;
    let p = p.check().unwrap();
    g.bench_function(
        "lambdamart 100 trees, 31 leaves, hessian counts (OHSUMED Fold1)",
        |b| b.iter(|| p.fit(&ds, &ltr_core::FitContext::new(1)).unwrap()),
    );
    let forest = ltr_trees::RandomForestParams {
        trees: 20,
        ..Default::default()
    }
    .check()
    .unwrap();
    g.bench_function("random forest 20 trees (OHSUMED Fold1)", |b| {
        b.iter(|| forest.fit(&ds, &ltr_core::FitContext::new(1)).unwrap())
    });
    let mut p = ltr_trees::GbdtParams::lambdamart();
    p.trees = 100;
    p.stop_after = 0;
    let model = p
        .check()
        .unwrap()
        .check()
        .unwrap()
        .fit(&ds, &ltr_core::FitContext::new(1))
        .unwrap()
        .model;
    g.throughput(Throughput::Elements(ds.n_docs() as u64));
    g.bench_function("score with 100 trees x 31 leaves (OHSUMED Fold1)", |b| {
        b.iter(|| model.score_dataset(&ds))
    });
    g.finish();
}

criterion_group!(
    benches,
    pairwise,
    svm,
    perceptron,
    others,
    trees,
    clicks,
    distributed
);
criterion_main!(benches);
