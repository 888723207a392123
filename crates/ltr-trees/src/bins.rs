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

use ltr_core::{Allreduce, Result};
use ltr_data::{Dataset, FeatureMatrix};
use rayon::prelude::*;

use crate::ranks::Layout;

/// The largest `max_bin` (value bins a feature; a missing bin may come on top): the bins of a feature with more
/// than 256 are stored as `u16`.
pub const MAX_BIN: usize = 65_535;

/// Documents whose values set the bin bounds, at most, by default (`bin-sample-docs`,
/// [`crate::TreeParams::bin_sample_docs`]): with more training documents than this (all ranks together), this many
/// spread evenly over the document numbering (LightGBM's `bin_construct_sample_cnt` plays the
/// same role). Below it every document counts, so LETOR folds and 200k-document sets are binned from all their
/// values; above it binning costs a sort of this many values a feature, and the ranks of a distributed run
/// exchange at most this many values a feature to agree on the bounds. Which documents are sampled depends only on
/// their global numbers, so the ranks agree with one process on the same data.
pub const BIN_SAMPLE_DOCS: usize = 262_144;

/// The bins of one kept feature, one per document: one byte each when the feature has at most 256 bins (the usual
/// case, `max_bin` ≤ 255), two bytes each otherwise.
#[derive(Debug, Clone, PartialEq)]
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

/// A column's distinct values other than NaN, ascending (`-0.0` and `0.0` are one value, held as the first of
/// them in total order), each with its number of documents.
type Distinct = Vec<(f32, u64)>;

/// The [`Distinct`] values of `values`.
fn distinct_counts(values: impl Iterator<Item = f32>) -> Distinct {
    let mut v: Vec<f32> = values.filter(|x| !x.is_nan()).collect();
    v.sort_unstable_by(f32::total_cmp);
    merge_sorted(v.into_iter().map(|x| (x, 1)))
}

/// Adjacent equal values of an ascending sequence merged, their counts added.
fn merge_sorted(sorted: impl Iterator<Item = (f32, u64)>) -> Distinct {
    let mut distinct: Distinct = Vec::new();
    for (x, c) in sorted {
        match distinct.last_mut() {
            Some((d, n)) if *d == x => *n += c,
            _ => distinct.push((x, c)),
        }
    }
    distinct
}

/// Every rank's [`Distinct`] values of one column, merged: what one process holding every rank's documents finds.
fn agree_distinct(local: Distinct, comm: &dyn Allreduce) -> Result<Distinct> {
    if comm.size() == 1 {
        return Ok(local);
    }
    // Values and counts travel as f64: a f32 exactly, a count exactly below 2^53.
    let flat: Vec<f64> = local
        .iter()
        .flat_map(|&(v, c)| [v as f64, c as f64])
        .collect();
    let mut all: Vec<(f32, u64)> = comm
        .gather_varying_f64(&flat)?
        .iter()
        .flat_map(|r| r.chunks_exact(2).map(|p| (p[0] as f32, p[1] as u64)))
        .collect();
    // Stable: of `-0.0` and `0.0` the first in total order is kept, as one process keeps it.
    all.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(merge_sorted(all.into_iter()))
}

/// Bin upper bounds from a column's distinct values: every distinct value when there are at most `max_bin`, else
/// quantiles (a bin is closed at the first distinct value where the running count reaches its share). Empty: the
/// column is constant.
fn bounds_from_distinct(distinct: &[(f32, u64)], max_bin: usize) -> Vec<f32> {
    if distinct.len() <= 1 {
        return Vec::new();
    }
    let last = distinct.len() - 1;
    if distinct.len() <= max_bin {
        return distinct[..last].iter().map(|d| d.0).collect();
    }
    let n: u64 = distinct.iter().map(|d| d.1).sum();
    let mut bounds = Vec::with_capacity(max_bin - 1);
    let mut cum = 0u64;
    for &(x, c) in &distinct[..last] {
        cum += c;
        // Close bin `bounds.len()` once it holds its share (k + 1) · n / max_bin of the documents.
        if bounds.len() < max_bin - 1 && cum * max_bin as u64 >= (bounds.len() as u64 + 1) * n {
            bounds.push(x);
        }
    }
    bounds
}

