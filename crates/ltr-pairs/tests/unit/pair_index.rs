use ltr_data::Dataset;
use ltr_pairs::*;
use ltr_pairs::{PairScheme, PairSet};

fn dataset() -> Dataset {
    ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 12,
        min_docs: 1,
        max_docs: 25,
        features: 3,
        seed: 7,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn the_index_numbers_exactly_the_pairs_of_the_pair_set() {
    let ds = dataset();
    let index = PairIndex::new(&ds);
    let set = PairSet::build(&ds, &PairScheme::AllDifferent);
    assert_eq!(index.len(), set.len() as u64);
    assert_eq!(index.n_queries(), ds.n_queries());
    for q in 0..ds.n_queries() {
        assert_eq!(index.query_len(q), set.query(q).len() as u64);
        let mut from_index: Vec<(u32, u32)> = (index.query_pairs[q]..index.query_pairs[q + 1])
            .map(|k| {
                let p = index.pair(k);
                assert_eq!(p.query as usize, q);
                (p.hi, p.lo)
            })
            .collect();
        from_index.sort_unstable();
        let from_set: Vec<(u32, u32)> = set.query(q).iter().map(|p| (p.hi, p.lo)).collect();
        assert_eq!(from_index, from_set, "query {q}");
    }
    assert!(index.memory_bytes() < (set.len() * 8) as u64);
}

#[test]
fn a_dataset_without_pairs_has_an_empty_index() {
    let ds = Dataset::new(
        ltr_data::FeatureMatrix::Dense(ndarray::Array2::zeros((5, 2))),
        vec![1.0; 5],
        vec![0, 2, 5],
        vec!["a".into(), "b".into()],
    )
    .unwrap();
    let index = PairIndex::new(&ds);
    assert!(index.is_empty());
    assert_eq!(index.n_queries(), ds.n_queries());
}

#[test]
fn the_permutation_visits_every_number_once_and_depends_on_the_keys() {
    for n in [0u64, 1, 2, 3, 5, 17, 64, 100, 1000, 4097] {
        let p = PairPermutation::new(n, [1, 2, 3, 4]);
        let mut seen: Vec<u64> = p.iter().collect();
        assert_eq!(seen.len() as u64, n);
        seen.sort_unstable();
        assert!(seen.iter().copied().eq(0..n), "n = {n}");
    }
    let a: Vec<u64> = PairPermutation::new(1000, [1, 2, 3, 4]).iter().collect();
    let b: Vec<u64> = PairPermutation::new(1000, [5, 6, 7, 8]).iter().collect();
    assert_ne!(a, b);
    // Not the identity, and no long ascending runs: consecutive steps jump about.
    let ascending = a.windows(2).filter(|w| w[1] == w[0] + 1).count();
    assert!(ascending < 20, "{ascending} consecutive numbers in a row");
}
