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
//! A vector of partial sums added whole ([`ExactVec::add_and_clear`]: a query's d partial sums, once per query) first
//! goes through a third part, the *tier*: per sum three f64 accumulators on the grids 2^g, 2^(g+26) and 2^(g+52). A
//! value between 2^(g+52) and 2^(g+96) is split exactly into one multiple of each grid by two rounding additions
//! (x + 1.5·2⁵²·grid − 1.5·2⁵²·grid rounds x to a multiple of grid), and each part added to its accumulator is
//! exact for 2⁸ additions (then the tier is flushed into the window), because every partial sum stays an integer
//! number of grid units below 2⁵³. That is a dozen f64 operations a value with no branch, which the compiler runs
//! two or four values at a time: three times faster than the window's shift and 128-bit addition, which were a
//! quarter of a sparse Newton step. The tier adds whatever it takes exactly, so which part of a sum holds what
//! never changes the sum.
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

/// A tier's accumulators hold at most this many additions each between flushes: the top one, taking multiples of
/// its grid G below 2⁴⁵·G, stays below 2⁵³·G, an integer number of grid units that f64 holds exactly. (A wide span
/// and frequent flushes beat a narrow span: a flush costs one window addition per sum every 256 calls, a value
/// outside the span one per value.)
// pub for the tests in tests/unit/exact_sum.rs; not API.
#[doc(hidden)]
pub const TIER_ADDS: u32 = 1 << 8;
/// A tier takes values from its grid G = 2^(g+52) up to below `TIER_SPAN` · G.
const TIER_SPAN: f64 = (1u64 << 44) as f64;
/// 1.5 · 2⁵²: (x + 1.5·2⁵²·G) − 1.5·2⁵²·G is x rounded to a multiple of G, for |x| < 2⁵¹·G.
const ROUND_TO_GRID: f64 = 6_755_399_441_055_744.0;
/// 1.5 · 2²⁶: the same for the middle grid, G · 2⁻²⁶.
const ROUND_TO_MIDDLE_GRID: f64 = 100_663_296.0;
/// The middle grid over the top one, 2⁻²⁶.
const MIDDLE_GRID: f64 = 1.0 / (1u64 << 26) as f64;
/// The low grid over the top one, 2⁻⁵².
const LOW_GRID: f64 = 1.0 / (1u64 << 52) as f64;

/// The tier of an [`ExactVec`]: per sum its grid G (0 until a value opens it) and three accumulators holding
/// multiples of G·2⁻⁵², G·2⁻²⁶ and G. Allocated by the first [`ExactVec::add_and_clear`].
// pub for the tests in tests/unit/exact_sum.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct Tier {
    grid: Vec<f64>,
    low: Vec<f64>,
    middle: Vec<f64>,
    high: Vec<f64>,
    /// The most additions any accumulator has taken since the last flush.
    pub adds: u32,
}

impl Tier {
    fn is_allocated(&self) -> bool {
        !self.grid.is_empty()
    }

    /// Sum `i`'s tier as one count of units `(count, unit)` (units as in a window), or None when it is empty. Each
    /// accumulator is an integer number of its grid's units below 2⁵³, so it converts to an integer exactly, and
    /// the three make one count of low-grid units below 2¹⁰⁶.
    fn total(&self, i: usize) -> Option<(i128, u32)> {
        let [low, middle, high] = self.parts(i);
        if low == 0.0 && middle == 0.0 && high == 0.0 {
            return None;
        }
        let grid = self.grid[i];
        let (middle_grid, low_grid) = (grid * MIDDLE_GRID, grid * LOW_GRID);
        let count = (((high / grid) as i64 as i128) << 52)
            + (((middle / middle_grid) as i64 as i128) << 26)
            + (low / low_grid) as i64 as i128;
        // A normal power of two 2^k with biased exponent k + 1023 is one unit of 2^(k + 1074 − 1074).
        let unit = (low_grid.to_bits() >> 52) as u32 + 51;
        Some((count, unit))
    }

    /// [`tier_add`] of `values` to sums `start..start + values.len()`.
    fn add(&mut self, start: usize, values: &mut [f64]) -> bool {
        let range = start..start + values.len();
        tier_add(
            &self.grid[range.clone()],
            &mut self.low[range.clone()],
            &mut self.middle[range.clone()],
            &mut self.high[range],
            values,
        )
    }

    /// Sum `i`'s three accumulators.
    fn parts(&self, i: usize) -> [f64; 3] {
        if self.is_allocated() {
            [self.low[i], self.middle[i], self.high[i]]
        } else {
            [0.0; 3]
        }
    }
}

