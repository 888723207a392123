//! The exact line search along one coordinate. With every other weight fixed, document d scores
//! b_d + t·x_d where t is the coordinate's weight: a line. The measure of a query is piecewise constant in t and
//! changes only where two lines of that query cross. Per query, all crossings are sorted and swept from
//! t = −∞ with an exchange per crossing ([`crate::measure::RankingState::exchange`], O(1) for neighbours); the
//! changes of all queries are merged into one step function of t whose best interval is the exact optimum —
//! RankLib's Coordinate Ascent instead tries 2 × 25 geometric steps and keeps the best it saw.

use ltr_core::{Allreduce, Result};
use ltr_data::{Dataset, FeatureMatrix};
use rayon::prelude::*;

use crate::measure::{ListMeasure, QueryMeasure};

/// Training data laid out for coordinate steps: each feature column contiguous, each query's measure ready.
pub(crate) struct Problem<'a> {
    data: &'a Dataset,
    /// The feature values, read by column.
    cols: Columns<'a>,
    queries: Vec<QueryMeasure>,
    /// Runs of consecutive queries a line search hands to one task each.
    runs: Vec<std::ops::Range<usize>>,
    /// `varies[j · n_queries + q]`: feature j takes more than one value in query q (else that query's ranking, and
    /// so its measure, does not move along coordinate j).
    varies: Vec<bool>,
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

/// The measure as a step function of one coordinate's weight.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Line {
    /// Where the value changes, increasing.
    pub breakpoints: Vec<f64>,
    /// Mean measure on each interval: `values[i]` holds between `breakpoints[i−1]` and `breakpoints[i]`.
    pub values: Vec<f64>,
}

/// What the best point of a line is judged by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Choice {
    /// The coordinate's current weight: among equally good intervals the nearest one wins, and an interval that
    /// contains it keeps it.
    pub current: f64,
    /// Weights must stay ≥ 0.
    pub non_negative: bool,
    /// λ of the penalty λ·(t − centre)² (0: none).
    pub l2: f64,
    /// Centre of the penalty.
    pub centre: f64,
    /// Typical weight size: how far past the last breakpoint an unbounded interval is entered.
    pub unit: f64,
}

