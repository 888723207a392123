//! Runs of consecutive queries with the same feature rows, such as a click training set's clicks on one displayed
//! list (`ltr_clicks::click_training_set`: each click is a query holding a copy of the whole list, and 10⁶ clicks on
//! OHSUMED are ten thousand copies of 63 lists of about 150 documents).
//!
//! Such queries share their scores, their order by score and every product of their rows with a vector, so
//! [`PairwiseObjective`](crate::PairwiseObjective)'s solver sums ([`scores`](crate::PairwiseObjective::scores),
//! [`gradient_sums`](crate::PairwiseObjective::gradient_sums),
//! [`hessian_product_sums`](crate::PairwiseObjective::hessian_product_sums)) score and sort a run once and read its
//! rows once for all its queries' parts of Xᵀc. Each query's own arithmetic is unchanged — its part of Xᵀc is still
//! taken in f64 in row order and then added exactly — so the sums are the same bit for bit as query by query.

use ltr_data::{Dataset, Row};
use rayon::prelude::*;

/// Queries per run at most: a run's partial sums (one d-vector per query) stay in the L1 or L2 cache, and long
/// lists of copies still split into several pieces of parallel work.
const MAX_RUN: usize = 32;

/// The runs of a dataset: run `r` is the queries `starts[r]..starts[r + 1]`, all with the rows of its first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedRows {
    starts: Vec<usize>,
    /// The first row of each run, and the number of rows after the last run.
    row_starts: Vec<usize>,
    /// The *lists*: the runs of one list of rows (a run ends at 32 queries, and the next run of the same rows
    /// continues its list). List `l` is the runs `list_starts[l]..list_starts[l + 1]`.
    list_starts: Vec<usize>,
    /// The list of each run.
    list_of_run: Vec<usize>,
}

impl SharedRows {
    /// The runs of `ds`: a query joins the run before it when its rows equal the run's first query's, feature
    /// value for feature value (bitwise), and the run has fewer than 32 queries.
    pub fn of(ds: &Dataset) -> Self {
        let nq = ds.n_queries();
        let same: Vec<bool> = (1..nq)
            .into_par_iter()
            .map(|q| same_rows(ds, q - 1, q))
            .collect();
        let mut starts = vec![0];
        let (mut list_starts, mut list_of_run) = (vec![0], vec![0]);
        for q in 1..nq {
            let first = *starts.last().expect("starts with 0");
            if !same[q - 1] {
                list_starts.push(starts.len());
            }
            if !same[q - 1] || q - first >= MAX_RUN {
                starts.push(q);
                list_of_run.push(list_starts.len() - 1);
            }
        }
        if nq > 0 {
            starts.push(nq);
            list_starts.push(starts.len() - 1);
        } else {
            list_of_run.clear();
        }
        let offsets = ds.query_offsets();
        let row_starts = starts.iter().map(|&q| offsets[q]).collect();
        Self {
            starts,
            row_starts,
            list_starts,
            list_of_run,
        }
    }

    /// The number of lists (runs of queries with the same rows, however long; [`Self::list_of_run`]).
    pub fn n_lists(&self) -> usize {
        self.list_starts.len() - 1
    }

    /// The runs of list `l`: consecutive runs whose queries all have the same rows.
    pub fn list(&self, l: usize) -> std::ops::Range<usize> {
        self.list_starts[l]..self.list_starts[l + 1]
    }

    /// The list run `r` belongs to.
    pub fn list_of_run(&self, r: usize) -> usize {
        self.list_of_run[r]
    }

    /// The number of runs.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// True when there is no query.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queries of run `r`.
    pub fn run(&self, r: usize) -> std::ops::Range<usize> {
        self.starts[r]..self.starts[r + 1]
    }

    /// Query offsets of the runs (starting at 0, ending at the number of queries).
    pub fn query_offsets(&self) -> &[usize] {
        &self.starts
    }

    /// Row offsets of the runs (starting at 0, ending at the number of rows).
    pub fn row_offsets(&self) -> &[usize] {
        &self.row_starts
    }
}

