//! Exact sums of f64 values whose result does not depend on the order of the additions, on how the values are
//! split between threads, or on how they are split between processes.
//!
//! Every finite f64 is an integer multiple of 2⁻¹⁰⁷⁴, so a sum of them is an integer number of 2⁻¹⁰⁷⁴ units. An
//! [`ExactVec`] keeps each of its sums as that integer, in two parts:
//! - a *window*: an `i128` count of 2^(u − 1074) units, where the unit `u` is set by the first value the window
//!   takes. Values within about 2³⁶ of that one (the sums of a gradient or a Hessian product are all of them) are
//!   added with one shift and one 128-bit addition, in 24 bytes per sum that stay in the L1 cache;
//! - the *limbs*: the whole integer in 32-bit digits held in `i64`s (the spare bits absorb carries, which are
//!   propagated every 2³⁰ additions), allocated when a window first spills into them — a value far outside its
//!   window's range, a window about to overflow, NaN or ±∞.
//!
//! Integer addition is associative, so two accumulators merge exactly ([`ExactVec::merge`]) and so do the limbs of
//! accumulators on different machines (an MPI sum of `i64` arrays after [`ExactVec::normalise`] has moved every
//! window into the limbs: `ltr_core::Allreduce::sum_exact`). Reading a sum out ([`ExactVec::value`]) rounds the
//! exact integer to the nearest f64 once, so how a sum was split between window and limbs never shows.
//!
//! Why not the `xsum` crate (Neal's superaccumulator, correctly rounded too): its accumulator state is private, and
//! data-parallel training needs to ship the state itself between processes; `xsum` is this module's test oracle.

use crate::Dataset;
use rayon::prelude::*;

/// Bits per digit.
const DIGIT_BITS: u32 = 32;
const DIGIT_MASK: u64 = (1 << DIGIT_BITS) - 1;
/// Digits per value: bit 0 of digit 0 is 2⁻¹⁰⁷⁴; a finite f64 reaches bit 2098, digit 65; a window's top bit
/// (its unit at most 2045, plus 127) reaches digit 67; the top digit is signed and absorbs every carry.
const DIGITS: usize = 68;
/// Counters kept after the digits of each value: +∞, −∞ and NaN additions (they have no integer form).
const SPECIALS: usize = 3;
/// `i64`s per value in [`ExactVec::limbs`].
pub const LIMBS_PER_VALUE: usize = DIGITS + SPECIALS;
/// Carries are propagated after this many additions, before any digit could overflow.
const NORMALISE_EVERY: u32 = 1 << 30;
/// A value joins a window when its lowest bit lies at most this far above the window's unit: its 53-bit mantissa
/// shifted so far stays below 2¹²⁶, and the window's `checked_add` catches the sums that would not fit.
const WINDOW_SPAN: u32 = 73;
/// A new window's unit lies this many bits below its first value's lowest bit, so values from about 2⁻³⁶ to 2³⁷
/// times that one join it.
const WINDOW_BELOW: u32 = 36;

/// `len` exact sums, each of any number of f64 additions.
#[derive(Debug, Clone)]
pub struct ExactVec {
    len: usize,
    /// Sum `i`'s window: `window[i] · 2^(unit[i] − 1074)`.
    window: Vec<i128>,
    unit: Vec<u32>,
    /// [`LIMBS_PER_VALUE`] per sum once a window has spilled; empty before.
    limbs: Vec<i64>,
    /// Additions to the limbs since carries were last propagated.
    pending: u32,
}

impl ExactVec {
    /// `len` sums, all zero.
    pub fn new(len: usize) -> Self {
        Self {
            len,
            window: vec![0; len],
            unit: vec![0; len],
            limbs: Vec::new(),
            pending: 0,
        }
    }

    /// The number of sums.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no sums.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Add `v` to sum `i` exactly.
    #[inline]
    pub fn add(&mut self, i: usize, v: f64) {
        if v != 0.0 && !add_in_window(&mut self.window[i], &mut self.unit[i], v) {
            self.add_outside_window(i, v);
        }
    }