impl<'a> Problem<'a> {
    /// Lay out `data` for `measure`.
    pub(crate) fn new(data: &'a Dataset, measure: &ListMeasure) -> Result<Self> {
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
        })
    }

    /// The data.
    pub(crate) fn data(&self) -> &'a Dataset {
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
    pub(crate) fn column(&self, j: usize) -> Vec<f32> {
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
    #[cfg(test)]
    pub(crate) fn value(&self, scores: &[f64]) -> f64 {
        self.per_query_values(scores).iter().sum::<f64>() / self.queries.len().max(1) as f64
    }

    /// The measure of each query ranked by `scores` (ties in file order).
    pub(crate) fn per_query_values(&self, scores: &[f64]) -> Vec<f64> {
        let runs: Vec<Vec<f64>> = self
            .runs
            .par_iter()
            .map(|run| {
                let mut order: Vec<u32> = Vec::new();
                run.clone()
                    .map(|q| {
                        let m = &self.queries[q];
                        if m.constant {
                            return m.constant_value;
                        }
                        let s = &scores[self.data.query_range(q)];
                        order.clear();
                        order.extend(0..s.len() as u32);
                        order.sort_unstable_by(|&a, &b| {
                            s[b as usize].total_cmp(&s[a as usize]).then(a.cmp(&b))
                        });
                        m.value(&order)
                    })
                    .collect()
            })
            .collect();
        runs.concat()
    }

    /// The measure along coordinate `j` given the current `scores` and the coordinate's weight `wj`.
    #[cfg(test)]
    pub(crate) fn line(&self, scores: &[f64], j: usize, wj: f64) -> Line {
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
    pub(crate) fn line_into<'s>(
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
    pub(crate) fn mean_over_ranks(&self, per_query: &[f64], comm: &dyn Allreduce) -> Result<f64> {
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
        self.runs
            .par_iter()
            .map(|run| {
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
            })
            .collect()
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
fn mean_over_ranks(per_query: &[f64], comm: &dyn Allreduce, gathered_up_to: usize) -> Result<f64> {
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

/// `LineExchange::Auto` exchanges buckets from this many crossing points.
const BUCKETS_FROM: usize = 1 << 20;

/// The pruned line over every rank's changes (`parts`: this rank's; `counts`: every rank's number of changes) by
/// bucket statistics: see [`Problem::line_over_ranks`].
fn line_by_buckets<'s>(
    parts: Vec<RunLine>,
    counts: &[f64],
    choice: &Choice,
    scratch: &'s mut LineScratch,
    comm: &dyn Allreduce,
) -> Result<&'s Line> {
    let mut head = [
        parts.iter().flat_map(|(b, _)| b).sum::<f64>(),
        parts.iter().map(|(b, _)| b.len()).sum::<usize>() as f64,
    ];
    comm.sum_ordered(&mut head)?;
    let (base, nq) = (head[0], head[1].max(1.0));
    let LineScratch {
        changes,
        buckets: b,
        line,
        exchanged,
    } = scratch;
    changes.clear();
    for (_, c) in &parts {
        changes.extend_from_slice(c);
    }
    drop(parts);
    // The sample one process would take: every stride-th change of all ranks' changes in rank order.
    let n = counts.iter().map(|&c| c as usize).sum::<usize>();
    let offset = counts[..comm.rank()]
        .iter()
        .map(|&c| c as usize)
        .sum::<usize>();
    let plan = SamplePlan::new(n);
    let first = (plan.stride - offset % plan.stride) % plan.stride;
    let mine: Vec<f64> = changes
        .iter()
        .skip(first)
        .step_by(plan.stride)
        .map(|c| f64::from_bits(c.0))
        .collect();
    let sample = comm.gather_varying_f64(&mine)?;
    b.sample.clear();
    b.sample
        .extend(sample.iter().flatten().map(|v| v.to_bits()));
    b.split(&plan);
    b.count(changes);
    let mut total: Vec<i64> = b.buckets.iter().map(|x| x.count as i64).collect();
    comm.sum_i64(&mut total)?;
    let mut mins: Vec<u64> = b.buckets.iter().map(|x| x.min_key).collect();
    let mut maxs: Vec<u64> = b.buckets.iter().map(|x| x.max_key).collect();
    comm.min_max_u64(&mut mins, &mut maxs)?;
    let k = b.buckets.len();
    let mut sums: Vec<f64> = b.buckets.iter().map(|x| x.sum).collect();
    sums.extend(b.buckets.iter().map(|x| x.rise));
    comm.sum_ordered(&mut sums)?;
    for (i, bucket) in b.buckets.iter_mut().enumerate() {
        bucket.count = total[i] as usize;
        bucket.min_key = mins[i];
        bucket.max_key = maxs[i];
        bucket.sum = sums[i];
        bucket.rise = sums[k + i];
    }
    mark_candidates(&mut b.buckets, base, nq, choice);
    let kept: Vec<f64> = changes
        .iter()
        .zip(&b.of_change)
        .filter(|(_, &id)| b.buckets[id as usize].candidate)
        .flat_map(|(c, _)| [f64::from_bits(c.0), c.1])
        .collect();
    let kept = comm.gather_varying_f64(&kept)?;
    b.members.clear();
    b.members.extend(
        kept.iter()
            .flat_map(|r| r.chunks_exact(2).map(|c| (c[0].to_bits(), c[1]))),
    );
    b.kept = b.members.len();
    exchanged.lines += 1;
    exchanged.by_buckets += 1;
    exchanged.points += (b.sample.len() + b.members.len()) as u64;
    Ok(b.build(base, nq, line))
}

thread_local! {
    /// A thread's buffers for [`query_line`] and the feature column it reads.
    static QUERY_SCRATCH: std::cell::RefCell<(QueryScratch, Vec<f32>)> = Default::default();
}

/// One run's per-query values at t = −∞ and its changes `(order key of t, Δ)`, in query order.
type RunLine = (Vec<f64>, Vec<(u64, f64)>);

/// Queries per run of [`Problem::line_into`]: about 64 runs, enough to balance any core count we meet.
fn query_runs(n_queries: usize) -> Vec<std::ops::Range<usize>> {
    let per_run = n_queries.div_ceil(64).max(1);
    (0..n_queries)
        .step_by(per_run)
        .map(|start| start..(start + per_run).min(n_queries))
        .collect()
}

/// Buffers one restart reuses for all its line searches.
#[derive(Debug, Default)]
pub(crate) struct LineScratch {
    changes: Vec<(u64, f64)>,
    buckets: BucketScratch,
    line: Line,
    /// What this restart's lines exchanged across ranks.
    pub exchanged: Exchanged,
}

/// What the line searches of a distributed run exchanged (every rank receives the same).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Exchanged {
    /// Lines built across ranks.
    pub lines: u64,
    /// Of them, lines built from bucket statistics.
    pub by_buckets: u64,
    /// Crossing points (and sample keys) each rank received, over all lines.
    pub points: u64,
}

/// Fewer changes than this are simply sorted: bucketing would not pay.
const PRUNE_FROM: usize = 8192;

/// A bucket's best is compared with the best boundary value less this, so that rounding in the bucket sums never
/// drops the interval the whole line would choose (values are means of measures in [0, 1]).
const PRUNE_MARGIN: f64 = 1e-9;

/// For each change, the number of the first `real` splitters at or below its key (its bucket). `splitters` is
/// padded to a power of two; up to 8 searches run side by side, so their loads overlap instead of waiting on
/// each other.
fn bucket_ids(splitters: &[u64], real: usize, changes: &[(u64, f64)], ids: &mut [u32]) {
    let mut pos = [0usize; 8];
    let mut keys = [u64::MAX; 8];
    for (k, c) in keys.iter_mut().zip(changes) {
        *k = c.0;
    }
    let mut step = splitters.len() / 2;
    while step > 0 {
        for i in 0..8 {
            // A select, not a branch: which way a search goes is a coin toss the predictor cannot learn.
            let below = splitters[(pos[i] + step - 1).min(splitters.len() - 1)] <= keys[i];
            pos[i] = std::hint::select_unpredictable(below, pos[i] + step, pos[i]);
        }
        step /= 2;
    }
    for ((p, k), id) in pos.iter().zip(keys).zip(ids.iter_mut()) {
        let last = (*p < real && splitters[*p] <= k) as usize;
        *id = (*p + last).min(real) as u32;
    }
}

/// The whole line: every change sorted and summed in order.
fn full_line<'s>(changes: &mut [(u64, f64)], base: f64, nq: f64, line: &'s mut Line) -> &'s Line {
    // A stable sort: equal keys keep the query order, so the sums below do not depend on the thread count. Each
    // document's sweep emits its changes in order, so the input is a few thousand sorted runs, which a merge
    // sort takes as they are.
    changes.par_sort_by_key(|c| c.0);
    line.breakpoints.clear();
    line.values.clear();
    line.values.push(base / nq);
    push_sorted(changes, base, nq, line);
    line
}

