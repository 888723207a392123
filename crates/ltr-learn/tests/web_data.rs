//! Every algorithm with default parameters on raw web-style data (`ltr generate --profile web`: counts, BM25-like
//! scores, heavy-tailed link statistics, constant and duplicate columns, five grades): it finishes, never produces
//! a non-finite score, and meets a quality floor against RankSVM on the same data — with the default `auto`
//! normalisation (a z-score here, but for the trees, which take raw features) and with none. The floors sit a little below the values measured when they were
//! set (printed by this test), so a regression in any learner's robustness fails it. Why some methods stay below
//! RankSVM is in ARCHITECTURE.md ("Learners on raw web features").

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use ltr_data::{generate_web, split_by_queries, Dataset, NormalizeKind, PreprocessSpec, WebConfig};
use ltr_learn::{Grid, TrainRequest, ALGORITHMS};
use ltr_metrics::{evaluate_mean, Convention, Metric};

fn web_split() -> (Dataset, Dataset, Dataset) {
    let all = generate_web(&WebConfig {
        queries: 100,
        min_docs: 20,
        max_docs: 80,
        seed: 7,
        ..Default::default()
    })
    .unwrap();
    let mut parts = split_by_queries(&all, &[0.6, 0.2, 0.2], 3).unwrap();
    let test = parts.pop().unwrap();
    let vali = parts.pop().unwrap();
    (parts.pop().unwrap(), vali, test)
}

/// The split and the click training set, made once for both tests.
fn data() -> &'static (Dataset, Dataset, Dataset, Dataset) {
    static DATA: OnceLock<(Dataset, Dataset, Dataset, Dataset)> = OnceLock::new();
    DATA.get_or_init(|| {
        let (train, vali, test) = web_split();
        let clicks = click_set(&train);
        (train, vali, test, clicks)
    })
}