    /// Add `values[k]` to sum `start + k` for every `k`, setting each value to 0 — how a query's partial sums, kept
    /// in a reusable buffer, are added (one tight loop, with the common case of [`add`](Self::add) inlined).
    pub fn add_and_clear(&mut self, start: usize, values: &mut [f64]) {
        let end = start + values.len();
        assert!(end <= self.len, "sums {start}..{end} of {}", self.len);
        for (i, value) in (start..end).zip(values.iter_mut()) {
            let v = std::mem::take(value);
            // No test for 0.0 here: a query leaves scattered zeros among its partial sums, and a branch on them
            // mispredicts; `add_in_window` adds a zero as a zero count instead.
            if !add_in_window(&mut self.window[i], &mut self.unit[i], v) {
                self.add_outside_window(i, v);
            }
        }
    }

    /// [`add`](Self::add) for a value its window cannot take: ±∞ and NaN are counted in the limbs; a finite value
    /// spills the window into the limbs and opens a new one. Kept out of line so that `add`'s common case inlines.
    #[cold]
    #[inline(never)]
    fn add_outside_window(&mut self, i: usize, v: f64) {
        if !v.is_finite() {
            let slot = if v.is_nan() {
                2
            } else if v > 0.0 {
                0
            } else {
                1
            };
            self.ensure_limbs();
            self.limbs[i * LIMBS_PER_VALUE + DIGITS + slot] += 1;
            return;
        }
        let (mantissa, position) = decompose(v);
        let (acc, unit) = (self.window[i], self.unit[i]);
        // A smaller value than the window holds: lower the window's unit to it when the count still fits, so sums
        // whose values shrink (boosting potentials, decaying steps) stay in their window.
        if acc != 0 && position < unit {
            let lower = position.saturating_sub(WINDOW_BELOW);
            if let Some((sum, unit)) = join((acc, unit), (mantissa << (position - lower), lower)) {
                self.window[i] = sum;
                self.unit[i] = unit;
                return;
            }
        }
        self.spill(i);
        self.open_window(i, mantissa, position);
    }

    /// Start sum `i`'s (empty) window at `mantissa · 2^(position − 1074)`, its unit [`WINDOW_BELOW`] bits lower.
    #[inline]
    fn open_window(&mut self, i: usize, mantissa: i128, position: u32) {
        open_window_at(&mut self.window[i], &mut self.unit[i], mantissa, position);
    }

    /// Add `values[i]` to sum `i` for every `i`.
    pub fn add_all(&mut self, values: &[f64]) {
        assert_eq!(values.len(), self.len, "one value per sum");
        for (i, &v) in values.iter().enumerate() {
            self.add(i, v);
        }
    }

    /// Add every sum of `other` to this one (exact: the result is the sum of all values added to either).
    pub fn merge(&mut self, other: &ExactVec) {
        assert_eq!(self.len, other.len, "merging sums of different lengths");
        for i in 0..self.len {
            let b = other.window[i];
            if b == 0 {
                continue;
            }
            let (a, ub) = (self.window[i], other.unit[i]);
            let joined = if a == 0 {
                Some((b, ub))
            } else {
                join((a, self.unit[i]), (b, ub))
            };
            let (sum, unit) = joined.unwrap_or_else(|| {
                self.spill(i);
                (b, ub)
            });
            self.window[i] = sum;
            self.unit[i] = unit;
        }
        if !other.limbs.is_empty() {
            self.ensure_limbs();
            self.normalise_limbs();
            let mut other_normalised;
            let other_limbs = if other.pending > 0 {
                other_normalised = other.limbs.clone();
                for value in other_normalised.chunks_exact_mut(LIMBS_PER_VALUE) {
                    normalise_digits(&mut value[..DIGITS]);
                }
                &other_normalised
            } else {
                &other.limbs
            };
            for (a, b) in self.limbs.iter_mut().zip(other_limbs) {
                *a += b;
            }
            // Two normalised digits sum below 2³³: as much as one more addition.
            self.pending = 1;
        }
    }