/// Appends the breakpoints and values of sorted `changes`, starting from the running sum `sum`.
fn push_sorted(changes: &[(u64, f64)], mut sum: f64, nq: f64, line: &mut Line) {
    let mut i = 0;
    while i < changes.len() {
        let key = changes[i].0;
        while i < changes.len() && changes[i].0 == key {
            sum += changes[i].1;
            i += 1;
        }
        line.breakpoints.push(from_key(key));
        line.values.push(sum / nq);
    }
}

/// Buffers of [`pruned_line`].
#[derive(Debug, Default)]
pub(crate) struct BucketScratch {
    sample: Vec<u64>,
    splitters: Vec<u64>,
    of_change: Vec<u32>,
    buckets: Vec<Bucket>,
    /// The candidate buckets' changes, in change order.
    members: Vec<(u64, f64)>,
    /// The same, grouped by bucket.
    grouped: Vec<(u64, f64)>,
    /// Splitters before the padding to a power of two.
    real: usize,
    /// How many changes the last line kept (sorted and summed one by one).
    kept: usize,
}

/// The changes whose keys fall between two splitters.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    count: usize,
    min_key: u64,
    max_key: u64,
    /// Sum of the changes.
    sum: f64,
    /// Sum of the positive changes: no point inside the bucket is above the value before it by more.
    rise: f64,
    candidate: bool,
}

/// The line, exact only in the buckets of changes that may hold its best point under `choice`. The changes are cut
/// into about a thousand buckets of consecutive keys (splitters from a sample), and the value between two buckets is
/// the sum of the earlier buckets' changes. A bucket is kept, sorted and summed change by change, when the value
/// before it plus its positive changes (less the least penalty over its span) reaches the best objective found
/// between buckets; elsewhere the line reads −∞. So [`Line::best`] picks what it picks on the whole line, at the
/// cost of one pass over the changes and the sort of a few buckets instead of all of them.
fn pruned_line<'s>(
    changes: &mut [(u64, f64)],
    base: f64,
    nq: f64,
    choice: &Choice,
    scratch: &mut BucketScratch,
    line: &'s mut Line,
) -> &'s Line {
    let n = changes.len();
    let plan = SamplePlan::new(n);
    scratch.sample.clear();
    scratch
        .sample
        .extend(changes.iter().step_by(plan.stride).map(|c| c.0));
    scratch.split(&plan);
    scratch.count(changes);
    mark_candidates(&mut scratch.buckets, base, nq, choice);
    let BucketScratch {
        of_change,
        buckets,
        members,
        kept,
        ..
    } = scratch;
    // The kept buckets' changes in change order; `build` groups them by bucket.
    members.clear();
    members.extend(
        changes
            .iter()
            .zip(of_change.iter())
            .filter(|(_, &b)| buckets[b as usize].candidate)
            .map(|(c, _)| *c),
    );
    *kept = members.len();
    scratch.build(base, nq, line)
}

/// How a line of `n` changes is sampled for its splitters: about `wanted` buckets from every `stride`-th change.
struct SamplePlan {
    wanted: usize,
    stride: usize,
}

impl SamplePlan {
    fn new(n: usize) -> Self {
        let wanted = (n / 256).clamp(64, 4096);
        Self {
            wanted,
            stride: (n / (wanted * 4)).max(1),
        }
    }
}

impl BucketScratch {
    /// The splitters from `self.sample` (unsorted), and empty buckets between them.
    fn split(&mut self, plan: &SamplePlan) {
        let Self {
            sample,
            splitters,
            buckets,
            real,
            ..
        } = self;
        sample.sort_unstable();
        splitters.clear();
        let step = (sample.len() / plan.wanted).max(1);
        splitters.extend(sample.iter().skip(step).step_by(step).copied());
        splitters.dedup();
        buckets.clear();
        buckets.resize(
            splitters.len() + 1,
            Bucket {
                count: 0,
                min_key: u64::MAX,
                max_key: 0,
                sum: 0.0,
                rise: 0.0,
                candidate: false,
            },
        );
        *real = splitters.len();
        splitters.resize(real.next_power_of_two().max(1), u64::MAX);
    }

    /// Each change's bucket in `of_change`, and the buckets' counts, extreme keys, sums and rises.
    fn count(&mut self, changes: &[(u64, f64)]) {
        let Self {
            splitters,
            of_change,
            buckets,
            real,
            ..
        } = self;
        of_change.clear();
        of_change.resize(changes.len(), 0);
        for (keys, ids) in changes.chunks(8).zip(of_change.chunks_mut(8)) {
            bucket_ids(splitters, *real, keys, ids);
        }
        for (&(key, delta), &b) in changes.iter().zip(of_change.iter()) {
            let bucket = &mut buckets[b as usize];
            bucket.count += 1;
            bucket.min_key = bucket.min_key.min(key);
            bucket.max_key = bucket.max_key.max(key);
            bucket.sum += delta;
            bucket.rise += delta.max(0.0);
        }
    }

