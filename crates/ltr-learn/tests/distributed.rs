//! Data-parallel training through the registry: the queries split over ranks of the thread backend give the
//! single-process model bit for bit (Newton RankSVM and LambdaRank sum over queries exactly), on generated raw web
//! data and on real LETOR folds; what distributed training cannot do is refused with a reason, and a failing rank stops the
//! others.

use ltr_core::{Model, ThreadGroup};
use ltr_data::{
    generate_web, read_letor, Dataset, FeatureMatrix, NormalizeKind, PreprocessSpec, WebConfig,
};
use ltr_learn::{train, train_distributed, Grid, Handover, TrainRequest, Trained};
use ltr_pairs::balanced_query_ranges;

/// The model's text: its numbers printed shortest-round-trip, so equal text is equal bits.
fn model_text(t: &Trained) -> String {
    serde_json::to_string(&t.fitted.model).unwrap()
}

fn weights(t: &Trained) -> Vec<u64> {
    match &t.fitted.model {
        Model::Linear(m) => m.weights.iter().map(|w| w.to_bits()).collect(),
        other => panic!("expected a linear model, got {other:?}"),
    }
}

fn shards(ds: &Dataset, ranks: usize) -> Vec<Dataset> {
    balanced_query_ranges(ds, ranks)
        .unwrap()
        .into_iter()
        .map(|r| ds.select_queries(&r.collect::<Vec<_>>()))
        .collect()
}

/// Train `algo` on `ranks` thread ranks; every rank must return the same model, which is returned.
fn distributed_algo(
    algo: &str,
    ds: &Dataset,
    ranks: usize,
    params: &[&str],
    spec: &PreprocessSpec,
) -> Trained {
    let parts = shards(ds, ranks);
    let grid = Grid::parse(params).unwrap();
    let results = ThreadGroup::run(ranks, |comm| {
        let req = TrainRequest::new(&parts[ltr_core::Allreduce::rank(comm)]).preprocess(spec);
        train_distributed(algo, &grid, &req, comm)
    });
    let trained: Vec<Trained> = results.into_iter().map(|r| r.unwrap()).collect();
    for t in &trained[1..] {
        assert_eq!(model_text(t), model_text(&trained[0]), "ranks disagree");
    }
    trained.into_iter().next().unwrap()
}

fn distributed(ds: &Dataset, ranks: usize, params: &[&str], spec: &PreprocessSpec) -> Trained {
    distributed_algo("ranksvm", ds, ranks, params, spec)
}

fn check_same_model(ds: &Dataset, params: &[&str], spec: &PreprocessSpec) {
    check_same_model_of("ranksvm", ds, params, spec)
}

fn check_same_model_of(algo: &str, ds: &Dataset, params: &[&str], spec: &PreprocessSpec) {
    check_same_model_at(algo, ds, params, spec, &[1, 2, 3]);
}

/// [`check_same_model_of`] at the given rank counts only.
fn check_same_model_at(
    algo: &str,
    ds: &Dataset,
    params: &[&str],
    spec: &PreprocessSpec,
    rank_counts: &[usize],
) {
    let single = train(
        algo,
        &Grid::parse(params).unwrap(),
        &TrainRequest::new(ds).preprocess(spec),
    )
    .unwrap();
    for &ranks in rank_counts {
        let d = distributed_algo(algo, ds, ranks, params, spec);
        assert_eq!(weights(&d), weights(&single), "{ranks} ranks, {params:?}");
        assert_eq!(
            d.fitted.report.objective.unwrap().to_bits(),
            single.fitted.report.objective.unwrap().to_bits()
        );
        assert_eq!(d.fitted.report.iterations, single.fitted.report.iterations);
        assert_eq!(d.preprocess, single.preprocess);
        assert_eq!(d.params, single.params);
    }
}

