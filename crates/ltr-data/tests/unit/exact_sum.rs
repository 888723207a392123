//! Tests of `src/exact_sum.rs`.

use ltr_data::*;
use rand::{Rng, SeedableRng};
use xsum::{Xsum, XsumAuto};

fn exact(values: &[f64]) -> f64 {
    let mut acc = ExactVec::new(1);
    for &v in values {
        acc.add(0, v);
    }
    acc.value(0)
}

/// The correctly rounded sum, by the `xsum` crate. xsum 0.1.6 rounds an exact negative result one unit away
/// from zero (the sum of [−1.0] comes out as −1.0000000000000002; of [−3.0, 2.0] the same), while its positive
/// results are right, so a negative sum is taken as the negated sum of the negated values (negation is exact).
fn oracle(values: &[f64]) -> f64 {
    let xsum = |values: &[f64]| {
        let mut x = XsumAuto::new();
        x.add_list(values);
        x.sum()
    };
    let sum = xsum(values);
    if sum < 0.0 {
        -xsum(&values.iter().map(|v| -v).collect::<Vec<_>>())
    } else {
        sum
    }
}

#[test]
fn the_oracle_is_right_on_exact_negative_sums() {
    assert_eq!(oracle(&[-1.0]), -1.0);
    assert_eq!(oracle(&[-3.0, 2.0]), -1.0);
    assert_eq!(oracle(&[-5.0, 2.0, 0.25]), -2.75);
    assert_eq!(oracle(&[0.1, -0.3]), 0.1 - 0.3);
}

#[test]
fn cancellation_that_plain_sums_lose() {
    assert_eq!(exact(&[1e100, 1.0, -1e100]), 1.0);
    assert_eq!(exact(&[1e100, 1.0, -1e100, 1e-300]), 1.0);
    assert_eq!(exact(&[0.1, 0.2, -0.3]), 2.7755575615628914e-17);
    assert_eq!(exact(&[-0.5, -0.25]), -0.75);
    assert_eq!(exact(&[f64::MAX, f64::MAX, -f64::MAX]), f64::MAX);
    assert_eq!(exact(&[5e-324, 5e-324]), 1e-323);
    assert_eq!(exact(&[]), 0.0);
}

#[test]
fn non_finite_values_give_what_ieee_addition_gives() {
    assert_eq!(exact(&[1.0, f64::INFINITY]), f64::INFINITY);
    assert_eq!(exact(&[1.0, f64::NEG_INFINITY]), f64::NEG_INFINITY);
    assert!(exact(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
    assert!(exact(&[1.0, f64::NAN]).is_nan());
}

#[test]
fn agrees_with_the_xsum_oracle_on_wide_random_values() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    for trial in 0..300 {
        let n = rng.random_range(1..400);
        let spread = [2, 20, 300][trial % 3];
        let values: Vec<f64> = (0..n)
            .map(|_| {
                let m: f64 = rng.random_range(-1.0..1.0);
                m * 10f64.powi(rng.random_range(-spread..=spread))
            })
            .collect();
        assert_eq!(
            exact(&values).to_bits(),
            oracle(&values).to_bits(),
            "trial {trial}"
        );
    }
}

#[test]
fn order_and_split_do_not_change_a_bit() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let values: Vec<f64> = (0..5000)
        .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-30..30)))
        .collect();
    let whole = exact(&values);
    let mut reversed = values.clone();
    reversed.reverse();
    assert_eq!(exact(&reversed).to_bits(), whole.to_bits());
    for parts in [2, 3, 7] {
        let mut total = ExactVec::new(1);
        for chunk in values.chunks(values.len() / parts + 1) {
            let mut part = ExactVec::new(1);
            for &v in chunk {
                part.add(0, v);
            }
            total.merge(&part);
        }
        assert_eq!(total.value(0).to_bits(), whole.to_bits(), "{parts} parts");
    }
    // Plain summation does depend on the order here (else this test would prove nothing).
    let forward: f64 = values.iter().sum();
    let backward: f64 = reversed.iter().sum();
    assert_ne!(forward.to_bits(), backward.to_bits());
}

