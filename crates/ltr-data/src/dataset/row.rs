//! One row of the feature matrix ([`Row`]) and the dot products over rows: fixed lane orders, so a score does not
//! depend on the machine or the thread count.

/// One row of the feature matrix, borrowed.
#[derive(Debug, Clone, Copy)]
pub enum Row<'a> {
    /// A dense row: value of feature `k` (0-based column) at `k`.
    Dense(&'a [f32]),
    /// A sparse row: sorted column indices and their values.
    Sparse {
        /// Sorted 0-based columns.
        indices: &'a [u32],
        /// Values, parallel to `indices`.
        values: &'a [f32],
    },
}

impl Row<'_> {
    /// `<x, w>` accumulated in f64. Columns beyond `w.len()` are ignored (a model may know fewer features).
    #[inline(always)]
    pub fn dot(&self, w: &[f64]) -> f64 {
        match *self {
            Row::Dense(x) => dot_dense(x, w),
            Row::Sparse { indices, values } => dot_sparse(indices, values, w),
        }
    }

    /// `w += a x` (columns beyond `w.len()` are ignored).
    #[inline(always)]
    pub fn axpy(&self, a: f64, w: &mut [f64]) {
        match *self {
            Row::Dense(x) => {
                for (wj, &xj) in w.iter_mut().zip(x) {
                    *wj += a * xj as f64;
                }
            }
            Row::Sparse { indices, values } => {
                for (&j, &v) in indices.iter().zip(values) {
                    if let Some(wj) = w.get_mut(j as usize) {
                        *wj += a * v as f64;
                    }
                }
            }
        }
    }

    /// `‖x‖²`.
    #[inline]
    pub fn squared_norm(&self) -> f64 {
        let vals = match *self {
            Row::Dense(x) => x,
            Row::Sparse { values, .. } => values,
        };
        vals.iter().map(|&v| (v as f64) * (v as f64)).sum()
    }

    /// The value of 0-based column `j`.
    pub fn get(&self, j: usize) -> f32 {
        match *self {
            Row::Dense(x) => x.get(j).copied().unwrap_or(0.0),
            Row::Sparse { indices, values } => match indices.binary_search(&(j as u32)) {
                Ok(p) => values[p],
                Err(_) => 0.0,
            },
        }
    }

    /// Iterate over the stored `(column, value)` entries.
    #[inline]
    pub fn entries(&self) -> RowEntries<'_> {
        match *self {
            Row::Dense(x) => RowEntries::Dense(x.iter().enumerate()),
            Row::Sparse { indices, values } => RowEntries::Sparse(indices.iter().zip(values)),
        }
    }

    /// The number of stored values (all of them when dense).
    #[inline]
    pub fn nnz(&self) -> usize {
        match *self {
            Row::Dense(x) => x.len(),
            Row::Sparse { values, .. } => values.len(),
        }
    }
}

/// The `(column, value)` entries of a [`Row`], without a boxed iterator: hot loops over sparse rows (exact
/// transpose products, the preconditioner) call it once per row.
#[derive(Debug, Clone)]
pub enum RowEntries<'a> {
    /// Every column of a dense row.
    Dense(std::iter::Enumerate<std::slice::Iter<'a, f32>>),
    /// The stored columns of a sparse row.
    Sparse(std::iter::Zip<std::slice::Iter<'a, u32>, std::slice::Iter<'a, f32>>),
}

impl Iterator for RowEntries<'_> {
    type Item = (usize, f32);

    #[inline]
    fn next(&mut self) -> Option<(usize, f32)> {
        match self {
            RowEntries::Dense(it) => it.next().map(|(j, &v)| (j, v)),
            RowEntries::Sparse(it) => it.next().map(|(&j, &v)| (j as usize, v)),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            RowEntries::Dense(it) => it.size_hint(),
            RowEntries::Sparse(it) => it.size_hint(),
        }
    }
}

/// `<x, w>` over a dense f32 row with f64 weights, in four independent lanes so the compiler can vectorise it.
/// The lane order is fixed, so the result does not depend on the machine or thread count.
#[inline(always)]
pub fn dot_dense(x: &[f32], w: &[f64]) -> f64 {
    let n = x.len().min(w.len());
    let (x, w) = (&x[..n], &w[..n]);
    sum_in_four(n, |j| x[j] as f64 * w[j])
}

