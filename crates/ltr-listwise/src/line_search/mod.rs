//! The exact line search along one coordinate. With every other weight fixed, document d scores
//! b_d + t·x_d where t is the coordinate's weight: a line. The measure of a query is piecewise constant in t and
//! changes only where two lines of that query cross. Per query, all crossings are sorted and swept from
//! t = −∞ with an exchange per crossing ([`crate::measure::RankingState::exchange`], O(1) for neighbours); the
//! changes of all queries are merged into one step function of t whose best interval is the exact optimum —
//! RankLib's Coordinate Ascent instead tries 2 × 25 geometric steps and keeps the best it saw.
//!
//! Here: the data laid out for coordinate steps ([`Problem`]) and the line built over queries and ranks; the step
//! function and its best point are `line.rs`, one query's sweep `query.rs`, the pruned line by buckets (one process
//! and across ranks) and the buffers a restart reuses `buckets.rs`.

use ltr_core::{Allreduce, Result};
use ltr_data::{Dataset, FeatureMatrix};
use rayon::prelude::*;

use crate::measure::{ListMeasure, QueryMeasure};

mod buckets;
mod line;
mod query;

pub(crate) use buckets::Exchanged;
// pub for the tests in tests/unit/line_search.rs; not API.
#[doc(hidden)]
pub use buckets::{LineScratch, PRUNE_FROM};
// pub for the tests in tests/unit/line_search.rs; not API.
#[doc(hidden)]
pub use line::{Choice, Line};

use buckets::{line_by_buckets, pruned_line, BUCKETS_FROM};
use line::{full_line, to_key, RunLine};
use query::{query_line, QueryScratch};

/// Training data laid out for coordinate steps: each feature column contiguous, each query's measure ready.
// pub for the tests in tests/unit/line_search.rs; not API.
#[doc(hidden)]
pub struct Problem<'a> {
    data: &'a Dataset,
    /// The feature values, read by column.
    cols: Columns<'a>,
    pub queries: Vec<QueryMeasure>,
    /// Runs of consecutive queries a line search hands to one task each.
    runs: Vec<std::ops::Range<usize>>,
    /// `varies[j · n_queries + q]`: feature j takes more than one value in query q (else that query's ranking, and
    /// so its measure, does not move along coordinate j).
    varies: Vec<bool>,
    /// Whether a line search and [`Problem::per_query_values`] spread their runs of queries over rayon's threads
    /// (the results are the same either way).
    parallel: bool,
}

/// The feature values of a [`Problem`], read by column. Dense data is read where it lies, with a stride of the
/// row width: a column-major copy would hold the data twice (2.05 GB more on 3.77 M web documents), and a line
/// search gathers one query's values at a time anyway. Sparse data gets the copy (reading a column of sparse rows
/// is a search per row).
enum Columns<'a> {
    /// The dense row-major matrix: x_ij is `values[i · width + j]`.
    Rows { values: &'a [f32], width: usize },
    /// Column-major: x_ij is `copy[j · n + i]`.
    Copy(Vec<f32>),
}

impl Columns<'_> {
    /// x_ij of `n` documents.
    #[inline]
    fn get(&self, n: usize, i: usize, j: usize) -> f32 {
        match self {
            Columns::Rows { values, width } => values[i * width + j],
            Columns::Copy(copy) => copy[j * n + i],
        }
    }
}