/// Bin upper bounds for one column of every document ([`bounds_from_distinct`] of its values).
#[cfg(test)]
pub(crate) fn bounds_for(values: &[f32], max_bin: usize) -> Vec<f32> {
    bounds_from_distinct(&distinct_counts(values.iter().copied()), max_bin)
}

/// The data's columns, read one at a time.
enum Columns<'a> {
    /// Rows of the dense matrix: a column is read with a stride.
    Dense(&'a ndarray::Array2<f32>),
    /// The sparse matrix transposed once (an absent value is 0): n × d f32 while binning.
    Transposed(Vec<Vec<f32>>),
}

impl Columns<'_> {
    /// `f` of every value of column `j`, in document order.
    fn map<T>(&self, j: usize, f: impl Fn(f32) -> T) -> Vec<T> {
        match self {
            Columns::Dense(a) => a.column(j).iter().map(|&v| f(v)).collect(),
            Columns::Transposed(c) => c[j].iter().map(|&v| f(v)).collect(),
        }
    }
    /// Column `j`'s values at `docs` (every document when `None`).
    fn values(&self, j: usize, docs: Option<&[usize]>) -> Vec<f32> {
        match (self, docs) {
            (_, None) => self.map(j, |v| v),
            (Columns::Dense(a), Some(d)) => {
                let col = a.column(j);
                d.iter().map(|&i| col[i]).collect()
            }
            (Columns::Transposed(c), Some(d)) => d.iter().map(|&i| c[j][i]).collect(),
        }
    }
    fn has_nan(&self, j: usize) -> bool {
        match self {
            Columns::Dense(a) => a.column(j).iter().any(|v| v.is_nan()),
            Columns::Transposed(c) => c[j].iter().any(|v| v.is_nan()),
        }
    }
}

/// Values of f32 freed at a time while [`Binned::take`] bins a matrix it owns (8 MiB): the rows of a block are
/// binned together, which also keeps their values in cache while every feature reads them.
const TAKE_BLOCK_VALUES: usize = 1 << 21;

/// What binning agreed before any document is binned: the bin bounds of every column (empty: constant, dropped),
/// which columns hold a NaN on some rank, and the kept columns.
struct Plan {
    bounds: Vec<Vec<f32>>,
    missing: Vec<i64>,
    kept: Vec<usize>,
}

impl Plan {
    /// The bounds from this rank's sampled documents, agreed over the ranks of `comm`.
    fn agree(
        columns: &Columns<'_>,
        n: usize,
        d: usize,
        max_bin: usize,
        sample_docs: usize,
        layout: &Layout,
        comm: &dyn Allreduce,
    ) -> Result<Self> {
        let sample = layout.sampled_docs(n, sample_docs);
        // This rank's distinct values (of its sampled documents) and NaNs, one column per task, a few columns at a
        // time: a column's distinct values can be as many as its documents, so they are agreed over the ranks and
        // turned into bounds before the next columns' are made.
        let chunk = 2 * rayon::current_num_threads().max(1);
        let mut missing: Vec<i64> = Vec::with_capacity(d);
        let mut bounds: Vec<Vec<f32>> = Vec::with_capacity(d);
        for first in (0..d).step_by(chunk) {
            let local: Vec<(Distinct, bool)> = (first..d.min(first + chunk))
                .into_par_iter()
                .map(|j| {
                    let values = columns.values(j, sample.as_deref());
                    (distinct_counts(values.into_iter()), columns.has_nan(j))
                })
                .collect();
            for (distinct, nan) in local {
                missing.push(nan as i64);
                bounds.push(bounds_from_distinct(
                    &agree_distinct(distinct, comm)?,
                    max_bin,
                ));
            }
        }
        if comm.size() > 1 {
            comm.sum_i64(&mut missing)?;
        }
        let kept: Vec<usize> = (0..d).filter(|&j| !bounds[j].is_empty()).collect();
        Ok(Plan {
            bounds,
            missing,
            kept,
        })
    }

