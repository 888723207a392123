//! The tree engine against brute force and hand computations, its determinism across thread counts, the agreement
//! of training-time (binned) scores with predictions on raw features, and parameter checks. The gradients are in
//! `gradients.rs`.

use ltr_core::{Fit, FitContext, LtrError, Model, ParamGuard, Scorer};
use ltr_data::{generate_letor_like, Dataset, FeatureMatrix, SyntheticConfig};
use ltr_trees::{
    best_split, histogram, leaf_value, split_gain, subtract, train_gbdt, train_random_forest, Cell,
    GainTable, GbdtParams, GrowSettings, LabelGain, LambdaMetric, LambdaSettings, Objective,
    PairMethod, RandomForestParams, Scale, Sums,
};
use rand::{Rng, SeedableRng};

use crate::common::{brute_split, with_threads};
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
        let total = brute_split::total(&hist);
        let engine =
            best_split(&hist, missing, total, &scale, &s).map(|b| (b.bin, b.missing_left, b.gain));
        let estimate = brute_split::estimated_counts(&hist[..nb], total, &scale);
        let (mut on_left, mut on_right): (Option<(usize, bool, f64)>, _) = (None, None);
        for b in 0..nb - 1 {
            let directions: &[bool] = if missing { &[true, false] } else { &[true] };
            for &missing_left in directions {
                let goes_left = |bin: usize| if bin == nb { missing_left } else { bin <= b };
                let left = hist
                    .iter()
                    .enumerate()
                    .filter(|(bin, _)| goes_left(*bin))
                    .fold(Sums::default(), |a, (_, c)| brute_split::plus(a, *c));
                let counts = if missing_left {
                    let r: i64 = estimate[b + 1..].iter().sum();
                    (total.n - r, r)
                } else {
                    let l: i64 = estimate[..=b].iter().sum();
                    (l, total.n - l)
                };
                let Some(gain) = brute_split::allowed_gain(&s, &scale, total, left, counts) else {
                    continue;
                };
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

/// Leaves of more than 65,536 documents are partitioned, gathered and summed in parallel pieces and a tree grown on
/// every document adds its leaf values by blocks: the same model as one thread's serial passes.
#[test]
fn large_leaves_give_the_same_model_at_one_two_and_three_threads() {
    let ds = synthetic(6000, 8);
    assert!(ds.n_docs() > 2 * 65_536, "{}", ds.n_docs());
    let ctx = FitContext::new(3);
    let mut lm = GbdtParams::lambdamart();
    lm.trees = 3;
    let run = |threads: usize| {
        with_threads(threads, || {
            bits(&lm.check_ref().and_then(|v| v.fit(&ds, &ctx)).unwrap().model)
        })
    };
    let one = run(1);
    assert!(one.contains("split_feature"));
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
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
