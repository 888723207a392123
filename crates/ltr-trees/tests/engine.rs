//! The tree engine against brute force and hand computations, its determinism across thread counts, the agreement
//! of training-time (binned) scores with predictions on raw features, and parameter checks.

use ltr_core::{Fit, FitContext, LtrError, Model, ParamGuard, Scorer};
use ltr_data::{generate_letor_like, Dataset, FeatureMatrix, SyntheticConfig};
use ltr_trees::{
    best_split, histogram, lambda_gradients, leaf_value, split_gain, subtract, train_gbdt,
    train_random_forest, Cell, GainTable, GbdtParams, GrowSettings, LabelGain, LambdaMetric,
    LambdaQuery, LambdaSettings, Objective, PairMethod, RandomForestParams, Scale, Sums, TieBreak,
};
use rand::{Rng, SeedableRng};

use crate::common::with_threads;
use rand_chacha::ChaCha8Rng;

fn synthetic(queries: usize, seed: u64) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries,
        min_docs: 10,
        max_docs: 40,
        features: 8,
        seed,
        ..Default::default()
    })
    .unwrap()
}

fn settings(min_docs: usize, min_hess: f64, l2: f64) -> GrowSettings {
    GrowSettings {
        leaves: 31,
        max_depth: 0,
        min_docs_in_leaf: min_docs,
        min_hessian_in_leaf: min_hess,
        leaf_count: ltr_trees::LeafCount::Documents,
        l2,
        shrinkage: 1.0,
    }
}

/// Every feature and threshold, and for a feature with missing values both of their directions, searched by brute
/// force with sums taken straight from the documents, against the histograms and `best_split`: the same feature,
/// bin, direction and gain. Ties follow the documented order (LightGBM's): the earlier feature; within a feature the
/// larger bin with the missing bin on the left, the smaller with it on the right, which wins only when strictly
/// better.
#[test]
fn best_split_equals_brute_force_over_all_features_thresholds_and_missing_directions() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut missing_right_seen = 0;
    for trial in 0..60 {
        let n = rng.random_range(5..200);
        let nf = rng.random_range(1..5);
        // Value bins per feature; a feature with missing values has one more bin, the last, holding them.
        let nb: Vec<usize> = (0..nf).map(|_| rng.random_range(2..20)).collect();
        let missing: Vec<bool> = (0..nf).map(|_| rng.random_bool(0.6)).collect();
        let share = rng.random_range(0.0..0.5);
        let bins: Vec<Vec<u8>> = (0..nf)
            .map(|f| {
                (0..n)
                    .map(|_| {
                        if missing[f] && rng.random_bool(share) {
                            nb[f] as u8
                        } else {
                            rng.random_range(0..nb[f]) as u8
                        }
                    })
                    .collect()
            })
            .collect();
        let g: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let h: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..1.0)).collect();
        let s = settings(rng.random_range(1..6), 0.05, [0.0, 1.0][trial % 2]);
        let docs: Vec<u32> = (0..n as u32).collect();
        let scale = Scale::new(1.0, 1.0, n);
        let gh: Vec<[i64; 2]> = (0..n).map(|i| scale.quantise(g[i], h[i])).collect();
        // Sums straight from the documents, in fixed point as the engine sums them.
        let sum = |pick: &dyn Fn(usize) -> bool| {
            let mut c = Sums::default();
            for i in (0..n).filter(|&i| pick(i)) {
                c.g += gh[i][0];
                c.h += gh[i][1];
                c.n += 1;
            }
            c
        };
        let total = sum(&|_| true);
        // Engine: per-feature best, then the largest gain in feature order.
        let mut engine: Option<(usize, usize, bool, f64)> = None;
        for f in 0..nf {
            let hist = histogram(&bins[f], nb[f] + missing[f] as usize, &docs, &gh);
            if let Some(b) = best_split(&hist, missing[f], total, &scale, &s) {
                if engine.is_none_or(|e| b.gain > e.3) {
                    engine = Some((f, b.bin, b.missing_left, b.gain));
                }
            }
        }
        // Brute force: every feature, threshold and missing direction.
        let mut brute: Option<(usize, usize, bool, f64)> = None;
        for f in 0..nf {
            // The best with missing values on the left (or none), and on the right.
            let (mut on_left, mut on_right): (Option<(usize, usize, bool, f64)>, _) = (None, None);
            for b in 0..nb[f] - 1 {
                let directions: &[bool] = if missing[f] { &[true, false] } else { &[true] };
                for &missing_left in directions {
                    let left = |i: usize| {
                        let bin = bins[f][i] as usize;
                        if bin == nb[f] {
                            missing_left
                        } else {
                            bin <= b
                        }
                    };
                    let l = scale.cell(sum(&left));
                    let r = scale.cell(sum(&|i| !left(i)));
                    if l.n < s.min_docs_in_leaf as f64 || r.n < s.min_docs_in_leaf as f64 {
                        continue;
                    }
                    if l.h < s.min_hessian_in_leaf || r.h < s.min_hessian_in_leaf {
                        continue;
                    }
                    let gain = split_gain(l, r, scale.cell(total), s.l2);
                    let best = if missing_left {
                        &mut on_left
                    } else {
                        &mut on_right
                    };
                    if gain > 0.0 && best.is_none_or(|e| gain > e.3 || missing_left && gain == e.3)
                    {
                        *best = Some((f, b, missing_left, gain));
                    }
                }
            }
            let feature_best = match (on_left, on_right) {
                (Some(l), Some(r)) if r.3 > l.3 => Some(r),
                (None, r) => r,
                (l, _) => l,
            };
            if let Some(fb) = feature_best {
                if brute.is_none_or(|e| fb.3 > e.3) {
                    brute = Some(fb);
                }
            }
        }
        match (engine, brute) {
            (None, None) => {}
            (Some(e), Some(b)) => {
                // Exact sums on both sides: the same split and the same gain, bit for bit.
                assert_eq!(e, b, "trial {trial}");
                missing_right_seen += !e.2 as usize;
            }
            other => panic!("trial {trial}: {other:?}"),
        }
    }
    // Both directions were chosen somewhere, so the comparison covered each.
    assert!(missing_right_seen > 0);
}

