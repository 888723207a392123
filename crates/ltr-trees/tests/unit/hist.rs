//! Tests of `src/hist.rs`.

use ltr_trees::bins::*;
use ltr_trees::hist::*;
use ltr_trees::*;

/// One query of `n` documents whose feature `f` of document `i` is `value(i, f)`, binned into at most `max_bin`
/// bins.
fn binned(
    n: usize,
    features: usize,
    max_bin: usize,
    value: impl Fn(usize, usize) -> f32,
) -> Binned {
    let x = ndarray::Array2::from_shape_fn((n, features), |(i, f)| value(i, f));
    let ds = ltr_data::Dataset::new(
        ltr_data::FeatureMatrix::Dense(x),
        vec![0.0; n],
        vec![0, n],
        vec!["1".into()],
    )
    .unwrap();
    Binned::new(
        &ds,
        &BinSpec::with_max_bin(max_bin),
        &ltr_trees::ranks::Layout::single(&ds),
        &ltr_core::SingleProcess,
    )
    .unwrap()
}

/// Fixed-point gradients and hessians of `n` documents, spread over both signs and over [0, 1].
fn spread_gradients(n: usize) -> Vec<[i64; 2]> {
    let scale = Scale::new(0.5, 1.0, n);
    (0..n)
        .map(|i| {
            scale.quantise(
                ((i * 37) % 1001) as f64 / 1000.0 - 0.5,
                (i % 7) as f64 / 6.0,
            )
        })
        .collect()
}

/// One feature's histogram ([`feature_histogram`]: one lane for a small leaf, four 256-cell lanes for a larger
/// one-byte column, lanes of the bin count for a two-byte one) equals the plain histogram, on contiguous and
/// scattered leaves below and above [`LANE_FROM_DOCS`] whose sizes are and are not multiples of four, written
/// over a buffer that held something else (the pool's), and through [`histograms`] into flat buffers.
#[test]
fn feature_histograms_equal_plain_histograms() {
    let n = LANE_FROM_DOCS + 1500;
    let data = binned(n, 3, 1000, |i, f| match f {
        0 => ((i * 7919 + i / 3) % 200) as f32,
        1 => (i * 104_729 % 3000) as f32,
        _ => ((i * 31) % 97) as f32 * 0.5,
    });
    assert!(matches!(data.bins[1], BinColumn::Wide(_)));
    let gh = spread_gradients(n);
    let feats: Vec<usize> = (0..data.bins.len()).collect();
    let at = offsets(&data, &feats);
    for (first, len, every) in [
        (0, n, 1),
        (3, 10, 1),
        (5, 7, 1),
        (0, n, 3),
        (1, n - 1, 2),
        (2, 50, 11),
        (7, LANE_FROM_DOCS + 13, 1),
    ] {
        let docs: Vec<u32> = (first..first + len)
            .filter(|i| (i - first) % every == 0)
            .map(|i| i as u32)
            .collect();
        let (leaf_gh, contiguous) = gather(&docs, &gh);
        assert_eq!(contiguous, every == 1);
        let mut flat = vec![Sums { g: 1, h: -2, n: 3 }; at[feats.len()]];
        histograms(
            &data,
            None,
            &feats,
            &at,
            &docs,
            &gh,
            &ltr_core::SingleProcess,
            &mut flat,
        )
        .unwrap();
        for &k in &feats {
            let plain = match &data.bins[k] {
                BinColumn::Narrow(c) => histogram(c, data.n_bins(k), &docs, &gh),
                BinColumn::Wide(c) => histogram(c, data.n_bins(k), &docs, &gh),
            };
            let mut one = vec![Sums { g: 5, h: 5, n: 5 }; data.n_bins(k)];
            feature_histogram(&data, k, &docs, contiguous, &leaf_gh, &mut one);
            assert_eq!(one, plain, "feature {k}, leaf {first} {len} {every}");
            assert_eq!(&flat[at[k]..at[k + 1]], &plain[..], "flat, feature {k}");
        }
    }
}

/// Large leaves' histograms, built block by block over pieces of features, equal the plain per-feature ones on
/// one-byte and two-byte columns (with a NaN bin), contiguous and scattered leaves, sizes that are not multiples
/// of the block.
#[test]
fn blocked_histograms_equal_plain_histograms() {
    let n = 3 * DOC_BLOCK + 1234;
    let data = binned(n, 10, 1000, |i, f| match f {
        0 => ((i * 7919 + i / 3) % 200) as f32,
        1 => (i * 104_729 % 3000) as f32,
        2 if i % 13 == 0 => f32::NAN,
        _ => ((i * (f + 3) * 31) % 97) as f32 * 0.5,
    });
    assert!(matches!(data.bins[1], BinColumn::Wide(_)));
    let gh = spread_gradients(n);
    let feats: Vec<usize> = (0..data.bins.len()).collect();
    for (first, len, every) in [(0, n, 1), (5, n - 9, 1), (1, n - 1, 3)] {
        let docs: Vec<u32> = (first..first + len)
            .filter(|i| (i - first) % every == 0)
            .map(|i| i as u32)
            .collect();
        let leaf_gh: Vec<[i64; 2]> = docs.iter().map(|&i| gh[i as usize]).collect();
        let blocked = blocked_histograms(&data, &feats, &docs, every == 1, &leaf_gh);
        for (&k, h) in feats.iter().zip(&blocked) {
            let plain = match &data.bins[k] {
                BinColumn::Narrow(c) => histogram(c, data.n_bins(k), &docs, &gh),
                BinColumn::Wide(c) => histogram(c, data.n_bins(k), &docs, &gh),
            };
            assert_eq!(*h, plain, "feature {k}, leaf {first} {len} {every}");
        }
    }
}

/// Histograms from rows equal the column passes' on scattered leaves (a NaN bin included), for every feature and
/// for a subset of them.
#[test]
fn row_histograms_equal_column_histograms() {
    let n = 3 * ROWS_FROM_DOCS + 777;
    let data = binned(n, 7, 255, |i, f| match f {
        0 => ((i * 7919 + i / 3) % 200) as f32,
        2 if i % 13 == 0 => f32::NAN,
        _ => ((i * (f + 3) * 31) % 97) as f32 * 0.5,
    });
    let rows = Rows::build(&data, n).expect("one-byte columns");
    let gh = spread_gradients(n);
    let all: Vec<usize> = (0..data.bins.len()).collect();
    let most: Vec<usize> = all.iter().copied().filter(|&k| k != 1).collect();
    for feats in [&all, &most] {
        for every in [2, 3] {
            let docs: Vec<u32> = (1..n as u32).filter(|i| i % every != 0).collect();
            assert!(rows.serves(feats, docs.len()));
            let leaf_gh: Vec<[i64; 2]> = docs.iter().map(|&i| gh[i as usize]).collect();
            let by_rows = rows.histograms(&data, feats, &docs, &leaf_gh);
            for (&k, h) in feats.iter().zip(&by_rows) {
                let BinColumn::Narrow(c) = &data.bins[k] else {
                    unreachable!("one-byte columns")
                };
                assert_eq!(*h, histogram(c, data.n_bins(k), &docs, &gh), "feature {k}");
            }
        }
    }
}
