use ltr_core::*;
use ltr_data::{generate_letor_like, Row, SyntheticConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Values that sit on the edges of `v <= t`: signed zeros, infinities, NaN, and a few ordinary numbers that
/// also serve as thresholds, so that many values equal a threshold exactly.
const EDGES: [f32; 10] = [
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    1.0,
    -1.5,
    0.25,
    3.0,
    f32::MIN_POSITIVE,
];

fn value(rng: &mut ChaCha8Rng) -> f32 {
    if rng.random_bool(0.6) {
        EDGES[rng.random_range(0..EDGES.len())]
    } else {
        rng.random_range(-4.0f32..4.0)
    }
}

/// A tree grown by splitting random leaves `n_leaves − 1` times; new nodes follow their parents, leaf numbers
/// and sides are shuffled, thresholds come from `value` (never NaN).
fn random_tree(rng: &mut ChaCha8Rng, n_features: usize, n_leaves: usize) -> ForestTree {
    let mut t = ForestTree::leaf(rng.random_range(-2.0..2.0), rng.random_range(0.1..1.5));
    // Where each leaf hangs: (internal node, is left child); the root leaf hangs nowhere.
    let mut parent_of_leaf: Vec<Option<(usize, bool)>> = vec![None];
    while t.leaf_value.len() < n_leaves {
        let leaf = rng.random_range(0..t.leaf_value.len());
        let node = t.split_feature.len();
        let new_leaf = t.leaf_value.len();
        let threshold = loop {
            let v = value(rng);
            if !v.is_nan() {
                break v;
            }
        };
        t.split_feature.push(rng.random_range(0..n_features) as u32);
        t.threshold.push(threshold);
        t.default_left.push(rng.random_bool(0.5));
        let old_left = rng.random_bool(0.5);
        let (l, r) = if old_left {
            (!(leaf as i32), !(new_leaf as i32))
        } else {
            (!(new_leaf as i32), !(leaf as i32))
        };
        t.left.push(l);
        t.right.push(r);
        if let Some((p, is_left)) = parent_of_leaf[leaf] {
            let side = if is_left {
                &mut t.left[p]
            } else {
                &mut t.right[p]
            };
            *side = node as i32;
        }
        parent_of_leaf[leaf] = Some((node, old_left));
        parent_of_leaf.push(Some((node, !old_left)));
        t.leaf_value.push(rng.random_range(-2.0..2.0));
    }
    t
}

fn random_forest(rng: &mut ChaCha8Rng, n_features: usize, n_trees: usize) -> Forest {
    let trees = (0..n_trees)
        .map(|_| {
            // One leaf, up to 32 (u32), 33 to 64 (u64), beyond 64 (walked).
            let n_leaves = match rng.random_range(0..10) {
                0 => 1,
                1..=5 => rng.random_range(2..=32),
                6..=8 => rng.random_range(33..=64),
                _ => rng.random_range(65..=90),
            };
            random_tree(rng, n_features, n_leaves)
        })
        .collect();
    Forest {
        trees,
        base_score: rng.random_range(-1.0..1.0),
        n_features,
    }
}

fn assert_same_bits(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        assert_eq!(x.to_bits(), y.to_bits(), "document {k}: {x} vs {y}");
    }
}

#[test]
fn random_forests_score_as_the_walk_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(40);
    let n_features = 6;
    for _ in 0..12 {
        let forest = random_forest(&mut rng, n_features, 25);
        assert_eq!(forest.inconsistency(), None);
        let compiled = forest.compile();
        // Dense rows of every width up to one past the model's (a short row's missing columns are 0), and
        // sparse rows holding a random subset of the columns, some beyond the model's.
        let dense: Vec<Vec<f32>> = (0..70)
            .map(|_| {
                let width = rng.random_range(0..=n_features + 1);
                (0..width).map(|_| value(&mut rng)).collect()
            })
            .collect();
        let sparse: Vec<(Vec<u32>, Vec<f32>)> = (0..70)
            .map(|_| {
                let cols: Vec<u32> = (0..n_features as u32 + 2)
                    .filter(|_| rng.random_bool(0.5))
                    .collect();
                let vals = cols.iter().map(|_| value(&mut rng)).collect();
                (cols, vals)
            })
            .collect();
        let mut rows: Vec<Row<'_>> = dense.iter().map(|x| Row::Dense(x)).collect();
        rows.extend(sparse.iter().map(|(i, v)| Row::Sparse {
            indices: i,
            values: v,
        }));
        let mut walked = vec![0.0; rows.len()];
        forest.score_rows(&rows, &mut walked);
        let mut fast = vec![f64::NAN; rows.len()];
        compiled.score_rows(&rows, &mut fast);
        assert_same_bits(&fast, &walked);
        // A block cut short (fewer rows than lanes) scores the same.
        let mut short = vec![0.0; 5];
        compiled.score_rows(&rows[3..8], &mut short);
        assert_same_bits(&short, &walked[3..8]);
    }
}