fn web() -> Dataset {
    generate_web(&WebConfig {
        queries: 40,
        min_docs: 10,
        max_docs: 60,
        seed: 5,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn raw_web_data_gives_the_single_process_model_at_one_two_and_three_ranks() {
    let none = no_normalisation();
    // Raw features: the preconditioned path; C from SVMlight's rule is summed over ranks too.
    check_same_model(&web(), &["c=0.1"], &none);
    check_same_model(&web(), &["c=default"], &none);
    // Every normalisation: per query, and fitted on all the ranks' documents (`auto` is a z-score on raw data).
    for kind in [
        NormalizeKind::QueryMinMax,
        NormalizeKind::Auto,
        NormalizeKind::MinMax,
    ] {
        let spec = PreprocessSpec {
            normalize: Some(kind),
            ..Default::default()
        };
        check_same_model(&web(), &["c=1"], &spec);
    }
    let selected = PreprocessSpec {
        features: Some(vec![3, 1, 40, 136]),
        log1p: vec![40],
        normalize: Some(NormalizeKind::ZScore),
    };
    check_same_model(&web(), &["c=1"], &selected);
}

#[test]
fn lambdarank_gives_the_single_process_model_too() {
    let per_query = PreprocessSpec {
        normalize: Some(NormalizeKind::QueryMinMax),
        ..Default::default()
    };
    check_same_model_of("lambdarank", &web(), &["epochs=15"], &per_query);
    check_same_model_of(
        "lambdarank",
        &web(),
        &["epochs=10", "k=0", "l2=0.01"],
        &per_query,
    );
    // Fine-tuning a RankSVM trained first: the start is trained distributed too, and the result is the same.
    check_same_model_of(
        "lambdarank",
        &web(),
        &["epochs=5", "init-algo=ranksvm", "init-c=0.1"],
        &per_query,
    );
    let data = web();
    let single = |params: &[&str]| {
        let req = TrainRequest::new(&data).preprocess(&per_query);
        train("lambdarank", &Grid::parse(params).unwrap(), &req).unwrap()
    };
    let tuned = single(&["epochs=5", "init-algo=ranksvm", "init-c=0.1"]);
    assert_ne!(weights(&tuned), weights(&single(&["epochs=5"])));
    assert_eq!(
        tuned
            .fitted
            .report
            .selected
            .get("init-algo")
            .map(String::as_str),
        Some("ranksvm")
    );
}

#[test]
fn coordinate_ascent_gives_the_single_process_model() {
    let per_query = PreprocessSpec {
        normalize: Some(NormalizeKind::QueryMinMax),
        ..Default::default()
    };
    // Shards are consecutive runs of queries in rank order, so every gathered sum is taken in the single-process
    // order: the same steps, the same model. The first 20 of `web()`'s 40 queries (7 or more a rank at 3 ranks).
    let data = web().select_queries(&(0..20).collect::<Vec<_>>());
    check_same_model_of("coordinate-ascent", &data, &["restarts=2"], &per_query);
    // The other settings at 3 ranks only, the uneven split (the first setting covers 1 and 2 ranks): 8 trainings
    // instead of 12.
    check_same_model_at(
        "coordinate-ascent",
        &data,
        &["restarts=1", "metric=MAP", "l2=0.001", "non-negative=true"],
        &per_query,
        &[3],
    );
    check_same_model_at(
        "coordinate-ascent",
        &data,
        &["restarts=1", "line-search=ranklib", "iterations=5"],
        &per_query,
        &[3],
    );
}

#[test]
fn coordinate_ascent_over_shards_out_of_query_order_keeps_its_quality() {
    // Rank 0 holds the last queries: sums are taken in another order, so rounding may differ, but the method
    // and its training measure must not (stated tolerance: 0.005 NDCG@10).
    let data = web();
    let per_query = PreprocessSpec {
        normalize: Some(NormalizeKind::QueryMinMax),
        ..Default::default()
    };
    let grid = Grid::parse(&["restarts=2"]).unwrap();
    let single = train(
        "coordinate-ascent",
        &grid,
        &TrainRequest::new(&data).preprocess(&per_query),
    )
    .unwrap();
    let mut parts = shards(&data, 2);
    parts.reverse();
    let results = ThreadGroup::run(2, |comm| {
        let req = TrainRequest::new(&parts[ltr_core::Allreduce::rank(comm)]).preprocess(&per_query);
        train_distributed("coordinate-ascent", &grid, &req, comm)
    });
    let trained: Vec<Trained> = results.into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(
        model_text(&trained[0]),
        model_text(&trained[1]),
        "ranks disagree"
    );
    let (a, b) = (
        single.fitted.report.objective.unwrap(),
        trained[0].fitted.report.objective.unwrap(),
    );
    assert!(a > 0.5, "single-process training NDCG@10 {a}");
    assert!((a - b).abs() <= 0.005, "single {a}, reversed shards {b}");
}

/// Totals over the restarts of what the line searches exchanged: (lines, lines by buckets, points gathered).
fn exchanged(t: &Trained) -> (u64, u64, u64) {
    let d = t.fitted.diagnostics.as_ref().unwrap();
    let mut sums = (0, 0, 0);
    for r in d["restarts"].as_array().unwrap() {
        sums.0 += r["lines_exchanged"].as_u64().unwrap();
        sums.1 += r["lines_by_buckets"].as_u64().unwrap();
        sums.2 += r["points_gathered"].as_u64().unwrap();
    }
    sums
}

#[test]
fn coordinate_ascent_by_bucket_statistics_keeps_the_single_process_quality() {
    // Large enough that every MAP line has over 8,192 crossing points, the smallest line the buckets take.
    let data = generate_web(&WebConfig {
        queries: 40,
        min_docs: 50,
        max_docs: 100,
        seed: 6,
        ..Default::default()
    })
    .unwrap();
    let per_query = PreprocessSpec {
        normalize: Some(NormalizeKind::QueryMinMax),
        ..Default::default()
    };
    let base = ["restarts=1", "metric=MAP", "max-sweeps=1"];
    let single = train(
        "coordinate-ascent",
        &Grid::parse(&base).unwrap(),
        &TrainRequest::new(&data).preprocess(&per_query),
    )
    .unwrap();
    let measure = single.fitted.report.objective.unwrap();
    assert_eq!(
        exchanged(&single),
        (0, 0, 0),
        "one process exchanges nothing"
    );
    let with = |exchange: &'static str| [base.as_slice(), &[exchange]].concat();
    let points = distributed_algo(
        "coordinate-ascent",
        &data,
        2,
        &with("exchange=points"),
        &per_query,
    );
    assert_eq!(weights(&points), weights(&single));
    let (lines, by_buckets, all_points) = exchanged(&points);
    assert!(
        lines > 100 && by_buckets == 0,
        "{lines} lines, {by_buckets} by buckets"
    );
    for ranks in [2, 3] {
        let t = distributed_algo(
            "coordinate-ascent",
            &data,
            ranks,
            &with("exchange=buckets"),
            &per_query,
        );
        let (lines, by_buckets, gathered) = exchanged(&t);
        assert_eq!(by_buckets, lines, "{ranks} ranks: every line by buckets");
        // The sample and the candidate buckets' points: a small part of every crossing point.
        assert!(
            (gathered as f64) < 0.25 * all_points as f64,
            "{ranks} ranks: {gathered} points gathered against {all_points}"
        );
        let m = t.fitted.report.objective.unwrap();
        eprintln!(
            "{ranks} ranks: {lines} lines by buckets, {gathered} points gathered (points: {all_points}); \
             training MAP {m} against {measure}, same weights: {}",
            weights(&t) == weights(&single)
        );
        assert!(measure > 0.5, "single-process training MAP {measure}");
        assert!(
            (m - measure).abs() <= 0.005,
            "{ranks} ranks: {m} against {measure}"
        );
    }
}

#[test]
fn letor_folds_give_the_single_process_model() {
    let Some(dir) = ltr_testdata::shared_datasets_dir() else {
        eprintln!(
            "skipped: ../shared/datasets is absent (set LTR_DATASETS to run on the LETOR folds)"
        );
        return;
    };
    for file in [
        "MQ2008/Fold1/train.txt",
        "OHSUMED/QueryLevelNorm/Fold1/train.txt",
    ] {
        let ds = read_letor(dir.join(file)).unwrap();
        check_same_model(&ds, &["c=1"], &PreprocessSpec::default());
        check_same_model_of(
            "lambdarank",
            &ds,
            &["epochs=10"],
            &PreprocessSpec::default(),
        );
        // Coordinate ascent's exact MAP line searches gather every crossing point of the line: on a third of the
        // fold's queries (21 of OHSUMED's 63, 157 of MQ2008's 471) they are as real and a third of the work.
        let third = ds.select_queries(&(0..ds.n_queries() / 3).collect::<Vec<_>>());
        check_same_model_of(
            "coordinate-ascent",
            &third,
            &["restarts=1", "metric=MAP"],
            &PreprocessSpec::default(),
        );
    }
}

/// The tree learners through the registry on a real fold: bins, bags and histograms agreed over the ranks give
/// the one-process forest at 1, 2 and 3 thread ranks.
#[test]
fn tree_learners_give_the_single_process_model_on_a_letor_fold() {
    let Some(dir) = ltr_testdata::shared_datasets_dir() else {
        eprintln!(
            "skipped: ../shared/datasets is absent (set LTR_DATASETS to run on the LETOR folds)"
        );
        return;
    };
    let ds = read_letor(dir.join("MQ2008/Fold1/train.txt")).unwrap();
    let spec = PreprocessSpec::default();
    for (algo, params) in [
        ("lambdamart", &["trees=8", "query-fraction=0.7"][..]),
        ("mart", &["trees=4", "feature-fraction=0.5"][..]),
        ("random-forest", &["trees=3"][..]),
    ] {
        let single = train(
            algo,
            &Grid::parse(params).unwrap(),
            &TrainRequest::new(&ds).preprocess(&spec),
        )
        .unwrap();
        assert!(matches!(single.fitted.model, Model::Forest(_)));
        for ranks in [1, 2, 3] {
            let d = distributed_algo(algo, &ds, ranks, params, &spec);
            assert_eq!(
                model_text(&d),
                model_text(&single),
                "{algo} on {ranks} ranks"
            );
            // The forest's out-of-bag estimate (the training metric on queries a tree left out) too.
            let oob = |t: &Trained| {
                t.fitted
                    .diagnostics
                    .as_ref()
                    .map(|d| d["out_of_bag"].clone())
            };
            assert_eq!(oob(&d), oob(&single), "{algo} on {ranks} ranks");
        }
        if algo == "random-forest" {
            let d = single.fitted.diagnostics.as_ref().unwrap();
            assert!(d["out_of_bag"].as_f64().is_some_and(|m| m > 0.2), "{d}");
        }
    }
}

#[test]
fn the_model_is_a_real_ranksvm() {
    // The exact sums must not have changed what Newton converges to: the gradient at the returned weights is
    // small against the first one, and the objective is below the one at w = 0 (½·0 + C·#pairs).
    let ds = web();
    let none = no_normalisation();
    let t = distributed(&ds, 2, &["c=0.1"], &none);
    let pairs: u64 = ltr_pairs::count_pairs_per_query(&ds).iter().sum();
    let objective = t.fitted.report.objective.unwrap();
    assert!(
        objective < 0.1 * pairs as f64 * 0.8,
        "{objective} vs {pairs} pairs"
    );
}

#[test]
fn what_distributed_training_cannot_do_is_refused_with_the_reason() {
    let ds = web();
    let parts = shards(&ds, 2);
    let none = no_normalisation();
    let errors =
        |algo: &str, params: &[&str], spec: &PreprocessSpec, validation: bool| -> Vec<String> {
            let grid = Grid::parse(params).unwrap();
            ThreadGroup::run(2, |comm| {
                let mut req =
                    TrainRequest::new(&parts[ltr_core::Allreduce::rank(comm)]).preprocess(spec);
                if validation {
                    req = req.validation(&parts[0]);
                }
                train_distributed(algo, &grid, &req, comm)
            })
            .into_iter()
            .map(|r| r.unwrap_err().to_string())
            .collect()
        };
    let e = errors("adarank", &[], &none, false);
    assert!(
        e[0].contains("no distributed trainer")
            && e[0].contains(
                "ranksvm, rsvm-ir, perceptron, committee-perceptron, rankboost, listnet, coordinate-ascent, lambdarank"
            ),
        "{}",
        e[0]
    );
    let e = errors("rankboost", &["thresholds=0"], &none, false);
    assert!(e[0].contains("thresholds=10"), "{}", e[0]);
    let e = errors("ranksvm", &["c=0.1,1"], &none, false);
    assert!(e[0].contains("one setting"), "{}", e[0]);
    let e = errors("ranksvm", &[], &none, true);
    assert!(e[0].contains("validation"), "{}", e[0]);
    let e = errors("ranksvm", &["solver=dual"], &none, false);
    assert!(
        e[0].contains("newton, ocas, cutting-plane or gd"),
        "{}",
        e[0]
    );
    let e = errors("rsvm-ir", &["tau=simulated"], &none, false);
    assert!(e[0].contains("tau=closed"), "{}", e[0]);
}

/// `web()` with the grades of its first half of queries capped at 1, so that a shard of the first queries lacks
/// grades the others have: τ, the levels and μ must still be those of all the queries.
fn web_with_uneven_grades() -> Dataset {
    let ds = web();
    let half = ds.query_offsets()[ds.n_queries() / 2];
    let labels: Vec<f32> = ds
        .labels()
        .iter()
        .enumerate()
        .map(|(i, &l)| if i < half { l.min(1.0) } else { l })
        .collect();
    Dataset::new(
        ds.features().clone(),
        labels,
        ds.query_offsets().to_vec(),
        ds.qids().to_vec(),
    )
    .unwrap()
}

#[test]
fn rsvm_ir_and_every_primal_solver_give_the_single_process_model() {
    let per_query = PreprocessSpec {
        normalize: Some(NormalizeKind::QueryMinMax),
        ..Default::default()
    };
    let uneven = web_with_uneven_grades();
    let first = &shards(&uneven, 2)[0];
    assert!(
        first.labels().iter().all(|&l| l <= 1.0),
        "the first shard lacks the high grades"
    );
    // RSVM-IR-QP by OCAS (the default) and by SVMrank's plain cutting plane, RSVM-IR-GD, τ alone and μ alone, the
    // τ/μ objective by Newton; SVMlight's C (the default) is summed over ranks.
    for params in [
        &["max-iter=60"][..],
        &["solver=cutting-plane", "max-iter=40"],
        &["variant=gd", "max-iter=30"],
        &["variant=rank", "c=0.1", "max-iter=60"],
        &["variant=query", "missing-grade=skip", "max-iter=60"],
        &["solver=newton"],
    ] {
        check_same_model_of("rsvm-ir", &uneven, params, &per_query);
    }
    // Plain RankSVM by the hinge solvers, and on adjacent grades only.
    check_same_model_of(
        "ranksvm",
        &uneven,
        &["solver=ocas", "c=0.1", "max-iter=60"],
        &per_query,
    );
    check_same_model_of("ranksvm", &uneven, &["pairs=adjacent"], &per_query);
}

#[test]
fn balanced_shards_hold_whole_queries_and_similar_work() {
    let ds = web();
    for parts in 1..=5 {
        let ranges = balanced_query_ranges(&ds, parts).unwrap();
        assert_eq!(ranges.len(), parts);
        assert_eq!(ranges[0].start, 0);
        assert_eq!(ranges.last().unwrap().end, ds.n_queries());
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        assert!(ranges.iter().all(|r| !r.is_empty()));
        let pairs = ltr_pairs::count_pairs_per_query(&ds);
        let work: Vec<u64> = ranges
            .iter()
            .map(|r| {
                r.clone()
                    .map(|q| pairs[q] + ds.query_range(q).len() as u64)
                    .sum()
            })
            .collect();
        let (lo, hi) = (*work.iter().min().unwrap(), *work.iter().max().unwrap());
        let largest_query = (0..ds.n_queries())
            .map(|q| pairs[q] + ds.query_range(q).len() as u64)
            .max()
            .unwrap();
        assert!(hi - lo <= 2 * largest_query, "{parts} parts: {work:?}");
    }
    assert!(balanced_query_ranges(&ds, ds.n_queries() + 1).is_err());
}

#[test]
fn data_prepared_in_place_trains_the_model_of_the_borrowed_path() {
    let ds = web();
    let (test_part, train_part) = {
        let parts = shards(&ds, 2);
        (parts[0].clone(), parts[1].clone())
    };
    for kind in [
        NormalizeKind::Auto,
        NormalizeKind::MinMax,
        NormalizeKind::None,
    ] {
        let spec = PreprocessSpec {
            normalize: Some(kind),
            features: Some(vec![1, 2, 5, 8, 13, 21, 34, 55, 89]),
            ..Default::default()
        };
        let grid = Grid::parse(&["c=0.1,1"]).unwrap();
        let borrowed = train(
            "ranksvm",
            &grid,
            &TrainRequest::new(&train_part)
                .validation(&test_part)
                .preprocess(&spec),
        )
        .unwrap();
        let prepared =
            ltr_learn::prepare(&spec, train_part.clone(), &ltr_core::SingleProcess).unwrap();
        let owned = train(
            "ranksvm",
            &grid,
            &TrainRequest::new(&prepared.data)
                .validation(&test_part)
                .prepared(&prepared.preprocess),
        )
        .unwrap();
        assert_eq!(weights(&owned), weights(&borrowed), "{kind:?}");
        assert_eq!(owned.preprocess, borrowed.preprocess);
        assert_eq!(owned.grid_scores, borrowed.grid_scores);
    }
}

/// Parameter mixing (perceptron, ListNet): with one rank the single-process model when `one_is_single`, at 2 and 3
/// ranks deterministic and within 0.05 test NDCG@10 of one process.
fn check_mixing(
    algo: &str,
    params: &[&str],
    train_part: &Dataset,
    test_part: &Dataset,
    one_is_single: bool,
) {
    let spec = PreprocessSpec::default();
    let ndcg = |t: &Trained| {
        let test = match &t.preprocess {
            Some(p) => p.apply(test_part).unwrap(),
            None => test_part.clone(),
        };
        let scores = ltr_core::Scorer::score_dataset(&t.fitted.model, &test);
        ltr_metrics::evaluate_mean(
            &test,
            &scores,
            ltr_metrics::Metric::Ndcg(Some(10)),
            &ltr_metrics::Convention::STANDARD,
        )
        .unwrap()
    };
    let single = train(
        algo,
        &Grid::parse(params).unwrap(),
        &TrainRequest::new(train_part).preprocess(&spec),
    )
    .unwrap();
    let one = distributed_algo(algo, train_part, 1, params, &spec);
    if one_is_single {
        assert_eq!(model_text(&one), model_text(&single), "{algo} {params:?}");
    }
    let base = ndcg(&single);
    for ranks in [2, 3] {
        let mixed = distributed_algo(algo, train_part, ranks, params, &spec);
        let again = distributed_algo(algo, train_part, ranks, params, &spec);
        assert_eq!(
            model_text(&mixed),
            model_text(&again),
            "deterministic at {ranks} ranks"
        );
        let q = ndcg(&mixed);
        eprintln!("{algo} {params:?}: single {base:.4}, {ranks} ranks {q:.4}");
        assert!(
            q > base - 0.05 && q > 0.5,
            "{algo} {params:?} at {ranks} ranks: {q} vs {base}"
        );
    }
}

#[test]
fn listnet_mixes_parameters_across_ranks() {
    // LETOR-like features in [0, 1] (fixed rate) and raw web features, z-scored by `auto` (backtracking on the
    // loss of all ranks).
    let letor = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 120,
        seed: 8,
        ..Default::default()
    })
    .unwrap();
    let web = generate_web(&WebConfig {
        queries: 90,
        min_docs: 10,
        max_docs: 60,
        seed: 6,
        ..Default::default()
    })
    .unwrap();
    for all in [letor, web.clone()] {
        let parts = ltr_data::split_by_queries(&all, &[0.7, 0.3], 5).unwrap();
        check_mixing("listnet", &["epochs=15"], &parts[0], &parts[1], true);
    }
    let (train_part, vali) = {
        let parts = ltr_data::split_by_queries(&web, &[0.7, 0.3], 5).unwrap();
        (parts[0].clone(), parts[1].clone())
    };
    let parts2 = shards(&train_part, 2);
    let spec = PreprocessSpec::default();
    let e = ThreadGroup::run(2, |comm| {
        let req = TrainRequest::new(&parts2[ltr_core::Allreduce::rank(comm)])
            .validation(&vali)
            .preprocess(&spec);
        train_distributed("listnet", &Grid::parse::<&str>(&[]).unwrap(), &req, comm)
    });
    let e = e[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("validation"), "{e}");
}

#[test]
fn the_perceptron_mixes_parameters_across_ranks() {
    let all = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 120,
        seed: 3,
        ..Default::default()
    })
    .unwrap();
    let parts = ltr_data::split_by_queries(&all, &[0.7, 0.3], 5).unwrap();
    let (train_part, test_part) = (&parts[0], &parts[1]);
    for (output, stream) in [
        ("output=last", "stream-pairs=auto"),
        ("output=average", "stream-pairs=auto"),
        ("output=last", "stream-pairs=true"),
    ] {
        // One rank mixes nothing: the single-process `last` perceptron, bit for bit.
        let one_is_single = output == "output=last";
        check_mixing(
            "perceptron",
            &[output, "epochs=20", stream],
            train_part,
            test_part,
            one_is_single,
        );
    }
    // The committee perceptron: members are the mixtures with the most correctly ordered pairs of all ranks.
    for combine in ["combine=average", "combine=borda"] {
        check_mixing(
            "committee-perceptron",
            &[combine, "epochs=20", "committee=5"],
            train_part,
            test_part,
            false,
        );
    }
    let spec = PreprocessSpec::default();
    let parts2 = shards(train_part, 2);
    let e = ThreadGroup::run(2, |comm| {
        let req = TrainRequest::new(&parts2[ltr_core::Allreduce::rank(comm)]).preprocess(&spec);
        train_distributed(
            "perceptron",
            &Grid::parse(&["output=pocket"]).unwrap(),
            &req,
            comm,
        )
    });
    assert!(e[0]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("output=last"));
}