    /// Whether kept column `j`'s bins fit a byte (its missing bin included).
    fn narrow(&self, j: usize) -> bool {
        self.bounds[j].len() + 1 + (self.missing[j] > 0) as usize <= 256
    }

    /// Every kept column binned from `columns`, one column per task.
    fn bin_columns(&self, columns: &Columns<'_>) -> Vec<BinColumn> {
        self.kept
            .par_iter()
            .map(|&j| {
                let b = &self.bounds[j];
                if self.narrow(j) {
                    BinColumn::Narrow(columns.map(j, |v| bin_of(b, v) as u8))
                } else {
                    BinColumn::Wide(columns.map(j, |v| bin_of(b, v) as u16))
                }
            })
            .collect()
    }

    /// Bin rows `first..` of a row-major matrix of width `d` whose values `rows` holds into `bins` (one column
    /// per kept feature), one column per task.
    fn bin_rows(&self, rows: &[f32], d: usize, first: usize, bins: &mut [BinColumn]) {
        let count = rows.len() / d;
        bins.par_iter_mut()
            .zip(&self.kept)
            .for_each(|(column, &j)| {
                let b = &self.bounds[j];
                let values = rows.chunks_exact(d).map(|row| row[j]);
                match column {
                    BinColumn::Narrow(c) => {
                        for (o, v) in c[first..first + count].iter_mut().zip(values) {
                            *o = bin_of(b, v) as u8;
                        }
                    }
                    BinColumn::Wide(c) => {
                        for (o, v) in c[first..first + count].iter_mut().zip(values) {
                            *o = bin_of(b, v) as u16;
                        }
                    }
                }
            });
    }

    /// The binned data, its columns `bins`.
    fn into_binned(mut self, bins: Vec<BinColumn>) -> Binned {
        Binned {
            has_missing: self.kept.iter().map(|&j| self.missing[j] > 0).collect(),
            bounds: self
                .kept
                .iter()
                .map(|&j| std::mem::take(&mut self.bounds[j]))
                .collect(),
            features: self.kept,
            bins,
        }
    }
}

impl<'a> Columns<'a> {
    /// The columns of `ds`'s features: a dense matrix read in place, a sparse one transposed.
    fn of(ds: &'a Dataset) -> Self {
        let (n, d) = (ds.n_docs(), ds.n_features());
        match ds.features() {
            FeatureMatrix::Dense(a) => Columns::Dense(a),
            FeatureMatrix::Sparse(_) => {
                let mut cols = vec![vec![0.0f32; n]; d];
                for i in 0..n {
                    for (j, v) in ds.row(i).entries() {
                        if j < d {
                            cols[j][i] = v;
                        }
                    }
                }
                Columns::Transposed(cols)
            }
        }
    }
}

impl Binned {
    /// Bin every column of `ds` (this rank's shard; the whole data on one process); constant columns are dropped.
    /// The bounds, the kept columns and which ones hold a NaN are agreed over the ranks of `comm`: every rank bins
    /// its documents as one process would bin them among all the ranks' documents. The bounds come from at most
    /// `sample_docs` documents (all ranks together), spread evenly over the global numbering.
    pub fn new(
        ds: &Dataset,
        max_bin: usize,
        sample_docs: usize,
        layout: &Layout,
        comm: &dyn Allreduce,
    ) -> Result<Self> {
        let columns = Columns::of(ds);
        let plan = Plan::agree(
            &columns,
            ds.n_docs(),
            ds.n_features(),
            max_bin,
            sample_docs,
            layout,
            comm,
        )?;
        let bins = plan.bin_columns(&columns);
        Ok(plan.into_binned(bins))
    }