    /// Move every sum into the limbs and propagate carries so that every digit but the top one of each sum lies in
    /// [0, 2³²): a sum then has exactly one representation, and any number of normalised accumulators (up to 2³⁰)
    /// can be added limb by limb.
    pub fn normalise(&mut self) {
        if self.len == 0 {
            return;
        }
        self.ensure_limbs();
        for i in 0..self.len {
            self.spill(i);
        }
        self.normalise_limbs();
    }

    /// The raw limbs, [`LIMBS_PER_VALUE`] `i64`s per sum: the whole sums after [`normalise`](Self::normalise),
    /// which ships them (before it, sums still in their windows are not in the limbs, which may not exist yet).
    pub fn limbs(&self) -> &[i64] {
        &self.limbs
    }

    /// The raw limbs, for a collective to sum in place: every sum is moved into them and normalised first; the
    /// caller must [`normalise`](Self::normalise) after summing.
    pub fn limbs_mut(&mut self) -> &mut [i64] {
        self.normalise();
        self.pending = 1;
        &mut self.limbs
    }

    /// Sum `i`, rounded once to the nearest f64 (ties to even; a result in the subnormal range may be one unit
    /// off). A sum that saw NaN, or both infinities, is NaN; one with only +∞ (−∞) is +∞ (−∞).
    pub fn value(&self, i: usize) -> f64 {
        let (window, unit) = (self.window[i], self.unit[i]);
        if self.limbs.is_empty() {
            // `as` rounds an integer to the nearest f64, ties to even: the one rounding of the exact sum.
            return if window == 0 {
                0.0
            } else {
                scale_by_power_of_two(window as f64, unit as i32 - 1074)
            };
        }
        let value = &self.limbs[i * LIMBS_PER_VALUE..(i + 1) * LIMBS_PER_VALUE];
        let (pos_inf, neg_inf, nan) = (value[DIGITS], value[DIGITS + 1], value[DIGITS + 2]);
        if nan > 0 || (pos_inf > 0 && neg_inf > 0) {
            return f64::NAN;
        }
        if pos_inf > 0 {
            return f64::INFINITY;
        }
        if neg_inf > 0 {
            return f64::NEG_INFINITY;
        }
        let mut digits = [0i64; DIGITS];
        digits.copy_from_slice(&value[..DIGITS]);
        add_scaled(&mut digits, window, unit);
        normalise_digits(&mut digits);
        let negative = digits[DIGITS - 1] < 0;
        if negative {
            for d in digits.iter_mut() {
                *d = -*d;
            }
            normalise_digits(&mut digits);
        }
        let Some(top) = digits.iter().rposition(|&d| d != 0) else {
            return 0.0;
        };
        // Three digits hold at least 65 significant bits; any non-zero digit below them only decides rounding,
        // as a sticky bit far below the 53 kept.
        let low = top.saturating_sub(2);
        let mut mantissa: u128 = 0;
        for d in (low..=top).rev() {
            mantissa = (mantissa << DIGIT_BITS) | digits[d] as u64 as u128;
        }
        if digits[..low].iter().any(|&d| d != 0) {
            mantissa |= 1;
        }
        let magnitude =
            scale_by_power_of_two(mantissa as f64, low as i32 * DIGIT_BITS as i32 - 1074);
        if negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// Every sum, rounded ([`value`](Self::value)).
    pub fn values(&self) -> Vec<f64> {
        (0..self.len).map(|i| self.value(i)).collect()
    }

    /// Allocate the limbs (all zero) on first need.
    fn ensure_limbs(&mut self) {
        if self.limbs.is_empty() {
            self.limbs = vec![0; self.len * LIMBS_PER_VALUE];
        }
    }

    /// Move sum `i`'s window into its limbs, leaving the window empty.
    fn spill(&mut self, i: usize) {
        let window = std::mem::take(&mut self.window[i]);
        if window == 0 {
            return;
        }
        self.ensure_limbs();
        if self.pending >= NORMALISE_EVERY {
            self.normalise_limbs();
        }
        // A spill adds below 2³³ to a digit (two shifted 32-bit chunks): as much as two additions.
        self.pending += 2;
        let base = i * LIMBS_PER_VALUE;
        add_scaled(&mut self.limbs[base..base + DIGITS], window, self.unit[i]);
    }

    /// Propagate the limbs' carries.
    fn normalise_limbs(&mut self) {
        for value in self.limbs.chunks_exact_mut(LIMBS_PER_VALUE) {
            normalise_digits(&mut value[..DIGITS]);
        }
        self.pending = 0;
    }
}

/// Add `v` to the window `(window, unit)` if it fits there (opening an empty window at it; a zero adds nothing,
/// without a branch); false for a value the window cannot take, which [`ExactVec::add_outside_window`] then handles.
#[inline(always)]
fn add_in_window(window: &mut i128, unit: &mut u32, v: f64) -> bool {
    if !v.is_finite() {
        return false;
    }
    let (mantissa, position) = decompose(v);
    if *window == 0 {
        if mantissa != 0 {
            open_window_at(window, unit, mantissa, position);
        }
        return true;
    }
    let u = *unit;
    // A zero's count is 0 at any position: give it the window's own, so it takes the common path below.
    let position = if mantissa == 0 { u } else { position };
    if position >= u && position - u <= WINDOW_SPAN {
        if let Some(sum) = window.checked_add(mantissa << (position - u)) {
            *window = sum;
            return true;
        }
    }
    false
}

/// Open the empty window `(window, unit)` at `mantissa · 2^(position − 1074)`, its unit [`WINDOW_BELOW`] bits lower.
#[inline(always)]
fn open_window_at(window: &mut i128, unit: &mut u32, mantissa: i128, position: u32) {
    *unit = position.saturating_sub(WINDOW_BELOW);
    *window = mantissa << (position - *unit);
}

/// A finite `v` as `(m, p)` with `v = m · 2^(p − 1074)`, `|m| < 2⁵³` signed (±0 gives `(0, 0)`).
#[inline]
fn decompose(v: f64) -> (i128, u32) {
    let bits = v.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as u32;
    let fraction = bits & ((1u64 << 52) - 1);
    let (mantissa, position) = if exponent == 0 {
        (fraction, 0)
    } else {
        (fraction | (1u64 << 52), exponent - 1)
    };
    let mantissa = mantissa as i128;
    (if bits >> 63 == 1 { -mantissa } else { mantissa }, position)
}

/// The sum of two windows `(count, unit)`, at the lower unit, or `None` when it would not fit in an `i128`.
fn join((a, ua): (i128, u32), (b, ub): (i128, u32)) -> Option<(i128, u32)> {
    if ua <= ub {
        shift_left(b, ub - ua)
            .and_then(|b| a.checked_add(b))
            .map(|s| (s, ua))
    } else {
        shift_left(a, ua - ub)
            .and_then(|a| a.checked_add(b))
            .map(|s| (s, ub))
    }
}

/// `x · 2^s`, or `None` when it would not fit in an `i128` (`x` non-zero).
fn shift_left(x: i128, s: u32) -> Option<i128> {
    if s >= 127 {
        return None;
    }
    let y = x << s;
    (y >> s == x).then_some(y)
}

/// Add `window · 2^unit` (in units of 2⁻¹⁰⁷⁴) to `digits`, 32-bit chunk by chunk; each chunk, shifted into place,
/// touches two digits.
fn add_scaled(digits: &mut [i64], window: i128, unit: u32) {
    if window == 0 {
        return;
    }
    let negative = window < 0;
    let magnitude = window.unsigned_abs();
    let first = (unit / DIGIT_BITS) as usize;
    let shift = unit % DIGIT_BITS;
    for k in 0..4 {
        let chunk = (magnitude >> (DIGIT_BITS as usize * k)) as u64 & DIGIT_MASK;
        if chunk == 0 {
            continue;
        }
        let wide = chunk << shift;
        let (low, high) = ((wide & DIGIT_MASK) as i64, (wide >> DIGIT_BITS) as i64);
        if negative {
            digits[first + k] -= low;
            digits[first + k + 1] -= high;
        } else {
            digits[first + k] += low;
            digits[first + k + 1] += high;
        }
    }
}

/// Carry every digit but the last into [0, 2³²) (an arithmetic shift floors, so negative digits borrow).
fn normalise_digits(digits: &mut [i64]) {
    for i in 0..digits.len() - 1 {
        let carry = digits[i] >> DIGIT_BITS;
        digits[i] -= carry << DIGIT_BITS;
        digits[i + 1] += carry;
    }
}

/// x · 2^e in steps that neither overflow nor underflow the factor itself.
fn scale_by_power_of_two(mut x: f64, mut e: i32) -> f64 {
    while e > 1000 {
        x *= f64::from_bits(((1023 + 1000) as u64) << 52);
        e -= 1000;
    }
    while e < -1000 {
        x *= f64::from_bits(((1023 - 1000) as u64) << 52);
        e += 1000;
    }
    x * f64::from_bits(((1023 + e) as u64) << 52)
}

/// Σ over the queries 0..n_queries of what `per_query(q, acc, scratch)` adds into `acc` (an [`ExactVec`] of `len`
/// sums), in parallel over queries; `scratch` makes each worker's reusable buffers. Integer sums do not depend
/// on how rayon splits the queries, nor (summed across ranks by `ltr_core::Allreduce::sum_exact`) on how the
/// queries are spread over ranks. The one parallel reduction behind every exact sum over queries.
pub fn exact_sum_over_queries<S: Send>(
    n_queries: usize,
    len: usize,
    scratch: impl Fn() -> S + Sync + Send,
    per_query: impl Fn(usize, &mut ExactVec, &mut S) + Sync + Send,
) -> ExactVec {
    // Each piece of work allocates and merges a whole accumulator, so the queries are cut into a few pieces per
    // thread rather than as finely as rayon would (RankBoost's 500 sums a round on MQ2008 spent 70% of its time
    // merging when every accumulator carried 71 limbs a sum), and a piece takes at least len/64 queries, so few
    // queries with many sums (3,005 sparse documents in 100 queries, 700 features) do not pay more for
    // accumulators than for their own work. The sums are exact, so how the queries are cut never changes them.
    let pieces = 4 * rayon::current_num_threads();
    (0..n_queries)
        .into_par_iter()
        .with_min_len((n_queries / pieces).max(8).max(len.div_ceil(64)))
        .fold(
            || (ExactVec::new(len), scratch()),
            |(mut acc, mut s), q| {
                per_query(q, &mut acc, &mut s);
                (acc, s)
            },
        )
        .map(|(acc, _)| acc)
        .reduce(
            || ExactVec::new(len),
            |mut a, b| {
                a.merge(&b);
                a
            },
        )
}

/// The number of feature values stored in `rows` (all d per row when dense).
fn entries_in(ds: &Dataset, rows: std::ops::Range<usize>) -> usize {
    rows.map(|i| ds.row(i).nnz()).sum()
}

/// Σ_q X_qᵀ coef_q — the gradient or Hessian product of a loss over queries — with each query's part taken in f64
/// and the parts summed exactly (in parallel over queries), in `d + extra.len()` sums: the d features, then
/// `extra[k][q]` (per-query values such as the losses) summed over queries into sum d + k. A query's part does not
/// depend on which other queries a rank holds, so the sums, summed across ranks by `ltr_core::Allreduce::sum_exact`,
/// are the same however the queries are split.
pub fn exact_transpose_times(ds: &Dataset, coef: &[f64], extra: &[&[f64]]) -> ExactVec {
    let d = ds.n_features();
    exact_sum_over_queries(
        ds.n_queries(),
        d + extra.len(),
        || TransposeScratch::new(ds),
        |q, acc, scratch| {
            add_query_transpose_times(ds, q, &coef[ds.query_range(q)], acc, scratch);
            for (k, values) in extra.iter().enumerate() {
                acc.add(d + k, values[q]);
            }
        },
    )
}

/// The reusable buffers of [`add_query_transpose_times`]: a partial sum per feature and, on sparse data, which
/// features the query touched.
#[derive(Debug, Clone)]
pub struct TransposeScratch {
    part: Vec<f64>,
    touched: Vec<usize>,
    marked: Vec<bool>,
}

impl TransposeScratch {
    /// Buffers for queries of `ds`.
    pub fn new(ds: &Dataset) -> Self {
        let d = ds.n_features();
        let marks = if ds.is_dense() { 0 } else { d };
        Self {
            part: vec![0.0; d],
            touched: Vec::new(),
            marked: vec![false; marks],
        }
    }
}

/// Add query `q`'s part of Xᵀc to sums `0..d` of `acc`: `coef[k]` is the coefficient of the query's k-th row. The
/// part is taken in f64 in row order, then added exactly, so it does not depend on which other queries (or ranks)
/// contribute. The per-query step of [`exact_transpose_times`], for learners that fuse it with their own per-query
/// work.
pub fn add_query_transpose_times(
    ds: &Dataset,
    q: usize,
    coef: &[f64],
    acc: &mut ExactVec,
    scratch: &mut TransposeScratch,
) {
    let rows = ds.query_range(q);
    assert_eq!(
        coef.len(),
        rows.len(),
        "one coefficient per row of the query"
    );
    let TransposeScratch {
        part,
        touched,
        marked,
    } = scratch;
    let d = part.len();
    // Tracking which features a query touches pays only when they are few: a query whose rows hold at least d/4
    // values (30 Yahoo-style documents of 60 values among 700 features touch 93% of them) is read back by a scan of
    // all d partial sums instead. Adding an untouched 0.0 changes no sum, so both ways give the same sums.
    let track = !ds.is_dense() && entries_in(ds, rows.clone()) < d / 4;
    for (i, &c) in rows.zip(coef) {
        if c == 0.0 {
            continue;
        }
        let row = ds.row(i);
        row.axpy(c, part);
        if track {
            for (f, _) in row.entries() {
                if !marked[f] {
                    marked[f] = true;
                    touched.push(f);
                }
            }
        }
    }
    if track {
        for &f in touched.iter() {
            acc.add(f, part[f]);
            part[f] = 0.0;
            marked[f] = false;
        }
        touched.clear();
    } else {
        acc.add_and_clear(0, part);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use xsum::{Xsum, XsumAuto};

    fn exact(values: &[f64]) -> f64 {
        let mut acc = ExactVec::new(1);
        for &v in values {
            acc.add(0, v);
        }
        acc.value(0)
    }

    fn oracle(values: &[f64]) -> f64 {
        let mut x = XsumAuto::new();
        x.add_list(values);
        x.sum()
    }

    #[test]
    fn cancellation_that_plain_sums_lose() {
        assert_eq!(exact(&[1e100, 1.0, -1e100]), 1.0);
        assert_eq!(exact(&[1e100, 1.0, -1e100, 1e-300]), 1.0);
        assert_eq!(exact(&[0.1, 0.2, -0.3]), 2.7755575615628914e-17);
        assert_eq!(exact(&[-0.5, -0.25]), -0.75);
        assert_eq!(exact(&[f64::MAX, f64::MAX, -f64::MAX]), f64::MAX);
        assert_eq!(exact(&[5e-324, 5e-324]), 1e-323);
        assert_eq!(exact(&[]), 0.0);
    }

    #[test]
    fn non_finite_values_give_what_ieee_addition_gives() {
        assert_eq!(exact(&[1.0, f64::INFINITY]), f64::INFINITY);
        assert_eq!(exact(&[1.0, f64::NEG_INFINITY]), f64::NEG_INFINITY);
        assert!(exact(&[f64::INFINITY, f64::NEG_INFINITY]).is_nan());
        assert!(exact(&[1.0, f64::NAN]).is_nan());
    }

    #[test]
    fn agrees_with_the_xsum_oracle_on_wide_random_values() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for trial in 0..300 {
            let n = rng.random_range(1..400);
            let spread = [2, 20, 300][trial % 3];
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    let m: f64 = rng.random_range(-1.0..1.0);
                    m * 10f64.powi(rng.random_range(-spread..=spread))
                })
                .collect();
            assert_eq!(
                exact(&values).to_bits(),
                oracle(&values).to_bits(),
                "trial {trial}"
            );
        }
    }

    #[test]
    fn order_and_split_do_not_change_a_bit() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let values: Vec<f64> = (0..5000)
            .map(|_| rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-30..30)))
            .collect();
        let whole = exact(&values);
        let mut reversed = values.clone();
        reversed.reverse();
        assert_eq!(exact(&reversed).to_bits(), whole.to_bits());
        for parts in [2, 3, 7] {
            let mut total = ExactVec::new(1);
            for chunk in values.chunks(values.len() / parts + 1) {
                let mut part = ExactVec::new(1);
                for &v in chunk {
                    part.add(0, v);
                }
                total.merge(&part);
            }
            assert_eq!(total.value(0).to_bits(), whole.to_bits(), "{parts} parts");
        }
        // Plain summation does depend on the order here (else this test would prove nothing).
        let forward: f64 = values.iter().sum();
        let backward: f64 = reversed.iter().sum();
        assert_ne!(forward.to_bits(), backward.to_bits());
    }

    #[test]
    fn windows_that_overflow_or_miss_their_range_spill_exactly() {
        // The lowest bit of 2³⁷·(2 − 2⁻⁵²) lies 73 bits above the unit of a window opened by 1.0, so the window
        // holds one of them and overflows at the second.
        let big = (2.0 - f64::EPSILON) * 2f64.powi(37);
        let cases: Vec<Vec<f64>> = vec![
            vec![1.0, big, big, big, -big, 3.0],
            vec![1.0, 1e-30, 1e30, -1.0, 1e-30, -1e30],
            vec![1e-300, 1e300, -1e300, 5e-324],
            vec![f64::MAX, 1.0, f64::MAX, -f64::MAX, -f64::MAX],
            // Shrinking values lower the window's unit while the count fits, then spill.
            (0..200)
                .map(|k| 0.7f64.powi(k) * if k % 2 == 0 { 1.0 } else { -3.0 })
                .collect(),
            (0..60).map(|k| 1e-6f64.powi(k % 30) * 1.5).collect(),
            (0..1000)
                .map(|k| if k % 3 == 0 { -big } else { 1.0 + k as f64 })
                .collect(),
        ];
        for values in cases {
            assert_eq!(
                exact(&values).to_bits(),
                oracle(&values).to_bits(),
                "{values:?}"
            );
        }
    }

    #[test]
    fn merges_of_windows_with_different_units_and_of_limbs_are_exact() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(13);
        for trial in 0..200 {
            let n = rng.random_range(2..300);
            let spread = [3, 40, 300][trial % 3];
            let values: Vec<f64> = (0..n)
                .map(|_| {
                    rng.random_range(-1.0..1.0) * 10f64.powi(rng.random_range(-spread..=spread))
                })
                .collect();
            let mut parts: Vec<ExactVec> = values
                .chunks(rng.random_range(1..=n))
                .map(|chunk| {
                    let mut part = ExactVec::new(1);
                    for &v in chunk {
                        part.add(0, v);
                    }
                    part
                })
                .collect();
            // Some parts in limb form, as a collective leaves them.
            for part in parts.iter_mut().step_by(2) {
                part.normalise();
            }
            let mut forward = ExactVec::new(1);
            for part in &parts {
                forward.merge(part);
            }
            let mut backward = ExactVec::new(1);
            for part in parts.iter().rev() {
                backward.merge(part);
            }
            let want = oracle(&values).to_bits();
            assert_eq!(forward.value(0).to_bits(), want, "trial {trial}");
            assert_eq!(backward.value(0).to_bits(), want, "trial {trial}");
            forward.normalise();
            assert_eq!(
                forward.value(0).to_bits(),
                want,
                "trial {trial}, normalised"
            );
        }
    }

    #[test]
    fn limbs_summed_as_integers_are_the_merged_sum() {
        let (mut a, mut b) = (ExactVec::new(2), ExactVec::new(2));
        a.add_all(&[1.5, -3e-200]);
        b.add_all(&[-0.25, 7e150]);
        let mut merged = a.clone();
        merged.merge(&b);
        a.normalise();
        b.normalise();
        for (x, y) in a.limbs_mut().iter_mut().zip(b.limbs()) {
            *x += y;
        }
        a.normalise();
        assert_eq!(a.values(), merged.values());
        assert_eq!(a.values(), vec![1.25, 7e150]);
    }
}
