//! Per-feature binning of the training data: at most `max_bin` (≤ 65,535) bins a feature, stored one byte a cell
//! for a feature with at most 256 bins (its missing bin included) and two bytes otherwise.
//!
//! Bin `b` of a feature holds the values `v` with `bounds[b - 1] < v <= bounds[b]` (the last bin everything above
//! the last bound). Every bound is a value of the training data, and the model stores a split "bins `0..=b` go left"
//! as the raw threshold `bounds[b]`, so that `bin(v) <= b` ⇔ `v <= bounds[b]` for every `v`: training-time bins
//! and predict-time raw comparisons agree exactly.
//!
//! Missing values: a NaN (the parsers and `ltrkit` refuse one, but a [`Dataset`] built in Rust may hold it) gets a
//! bin of its own, the last one, after the value bins, in every feature whose training column holds one. Each split
//! of such a feature learns where that bin goes (see [`crate::best_split`]) and stores it as the model's
//! `default_left`, which is where prediction sends a NaN. A feature with no NaN in training has no missing bin; its
//! splits keep `default_left = true`. A column whose values other than NaN are all equal is dropped like any
//! constant column: a split "missing against everything else" would need a threshold above every value, which a
//! model file (JSON) cannot hold as `+inf`.

use ltr_data::{Dataset, FeatureMatrix};
use rayon::prelude::*;

/// The largest `max_bin` (value bins a feature; a missing bin may come on top): the bins of a feature with more
/// than 256 are stored as `u16`.
pub const MAX_BIN: usize = 65_535;

/// The bins of one kept feature, one per document: one byte each when the feature has at most 256 bins (the usual
/// case, `max_bin` ≤ 255), two bytes each otherwise.
#[derive(Debug, Clone)]
pub(crate) enum BinColumn {
    /// At most 256 bins.
    Narrow(Vec<u8>),
    /// 257 to 65,536 bins.
    Wide(Vec<u16>),
}

impl BinColumn {
    /// The bin of document `i`.
    #[inline]
    pub fn get(&self, i: usize) -> usize {
        match self {
            BinColumn::Narrow(c) => c[i] as usize,
            BinColumn::Wide(c) => c[i] as usize,
        }
    }
}

/// The training data as bin numbers, feature-major, without its constant features.
#[derive(Debug, Clone)]
pub(crate) struct Binned {
    /// Original 0-based column of each kept feature.
    pub features: Vec<usize>,
    /// Upper bound of every bin but the last, per kept feature (strictly increasing).
    pub bounds: Vec<Vec<f32>>,
    /// Whether kept feature `k` holds a NaN in training: then its last bin, `bounds[k].len() + 1`, holds them.
    pub has_missing: Vec<bool>,
    /// Bin of every document, per kept feature.
    pub bins: Vec<BinColumn>,
}

/// The bin of raw value `v` under `bounds`: the missing bin `bounds.len() + 1` for a NaN.
#[inline]
pub(crate) fn bin_of(bounds: &[f32], v: f32) -> usize {
    if v.is_nan() {
        return bounds.len() + 1;
    }
    bounds.partition_point(|&u| u < v)
}

/// Bin upper bounds for one column: every distinct value when there are at most `max_bin`, else quantiles (a bin is
/// closed at the first distinct value where the running count reaches its share). Empty: the column is constant.
pub(crate) fn bounds_for(values: &[f32], max_bin: usize) -> Vec<f32> {
    let mut v: Vec<f32> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_unstable_by(f32::total_cmp);
    let mut distinct: Vec<(f32, usize)> = Vec::new();
    for x in v {
        match distinct.last_mut() {
            Some((d, c)) if *d == x => *c += 1,
            _ => distinct.push((x, 1)),
        }
    }
    if distinct.len() <= 1 {
        return Vec::new();
    }
    let last = distinct.len() - 1;
    if distinct.len() <= max_bin {
        return distinct[..last].iter().map(|d| d.0).collect();
    }
    let n: usize = distinct.iter().map(|d| d.1).sum();
    let mut bounds = Vec::with_capacity(max_bin - 1);
    let mut cum = 0usize;
    for &(x, c) in &distinct[..last] {
        cum += c;
        // Close bin `bounds.len()` once it holds its share (k + 1) · n / max_bin of the documents.
        if bounds.len() < max_bin - 1 && cum * max_bin >= (bounds.len() + 1) * n {
            bounds.push(x);
        }
    }
    bounds
}

