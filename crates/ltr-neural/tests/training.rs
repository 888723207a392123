//! Training: a network learns a ranking it can represent, the same model at any thread count, bad input.

use crate::common::{fit_at_one_and_two_threads, letor, ndcg10};
use ltr_core::{Fit, FitContext, Model, ParamGuard, Scorer};
use ltr_data::{generate_letor_like, Dataset, FeatureMatrix, SyntheticConfig};
use ltr_metrics::{evaluate_mean, Convention, Metric};
use ltr_neural::{Loss, NeuralParams, NeuralValidParams, Optimizer, Schedule};

/// Queries whose grades are a fixed non-linear function of the features — `|x0 − x1| + x2·x3` cut into grades 0–3
/// within each query — which no linear model ranks perfectly.
fn known_ranking(queries: usize, seed: u64) -> Dataset {
    let (docs, d) = (12, 4);
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    let mut x = Vec::new();
    let mut labels = Vec::new();
    let mut offsets = vec![0];
    for _ in 0..queries {
        let rows: Vec<Vec<f32>> = (0..docs)
            .map(|_| (0..d).map(|_| next()).collect())
            .collect();
        let target: Vec<f32> = rows
            .iter()
            .map(|r| (r[0] - r[1]).abs() + r[2] * r[3])
            .collect();
        let mut order: Vec<usize> = (0..docs).collect();
        order.sort_by(|&a, &b| target[a].total_cmp(&target[b]));
        let mut grade = vec![0f32; docs];
        for (rank, &i) in order.iter().enumerate() {
            grade[i] = (rank * 4 / docs) as f32;
        }
        for (r, g) in rows.into_iter().zip(grade) {
            x.extend(r);
            labels.push(g);
        }
        offsets.push(labels.len());
    }
    let n = labels.len();
    Dataset::new(
        FeatureMatrix::Dense(ndarray::Array2::from_shape_vec((n, d), x).unwrap()),
        labels,
        offsets,
        (0..queries).map(|q| q.to_string()).collect(),
    )
    .unwrap()
}

fn ndcg(data: &Dataset, model: &Model) -> f64 {
    evaluate_mean(
        data,
        &model.score_dataset(data),
        Metric::Ndcg(None),
        &Convention::STANDARD,
    )
    .unwrap()
}

#[test]
fn a_network_learns_a_ranking_it_can_represent_and_a_linear_model_cannot() {
    let train = known_ranking(60, 1);
    let test = known_ranking(30, 2);
    let fit = |sizes: Vec<usize>| {
        NeuralParams::default()
            .sizes(sizes)
            .loss(Loss::parse("listnet").unwrap())
            .lr(0.01)
            .epochs(150)
            .batch_size(8)
            .check()
            .unwrap()
            .fit(&train, &FitContext::new(3))
            .unwrap()
            .model
    };
    let mlp = fit(vec![32, 16]);
    let linear = fit(vec![]);
    let Model::Neural(n) = &linear else {
        panic!("neural")
    };
    assert!(n.hidden.is_empty(), "sizes=[] is the linear model");
    let (m_train, m_test, l_test) = (ndcg(&train, &mlp), ndcg(&test, &mlp), ndcg(&test, &linear));
    assert!(m_train > 0.97, "training NDCG {m_train}");
    assert!(
        m_test > 0.93 && m_test > l_test + 0.03,
        "test NDCG: MLP {m_test}, linear {l_test}"
    );
}

/// Dropout, sampled slates, ListMLE's tie order, layer norm and AdamW with a schedule all draw from seeded
/// streams and every sum has a fixed order: 1 and 2 threads give the same model bit for bit.
#[test]
fn the_same_model_bit_for_bit_at_one_and_two_threads() {
    let train = letor(40, 5);
    let vali = letor(10, 6);
    for (loss, layer_norm) in [
        ("listmle", true),
        ("ndcgloss2pp", false),
        ("neuralndcg", true),
    ] {
        let p = NeuralParams::default()
            .sizes(vec![24, 12])
            .loss(Loss::parse(loss).unwrap())
            .dropout(0.2)
            .layer_norm(layer_norm)
            .input_norm(layer_norm)
            .optimizer(Optimizer::AdamW)
            .weight_decay(0.01)
            .schedule(Schedule::Step {
                step: 2,
                gamma: 0.5,
            })
            .slate_length(9)
            .batch_size(7)
            .epochs(4)
            .check()
            .unwrap();
        let a = fit_at_one_and_two_threads(&p, &train, &vali, loss);
        let c = p.fit(&train, &FitContext::new(12)).unwrap();
        assert_ne!(a.model, c.model, "{loss}: another seed, another model");
    }
}