crate::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// Add `values[k]` to the tier sums `k` (grids `grid`) where the value lies in its tier's range, setting it to 0;
/// a value outside it (or a closed tier's, or non-finite) is left in place. True when any was left. No branch in
/// the loop: a value outside adds three zeros instead, so it runs two values at a time, or four or eight in the
/// AVX2 and AVX-512 clones chosen at run time (the same operations per value, so the same bits).
fn tier_add(
    grid: &[f64],
    low: &mut [f64],
    middle: &mut [f64],
    high: &mut [f64],
    values: &mut [f64],
) -> bool {
    let n = values.len();
    let (grid, low, middle, high) = (&grid[..n], &mut low[..n], &mut middle[..n], &mut high[..n]);
    let mut left = false;
    for k in 0..n {
        let v = values[k];
        let g = grid[k];
        let magnitude = v.abs();
        // NaN fails both comparisons; ±∞ the second; a closed tier (G = 0) takes only zeros.
        let fits = (magnitude >= g) & (magnitude < g * TIER_SPAN) | (v == 0.0);
        let x = if fits { v } else { 0.0 };
        let round_high = g * ROUND_TO_GRID;
        let h = (x + round_high) - round_high;
        let rest = x - h;
        let round_middle = g * ROUND_TO_MIDDLE_GRID;
        let m = (rest + round_middle) - round_middle;
        high[k] += h;
        middle[k] += m;
        low[k] += rest - m;
        values[k] = if fits { 0.0 } else { v };
        left |= !fits;
    }
    left
}
}

/// Open the closed tiers among `grid` at their values (a value that cannot open one leaves it closed): the first
/// call of a fresh accumulator opens every tier at once, without a call per sum.
fn open_tiers(grid: &mut [f64], values: &[f64]) {
    for (g, &v) in grid.iter_mut().zip(values) {
        if *g == 0.0 && v != 0.0 && v.is_finite() {
            *g = tier_grid(v).unwrap_or(0.0);
        }
    }
}