/// One kept column: its bounds, whether it holds a NaN, its bins.
type KeptColumn = (Vec<f32>, bool, BinColumn);

impl Binned {
    /// Bin every column of `ds`; constant columns are dropped.
    pub fn new(ds: &Dataset, max_bin: usize) -> Self {
        let n = ds.n_docs();
        let d = ds.n_features();
        let bin_column = |col: &[f32]| {
            let bounds = bounds_for(col, max_bin);
            if bounds.is_empty() {
                return None;
            }
            let missing = col.iter().any(|v| v.is_nan());
            let bins = if bounds.len() + 1 + missing as usize <= 256 {
                BinColumn::Narrow(col.iter().map(|&v| bin_of(&bounds, v) as u8).collect())
            } else {
                BinColumn::Wide(col.iter().map(|&v| bin_of(&bounds, v) as u16).collect())
            };
            Some((bounds, missing, bins))
        };
        let per: Vec<Option<KeptColumn>> = match ds.features() {
            // One column per task, dropped once binned: the f32 copy never exists for all features at once.
            FeatureMatrix::Dense(a) => (0..d)
                .into_par_iter()
                .map(|j| bin_column(&a.column(j).iter().copied().collect::<Vec<f32>>()))
                .collect(),
            FeatureMatrix::Sparse(_) => {
                // Transposed once (an absent value is 0); n × d f32 while binning.
                let mut cols = vec![vec![0.0f32; n]; d];
                for i in 0..n {
                    for (j, v) in ds.row(i).entries() {
                        if j < d {
                            cols[j][i] = v;
                        }
                    }
                }
                cols.par_iter().map(|c| bin_column(c)).collect()
            }
        };
        let mut out = Binned {
            features: Vec::new(),
            bounds: Vec::new(),
            has_missing: Vec::new(),
            bins: Vec::new(),
        };
        for (j, p) in per.into_iter().enumerate() {
            if let Some((b, missing, bins)) = p {
                out.features.push(j);
                out.bounds.push(b);
                out.has_missing.push(missing);
                out.bins.push(bins);
            }
        }
        out
    }

    /// Number of bins of kept feature `k`, its missing bin included.
    pub fn n_bins(&self, k: usize) -> usize {
        self.bounds[k].len() + 1 + self.has_missing[k] as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_data_values_and_bins_agree_with_raw_comparisons() {
        let vals: Vec<f32> = (0..1000).map(|i| ((i * 37) % 101) as f32 * 0.5).collect();
        for max_bin in [2, 3, 16, 255] {
            let b = bounds_for(&vals, max_bin);
            assert!(!b.is_empty() && b.len() < max_bin);
            assert!(b.windows(2).all(|w| w[0] < w[1]));
            for &x in &b {
                assert!(vals.contains(&x));
            }
            for &v in vals.iter().chain(&[-1.0, 1e9, 0.25]) {
                let bin = bin_of(&b, v);
                for t in 0..b.len() {
                    assert_eq!(bin <= t, v <= b[t], "v {v} bin {bin} bound {t}");
                }
            }
        }
        assert!(bounds_for(&[3.0; 10], 255).is_empty());
        assert_eq!(bounds_for(&[1.0, 0.0, -0.0, 2.0], 255), vec![-0.0, 1.0]);
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
        let b = Binned::new(&ds(wide.clone()), 1000);
        assert_eq!(b.n_bins(0), 700);
        assert!(matches!(&b.bins[0], BinColumn::Wide(c) if c[699] == 699 && c[700] == 0));
        let mut narrow = wide;
        narrow[0] = f32::NAN;
        let b = Binned::new(&ds(narrow), 255);
        assert_eq!((b.n_bins(0), b.has_missing[0]), (256, true));
        assert!(matches!(&b.bins[0], BinColumn::Narrow(c) if c[0] == 255));
        // NaN: its own bin after the value bins, and no bound is NaN.
        assert_eq!(bin_of(&[1.0, 2.0], f32::NAN), 3);
        assert_eq!(bounds_for(&[f32::NAN, 1.0, 2.0, f32::NAN], 255), vec![1.0]);
    }
}
