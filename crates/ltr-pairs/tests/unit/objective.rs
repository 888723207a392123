use ltr_data::Dataset;
use ltr_pairs::objective::{sort_by_score, sort_by_score_from};
use ltr_pairs::*;

/// `n` Hessian-product directions for the bit-for-bit tests: zeros of both signs, small integers and fractions.
pub(super) fn random_direction(rng: &mut impl rand::Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| match rng.random_range(0..5) {
            0 => 0.0,
            1 => -0.0,
            2 => rng.random_range(-3..3) as f64,
            _ => rng.random::<f64>() - 0.5,
        })
        .collect()
}

/// A click training set of `base`: for every query and each of its documents, a copy of the query's whole list
/// with that document clicked (label 1) and the others not (label 0), as `ltr_clicks` builds one per session; and
/// the `base` row of each of its rows.
pub(super) fn one_click_copies(base: &Dataset) -> (Dataset, Vec<usize>) {
    let (mut rows, mut labels, mut offsets, mut qids) =
        (Vec::new(), Vec::new(), vec![0], Vec::new());
    for q in 0..base.n_queries() {
        for clicked in base.query_range(q) {
            for r in base.query_range(q) {
                rows.push(r);
                labels.push(if r == clicked { 1.0 } else { 0.0 });
            }
            offsets.push(rows.len());
            qids.push(format!("{q}/{clicked}"));
        }
    }
    let ds = Dataset::new(base.select_rows_matrix(&rows), labels, offsets, qids).unwrap();
    (ds, rows)
}

/// The one-top Hessian is the general sweeps' bit for bit, on click-style queries (one document over the others)
/// with tied scores, margins of exactly 1, scores far beyond 2⁵³ (where 1 − s_i + s_j rounds), zero and negative
/// zero directions, and zero pair or query weights.
#[test]
fn the_one_top_hessian_is_the_sweeps_bit_for_bit() {
    use ltr_data::{generate_letor_like, SyntheticConfig};
    use rand::{Rng, SeedableRng};
    let base = generate_letor_like(&SyntheticConfig {
        queries: 6,
        min_docs: 2,
        max_docs: 30,
        features: 3,
        seed: 5,
        ..Default::default()
    })
    .unwrap();
    let (ds, _) = one_click_copies(&base);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for round in 0..40 {
        let scale = [0.5, 1.0, 1e17, 3e300][round % 4];
        let scores: Vec<f64> = (0..ds.n_docs())
            .map(|_| rng.random_range(-6..6) as f64 * scale)
            .collect();
        let p = random_direction(&mut rng, ds.n_docs());
        let mut obj = PairwiseObjective::new(&ds, PairLoss::SquaredHinge)
            .with_level_weights(LevelWeights::uniform(2).scaled([1.0, 0.0, 0.3][round % 3]));
        if round % 5 == 1 {
            obj = obj.with_query_weights((0..ds.n_queries()).map(|q| (q % 3) as f64).collect());
        }
        let g = obj.gradient(&scores);
        for q in 0..ds.n_queries() {
            let r = ds.query_range(q);
            let order = &g.order[r.clone()];
            let (mut fast, mut sweeps) = (vec![9.0; r.len()], vec![7.0; r.len()]);
            obj.query_hessian(q, &scores, order, &p[r.clone()], &mut fast);
            obj.query_hessian_sweeps(q, &scores, order, &p[r.clone()], &mut sweeps);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&fast), bits(&sweeps), "round {round} query {q}");
        }
    }
}

/// A sort started from any permutation ([`sort_by_score_from`]: nearly sorted, reversed, shuffled, the order of
/// other scores) is [`sort_by_score`]'s, whether the insertion finishes it or gives up half way.
#[test]
fn a_sort_from_any_order_is_the_keyed_sort() {
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    for n in [0usize, 1, 2, 3, 17, 150, 1000] {
        for round in 0..8 {
            let scores: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..5) {
                    0 => [0.0, -0.0, f64::NAN, f64::INFINITY][rng.random_range(0..4)],
                    1 => rng.random_range(-3..3) as f64,
                    _ => rng.random::<f64>() * 2.0 - 1.0,
                })
                .collect();
            let mut want = vec![0u32; n];
            sort_by_score(&mut want, &scores);
            let mut start: Vec<u32> = match round % 4 {
                0 => want.clone(),
                1 => want.iter().rev().copied().collect(),
                2 => (0..n as u32).collect(),
                _ => want.clone(),
            };
            match round {
                4..=5 => {
                    // A few neighbours swapped: what a probe a little further along sees.
                    for _ in 0..n / 10 {
                        let i = rng.random_range(0..n - 1);
                        start.swap(i, i + 1);
                    }
                }
                6..=7 => start.shuffle(&mut rng),
                _ => {}
            }
            sort_by_score_from(&mut start, &scores);
            assert_eq!(start, want, "n {n} round {round}");
        }
    }
}

/// The keyed sort is the comparator sort's permutation: ties by index, −0 before +0, NaNs and infinities where
/// `total_cmp` puts them, on random scores with many ties.
#[test]
fn keyed_sort_is_the_total_order_sort() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let specials = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        1e-310,
        -1e-310,
    ];
    for n in [0usize, 1, 2, 3, 17, 150, 1000] {
        let scores: Vec<f64> = (0..n)
            .map(|_| match rng.random_range(0..4) {
                0 => specials[rng.random_range(0..specials.len())],
                1 => rng.random_range(-3..3) as f64,
                _ => rng.random::<f64>() * 2.0 - 1.0,
            })
            .collect();
        let mut expected: Vec<u32> = (0..n as u32).collect();
        expected.sort_by(|&a, &b| {
            scores[a as usize]
                .total_cmp(&scores[b as usize])
                .then(a.cmp(&b))
        });
        let mut order = vec![u32::MAX; n];
        sort_by_score(&mut order, &scores);
        assert_eq!(order, expected, "{scores:?}");
    }
}