#[test]
fn rankboost_gives_the_single_process_ensemble() {
    // Every round's weak ranker is chosen from threshold sums that are exact over queries, so 1–3 ranks (one of
    // them without the high grades) boost the single-process ensemble, stump for stump; one byte a bucket, and two
    // above 255 thresholds.
    // Raw features, so that each shard's feature ranges differ and the thresholds must span every rank's.
    let uneven = web_with_uneven_grades();
    let raw = no_normalisation();
    // Ten rounds are enough above 255 thresholds (two bytes a bucket): the stumps, not their number, are compared.
    // Every round sums a bucket per threshold and feature for every query, so at 300 thresholds the buckets, not the
    // documents, are the work: 22 of the 136 raw features (every seventh, so each family of `generate_web`: counts,
    // BM25-like scores, lengths, link scores, ratios and flags; a duplicate column and both constant ones) keep
    // the ranges differing between the shards at a sixth of the work.
    let wide = PreprocessSpec {
        features: Some((1..=136).step_by(7).chain([135, 136]).collect()),
        ..no_normalisation()
    };
    for (params, min_stumps, spec) in [
        (&["rounds=40"][..], 20, &raw),
        (&["rounds=10", "thresholds=300"], 8, &wide),
    ] {
        let single = train(
            "rankboost",
            &Grid::parse(params).unwrap(),
            &TrainRequest::new(&uneven).preprocess(spec),
        )
        .unwrap();
        let Model::Stumps(ensemble) = &single.fitted.model else {
            panic!("RankBoost trains stumps");
        };
        assert!(ensemble.stumps.len() >= min_stumps, "{params:?}");
        for ranks in [1, 2, 3] {
            let d = distributed_algo("rankboost", &uneven, ranks, params, spec);
            assert_eq!(
                model_text(&d),
                model_text(&single),
                "{ranks} ranks, {params:?}"
            );
        }
        // The same values stored sparse (zeros implicit, as an SVMlight file gives them): the same ensemble.
        if params.len() > 1 {
            continue;
        }
        let mut sparse = uneven.clone();
        sparse.to_sparse();
        assert!(matches!(sparse.features(), FeatureMatrix::Sparse(_)));
        for ranks in [1, 3] {
            let d = distributed_algo("rankboost", &sparse, ranks, params, &raw);
            assert_eq!(
                model_text(&d),
                model_text(&single),
                "sparse, {ranks} ranks, {params:?}"
            );
        }
    }
}

