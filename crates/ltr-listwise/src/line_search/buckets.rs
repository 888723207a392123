//! The pruned line: the changes cut into buckets of consecutive crossing points by a sampled set of splitters, and
//! only the buckets that may hold the best point sorted and summed change by change — in one process
//! ([`pruned_line`]) and across ranks by exchanging bucket statistics ([`line_by_buckets`]).

use ltr_core::{Allreduce, Result};

use super::line::{from_key, push_sorted, Choice, Line, RunLine};

/// Buffers one restart reuses for all its line searches.
#[derive(Debug, Default)]
pub struct LineScratch {
    pub changes: Vec<(u64, f64)>,
    pub buckets: BucketScratch,
    pub(super) line: Line,
    /// What this restart's lines exchanged across ranks.
    pub exchanged: Exchanged,
}

/// What the line searches of a distributed run exchanged (every rank receives the same).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exchanged {
    /// Lines built across ranks.
    pub lines: u64,
    /// Of them, lines built from bucket statistics.
    pub by_buckets: u64,
    /// Crossing points (and sample keys) each rank received, over all lines.
    pub points: u64,
}

/// `LineExchange::Auto` exchanges buckets from this many crossing points.
pub(super) const BUCKETS_FROM: usize = 1 << 20;

/// The pruned line over every rank's changes (`parts`: this rank's; `counts`: every rank's number of changes) by
/// bucket statistics: see `Problem::line_over_ranks`.
pub(super) fn line_by_buckets<'s>(
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

/// Fewer changes than this are simply sorted: bucketing would not pay.
pub const PRUNE_FROM: usize = 8192;

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

/// Buffers of [`pruned_line`].
#[derive(Debug, Default)]
pub struct BucketScratch {
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
    pub kept: usize,
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
pub(super) fn pruned_line<'s>(
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
