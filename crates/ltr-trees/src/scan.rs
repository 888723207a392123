//! The split search of one feature without a missing bin: [`best_split`](crate::best_split)'s most frequent case, a
//! few hundred thousand calls for 100 trees of 31 leaves on 46 features.
//!
//! In passes instead of one: under [`LeafCount::Hessian`](crate::LeafCount) each bin's estimated documents first, one
//! independent computation a bin; then the candidates (the top bin of each gap between occupied bins whose sides both
//! hold enough documents, real or estimated) are listed from the top with their right side's sums, integers added as
//! the scan goes; then the gain of every candidate, one independent computation each (two divisions); then the first
//! largest gain from the top. The independent passes are compiled also for AVX2 and AVX-512 (chosen at run time),
//! the same operations on each value, so the same bits. The same split, bit for bit, as judging each candidate in
//! turn: the same integer sums, the same arithmetic on each, and the same tie rule (from the top, the first of equal
//! gains).

use crate::hist::Sums;

/// What a candidate is judged by: the leaf's sums and own score `G²/(H + λ)`, the round's units (those of
/// [`Scale::cell`](crate::Scale::cell)) and the settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judged {
    pub total: Sums,
    pub total_score: f64,
    pub g_unit: f64,
    pub h_unit: f64,
    pub l2: f64,
    pub min_hessian: f64,
    pub min_docs: i64,
}

/// The candidates of one feature, kept from one call to the next on each thread: each bin's estimated documents
/// (under [`LeafCount::Hessian`](crate::LeafCount)); the threshold bin (value bins `0..=bin` go left) and the right
/// side's fixed-point sums, from the top bin down (the winner's documents are counted again); and their gains.
#[derive(Default)]
struct Candidates {
    estimated: Vec<i64>,
    bin: Vec<u32>,
    g: Vec<i64>,
    h: Vec<i64>,
    gain: Vec<f64>,
}

thread_local! {
    static CANDIDATES: std::cell::RefCell<Candidates> = std::cell::RefCell::new(Candidates::default());
}

/// The best split of a feature without a missing bin (`hist`, its value bins) over a leaf with sums `p.total`: the
/// largest positive gain, ties to the larger bin, whose sides both hold `p.min_hessian` hessian and enough
/// documents: with `factor` `None`, at least `p.min_docs` documents (and one) each; with `Some(factor)` (at least 0),
/// LightGBM's estimate: the bins right of the threshold estimate `floor(h · factor + 0.5)` documents each, the left
/// side the leaf's documents less theirs, both at least `p.min_docs`, and the left side holds a document. The split
/// is the last value bin that goes left, the gain and the left side's sums. `None` when a bin's hessian is negative
/// under an estimate (this scan assumes estimates that are not negative) or an estimate is out of range
/// ([`estimates`]); `Some(None)` when no threshold passes.
pub(crate) fn scan_gaps(
    hist: &[Sums],
    p: &Judged,
    factor: Option<f64>,
) -> Option<Option<(usize, f64, Sums)>> {
    let total = p.total;
    CANDIDATES.with_borrow_mut(|c| {
        let nb = hist.len();
        c.bin.resize(nb, 0);
        c.g.resize(nb, 0);
        c.h.resize(nb, 0);
        let k = match factor {
            None => walk::<false>(hist, total, p.min_docs.max(1), c),
            Some(factor) => {
                c.estimated.resize(nb, 0);
                if !estimates(hist, p.h_unit, factor, &mut c.estimated) {
                    return None;
                }
                walk::<true>(hist, total, p.min_docs, c)
            }
        };
        if k == 0 {
            return Some(None);
        }
        c.gain.resize(k, 0.0);
        gains(&c.g[..k], &c.h[..k], &mut c.gain, *p);
        // The first largest positive gain from the top (a NaN, a failed candidate, never wins).
        let mut best: Option<usize> = None;
        let mut best_gain = 0.0;
        for (i, &gain) in c.gain.iter().enumerate() {
            if gain > best_gain {
                best_gain = gain;
                best = Some(i);
            }
        }
        Some(best.map(|i| {
            let bin = c.bin[i] as usize;
            let right = Sums {
                g: c.g[i],
                h: c.h[i],
                n: hist[bin + 1..].iter().map(|b| b.n).sum(),
            };
            (bin, best_gain, total.minus(right))
        }))
    })
}