/// A batch of more documents than a piece (`step.rs`: 4,096) goes through the passes in pieces of whole queries:
/// with dropout, sampled slates and layer norm, 1 and 2 threads still give one model.
#[test]
fn batches_in_pieces_train_to_the_same_bits_at_one_and_two_threads() {
    let big = |queries, seed| {
        generate_letor_like(&SyntheticConfig {
            queries,
            min_docs: 150,
            max_docs: 260,
            features: 6,
            seed,
            ..SyntheticConfig::default()
        })
        .unwrap()
    };
    let (train, vali) = (big(40, 5), big(4, 6));
    let p = NeuralParams::default()
        .sizes(vec![8])
        .loss(Loss::parse("ranknet").unwrap())
        .dropout(0.2)
        .layer_norm(true)
        .slate_length(240)
        .batch_size(40)
        .epochs(2)
        .check()
        .unwrap();
    let e = p.memory_estimate(&train);
    assert!(e.batch_rows > 2 * 4096 && e.piece_rows <= 4096, "{e:?}");
    fit_at_one_and_two_threads(&p, &train, &vali, "pieces");
}

/// `piece-rows` trades memory for parallel work: a piece that holds the whole batch is the default's model bit for
/// bit; pieces of one query hold a query's activations and train to one model at 1 and 2 threads, another than the
/// default's (its gradient sums in another order, equal to rounding: `unit/step.rs`; Adam's normalised steps and
/// dropout's masks, drawn by chunk, carry the difference on).
#[test]
fn smaller_pieces_hold_less_and_train_to_one_model_at_any_thread_count() {
    let (train, vali) = (letor(30, 2), letor(8, 3));
    let at = |rows: Option<usize>| {
        let p = NeuralParams::default()
            .sizes(vec![16, 8])
            .dropout(0.1)
            .batch_size(64)
            .epochs(3);
        rows.map_or(p.clone(), |r| p.piece_rows(r)).check().unwrap()
    };
    let fit = |p: &NeuralValidParams| {
        p.fit(&train, &FitContext::new(11).with_validation(&vali, &ndcg10))
            .unwrap()
    };
    let (default, one) = (at(None), at(Some(1)));
    // The whole batch (30 queries of at most 25 documents) fits a piece of 750: the same sums and masks.
    let base = fit(&default);
    assert_eq!(fit(&at(Some(750))).model, base.model);
    let (e1, e0) = (one.memory_estimate(&train), default.memory_estimate(&train));
    assert!(
        e1.piece_rows <= 25 && e0.piece_rows == e0.batch_rows,
        "{e1:?} {e0:?}"
    );
    assert!(e1.activations < e0.activations / 4, "{e1:?} {e0:?}");
    let small = fit_at_one_and_two_threads(&one, &train, &vali, "pieces of one query");
    assert_ne!(small.model, base.model, "30 pieces sum in another order");
    // The report records the piece `auto` chose (the model's bits depend on it), and no piece that was given.
    let chosen = |f: &ltr_core::Fitted| f.report.selected.get("piece-rows").cloned();
    assert_eq!(chosen(&base).as_deref(), Some("4096"));
    assert_eq!(chosen(&small), None);
}

#[test]
fn bad_input_is_a_clear_error() {
    let data = letor(5, 1);
    let ok = || NeuralParams::default().sizes(vec![4]).epochs(1);
    // A learning rate of 0 or below.
    for lr in [0.0, -0.1, f64::NAN] {
        let e = ok().lr(lr).check().unwrap_err().to_string();
        assert!(e.contains("learning rate"), "{e}");
    }
    // A slate cap of 0.
    let e = ok().slate_length(0).check().unwrap_err().to_string();
    assert!(e.contains("slate cap of 0"), "{e}");
    // A piece of 0 documents.
    let e = ok().piece_rows(0).check().unwrap_err().to_string();
    assert!(e.contains("piece-rows") && e.contains("at least 1"), "{e}");
    // A NaN feature.
    let mut nan = data.clone();
    if let FeatureMatrix::Dense(a) = nan.features_mut() {
        a[[3, 2]] = f32::NAN;
    }
    let e = ok()
        .check()
        .unwrap()
        .fit(&nan, &FitContext::new(1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("row 3, column 2") && e.contains("NaN"), "{e}");
    // A ranking loss on data whose queries each hold one grade.
    let flat = Dataset::new(
        data.features().clone(),
        vec![1.0; data.n_docs()],
        data.query_offsets().to_vec(),
        data.qids().to_vec(),
    )
    .unwrap();
    for loss in ["ranknet", "lambdaloss", "neuralndcg", "mse"] {
        let e = ok()
            .loss(Loss::parse(loss).unwrap())
            .check()
            .unwrap()
            .fit(&flat, &FitContext::new(1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("grade"), "{loss}: {e}");
    }
}

/// The model file round trip: a trained network scores the same after save and load.
#[test]
fn a_saved_network_scores_as_trained() {
    let train = letor(10, 3);
    let fitted = NeuralParams::default()
        .sizes(vec![8])
        .layer_norm(true)
        .epochs(2)
        .check()
        .unwrap()
        .fit(&train, &FitContext::new(1))
        .unwrap();
    let file = ltr_core::ModelFile::new(
        "neural",
        Default::default(),
        Default::default(),
        fitted.model.clone(),
    );
    let dir = tempfile::tempdir().unwrap();
    for name in ["m.postcard", "m.json"] {
        let path = dir.path().join(name);
        file.save(&path).unwrap();
        let back = ltr_core::ModelFile::load(&path).unwrap();
        assert_eq!(back.model, fitted.model, "{name}");
        assert_eq!(
            back.model.score_dataset(&train),
            fitted.model.score_dataset(&train)
        );
    }
}