    /// The line from the buckets and `self.members`, the candidate buckets' changes in change order: each
    /// candidate bucket sorted and summed change by change, every other bucket −∞ across its span.
    fn build<'s>(&mut self, base: f64, nq: f64, line: &'s mut Line) -> &'s Line {
        let Self {
            splitters,
            buckets,
            members,
            grouped,
            real,
            ..
        } = self;
        // A counting sort by bucket (stable: equal keys keep the change order), then a sort inside each.
        let mut starts: Vec<usize> = Vec::with_capacity(buckets.len() + 1);
        let mut total = 0usize;
        for bucket in buckets.iter() {
            starts.push(total);
            if bucket.candidate {
                total += bucket.count;
            }
        }
        let mut ids = vec![0u32; members.len()];
        for (keys, out) in members.chunks(8).zip(ids.chunks_mut(8)) {
            bucket_ids(splitters, *real, keys, out);
        }
        grouped.clear();
        grouped.resize(total, (0, 0.0));
        let mut next = starts.clone();
        for (c, &b) in members.iter().zip(&ids) {
            let b = b as usize;
            grouped[next[b]] = *c;
            next[b] += 1;
        }
        line.breakpoints.clear();
        line.values.clear();
        line.values.push(base / nq);
        let mut sum = base;
        for (b, bucket) in buckets.iter().enumerate().filter(|(_, b)| b.count > 0) {
            let after = sum + bucket.sum;
            if bucket.candidate {
                let inside = &mut grouped[starts[b]..starts[b] + bucket.count];
                inside.sort_by_key(|c| c.0);
                push_sorted(inside, sum, nq, line);
                // The value after the bucket is the one its neighbours were judged against.
                *line.values.last_mut().expect("a kept bucket has changes") = after / nq;
            } else {
                line.breakpoints.push(from_key(bucket.min_key));
                if bucket.max_key != bucket.min_key {
                    line.values.push(f64::NEG_INFINITY);
                    line.breakpoints.push(from_key(bucket.max_key));
                }
                line.values.push(after / nq);
            }
            sum = after;
        }
        line
    }
}

/// Marks the buckets that may hold the line's best point under `choice`: those whose value before them plus their
/// positive changes, less the least penalty over their span, reaches the best objective between buckets (each
/// interval between two buckets is a real interval of the line).
fn mark_candidates(buckets: &mut [Bucket], base: f64, nq: f64, choice: &Choice) {
    // The objective of the interval (lo, hi) with mean value `value`, as `Line::best` judges it.
    let objective = |lo: f64, hi: f64, value: f64| -> Option<f64> {
        let (_, t) = choice.point(lo, hi)?;
        Some(value - choice.l2 * (t - choice.centre).powi(2))
    };
    let mut floor = f64::NEG_INFINITY;
    let mut sum = base;
    let mut lo = f64::NEG_INFINITY;
    for bucket in buckets.iter().filter(|b| b.count > 0) {
        if let Some(o) = objective(lo, from_key(bucket.min_key), sum / nq) {
            floor = floor.max(o);
        }
        sum += bucket.sum;
        lo = from_key(bucket.max_key);
    }
    if let Some(o) = objective(lo, f64::INFINITY, sum / nq) {
        floor = floor.max(o);
    }
    let mut sum = base;
    for bucket in buckets.iter_mut().filter(|b| b.count > 0) {
        let (t_lo, t_hi) = (from_key(bucket.min_key), from_key(bucket.max_key));
        let admissible = !(choice.non_negative && t_hi <= 0.0) && bucket.min_key != bucket.max_key;
        let nearest = choice.centre.clamp(t_lo, t_hi);
        let least_penalty = choice.l2 * (nearest - choice.centre).powi(2);
        bucket.candidate =
            admissible && (sum + bucket.rise) / nq - least_penalty >= floor - PRUNE_MARGIN;
        sum += bucket.sum;
    }
}

/// Buffers one run of queries reuses: every per-query array of [`query_line`].
#[derive(Debug, Default)]
struct QueryScratch {
    intercepts: Vec<f64>,
    order: Vec<u32>,
    rank0: Vec<u32>,
    member: Vec<bool>,
    members: Vec<u32>,
    /// The documents' keys of the order at t = −∞.
    keys: Vec<u128>,
    /// Each crossing's sort key: t's order key cut to its high bits, the other document in the low [`DOC_MASK`].
    coarse: Vec<u64>,
    /// Per document, the order key of t where it crosses the swept document.
    t_key: Vec<u64>,
    /// A run of crossings whose cut keys tie, in full.
    tied: Vec<u128>,
    counts: Vec<u32>,
    counted: Vec<u32>,
    layers: LayerScratch,
}