/// The three tree rows, which free data handed over as they bin it, and ranksvm, which borrows it.
const OWNED_AND_BORROWING_ROWS: [(&str, &str); 4] = [
    ("lambdamart", "trees=4"),
    ("mart", "trees=3"),
    ("random-forest", "trees=3"),
    ("ranksvm", "c=0.1"),
];

fn no_normalisation() -> PreprocessSpec {
    PreprocessSpec {
        normalize: Some(NormalizeKind::None),
        ..Default::default()
    }
}

#[test]
fn data_handed_over_trains_the_model_of_the_borrowed_path() {
    // The trees bin data handed over by freeing its features block by block (`ltr train`'s path); ranksvm has no
    // owned form and borrows it. Every model is the borrowed one's, bit for bit.
    let ds = web();
    let (vali, train_part) = {
        let parts = shards(&ds, 2);
        (parts[0].clone(), parts[1].clone())
    };
    let spec = no_normalisation();
    for (algo, params) in OWNED_AND_BORROWING_ROWS {
        let grid = Grid::parse(&[params]).unwrap();
        let borrowed = train(
            algo,
            &grid,
            &TrainRequest::new(&train_part)
                .validation(&vali)
                .preprocess(&spec),
        )
        .unwrap();
        let handover = Handover::new(train_part.clone());
        let req = TrainRequest::handed_over(&handover)
            .validation(&vali)
            .preprocess(&spec);
        let owned = train(algo, &grid, &req).unwrap();
        assert_eq!(model_text(&owned), model_text(&borrowed), "{algo}");
        assert_eq!(owned.fitted.report, borrowed.fitted.report, "{algo}");
        assert_eq!(
            owned.fitted.diagnostics.map(|d| d.to_string()),
            borrowed.fitted.diagnostics.map(|d| d.to_string()),
            "{algo}: the out-of-bag estimate too"
        );
        assert!(train(algo, &grid, &req).is_err(), "{algo}: taken twice");
    }
}

