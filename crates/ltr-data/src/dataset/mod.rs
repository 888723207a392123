//! The in-memory dataset: features (dense or sparse), labels and query groups.

mod row;
mod text_column;

use std::ops::Range;

use ndarray::Array2;
use rayon::prelude::*;
use sprs::CsMatI;

use crate::error::{DataError, Result};
use row::scores_by_four;
pub use row::{dot_dense, dot_dense_rows, dot_sparse, Row, RowEntries};
pub use text_column::TextColumn;

/// Compressed sparse rows with `u32` column indices (a feature index beyond `u32` is rejected at parse time).
pub type SparseMatrix = CsMatI<f32, u32, usize>;

/// Feature storage: a dense row-major matrix or compressed sparse rows.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureMatrix {
    /// Row-major, standard layout (every row is one contiguous slice).
    Dense(Array2<f32>),
    /// Compressed sparse rows.
    Sparse(SparseMatrix),
}

/// How the parser chooses a [`FeatureMatrix`] variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Storage {
    /// Dense when at least [`AUTO_DENSE_DENSITY`] of the cells are stored, sparse otherwise.
    #[default]
    Auto,
    /// Always dense.
    Dense,
    /// Always sparse.
    Sparse,
}

/// The density from which [`Storage::Auto`] picks dense storage. Dense f32 costs 4 bytes a cell and sparse 8 bytes a
/// stored value, so dense is smaller above 0.5; below that we still prefer dense down to 0.25 for its faster rows.
pub const AUTO_DENSE_DENSITY: f64 = 0.25;

/// Values per block of the whole-data scans ([`Dataset::features_in_unit_interval`], [`Dataset::first_nan`]).
const BLOCK: usize = 1024;

/// A learning-to-rank dataset: documents grouped by query.
///
/// A query is a contiguous run of rows. `query_offsets` has one entry more than there are queries; query `q` owns
/// rows `query_offsets[q]..query_offsets[q + 1]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    features: FeatureMatrix,
    labels: Vec<f32>,
    query_offsets: Vec<usize>,
    qids: Vec<String>,
    docids: Option<TextColumn>,
    comments: Option<TextColumn>,
    query_weights: Option<Vec<f64>>,
    propensities: Option<Vec<f64>>,
    positions: Option<Vec<u32>>,
}

/// How a click-aware learner weighs the queries of a click training set (`ltr_clicks::click_training_set`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClickWeighting {
    /// Inverse propensity weighting (Joachims, Swaminathan & Schnabel 2017): each click counts 1/max(p, clip),
    /// p the examination probability of the rank it was clicked at. `clip` = 0 is the unbiased, unclipped estimator.
    Ips {
        /// The smallest propensity used (weights are capped at 1/clip).
        clip: f64,
    },
    /// The naive control: every click counts once, wherever it was displayed.
    Naive,
}

impl Dataset {
    /// Assemble a dataset, checking that every part agrees in size, that no query is empty and that labels are finite.
    pub fn new(
        features: FeatureMatrix,
        labels: Vec<f32>,
        query_offsets: Vec<usize>,
        qids: Vec<String>,
    ) -> Result<Self> {
        let n = match &features {
            FeatureMatrix::Dense(a) => {
                if !a.is_standard_layout() {
                    return Err(DataError::Invalid(
                        "dense features must be in standard (row-major) layout".into(),
                    ));
                }
                a.nrows()
            }
            FeatureMatrix::Sparse(m) => {
                if !m.is_csr() {
                    return Err(DataError::Invalid("sparse features must be CSR".into()));
                }
                m.rows()
            }
        };
        if labels.len() != n {
            return Err(DataError::Shape(format!(
                "{} labels for {} feature rows",
                labels.len(),
                n
            )));
        }
        if query_offsets.first() != Some(&0) || query_offsets.last() != Some(&n) {
            return Err(DataError::Shape(
                "query offsets must start at 0 and end at the row count".into(),
            ));
        }
        if query_offsets.windows(2).any(|w| w[1] <= w[0]) {
            return Err(DataError::Invalid(
                "every query must have at least one document".into(),
            ));
        }
        if qids.len() + 1 != query_offsets.len() {
            return Err(DataError::Shape(format!(
                "{} qids for {} queries",
                qids.len(),
                query_offsets.len() - 1
            )));
        }
        if let Some(i) = labels.iter().position(|l| !l.is_finite()) {
            return Err(DataError::Invalid(format!(
                "label of row {i} is not finite"
            )));
        }
        Ok(Self {
            features,
            labels,
            query_offsets,
            qids,
            docids: None,
            comments: None,
            query_weights: None,
            propensities: None,
            positions: None,
        })
    }

