//! The shared pairwise perceptron loop (seed 000, Table 1): one pass over the training pairs per epoch; on a
//! mistake (⟨w, d_r⟩ ≤ ⟨w, d_n⟩, ties are mistakes) the current hypothesis w^i with its success count c_i is
//! handed to an observer (the committee, the pocket, the average, the voters) and replaced by
//! w^{i+1} = w^i + η_q (d_r − d_n).

use ltr_data::{Dataset, FeatureMatrix, Row};
use ltr_pairs::{PairIndex, PairPermutation, PairScheme, PairSet};
use rand::seq::SliceRandom;
use rand::{RngCore, SeedableRng};

/// The step applied on a mistake.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepSize {
    /// η_q = 1/|S_q| (seed 000's query balancing; no global learning rate).
    PerQuery,
    /// One global rate for every pair.
    Global(f64),
}

/// Order of the pairs within an epoch (seed 000 does not say).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairOrder {
    /// File order: by query, then preferred document, then the other.
    File,
    /// A fresh seeded shuffle every epoch.
    Shuffled(u64),
    /// A fresh seeded pseudo-random order every epoch, computed from a [`PairIndex`] instead of shuffling stored
    /// pair records (runs of 16 neighbouring counters of scattered pairs drawn at random, 64 runs interleaved):
    /// 2 bytes a pair (the α-bound's counter; none with the bound off) and 4 a document, where records take 28
    /// bytes a pair. A different order from [`PairOrder::Shuffled`] with the same
    /// seed, so a different (equally good) model. Only for [`PairScheme::AllDifferent`].
    Streamed(u64),
    /// [`PairOrder::Shuffled`] up to [`STREAM_PAIRS_ABOVE`] pairs (every LETOR fold, every paper reproduction),
    /// [`PairOrder::Streamed`] above, where the records would take more memory than the data (the default).
    Auto(u64),
}

impl PairOrder {
    /// The order a loop over `ds`'s pairs under `scheme` runs ([`PairOrder::Auto`] decided; the others as they are).
    pub fn resolve(self, ds: &Dataset, scheme: &PairScheme) -> Self {
        match (self, scheme) {
            (PairOrder::Auto(_), PairScheme::AllDifferent) => {
                self.resolve_for(ltr_pairs::count_pairs_per_query(ds).iter().sum())
            }
            // Only all different-label pairs can be streamed.
            (PairOrder::Auto(seed), _) => PairOrder::Shuffled(seed),
            (order, _) => order,
        }
    }

    /// [`PairOrder::Auto`] decided for a loop over `pairs` different-label pairs (data-parallel training decides
    /// on the pairs of all ranks, so that every rank runs the same kind of loop).
    pub fn resolve_for(self, pairs: u64) -> Self {
        match self {
            PairOrder::Auto(seed) if pairs > STREAM_PAIRS_ABOVE => PairOrder::Streamed(seed),
            PairOrder::Auto(seed) => PairOrder::Shuffled(seed),
            order => order,
        }
    }

    /// The same kind of order with another seed (`File` has none).
    pub fn reseeded(self, f: impl FnOnce(u64) -> u64) -> Self {
        match self {
            PairOrder::File => PairOrder::File,
            PairOrder::Shuffled(s) => PairOrder::Shuffled(f(s)),
            PairOrder::Streamed(s) => PairOrder::Streamed(f(s)),
            PairOrder::Auto(s) => PairOrder::Auto(f(s)),
        }
    }
}

/// Above this many pairs [`PairOrder::Auto`] streams the pairs (2²⁵ pairs: 0.94 GB of 28-byte records;
/// 3.77 M MSLR-style documents have about 170 M).
pub const STREAM_PAIRS_ABOVE: u64 = 1 << 25;

/// The α-bound's counter value of a dropped pair in a streamed loop.
const DROPPED: u16 = u16::MAX;

