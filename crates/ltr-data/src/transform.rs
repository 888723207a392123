//! Feature transforms: LETOR query-level min–max, z-score (fitted on train, applied to test), feature subsets.

use ndarray::Axis;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::dataset::{Dataset, FeatureMatrix};
use crate::error::{DataError, Result};
use crate::exact_sum::ExactVec;

/// The dataset made dense and cut into one mutable row-major block per query (for per-query transforms run in
/// parallel), with the row width.
pub(crate) fn query_blocks_mut(ds: &mut Dataset) -> (Vec<&mut [f32]>, usize) {
    ds.to_dense();
    let offsets = ds.query_offsets().to_vec();
    let FeatureMatrix::Dense(a) = ds.features_mut() else {
        unreachable!("made dense above")
    };
    let d = a.ncols();
    let mut blocks: Vec<&mut [f32]> = Vec::with_capacity(offsets.len().saturating_sub(1));
    let mut rest = a.as_slice_mut().expect("standard layout");
    for w in offsets.windows(2) {
        let (b, r) = rest.split_at_mut((w[1] - w[0]) * d);
        blocks.push(b);
        rest = r;
    }
    (blocks, d)
}

/// LETOR "QueryLevelNorm": within each query, map every feature linearly to [0, 1] by (x − min)/(max − min);
/// a feature constant within the query becomes 0, a NaN (a missing value) stays NaN. Sparse datasets are made dense
/// first (the transform fills zeros).
pub fn normalize_query_minmax(ds: &mut Dataset) {
    let (blocks, d) = query_blocks_mut(ds);
    blocks.into_par_iter().for_each(|block| {
        let n = block.len() / d.max(1);
        for j in 0..d {
            // `min` and `max` pass over a NaN, so the range is that of the present values.
            let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
            for i in 0..n {
                let v = block[i * d + j];
                lo = lo.min(v);
                hi = hi.max(v);
            }
            let range = hi - lo;
            for i in 0..n {
                let v = &mut block[i * d + j];
                if !v.is_nan() {
                    *v = if range > 0.0 { (*v - lo) / range } else { 0.0 };
                }
            }
        }
    });
}

/// Per-feature mean and standard deviation, fitted on one dataset and applied to others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZScore {
    /// Mean of each feature on the fitting data.
    pub mean: Vec<f64>,
    /// Standard deviation of each feature (population); 0 for constant features, which map to 0. Both are of the
    /// present values: a NaN (a missing value) is left out, and stays NaN.
    pub std: Vec<f64>,
}

impl ZScore {
    /// Fit on every document of `ds`.
    pub fn fit(ds: &Dataset) -> Self {
        Self::from_sums(&Self::sums(ds))
    }

    /// The statistics a z-score is fitted from — Σx and Σx² per feature, the number of documents, and the
    /// number of NaN (missing) values per feature, which the sums leave out — summed per query in f64 and over
    /// queries exactly, so that summing the [`ExactVec`]s of several shards of whole queries (data-parallel
    /// training) gives the same statistics, bit for bit, as one pass over all of them.
    pub fn sums(ds: &Dataset) -> ExactVec {
        let d = ds.n_features();
        crate::exact_sum_over_queries(
            ds.n_queries(),
            3 * d + 1,
            || vec![0.0f64; 3 * d],
            |q, acc, part| {
                for i in ds.query_range(q) {
                    for (j, v) in ds.row(i).entries() {
                        if v.is_nan() {
                            part[2 * d + j] += 1.0;
                            continue;
                        }
                        let v = v as f64;
                        part[j] += v;
                        part[d + j] += v * v;
                    }
                }
                let (moments, missing) = part.split_at_mut(2 * d);
                for (j, p) in moments.iter_mut().enumerate() {
                    acc.add(j, *p);
                    *p = 0.0;
                }
                acc.add(2 * d, ds.query_range(q).len() as f64);
                for (j, p) in missing.iter_mut().enumerate() {
                    acc.add(2 * d + 1 + j, *p);
                    *p = 0.0;
                }
            },
        )
    }

