//! Tests of `src/grow.rs`.

use ltr_trees::*;

use crate::common::brute_split;

/// to half a unit.
#[test]
fn fixed_point_sums_cannot_overflow_and_round_trip() {
    for (max, docs) in [
        (1.0, 1usize),
        (0.75, 9630),
        (3e5, 3_776_267),
        (1e-300, 10),
        (1e300, 10),
    ] {
        let s = Scale::new(max, max, docs);
        let q = s.quantise(max, -max);
        assert!(
            (q[0] as i128).abs() * docs as i128 <= 1i128 << 62,
            "{max} {docs}"
        );
        let back = s.cell(Sums {
            g: q[0],
            h: q[1],
            n: 1,
        });
        assert!((back.g - max).abs() <= 0.5 * s.g_unit, "{max}: {}", back.g);
    }
    // Nothing but zeros: any scale.
    assert_eq!(Scale::new(0.0, 0.0, 5).quantise(0.0, 0.0), [0, 0]);
}

/// `best_split` of features without a missing bin, one- and two-byte sized (2 to 700 bins, most empty, so runs of
/// equal candidates are long), under both document counts, with negative hessians in some trials (the estimate's
/// fallback) and gains that tie (bins of documents whose gradient and hessian are 0), against a brute force over the
/// histogram's thresholds: the same bin, gain (bit for bit) and left side. Ties: the larger bin.
#[test]
fn best_split_of_many_sparse_bins_equals_brute_force() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let mut found = 0;
    for trial in 0..400 {
        let nb = rng.random_range(2..700);
        let negative = trial % 5 == 0;
        let empty = rng.random_range(0.0..0.95);
        let hist: Vec<Sums> = (0..nb)
            .map(|_| {
                if rng.random_bool(empty) {
                    return Sums::default();
                }
                let n = rng.random_range(1..6);
                if rng.random_bool(0.3) {
                    // Documents of a query of one grade: the thresholds either side of the bin tie.
                    return Sums { g: 0, h: 0, n };
                }
                let h = if negative && rng.random_bool(0.1) {
                    -rng.random_range(1..1000)
                } else if rng.random_bool(0.3) {
                    0
                } else {
                    rng.random_range(0..1000) << 20
                };
                let g = rng.random_range(-1000..1000i64) << 20;
                Sums { g, h, n }
            })
            .collect();
        let total = brute_split::total(&hist);
        let scale = Scale::new(1.0, 1.0, 5000);
        let s = GrowSettings {
            leaves: 31,
            max_depth: 0,
            min_docs_in_leaf: rng.random_range(0..30),
            min_hessian_in_leaf: [0.0, 1e-9][trial % 2],
            leaf_count: [LeafCount::Documents, LeafCount::Hessian][trial / 2 % 2],
            l2: [0.0, 1.0][trial / 4 % 2],
            shrinkage: 1.0,
        };
        let engine = best_split(&hist, false, total, &scale, &s).map(|b| (b.bin, b.gain, b.left));
        let estimate = brute_split::estimated_counts(&hist, total, &scale);
        let mut brute: Option<(usize, f64, Sums)> = None;
        let mut left = Sums::default();
        for b in 0..nb - 1 {
            left = brute_split::plus(left, hist[b]);
            let counts = match s.leaf_count {
                LeafCount::Documents => (left.n, total.n - left.n),
                LeafCount::Hessian => {
                    let r: i64 = estimate[b + 1..].iter().sum();
                    (total.n - r, r)
                }
            };
            let Some(gain) = brute_split::allowed_gain(&s, &scale, total, left, counts) else {
                continue;
            };
            if gain > 0.0 && brute.is_none_or(|e| gain >= e.1) {
                brute = Some((b, gain, left));
            }
        }
        assert_eq!(engine, brute, "trial {trial}");
        found += engine.is_some() as usize;
    }
    assert!(found > 100, "{found}");
}
