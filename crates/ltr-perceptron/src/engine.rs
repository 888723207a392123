//! The shared pairwise perceptron loop (seed 000, Table 1): one pass over the training pairs per epoch; on a
//! mistake (⟨w, d_r⟩ ≤ ⟨w, d_n⟩, ties are mistakes) the current hypothesis w^i with its success count c_i is
//! handed to an observer (the committee, the pocket, the average, the voters) and replaced by
//! w^{i+1} = w^i + η_q (d_r − d_n).

use ltr_data::{Dataset, Row};
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

/// The running perceptron state.
#[derive(Debug)]
pub struct PerceptronLoop<'a> {
    ds: &'a Dataset,
    pairs: PairSet,
    eta: Vec<f64>,
    query_of_pair: Vec<u32>,
    mistakes: Vec<u32>,
    dropped: Vec<bool>,
    order: Vec<u32>,
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

#[inline]
fn diff_dot(a: Row<'_>, b: Row<'_>, w: &[f64]) -> f64 {
    match (a, b) {
        (Row::Dense(x), Row::Dense(y)) => {
            let mut acc = [0.0f64; 4];
            let n = x.len().min(y.len()).min(w.len());
            let chunks = n / 4;
            for c in 0..chunks {
                let k = c * 4;
                acc[0] += (x[k] - y[k]) as f64 * w[k];
                acc[1] += (x[k + 1] - y[k + 1]) as f64 * w[k + 1];
                acc[2] += (x[k + 2] - y[k + 2]) as f64 * w[k + 2];
                acc[3] += (x[k + 3] - y[k + 3]) as f64 * w[k + 3];
            }
            let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
            for k in chunks * 4..n {
                s += (x[k] - y[k]) as f64 * w[k];
            }
            s
        }
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
        let query_of_pair = pairs.query_of_pairs();
        let m = pairs.len();
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
            query_of_pair,
            mistakes: vec![0; m],
            dropped: vec![false; m],
            order: (0..m as u32).collect(),
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
        self.pairs.len()
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
        for &pi in &self.order {
            let pi = pi as usize;
            if self.dropped[pi] {
                continue;
            }
            stats.active_pairs += 1;
            let p = self.pairs.pairs[pi];
            let (r, n) = (self.ds.row(p.hi as usize), self.ds.row(p.lo as usize));
            if diff_dot(r, n, &self.w) <= 0.0 {
                obs.retire(self.index, &self.w, self.c);
                let eta = self.eta[self.query_of_pair[pi] as usize];
                add_diff(r, n, eta, &mut self.w);
                self.index += 1;
                self.c = 0;
                self.mistakes[pi] += 1;
                stats.mistakes += 1;
                if let Some(cap) = cap {
                    if self.mistakes[pi] > cap {
                        self.dropped[pi] = true;
                    }
                }
            } else {
                self.c += 1;
            }
        }
        if let AlphaBound::PerEpoch(a) = self.settings.alpha_bound {
            let t = self.epoch as f64;
            for (d, &m) in self.dropped.iter_mut().zip(&self.mistakes) {
                if !*d && m as f64 / t > a {
                    *d = true;
                }
            }
        }
        // Dropped pairs never come back: stop visiting them (keeps the relative order of the others).
        let dropped = &self.dropped;
        self.order.retain(|&p| !dropped[p as usize]);
        obs.finish_epoch(self.epoch, self.index, &self.w, self.c);
        stats
    }
}