/// The α-bound (seed 000 §4, §6.2): drop a pair misranked in more than a fraction α of the epochs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AlphaBound {
    /// Never drop pairs.
    Off,
    /// Reading (b), the default: at the end of epoch t drop pairs with mistakes / t > α.
    PerEpoch(f64),
    /// Reading (a): drop a pair as soon as its mistakes exceed ⌊α · T_max⌋.
    Planned(f64),
}

/// Settings of the perceptron loop.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopSettings {
    /// Step rule.
    pub step: StepSize,
    /// Pair order.
    pub order: PairOrder,
    /// α-bound.
    pub alpha_bound: AlphaBound,
    /// Starting weights (zeros when `None`).
    pub init: Option<Vec<f64>>,
    /// Which pairs (all different-label pairs by default).
    pub pairs: PairScheme,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self {
            step: StepSize::PerQuery,
            // Seed 000 leaves the order open. File order (pairs grouped by query) is much worse on the LETOR folds
            // (OHSUMED fold-mean MAP 0.31–0.40 against 0.43–0.45 shuffled), so a seeded shuffle is the default.
            order: PairOrder::Auto(1),
            alpha_bound: AlphaBound::PerEpoch(0.85),
            init: None,
            pairs: PairScheme::AllDifferent,
        }
    }
}

/// Receives every hypothesis when it is replaced (and, via [`Observer::finish_epoch`], the current one at epoch ends).
pub trait Observer {
    /// Hypothesis number `index` with weights `w` survived `c` pairs before its first mistake.
    fn retire(&mut self, index: usize, w: &[f64], c: u64);
    /// Called after every epoch with the live hypothesis (not yet retired) and its running count.
    fn finish_epoch(&mut self, _epoch: usize, _index: usize, _w: &[f64], _c: u64) -> bool {
        true
    }
}

/// Per-epoch statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochStats {
    /// Mistakes made in the epoch.
    pub mistakes: u64,
    /// Pairs still active (not dropped by the α-bound) at the start of the epoch.
    pub active_pairs: u64,
}

/// One pair as the epoch loop visits it. Everything the loop touches per pair lives in the record (16 bytes), so
/// the shuffled records are read and updated sequentially; only the two feature rows are random accesses.
#[derive(Debug, Clone, Copy)]
struct Visit {
    /// Row of the preferred document.
    hi: u32,
    /// Row of the other document.
    lo: u32,
    /// Query of the pair (indexes η).
    query: u32,
    /// Epochs in which the pair was misranked (the α-bound's counter).
    mistakes: u32,
}

/// How many visits ahead the epoch loop prefetches feature rows (the rows are random accesses into a matrix that
/// is usually larger than the L2 cache).
const PREFETCH_AHEAD: usize = 8;

/// Visits decoded ahead in a streamed epoch (then checked and updated like records).
const STREAM_BATCH: usize = 1024;
/// Consecutive counter slots a streamed epoch draws together (16 unrelated pairs sharing a counter cache line).
const STREAM_RUN: u64 = 16;

/// Where an epoch's pairs come from.
#[derive(Debug)]
enum Pairs {
    /// The active pairs in visit order; pairs dropped by the α-bound are removed at the end of an epoch.
    Records(Vec<Visit>),
    /// Pairs numbered by an index and visited in a fresh permutation each epoch.
    Streamed {
        index: PairIndex,
        /// Slot c holds pair number `scatter.at(c)`: a fixed bijection, so that neighbouring slots (one cache
        /// line of counters) are unrelated pairs rather than one document against its neighbours.
        scatter: PairPermutation,
        /// Each slot's mistakes ([`DROPPED`] once the α-bound drops it); empty when the bound is off.
        mistakes: Vec<u16>,
        active: u64,
    },
}

/// The running perceptron state.
#[derive(Debug)]
pub struct PerceptronLoop<'a> {
    ds: &'a Dataset,
    n_pairs: usize,
    eta: Vec<f64>,
    pairs: Pairs,
    settings: LoopSettings,
    rng: rand_chacha::ChaCha8Rng,
    /// Current weights.
    pub w: Vec<f64>,
    /// Index of the current hypothesis.
    pub index: usize,
    /// Success count of the current hypothesis.
    pub c: u64,
    epoch: usize,
    planned_epochs: usize,
}