/// The grid of a tier opened by a finite non-zero `v` (2^e ≤ |v| < 2^(e+1)): 2^(8⌊(e − 18)/8⌋), so v lies 2¹⁸ to
/// 2²⁶ times above it and 2¹⁸ to 2²⁶ times below the tier's top, and tiers opened by values of similar size in
/// different pieces of work share a grid (and merge accumulator by accumulator). None where the grids would leave
/// the normal range of f64 (|v| below about 2⁻⁹⁵⁰ or above 2⁹⁸⁰): such values stay in the window.
fn tier_grid(v: f64) -> Option<f64> {
    let exponent = ((v.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    if !(-950..=980).contains(&exponent) {
        return None;
    }
    let g = (exponent - 18).div_euclid(8) * 8;
    Some(f64::from_bits(((g + 1023) as u64) << 52))
}

/// `len` exact sums, each of any number of f64 additions.
#[derive(Debug, Clone)]
pub struct ExactVec {
    len: usize,
    /// The fast part of each sum for [`ExactVec::add_and_clear`] (empty until its first call).
    // pub for the tests in tests/unit/exact_sum.rs; not API.
    #[doc(hidden)]
    pub tier: Tier,
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
            tier: Tier::default(),
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
    /// in a reusable buffer, are added. The values go through each sum's tier (see the module's documentation); the
    /// few it cannot take (the first value of a sum, values far from the others, non-finite ones) through
    /// [`add`](Self::add).
    pub fn add_and_clear(&mut self, start: usize, values: &mut [f64]) {
        let end = start + values.len();
        assert!(end <= self.len, "sums {start}..{end} of {}", self.len);
        if !self.tier.is_allocated() {
            let mut grid = vec![0.0; self.len];
            open_tiers(&mut grid[start..end], values);
            self.tier = Tier {
                grid,
                low: vec![0.0; self.len],
                middle: vec![0.0; self.len],
                high: vec![0.0; self.len],
                adds: 0,
            };
        }
        if self.tier.adds >= TIER_ADDS {
            self.flush_tier();
        }
        self.tier.adds += 1;
        if !self.tier.add(start, values) {
            return;
        }
        for (i, value) in (start..end).zip(values.iter_mut()) {
            // NaN != 0 too.
            if *value != 0.0 {
                let v = std::mem::take(value);
                self.add_beside_tier(i, v);
            }
        }
    }

    /// A value sum `i`'s tier did not take: it opens the tier when the tier is closed and the value can, else it
    /// goes to the window.
    #[cold]
    fn add_beside_tier(&mut self, i: usize, v: f64) {
        if self.tier.grid[i] == 0.0 && v.is_finite() {
            if let Some(grid) = tier_grid(v) {
                self.tier.grid[i] = grid;
                let left = self.tier.add(i, &mut [v]);
                debug_assert!(!left, "a tier takes the value that opened it");
                return;
            }
        }
        self.add(i, v);
    }

    /// Move every tier's accumulators into the windows (each is an exact f64), keeping the grids.
    fn flush_tier(&mut self) {
        if !self.tier.is_allocated() {
            return;
        }
        for i in 0..self.len {
            if let Some(total) = self.tier.total(i) {
                self.add_count(i, total);
            }
        }
        let Tier {
            low, middle, high, ..
        } = &mut self.tier;
        for acc in [low, middle, high] {
            acc.fill(0.0);
        }
        self.tier.adds = 0;
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
        self.merge_tier(other);
        for i in 0..self.len {
            if other.window[i] != 0 {
                self.add_count(i, (other.window[i], other.unit[i]));
            }
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

    /// Add `other`'s tier to this one: accumulator by accumulator where both sums share a grid (or this one has
    /// none yet), else through [`add`](Self::add).
    fn merge_tier(&mut self, other: &ExactVec) {
        if !other.tier.is_allocated() {
            return;
        }
        if !self.tier.is_allocated() {
            self.tier = other.tier.clone();
            return;
        }
        if self.tier.adds + other.tier.adds > TIER_ADDS {
            self.flush_tier();
        }
        self.tier.adds += other.tier.adds;
        for i in 0..self.len {
            let theirs = other.tier.grid[i];
            if theirs == 0.0 {
                continue;
            }
            // A closed tier holds nothing (it adds only zeros), so it can take the other's grid.
            let ours = &mut self.tier.grid[i];
            if *ours == 0.0 {
                *ours = theirs;
            }
            if *ours == theirs {
                self.tier.low[i] += other.tier.low[i];
                self.tier.middle[i] += other.tier.middle[i];
                self.tier.high[i] += other.tier.high[i];
            } else if let Some(total) = other.tier.total(i) {
                self.add_count(i, total);
            }
        }
    }

    /// Add `count · 2^(unit − 1074)` to sum `i`: joined to its window when the result fits, else the window is
    /// spilled to the limbs and the count becomes the window.
    fn add_count(&mut self, i: usize, (count, unit): (i128, u32)) {
        let window = self.window[i];
        let joined = if window == 0 {
            Some((count, unit))
        } else {
            join((window, self.unit[i]), (count, unit))
        };
        let (sum, unit) = joined.unwrap_or_else(|| {
            self.spill(i);
            (count, unit)
        });
        self.window[i] = sum;
        self.unit[i] = unit;
    }

    /// Move every sum into the limbs and propagate carries so that every digit but the top one of each sum lies in
    /// [0, 2³²): a sum then has exactly one representation, and any number of normalised accumulators (up to 2³⁰)
    /// can be added limb by limb.
    pub fn normalise(&mut self) {
        if self.len == 0 {
            return;
        }
        self.flush_tier();
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
        let (mut window, mut unit) = (self.window[i], self.unit[i]);
        let mut tier = self.tier.total(i);
        if self.limbs.is_empty() {
            // The tier's total joins the window when the count fits.
            if let Some(total) = tier {
                let joined = if window == 0 {
                    Some(total)
                } else {
                    join((window, unit), total)
                };
                if let Some((w, u)) = joined {
                    (window, unit) = (w, u);
                    tier = None;
                }
            }
            if tier.is_none() {
                // `as` rounds an integer to the nearest f64, ties to even: the one rounding of the exact sum.
                return if window == 0 {
                    0.0
                } else {
                    scale_by_power_of_two(window as f64, unit as i32 - 1074)
                };
            }
        }
        let mut digits = [0i64; DIGITS];
        if !self.limbs.is_empty() {
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
            digits.copy_from_slice(&value[..DIGITS]);
        }
        add_scaled(&mut digits, window, unit);
        if let Some((count, unit)) = tier {
            add_scaled(&mut digits, count, unit);
        }
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
    exact_sum_over((0..n_queries).into_par_iter(), len, scratch, per_query)
}

/// [`exact_sum_over_queries`] over `items`, one per query in query order (e.g. a query's index with its slices of
/// per-document outputs, which `per_item` fills while it adds the query's part).
pub fn exact_sum_over<T: Send, S: Send>(
    items: impl IndexedParallelIterator<Item = T>,
    len: usize,
    scratch: impl Fn() -> S + Sync + Send,
    per_item: impl Fn(T, &mut ExactVec, &mut S) + Sync + Send,
) -> ExactVec {
    // Each piece of work allocates and merges a whole accumulator, so the queries are cut into a few pieces per
    // thread rather than as finely as rayon would (RankBoost's 500 sums a round on MQ2008 spent 70% of its time
    // merging when every accumulator carried 71 limbs a sum), and a piece takes at least len/64 queries, so few
    // queries with many sums (3,005 sparse documents in 100 queries, 700 features) do not pay more for
    // accumulators than for their own work. The sums are exact, so how the queries are cut never changes them.
    let n_items = items.len();
    let pieces = 2 * rayon::current_num_threads();
    items
        .with_min_len((n_items / pieces).max(8).max(len.div_ceil(64)))
        .fold(
            || (ExactVec::new(len), scratch()),
            |(mut acc, mut s), item| {
                per_item(item, &mut acc, &mut s);
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

crate::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// Add query `q`'s part of Xᵀc to sums `0..d` of `acc`: `coef[k]` is the coefficient of the query's k-th row. The
/// part is taken in f64 in row order, then added exactly, so it does not depend on which other queries (or ranks)
/// contribute. The per-query step of [`exact_transpose_times`], for learners that fuse it with their own per-query
/// work. Compiled also for AVX2 and AVX-512 (chosen at run time) with the same order of operations, so the same
/// bits on any machine.
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
}