#[test]
fn windows_that_overflow_or_miss_their_range_spill_exactly() {
    // The lowest bit of 2³⁷·(2 − 2⁻⁵²) lies 73 bits above the unit of a window opened by 1.0, so the window
    // holds one of them and overflows at the second.
    let big = (2.0 - f64::EPSILON) * 2f64.powi(37);
    let cases: Vec<Vec<f64>> = vec![
        vec![1.0, big, big, big, -big, 3.0],
        vec![1.0, 1e-30, 1e30, -1.0, 1e-30, -1e30],
        vec![1e-300, 1e300, -1e300, 5e-324],
        vec![f64::MAX, 1.0, f64::MAX, -f64::MAX, -f64::MAX],
        // Shrinking values lower the window's unit while the count fits, then spill.
        (0..200)
            .map(|k| 0.7f64.powi(k) * if k % 2 == 0 { 1.0 } else { -3.0 })
            .collect(),
        (0..60).map(|k| 1e-6f64.powi(k % 30) * 1.5).collect(),
        (0..1000)
            .map(|k| if k % 3 == 0 { -big } else { 1.0 + k as f64 })
            .collect(),
    ];
    for values in cases {
        assert_eq!(
            exact(&values).to_bits(),
            oracle(&values).to_bits(),
            "{values:?}"
        );
    }
}

#[test]
fn merges_of_windows_with_different_units_and_of_limbs_are_exact() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
    for trial in 0..200 {
        let n = rng.random_range(2..300);
        let spread = [3, 40, 300][trial % 3];
        let values: Vec<f64> = (0..n)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-spread..=spread)))
            .collect();
        let mut parts: Vec<ExactVec> = values
            .chunks(rng.random_range(1..=n))
            .map(|chunk| {
                let mut part = ExactVec::new(1);
                for &v in chunk {
                    part.add(0, v);
                }
                part
            })
            .collect();
        // Some parts in limb form, as a collective leaves them.
        for part in parts.iter_mut().step_by(2) {
            part.normalise();
        }
        let mut forward = ExactVec::new(1);
        for part in &parts {
            forward.merge(part);
        }
        let mut backward = ExactVec::new(1);
        for part in parts.iter().rev() {
            backward.merge(part);
        }
        let want = oracle(&values).to_bits();
        assert_eq!(forward.value(0).to_bits(), want, "trial {trial}");
        assert_eq!(backward.value(0).to_bits(), want, "trial {trial}");
        forward.normalise();
        assert_eq!(
            forward.value(0).to_bits(),
            want,
            "trial {trial}, normalised"
        );
    }
}

#[test]
fn limbs_summed_as_integers_are_the_merged_sum() {
    let (mut a, mut b) = (ExactVec::new(2), ExactVec::new(2));
    a.add_all(&[1.5, -3e-200]);
    b.add_all(&[-0.25, 7e150]);
    let mut merged = a.clone();
    merged.merge(&b);
    a.normalise();
    b.normalise();
    for (x, y) in a.limbs_mut().iter_mut().zip(b.limbs()) {
        *x += y;
    }
    a.normalise();
    assert_eq!(a.values(), merged.values());
    assert_eq!(a.values(), vec![1.25, 7e150]);
}

/// Columns of `rows` (each row one call of `add_and_clear`), summed by the oracle.
fn column_oracle(rows: &[Vec<f64>], j: usize) -> f64 {
    oracle(&rows.iter().map(|r| r[j]).collect::<Vec<_>>())
}

/// Rows of partial sums as a query leaves them: per column a typical size, values within a few powers of two
/// of it, scattered zeros, and now and then a value far outside any tier's range.
fn partial_rows(rng: &mut rand_chacha::ChaCha8Rng, n_rows: usize, width: usize) -> Vec<Vec<f64>> {
    let scales: Vec<f64> = (0..width)
        .map(|_| 10f64.powi(rng.random_range(-12..12)))
        .collect();
    (0..n_rows)
        .map(|_| {
            scales
                .iter()
                .map(|&scale| match rng.random_range(0..40) {
                    0..=2 => 0.0,
                    3 => rng.random_range(-1.0..1.0) * 1e-40 * scale,
                    4 => rng.random_range(-1.0..1.0) * 1e40 * scale,
                    5 => -0.0,
                    _ => rng.random_range(-1.0..1.0) * scale * 2f64.powi(rng.random_range(-6..6)),
                })
                .collect()
        })
        .collect()
}