    /// The z-score of the statistics of [`sums`](Self::sums) (of one dataset, or summed over shards).
    pub fn from_sums(sums: &ExactVec) -> Self {
        let d = (sums.len() - 1) / 3;
        let docs = sums.value(2 * d);
        // Each feature's present values; data without NaN divides by the document count itself.
        let n = |j: usize| (docs - sums.value(2 * d + 1 + j)).max(1.0);
        let mean: Vec<f64> = (0..d).map(|j| sums.value(j) / n(j)).collect();
        let std = (0..d)
            .map(|j| {
                (sums.value(d + j) / n(j) - mean[j] * mean[j])
                    .max(0.0)
                    .sqrt()
            })
            .collect();
        Self { mean, std }
    }
    /// Apply to `ds` (made dense: centering fills zeros). Fails if the widths differ.
    pub fn apply(&self, ds: &mut Dataset) -> Result<()> {
        if ds.n_features() > self.mean.len() {
            return Err(DataError::Shape(format!(
                "z-score fitted on {} features applied to {}",
                self.mean.len(),
                ds.n_features()
            )));
        }
        ds.to_dense();
        let FeatureMatrix::Dense(a) = ds.features_mut() else {
            unreachable!()
        };
        a.axis_iter_mut(Axis(0))
            .into_par_iter()
            .for_each(|mut row| {
                for (j, v) in row.iter_mut().enumerate() {
                    *v = zscore_value(*v, self.mean[j], self.std[j]);
                }
            });
        Ok(())
    }
}

/// Keep only the listed features (1-based indices as in the file), in the order given.
pub fn select_features(ds: &Dataset, features: &[usize]) -> Result<Dataset> {
    let d = ds.n_features();
    if let Some(&bad) = features.iter().find(|&&f| f == 0 || f > d) {
        return Err(DataError::Invalid(format!(
            "feature {bad} is outside 1..={d}"
        )));
    }
    select_features_padded(ds, features)
}

/// [`select_features`] where a feature beyond the data's width reads as 0 (a test file whose last features are
/// all zero is narrower than the training file).
pub(crate) fn select_features_padded(ds: &Dataset, features: &[usize]) -> Result<Dataset> {
    if features.contains(&0) {
        return Err(DataError::Invalid(
            "feature 0 does not exist; features count from 1".into(),
        ));
    }
    let d = ds.n_features();
    let mut a = ndarray::Array2::<f32>::zeros((ds.n_docs(), features.len()));
    a.axis_iter_mut(Axis(0))
        .into_par_iter()
        .enumerate()
        .for_each(|(i, mut row)| {
            let r = ds.row(i);
            for (k, &f) in features.iter().enumerate() {
                if f <= d {
                    row[k] = r.get(f - 1);
                }
            }
        });
    let mut out = Dataset::new(
        FeatureMatrix::Dense(a),
        ds.labels().to_vec(),
        ds.query_offsets().to_vec(),
        ds.qids().to_vec(),
    )?;
    if let Some(c) = ds.docids() {
        out = out.with_docids(c.clone())?;
    }
    if let Some(c) = ds.comments() {
        out = out.with_comments(c.clone())?;
    }
    if let Some(w) = ds.query_weights() {
        out = out.with_query_weights(w.to_vec())?;
    }
    if let Some(p) = ds.propensities() {
        out = out.with_propensities(p.to_vec())?;
    }
    if let Some(p) = ds.positions() {
        out = out.with_positions(p.to_vec())?;
    }
    Ok(out)
}

/// The most features a feature list may name (ranges expanded): 2^24, far above any dataset's width.
const MAX_FEATURE_LIST: usize = 1 << 24;

/// Parse a feature list such as `1-5,7,10-12` (1-based, inclusive ranges). A feature number must fit in 32 bits (as
/// a file's feature index must), and the list may name at most 2^24 features: a range such as `1-99999999999` is
/// refused instead of being expanded into memory that cannot be had.
pub fn parse_feature_list(spec: &str) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || {
            DataError::Invalid(format!(
                "`{part}` in feature list `{spec}`: expected N or N-M with 1 <= N <= M <= 4294967295"
            ))
        };
        let number = |s: &str| -> Result<usize> {
            match s.trim().parse::<u32>() {
                Ok(n) if n > 0 => Ok(n as usize),
                _ => Err(bad()),
            }
        };
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if b < a {
            return Err(bad());
        }
        if b - a + 1 > MAX_FEATURE_LIST - out.len() {
            return Err(DataError::Invalid(format!(
                "feature list `{spec}` names more than {MAX_FEATURE_LIST} features"
            )));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

/// (v − mean) / std; 0 for a feature constant on the training data; a NaN (a missing value) stays NaN.
pub(crate) fn zscore_value(v: f32, mean: f64, std: f64) -> f32 {
    if std > 0.0 {
        ((v as f64 - mean) / std) as f32
    } else if v.is_nan() {
        v
    } else {
        0.0
    }
}