    /// [`Binned::new`] on data the caller gives up: the same bins, bit for bit, and `ds` is left without its
    /// feature matrix (no features; its labels, queries and the rest are kept). A dense row-major matrix is binned
    /// a block of rows at a time from its last rows, each block's f32 values freed once binned, so the matrix and
    /// the bins are never held whole together: the peak is the matrix, not the matrix plus its bins (at 3.77 M
    /// documents × 136 features, 2.05 GB and 0.5 GB).
    pub fn take(
        ds: &mut Dataset,
        max_bin: usize,
        sample_docs: usize,
        layout: &Layout,
        comm: &dyn Allreduce,
    ) -> Result<Self> {
        let (n, d) = (ds.n_docs(), ds.n_features());
        let row_major = matches!(ds.features(), FeatureMatrix::Dense(a) if a.is_standard_layout());
        if !row_major || d == 0 {
            let binned = Self::new(ds, max_bin, sample_docs, layout, comm)?;
            *ds.features_mut() = FeatureMatrix::Dense(ndarray::Array2::zeros((n, 0)));
            return Ok(binned);
        }
        let plan = Plan::agree(&Columns::of(ds), n, d, max_bin, sample_docs, layout, comm)?;
        let FeatureMatrix::Dense(a) = std::mem::replace(
            ds.features_mut(),
            FeatureMatrix::Dense(ndarray::Array2::zeros((n, 0))),
        ) else {
            unreachable!("checked dense above")
        };
        // Row-major: cell (i, j) is at `start + i·d + j`.
        let (mut values, start) = a.into_raw_vec_and_offset();
        let start = start.unwrap_or(0);
        // Zeroed columns take memory only as they are written.
        let mut bins: Vec<BinColumn> = plan
            .kept
            .iter()
            .map(|&j| {
                if plan.narrow(j) {
                    BinColumn::Narrow(vec![0; n])
                } else {
                    BinColumn::Wide(vec![0; n])
                }
            })
            .collect();
        let block = (TAKE_BLOCK_VALUES / d).max(1);
        let mut end = n;
        while end > 0 {
            let first = end.saturating_sub(block);
            plan.bin_rows(
                &values[start + first * d..start + end * d],
                d,
                first,
                &mut bins,
            );
            values.truncate(start + first * d);
            values.shrink_to_fit();
            end = first;
        }
        Ok(plan.into_binned(bins))
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
        let bin = |d: &Dataset, max_bin| {
            Binned::new(
                d,
                max_bin,
                BIN_SAMPLE_DOCS,
                &Layout::single(d),
                &ltr_core::SingleProcess,
            )
            .unwrap()
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
        assert_eq!(bounds_for(&[f32::NAN, 1.0, 2.0, f32::NAN], 255), vec![1.0]);
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
                max_bin,
                BIN_SAMPLE_DOCS,
                &layout,
                &ltr_core::SingleProcess,
            )
            .unwrap();
            let mut owned = ds.clone();
            let taken = Binned::take(
                &mut owned,
                max_bin,
                BIN_SAMPLE_DOCS,
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
        let sampled = Binned::new(&ds, 255, 64, &layout, &ltr_core::SingleProcess).unwrap();
        let mut owned = ds.clone();
        let taken = Binned::take(&mut owned, 255, 64, &layout, &ltr_core::SingleProcess).unwrap();
        assert!(sampled.bounds[0].len() < 64, "{}", sampled.bounds[0].len());
        assert_eq!(sampled.bounds, taken.bounds);
        assert_eq!(sampled.bins, taken.bins);
        let all = Binned::new(&ds, 255, n, &layout, &ltr_core::SingleProcess).unwrap();
        assert!(all.bounds[0].len() > 128, "{}", all.bounds[0].len());
    }
}