#[test]
fn shards_handed_over_train_the_model_of_borrowed_shards() {
    // `ltr train --distributed` (thread ranks and every `mpirun` process) hands each rank its shard: the trees free
    // its features once binned, every other learner borrows it. Same model, report and out-of-bag estimate as
    // borrowed shards, at 2 and 3 ranks; each handover is taken once.
    let ds = web();
    let spec = no_normalisation();
    for (algo, params) in OWNED_AND_BORROWING_ROWS {
        let grid = Grid::parse(&[params]).unwrap();
        for ranks in [2, 3] {
            let borrowed = distributed_algo(algo, &ds, ranks, &[params], &spec);
            let handovers: Vec<Handover> =
                shards(&ds, ranks).into_iter().map(Handover::new).collect();
            let results = ThreadGroup::run(ranks, |comm| {
                let req = TrainRequest::handed_over(&handovers[ltr_core::Allreduce::rank(comm)])
                    .preprocess(&spec);
                let trained = train_distributed(algo, &grid, &req, comm)?;
                // Taken: the second call fails on every rank before any collective.
                let again = train_distributed(algo, &grid, &req, comm);
                Ok((trained, again.is_err()))
            });
            for r in results {
                let (owned, taken) = r.unwrap();
                assert!(taken, "{algo}: a handover is taken once");
                assert_eq!(
                    model_text(&owned),
                    model_text(&borrowed),
                    "{algo}, {ranks} ranks"
                );
                assert_eq!(owned.fitted.report, borrowed.fitted.report, "{algo}");
                assert_eq!(
                    owned.fitted.diagnostics.map(|d| d.to_string()),
                    borrowed.fitted.diagnostics.as_ref().map(|d| d.to_string()),
                    "{algo}, {ranks} ranks: the out-of-bag estimate too"
                );
            }
        }
    }
}