/// One query's value at t = −∞ (its feature must vary, its measure not be constant); its changes `(t, Δ)` as t
/// grows (Δ summed, not yet divided by the number of queries) are appended to `changes`.
///
/// Only documents with a non-zero weight (gain, relevance) can change the measure, so only their crossings are
/// swept: for each such document d, its crossings with every other document are sorted, and while sweeping them
/// it keeps how many documents of each weight class lie above it — which gives its position and the prefix state
/// (relevant count, ERR's not-stopped probability) exactly. A crossing of two adjacent documents changes only their
/// two terms. Cost O(n⁺ · n log n) for n⁺ documents of non-zero weight, not O(n² log n²): two documents of weight 0
/// never matter, however often they swap.
fn query_line(
    m: &QueryMeasure,
    x: &[f32],
    s: &[f64],
    wj: f64,
    buffers: &mut QueryScratch,
    changes: &mut Vec<(u64, f64)>,
) -> f64 {
    let n = x.len();
    let QueryScratch {
        intercepts: b,
        order,
        rank0,
        member,
        members,
        keys,
        coarse,
        t_key,
        tied,
        counts,
        counted,
        layers,
    } = buffers;
    b.clear();
    b.extend((0..n).map(|d| s[d] - wj * x[d] as f64));
    // At t = −∞ the smallest x ranks first; equal x: the larger intercept; equal lines keep file order. One integer
    // per document (x, the intercept reversed, the index) sorts faster than a comparator that reads both arrays.
    keys.clear();
    keys.extend(
        (0..n).map(|d| {
            ((to_key32(x[d]) as u128) << 96) | ((!to_key(b[d]) as u128) << 32) | d as u128
        }),
    );
    keys.sort_unstable();
    order.clear();
    order.extend(keys.iter().map(|&k| k as u32));
    let base = m.value(order);
    let class_of = &m.class_of;
    rank0.clear();
    rank0.resize(n, 0);
    t_key.clear();
    t_key.resize(n, 0);
    for (p, &d) in order.iter().enumerate() {
        rank0[d as usize] = p as u32;
    }
    // A truncated measure only sees documents that reach the top `cut` somewhere on the line. Counting only
    // those keeps every position below the cut exact: whoever is above a document ranked within the cut is itself
    // within it, and a document ranked at or below the cut has the `cut` documents above it counted.
    member.clear();
    if m.cut < n {
        top_layers(x, b, order, m.cut, member, layers);
    } else {
        member.resize(n, true);
    }
    members.clear();
    members.extend((0..n as u32).filter(|&d| member[d as usize]));
    // counted[p·C + c]: members of class c among the first p documents at t = −∞ (what lies above a document
    // there), one pass instead of one per swept document.
    let n_classes = m.classes.len();
    counts.clear();
    counts.resize(n_classes, 0);
    counted.clear();
    counted.extend_from_slice(counts);
    for &e in order.iter() {
        if member[e as usize] {
            counts[class_of[e as usize] as usize] += 1;
        }
        counted.extend_from_slice(counts);
    }
    for &d in members.iter() {
        let d = d as usize;
        let wd = m.weight[d];
        if wd == 0.0 {
            continue;
        }
        let row = rank0[d] as usize * n_classes;
        counts.copy_from_slice(&counted[row..row + n_classes]);
        let mut above: u32 = counts.iter().sum();
        let (xd, bd) = (x[d], b[d]);
        coarse.clear();
        for &e in members.iter() {
            let e = e as usize;
            let xe = x[e];
            if xe == xd {
                continue;
            }
            // e overtakes d where the lines meet if x_e > x_d, else d overtakes e.
            let rising = xe > xd;
            let (b_lo, b_hi, x_lo, x_hi) = if rising {
                (bd, b[e], xd, xe)
            } else {
                (b[e], bd, xe, xd)
            };
            let t = (b_lo - b_hi) / (x_hi as f64 - x_lo as f64);
            let key = to_key(t);
            t_key[e] = key;
            coarse.push((key & !DOC_MASK) | e as u64);
        }
        // The crossings in order of t, sorted as 64-bit integers: t's order key cut to its high 32 bits (t to about
        // 1e-6 relative), the document below them. Only runs whose high bits tie are sorted again on the full key
        // and the tie rule below, so the order is exactly that of (t, tie).
        coarse.sort_unstable();
        let mut start = 0;
        for i in 1..=coarse.len() {
            if i < coarse.len() && (coarse[i] ^ coarse[start]) & !DOC_MASK == 0 {
                continue;
            }
            if i - start > 1 {
                tied.clear();
                tied.extend(coarse[start..i].iter().map(|&c| {
                    let e = (c & DOC_MASK) as usize;
                    let rising = x[e] > xd;
                    // Several lines through one point (identical lines always; distinct ones when they happen to
                    // meet there) cross d at the same t. They are taken in the one order of adjacent exchanges
                    // that every document's sweep agrees on: first those d overtakes, then those that overtake d,
                    // each by increasing x; among identical lines, the one next to d first. Rounding can still
                    // split a meeting of distinct lines; the step is checked on the real ranking before it is
                    // taken.
                    let next_to_d = if rising {
                        rank0[e] as u64
                    } else {
                        (n - 1 - rank0[e] as usize) as u64
                    };
                    let tie = ((rising as u64) << 63) | ((to_key32(x[e]) as u64) << 31) | next_to_d;
                    ((t_key[e] as u128) << 64) | tie as u128
                }));
                tied.sort_unstable();
                for (c, &packed) in coarse[start..i].iter_mut().zip(tied.iter()) {
                    let tie = packed as u64;
                    let rank = (tie & ((1 << 31) - 1)) as usize;
                    let e = order[if tie >> 63 == 1 { rank } else { n - 1 - rank }];
                    *c = (*c & !DOC_MASK) | e as u64;
                }
            }
            start = i;
        }
        for &c in coarse.iter() {
            let e = (c & DOC_MASK) as usize;
            let key = t_key[e];
            let rising = x[e] > xd;
            let we = m.weight[e];
            // 0-based position of the upper of the two: e was just below d when rising, else just above it.
            let upper = if rising { above } else { above - 1 } as usize;
            if !rising {
                counts[class_of[e] as usize] -= 1;
                above -= 1;
            }
            // Each pair of different weights once: in the sweep of its weight-0 member's partner, else of the
            // lower index.
            if we != wd && (we == 0.0 || d < e) && upper < m.cut {
                let prefix = m.prefix_of(counts);
                let (before_up, before_down) = if rising { (wd, we) } else { (we, wd) };
                let delta = m.pair_terms(upper, before_down, before_up, prefix)
                    - m.pair_terms(upper, before_up, before_down, prefix);
                if delta != 0.0 {
                    changes.push((key, delta));
                }
            }
            if rising {
                counts[class_of[e] as usize] += 1;
                above += 1;
            }
        }
    }
    base
}

