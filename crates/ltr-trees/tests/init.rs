//! Boosting from a start model: the saved model is the start model's scores plus the trees, bit for bit, through
//! the start model's own preprocessing, at any thread count; zero rounds are the start model itself.

use ltr_core::{
    Boosted, FitContext, InitModel, LinearModel, Model, ModelFile, Scorer, TrainingSummary,
};
use ltr_data::{generate_letor_like, Dataset, NormalizeKind, PreprocessSpec, SyntheticConfig};
use ltr_trees::{fit_gbdt_from, train_gbdt_from, GbdtParams};

use crate::common::with_threads;

fn synthetic(queries: usize, seed: u64) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries,
        min_docs: 10,
        max_docs: 30,
        features: 6,
        seed,
        ..Default::default()
    })
    .unwrap()
}

/// A linear start reading z-scored features (as a `ranksvm` file trained on raw data stores it).
fn start(train: &Dataset) -> InitModel {
    let spec = PreprocessSpec {
        normalize: Some(NormalizeKind::ZScore),
        ..Default::default()
    };
    InitModel {
        model: Box::new(Model::Linear(LinearModel::new(vec![
            0.7, -0.2, 0.3, 0.0, 1.1, -0.4,
        ]))),
        preprocess: spec.fit(train).unwrap(),
    }
}

fn params(trees: usize, mart: bool) -> GbdtParams {
    let mut p = if mart {
        GbdtParams::mart()
    } else {
        GbdtParams::lambdamart()
    };
    p.trees = trees;
    p.tree.leaves = 6;
    p.tree.min_docs_in_leaf = 5;
    p
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn predictions_are_the_start_scores_plus_the_trees_bit_for_bit() {
    let (train, vali) = (synthetic(24, 1), synthetic(8, 2));
    let init = start(&train);
    assert!(init.preprocess.is_some());
    let init_scores = init.scores(&train).unwrap();
    for mart in [false, true] {
        let p = params(8, mart);
        let run = train_gbdt_from(&p, &train, &FitContext::new(5), Some(&init)).unwrap();
        assert_eq!(run.forest.trees.len(), 8);
        // The start replaces the mean label of `mart`: no base score.
        assert_eq!(run.forest.base_score, 0.0);
        let model = Boosted {
            init: init.clone(),
            forest: run.forest.clone(),
        };
        let predicted = model.score_dataset(&train);
        // Training-time scores (from bins) are the predictions (from raw features and the stored z-score).
        assert_eq!(bits(&predicted), bits(&run.train_scores));
        // By hand: each document's start score, then each tree's output added in order.
        let by_hand: Vec<f64> = (0..train.n_docs())
            .map(|i| {
                let row = train.row(i);
                run.forest
                    .trees
                    .iter()
                    .fold(init_scores[i], |s, t| s + t.weight * t.output(&row))
            })
            .collect();
        assert_eq!(bits(&predicted), bits(&by_hand));
        // One query at a time (its own one-query copy for the preprocessing) scores as the whole set.
        let q = train.query(3);
        let mut one = vec![0.0; q.len()];
        model.score_query(&q, &mut one);
        assert_eq!(bits(&one), bits(&predicted[q.rows()]));
        // Through a model file and back: the same scores.
        let mf = ModelFile::new(
            "lambdamart",
            Default::default(),
            TrainingSummary {
                features: train.n_features(),
                ..Default::default()
            },
            Model::Boosted(model.clone()),
        );
        let back = ModelFile::from_bytes(&mf.to_bytes(false).unwrap(), "mem").unwrap();
        assert_eq!(
            bits(&back.score_raw(&vali).unwrap()),
            bits(&model.score_dataset(&vali))
        );
    }
}

#[test]
fn zero_rounds_are_the_start_model_and_trees_improve_on_it() {
    let train = synthetic(24, 3);
    let init = start(&train);
    let ctx = FitContext::new(1);
    let none = fit_gbdt_from(&params(0, false), &train, &ctx, Some(init.clone())).unwrap();
    let start_scores = init.scores(&train).unwrap();
    assert_eq!(bits(&none.model.score_dataset(&train)), bits(&start_scores));
    // Without a start model zero rounds are refused.
    let err = fit_gbdt_from(&params(0, false), &train, &ctx, None).unwrap_err();
    assert!(err.to_string().contains("trees"), "{err}");
    // Squared error falls with every round from the start.
    let sq = |s: &[f64]| -> f64 {
        s.iter()
            .zip(train.labels())
            .map(|(a, &l)| (a - l as f64).powi(2))
            .sum()
    };
    let run = train_gbdt_from(&params(10, true), &train, &ctx, Some(&init)).unwrap();
    assert!(sq(&run.train_scores) < sq(&start_scores));
}

#[test]
fn a_validation_start_that_no_tree_beats_is_kept_alone() {
    let (train, vali) = (synthetic(24, 4), synthetic(8, 5));
    let ideal = InitModel {
        model: Box::new(Model::Linear(LinearModel::new(vec![0.0; 6]))),
        preprocess: None,
    };
    let measure = |ds: &Dataset, s: &[f64]| -> ltr_core::Result<f64> {
        // Higher is better: minus the squared error.
        Ok(-s
            .iter()
            .zip(ds.labels())
            .map(|(a, &l)| (a - l as f64).powi(2))
            .sum::<f64>())
    };
    let ctx = FitContext::new(2).with_validation(&vali, &measure);
    let mut p = params(5, true);
    p.learning_rate = 1000.0;
    p.tree.min_docs_in_leaf = 1;
    p.tree.leaves = 64;
    let run = train_gbdt_from(&p, &train, &ctx, Some(&ideal)).unwrap();
    assert_eq!(run.curve.len(), run.trees_grown);
    // Every huge-step round is worse on validation than the all-zero start: none is kept.
    let start_err = measure(&vali, &vec![0.0; vali.n_docs()]).unwrap();
    assert!(run.curve.iter().all(|&c| c < start_err), "{:?}", run.curve);
    assert!(run.forest.trees.is_empty());
}

#[test]
fn same_seed_same_boosted_model_at_one_and_two_threads() {
    let train = synthetic(24, 6);
    let init = start(&train);
    let mut p = params(6, false);
    p.tree.query_fraction = 0.7;
    p.tree.feature_fraction = 0.5;
    let fit = |threads: usize| {
        with_threads(threads, || {
            fit_gbdt_from(&p, &train, &FitContext::new(9), Some(init.clone()))
        })
        .unwrap()
        .model
    };
    assert_eq!(fit(1), fit(2));
}