/// Under `min-docs-count=hessian`, every threshold and missing direction searched by brute force with LightGBM's
/// estimated counts taken from the documents' bins (each value bin `floor(h · n / (H + 2e-15) + 0.5)`; the side
/// LightGBM's scan does not accumulate counts the rest of the leaf's `n`; both sides must hold a document),
/// against `best_split`: the same bin, direction and gain. The bins are sparse (most empty) and many documents
/// have a zero hessian, so runs of equal candidates and estimates of 0 are common.
#[test]
fn best_split_under_hessian_counts_equals_brute_force() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let mut found = 0;
    for trial in 0..200 {
        let n = rng.random_range(2..120);
        let nb = rng.random_range(2..60);
        let missing = trial % 3 == 0;
        let bins: Vec<u8> = (0..n)
            .map(|_| {
                if missing && rng.random_bool(0.2) {
                    nb as u8
                } else {
                    // A few bins take most documents: the rest stay empty.
                    (rng.random_range(0..nb).min(rng.random_range(0..nb))) as u8
                }
            })
            .collect();
        let g: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let h: Vec<f64> = (0..n)
            .map(|_| {
                if rng.random_bool(0.4) {
                    0.0
                } else {
                    rng.random_range(0.0..1.0)
                }
            })
            .collect();
        let mut s = settings(
            rng.random_range(1..25),
            [0.0, 0.05][trial % 2],
            [0.0, 1.0][trial / 2 % 2],
        );
        s.leaf_count = ltr_trees::LeafCount::Hessian;
        let docs: Vec<u32> = (0..n as u32).collect();
        let scale = Scale::new(1.0, 1.0, n);
        let gh: Vec<[i64; 2]> = (0..n).map(|i| scale.quantise(g[i], h[i])).collect();
        let all = nb + missing as usize;
        let hist = histogram(&bins, all, &docs, &gh);
        let total = hist.iter().fold(Sums::default(), |a, c| Sums {
            g: a.g + c.g,
            h: a.h + c.h,
            n: a.n + c.n,
        });
        let engine =
            best_split(&hist, missing, total, &scale, &s).map(|b| (b.bin, b.missing_left, b.gain));
        let factor = total.n as f64 / (scale.cell(total).h + 2e-15);
        let estimate: Vec<i64> = hist[..nb]
            .iter()
            .map(|c| (scale.cell(*c).h * factor + 0.5).floor() as i64)
            .collect();
        let (mut on_left, mut on_right): (Option<(usize, bool, f64)>, _) = (None, None);
        for b in 0..nb - 1 {
            let directions: &[bool] = if missing { &[true, false] } else { &[true] };
            for &missing_left in directions {
                let goes_left = |bin: usize| if bin == nb { missing_left } else { bin <= b };
                let mut left = Sums::default();
                for (_, c) in hist.iter().enumerate().filter(|(bin, _)| goes_left(*bin)) {
                    left = Sums {
                        g: left.g + c.g,
                        h: left.h + c.h,
                        n: left.n + c.n,
                    };
                }
                let right = Sums {
                    g: total.g - left.g,
                    h: total.h - left.h,
                    n: total.n - left.n,
                };
                let (l_count, r_count) = if missing_left {
                    let r: i64 = estimate[b + 1..].iter().sum();
                    (total.n - r, r)
                } else {
                    let l: i64 = estimate[..=b].iter().sum();
                    (l, total.n - l)
                };
                let min_n = s.min_docs_in_leaf as i64;
                if left.n < 1 || right.n < 1 || l_count < min_n || r_count < min_n {
                    continue;
                }
                let (l, r) = (scale.cell(left), scale.cell(right));
                if l.h < s.min_hessian_in_leaf || r.h < s.min_hessian_in_leaf {
                    continue;
                }
                let gain = split_gain(l, r, scale.cell(total), s.l2);
                let best = if missing_left {
                    &mut on_left
                } else {
                    &mut on_right
                };
                if gain > 0.0 && best.is_none_or(|e| gain > e.2 || missing_left && gain == e.2) {
                    *best = Some((b, missing_left, gain));
                }
            }
        }
        let brute = match (on_left, on_right) {
            (Some(l), Some(r)) if r.2 > l.2 => Some(r),
            (None, r) => r,
            (l, _) => l,
        };
        assert_eq!(engine, brute, "trial {trial}");
        found += engine.is_some() as usize;
    }
    // Most trials found a split, so the comparison was not between two Nones.
    assert!(found > 100, "{found}");
}