#[test]
fn whole_vectors_through_the_tier_sum_what_the_oracle_sums() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
    for trial in 0..40 {
        let width = rng.random_range(1..40);
        let n_rows = rng.random_range(1..700);
        let rows = partial_rows(&mut rng, n_rows, width);
        let mut acc = ExactVec::new(width + 2);
        for row in &rows {
            let mut buffer = row.clone();
            acc.add_and_clear(1, &mut buffer);
            assert!(buffer.iter().all(|&v| v == 0.0), "the buffer is cleared");
        }
        for j in 0..width {
            let want = column_oracle(&rows, j).to_bits();
            assert_eq!(acc.value(j + 1).to_bits(), want, "trial {trial}, sum {j}");
        }
        assert_eq!(acc.value(0), 0.0);
        // Normalised (tier flushed into the limbs, as a collective ships it) the sums do not move.
        let before = acc.values();
        acc.normalise();
        assert_eq!(acc.values(), before, "trial {trial}, normalised");
    }
}

#[test]
fn tiers_opened_by_different_pieces_merge_exactly() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    for trial in 0..40 {
        let width = rng.random_range(1..30);
        let n_rows = rng.random_range(2..150);
        let rows = partial_rows(&mut rng, n_rows, width);
        // Pieces of rows, each its own accumulator (tiers opened at their own first values), some given single
        // additions too, some normalised; merged in both orders.
        let mut pieces: Vec<ExactVec> = Vec::new();
        for (k, chunk) in rows.chunks(rng.random_range(1..=rows.len())).enumerate() {
            let mut piece = ExactVec::new(width);
            for (r, row) in chunk.iter().enumerate() {
                if (k + r) % 5 == 4 {
                    for (j, &v) in row.iter().enumerate() {
                        piece.add(j, v);
                    }
                } else {
                    piece.add_and_clear(0, &mut row.clone());
                }
            }
            if k % 3 == 2 {
                piece.normalise();
            }
            pieces.push(piece);
        }
        let mut forward = ExactVec::new(width);
        for piece in &pieces {
            forward.merge(piece);
        }
        let mut backward = pieces.last().expect("a piece").clone();
        for piece in pieces.iter().rev().skip(1) {
            backward.merge(piece);
        }
        for j in 0..width {
            let want = column_oracle(&rows, j).to_bits();
            assert_eq!(forward.value(j).to_bits(), want, "trial {trial}, sum {j}");
            assert_eq!(backward.value(j).to_bits(), want, "trial {trial}, sum {j}");
        }
    }
}

#[test]
fn a_tier_at_its_addition_bound_is_flushed_first() {
    let rows = vec![
        vec![0.75, -3.0, 1e-3],
        vec![0.5, 1.0, 2e-3],
        vec![1e300, 1.0, -3e-3],
    ];
    let mut acc = ExactVec::new(3);
    acc.add_and_clear(0, &mut rows[0].clone());
    acc.tier.adds = TIER_ADDS;
    acc.add_and_clear(0, &mut rows[1].clone());
    assert_eq!(acc.tier.adds, 1, "flushed, then one addition");
    let mut other = ExactVec::new(3);
    other.add_and_clear(0, &mut rows[2].clone());
    other.tier.adds = TIER_ADDS;
    acc.merge(&other);
    for j in 0..3 {
        assert_eq!(
            acc.value(j).to_bits(),
            column_oracle(&rows, j).to_bits(),
            "sum {j}"
        );
    }
}

#[test]
fn non_finite_partials_reach_the_limbs() {
    let mut acc = ExactVec::new(3);
    acc.add_and_clear(0, &mut [1.0, 2.0, 3.0]);
    acc.add_and_clear(0, &mut [f64::INFINITY, f64::NAN, -1.0]);
    assert_eq!(acc.value(0), f64::INFINITY);
    assert!(acc.value(1).is_nan());
    assert_eq!(acc.value(2), 2.0);
}
