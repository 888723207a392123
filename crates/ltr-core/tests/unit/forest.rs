use ltr_core::*;
use ltr_data::Row;

/// x0 <= 0.5 → leaf 0 (1.0); else x1 <= 2 → leaf 1 (2.0) else leaf 2 (3.0); NaN of x1 goes right.
fn tree() -> ForestTree {
    ForestTree {
        split_feature: vec![0, 1],
        threshold: vec![0.5, 2.0],
        default_left: vec![true, false],
        left: vec![!0, !1],
        right: vec![1, !2],
        leaf_value: vec![1.0, 2.0, 3.0],
        weight: 0.5,
        split_gain: vec![4.0, 1.0],
    }
}

#[test]
fn walks_thresholds_nan_and_absent_features() {
    let t = tree();
    assert_eq!(t.inconsistency(2), None);
    let out = |x: &[f32]| t.output(&Row::Dense(x));
    assert_eq!(out(&[0.5, 9.0]), 1.0);
    assert_eq!(out(&[0.6, 2.0]), 2.0);
    assert_eq!(out(&[0.6, 2.1]), 3.0);
    assert_eq!(out(&[f32::NAN, 9.0]), 1.0);
    assert_eq!(out(&[0.6, f32::NAN]), 3.0);
    // Sparse row without feature 0: it is 0 and goes left.
    let r = Row::Sparse {
        indices: &[1],
        values: &[5.0],
    };
    assert_eq!(t.output(&r), 1.0);
    let f = Forest {
        trees: vec![tree(), ForestTree::leaf(4.0, 1.0)],
        base_score: 0.25,
        n_features: 2,
    };
    let mut s = [0.0; 2];
    f.score_rows(&[Row::Dense(&[0.0, 0.0]), Row::Dense(&[1.0, 3.0])], &mut s);
    assert_eq!(s, [0.25 + 0.5 + 4.0, 0.25 + 1.5 + 4.0]);
    assert_eq!(f.truncated(1).trees.len(), 1);
    // Importance: each feature splits once; gains weighted by the tree's weight 0.5.
    assert_eq!(f.importance(), (vec![1, 1], vec![2.0, 0.5]));
}

#[test]
fn malformed_trees_are_named() {
    let mut t = tree();
    t.right[0] = 0;
    assert!(t.inconsistency(2).unwrap().contains("follow"));
    let mut t = tree();
    t.leaf_value.pop();
    assert!(t.inconsistency(2).unwrap().contains("leaves"));
    assert!(tree().inconsistency(1).unwrap().contains("malformed"));
    let mut t = tree();
    t.right[1] = !0;
    assert!(t.inconsistency(2).unwrap().contains("shared"));
}
