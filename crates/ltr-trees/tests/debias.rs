//! Position debiasing of clicks (issue 52): LightGBM's position factors and Unbiased LambdaMART's pairwise biases.
//! Fixed factors are plain LambdaMART bit for bit, every mode is the same model at one and two threads, and the
//! biases learned on position-based clicks fall with the position.

use ltr_core::{Fit, FitContext, Model, ParamGuard};
use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};
use ltr_trees::{train_gbdt, Debias, GbdtParams, PositionBias};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Sessions of position-based clicks on generated judged data: each query shows its 10 documents of highest
/// first feature (a poor production ranker), examined with probability 1/(position + 1) and clicked when examined
/// with probability (2^label − 1)/3 (labels 0–2); each session is a query of its shown documents labelled by
/// click, with their positions. Sessions without a click are left out.
fn sessions(queries: usize, per_query: usize, seed: u64) -> Dataset {
    let judged = generate_letor_like(&SyntheticConfig {
        queries,
        min_docs: 12,
        max_docs: 30,
        features: 8,
        seed,
        ..Default::default()
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut rows, mut labels, mut positions, mut offsets, mut qids) =
        (Vec::new(), Vec::new(), Vec::new(), vec![0], Vec::new());
    for q in 0..judged.n_queries() {
        let mut shown: Vec<usize> = judged.query_range(q).collect();
        shown.sort_by(|&a, &b| judged.row(b).get(0).total_cmp(&judged.row(a).get(0)));
        shown.truncate(10);
        for _ in 0..per_query {
            let clicks: Vec<bool> = shown
                .iter()
                .enumerate()
                .map(|(k, &d)| {
                    let relevance = ((judged.labels()[d] as f64).exp2() - 1.0) / 3.0;
                    rng.random::<f64>() < relevance / (k + 1) as f64
                })
                .collect();
            if !clicks.contains(&true) {
                continue;
            }
            for (k, (&d, &c)) in shown.iter().zip(&clicks).enumerate() {
                rows.push(d);
                labels.push(if c { 1.0 } else { 0.0 });
                positions.push(k as u32);
            }
            offsets.push(rows.len());
            qids.push(judged.qids()[q].clone());
        }
    }
    Dataset::new(judged.select_rows_matrix(&rows), labels, offsets, qids)
        .unwrap()
        .with_positions(positions)
        .unwrap()
}

fn params(debias: Debias) -> GbdtParams {
    let mut p = GbdtParams::lambdamart();
    p.trees = 12;
    p.tree.min_docs_in_leaf = 10;
    p.tree.query_fraction = 0.8;
    p.debias = debias;
    p
}

fn model(p: GbdtParams, ds: &Dataset, ctx: &FitContext<'_>) -> Model {
    p.check().unwrap().fit(ds, ctx).unwrap().model
}

const FACTORS: Debias = Debias::PositionFactors {
    rate: 0.1,
    regularization: 0.0,
};
const PAIRWISE: Debias = Debias::Pairwise { bias_norm: 1.0 };

#[test]
fn position_factors_fixed_at_one_are_plain_lambdamart_bit_for_bit() {
    let ds = sessions(20, 30, 1);
    let weights: Vec<f64> = (0..ds.n_queries()).map(|q| 1.0 + (q % 4) as f64).collect();
    let ctx = FitContext::new(3);
    let weighted = ctx.with_query_weights(&weights);
    // Rate 0: every factor stays at e⁰ = 1 (an additive 0).
    let fixed = Debias::PositionFactors {
        rate: 0.0,
        regularization: 0.5,
    };
    for c in [&ctx, &weighted] {
        let plain = model(params(Debias::None), &ds, c);
        assert_eq!(
            format!("{plain:?}"),
            format!("{:?}", model(params(fixed), &ds, c))
        );
        // Learned factors change the model.
        assert_ne!(
            format!("{plain:?}"),
            format!("{:?}", model(params(FACTORS), &ds, c))
        );
        assert_ne!(
            format!("{plain:?}"),
            format!("{:?}", model(params(PAIRWISE), &ds, c))
        );
    }
}

#[test]
fn debiased_models_are_the_same_at_one_and_two_threads() {
    let ds = sessions(20, 30, 2);
    let weights: Vec<f64> = (0..ds.n_queries()).map(|q| 1.0 + (q % 3) as f64).collect();
    let ctx = FitContext::new(5);
    let weighted = ctx.with_query_weights(&weights);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            [FACTORS, PAIRWISE]
                .map(|d| format!("{:?}", model(params(d), &ds, &weighted)))
                .to_vec()
        })
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn learned_biases_fall_with_the_position_on_position_based_clicks() {
    let ds = sessions(60, 60, 3);
    let ctx = FitContext::new(1);
    let mut p = params(PAIRWISE);
    p.trees = 30;
    let run = train_gbdt(&p, &ds, &ctx).unwrap();
    let Some(PositionBias::Pairwise { t_plus, t_minus }) = run.position_bias else {
        panic!("no pairwise biases: {:?}", run.position_bias);
    };
    assert_eq!(t_plus.len(), 10);
    assert_eq!((t_plus[0], t_minus[0]), (1.0, 1.0));
    // The examination probability falls as 1/(k + 1): the click bias of the lower half is below the upper half's.
    let half = |t: &[f64], r: std::ops::Range<usize>| t[r].iter().sum::<f64>() / 5.0;
    assert!(
        half(&t_plus, 5..10) < half(&t_plus, 0..5) && t_plus[9] < 0.8,
        "t+ {t_plus:?}"
    );
    let mut p = params(FACTORS);
    p.trees = 30;
    let run = train_gbdt(&p, &ds, &ctx).unwrap();
    let Some(PositionBias::Factors(f)) = run.position_bias else {
        panic!("no factors: {:?}", run.position_bias);
    };
    assert!(f[0] > f[9], "factors {f:?}");
}

#[test]
fn debiasing_needs_positions_and_the_lambdarank_objective() {
    let judged = generate_letor_like(&SyntheticConfig {
        queries: 5,
        seed: 1,
        ..Default::default()
    })
    .unwrap();
    let err = params(FACTORS)
        .check()
        .unwrap()
        .fit(&judged, &FitContext::new(1))
        .unwrap_err()
        .to_string();
    assert!(err.contains("debias") && err.contains("position"), "{err}");
    let mut mart = GbdtParams::mart();
    mart.debias = PAIRWISE;
    assert!(mart.check().unwrap_err().to_string().contains("debias"));
    let mut bad = params(Debias::Pairwise { bias_norm: -1.0 });
    bad.trees = 1;
    assert!(bad.check().unwrap_err().to_string().contains("bias-norm"));
}