/// The low bits of a crossing's sort key: the other document (a query's documents are numbered in 32 bits).
const DOC_MASK: u64 = u32::MAX as u64;

/// Buffers of [`top_layers`].
#[derive(Debug, Default)]
struct LayerScratch {
    left: Vec<usize>,
    /// A hull point, and the run of `left` it and the lines identical to it occupy.
    hull: Vec<(usize, usize, usize)>,
}

/// Marks in `member` the documents on the first `layers` upper convex layers of the points (x_d, b_d) — a superset
/// of those ranked within the top `layers` for some t. A document strictly below the upper hull of what is left
/// after removing layers 1..j has, at every t, one document of each of those layers strictly above it; so one on
/// no layer up to `layers` never ranks within them. Points on a hull edge, and any the rounding leaves in doubt,
/// are kept. `order`: the documents by increasing x, then decreasing b (the ranking at t = −∞).
fn top_layers(
    x: &[f32],
    b: &[f64],
    order: &[u32],
    layers: usize,
    member: &mut Vec<bool>,
    buffers: &mut LayerScratch,
) {
    let n = x.len();
    let LayerScratch { left, hull } = buffers;
    left.clear();
    left.extend(order.iter().map(|&d| d as usize));
    member.clear();
    member.resize(n, false);
    for _ in 0..layers {
        if left.is_empty() {
            break;
        }
        // One representative per x: the largest intercept (first in the sort). Lines identical to it follow it
        // in `left` and tie with it everywhere: they join the layer with it (`start..same` in `left`).
        hull.clear();
        let mut i = 0;
        while i < left.len() {
            let p = left[i];
            while hull.len() >= 2 {
                let (l, m) = (hull[hull.len() - 2].0, hull[hull.len() - 1].0);
                let (xl, xm, xp) = (x[l] as f64, x[m] as f64, x[p] as f64);
                let cross = (xp - xl) * (b[m] - b[l]) - (b[p] - b[l]) * (xm - xl);
                let scale = (xp - xl).abs() * (b[m].abs() + b[l].abs() + b[p].abs())
                    + (xm - xl).abs() * (b[p].abs() + b[l].abs());
                if cross < -1e-9 * scale {
                    hull.pop();
                } else {
                    break;
                }
            }
            let start = i;
            i += 1;
            let mut same = i;
            while i < left.len() && x[left[i]] == x[p] {
                if same == i && b[left[i]] == b[p] {
                    same += 1;
                }
                i += 1;
            }
            hull.push((p, start, same));
        }
        for &(_, start, same) in hull.iter() {
            for &p in &left[start..same] {
                member[p] = true;
            }
        }
        left.retain(|&p| !member[p]);
    }
}

/// An integer with the order of `f32::total_cmp`.
#[inline]
fn to_key32(v: f32) -> u32 {
    let bits = v.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | (1 << 31)
    }
}