/// Test NDCG@10 (standard convention) of every algorithm, defaults, validation on.
///
/// An algorithm trains once for each normalisation it applies ([`ltr_learn::Algorithm::preprocess_for`]): the
/// trees take raw features under `auto`, so the two tests share their `auto` and `none` runs (that these are one
/// model bit for bit is `tree_invariance::normalize_auto_leaves_the_trees_features_raw`).
fn run(normalize: NormalizeKind) -> Vec<(&'static str, f64)> {
    type Runs = Mutex<BTreeMap<(&'static str, String), Arc<OnceLock<f64>>>>;
    static RUNS: OnceLock<Runs> = OnceLock::new();
    let (train, vali, test, clicks) = data();
    let spec = PreprocessSpec {
        normalize: Some(normalize),
        ..Default::default()
    };
    let ndcg10 = Metric::Ndcg(Some(10));
    ALGORITHMS
        .iter()
        .map(|a| {
            let applied = format!("{:?}", a.preprocess_for(&spec).normalize);
            let cell = RUNS
                .get_or_init(Default::default)
                .lock()
                .unwrap()
                .entry((a.name, applied))
                .or_default()
                .clone();
            let v = *cell.get_or_init(|| {
                // Propensity SVM-Rank learns from clicks on the training queries, not from their labels.
                let data = if a.name == "propensity-ranksvm" {
                    clicks
                } else {
                    train
                };
                let req = TrainRequest::new(data).validation(vali).preprocess(&spec);
                let trained = ltr_learn::train(a.name, &Grid::default(), &req)
                    .unwrap_or_else(|e| panic!("{} ({normalize:?}): {e}", a.name));
                let model = trained.into_model_file(Default::default());
                let scores = model.score_raw(test).unwrap();
                assert!(
                    scores.iter().all(|s| s.is_finite()),
                    "{} ({normalize:?}): a non-finite score",
                    a.name
                );
                evaluate_mean(test, &scores, ndcg10, &Convention::STANDARD).unwrap()
            });
            eprintln!("{normalize:?} {:<22} {v:.4}", a.name);
            (a.name, v)
        })
        .collect()
}

/// 20,000 simulated sessions on the training queries (η = 1, whole lists) ranked by a weak production RankSVM
/// (10 of the 60 queries, the stored z-score), as a click training set.
fn click_set(train: &Dataset) -> Dataset {
    let weak = train.select_queries(&(0..10).collect::<Vec<_>>());
    let prod = ltr_learn::train(
        "ranksvm",
        &Grid::default(),
        &TrainRequest::new(&weak).preprocess(&PreprocessSpec::default()),
    )
    .unwrap()
    .into_model_file(Default::default());
    let scores = prod.score_raw(train).unwrap();
    let log = ltr_clicks::ClickSimulation {
        top: usize::MAX,
        sessions: 20_000,
        ..Default::default()
    }
    .simulate(train, &scores)
    .unwrap();
    ltr_clicks::click_training_set(&log, train, &ltr_clicks::PropensitySource::Logged)
        .unwrap()
        .0
}

fn value(results: &[(&str, f64)], name: &str) -> f64 {
    results.iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn every_learner_is_robust_on_z_scored_web_data() {
    // The default `auto`: a z-score for every learner but the trees, which take the raw features.
    let r = run(NormalizeKind::Auto);
    let svm = value(&r, "ranksvm");
    assert!(svm > FLOOR_RANKSVM, "ranksvm {svm}");
    assert_eq!(
        MAX_GAP_ZSCORE.len() + 1,
        ALGORITHMS.len(),
        "a floor for every algorithm"
    );
    for (name, below) in MAX_GAP_ZSCORE {
        let v = value(&r, name);
        assert!(
            v >= svm - below,
            "{name}: {v:.4} is more than {below} below RankSVM's {svm:.4}"
        );
    }
}

#[test]
fn every_learner_finishes_on_raw_web_data() {
    let r = run(NormalizeKind::None);
    assert_eq!(
        FLOOR_RAW.len(),
        ALGORITHMS.len(),
        "a floor for every algorithm"
    );
    for (name, floor) in FLOOR_RAW {
        let v = value(&r, name);
        assert!(v >= *floor, "{name} on raw features: {v:.4} < {floor}");
    }
}

/// RankSVM's own floor (measured 0.673 z-scored and raw; a random order scores about 0.25 here).
const FLOOR_RANKSVM: f64 = 0.64;
/// How far below RankSVM each method may end on z-scored data (measured gap + 0.02 when set).
const MAX_GAP_ZSCORE: &[(&str, f64)] = &[
    ("sigmoid", 0.02),               // measured 0.014 above RankSVM
    ("rankboost", 0.05),             // 0.029 below: threshold stumps on single features
    ("committee-perceptron", 0.055), // 0.034
    ("listnet", 0.055),              // 0.035 (backtracking step control on z-scored data)
    ("mhr", 0.06),                   // 0.037: each hyperplane sees the pairs of one grade pair only
    ("perceptron", 0.07),            // 0.049: unregularised, stops at the last validation peak
    ("rsvm-ir", 0.13), // 0.112: τ concentrates the loss on pairs with the top grade of five
    ("slam-perceptron", 0.15), // 0.127: one pass over the stream (the online protocol)
    ("pure-online", 0.23), // 0.213: one pass, most-violated pair only
    ("online-listnet", 0.37), // 0.347: one pass, 1/sqrt(t) steps
    ("lambdarank", 0.045), // 0.025: |ΔNDCG@10|-weighted logistic pairs, epoch chosen on validation
    ("coordinate-ascent", 0.115), // 0.093: direct NDCG@10 ascent on 60 training queries overfits them
    ("adarank", 0.065), // 0.042: a weighted sum of single-feature rankers, each chosen for its own ranking
    ("propensity-ranksvm", GAP_CLICKS),
    // 0.029 (0.644; 0.024 when set, before `min-docs-count=hessian`): 100 trees of 31 leaves on 60 training
    // queries, rounds chosen on validation
    ("lambdamart", 0.045),
    // 0.064 (0.609): pointwise squared error on the grades. The trees take raw features under `auto`; while a
    // z-score merged values in f32 here it was 0.093 with LightGBM's bins (issue 51), and 0.055 before them.
    ("mart", 0.085),
    ("random-forest", 0.03), // 0.009
    ("neural", 0.055), // 0.035: the default 256/128 MLP with NDCG-Loss2++ on 60 training queries
];
/// Propensity SVM-Rank learns from 20,000 simulated sessions, not from the labels (measured 0.025 below RankSVM;
/// 0.648 raw and z-scored).
const GAP_CLICKS: f64 = 0.07;
/// Floors on raw (unnormalised) features (measured value − 0.03 to 0.04 when set). Without normalisation a
/// few heavy-tailed columns dominate every inner product; the point here is that nothing diverges or hangs.
const FLOOR_RAW: &[(&str, f64)] = &[
    ("ranksvm", 0.64), // preconditioned Newton: the optimum z-scored data reaches (0.673 both)
    ("rankboost", 0.62), // thresholds do not care about scale
    ("sigmoid", 0.43),
    ("mhr", 0.40),
    ("perceptron", 0.40),
    ("committee-perceptron", 0.40),
    ("listnet", 0.37),
    ("rsvm-ir", 0.35),
    ("online-listnet", 0.25),
    ("slam-perceptron", 0.20),
    ("pure-online", 0.20),
    ("coordinate-ascent", 0.58), // 0.614: each coordinate's line search is scale-free
    ("lambdarank", 0.42),        // 0.452
    ("adarank", 0.60),           // 0.632: single-feature rankers are scale-free
    ("propensity-ranksvm", 0.58),
    // 0.644 with `min-docs-count=hessian` (0.663 before it): splits compare raw values, so scale does not matter
    // (0.634 while ndcg-at defaulted to 10, 0.673 then with score-gap=false; on MQ2008's five folds those two
    // settings were within 0.003 NDCG@10 of each other and of LightGBM)
    ("lambdamart", 0.61),
    ("mart", 0.57),          // 0.604
    ("random-forest", 0.63), // 0.660
    ("neural", 0.41),        // 0.446: Adam on heavy-tailed raw inputs (DASALC's answer is --log1p)
];
