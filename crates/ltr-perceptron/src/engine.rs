//! The shared pairwise perceptron loop (seed 000, Table 1): one pass over the training pairs per epoch; on a
//! mistake (⟨w, d_r⟩ ≤ ⟨w, d_n⟩, ties are mistakes) the current hypothesis w^i with its success count c_i is
//! handed to an observer (the committee, the pocket, the average, the voters) and replaced by
//! w^{i+1} = w^i + η_q (d_r − d_n).

use ltr_data::{Dataset, FeatureMatrix, Row};
use ltr_pairs::{PairScheme, PairSet};
use rand::seq::SliceRandom;
use rand::SeedableRng;

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
}

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
            order: PairOrder::Shuffled(1),
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

/// The running perceptron state.
#[derive(Debug)]
pub struct PerceptronLoop<'a> {
    ds: &'a Dataset,
    n_pairs: usize,
    eta: Vec<f64>,
    /// The active pairs in visit order; pairs dropped by the α-bound are removed at the end of an epoch.
    order: Vec<Visit>,
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
    pub fn new(ds: &'a Dataset, settings: LoopSettings, planned_epochs: usize) -> Self {
        let pairs = PairSet::build(ds, &settings.pairs);
        let eta_q = match settings.step {
            StepSize::PerQuery => {
                // η_q = 1/|S_q| over the pairs actually used.
                (0..pairs.n_queries())
                    .map(|q| {
                        let n = pairs.query(q).len();
                        if n == 0 {
                            0.0
                        } else {
                            1.0 / n as f64
                        }
                    })
                    .collect()
            }
            StepSize::Global(r) => vec![r; ds.n_queries()],
        };
        let order = pairs
            .pairs
            .iter()
            .zip(pairs.query_of_pairs())
            .map(|(p, query)| Visit {
                hi: p.hi,
                lo: p.lo,
                query,
                mistakes: 0,
            })
            .collect();
        let w = settings
            .init
            .clone()
            .unwrap_or_else(|| vec![0.0; ds.n_features()]);
        let rng = rand_chacha::ChaCha8Rng::seed_from_u64(match settings.order {
            PairOrder::Shuffled(s) => s,
            PairOrder::File => 0,
        });
        Self {
            ds,
            eta: eta_q,
            n_pairs: pairs.len(),
            order,
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

    /// Run one epoch, reporting retired hypotheses to `obs`.
    pub fn epoch(&mut self, obs: &mut dyn Observer) -> EpochStats {
        self.epoch += 1;
        if let PairOrder::Shuffled(_) = self.settings.order {
            self.order.shuffle(&mut self.rng);
        }
        let cap = match self.settings.alpha_bound {
            AlphaBound::Planned(a) => Some((a * self.planned_epochs as f64).floor() as u32),
            _ => None,
        };
        let mut stats = EpochStats {
            mistakes: 0,
            active_pairs: 0,
        };
        // Every active pair appears once in `order`, so each is visited once per epoch and a pair the planned bound
        // drops mid-epoch is simply removed with the others at the end.
        stats.active_pairs = self.order.len() as u64;
        let (ds, eta, w, index, c) = (
            self.ds,
            &self.eta,
            &mut self.w,
            &mut self.index,
            &mut self.c,
        );
        let mut on_mistake = |v: &mut Visit, w: &mut Vec<f64>, c: &mut u64| {
            obs.retire(*index, w, *c);
            add_diff(
                ds.row(v.hi as usize),
                ds.row(v.lo as usize),
                eta[v.query as usize],
                w,
            );
            *index += 1;
            *c = 0;
            v.mistakes += 1;
            stats.mistakes += 1;
        };
        let order = &mut self.order;
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
                    if dense_diff_dot(&x[r..r + d], &x[n..n + d], w) <= 0.0 {
                        on_mistake(v, w, c);
                    } else {
                        *c += 1;
                    }
                }
            }
            FeatureMatrix::Sparse(_) => {
                for v in order.iter_mut() {
                    if diff_dot(ds.row(v.hi as usize), ds.row(v.lo as usize), w) <= 0.0 {
                        on_mistake(v, w, c);
                    } else {
                        *c += 1;
                    }
                }
            }
        }
        // Dropped pairs never come back: stop visiting them (keeps the relative order of the others).
        let t = self.epoch as f64;
        match self.settings.alpha_bound {
            AlphaBound::Off => {}
            AlphaBound::PerEpoch(a) => self.order.retain(|v| v.mistakes as f64 / t <= a),
            AlphaBound::Planned(_) => {
                let cap = cap.expect("set for the planned bound");
                self.order.retain(|v| v.mistakes <= cap)
            }
        }
        obs.finish_epoch(self.epoch, self.index, &self.w, self.c);
        stats
    }
}