/// A dataset built in Rust (the one way a NaN reaches a learner: the parsers and `ltrkit` refuse it) with missing
/// values: the engine gives them a bin, learns their direction at each split, and predictions on the raw values
/// (NaN included) equal the training-time bin scores.
#[test]
fn missing_values_train_and_predict_alike() {
    let base = synthetic(30, 21);
    let FeatureMatrix::Dense(mut x) = base.features().clone() else {
        panic!("dense")
    };
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let labels = base.labels().to_vec();
    for (i, mut row) in x.rows_mut().into_iter().enumerate() {
        // Feature 0 is missing mostly for relevant documents, so where NaN goes matters; feature 1 at random.
        if labels[i] >= 1.0 && rng.random_bool(0.7) {
            row[0] = f32::NAN;
        }
        if rng.random_bool(0.2) {
            row[1] = f32::NAN;
        }
    }
    let ds = Dataset::new(
        FeatureMatrix::Dense(x),
        labels,
        base.query_offsets().to_vec(),
        base.qids().to_vec(),
    )
    .unwrap();
    for objective in [GbdtParams::lambdamart(), GbdtParams::mart()] {
        let mut p = objective;
        p.trees = 10;
        p.tree.min_docs_in_leaf = 3;
        for max_bin in [255, 8] {
            p.tree.max_bin = max_bin;
            let run = train_gbdt(&p, &ds, &FitContext::new(3)).unwrap();
            assert_eq!(run.forest.score_dataset(&ds), run.train_scores);
            let splits = |f: u32, left: bool| {
                run.forest
                    .trees
                    .iter()
                    .flat_map(|t| t.split_feature.iter().zip(&t.default_left))
                    .filter(|&(&sf, &dl)| sf == f && dl == left)
                    .count()
            };
            // Missing values were sent right somewhere (the old engine always sent them left).
            assert!(splits(0, false) + splits(1, false) > 0, "max-bin {max_bin}");
            // A feature without missing values keeps the default direction.
            assert_eq!(splits(2, false) + splits(3, false), 0);
        }
    }
    let rf = train_random_forest(&RandomForestParams::default(), &ds, &FitContext::new(1)).unwrap();
    assert!(rf.forest.score_dataset(&ds).iter().all(|s| s.is_finite()));
}