    /// Attach per-query weights: how many identical queries each one stands for (a click training set's click
    /// counts). Every weight must be finite and positive. Read by the click-aware learners (see
    /// [`Self::click_weights`]); the other learners and the evaluators ignore them.
    pub fn with_query_weights(mut self, weights: Vec<f64>) -> Result<Self> {
        self.query_weights = Some(self.checked_per_query("query weight", weights, f64::MAX)?);
        Ok(self)
    }

    /// Attach per-query propensities: the examination probability of the rank at which the query's one clicked
    /// document was displayed (a click training set) — absolute, in (0, 1], or relative to rank 1 (p_k/p_1, which
    /// an estimate may put slightly above 1); only ratios matter to the learners.
    pub fn with_propensities(mut self, propensities: Vec<f64>) -> Result<Self> {
        self.propensities = Some(self.checked_per_query("propensity", propensities, f64::MAX)?);
        Ok(self)
    }

    /// Attach each row's display position (0 = the top of the page) in the logged session its query stands for: a
    /// click set for learners that debias by position (`lambdamart`'s `debias`), whose labels are clicks. Positions
    /// within a query must be distinct.
    pub fn with_positions(mut self, positions: Vec<u32>) -> Result<Self> {
        if positions.len() != self.n_docs() {
            return Err(DataError::Shape(format!(
                "{} positions for {} rows",
                positions.len(),
                self.n_docs()
            )));
        }
        for q in 0..self.n_queries() {
            let mut seen: Vec<u32> = positions[self.query_range(q)].to_vec();
            seen.sort_unstable();
            if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
                return Err(DataError::Invalid(format!(
                    "query {} shows two documents at position {}",
                    self.qids[q], w[0]
                )));
            }
        }
        self.positions = Some(positions);
        Ok(self)
    }

    /// Each row's display position, when attached ([`Self::with_positions`]).
    pub fn positions(&self) -> Option<&[u32]> {
        self.positions.as_deref()
    }

    fn checked_per_query(&self, what: &str, v: Vec<f64>, max: f64) -> Result<Vec<f64>> {
        if v.len() != self.n_queries() {
            return Err(DataError::Shape(format!(
                "{} {what}s for {} queries",
                v.len(),
                self.n_queries()
            )));
        }
        if let Some(q) = v.iter().position(|x| !(*x > 0.0 && *x <= max)) {
            return Err(DataError::Invalid(format!(
                "{what} {} of query {} is not in (0, {max}]",
                v[q], self.qids[q]
            )));
        }
        Ok(v)
    }

    /// The per-query weights, when attached.
    pub fn query_weights(&self) -> Option<&[f64]> {
        self.query_weights.as_deref()
    }

    /// The per-query propensities, when attached.
    pub fn propensities(&self) -> Option<&[f64]> {
        self.propensities.as_deref()
    }

    /// Per-query loss weights for a click-aware learner, normalised to sum to 1 — weight × 1/max(p, clip) under
    /// [`ClickWeighting::Ips`], the weight alone under [`ClickWeighting::Naive`] — or `None` when the dataset has
    /// neither weights nor propensities (judged data: every query counts the same). Normalising makes one setting
    /// of C or of a learning rate mean the same at 10³ and at 10⁶ clicks, as SVMrank's C/n does.
    pub fn click_weights(&self, weighting: ClickWeighting) -> Option<Vec<f64>> {
        if self.query_weights.is_none() && self.propensities.is_none() {
            return None;
        }
        let mut w: Vec<f64> = (0..self.n_queries())
            .map(|q| {
                let n = self.query_weights.as_ref().map_or(1.0, |w| w[q]);
                match (weighting, &self.propensities) {
                    (ClickWeighting::Ips { clip }, Some(p)) => n / p[q].max(clip),
                    _ => n,
                }
            })
            .collect();
        let total: f64 = w.iter().sum();
        w.iter_mut().for_each(|x| *x /= total);
        Some(w)
    }

    /// Per-query loss weights of a listwise softmax learner on labels that are relevance estimates (the doubly
    /// robust set, `ltr_clicks::doubly_robust_set`): each query's weight (1 when none is attached) times the sum
    /// of its labels, normalised to sum to 1. A query's softmax cross-entropy against the target `labels / Σ
    /// labels`, weighted so, is `Σ_i label_i · (−log p_i)` up to one constant: linear in the labels, so unbiased
    /// labels give an unbiased loss. An error names the first query with a negative or non-finite label sum, and
    /// says so when every sum is 0 (nothing to learn).
    pub fn label_sum_weights(&self) -> Result<Vec<f64>> {
        let mut w = Vec::with_capacity(self.n_queries());
        for (q, r) in self.query_offsets.windows(2).enumerate() {
            let sum: f64 = self.labels[r[0]..r[1]].iter().map(|&l| f64::from(l)).sum();
            if !(sum >= 0.0 && sum.is_finite()) {
                return Err(DataError::Shape(format!(
                    "query {}: its labels sum to {sum}; a listwise softmax over labels / their sum needs \
                     non-negative labels",
                    self.qids[q]
                )));
            }
            w.push(sum * self.query_weights.as_ref().map_or(1.0, |qw| qw[q]));
        }
        let total: f64 = w.iter().sum();
        if total <= 0.0 {
            return Err(DataError::Shape(
                "every query's labels sum to 0: a listwise softmax over labels / their sum has nothing to learn"
                    .into(),
            ));
        }
        w.iter_mut().for_each(|x| *x /= total);
        Ok(w)
    }

    /// Attach document ids (one per row).
    pub fn with_docids(mut self, docids: TextColumn) -> Result<Self> {
        if docids.len() != self.n_docs() {
            return Err(DataError::Shape(format!(
                "{} docids for {} rows",
                docids.len(),
                self.n_docs()
            )));
        }
        self.docids = Some(docids);
        Ok(self)
    }

    /// The same dataset without document ids: click logs then name its documents `d0`, `d1`, … by row within their
    /// query, as for a file without `#docid` comments.
    pub fn without_docids(mut self) -> Self {
        self.docids = None;
        self
    }

    /// Attach the raw comments (text after `#`, one per row).
    pub fn with_comments(mut self, comments: TextColumn) -> Result<Self> {
        if comments.len() != self.n_docs() {
            return Err(DataError::Shape(format!(
                "{} comments for {} rows",
                comments.len(),
                self.n_docs()
            )));
        }
        self.comments = Some(comments);
        Ok(self)
    }

    /// Number of documents (rows).
    pub fn n_docs(&self) -> usize {
        self.labels.len()
    }
    /// Number of queries.
    pub fn n_queries(&self) -> usize {
        self.qids.len()
    }
    /// Number of features (columns); feature index `k` in the file is column `k - 1`.
    pub fn n_features(&self) -> usize {
        match &self.features {
            FeatureMatrix::Dense(a) => a.ncols(),
            FeatureMatrix::Sparse(m) => m.cols(),
        }
    }
    /// Number of stored feature values.
    pub fn nnz(&self) -> usize {
        match &self.features {
            FeatureMatrix::Dense(a) => a.len(),
            FeatureMatrix::Sparse(m) => m.nnz(),
        }
    }
    /// Fraction of the cells that hold a non-zero value.
    pub fn density(&self) -> f64 {
        let cells = self.n_docs() as f64 * self.n_features() as f64;
        if cells == 0.0 {
            return 0.0;
        }
        let nz = match &self.features {
            FeatureMatrix::Dense(a) => a.iter().filter(|v| **v != 0.0).count(),
            FeatureMatrix::Sparse(m) => m.data().iter().filter(|v| **v != 0.0).count(),
        };
        nz as f64 / cells
    }
    /// Whether every stored feature value lies in [0, 1] (LETOR's query-normalised folds do; raw web features
    /// do not), NaN aside: a missing value is in no range. `auto` settings key off it: normalisation, ListNet's
    /// step control.
    pub fn features_in_unit_interval(&self) -> bool {
        // Every stored value, row after row, is one slice of the matrix (dense: standard layout; sparse: its data),
        // read in blocks without an early exit inside a block so that the comparison is vectorised (a click
        // training set holds a million rows: this check was several percent of a click cell).
        // Two comparisons, not `!(0.0..=1.0).contains(&v)`: a NaN fails both, so it is in no range and not outside.
        #[allow(clippy::manual_range_contains)]
        let outside = |x: &[f32]| {
            x.chunks(BLOCK)
                .any(|b| b.iter().fold(false, |o, &v| o | (v < 0.0) | (v > 1.0)))
        };
        match &self.features {
            FeatureMatrix::Dense(a) => match a.as_slice() {
                Some(x) => !outside(x),
                None => a.iter().all(|v| v.is_nan() || (0.0..=1.0).contains(v)),
            },
            FeatureMatrix::Sparse(m) => !outside(m.data()),
        }
    }

    /// The first NaN feature value in row order, as (row, column), both 0-based; `None` when there is none. A
    /// NaN is a missing value, which only the tree learners take; text files never hold one (the parser refuses
    /// it), data built in memory may.
    pub fn first_nan(&self) -> Option<(usize, usize)> {
        match &self.features {
            FeatureMatrix::Dense(a) => match a.as_slice() {
                // The first block holding a NaN (a test per block without an early exit, vectorised), then the
                // first NaN in it: the first in row order.
                Some(x) => x
                    .chunks(BLOCK)
                    .enumerate()
                    .find(|(_, b)| b.iter().fold(false, |n, v| n | v.is_nan()))
                    .and_then(|(k, b)| Some(k * BLOCK + b.iter().position(|v| v.is_nan())?))
                    .map(|k| (k / a.ncols(), k % a.ncols())),
                None => a.indexed_iter().find(|(_, v)| v.is_nan()).map(|(rc, _)| rc),
            },
            FeatureMatrix::Sparse(m) => {
                let k = m.data().iter().position(|v| v.is_nan())?;
                // The row whose stored values hold position k: the last one starting at or before it.
                let indptr = m.indptr();
                let row = indptr.raw_storage().partition_point(|&p| p <= k) - 1;
                Some((row, m.indices()[k] as usize))
            }
        }
    }

    /// All labels, in row order.
    pub fn labels(&self) -> &[f32] {
        &self.labels
    }
    /// Query boundaries (length `n_queries + 1`).
    pub fn query_offsets(&self) -> &[usize] {
        &self.query_offsets
    }
    /// Query ids, one per query.
    pub fn qids(&self) -> &[String] {
        &self.qids
    }
    /// Document ids, when the file had `docid` comments.
    pub fn docids(&self) -> Option<&TextColumn> {
        self.docids.as_ref()
    }
    /// Raw comments, when kept.
    pub fn comments(&self) -> Option<&TextColumn> {
        self.comments.as_ref()
    }
    /// The feature storage.
    pub fn features(&self) -> &FeatureMatrix {
        &self.features
    }
    /// Mutable feature storage (for in-place transforms).
    pub fn features_mut(&mut self) -> &mut FeatureMatrix {
        &mut self.features
    }
    /// True when features are stored densely.
    pub fn is_dense(&self) -> bool {
        matches!(self.features, FeatureMatrix::Dense(_))
    }
    /// Row `i` of the feature matrix.
    #[inline(always)]
    pub fn row(&self, i: usize) -> Row<'_> {
        match &self.features {
            FeatureMatrix::Dense(a) => {
                let d = a.ncols();
                let s = a
                    .as_slice()
                    .expect("standard layout checked at construction");
                Row::Dense(&s[i * d..(i + 1) * d])
            }
            FeatureMatrix::Sparse(m) => {
                let r = m.indptr().outer_inds_sz(i);
                Row::Sparse {
                    indices: &m.indices()[r.clone()],
                    values: &m.data()[r],
                }
            }
        }
    }
    /// Row range of query `q`.
    pub fn query_range(&self, q: usize) -> Range<usize> {
        self.query_offsets[q]..self.query_offsets[q + 1]
    }
    /// A zero-copy view of query `q`.
    pub fn query(&self, q: usize) -> QueryView<'_> {
        QueryView {
            dataset: self,
            index: q,
            rows: self.query_range(q),
        }
    }
    /// Iterate over all queries.
    pub fn queries(&self) -> impl ExactSizeIterator<Item = QueryView<'_>> + '_ {
        (0..self.n_queries()).map(move |q| self.query(q))
    }
    /// Iterate over all queries in parallel (rayon); the iterator is indexed, so `collect` keeps query order.
    pub fn par_queries(&self) -> impl IndexedParallelIterator<Item = QueryView<'_>> + '_ {
        (0..self.n_queries())
            .into_par_iter()
            .map(move |q| self.query(q))
    }
    /// Scores `<x, w>` of every row, in row order (parallel over fixed row blocks: deterministic).
    pub fn scores(&self, w: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.n_docs()];
        out.par_chunks_mut(4096)
            .enumerate()
            .for_each(|(b, chunk)| block_scores(self, b * 4096, w, chunk));
        out
    }
    /// `Xᵀ c` for a coefficient per row, summed over fixed row blocks in a fixed order, so the result is the same
    /// bit for bit at any thread count.
    pub fn transpose_times(&self, coef: &[f64]) -> Vec<f64> {
        assert_eq!(coef.len(), self.n_docs());
        let d = self.n_features();
        const BLOCK: usize = 8192;
        let partials: Vec<Vec<f64>> = coef
            .par_chunks(BLOCK)
            .enumerate()
            .map(|(b, cs)| {
                let mut acc = vec![0.0; d];
                block_transpose_times(self, b * BLOCK, cs, &mut acc);
                acc
            })
            .collect();
        let mut out = vec![0.0; d];
        for p in partials {
            for (o, v) in out.iter_mut().zip(p) {
                *o += v;
            }
        }
        out
    }
    /// Bytes the feature matrix holds in memory: dense f32 cells, or CSR values, u32 indices and row pointers.
    pub fn feature_memory_bytes(&self) -> u64 {
        (match &self.features {
            FeatureMatrix::Dense(a) => a.len() * 4,
            FeatureMatrix::Sparse(m) => m.nnz() * 8 + (m.rows() + 1) * 8,
        }) as u64
    }
    /// Bytes this dataset holds in memory: features (dense f32 cells, or CSR values, u32 indices and row pointers),
    /// labels, query offsets, qids, doc ids, comments and click columns.
    pub fn memory_bytes(&self) -> u64 {
        let features = self.feature_memory_bytes() as usize;
        let text = |c: &Option<TextColumn>| c.as_ref().map_or(0, TextColumn::heap_bytes);
        let qids: usize = self.qids.iter().map(|q| q.len() + 24).sum();
        let clicks = [&self.query_weights, &self.propensities]
            .iter()
            .map(|v| v.as_ref().map_or(0, |v| v.len() * 8))
            .sum::<usize>()
            + self.positions.as_ref().map_or(0, |p| p.len() * 4);
        (features
            + self.labels.len() * 4
            + self.query_offsets.len() * 8
            + qids
            + text(&self.docids)
            + text(&self.comments)
            + clicks) as u64
    }
    /// Histogram of labels (label value → count), sorted by label.
    pub fn label_histogram(&self) -> Vec<(f32, usize)> {
        let mut sorted: Vec<f32> = self.labels.clone();
        sorted.sort_by(f32::total_cmp);
        let mut out: Vec<(f32, usize)> = Vec::new();
        for l in sorted {
            match out.last_mut() {
                Some((v, c)) if *v == l => *c += 1,
                _ => out.push((l, 1)),
            }
        }
        out
    }
    /// True when every label is a whole number.
    pub fn has_integer_labels(&self) -> bool {
        self.labels.iter().all(|l| l.fract() == 0.0)
    }
    /// Keep the listed queries, in the order given (a new dataset; rows are copied).
    pub fn select_queries(&self, queries: &[usize]) -> Dataset {
        let mut rows = Vec::new();
        let mut offsets = vec![0];
        let mut qids = Vec::with_capacity(queries.len());
        for &q in queries {
            rows.extend(self.query_range(q));
            offsets.push(rows.len());
            qids.push(self.qids[q].clone());
        }
        let features = self.select_rows_matrix(&rows);
        let labels = rows.iter().map(|&r| self.labels[r]).collect();
        Dataset {
            features,
            labels,
            query_offsets: offsets,
            qids,
            docids: self.docids.as_ref().map(|c| c.select(&rows)),
            comments: self.comments.as_ref().map(|c| c.select(&rows)),
            query_weights: self
                .query_weights
                .as_ref()
                .map(|w| queries.iter().map(|&q| w[q]).collect()),
            propensities: self
                .propensities
                .as_ref()
                .map(|p| queries.iter().map(|&q| p[q]).collect()),
            positions: self
                .positions
                .as_ref()
                .map(|p| rows.iter().map(|&r| p[r]).collect()),
        }
    }
    /// Queries `at..` moved into a new dataset; this one keeps queries `..at`. Only the moved rows are copied, and
    /// this dataset gives back their memory, so splitting a dataset into parts from its last one holds at most
    /// the data and one part (where [`Dataset::select_queries`] for every part holds the data twice).
    pub fn split_off_queries(&mut self, at: usize) -> Dataset {
        assert!(at <= self.n_queries(), "query {at} of {}", self.n_queries());
        let row = self.query_offsets[at];
        let features = match &mut self.features {
            FeatureMatrix::Dense(a) => {
                let tail = a.slice(ndarray::s![row.., ..]).to_owned();
                let d = a.ncols();
                let head = std::mem::replace(a, Array2::zeros((0, d)));
                let head = if head.is_standard_layout() {
                    let (mut values, offset) = head.into_raw_vec_and_offset();
                    let start = offset.unwrap_or(0);
                    values.truncate(start + row * d);
                    values.drain(..start);
                    values.shrink_to_fit();
                    Array2::from_shape_vec((row, d), values).expect("the head's rows")
                } else {
                    head.slice(ndarray::s![..row, ..]).to_owned()
                };
                *a = head;
                FeatureMatrix::Dense(tail)
            }
            FeatureMatrix::Sparse(_) => {
                let tail_rows: Vec<usize> = (row..self.n_docs()).collect();
                let head_rows: Vec<usize> = (0..row).collect();
                let tail = self.select_rows_matrix(&tail_rows);
                self.features = self.select_rows_matrix(&head_rows);
                tail
            }
        };
        let mut labels = self.labels.split_off(row);
        labels.shrink_to_fit();
        self.labels.shrink_to_fit();
        let query_offsets: Vec<usize> = self.query_offsets[at..].iter().map(|o| o - row).collect();
        self.query_offsets.truncate(at + 1);
        let tail = Dataset {
            features,
            labels,
            query_offsets,
            qids: self.qids.split_off(at),
            docids: self.docids.as_mut().map(|c| c.split_off(row)),
            comments: self.comments.as_mut().map(|c| c.split_off(row)),
            query_weights: self.query_weights.as_mut().map(|w| w.split_off(at)),
            propensities: self.propensities.as_mut().map(|p| p.split_off(at)),
            positions: self.positions.as_mut().map(|p| {
                let tail = p.split_off(row);
                p.shrink_to_fit();
                tail
            }),
        };
        self.qids.shrink_to_fit();
        tail
    }
    /// Keep only the queries `queries` (consecutive), in place: no other copy of the kept rows is made (a dense
    /// row-major matrix moves them to its front and gives back the rest), so the peak is the data itself, where
    /// [`Dataset::select_queries`] holds the data and the kept part together.
    pub fn retain_queries(&mut self, queries: std::ops::Range<usize>) {
        assert!(
            queries.start <= queries.end && queries.end <= self.n_queries(),
            "queries {queries:?} of {}",
            self.n_queries()
        );
        let (first, end) = (
            self.query_offsets[queries.start],
            self.query_offsets[queries.end],
        );
        self.features = match std::mem::replace(
            &mut self.features,
            FeatureMatrix::Dense(Array2::zeros((0, 0))),
        ) {
            FeatureMatrix::Dense(a) if a.is_standard_layout() => {
                let d = a.ncols();
                let (mut values, offset) = a.into_raw_vec_and_offset();
                let start = offset.unwrap_or(0);
                values.truncate(start + end * d);
                values.drain(..start + first * d);
                values.shrink_to_fit();
                FeatureMatrix::Dense(
                    Array2::from_shape_vec((end - first, d), values).expect("the kept rows"),
                )
            }
            FeatureMatrix::Dense(a) => {
                FeatureMatrix::Dense(a.slice(ndarray::s![first..end, ..]).to_owned())
            }
            sparse => {
                self.features = sparse;
                self.select_rows_matrix(&(first..end).collect::<Vec<_>>())
            }
        };
        fn keep<T>(v: &mut Vec<T>, range: std::ops::Range<usize>) {
            v.truncate(range.end);
            v.drain(..range.start);
            v.shrink_to_fit();
        }
        keep(&mut self.labels, first..end);
        if let Some(p) = &mut self.positions {
            keep(p, first..end);
        }
        keep(&mut self.qids, queries.clone());
        self.query_offsets = self.query_offsets[queries.start..=queries.end]
            .iter()
            .map(|o| o - first)
            .collect();
        for column in [&mut self.docids, &mut self.comments].into_iter().flatten() {
            column.split_off(end);
            if first > 0 {
                *column = column.split_off(first);
            }
        }
        for per_query in [&mut self.query_weights, &mut self.propensities]
            .into_iter()
            .flatten()
        {
            keep(per_query, queries.clone());
        }
    }
    /// The feature rows `rows`, in that order, copied into a new matrix of the same storage (a row may be listed
    /// more than once): the features of a dataset whose queries regroup this one's documents, such as a click
    /// training set (`ltr_clicks::click_training_set`), built with [`Dataset::new`].
    pub fn select_rows_matrix(&self, rows: &[usize]) -> FeatureMatrix {
        match &self.features {
            FeatureMatrix::Dense(a) => FeatureMatrix::Dense(a.select(ndarray::Axis(0), rows)),
            FeatureMatrix::Sparse(m) => {
                let mut indptr = Vec::with_capacity(rows.len() + 1);
                let mut indices = Vec::new();
                let mut data = Vec::new();
                indptr.push(0);
                for &r in rows {
                    if let Row::Sparse {
                        indices: ix,
                        values,
                    } = self.row(r)
                    {
                        indices.extend_from_slice(ix);
                        data.extend_from_slice(values);
                    }
                    indptr.push(indices.len());
                }
                FeatureMatrix::Sparse(CsMatI::new((rows.len(), m.cols()), indptr, indices, data))
            }
        }
    }
    /// Convert to dense storage (no-op when already dense).
    pub fn to_dense(&mut self) {
        if let FeatureMatrix::Sparse(m) = &self.features {
            let mut a = Array2::<f32>::zeros((m.rows(), m.cols()));
            for (i, row) in m.outer_iterator().enumerate() {
                for (j, &v) in row.iter() {
                    a[[i, j]] = v;
                }
            }
            self.features = FeatureMatrix::Dense(a);
        }
    }
    /// Convert to sparse storage, dropping zeros (no-op when already sparse).
    pub fn to_sparse(&mut self) {
        if let FeatureMatrix::Dense(a) = &self.features {
            let mut indptr = vec![0usize];
            let mut indices = Vec::new();
            let mut data = Vec::new();
            for row in a.rows() {
                for (j, &v) in row.iter().enumerate() {
                    if v != 0.0 {
                        indices.push(j as u32);
                        data.push(v);
                    }
                }
                indptr.push(indices.len());
            }
            self.features =
                FeatureMatrix::Sparse(CsMatI::new((a.nrows(), a.ncols()), indptr, indices, data));
        }
    }
    /// Widen (or keep) the feature count to `d`, e.g. so a test file matches its training file.
    pub fn set_n_features(&mut self, d: usize) -> Result<()> {
        let cur = self.n_features();
        if d < cur {
            return Err(DataError::Shape(format!(
                "cannot shrink {cur} features to {d}"
            )));
        }
        if d == cur {
            return Ok(());
        }
        self.features = match std::mem::replace(
            &mut self.features,
            FeatureMatrix::Dense(Array2::zeros((0, 0))),
        ) {
            FeatureMatrix::Dense(a) => {
                let mut b = Array2::<f32>::zeros((a.nrows(), d));
                b.slice_mut(ndarray::s![.., ..cur]).assign(&a);
                FeatureMatrix::Dense(b)
            }
            FeatureMatrix::Sparse(m) => {
                let (indptr, indices, data) = m.into_raw_storage();
                let rows = indptr.len() - 1;
                FeatureMatrix::Sparse(CsMatI::new((rows, d), indptr, indices, data))
            }
        };
        Ok(())
    }
    /// Short human-readable summary statistics.
    pub fn summary(&self) -> DatasetSummary {
        let mut sizes: Vec<usize> = self.query_offsets.windows(2).map(|w| w[1] - w[0]).collect();
        sizes.sort_unstable();
        let median = if sizes.is_empty() {
            0.0
        } else if sizes.len() % 2 == 1 {
            sizes[sizes.len() / 2] as f64
        } else {
            (sizes[sizes.len() / 2 - 1] + sizes[sizes.len() / 2]) as f64 / 2.0
        };
        DatasetSummary {
            queries: self.n_queries(),
            documents: self.n_docs(),
            features: self.n_features(),
            density: self.density(),
            storage: if self.is_dense() { "dense" } else { "sparse" },
            labels: self.label_histogram(),
            docs_per_query_min: sizes.first().copied().unwrap_or(0),
            docs_per_query_median: median,
            docs_per_query_max: sizes.last().copied().unwrap_or(0),
        }
    }
}