/// An integer with the order of `f64::total_cmp`.
#[inline]
fn to_key(t: f64) -> u64 {
    let bits = t.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

#[inline]
fn from_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

impl Choice {
    /// The admissible part of the interval (lo, hi) — its lower end, raised to 0 for non-negative weights — and the
    /// point of it a step goes to; `None` when no point of it is admissible.
    fn point(&self, lo: f64, hi: f64) -> Option<(f64, f64)> {
        let mut lo = lo;
        if self.non_negative {
            if hi <= 0.0 {
                return None;
            }
            lo = lo.max(0.0);
        }
        let target = if self.l2 > 0.0 {
            self.centre
        } else {
            self.current
        };
        Some((lo, point_in(lo, hi, target, self.unit, self.l2 > 0.0)))
    }
}

impl Line {
    /// The best point of the line under `choice`: `(t, mean measure there, objective = measure − penalty)`.
    /// `None` when no interval is admissible (non-negative weights and every breakpoint below 0 is impossible,
    /// so in practice always `Some`).
    pub(crate) fn best(&self, choice: &Choice) -> Option<(f64, f64, f64)> {
        let m = self.breakpoints.len();
        let mut best: Option<(f64, f64, f64, f64)> = None; // (objective, distance, t, value)
        for i in 0..=m {
            let lo = if i == 0 {
                f64::NEG_INFINITY
            } else {
                self.breakpoints[i - 1]
            };
            let hi = if i == m {
                f64::INFINITY
            } else {
                self.breakpoints[i]
            };
            let Some((lo, t)) = choice.point(lo, hi) else {
                continue;
            };
            let value = self.values[i];
            let objective = value - choice.l2 * (t - choice.centre).powi(2);
            let distance = if choice.current > lo && choice.current < hi {
                0.0
            } else {
                (t - choice.current).abs()
            };
            let better = match best {
                None => true,
                Some((bo, bd, _, _)) => {
                    objective > bo + 1e-12 || (objective >= bo - 1e-12 && distance < bd)
                }
            };
            if better {
                best = Some((objective, distance, t, value));
            }
        }
        best.map(|(o, _, t, v)| (t, v, o))
    }
}

/// A point strictly inside (lo, hi): `target` when inside; otherwise the midpoint of a bounded interval (far from
/// the ties at its ends), or just inside the end nearest `target` when `nearest_end` (a penalty pulls towards it).
fn point_in(lo: f64, hi: f64, target: f64, unit: f64, nearest_end: bool) -> f64 {
    if target > lo && target < hi {
        return target;
    }
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => {
            if hi - lo <= f64::EPSILON * lo.abs().max(hi.abs()).max(1e-300) * 4.0 {
                return 0.5 * (lo + hi);
            }
            if !nearest_end {
                return 0.5 * (lo + hi);
            }
            // The penalty's optimum is the nearest end, which is itself a tie: step just inside.
            let inset = (hi - lo) * if target <= lo { 1e-6 } else { 1.0 - 1e-6 };
            lo + inset
        }
        (true, false) => lo + unit.max(lo.abs()).max(1e-12),
        (false, true) => hi - unit.max(hi.abs()).max(1e-12),
        (false, false) => target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ltr_data::{generate_letor_like, SyntheticConfig};
    use ltr_metrics::{Convention, Metric};

    /// Brute force: the measure at the midpoint of every interval between consecutive crossings, by sorting.
    fn brute_force_max(p: &Problem<'_>, scores: &[f64], j: usize, wj: f64) -> f64 {
        let col = p.column(j);
        let mut ts = Vec::new();
        for q in 0..p.data().n_queries() {
            let r = p.data().query_range(q);
            for d in r.clone() {
                for e in r.clone() {
                    if col[d] != col[e] {
                        let bd = scores[d] - wj * col[d] as f64;
                        let be = scores[e] - wj * col[e] as f64;
                        ts.push((bd - be) / (col[e] as f64 - col[d] as f64));
                    }
                }
            }
        }
        ts.sort_by(f64::total_cmp);
        ts.dedup();
        let mut probes = vec![ts[0] - 1.0, ts[ts.len() - 1] + 1.0];
        probes.extend(ts.windows(2).map(|w| 0.5 * (w[0] + w[1])));
        probes
            .iter()
            .map(|&t| {
                let s: Vec<f64> = scores
                    .iter()
                    .zip(&col)
                    .map(|(s, &x)| s + (t - wj) * x as f64)
                    .collect();
                p.value(&s)
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Enough changes to be bucketed: the pruned line's best is the whole line's, under penalties and signs too.
    #[test]
    fn pruned_line_gives_the_whole_line_best() {
        let data = generate_letor_like(&SyntheticConfig {
            queries: 40,
            min_docs: 50,
            max_docs: 70,
            features: 4,
            seed: 5,
            ..SyntheticConfig::default()
        })
        .unwrap();
        for name in ["MAP", "NDCG", "ERR"] {
            let metric: Metric = name.parse().unwrap();
            let p = Problem::new(
                &data,
                &ListMeasure::new(metric, Convention::STANDARD).unwrap(),
            )
            .unwrap();
            let w = [0.3, -0.2, 0.5, 0.1];
            let scores = data.scores(&w);
            let current = p.per_query_values(&scores);
            for (j, &wj) in w.iter().enumerate() {
                for (non_negative, l2) in [(false, 0.0), (true, 0.0), (false, 0.05)] {
                    let choice = Choice {
                        current: wj,
                        non_negative,
                        l2,
                        centre: 0.25,
                        unit: 0.25,
                    };
                    let whole = p.line(&scores, j, wj).best(&choice).unwrap();
                    let mut scratch = LineScratch::default();
                    let line = p.line_into(&scores, &current, j, wj, Some(&choice), &mut scratch);
                    let pruned = line.best(&choice).unwrap();
                    let (changes, kept) = (scratch.changes.len(), scratch.buckets.kept);
                    assert!(changes >= PRUNE_FROM, "{name}: only {changes} changes");
                    assert!(kept * 4 < changes, "{name}: kept {kept} of {changes}");
                    assert!(
                        (pruned.1 - whole.1).abs() < 1e-12 && (pruned.2 - whole.2).abs() < 1e-12,
                        "{name} j={j} {non_negative} {l2}: {pruned:?} vs {whole:?}"
                    );
                    let s: Vec<f64> = scores
                        .iter()
                        .zip(&p.column(j))
                        .map(|(s, &x)| s + (pruned.0 - wj) * x as f64)
                        .collect();
                    assert!(
                        (p.value(&s) - pruned.1).abs() < 1e-12,
                        "{name} at {}",
                        pruned.0
                    );
                }
            }
        }
    }

    /// Longer queries, cut-offs far below their length (only the top layers are swept), and features rounded to
    /// one decimal (many equal values, parallel lines).
    #[test]
    fn truncated_measures_on_long_queries_with_tied_features_match_brute_force() {
        let mut data = generate_letor_like(&SyntheticConfig {
            queries: 3,
            min_docs: 25,
            max_docs: 35,
            features: 3,
            seed: 9,
            ..SyntheticConfig::default()
        })
        .unwrap();
        if let ltr_data::FeatureMatrix::Dense(a) = data.features_mut() {
            a.mapv_inplace(|v| (v * 10.0).round() / 10.0);
        }
        for name in ["NDCG@3", "ERR@5", "P@2", "MAP@4", "MRR@3"] {
            let metric: Metric = name.parse().unwrap();
            let p = Problem::new(
                &data,
                &ListMeasure::new(metric, Convention::STANDARD).unwrap(),
            )
            .unwrap();
            let w = [0.3, -0.6, 0.45];
            let scores = data.scores(&w);
            for (j, &wj) in w.iter().enumerate() {
                let choice = Choice {
                    current: wj,
                    non_negative: false,
                    l2: 0.0,
                    centre: 0.0,
                    unit: 0.25,
                };
                let (_, value, _) = p.line(&scores, j, wj).best(&choice).unwrap();
                let want = brute_force_max(&p, &scores, j, wj);
                assert!(
                    (value - want).abs() < 1e-12,
                    "{name}, feature {j}: {value} vs {want}"
                );
            }
        }
    }

    #[test]
    fn the_mean_over_ranks_is_gathered_up_to_its_bound_and_summed_per_rank_above() {
        // Rank r holds r + 2 queries; values whose sum depends on the order of addition.
        let value = |r: usize, q: usize| [1e16, 1.0, -1e16][(r + q) % 3] + 0.25 * q as f64;
        let all: Vec<f64> = (0..3)
            .flat_map(|r| (0..r + 2).map(move |q| value(r, q)))
            .collect();
        let single = all.iter().sum::<f64>() / all.len() as f64;
        let results = ltr_core::ThreadGroup::run(3, |comm| {
            let mine: Vec<f64> = (0..comm.rank() + 2)
                .map(|q| value(comm.rank(), q))
                .collect();
            Ok((
                mean_over_ranks(&mine, comm, 9)?,
                mean_over_ranks(&mine, comm, 8)?,
            ))
        });
        let by_rank: Vec<f64> = (0..3)
            .map(|r| (0..r + 2).map(|q| value(r, q)).sum::<f64>())
            .collect();
        let summed = by_rank.iter().sum::<f64>() / all.len() as f64;
        for r in results {
            let (gathered, per_rank) = r.unwrap();
            assert_eq!(gathered.to_bits(), single.to_bits());
            assert_eq!(per_rank.to_bits(), summed.to_bits());
        }
        assert_ne!(
            single, summed,
            "the values should tell the two orders apart"
        );
        assert_eq!(
            mean_over_ranks(&all, &ltr_core::SingleProcess, 0)
                .unwrap()
                .to_bits(),
            single.to_bits()
        );
    }

    #[test]
    fn exact_line_search_finds_the_brute_force_optimum() {
        let data = generate_letor_like(&SyntheticConfig {
            queries: 6,
            min_docs: 3,
            max_docs: 9,
            features: 4,
            seed: 3,
            ..SyntheticConfig::default()
        })
        .unwrap();
        for name in ["NDCG@3", "NDCG", "MAP", "ERR@5", "P@2", "MRR"] {
            let metric: Metric = name.parse().unwrap();
            for conv in [Convention::STANDARD, Convention::LETOR4] {
                let p = Problem::new(&data, &ListMeasure::new(metric, conv).unwrap()).unwrap();
                let w = [0.3, -0.2, 0.5, 0.1];
                let scores = data.scores(&w);
                for (j, &wj) in w.iter().enumerate() {
                    let line = p.line(&scores, j, wj);
                    let (t, value, _) = line
                        .best(&Choice {
                            current: wj,
                            non_negative: false,
                            l2: 0.0,
                            centre: 0.0,
                            unit: 0.25,
                        })
                        .unwrap();
                    let want = brute_force_max(&p, &scores, j, wj);
                    assert!(
                        (value - want).abs() < 1e-12,
                        "{name} {}: {value} vs {want}",
                        conv.name
                    );
                    // The chosen point really has that value.
                    let s: Vec<f64> = scores
                        .iter()
                        .zip(&p.column(j))
                        .map(|(s, &x)| s + (t - wj) * x as f64)
                        .collect();
                    assert!((p.value(&s) - value).abs() < 1e-12, "{name} at t = {t}");
                    // The current point's interval carries the current value.
                    assert!(value >= p.value(&scores) - 1e-12);
                }
            }
        }
    }
}