/// Best-first growth on raw values, by brute force: every leaf tries every feature and every value of its documents
/// as the threshold "value <= t goes left" (ascending), keeps the largest gain (ties: the earlier feature, the
/// larger t); the leaf with the largest gain splits next (ties: the lower leaf number; the left child keeps the
/// leaf's number, the right one is appended). Returns the splits in order, each as its feature, `t` and the leaf's
/// next value above `t`, and the leaves' Newton values.
#[allow(clippy::type_complexity)]
fn exact_tree(
    columns: &[Vec<f32>],
    g: &[f64],
    h: &[f64],
    leaves: usize,
    min_docs: usize,
) -> (Vec<(u32, f32, f32)>, Vec<f64>) {
    let sums = |docs: &[usize]| {
        let mut c = Cell::default();
        for &i in docs {
            c.g += g[i];
            c.h += h[i];
            c.n += 1.0;
        }
        c
    };
    let best = |docs: &[usize]| -> Option<(f64, usize, f32, f32)> {
        let total = sums(docs);
        let mut best: Option<(f64, usize, f32, f32)> = None;
        for (f, col) in columns.iter().enumerate() {
            let mut values: Vec<f32> = docs.iter().map(|&i| col[i]).collect();
            values.sort_by(f32::total_cmp);
            values.dedup();
            for (&t, &next) in values.iter().zip(values.iter().skip(1)) {
                let left: Vec<usize> = docs.iter().copied().filter(|&i| col[i] <= t).collect();
                let right: Vec<usize> = docs.iter().copied().filter(|&i| col[i] > t).collect();
                if left.len() < min_docs || right.len() < min_docs {
                    continue;
                }
                let gain = split_gain(sums(&left), sums(&right), total, 0.0);
                if gain > 0.0 && best.is_none_or(|b| gain > b.0 || gain == b.0 && b.1 == f) {
                    best = Some((gain, f, t, next));
                }
            }
        }
        best
    };
    let mut sets: Vec<Vec<usize>> = vec![(0..g.len()).collect()];
    let mut splits = Vec::new();
    while sets.len() < leaves {
        let mut pick: Option<(usize, (f64, usize, f32, f32))> = None;
        for (l, docs) in sets.iter().enumerate() {
            if let Some(b) = best(docs) {
                if pick.is_none_or(|p| b.0 > p.1 .0) {
                    pick = Some((l, b));
                }
            }
        }
        let Some((l, (_, f, t, next))) = pick else {
            break;
        };
        let (left, right) = sets[l].iter().partition(|&&i| columns[f][i] <= t);
        sets[l] = left;
        sets.push(right);
        splits.push((f as u32, t, next));
    }
    let values = sets.iter().map(|d| leaf_value(sums(d), 0.0, 1.0)).collect();
    (splits, values)
}

