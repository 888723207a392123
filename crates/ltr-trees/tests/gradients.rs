//! LambdaRank's gradients against hand computations and brute force (the three-document query, the swap deltas of
//! NDCG, ERR and AP, sampled pairs), and Newton leaf values against their closed form.

use ltr_core::FitContext;
use ltr_data::{Dataset, FeatureMatrix};
use ltr_trees::{
    lambda_gradients, leaf_value, train_gbdt, Cell, GainTable, GbdtParams, LabelGain, LambdaMetric,
    LambdaQuery, LambdaSettings, PairMethod, TieBreak,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// An unweighted query (the seed only matters to sampled pairs).
const PLAIN: LambdaQuery = LambdaQuery {
    seed: 0,
    weight: 1.0,
};

/// The three-document query of the hand computations: labels 2, 0, 1 with scores 0.5, 1.0, 0.0, so the ranking is
/// doc1 (label 0), doc0 (2), doc2 (1); pairs (hi, lo) are (0, 1), (0, 2), (2, 1).
const LABELS3: [f32; 3] = [2.0, 0.0, 1.0];
const SCORES3: [f64; 3] = [0.5, 1.0, 0.0];

/// σ = 1, every pair, no normalisation and no score gaps.
fn bare(metric: LambdaMetric) -> LambdaSettings {
    LambdaSettings {
        metric,
        gain: LabelGain::Exponential,
        ndcg_at: 10,
        pairs: PairMethod::TopK { truncation: 30 },
        sigma: 1.0,
        norm: false,
        score_gap: false,
        ties: TieBreak::FileOrder,
    }
}

fn lambdas(
    labels: &[f32],
    scores: &[f64],
    s: &LambdaSettings,
    q: LambdaQuery,
) -> (Vec<f64>, Vec<f64>) {
    let (mut g, mut h) = (vec![0.0; labels.len()], vec![0.0; labels.len()]);
    lambda_gradients(labels, scores, s, q, &mut g, &mut h);
    (g, h)
}

/// The gradients and hessians of the three-document query when the pairs (0, 1), (0, 2), (2, 1) weigh `d01`,
/// `d02`, `d21` (σ = 1, no normalisation); also each pair's λ and hessian.
fn three_doc_want(d01: f64, d02: f64, d21: f64) -> ([f64; 3], [f64; 3], [(f64, f64); 3]) {
    let sig = |x: f64| 1.0 / (1.0 + x.exp());
    let pair = |delta: f64, sh: f64, sl: f64| {
        let rho = sig(sh - sl);
        (rho * delta, rho * (1.0 - rho) * delta)
    };
    let (l01, h01) = pair(d01, 0.5, 1.0);
    let (l02, h02) = pair(d02, 0.5, 0.0);
    let (l21, h21) = pair(d21, 0.0, 1.0);
    (
        [-l01 - l02, l01 + l21, l02 - l21],
        [h01 + h02, h01 + h21, h02 + h21],
        [(l01, h01), (l02, h02), (l21, h21)],
    )
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    for k in 0..want.len() {
        assert!((got[k] - want[k]).abs() < tol, "{got:?} vs {want:?}");
    }
}

#[test]
fn lambda_gradients_of_a_three_document_query_match_a_hand_computation() {
    let (labels, scores) = (LABELS3, SCORES3);
    let s = bare(LambdaMetric::Ndcg);
    let (g, h) = lambdas(&labels, &scores, &s, PLAIN);
    let d = |r: f64| 1.0 / (r + 2.0).log2();
    // Ideal order 2, 1, 0: gains 3, 1, 0.
    let idcg = 3.0 * d(0.0) + 1.0 * d(1.0);
    let ndcg = |gh: f64, gl: f64, rh: f64, rl: f64| (gh - gl) * (d(rh) - d(rl)).abs() / idcg;
    let (want_g, want_h, [(l01, h01), (l02, h02), (l21, h21)]) = three_doc_want(
        ndcg(3.0, 0.0, 1.0, 0.0),
        ndcg(3.0, 1.0, 1.0, 2.0),
        ndcg(1.0, 0.0, 2.0, 0.0),
    );
    assert_close(&g, &want_g, 1e-15);
    assert_close(&h, &want_h, 1e-15);
    // Normalised: scaled by log2(1 + Σλ)/Σλ, Σλ counting each pair twice.
    let sum = 2.0 * (l01 + l02 + l21);
    let f = (1.0 + sum).log2() / sum;
    let (gn, hn) = lambdas(&labels, &scores, &LambdaSettings { norm: true, ..s }, PLAIN);
    assert_close(&gn, &want_g.map(|x| f * x), 1e-15);
    assert_close(&hn, &want_h.map(|x| f * x), 1e-15);
    // A query weight multiplies both, after the normalisation; weight 0 silences the query.
    let weighted = LambdaQuery {
        seed: 0,
        weight: 2.5,
    };
    let (gw, hw) = lambdas(
        &labels,
        &scores,
        &LambdaSettings { norm: true, ..s },
        weighted,
    );
    assert_close(&gw, &want_g.map(|x| 2.5 * f * x), 1e-15);
    assert_close(&hw, &want_h.map(|x| 2.5 * f * x), 1e-15);
    let silent = LambdaQuery {
        seed: 0,
        weight: 0.0,
    };
    assert_eq!(
        lambdas(&labels, &scores, &s, silent),
        (vec![0.0; 3], vec![0.0; 3])
    );
    // Truncation 1: only pairs with the top document (doc 1) count.
    let t1 = LambdaSettings {
        pairs: PairMethod::TopK { truncation: 1 },
        ..s
    };
    let (gt, _) = lambdas(&labels, &scores, &t1, PLAIN);
    assert!((gt[0] + l01).abs() < 1e-15 && (gt[2] + l21).abs() < 1e-15);
    // All-zero labels: no gradient.
    assert_eq!(
        lambdas(&[0.0; 3], &scores, &s, PLAIN),
        (vec![0.0; 3], vec![0.0; 3])
    );
    // Score gaps: each pair's Δ is divided by 0.01 + |s_hi − s_lo| ...
    let gap = LambdaSettings {
        score_gap: true,
        ..s
    };
    let (gg, hg) = lambdas(&labels, &scores, &gap, PLAIN);
    let (a, b, c) = (1.0 / 0.51, 1.0 / 0.51, 1.0 / 1.01);
    let want_gg = [-l01 * a - l02 * b, l01 * a + l21 * c, l02 * b - l21 * c];
    let want_hg = [h01 * a + h02 * b, h01 * a + h21 * c, h02 * b + h21 * c];
    assert_close(&gg, &want_gg, 1e-14);
    assert_close(&hg, &want_hg, 1e-14);
    // ... but not while every score is the same (the first round).
    assert_eq!(
        lambdas(&labels, &[0.25; 3], &gap, PLAIN),
        lambdas(&labels, &[0.25; 3], &s, PLAIN)
    );
}

#[test]
fn err_and_ap_swap_deltas_and_label_gains_match_hand_computations_on_three_documents() {
    // ERR with gmax 2: R = 3/4 (label 2), 1/4 (label 1), 0 (label 0). Ranking R: 0, 3/4, 1/4, ERR = 3/8 + 1/48
    // = 19/48. Swapping (0, 1): 3/4, 0, 1/4 → 37/48; (0, 2): 0, 1/4, 3/4 → 15/48; (2, 1): 1/4, 3/4, 0 → 51/96.
    let err = bare(LambdaMetric::Err { max_grade: 2.0 });
    let (want_g, want_h, _) = three_doc_want(18.0 / 48.0, 4.0 / 48.0, 13.0 / 96.0);
    let (g, h) = lambdas(&LABELS3, &SCORES3, &err, PLAIN);
    assert_close(&g, &want_g, 1e-15);
    assert_close(&h, &want_h, 1e-15);
    // AP: docs 0 and 2 relevant (label ≥ 1). N R R: (1/2 + 2/3)/2 = 7/12. Swapping (0, 1): R N R → 5/6;
    // (0, 2): two relevant documents, no change; (2, 1): R R N → 1.
    let (want_g, want_h, _) = three_doc_want(1.0 / 4.0, 0.0, 5.0 / 12.0);
    let (g, h) = lambdas(&LABELS3, &SCORES3, &bare(LambdaMetric::Map), PLAIN);
    assert_close(&g, &want_g, 1e-15);
    assert_close(&h, &want_h, 1e-15);
    // Linear gains 2, 0, 1: the ideal DCG is 2 + 1/log2 3.
    let d = |r: f64| 1.0 / (r + 2.0).log2();
    let idcg = 2.0 * d(0.0) + d(1.0);
    let (want_g, _, _) = three_doc_want(
        2.0 * (d(1.0) - d(0.0)).abs() / idcg,
        (d(1.0) - d(2.0)).abs() / idcg,
        (d(2.0) - d(0.0)).abs() / idcg,
    );
    let linear = LambdaSettings {
        gain: LabelGain::Linear,
        ..bare(LambdaMetric::Ndcg)
    };
    assert_close(
        &lambdas(&LABELS3, &SCORES3, &linear, PLAIN).0,
        &want_g,
        1e-15,
    );
    // A gain list equal to 2^g − 1 is the exponential gain bit for bit; one that gives labels 1 and 2 the same
    // gain drops their pair (0, 2).
    let table = |gains: &[f64]| LambdaSettings {
        gain: LabelGain::Table(GainTable::new(gains).unwrap()),
        ..bare(LambdaMetric::Ndcg)
    };
    let exp = lambdas(&LABELS3, &SCORES3, &bare(LambdaMetric::Ndcg), PLAIN);
    assert_eq!(
        lambdas(&LABELS3, &SCORES3, &table(&[0.0, 1.0, 3.0]), PLAIN),
        exp
    );
    let idcg = 2.0 * d(0.0) + 2.0 * d(1.0);
    let (want_g, _, _) = three_doc_want(
        2.0 * (d(1.0) - d(0.0)).abs() / idcg,
        0.0,
        2.0 * (d(2.0) - d(0.0)).abs() / idcg,
    );
    assert_close(
        &lambdas(&LABELS3, &SCORES3, &table(&[0.0, 2.0, 2.0]), PLAIN).0,
        &want_g,
        1e-15,
    );
    // ndcg-at 0 normalises at the truncation level (top-k pairs) or over the whole list (sampled pairs).
    let at = |ndcg_at: usize, pairs: PairMethod| LambdaSettings {
        ndcg_at,
        pairs,
        ..bare(LambdaMetric::Ndcg)
    };
    let top2 = PairMethod::TopK { truncation: 2 };
    let q = |s: LambdaSettings| lambdas(&[1.0, 1.0, 2.0, 0.0], &[0.1, 0.4, 0.3, 0.2], &s, PLAIN);
    assert_eq!(q(at(0, top2)), q(at(2, top2)));
    assert_ne!(q(at(0, top2)), q(at(3, top2)));
    let mean = PairMethod::Mean { pairs_per_doc: 3 };
    assert_eq!(q(at(0, mean)), q(at(4, mean)));
}

/// Every pair's weight against swapping its two documents' scores and evaluating the list again with
/// `ltr_metrics` (standard convention: gain 2^g − 1, ERR's largest grade 4, relevant = label ≥ 1), through the
/// gradients of random small queries with distinct scores.
#[test]
fn swap_deltas_equal_swapping_and_re_evaluating_the_measure() {
    use ltr_metrics::{evaluate_query, Convention, Metric};
    let mut rng = ChaCha8Rng::seed_from_u64(40);
    let measures = [
        (LambdaMetric::Ndcg, "NDCG"),
        (LambdaMetric::Err { max_grade: 4.0 }, "ERR"),
        (LambdaMetric::Map, "MAP"),
    ];
    for _ in 0..200 {
        let n = rng.random_range(2..12);
        let labels: Vec<f32> = (0..n).map(|_| rng.random_range(0..5) as f32).collect();
        let scores: Vec<f64> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
        for (metric, name) in measures {
            let m: Metric = name.parse().unwrap();
            let value = |s: &[f64]| evaluate_query(m, &labels, s, &Convention::STANDARD).unwrap();
            let before = value(&scores);
            let (mut want_g, mut want_h) = (vec![0.0; n], vec![0.0; n]);
            for i in 0..n {
                for j in 0..n {
                    if labels[i] <= labels[j] {
                        continue;
                    }
                    let mut swapped = scores.clone();
                    swapped.swap(i, j);
                    let delta = (value(&swapped) - before).abs();
                    let rho = 1.0 / (1.0 + (scores[i] - scores[j]).exp());
                    want_g[i] -= rho * delta;
                    want_g[j] += rho * delta;
                    want_h[i] += rho * (1.0 - rho) * delta;
                    want_h[j] += rho * (1.0 - rho) * delta;
                }
            }
            // Every pair, normalised over the whole list.
            let s = LambdaSettings {
                ndcg_at: 0,
                pairs: PairMethod::TopK { truncation: n },
                ..bare(metric)
            };
            let (g, h) = lambdas(&labels, &scores, &s, PLAIN);
            assert_close(&g, &want_g, 1e-12);
            assert_close(&h, &want_h, 1e-12);
        }
    }
}

#[test]
fn sampled_pairs_pair_documents_of_other_labels_from_the_query_seed() {
    let s = LambdaSettings {
        pairs: PairMethod::Mean { pairs_per_doc: 4 },
        ..bare(LambdaMetric::Ndcg)
    };
    // Two documents: each draws the other every time, so each pair counts 2 × 4 times the top-k pair's once.
    let (labels, scores) = ([1.0f32, 0.0], [0.2, 0.7]);
    let once = lambdas(&labels, &scores, &bare(LambdaMetric::Ndcg), PLAIN);
    let (g, h) = lambdas(&labels, &scores, &s, PLAIN);
    assert_close(
        &g,
        &once.0.iter().map(|x| 8.0 * x).collect::<Vec<_>>(),
        1e-15,
    );
    assert_close(
        &h,
        &once.1.iter().map(|x| 8.0 * x).collect::<Vec<_>>(),
        1e-15,
    );
    // Labels 1, 1, 0: documents 0 and 1 can only draw document 2 (4 times each); document 2 draws k times
    // document 0 and 4 − k times document 1. So g_0 = −(4 + k) λ_02 and g_1 = −(8 − k) λ_12 with a whole k.
    let (labels, scores) = ([1.0f32, 1.0, 0.0], [0.3, 0.1, 0.2]);
    // With every pair once, documents 0 and 1 are each in one pair: their gradients are −λ_02 and −λ_12.
    let (every, _) = lambdas(&labels, &scores, &bare(LambdaMetric::Ndcg), PLAIN);
    let (l02, l12) = (-every[0], -every[1]);
    let mut draws = Vec::new();
    for seed in 0..20 {
        let (g, _) = lambdas(&labels, &scores, &s, LambdaQuery { seed, weight: 1.0 });
        let k = -g[0] / l02 - 4.0;
        assert!(
            (k - k.round()).abs() < 1e-9 && (0.0..=4.0).contains(&k.round()),
            "k {k}"
        );
        assert!((-g[1] / l12 - (8.0 - k)).abs() < 1e-9);
        assert!(g.iter().sum::<f64>().abs() < 1e-15);
        draws.push(k.round());
    }
    // Document 2 drew document 0 sometimes more, sometimes less often: a fair draw over 20 seeds.
    assert!(
        draws.iter().any(|&k| k < 2.0) && draws.iter().any(|&k| k > 2.0),
        "{draws:?}"
    );
    // The same seed draws the same pairs.
    let seeded = |seed| lambdas(&labels, &scores, &s, LambdaQuery { seed, weight: 1.0 });
    assert_eq!(seeded(7), seeded(7));
    // The seed of a query depends on the run's seed, the round and the query's index, nothing else.
    let seeds: Vec<u64> = [(1, 0, 0), (1, 0, 1), (1, 1, 0), (2, 0, 0)]
        .iter()
        .map(|&(run, round, q)| LambdaQuery::new(run, round, q, 1.0).seed)
        .collect();
    assert!(seeds
        .iter()
        .enumerate()
        .all(|(i, a)| seeds[i + 1..].iter().all(|b| a != b)));
    assert_eq!(
        LambdaQuery::new(1, 1, 0, 1.0),
        LambdaQuery::new(1, 1, 0, 1.0)
    );
}

#[test]
fn newton_leaf_values_match_the_closed_form() {
    let c = Cell {
        g: 3.0,
        h: 2.0,
        n: 5.0,
    };
    assert_eq!(leaf_value(c, 1.0, 0.1), -3.0 / 3.0 * 0.1);
    assert_eq!(leaf_value(Cell::default(), 0.0, 0.1), 0.0);
    // One MART tree of two leaves on a feature that separates the labels: each leaf is
    // learning rate × mean residual of its documents (squared error: g = s − y, h = 1).
    let x = [0.0f32, 1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0];
    let y = [0.0f32, 1.0, 0.0, 1.0, 2.0, 2.0, 1.0, 2.0];
    let ds = Dataset::new(
        FeatureMatrix::Dense(ndarray::Array2::from_shape_vec((8, 1), x.to_vec()).unwrap()),
        y.to_vec(),
        vec![0, 4, 8],
        vec!["a".into(), "b".into()],
    )
    .unwrap();
    let mut p = GbdtParams::mart();
    p.trees = 1;
    p.tree.leaves = 2;
    p.tree.min_docs_in_leaf = 1;
    p.tree.min_data_in_bin = 1;
    let run = train_gbdt(&p, &ds, &FitContext::new(1)).unwrap();
    let base = 9.0 / 8.0;
    assert_eq!(run.forest.base_score, base);
    let t = &run.forest.trees[0];
    // Midway between the neighbouring values 3 and 10.
    assert_eq!((t.split_feature[0], t.threshold[0]), (0, 6.5));
    let mean_res = |ys: &[f32]| ys.iter().map(|&v| v as f64 - base).sum::<f64>() / ys.len() as f64;
    assert!((t.leaf_value[0] - 0.1 * mean_res(&y[..4])).abs() < 1e-15);
    assert!((t.leaf_value[1] - 0.1 * mean_res(&y[4..])).abs() < 1e-15);
}