impl<'a> Problem<'a> {
    /// Lay out `data` for `measure`.
    pub fn new(data: &'a Dataset, measure: &ListMeasure) -> Result<Self> {
        let (n, d) = (data.n_docs(), data.n_features());
        let cols = match data.features() {
            FeatureMatrix::Dense(a) => Columns::Rows {
                values: a
                    .as_slice()
                    .expect("a dataset's dense matrix is in standard layout"),
                width: d,
            },
            FeatureMatrix::Sparse(_) => {
                let mut copy = vec![0.0f32; n * d];
                for i in 0..n {
                    for (j, v) in data.row(i).entries() {
                        if j < d {
                            copy[j * n + i] = v;
                        }
                    }
                }
                Columns::Copy(copy)
            }
        };
        let queries = (0..data.n_queries())
            .map(|q| measure.query(&data.labels()[data.query_range(q)]))
            .collect::<Result<Vec<_>>>()?;
        let nq = data.n_queries();
        let mut varies = vec![false; d * nq];
        for q in 0..nq {
            let rows = data.query_range(q);
            let first = rows.start;
            for i in rows {
                for j in 0..d {
                    varies[j * nq + q] |= cols.get(n, i, j) != cols.get(n, first, j);
                }
            }
        }
        Ok(Self {
            runs: query_runs(queries.len()),
            varies,
            data,
            cols,
            queries,
            parallel: true,
        })
    }

    /// Run each line search and ranking on the calling thread: for callers that already keep every thread busy
    /// (restarts side by side), where splitting each line into tasks only adds rayon's overhead. Same results.
    pub fn sequential(mut self) -> Self {
        self.parallel = false;
        self
    }