/// List the candidates of `hist` into `c` from the top; returns how many. The right side of threshold `b − 1` holds
/// bins `b..`. Each threshold is written, and kept (without a branch) when bin `b` is occupied (the top of its gap,
/// which wins the gap's tie) and the right side holds at least `min_n` documents, real or (`HESSIAN`) estimated from
/// `c.estimated`. The left side only shrinks, real and estimated (no estimate is negative): once too small, no lower
/// threshold passes, and the scan stops.
#[inline]
fn walk<const HESSIAN: bool>(hist: &[Sums], total: Sums, min_n: i64, c: &mut Candidates) -> usize {
    let nb = hist.len();
    if nb < 2 {
        return 0;
    }
    let (bins, gs, hs) = (&mut c.bin[..nb], &mut c.g[..nb], &mut c.h[..nb]);
    let estimated = &c.estimated[..if HESSIAN { nb } else { 0 }];
    let last = nb - 1;
    let mut right = Sums::default();
    let mut estimated_right = 0i64;
    let mut k = 0;
    for b in (1..nb).rev() {
        let bin = hist[b];
        right = right.plus(bin);
        let keep = if HESSIAN {
            estimated_right += estimated[b];
            if total.n - right.n < 1 || total.n - estimated_right < min_n {
                break;
            }
            bin.n != 0 && estimated_right >= min_n
        } else {
            if total.n - right.n < min_n {
                break;
            }
            bin.n != 0 && right.n >= min_n
        };
        // At most one kept a bin below the top, so `k < b ≤ last`; the `min` only shows it to the compiler.
        let at = k.min(last);
        bins[at] = (b - 1) as u32;
        gs[at] = right.g;
        hs[at] = right.h;
        k += keep as usize;
    }
    k
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx512dq" if Avx512, "x86_64+avx2" if Avx2);
/// Each bin's estimated documents `floor(h · factor + 0.5)` (`h` in real units) into `estimated`; returns `false`
/// (the estimates then unused) when a bin's hessian is negative or an estimate reaches 2⁵² (it is at most about the
/// leaf's documents). Otherwise every `x = h · factor + 0.5` is in `[0.5, 2⁵²)` (`factor` is at least 0), where
/// [`best_split`](crate::best_split)'s floor is the truncation: computed without a conversion, as the nearest
/// integer `r` (`x + 2⁵²` rounds to it, its bits less those of 2⁵² are `r`) less one where `r > x`.
fn estimates(hist: &[Sums], h_unit: f64, factor: f64, estimated: &mut [i64]) -> bool {
    const BIG: f64 = (1u64 << 52) as f64;
    let mut fine = true;
    for (e, bin) in estimated.iter_mut().zip(hist) {
        let x = (bin.h as f64 * h_unit) * factor + 0.5;
        fine &= bin.h >= 0 && x < BIG;
        let t = x + BIG;
        let r = t.to_bits() as i64 - BIG.to_bits() as i64;
        *e = r - ((t - BIG) > x) as i64;
    }
    fine
}
}

/// `G²/(H + λ)` of a side's sums `g`, `h` in real units, 0 where the denominator is not positive: the score of
/// [`split_gain`](crate::split_gain) and of the gains below, one function so that both round alike.
#[inline(always)]
pub(crate) fn side_score(g: f64, h: f64, l2: f64) -> f64 {
    let d = h + l2;
    if d > 0.0 {
        g * g / d
    } else {
        0.0
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx512dq" if Avx512, "x86_64+avx2" if Avx2);
/// The gain of each candidate whose right side's sums are `g[i]`, `h[i]` into `gain[i]`, or NaN where a side holds
/// less hessian than `min_hessian`: `G_L²/(H_L + λ) + G_R²/(H_R + λ) − total_score`, each score 0 where its
/// denominator is not positive, the left side's sums the leaf's less the right's (exact integers). The arithmetic
/// of [`split_gain`](crate::split_gain) on [`Scale::cell`](crate::Scale::cell)s, operation for operation.
fn gains(g: &[i64], h: &[i64], gain: &mut [f64], p: Judged) {
    for ((out, &rg), &rh) in gain.iter_mut().zip(g).zip(h) {
        let (lg, lh) = (
            (p.total.g - rg) as f64 * p.g_unit,
            (p.total.h - rh) as f64 * p.h_unit,
        );
        let (rg, rh) = (rg as f64 * p.g_unit, rh as f64 * p.h_unit);
        let ok = !(lh < p.min_hessian || rh < p.min_hessian);
        let v = side_score(lg, lh, p.l2) + side_score(rg, rh, p.l2) - p.total_score;
        *out = if ok { v } else { f64::NAN };
    }
}
}
