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
}

impl SharedRows {
    /// The runs of `ds`: a query joins the run before it when its rows equal the run's first query's, feature
    /// value for feature value (bitwise), and the run has fewer than [`MAX_RUN`] queries.
    pub fn of(ds: &Dataset) -> Self {
        let nq = ds.n_queries();
        let same: Vec<bool> = (1..nq)
            .into_par_iter()
            .map(|q| same_rows(ds, q - 1, q))
            .collect();
        let mut starts = vec![0];
        for q in 1..nq {
            let first = *starts.last().expect("starts with 0");
            if !same[q - 1] || q - first >= MAX_RUN {
                starts.push(q);
            }
        }
        if nq > 0 {
            starts.push(nq);
        }
        let offsets = ds.query_offsets();
        let row_starts = starts.iter().map(|&q| offsets[q]).collect();
        Self { starts, row_starts }
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