    /// The data.
    pub fn data(&self) -> &'a Dataset {
        self.data
    }

    /// The values of feature `j` on documents `rows`, into `out` (replacing what it held).
    pub(crate) fn column_into(&self, j: usize, rows: std::ops::Range<usize>, out: &mut Vec<f32>) {
        out.clear();
        let n = self.data.n_docs();
        match &self.cols {
            Columns::Rows { values, width } => {
                out.extend(rows.map(|i| values[i * width + j]));
            }
            Columns::Copy(copy) => {
                out.extend_from_slice(&copy[j * n + rows.start..j * n + rows.end])
            }
        }
    }

    /// Feature column `j`, all documents.
    pub fn column(&self, j: usize) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.data.n_docs());
        self.column_into(j, 0..self.data.n_docs(), &mut out);
        out
    }

    /// `out[i] = scores[i] + step · x_ij` for every document: the scores after a step along coordinate `j`.
    pub(crate) fn step_scores(&self, j: usize, step: f64, scores: &[f64], out: &mut [f64]) {
        let n = self.data.n_docs();
        match &self.cols {
            Columns::Rows { values, width } => {
                for (i, (s, o)) in scores.iter().zip(out.iter_mut()).enumerate() {
                    *o = s + step * values[i * width + j] as f64;
                }
            }
            Columns::Copy(copy) => {
                for ((s, &x), o) in scores
                    .iter()
                    .zip(&copy[j * n..(j + 1) * n])
                    .zip(out.iter_mut())
                {
                    *o = s + step * x as f64;
                }
            }
        }
    }

    /// Mean measure of the ranking by `scores` (ties in file order, as the LETOR scripts sort).
    pub fn value(&self, scores: &[f64]) -> f64 {
        self.per_query_values(scores).iter().sum::<f64>() / self.queries.len().max(1) as f64
    }

    /// The measure of each query ranked by `scores` (ties in file order).
    pub fn per_query_values(&self, scores: &[f64]) -> Vec<f64> {
        let mut out = Vec::new();
        self.per_query_values_into(scores, &mut out);
        out
    }

    /// [`Problem::per_query_values`] into `out` (replacing what it held). Each query's documents are ranked by
    /// one integer per document (the score's order key reversed, then the index): the order of a comparator on
    /// (score descending, file order), every key distinct, so any sort gives the one ranking. A measure cut at k
    /// reads only the first k: those are selected, then sorted.
    pub(crate) fn per_query_values_into(&self, scores: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.resize(self.queries.len(), 0.0);
        let per_run = self.runs.first().map_or(1, |r| r.len().max(1));
        let each = |(run, values): (&std::ops::Range<usize>, &mut [f64])| {
            RANK_KEYS.with_borrow_mut(|keys| {
                for (q, v) in run.clone().zip(values.iter_mut()) {
                    *v = self.query_value(q, scores, keys);
                }
            })
        };
        if self.parallel {
            self.runs
                .par_iter()
                .zip(out.par_chunks_mut(per_run))
                .for_each(each);
        } else {
            self.runs.iter().zip(out.chunks_mut(per_run)).for_each(each);
        }
    }

    /// The measure of query `q` ranked by `scores` (`keys`: a buffer).
    fn query_value(&self, q: usize, scores: &[f64], keys: &mut Vec<u128>) -> f64 {
        let m = &self.queries[q];
        if m.constant {
            return m.constant_value;
        }
        let s = &scores[self.data.query_range(q)];
        keys.clear();
        keys.extend(
            s.iter()
                .enumerate()
                .map(|(d, &v)| ((!to_key(v) as u128) << 32) | d as u128),
        );
        let top = if m.cut < keys.len() {
            keys.select_nth_unstable(m.cut).0
        } else {
            &mut keys[..]
        };
        top.sort_unstable();
        m.value_of(top.iter().map(|&k| k as u32))
    }

    /// The measure along coordinate `j` given the current `scores` and the coordinate's weight `wj`.
    pub fn line(&self, scores: &[f64], j: usize, wj: f64) -> Line {
        let mut scratch = LineScratch::default();
        let current = self.per_query_values(scores);
        self.line_into(scores, &current, j, wj, None, &mut scratch);
        scratch.line
    }

    /// [`Problem::line`] into reused buffers: a line search allocates nothing large (the merged changes of MAP run
    /// to hundreds of thousands, and fresh buffers of that size cost page faults on every call).
    ///
    /// `current` holds each query's measure at `scores` ([`Problem::per_query_values`]): a query whose ranking
    /// cannot move along the coordinate keeps it. With a `choice`, the line is only exact where it can hold the
    /// best point under that choice ([`pruned_line`]): elsewhere it reads −∞, so [`Line::best`] gives what it gives
    /// on the whole line.
    pub fn line_into<'s>(
        &self,
        scores: &[f64],
        current: &[f64],
        j: usize,
        wj: f64,
        choice: Option<&Choice>,
        scratch: &'s mut LineScratch,
    ) -> &'s Line {
        let parts = self.run_lines(scores, current, j, wj);
        let nq = self.queries.len().max(1) as f64;
        let base: f64 = parts.iter().flat_map(|(b, _)| b).sum();
        let changes = &mut scratch.changes;
        changes.clear();
        for (_, c) in &parts {
            changes.extend_from_slice(c);
        }
        drop(parts);
        assemble_line(base, nq, choice, scratch)
    }

    /// [`Problem::line_into`] over the queries of every rank of `comm` (this problem holds this rank's). Every rank
    /// builds the same line, by one of two exchanges (`exchange`):
    /// - points: each rank's per-query values and changes are gathered in rank order, so with the queries split
    ///   into consecutive runs in rank order every sum is taken in the single-process order and the line is the
    ///   single-process line, bit for bit — at 16 bytes a crossing point gathered by every rank;
    /// - buckets (a pruned line only): the ranks agree on the single-process splitters (a gathered sample), reduce
    ///   each bucket's count, extreme keys, sum and rise, decide the candidate buckets identically and gather only
    ///   their points — O(buckets + kept points) a line. The bucket sums are added in rank order, so values may
    ///   differ from one process's by rounding; the accepted step is still verified on the real ranking.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn line_over_ranks<'s>(
        &self,
        scores: &[f64],
        current: &[f64],
        j: usize,
        wj: f64,
        choice: Option<&Choice>,
        exchange: LineExchange,
        scratch: &'s mut LineScratch,
        comm: &dyn Allreduce,
    ) -> Result<&'s Line> {
        if comm.size() == 1 {
            return Ok(self.line_into(scores, current, j, wj, choice, scratch));
        }
        let parts = self.run_lines(scores, current, j, wj);
        if let (Some(choice), Some(from)) = (choice, exchange.buckets_from()) {
            let local = parts.iter().map(|(_, c)| c.len()).sum::<usize>();
            let counts = comm.gather_f64(&[local as f64])?;
            if counts.iter().sum::<f64>() >= from as f64 {
                return line_by_buckets(parts, &counts, choice, scratch, comm);
            }
        }
        let bases: Vec<f64> = parts.iter().flat_map(|(b, _)| b.iter().copied()).collect();
        // A change crosses as two f64: its order key's bits and its Δ.
        let encoded: Vec<f64> = parts
            .iter()
            .flat_map(|(_, c)| {
                c.iter()
                    .flat_map(|&(key, delta)| [f64::from_bits(key), delta])
            })
            .collect();
        drop(parts);
        let all_bases = comm.gather_varying_f64(&bases)?;
        let nq = all_bases.iter().map(Vec::len).sum::<usize>().max(1) as f64;
        let base: f64 = all_bases.iter().flatten().sum();
        let all_changes = comm.gather_varying_f64(&encoded)?;
        let changes = &mut scratch.changes;
        changes.clear();
        for rank in &all_changes {
            changes.extend(rank.chunks_exact(2).map(|c| (c[0].to_bits(), c[1])));
        }
        scratch.exchanged.lines += 1;
        scratch.exchanged.points += changes.len() as u64;
        Ok(assemble_line(base, nq, choice, scratch))
    }

    /// The mean of the per-query values of every rank's queries (`per_query`: this rank's), summed in rank order
    /// (with one rank, in query order). Up to [`MEAN_GATHERED_UP_TO`] queries over all ranks every value is
    /// gathered and summed in the single-process order (the single-process mean, bit for bit); above, each rank
    /// sums its own and the ranks' sums are added in rank order, so a rank receives two numbers instead of one per
    /// query (at 1 B documents, 8 M queries: 64 MB twice per coordinate step).
    pub fn mean_over_ranks(&self, per_query: &[f64], comm: &dyn Allreduce) -> Result<f64> {
        mean_over_ranks(per_query, comm, MEAN_GATHERED_UP_TO)
    }

    /// Whether feature `j` takes one value on every document of every rank (then no coordinate step can move a
    /// ranking), for every `j`.
    pub(crate) fn constant_features(&self, comm: &dyn Allreduce) -> Result<Vec<bool>> {
        let d = self.data.n_features();
        let mut bounds = vec![f64::INFINITY; d];
        bounds.resize(2 * d, f64::NEG_INFINITY);
        let n = self.data.n_docs();
        for i in 0..n {
            for j in 0..d {
                let x = self.cols.get(n, i, j) as f64;
                bounds[j] = bounds[j].min(x);
                bounds[d + j] = bounds[d + j].max(x);
            }
        }
        let all = comm.gather_f64(&bounds)?;
        let (mut lo, mut hi) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
        for rank in all.chunks_exact(2 * d) {
            for j in 0..d {
                lo[j] = lo[j].min(rank[j]);
                hi[j] = hi[j].max(rank[d + j]);
            }
        }
        Ok(lo.iter().zip(&hi).map(|(l, h)| l >= h).collect())
    }

    /// Each run's per-query values at t = −∞ and changes along coordinate `j`, in query order.
    fn run_lines(&self, scores: &[f64], current: &[f64], j: usize, wj: f64) -> Vec<RunLine> {
        // Runs of queries, each swept with one set of buffers (no allocation per query). The values and changes
        // come out in query order whatever the runs, so the line does not depend on them or on the thread count.
        let one = |run: &std::ops::Range<usize>| {
            let mut bases = Vec::with_capacity(run.len());
            let mut changes = Vec::new();
            // Each thread keeps its buffers across runs and lines: fresh ones cost an allocation per buffer,
            // run and line.
            QUERY_SCRATCH.with_borrow_mut(|(buffers, x)| {
                for q in run.clone() {
                    if self.queries[q].constant || !self.varies[j * self.queries.len() + q] {
                        bases.push(current[q]);
                        continue;
                    }
                    let r = self.data.query_range(q);
                    self.column_into(j, r.clone(), x);
                    bases.push(query_line(
                        &self.queries[q],
                        x,
                        &scores[r],
                        wj,
                        buffers,
                        &mut changes,
                    ));
                }
            });
            (bases, changes)
        };
        if self.parallel {
            self.runs.par_iter().map(one).collect()
        } else {
            self.runs.iter().map(one).collect()
        }
    }
}