/// With `max-bin` 1000 and `min-data-in-bin` 1, features of more than 255 distinct values (stored two bytes a bin)
/// get a bin per value, so a MART tree equals the exact-threshold tree grown by brute force on the raw values: the
/// same splits, each threshold at the top of the gap between the leaf's values (between the next value up and the
/// value of the whole column just below it).
#[test]
fn wide_bins_grow_the_exact_threshold_tree() {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let (n, nf) = (600, 3);
    // Values on a grid of 1/1000: a few hundred distinct values a feature.
    let columns: Vec<Vec<f32>> = (0..nf)
        .map(|_| {
            (0..n)
                .map(|_| rng.random_range(0..1000) as f32 / 1000.0)
                .collect()
        })
        .collect();
    assert!(columns.iter().all(|c| {
        let mut v = c.clone();
        v.sort_by(f32::total_cmp);
        v.dedup();
        (256..1000).contains(&v.len())
    }));
    let labels: Vec<f32> = (0..n)
        .map(|i| {
            (3.0 * columns[0][i] + 2.0 * columns[1][i] * columns[2][i] + rng.random_range(0.0..0.5))
                .floor()
        })
        .collect();
    let x = ndarray::Array2::from_shape_fn((n, nf), |(i, f)| columns[f][i]);
    let ds = Dataset::new(
        FeatureMatrix::Dense(x),
        labels.clone(),
        (0..=20).map(|q| q * n / 20).collect(),
        (0..20).map(|q| q.to_string()).collect(),
    )
    .unwrap();
    let mut p = GbdtParams::mart();
    p.trees = 1;
    p.learning_rate = 1.0;
    p.tree.leaves = 8;
    p.tree.min_docs_in_leaf = 5;
    p.tree.max_bin = 1000;
    p.tree.min_data_in_bin = 1;
    let run = train_gbdt(&p, &ds, &FitContext::new(1)).unwrap();
    let t = &run.forest.trees[0];
    // MART's first step: gradients base − label, unit hessians.
    let base = run.forest.base_score;
    let g: Vec<f64> = labels.iter().map(|&l| base - l as f64).collect();
    let (splits, values) = exact_tree(&columns, &g, &vec![1.0; n], 8, 5);
    assert_eq!(splits.len(), 7);
    assert_eq!(t.split_feature.len(), splits.len());
    for (k, &(f, at, next)) in splits.iter().enumerate() {
        let below = columns[f as usize]
            .iter()
            .copied()
            .filter(|&v| v < next)
            .fold(f32::NEG_INFINITY, f32::max);
        let tau = t.threshold[k];
        assert_eq!(t.split_feature[k], f, "split {k}");
        assert!(
            at <= tau && below <= tau && tau < next,
            "split {k}: {at} {below} {tau} {next}"
        );
    }
    for (a, b) in t.leaf_value.iter().zip(&values) {
        assert!((a - b).abs() < 1e-12, "{a} {b}");
    }
    assert_eq!(run.forest.score_dataset(&ds), run.train_scores);
    // At 255 bins the same data is binned by quantiles: some threshold differs from the exact tree's.
    p.tree.max_bin = 255;
    let coarse = train_gbdt(&p, &ds, &FitContext::new(1)).unwrap();
    assert_ne!(coarse.forest.trees[0].threshold, t.threshold);
}

/// Exactly: the sums are fixed-point integers.
#[test]
fn histogram_subtraction_equals_direct_accumulation() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let n = 5000;
    let nb = 64;
    let bins: Vec<u8> = (0..n).map(|_| rng.random_range(0..nb) as u8).collect();
    let g: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let h: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..1.0)).collect();
    let scale = Scale::new(1.0, 1.0, n);
    let gh: Vec<[i64; 2]> = (0..n).map(|i| scale.quantise(g[i], h[i])).collect();
    let all: Vec<u32> = (0..n as u32).collect();
    let (small, large): (Vec<u32>, Vec<u32>) = all.iter().partition(|_| rng.random_bool(0.3));
    let parent = histogram(&bins, nb, &all, &gh);
    let by_subtraction = subtract(&parent, &histogram(&bins, nb, &small, &gh));
    let direct = histogram(&bins, nb, &large, &gh);
    assert_eq!(by_subtraction, direct);
    // And the sums are the f64 sums to within their rounding.
    for (b, c) in direct.iter().enumerate() {
        let exact: f64 = large
            .iter()
            .filter(|&&i| bins[i as usize] as usize == b)
            .map(|&i| g[i as usize])
            .sum();
        assert!((scale.cell(*c).g - exact).abs() < 1e-12, "bin {b}");
    }
}

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

fn bits(m: &Model) -> String {
    format!("{m:?}")
}