/// [`dot_dense`] of several rows at once (`R` of them, each at least as long as the first): every row's sum keeps
/// its own four lanes and its own order of additions, so each result is `dot_dense(x[r], w)` bit for bit, but the
/// rows' additions are independent of one another. One row's product waits on its lanes' running sums (a quarter
/// of its length in dependent additions); `R` rows keep the adder busy `R` times as long between waits. Rows of
/// another length than the first are taken one at a time.
#[inline(always)]
pub fn dot_dense_rows<const R: usize>(x: [&[f32]; R], w: &[f64]) -> [f64; R] {
    let n = x[0].len().min(w.len());
    if x.iter().any(|r| r.len().min(w.len()) != n) {
        return x.map(|r| dot_dense(r, w));
    }
    let w = &w[..n];
    let x = x.map(|r| &r[..n]);
    let mut acc = [[0.0f64; 4]; R];
    let chunks = n / 4;
    for c in 0..chunks {
        let b = c * 4;
        let wb = &w[b..b + 4];
        for (a, xr) in acc.iter_mut().zip(&x) {
            let xb = &xr[b..b + 4];
            for l in 0..4 {
                a[l] += xb[l] as f64 * wb[l];
            }
        }
    }
    let mut out = [0.0; R];
    for ((o, a), xr) in out.iter_mut().zip(&acc).zip(&x) {
        let mut s = (a[0] + a[1]) + (a[2] + a[3]);
        for k in chunks * 4..n {
            s += xr[k] as f64 * w[k];
        }
        *o = s;
    }
    out
}

/// Scores `<x_i, w>` of `rows(0)`, `rows(1)`, ... into `out`, four dense rows at once ([`dot_dense_rows`]), each
/// bit for bit [`Row::dot`].
#[inline(always)]
pub(super) fn scores_by_four<'a>(rows: impl Fn(usize) -> Row<'a>, w: &[f64], out: &mut [f64]) {
    let done = out.len() / 4 * 4;
    for (b, o) in out[..done].chunks_exact_mut(4).enumerate() {
        let i = 4 * b;
        match (rows(i), rows(i + 1), rows(i + 2), rows(i + 3)) {
            (Row::Dense(x0), Row::Dense(x1), Row::Dense(x2), Row::Dense(x3)) => {
                o.copy_from_slice(&dot_dense_rows([x0, x1, x2, x3], w));
            }
            _ => {
                for (k, ok) in o.iter_mut().enumerate() {
                    *ok = rows(i + k).dot(w);
                }
            }
        }
    }
    for (k, o) in out[done..].iter_mut().enumerate() {
        *o = rows(done + k).dot(w);
    }
}

/// Σ `values[k] · w[indices[k]]` over the stored columns that `w` covers, in four interleaved partial sums like
/// [`dot_dense`]: one running sum made every addition wait for the one before (4 cycles each), which was most of a
/// sparse row's product.
#[inline(always)]
pub fn dot_sparse(indices: &[u32], values: &[f32], w: &[f64]) -> f64 {
    let n = indices.len().min(values.len());
    let (indices, values) = (&indices[..n], &values[..n]);
    debug_assert!(indices.is_sorted(), "a sparse row's columns are sorted");
    match indices.last() {
        // The columns are sorted, so when `w` covers the last it covers all: a clamp the compiler can see through
        // replaces the check per value, and the loop becomes a gather where the machine has one.
        Some(&last) if (last as usize) < w.len() => {
            let top = w.len() - 1;
            sum_in_four(n, |k| values[k] as f64 * w[(indices[k] as usize).min(top)])
        }
        _ => sum_in_four(n, |k| {
            w.get(indices[k] as usize)
                .map_or(0.0, |&wj| values[k] as f64 * wj)
        }),
    }
}

/// Σ term(k) for k in 0..n in four interleaved partial sums (k mod 4 for the first 4⌊n/4⌋ terms), then the rest
/// in order: independent additions keep the adder busy where one running sum waits on each.
#[inline(always)]
fn sum_in_four(n: usize, term: impl Fn(usize) -> f64) -> f64 {
    let mut acc = [0.0f64; 4];
    let chunks = n / 4;
    for c in 0..chunks {
        let b = c * 4;
        acc[0] += term(b);
        acc[1] += term(b + 1);
        acc[2] += term(b + 2);
        acc[3] += term(b + 3);
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for k in chunks * 4..n {
        s += term(k);
    }
    s
}