/// Queries `a` and `b` have the same number of rows with the same stored values, bit for bit.
fn same_rows(ds: &Dataset, a: usize, b: usize) -> bool {
    let (ra, rb) = (ds.query_range(a), ds.query_range(b));
    ra.len() == rb.len() && ra.zip(rb).all(|(i, j)| same_row(ds.row(i), ds.row(j)))
}

fn same_row(x: Row<'_>, y: Row<'_>) -> bool {
    let bits = |a: &[f32], b: &[f32]| {
        a.len() == b.len() && a.iter().zip(b).all(|(u, v)| u.to_bits() == v.to_bits())
    };
    match (x, y) {
        (Row::Dense(a), Row::Dense(b)) => bits(a, b),
        (
            Row::Sparse {
                indices: ia,
                values: va,
            },
            Row::Sparse {
                indices: ib,
                values: vb,
            },
        ) => ia == ib && bits(va, vb),
        _ => false,
    }
}

/// Reusable buffers of one worker of [`PairwiseObjective::gradient_sums`](crate::PairwiseObjective::gradient_sums) and
/// [`PairwiseObjective::hessian_product_sums`](crate::PairwiseObjective::hessian_product_sums).
pub(crate) struct RunScratch {
    transpose: ltr_data::TransposeScratch,
    /// One partial Xᵀc per query of a run, d values each.
    parts: Vec<f64>,
    /// A dense row in f64.
    row: Vec<f64>,
    /// A run's scores along a direction, and its queries' Hessian products.
    pub(crate) xv: Vec<f64>,
    pub(crate) hs: Vec<f64>,
}

impl RunScratch {
    pub(crate) fn new(ds: &Dataset) -> Self {
        Self {
            transpose: ltr_data::TransposeScratch::new(ds),
            parts: Vec::new(),
            row: Vec::new(),
            xv: Vec::new(),
            hs: Vec::new(),
        }
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// Add each query's part of Xᵀc for the run `queries` (queries with the same rows, [`SharedRows`]): `coef` holds
/// the run's coefficients, query after query. A run of one query is [`ltr_data::add_query_transpose_times`]; a
/// longer one reads each row once and adds it to every query's partial sum, with the arithmetic of that function
/// for each query (`part += c · x` in row order, rows with c = 0 skipped, then the part added exactly), so the sums
/// are the same bit for bit. Compiled also for AVX2 and AVX-512 (chosen at run time): the same operations on each
/// value, so the same bits.
pub(crate) fn add_run_transpose_times(
    ds: &Dataset,
    queries: std::ops::Range<usize>,
    coef: &[f64],
    acc: &mut ltr_data::ExactVec,
    scratch: &mut RunScratch,
) {
    if queries.len() == 1 {
        ltr_data::add_query_transpose_times(ds, queries.start, coef, acc, &mut scratch.transpose);
        return;
    }
    let d = ds.n_features();
    if d == 0 {
        return;
    }
    let rows = ds.query_range(queries.start);
    let m = rows.len();
    let count = queries.len();
    debug_assert_eq!(coef.len(), m * count);
    let RunScratch {
        parts, row: dense, ..
    } = scratch;
    parts.clear();
    parts.resize(count * d, 0.0);
    for (r, i) in rows.enumerate() {
        let row = ds.row(i);
        match row {
            ltr_data::Row::Dense(x) => {
                // `Row::axpy` converts each value to f64 for every product; converting once is the same value.
                dense.clear();
                dense.extend(x.iter().take(d).map(|&v| v as f64));
                for (k, part) in parts.chunks_exact_mut(d).enumerate() {
                    let c = coef[k * m + r];
                    if c == 0.0 {
                        continue;
                    }
                    for (p, &xv) in part.iter_mut().zip(dense.iter()) {
                        *p += c * xv;
                    }
                }
            }
            ltr_data::Row::Sparse { .. } => {
                for (k, part) in parts.chunks_exact_mut(d).enumerate() {
                    let c = coef[k * m + r];
                    if c != 0.0 {
                        row.axpy(c, part);
                    }
                }
            }
        }
    }
    for part in parts.chunks_exact_mut(d) {
        acc.add_and_clear(0, part);
    }
}
}