#[test]
fn datasets_and_queries_score_as_the_walk_dense_and_sparse() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut ds = generate_letor_like(&SyntheticConfig {
        queries: 9,
        features: 5,
        ..Default::default()
    })
    .unwrap();
    let mut forest = random_forest(&mut rng, 5, 30);
    // Thresholds on the data's own values, so documents land on both sides and on the thresholds.
    for t in &mut forest.trees {
        for (k, f) in t.split_feature.iter().enumerate() {
            t.threshold[k] = ds.row(rng.random_range(0..ds.n_docs())).get(*f as usize);
        }
    }
    for _ in 0..2 {
        let mut walked = vec![0.0; ds.n_docs()];
        let offsets = ds.query_offsets().to_vec();
        for q in 0..ds.n_queries() {
            let view = ds.query(q);
            let rows: Vec<Row<'_>> = (0..view.len()).map(|i| view.row(i)).collect();
            forest.score_rows(&rows, &mut walked[offsets[q]..offsets[q + 1]]);
        }
        assert_same_bits(&forest.score_dataset(&ds), &walked);
        let compiled = forest.compile();
        for q in 0..ds.n_queries() {
            let mut s = vec![0.0; offsets[q + 1] - offsets[q]];
            compiled.score_query(&ds.query(q), &mut s);
            assert_same_bits(&s, &walked[offsets[q]..offsets[q + 1]]);
        }
        ds.to_sparse();
    }
}

#[test]
fn trees_that_are_not_trees_are_walked_as_before() {
    // x0 <= 0.5 → node 1, else leaf 2; node 1: x1 <= 2 → leaf 0 else leaf 1.
    let good = ForestTree {
        split_feature: vec![0, 1],
        threshold: vec![0.5, 2.0],
        default_left: vec![true, false],
        left: vec![1, !0],
        right: vec![!2, !1],
        leaf_value: vec![1.0, 2.0, 3.0],
        weight: 0.5,
        split_gain: vec![],
    };
    // Node 1 reached from both sides of the root, and node 2 from nowhere.
    let mut shared = good.clone();
    shared.split_feature.push(0);
    shared.threshold.push(0.0);
    shared.default_left.push(true);
    shared.left.push(!2);
    shared.right.push(!3);
    shared.right[0] = 1;
    shared.leaf_value.push(4.0);
    // A NaN threshold: every number goes right.
    let mut nan = good.clone();
    nan.threshold[1] = f32::NAN;
    // A split on a feature beyond the forest's.
    let mut wide = good.clone();
    wide.split_feature[1] = 7;
    let forest = Forest {
        trees: vec![good, shared, nan, wide],
        base_score: 0.125,
        n_features: 2,
    };
    let compiled = forest.compile();
    let kinds: Vec<_> = compiled.slots.iter().map(|s| format!("{s:?}")).collect();
    assert!(kinds[0].starts_with("Narrow"), "{kinds:?}");
    assert!(
        kinds[1..].iter().all(|k| k.starts_with("Walked")),
        "{kinds:?}"
    );
    let xs: [&[f32]; 5] = [
        &[0.0, 0.0],
        &[0.0, 3.0],
        &[1.0, 0.0],
        &[f32::NAN, 9.0],
        &[0.5],
    ];
    let rows: Vec<Row<'_>> = xs.iter().map(|x| Row::Dense(x)).collect();
    let (mut walked, mut fast) = (vec![0.0; 5], vec![0.0; 5]);
    forest.score_rows(&rows, &mut walked);
    compiled.score_rows(&rows, &mut fast);
    assert_same_bits(&fast, &walked);
    // By hand, row 0 (0, 0): good → leaf 0 (1.0); shared → node 1 → leaf 0 (1.0); nan → `0 <= NaN` is false
    // → leaf 1 (2.0); wide → x7 is 0 → leaf 0 (1.0). Each counts 0.5×.
    assert_eq!(walked[0], 0.125 + 0.5 * (1.0 + 1.0 + 2.0 + 1.0));
}
