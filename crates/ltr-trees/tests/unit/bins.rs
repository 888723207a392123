//! Tests of `src/bins.rs`.

use ltr_data::{Dataset, FeatureMatrix};
use ltr_trees::bin_bounds as bounds_for;
use ltr_trees::bins::*;
use ltr_trees::ranks::Layout;

#[test]
fn bounds_lie_between_neighbouring_values_and_bins_agree_with_raw_comparisons() {
    let vals: Vec<f32> = (0..1000).map(|i| ((i * 37) % 101) as f32 * 0.5).collect();
    for max_bin in [2, 3, 16, 255] {
        let b = bounds_for(&vals, max_bin, MIN_DATA_IN_BIN);
        assert!(!b.is_empty() && b.len() < max_bin);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        // Every value here is a multiple of 0.5: each bound is the midpoint of two neighbours.
        for &x in &b {
            assert!(!vals.contains(&x) && vals.contains(&(x - 0.25)), "{x}");
        }
        for &v in vals.iter().chain(&[-1.0, 1e9, 0.25]) {
            let bin = bin_of(&b, v);
            for t in 0..b.len() {
                assert_eq!(bin <= t, v <= b[t], "v {v} bin {bin} bound {t}");
            }
        }
    }
    assert!(bounds_for(&[3.0; 10], 255, 1).is_empty());
    assert_eq!(bounds_for(&[1.0, 0.0, -0.0, 2.0], 255, 1), vec![0.5, 1.5]);
    // Two documents at 0 (±0 are one value) do not fill a bin of three: 0 and 1 share one.
    assert_eq!(bounds_for(&[1.0, 0.0, -0.0, 2.0], 255, 3), vec![1.5]);
    // A feature with more than 256 bins is stored two bytes a cell, one with 256 (255 value bins and the
    // missing bin) one byte.
    let wide: Vec<f32> = (0..1000).map(|i| (i % 700) as f32).collect();
    let ds = |col: Vec<f32>| {
        let n = col.len();
        Dataset::new(
            FeatureMatrix::Dense(ndarray::Array2::from_shape_vec((n, 1), col).unwrap()),
            vec![0.0; n],
            vec![0, n],
            vec!["q".into()],
        )
        .unwrap()
    };
    // Every value its own bin (`min_data_in_bin` 1).
    let bin = |d: &Dataset, max_bin| {
        let spec = BinSpec {
            min_data_in_bin: 1,
            ..BinSpec::with_max_bin(max_bin)
        };
        Binned::new(d, &spec, &Layout::single(d), &ltr_core::SingleProcess).unwrap()
    };
    let b = bin(&ds(wide.clone()), 1000);
    assert_eq!(b.n_bins(0), 700);
    assert!(matches!(&b.bins[0], BinColumn::Wide(c) if c[699] == 699 && c[700] == 0));
    let mut narrow = wide;
    narrow[0] = f32::NAN;
    let b = bin(&ds(narrow), 255);
    assert_eq!((b.n_bins(0), b.has_missing[0]), (256, true));
    assert!(matches!(&b.bins[0], BinColumn::Narrow(c) if c[0] == 255));
    // NaN: its own bin after the value bins, and no bound is NaN.
    assert_eq!(bin_of(&[1.0, 2.0], f32::NAN), 3);
    assert_eq!(
        bounds_for(&[f32::NAN, 1.0, 2.0, f32::NAN], 255, 1),
        vec![1.5]
    );
}
#[test]
fn greedy_bins_follow_lightgbm_rules() {
    // Few distinct values: each its own bin once it holds `min_data` documents.
    assert_eq!(greedy_ends(&[5, 1, 1, 1, 5], 255, 3), vec![0, 3]);
    assert_eq!(greedy_ends(&[5, 1, 1, 1, 5], 255, 1), vec![0, 1, 2, 3]);
    // More distinct values than bins: a value holding a bin's share gets a bin of its own, the others runs of
    // about the mean of what is left.
    let mut counts = vec![1u64; 100];
    counts[40] = 50;
    let ends = greedy_ends(&counts, 10, 1);
    assert!(ends.len() <= 9);
    assert!(ends.contains(&39) && ends.contains(&40), "{ends:?}");
    // At most total / min_data bins.
    assert!(greedy_ends(&[1; 30], 10, 10).len() <= 2);
    // A pivot: the most frequent value, holding a bin's share, is a bin of its own and the values on either
    // side are binned apart, the bins shared in proportion: 30 below it, 60 above, 9 bins besides it.
    let mut counts = vec![1u64; 91];
    counts[30] = 200;
    let ends = bin_ends(&counts, 10, 1);
    assert_eq!(ends.len(), 9, "{ends:?}");
    assert!(ends.contains(&29) && ends.contains(&30), "{ends:?}");
    assert_eq!(ends.iter().filter(|&&e| e < 29).count(), 2, "{ends:?}");
    // Without one: the greedy bins over all the values.
    assert_eq!(bin_ends(&[1; 91], 10, 1), greedy_ends(&[1; 91], 10, 1));
    // Thresholds between neighbours, infinite ones included.
    assert_eq!(threshold_between(1.0, 2.0), 1.5);
    let next = f32::from_bits(1.0f32.to_bits() + 1);
    assert_eq!(threshold_between(1.0, next), 1.0);
    assert_eq!(threshold_between(f32::NEG_INFINITY, 0.0), -f32::MAX);
    assert_eq!(threshold_between(5.0, f32::INFINITY), f32::MAX);
    assert_eq!(threshold_between(-f32::MAX, f32::MAX), 0.0);
}

