//! The measure along one coordinate as a step function ([`Line`]), its best point under a [`Choice`], and the
//! whole line from sorted changes.

/// The measure as a step function of one coordinate's weight.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Line {
    /// Where the value changes, increasing.
    pub breakpoints: Vec<f64>,
    /// Mean measure on each interval: `values[i]` holds between `breakpoints[i−1]` and `breakpoints[i]`.
    pub values: Vec<f64>,
}

/// What the best point of a line is judged by.
#[derive(Debug, Clone, Copy)]
pub struct Choice {
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

/// One run's per-query values at t = −∞ and its changes `(order key of t, Δ)`, in query order.
pub(super) type RunLine = (Vec<f64>, Vec<(u64, f64)>);

/// The whole line: every change sorted and summed in order.
pub(super) fn full_line<'s>(
    changes: &mut [(u64, f64)],
    base: f64,
    nq: f64,
    line: &'s mut Line,
) -> &'s Line {
    // A stable sort: equal keys keep the query order, so the sums below do not depend on the thread count. Each
    // document's sweep emits its changes in order, so the input is a few thousand sorted runs, which a merge
    // sort takes as they are. Sequential: a whole line is under `PRUNE_FROM` changes on every restart's path
    // (larger ones are pruned), too few for rayon's merge sort to pay for its tasks and buffer.
    changes.sort_by_key(|c| c.0);
    line.breakpoints.clear();
    line.values.clear();
    line.values.push(base / nq);
    push_sorted(changes, base, nq, line);
    line
}

/// Appends the breakpoints and values of sorted `changes`, starting from the running sum `sum`.
pub(super) fn push_sorted(changes: &[(u64, f64)], mut sum: f64, nq: f64, line: &mut Line) {
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

/// An integer with the order of `f64::total_cmp`.
#[inline]
pub(super) fn to_key(t: f64) -> u64 {
    let bits = t.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

#[inline]
pub(super) fn from_key(key: u64) -> f64 {
    f64::from_bits(if key >> 63 == 1 {
        key & !(1 << 63)
    } else {
        !key
    })
}

impl Choice {
    /// The admissible part of the interval (lo, hi) — its lower end, raised to 0 for non-negative weights — and the
    /// point of it a step goes to; `None` when no point of it is admissible.
    pub fn point(&self, lo: f64, hi: f64) -> Option<(f64, f64)> {
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
    pub fn best(&self, choice: &Choice) -> Option<(f64, f64, f64)> {
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