/// ⟨w, x − y⟩ over dense rows with four fixed f64 lanes (the same sums, in the same order, on every machine and
/// thread count). Written over `chunks_exact` so the compiler keeps it branch-free and vectorised.
#[inline(always)]
fn dense_diff_dot(x: &[f32], y: &[f32], w: &[f64]) -> f64 {
    let n = x.len().min(y.len()).min(w.len());
    let (x, y, w) = (&x[..n], &y[..n], &w[..n]);
    let mut acc = [0.0f64; 4];
    let (xc, yc, wc) = (x.chunks_exact(4), y.chunks_exact(4), w.chunks_exact(4));
    let (xr, yr, wr) = (xc.remainder(), yc.remainder(), wc.remainder());
    for ((xs, ys), ws) in xc.zip(yc).zip(wc) {
        for l in 0..4 {
            acc[l] += (xs[l] - ys[l]) as f64 * ws[l];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for ((&a, &b), &c) in xr.iter().zip(yr).zip(wr) {
        s += (a - b) as f64 * c;
    }
    s
}

#[inline]
fn diff_dot(a: Row<'_>, b: Row<'_>, w: &[f64]) -> f64 {
    match (a, b) {
        (Row::Dense(x), Row::Dense(y)) => dense_diff_dot(x, y, w),
        _ => a.dot(w) - b.dot(w),
    }
}

#[inline]
fn add_diff(a: Row<'_>, b: Row<'_>, eta: f64, w: &mut [f64]) {
    match (a, b) {
        (Row::Dense(x), Row::Dense(y)) => {
            for ((wk, &xk), &yk) in w.iter_mut().zip(x).zip(y) {
                *wk += eta * (xk - yk) as f64;
            }
        }
        _ => {
            a.axpy(eta, w);
            b.axpy(-eta, w);
        }
    }
}

impl<'a> PerceptronLoop<'a> {
    /// Prepare the loop for `planned_epochs` epochs (used by the planned α-bound).
    pub fn new(ds: &'a Dataset, mut settings: LoopSettings, planned_epochs: usize) -> Self {
        settings.order = settings.order.resolve(ds, &settings.pairs);
        let (pairs, per_query): (Pairs, Vec<u64>) = match settings.order {
            PairOrder::Streamed(seed) => {
                assert_eq!(
                    settings.pairs,
                    PairScheme::AllDifferent,
                    "a streamed order numbers all different-label pairs (PerceptronParams::validate says so)"
                );
                let index = PairIndex::new(ds);
                let per_query = (0..index.n_queries()).map(|q| index.query_len(q)).collect();
                let mistakes = match settings.alpha_bound {
                    AlphaBound::Off => Vec::new(),
                    _ => vec![0; index.len() as usize],
                };
                let active = index.len();
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5CA7_7E12_D0C5_A1F5);
                let scatter =
                    PairPermutation::new(index.len(), std::array::from_fn(|_| rng.next_u64()));
                (
                    Pairs::Streamed {
                        index,
                        scatter,
                        mistakes,
                        active,
                    },
                    per_query,
                )
            }
            _ => {
                let set = PairSet::build(ds, &settings.pairs);
                let per_query = (0..set.n_queries())
                    .map(|q| set.query(q).len() as u64)
                    .collect();
                let records = set
                    .pairs
                    .iter()
                    .zip(set.query_of_pairs())
                    .map(|(p, query)| Visit {
                        hi: p.hi,
                        lo: p.lo,
                        query,
                        mistakes: 0,
                    })
                    .collect();
                (Pairs::Records(records), per_query)
            }
        };
        let eta_q = match settings.step {
            // η_q = 1/|S_q| over the pairs actually used.
            StepSize::PerQuery => per_query
                .iter()
                .map(|&n| if n == 0 { 0.0 } else { 1.0 / n as f64 })
                .collect(),
            StepSize::Global(r) => vec![r; ds.n_queries()],
        };
        let w = settings
            .init
            .clone()
            .unwrap_or_else(|| vec![0.0; ds.n_features()]);
        let rng = rand_chacha::ChaCha8Rng::seed_from_u64(match settings.order {
            PairOrder::Shuffled(s) | PairOrder::Streamed(s) | PairOrder::Auto(s) => s,
            PairOrder::File => 0,
        });
        Self {
            ds,
            eta: eta_q,
            n_pairs: per_query.iter().sum::<u64>() as usize,
            pairs,
            settings,
            rng,
            w,
            index: 0,
            c: 0,
            epoch: 0,
            planned_epochs,
        }
    }

    /// Number of training pairs.
    pub fn n_pairs(&self) -> usize {
        self.n_pairs
    }

    /// Pairs the next epoch will visit (those the α-bound has not dropped).
    pub fn active_pairs(&self) -> u64 {
        match &self.pairs {
            Pairs::Records(order) => order.len() as u64,
            Pairs::Streamed { active, .. } => *active,
        }
    }

    /// Run one epoch, reporting retired hypotheses to `obs`.
    pub fn epoch(&mut self, obs: &mut dyn Observer) -> EpochStats {
        self.epoch += 1;
        let cap = match self.settings.alpha_bound {
            AlphaBound::Planned(a) => Some((a * self.planned_epochs as f64).floor() as u32),
            _ => None,
        };
        let mut state = Visitor {
            ds: self.ds,
            eta: &self.eta,
            w: &mut self.w,
            index: &mut self.index,
            c: &mut self.c,
            mistakes: 0,
        };
        let active_pairs = match &mut self.pairs {
            Pairs::Records(order) => {
                if let PairOrder::Shuffled(_) = self.settings.order {
                    order.shuffle(&mut self.rng);
                }
                // Every active pair appears once in `order`, so each is visited once per epoch and a pair the
                // planned bound drops mid-epoch is simply removed with the others at the end.
                let active = order.len() as u64;
                state.visit(order, obs);
                active
            }
            Pairs::Streamed {
                index,
                scatter,
                mistakes,
                active,
            } => {
                let keys = std::array::from_fn(|_| self.rng.next_u64());
                let n = index.len();
                let permutation = PairPermutation::new(n.div_ceil(STREAM_RUN), keys);
                let counted = !mistakes.is_empty();
                let rows = index.row_order();
                let mut batch = Vec::with_capacity(STREAM_BATCH);
                let runs_per_batch = STREAM_BATCH / STREAM_RUN as usize;
                let mut runs = Vec::with_capacity(runs_per_batch);
                let mut counters = Vec::with_capacity(STREAM_BATCH);
                let mut slots = Vec::with_capacity(STREAM_BATCH);
                let mut kept = Vec::with_capacity(STREAM_BATCH);
                let mut k = 0;
                // A batch: 64 runs of 16 consecutive counter slots drawn at random, visited interleaved (the first
                // slot of every run, then the second, …), so that a run's line of counters is fetched once for 16
                // pairs; the slots hold scattered pair numbers, so the pairs themselves are unrelated. The batch's
                // random reads are issued in passes, to be in flight together instead of one after another.
                while k < permutation.len() {
                    runs.clear();
                    while runs.len() < runs_per_batch && k < permutation.len() {
                        let run = permutation.at(k) * STREAM_RUN;
                        k += 1;
                        if counted {
                            crate::prefetch::value(&mistakes[run as usize]);
                        }
                        runs.push(run);
                    }
                    counters.clear();
                    for m in 0..STREAM_RUN {
                        counters.extend(runs.iter().map(|&run| run + m).filter(|&x| x < n));
                    }
                    slots.clear();
                    for &counter in &counters {
                        let slot = index.locate(scatter.at(counter));
                        crate::prefetch::value(&rows[slot.hi]);
                        crate::prefetch::value(&rows[slot.lo]);
                        slots.push(slot);
                    }
                    batch.clear();
                    kept.clear();
                    for (&counter, slot) in counters.iter().zip(&slots) {
                        let m = if counted {
                            mistakes[counter as usize]
                        } else {
                            0
                        };
                        if m == DROPPED {
                            continue;
                        }
                        batch.push(Visit {
                            hi: rows[slot.hi],
                            lo: rows[slot.lo],
                            query: slot.query,
                            mistakes: m as u32,
                        });
                        kept.push(counter);
                    }
                    state.visit(&mut batch, obs);
                    if counted {
                        for (v, &counter) in batch.iter().zip(&kept) {
                            // Saturate below the dropped mark (an epoch count beyond 65,534 is not a real run).
                            mistakes[counter as usize] = v.mistakes.min(DROPPED as u32 - 1) as u16;
                        }
                    }
                }
                *active
            }
        };
        let stats = EpochStats {
            mistakes: state.mistakes,
            active_pairs,
        };
        // Dropped pairs never come back: stop visiting them (keeps the relative order of the others).
        let t = self.epoch as f64;
        let keep = |m: u32| match self.settings.alpha_bound {
            AlphaBound::Off => true,
            AlphaBound::PerEpoch(a) => m as f64 / t <= a,
            AlphaBound::Planned(_) => m <= cap.expect("set for the planned bound"),
        };
        match &mut self.pairs {
            Pairs::Records(order) => order.retain(|v| keep(v.mistakes)),
            Pairs::Streamed {
                mistakes, active, ..
            } => {
                for m in mistakes.iter_mut().filter(|m| **m != DROPPED) {
                    if !keep(*m as u32) {
                        *m = DROPPED;
                        *active -= 1;
                    }
                }
            }
        }
        obs.finish_epoch(self.epoch, self.index, &self.w, self.c);
        stats
    }
}

/// The loop's state while it visits pairs.
struct Visitor<'s, 'a> {
    ds: &'a Dataset,
    eta: &'s [f64],
    w: &'s mut Vec<f64>,
    index: &'s mut usize,
    c: &'s mut u64,
    mistakes: u64,
}

impl Visitor<'_, '_> {
    /// Check each pair of `order` in turn; on a mistake retire the hypothesis to `obs` and update.
    fn visit(&mut self, order: &mut [Visit], obs: &mut dyn Observer) {
        let ds = self.ds;
        match ds.features() {
            FeatureMatrix::Dense(a) => {
                let d = a.ncols();
                let x = a.as_slice().expect("dense features are in standard layout");
                for k in 0..order.len() {
                    if let Some(ahead) = order.get(k + PREFETCH_AHEAD) {
                        crate::prefetch::row(x, ahead.hi as usize * d, d);
                        crate::prefetch::row(x, ahead.lo as usize * d, d);
                    }
                    let v = &mut order[k];
                    let (r, n) = (v.hi as usize * d, v.lo as usize * d);
                    if dense_diff_dot(&x[r..r + d], &x[n..n + d], self.w) <= 0.0 {
                        self.mistake(v, obs);
                    } else {
                        *self.c += 1;
                    }
                }
            }
            FeatureMatrix::Sparse(_) => {
                for v in order.iter_mut() {
                    if diff_dot(ds.row(v.hi as usize), ds.row(v.lo as usize), self.w) <= 0.0 {
                        self.mistake(v, obs);
                    } else {
                        *self.c += 1;
                    }
                }
            }
        }
    }

    fn mistake(&mut self, v: &mut Visit, obs: &mut dyn Observer) {
        obs.retire(*self.index, self.w, *self.c);
        add_diff(
            self.ds.row(v.hi as usize),
            self.ds.row(v.lo as usize),
            self.eta[v.query as usize],
            self.w,
        );
        *self.index += 1;
        *self.c = 0;
        v.mistakes += 1;
        self.mistakes += 1;
    }
}
