//! Tests of `src/folds.rs`.

use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};
use ltr_experiment::*;

fn data() -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 53,
        min_docs: 5,
        max_docs: 30,
        features: 6,
        grades: 3,
        noise: 0.5,
        outlier_fraction: 0.0,
        query_level_norm: true,
        seed: 3,
    })
    .unwrap()
}

#[test]
fn kfold_is_a_stratified_partition_by_query() {
    let ds = data();
    let parts = stratified_kfold(&ds, 5, 11).unwrap();
    let mut all: Vec<usize> = parts.iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..53).collect::<Vec<_>>());
    // 53 queries in 5 parts: sizes 11, 11, 11, 10, 10.
    let sizes: Vec<usize> = parts.iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![11, 11, 11, 10, 10]);
    // Stratified: every part's number of queries without a relevant document is within one of the others'.
    let zero = |p: &Vec<usize>| {
        p.iter()
            .filter(|&&q| ds.query(q).labels().iter().all(|&l| l <= 0.0))
            .count()
    };
    let z: Vec<usize> = parts.iter().map(zero).collect();
    assert!(
        z.iter().max().unwrap() - z.iter().min().unwrap() <= 1,
        "{z:?}"
    );
    // Seeded: the same seed gives the same split, another seed another one.
    assert_eq!(parts, stratified_kfold(&ds, 5, 11).unwrap());
    assert_ne!(parts, stratified_kfold(&ds, 5, 12).unwrap());
    assert!(stratified_kfold(&ds, 1, 0).is_err());
    assert!(stratified_kfold(&ds, 54, 0).is_err());
}

#[test]
fn validation_is_carved_by_share() {
    let ds = data();
    let (t, v) = carve_validation(&ds, 0.25, 4);
    let v = v.unwrap();
    assert_eq!(v.n_queries(), 13); // floor(53 / 4)
    assert_eq!(t.n_queries() + v.n_queries(), 53);
    assert_eq!(t.n_docs() + v.n_docs(), ds.n_docs());
    let (t0, v0) = carve_validation(&ds, 0.0, 4);
    assert!(v0.is_none());
    assert_eq!(t0.n_queries(), 53);
}