/// The line from the per-query values' sum `base` at t = −∞ and the merged changes in `scratch` (over `nq`
/// queries): exact where it can hold the best point under `choice`, the whole line without one.
fn assemble_line<'s>(
    base: f64,
    nq: f64,
    choice: Option<&Choice>,
    scratch: &'s mut LineScratch,
) -> &'s Line {
    let changes = &mut scratch.changes;
    match choice {
        Some(choice) if changes.len() >= PRUNE_FROM => pruned_line(
            changes,
            base,
            nq,
            choice,
            &mut scratch.buckets,
            &mut scratch.line,
        ),
        _ => full_line(changes, base, nq, &mut scratch.line),
    }
}

/// How the ranks of a distributed Coordinate Ascent agree on each line (one process: no exchange, the same line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineExchange {
    /// Points up to 2²⁰ crossing points over all ranks (16 MB gathered by every rank), buckets above.
    #[default]
    Auto,
    /// Every crossing point gathered by every rank: the single-process model bit for bit.
    Points,
    /// Bucket statistics, then only the candidate buckets' points (lines of at least 8,192 points).
    Buckets,
}

impl LineExchange {
    /// From how many crossing points over all ranks a line goes through buckets (`None`: never).
    fn buckets_from(self) -> Option<usize> {
        match self {
            LineExchange::Auto => Some(BUCKETS_FROM),
            LineExchange::Points => None,
            LineExchange::Buckets => Some(PRUNE_FROM),
        }
    }
}