/// The bins of the documents do not move under a strictly increasing map of the feature (one that keeps its
/// distinct values distinct in f32), whatever the shape of the column: only the thresholds do.
#[test]
fn bins_do_not_move_under_a_monotone_map() {
    let n = 5000usize;
    let hash = |i: usize| {
        ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as f64 / (1u64 << 24) as f64
    };
    let shapes: Vec<Vec<f32>> = vec![
        // heavy tail, 90% zeros, 3 values, negative and positive, a spike in the middle, NaNs
        (0..n).map(|i| (hash(i) * 12.0).exp() as f32).collect(),
        (0..n)
            .map(|i| {
                if i % 10 == 0 {
                    (hash(i) * 40.0).round() as f32
                } else {
                    0.0
                }
            })
            .collect(),
        (0..n).map(|i| (i % 3) as f32).collect(),
        (0..n)
            .map(|i| ((hash(i) - 0.4) * 1000.0).round() as f32 / 8.0)
            .collect(),
        (0..n)
            .map(|i| {
                if i % 4 == 0 {
                    7.25
                } else {
                    (hash(i) * 5000.0).round() as f32 / 256.0
                }
            })
            .collect(),
        (0..n)
            .map(|i| {
                if i % 7 == 0 {
                    f32::NAN
                } else {
                    (hash(i) * 900.0).round() as f32
                }
            })
            .collect(),
    ];
    type Map = fn(f32) -> f32;
    let maps: [(&str, Map); 4] = [
        ("affine", |v| v * 4.0 - 3.0),
        ("log1p", |v| (v.max(-0.99) as f64).ln_1p() as f32),
        ("cube", |v| v * v * v),
        ("exp", |v| ((v as f64) / 64.0).exp() as f32),
    ];
    for (s, col) in shapes.iter().enumerate() {
        let distinct = distinct_counts(col.iter().copied()).len();
        for max_bin in [4, 16, 255] {
            let b = bounds_for(col, max_bin, MIN_DATA_IN_BIN);
            let bins: Vec<usize> = col.iter().map(|&v| bin_of(&b, v)).collect();
            for (name, f) in maps {
                let mapped: Vec<f32> = col.iter().map(|&v| f(v)).collect();
                if distinct_counts(mapped.iter().copied()).len() != distinct {
                    // The map merged values in f32 (log1p of the negative shape): not a strict map here.
                    continue;
                }
                let mb = bounds_for(&mapped, max_bin, MIN_DATA_IN_BIN);
                let mapped_bins: Vec<usize> = mapped.iter().map(|&v| bin_of(&mb, v)).collect();
                assert_eq!(bins, mapped_bins, "shape {s} max_bin {max_bin} map {name}");
            }
        }
    }
}

#[test]
fn taking_the_data_bins_it_as_borrowing_does_and_frees_its_features() {
    // Rows in more than one block of `take`, a constant column, a NaN, a wide column and a narrow one.
    let (n, d) = (TAKE_BLOCK_VALUES / 3 + 7, 4);
    let cell = |i: usize, j: usize| match j {
        0 => ((i * 7919) % 1000) as f32,
        1 => 2.5,
        2 if i.is_multiple_of(97) => f32::NAN,
        _ => ((i * 31) % 17) as f32 - 8.0,
    };
    let values: Vec<f32> = (0..n * d).map(|c| cell(c / d, c % d)).collect();
    let ds = Dataset::new(
        FeatureMatrix::Dense(ndarray::Array2::from_shape_vec((n, d), values).unwrap()),
        vec![0.0; n],
        vec![0, n / 2, n],
        vec!["a".into(), "b".into()],
    )
    .unwrap();
    let layout = Layout::single(&ds);
    for max_bin in [255, 600] {
        let kept = Binned::new(
            &ds,
            &BinSpec::with_max_bin(max_bin),
            &layout,
            &ltr_core::SingleProcess,
        )
        .unwrap();
        let mut owned = ds.clone();
        let taken = Binned::take(
            &mut owned,
            &BinSpec::with_max_bin(max_bin),
            &layout,
            &ltr_core::SingleProcess,
        )
        .unwrap();
        assert_eq!(kept.features, vec![0, 2, 3]);
        assert!(matches!(&kept.bins[0], BinColumn::Wide(_)) == (max_bin == 600));
        assert_eq!(
            (&kept.features, &kept.bounds, &kept.has_missing, &kept.bins),
            (
                &taken.features,
                &taken.bounds,
                &taken.has_missing,
                &taken.bins
            )
        );
        assert_eq!((owned.n_features(), owned.n_docs()), (0, n));
        assert_eq!(owned.labels(), ds.labels());
    }
    // Bounds from a sample of 64 documents (`bin-sample-docs=64`): at most 64 distinct values a column, so
    // column 0 (1000 values) gets fewer bins than from every document; taking agrees with borrowing.
    let spec = |sample_docs| BinSpec {
        sample_docs,
        ..BinSpec::with_max_bin(255)
    };
    let sampled = Binned::new(&ds, &spec(64), &layout, &ltr_core::SingleProcess).unwrap();
    let mut owned = ds.clone();
    let taken = Binned::take(&mut owned, &spec(64), &layout, &ltr_core::SingleProcess).unwrap();
    assert!(sampled.bounds[0].len() < 64, "{}", sampled.bounds[0].len());
    assert_eq!(sampled.bounds, taken.bounds);
    assert_eq!(sampled.bins, taken.bins);
    let all = Binned::new(&ds, &spec(n), &layout, &ltr_core::SingleProcess).unwrap();
    assert!(all.bounds[0].len() > 128, "{}", all.bounds[0].len());
}