#[test]
fn models_are_bit_identical_at_one_and_two_threads() {
    let ds = synthetic(30, 4);
    let vali = synthetic(10, 5);
    let measure = |d: &Dataset, s: &[f64]| Ok::<f64, LtrError>(lambda_free_measure(d, s));
    let ctx = FitContext::new(11).with_validation(&vali, &measure);
    let mut lm = GbdtParams::lambdamart();
    lm.trees = 15;
    lm.tree.min_docs_in_leaf = 5;
    lm.tree.feature_fraction = 0.7;
    lm.tree.query_fraction = 0.8;
    let rf = RandomForestParams {
        trees: 8,
        ..Default::default()
    };
    // Sampled pairs come from each query's own seed, and query weights from the context.
    let mut sampled = lm;
    sampled.objective = Objective::LambdaRank(LambdaSettings {
        metric: LambdaMetric::Err { max_grade: 2.0 },
        pairs: PairMethod::Mean { pairs_per_doc: 2 },
        ..LambdaSettings::default()
    });
    let weights: Vec<f64> = (0..ds.n_queries()).map(|q| (q % 3) as f64 * 0.5).collect();
    let weighted = ctx.with_query_weights(&weights);
    let run = |threads: usize| {
        with_threads(threads, || {
            (
                bits(&lm.check_ref().and_then(|v| v.fit(&ds, &ctx)).unwrap().model),
                bits(
                    &GbdtParams {
                        ..GbdtParams::mart()
                    }
                    .check()
                    .unwrap()
                    .check_ref()
                    .and_then(|v| v.fit(&ds, &ctx))
                    .unwrap()
                    .model,
                ),
                bits(&rf.check_ref().and_then(|v| v.fit(&ds, &ctx)).unwrap().model),
                bits(
                    &sampled
                        .check_ref()
                        .and_then(|v| v.fit(&ds, &weighted))
                        .unwrap()
                        .model,
                ),
            )
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert!(one.0.contains("split_feature") && one.3.contains("split_feature"));
    assert_ne!(one.0, one.3);
}

/// A cheap deterministic "measure": mean score of label-2 documents minus the rest.
fn lambda_free_measure(d: &Dataset, s: &[f64]) -> f64 {
    let (mut a, mut b) = (0.0, 0.0);
    for (l, v) in d.labels().iter().zip(s) {
        if *l >= 1.0 {
            a += v;
        } else {
            b += v;
        }
    }
    a - b
}

#[test]
fn predictions_on_training_data_equal_training_time_scores() {
    let ds = synthetic(25, 8);
    let mut sparse = ds.clone();
    sparse.to_sparse();
    for objective in [GbdtParams::lambdamart(), GbdtParams::mart()] {
        let mut p = objective;
        p.trees = 20;
        p.tree.min_docs_in_leaf = 3;
        p.tree.max_bin = 16; // quantile bins: thresholds are bin bounds, not every value
        p.tree.query_fraction = 0.7;
        let run = train_gbdt(&p, &ds, &FitContext::new(2)).unwrap();
        assert_eq!(run.forest.trees.len(), 20);
        assert_eq!(run.forest.score_dataset(&ds), run.train_scores);
        assert_eq!(run.forest.score_dataset(&sparse), run.train_scores);
        // Sparse storage bins to the same model.
        let from_sparse = train_gbdt(&p, &sparse, &FitContext::new(2)).unwrap();
        assert_eq!(from_sparse.forest, run.forest);
        // Cut back to the best round on validation: the kept scores are that round's.
        let vali = synthetic(8, 9);
        let measure = |d: &Dataset, s: &[f64]| Ok::<f64, LtrError>(lambda_free_measure(d, s));
        let ctx = FitContext::new(2).with_validation(&vali, &measure);
        p.stop_after = 3;
        let run = train_gbdt(&p, &ds, &ctx).unwrap();
        assert_eq!(run.forest.score_dataset(&ds), run.train_scores);
        let kept = run.forest.trees.len();
        let best = run.curve.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(run.curve[kept - 1], best);
        assert!(run.trees_grown <= kept + 3);
    }
    let rf = train_random_forest(&RandomForestParams::default(), &ds, &FitContext::new(1)).unwrap();
    assert!(rf.forest.score_dataset(&ds).iter().all(|s| s.is_finite()));
}

#[test]
fn bad_parameters_and_labels_are_refused_by_name() {
    let ds = synthetic(5, 1);
    let ctx = FitContext::new(1);
    let err = |p: GbdtParams| {
        p.check_ref()
            .and_then(|v| v.fit(&ds, &ctx))
            .unwrap_err()
            .to_string()
    };
    let mut p = GbdtParams::lambdamart();
    p.tree.leaves = 1;
    assert!(err(p).contains("leaves"));
    let mut p = GbdtParams::lambdamart();
    p.learning_rate = 0.0;
    assert!(err(p).contains("learning-rate"));
    let mut p = GbdtParams::mart();
    p.tree.feature_fraction = 1.5;
    assert!(err(p).contains("feature-fraction"));
    let mut p = GbdtParams::mart();
    p.tree.max_bin = 65_536;
    assert!(err(p).contains("max-bin"));
    let lambda = |l: LambdaSettings| GbdtParams {
        objective: Objective::LambdaRank(l),
        ..GbdtParams::lambdamart()
    };
    let zero_pairs = LambdaSettings {
        pairs: PairMethod::Mean { pairs_per_doc: 0 },
        ..Default::default()
    };
    assert!(err(lambda(zero_pairs)).contains("pairs-per-doc"));
    let zero_top = LambdaSettings {
        pairs: PairMethod::TopK { truncation: 0 },
        ..Default::default()
    };
    assert!(err(lambda(zero_top)).contains("truncation"));
    let steep = LambdaSettings {
        metric: LambdaMetric::Err { max_grade: 31.0 },
        ..Default::default()
    };
    assert!(err(lambda(steep)).contains("lambda-metric"));
    // Gain lists: 2 to 32 finite gains ≥ 0 that never decrease.
    for (gains, needle) in [
        (&[1.0][..], "2 to 32 gains"),
        (
            &[0.0, 3.0, 1.0],
            "the gain 1 of label 2 is below the gain 3 of label 1",
        ),
        (&[0.0, f64::NAN], "the gain NaN of label 1"),
        (&[-1.0, 0.0], "the gain -1 of label 0"),
        (&[0.0; 33], "got 33"),
    ] {
        let e = GainTable::new(gains).unwrap_err().to_string();
        assert!(e.contains("label-gain") && e.contains(needle), "{e}");
    }
    // Labels a setting cannot weigh, each named.
    let with = |metric, gain| LambdaSettings {
        metric,
        gain,
        ..Default::default()
    };
    let table = LabelGain::Table(GainTable::new(&[0.0, 1.0, 3.0]).unwrap());
    for (s, labels, needle) in [
        (
            with(LambdaMetric::Ndcg, table),
            &[0.0, 3.0][..],
            "label 3 of the training data is beyond the gain list (labels 0 to 2)",
        ),
        (
            with(LambdaMetric::Ndcg, table),
            &[0.5, 1.0],
            "label 0.5 of the training data is not an integer",
        ),
        (
            with(LambdaMetric::Ndcg, LabelGain::Exponential),
            &[1001.0],
            "label 1001 overflows",
        ),
        (
            with(LambdaMetric::Err { max_grade: 2.0 }, LabelGain::Exponential),
            &[3.0],
            "label 3 is above ERR's largest grade 2",
        ),
    ] {
        let e = s.check_labels(labels).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
    assert!(with(LambdaMetric::Ndcg, table)
        .check_labels(&[0.0, 1.0, 2.0])
        .is_ok());
    let mut rf = RandomForestParams::default();
    rf.tree.query_fraction = 0.0;
    assert!(rf
        .check_ref()
        .and_then(|v| v.fit(&ds, &ctx))
        .unwrap_err()
        .to_string()
        .contains("query-fraction"));
    // Only constant features: nothing to split, an ensemble of no trees that scores the base everywhere.
    let flat = Dataset::new(
        FeatureMatrix::Dense(ndarray::Array2::from_elem((4, 2), 0.5)),
        vec![0.0, 1.0, 2.0, 1.0],
        vec![0, 2, 4],
        vec!["a".into(), "b".into()],
    )
    .unwrap();
    for p in [GbdtParams::lambdamart(), GbdtParams::mart()] {
        let run = train_gbdt(&p, &flat, &ctx).unwrap();
        assert!(run.forest.trees.is_empty());
        assert_eq!(run.forest.score_dataset(&flat), run.train_scores);
    }
    let rf = train_random_forest(&RandomForestParams::default(), &flat, &ctx).unwrap();
    assert!(rf.forest.trees.iter().all(|t| t.n_leaves() == 1));
    // A NaN label never reaches a learner: the dataset refuses it.
    let nan = Dataset::new(
        FeatureMatrix::Dense(ndarray::Array2::zeros((2, 1))),
        vec![f32::NAN, 1.0],
        vec![0, 2],
        vec!["q".into()],
    );
    assert!(nan.is_err());
}

#[test]
fn trees_respect_their_shape_limits_and_the_report_names_the_kept_round() {
    let ds = synthetic(30, 12);
    let rows: Vec<_> = (0..ds.n_docs()).map(|i| ds.row(i)).collect();
    for (leaves, max_depth, min_docs) in [(31, 0, 20), (8, 2, 5), (50, 0, 1), (2, 0, 3)] {
        let mut p = GbdtParams::mart();
        p.trees = 3;
        p.tree.leaves = leaves;
        p.tree.max_depth = max_depth;
        p.tree.min_docs_in_leaf = min_docs;
        let run = train_gbdt(&p, &ds, &FitContext::new(1)).unwrap();
        for t in &run.forest.trees {
            assert!(t.n_leaves() <= leaves);
            if max_depth > 0 {
                assert!(t.n_leaves() <= 1 << max_depth);
            }
            let mut count = vec![0usize; t.n_leaves()];
            for r in &rows {
                count[t.leaf_index(r)] += 1;
            }
            assert!(count.iter().all(|&c| c >= min_docs), "{count:?}");
            assert!(t.n_leaves() > 1, "a tree that never split");
        }
    }
    let vali = synthetic(10, 13);
    let measure = |d: &Dataset, s: &[f64]| Ok::<f64, LtrError>(lambda_free_measure(d, s));
    let ctx = FitContext::new(3).with_validation(&vali, &measure);
    let mut p = GbdtParams::lambdamart();
    p.trees = 30;
    p.stop_after = 5;
    p.tree.min_docs_in_leaf = 5;
    let fitted = p.check_ref().and_then(|v| v.fit(&ds, &ctx)).unwrap();
    let Model::Forest(f) = &fitted.model else {
        panic!("not a forest")
    };
    let kept = f.trees.len();
    assert_eq!(fitted.report.selected["trees"], kept.to_string());
    let d = fitted.diagnostics.unwrap();
    assert_eq!(d["best_iteration"], kept);
    let curve = d["validation_curve"].as_array().unwrap();
    assert_eq!(curve[kept - 1].as_f64(), fitted.report.validation);
    assert_eq!(fitted.report.validation, ctx.validate(f).unwrap());
}

#[test]
fn the_forest_reports_an_out_of_bag_measure_only_when_some_query_was_left_out() {
    let ds = synthetic(30, 21);
    let measure = |d: &Dataset, s: &[f64]| Ok::<f64, LtrError>(lambda_free_measure(d, s));
    let ctx = FitContext::new(5).with_measure(&measure);
    let p = RandomForestParams {
        trees: 10,
        ..Default::default()
    };
    let run = train_random_forest(&p, &ds, &ctx).unwrap();
    assert!(run.out_of_bag.is_some_and(|m| m.is_finite()));
    assert!(run.forest.trees.iter().all(|t| t.weight == 0.1));
    let mut all = p;
    all.tree.query_fraction = 1.0;
    assert_eq!(
        train_random_forest(&all, &ds, &ctx).unwrap().out_of_bag,
        None
    );
}

/// The context's epoch observer sees the ensemble after every boosting round: rounds 1, 2, … each with one more
/// tree, the last one the model `fit` returns (no validation, so nothing is truncated).
#[test]
fn the_epoch_observer_sees_each_boosting_round() {
    let ds = synthetic(30, 4);
    let seen = std::sync::Mutex::new(Vec::new());
    let observe = |round: usize, m: &Model| -> ltr_core::Result<()> {
        let Model::Forest(f) = m else {
            panic!("a forest")
        };
        seen.lock().unwrap().push((round, f.trees.len(), bits(m)));
        Ok(())
    };
    let mut p = GbdtParams::lambdamart();
    p.trees = 6;
    let fitted = p
        .check()
        .unwrap()
        .fit(&ds, &FitContext::new(1).with_epoch_observer(&observe))
        .unwrap();
    let seen = seen.into_inner().unwrap();
    let rounds: Vec<(usize, usize)> = seen.iter().map(|(r, n, _)| (*r, *n)).collect();
    assert_eq!(rounds, (1..=6).map(|r| (r, r)).collect::<Vec<_>>());
    assert_eq!(seen.last().unwrap().2, bits(&fitted.model));
    // An observer's error stops the training and is the fit's error.
    let stop = |round: usize, _: &Model| -> ltr_core::Result<()> {
        if round == 2 {
            Err(LtrError::Training("stopped by the observer".into()))
        } else {
            Ok(())
        }
    };
    let e = p
        .check()
        .unwrap()
        .fit(&ds, &FitContext::new(1).with_epoch_observer(&stop))
        .unwrap_err();
    assert!(e.to_string().contains("stopped by the observer"), "{e}");
}