/// Up to how many queries over all ranks [`Problem::mean_over_ranks`] gathers every per-query value (8 MB).
const MEAN_GATHERED_UP_TO: usize = 1 << 20;

/// [`Problem::mean_over_ranks`] with the gathering bound `gathered_up_to`.
// pub for the tests in tests/unit/line_search.rs; not API.
#[doc(hidden)]
pub fn mean_over_ranks(
    per_query: &[f64],
    comm: &dyn Allreduce,
    gathered_up_to: usize,
) -> Result<f64> {
    let own = per_query.iter().sum::<f64>();
    if comm.size() == 1 {
        return Ok(own / per_query.len().max(1) as f64);
    }
    let mut queries = [per_query.len() as i64];
    comm.sum_i64(&mut queries)?;
    let n = queries[0].max(1) as f64;
    if queries[0] as usize <= gathered_up_to {
        let all = comm.gather_varying_f64(per_query)?;
        return Ok(all.iter().flatten().sum::<f64>() / n);
    }
    let mut sum = [own];
    comm.sum_ordered(&mut sum)?;
    Ok(sum[0] / n)
}

thread_local! {
    /// A thread's buffers for [`query_line`] and the feature column it reads.
    static QUERY_SCRATCH: std::cell::RefCell<(QueryScratch, Vec<f32>)> = Default::default();
    /// A thread's buffer of ranking keys for [`Problem::per_query_values_into`].
    static RANK_KEYS: std::cell::RefCell<Vec<u128>> = Default::default();
}

/// Queries per run of [`Problem::line_into`]: about 64 runs, enough to balance any core count we meet.
fn query_runs(n_queries: usize) -> Vec<std::ops::Range<usize>> {
    let per_run = n_queries.div_ceil(64).max(1);
    (0..n_queries)
        .step_by(per_run)
        .map(|start| start..(start + per_run).min(n_queries))
        .collect()
}