/// Summary statistics of a dataset (what `ltr inspect` prints).
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetSummary {
    /// Number of queries.
    pub queries: usize,
    /// Number of documents.
    pub documents: usize,
    /// Number of features.
    pub features: usize,
    /// Fraction of non-zero cells.
    pub density: f64,
    /// "dense" or "sparse".
    pub storage: &'static str,
    /// Label value → count.
    pub labels: Vec<(f32, usize)>,
    /// Smallest query.
    pub docs_per_query_min: usize,
    /// Median query size.
    pub docs_per_query_median: f64,
    /// Largest query.
    pub docs_per_query_max: usize,
}

/// A zero-copy view of one query's documents.
#[derive(Debug, Clone)]
pub struct QueryView<'a> {
    dataset: &'a Dataset,
    index: usize,
    rows: Range<usize>,
}

impl<'a> QueryView<'a> {
    /// The query's position in the dataset.
    pub fn index(&self) -> usize {
        self.index
    }
    /// The query id.
    pub fn qid(&self) -> &'a str {
        &self.dataset.qids[self.index]
    }
    /// Number of documents.
    pub fn len(&self) -> usize {
        self.rows.len()
    }
    /// Never true for a valid dataset (empty queries are rejected), kept for API completeness.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// The global row range.
    pub fn rows(&self) -> Range<usize> {
        self.rows.clone()
    }
    /// Labels of the query's documents.
    pub fn labels(&self) -> &'a [f32] {
        &self.dataset.labels[self.rows.clone()]
    }
    /// Feature row of the query's `i`-th document.
    #[inline(always)]
    pub fn row(&self, i: usize) -> Row<'a> {
        self.dataset.row(self.rows.start + i)
    }
    /// Document id of the `i`-th document, if known.
    pub fn docid(&self, i: usize) -> Option<&'a str> {
        self.dataset
            .docids
            .as_ref()
            .map(|c| c.get(self.rows.start + i))
    }
    /// The dataset this view borrows from.
    pub fn dataset(&self) -> &'a Dataset {
        self.dataset
    }
    /// Scores `<x, w>` of the query's documents, written into `out` (length `len()`).
    pub fn scores_into(&self, w: &[f64], out: &mut [f64]) {
        scores_of_rows(self, w, out);
    }
}

crate::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// Scores of rows `first..first + out.len()`: [`Dataset::scores`]' block, with AVX2 and AVX-512 clones chosen at
/// run time like [`scores_of_rows`] (the same bits).
fn block_scores(ds: &Dataset, first: usize, w: &[f64], out: &mut [f64]) {
    scores_by_four(|k| ds.row(first + k), w, out);
}
}

crate::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// `acc += Σ_k coef[k] · x_(first + k)`: [`Dataset::transpose_times`]' block, with AVX2 and AVX-512 clones chosen
/// at run time (the same bits).
fn block_transpose_times(ds: &Dataset, first: usize, coef: &[f64], acc: &mut [f64]) {
    for (k, &c) in coef.iter().enumerate() {
        if c != 0.0 {
            ds.row(first + k).axpy(c, acc);
        }
    }
}
}

crate::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// [`QueryView::scores_into`], compiled also for AVX2 and AVX-512 and chosen at run time: a dense row's product runs
/// four lanes at once there. Only the instructions change, not the order of the additions, so every score keeps its
/// bits on any machine.
fn scores_of_rows<'a>(view: &QueryView<'a>, w: &[f64], out: &mut [f64]) {
    scores_by_four(|i| view.row(i), w, out);
}
}
