//! Histograms of gradient and hessian sums per (feature, bin), the best split of a leaf, and leaf-wise best-first
//! growth of one regression tree with histogram subtraction.
//!
//! Determinism: each round's gradients and hessians are turned into fixed-point integers by one power-of-two
//! [`Scale`] agreed over every document of every rank, and every histogram, leaf total and split side is an
//! integer sum ([`Sums`]). Integer addition is associative, so a sum does not depend on the order or grouping of
//! its documents: a tree is bit-identical at any thread count, and when the queries are spread over ranks whose
//! histograms are added by an [`Allreduce`], at any number of ranks — the same tree as one process grows. The larger
//! child's histogram is its parent's minus its sibling's, exactly. Gains and leaf values are computed in f64 from
//! those sums ([`Scale::cell`]), the best split chosen by a sequential scan in feature order.

use ltr_core::{Allreduce, ForestTree, Result};
use rayon::prelude::*;

use crate::bins::{BinColumn, Binned};
use crate::hist::{
    by_feature, contiguous, feature_histogram, gather, histograms, map_features, map_items,
    offsets, per_feature, reduce_histograms, subtract_documents, HistPool, Rows, Sums,
};
use crate::partition::{partition, Route};

/// Sums of one histogram bin (or of a leaf) in real units: gradients, hessians, documents (a count held as f64).
/// What the gain and the leaf value are computed from ([`Scale::cell`] of a [`Sums`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cell {
    /// Σ gradient.
    pub g: f64,
    /// Σ hessian.
    pub h: f64,
    /// Number of documents.
    pub n: f64,
}

/// One round's fixed point: gradients are stored as `round(g · 2^eg)`, hessians as `round(h · 2^eh)`, with the
/// largest powers of two at which the sum of every document's value (of every rank) still fits in 62 bits. With
/// 4 M documents that leaves a resolution of about 2⁻⁴⁰ of the largest gradient; a leaf's sums differ from f64
/// sums of the same values by less than their rounding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    g: f64,
    h: f64,
    // pub for the tests in tests/unit/grow.rs; not API.
    #[doc(hidden)]
    pub g_unit: f64,
    h_unit: f64,
}

/// `2^e` for `e` in [−1022, 1023].
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The exponent `e` of the scale `2^e` for values of magnitude at most `max` summed over `docs` documents: with
/// `max < 2^k` and `docs < 2^b`, `e = 62 − b − k`, so `|round(v · 2^e)| ≤ 2^(62 − b)` and any sum of `docs` of them
/// stays within `2^62`.
fn exponent(max: f64, docs: usize) -> i32 {
    if max.is_nan() || max <= 0.0 {
        return 0;
    }
    let b = (usize::BITS - docs.leading_zeros()) as i32;
    let biased = ((max.to_bits() >> 52) & 0x7ff) as i32;
    let k = if biased == 0 { -1022 } else { biased - 1022 };
    (62 - b - k).clamp(-1000, 1000)
}

impl Scale {
    /// The scale for gradients of magnitude at most `max_g` and hessians of magnitude at most `max_h`, `docs`
    /// documents in all (all ranks together).
    pub fn new(max_g: f64, max_h: f64, docs: usize) -> Self {
        let (eg, eh) = (exponent(max_g, docs), exponent(max_h, docs));
        Self {
            g: pow2(eg),
            h: pow2(eh),
            g_unit: pow2(-eg),
            h_unit: pow2(-eh),
        }
    }

    /// The scale of `g` and `h` (this rank's documents), agreed over the ranks of `comm`, `docs` documents in all.
    /// An error when a gradient or hessian is not finite.
    pub fn agree(g: &[f64], h: &[f64], docs: usize, comm: &dyn Allreduce) -> Result<Self> {
        let largest = |v: &[f64]| {
            v.par_iter().map(|x| x.abs()).reduce(
                || 0.0,
                |a: f64, b: f64| {
                    if a.is_nan() || b.is_nan() {
                        f64::NAN
                    } else {
                        a.max(b)
                    }
                },
            )
        };
        let mut max = [largest(g), largest(h)];
        comm.max_nonnegative_f64(&mut max)?;
        let [mg, mh] = max;
        if !(mg.is_finite() && mh.is_finite()) {
            return Err(ltr_core::LtrError::Training(format!(
                "the gradients or hessians are not finite (largest |g| {mg}, |h| {mh})"
            )));
        }
        Ok(Self::new(mg, mh, docs))
    }

    /// `(g, h)` in fixed point.
    #[inline]
    pub fn quantise(&self, g: f64, h: f64) -> [i64; 2] {
        [(g * self.g).round() as i64, (h * self.h).round() as i64]
    }

    /// `s` in real units.
    #[inline]
    pub fn cell(&self, s: Sums) -> Cell {
        Cell {
            g: s.g as f64 * self.g_unit,
            h: s.h as f64 * self.h_unit,
            n: s.n as f64,
        }
    }
}

/// The settings that shape one tree.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrowSettings {
    /// Leaves at most (≥ 2).
    pub leaves: usize,
    /// Depth at most (0: unlimited).
    pub max_depth: usize,
    /// Documents in a leaf at least.
    pub min_docs_in_leaf: usize,
    /// Hessian sum in a leaf at least.
    pub min_hessian_in_leaf: f64,
    /// How a split's sides are counted against `min_docs_in_leaf`.
    pub leaf_count: LeafCount,
    /// L2 penalty on leaf values.
    pub l2: f64,
    /// Leaf values are multiplied by this (the learning rate).
    pub shrinkage: f64,
}

/// How the two sides of a candidate split are counted against [`GrowSettings::min_docs_in_leaf`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafCount {
    /// The documents themselves.
    Documents,
    /// LightGBM's estimate from hessians (`FindBestThresholdSequentially`): each bin counts
    /// `round(h_bin · n / H)` documents, with `n` and `H` the leaf's documents and hessian sum, and the side
    /// its scan does not accumulate counts the rest of the leaf's `n`. Under LambdaRank a document counts by how
    /// much its pairs weigh (a query whose documents share one grade, whose hessians are 0, counts for nothing);
    /// with hessians all 1 (MART) it is the document count. Both sides must still hold a document.
    Hessian,
}

/// `G² / (H + λ)`, 0 where the denominator is not positive ([`side_score`](crate::scan::side_score) of a cell).
#[inline]
fn leaf_score(c: Cell, l2: f64) -> f64 {
    crate::scan::side_score(c.g, c.h, l2)
}

/// The split gain `G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)`.
#[inline]
pub fn split_gain(left: Cell, right: Cell, total: Cell, l2: f64) -> f64 {
    leaf_score(left, l2) + leaf_score(right, l2) - leaf_score(total, l2)
}

/// The Newton leaf value `−G / (H + λ)` times `shrinkage` (0 where `H + λ` is not positive).
pub fn leaf_value(c: Cell, l2: f64, shrinkage: f64) -> f64 {
    let d = c.h + l2;
    if d > 0.0 {
        -c.g / d * shrinkage
    } else {
        0.0
    }
}

/// The best split of one feature's histogram: value bins `0..=bin` go left, the missing bin (if any) goes left when
/// `missing_left`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FeatureSplit {
    /// The last value bin that goes left.
    pub bin: usize,
    /// Where the documents of the missing bin go (`true` for a feature without one).
    pub missing_left: bool,
    /// The split gain.
    pub gain: f64,
    /// The left side's sums.
    pub left: Sums,
}

/// The best split of one feature's histogram over a leaf with sums `total`: the largest positive gain that leaves
/// both sides enough documents (counted as [`GrowSettings::leaf_count`] says) and hessian. When `has_missing`, the histogram's last bin holds the missing values
/// and every threshold is tried with that bin on the left, then on the right. Both sides' sums are exact; the gain
/// is computed from them in real units by `scale`.
///
/// Ties follow LightGBM's scans (`FindBestThresholdSequentially`): with the missing bin on the left (and without
/// missing values) the larger `bin` wins, as LightGBM's scan from the top keeps the first of equal gains; with the
/// missing bin on the right the smaller `bin`, as its scan from the bottom does; and a split with the missing bin
/// on the right wins only with a strictly larger gain. Equal gains come from thresholds that split a leaf's
/// documents alike (the leaf has no document in the bins between them) or that differ only by documents whose
/// gradient and hessian are zero (a query whose documents all have one grade), so the rule decides where the
/// threshold sits in a gap of the leaf's values: at its top, as LightGBM puts it.
pub fn best_split(
    hist: &[Sums],
    has_missing: bool,
    total: Sums,
    scale: &Scale,
    s: &GrowSettings,
) -> Option<FeatureSplit> {
    let value_bins = hist.len().saturating_sub(has_missing as usize);
    let total_cell = scale.cell(total);
    let hessian = s.leaf_count == LeafCount::Hessian;
    // Under `LeafCount::Hessian`, each value bin's estimated documents (LightGBM adds 2·1e-15 to H); an empty bin's
    // is 0 (`floor(0 · factor + 0.5)`, or of NaN).
    let factor = total.n as f64 / (total_cell.h + 2e-15);
    if !has_missing && (!hessian || factor >= 0.0) {
        let p = crate::scan::Judged {
            total,
            total_score: leaf_score(total_cell, s.l2),
            g_unit: scale.g_unit,
            h_unit: scale.h_unit,
            l2: s.l2,
            min_hessian: s.min_hessian_in_leaf,
            min_docs: s.min_docs_in_leaf as i64,
        };
        if let Some(best) = crate::scan::scan_gaps(hist, &p, hessian.then_some(factor)) {
            return best.map(|(bin, gain, left)| FeatureSplit {
                bin,
                missing_left: true,
                gain,
                left,
            });
        }
    }
    let estimate = |b: &Sums| floor_to_i64(scale.cell(*b).h * factor + 0.5);
    let mut judge = Judge {
        total,
        total_score: leaf_score(total_cell, s.l2),
        min_n: s.min_docs_in_leaf as i64,
        hessian,
        estimated_total: 0,
        scale,
        s,
    };
    SCRATCH.with_borrow_mut(
        |Scratch {
             occupied,
             estimated,
         }| {
            if has_missing {
                // Every value bin's estimate, computed once without a branch.
                estimated.clear();
                if hessian {
                    estimated.extend(hist[..value_bins].iter().map(estimate));
                }
                judge.estimated_total = estimated.iter().sum();
                let nonnegative = estimated.iter().all(|&e| e >= 0);
                return scan_with_missing(hist, value_bins, estimated, nonnegative, &judge);
            }
            // The occupied bins, listed without a branch; only they are scanned.
            occupied.clear();
            occupied.resize(value_bins, 0);
            let mut k = 0;
            let mut negative = false;
            for (b, c) in hist.iter().enumerate() {
                occupied[k] = b as u32;
                k += (c.n != 0) as usize;
                negative |= c.h < 0;
            }
            occupied.truncate(k);
            if !hessian || !negative && factor >= 0.0 {
                // No estimate can be negative (a bin's is `floor(h · factor + 0.5)` with both at least 0).
                return scan_down(hist, occupied, &estimate, &judge);
            }
            estimated.clear();
            if hessian {
                estimated.extend(occupied.iter().map(|&b| estimate(&hist[b as usize])));
            }
            judge.estimated_total = estimated.iter().sum();
            let nonnegative = estimated.iter().all(|&e| e >= 0);
            scan_occupied(hist, occupied, estimated, nonnegative, &judge)
        },
    )
}

/// [`best_split`]'s per-thread scratch, kept from one call to the next.
#[derive(Default)]
struct Scratch {
    /// The occupied value bins, ascending.
    occupied: Vec<u32>,
    /// Estimated documents ([`LeafCount::Hessian`]) of each occupied bin, or of each value bin.
    estimated: Vec<i64>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// What a candidate split of one leaf is judged by: the leaf's sums and score, the settings, and the sum of the
/// value bins' estimated documents under [`LeafCount::Hessian`].
struct Judge<'a> {
    total: Sums,
    total_score: f64,
    min_n: i64,
    hessian: bool,
    estimated_total: i64,
    scale: &'a Scale,
    s: &'a GrowSettings,
}

impl Judge<'_> {
    /// Whether the sides pass `min_docs_in_leaf`: the real counts, or the estimate counted on the side LightGBM's
    /// scan accumulates (above the threshold with the missing bin on the left, below it with the bin on the
    /// right) and the leaf's documents less that estimate on the other.
    #[inline]
    fn enough(&self, missing_left: bool, left: Sums, estimated_left: i64) -> bool {
        let (total, min_n) = (self.total, self.min_n);
        let right = total.minus(left);
        if left.n < 1 || right.n < 1 {
            return false;
        }
        let (l, r) = if !self.hessian {
            (left.n, right.n)
        } else if missing_left {
            let r = self.estimated_total - estimated_left;
            (total.n - r, r)
        } else {
            (estimated_left, total.n - estimated_left)
        };
        l >= min_n && r >= min_n
    }

    /// Keep the candidate "value bins `0..=bin` left" in `best` when it passes and beats it.
    #[inline]
    fn consider(
        &self,
        best: &mut Option<FeatureSplit>,
        bin: usize,
        missing_left: bool,
        left: Sums,
        estimated_left: i64,
    ) {
        if self.enough(missing_left, left, estimated_left) {
            // Ascending bins: a later equal gain wins on the left (the larger bin), not on the right.
            self.weigh(best, bin, missing_left, left, missing_left);
        }
    }

    /// Keep the candidate in `best` when its sides hold enough hessian and it beats `best` (or equals it, when
    /// `ties_win`); its document counts have passed.
    #[inline]
    fn weigh(
        &self,
        best: &mut Option<FeatureSplit>,
        bin: usize,
        missing_left: bool,
        left: Sums,
        ties_win: bool,
    ) {
        let right = self.total.minus(left);
        let (l, r) = (self.scale.cell(left), self.scale.cell(right));
        let s = self.s;
        if l.h < s.min_hessian_in_leaf || r.h < s.min_hessian_in_leaf {
            return;
        }
        let gain = leaf_score(l, s.l2) + leaf_score(r, s.l2) - self.total_score;
        let better = best.is_none_or(|b| gain > b.gain || ties_win && gain == b.gain);
        if gain > 0.0 && better {
            *best = Some(FeatureSplit {
                bin,
                missing_left,
                gain,
                left,
            });
        }
    }

    /// Where the scan stops: once the real documents right of the threshold, which only shrink, are too few for
    /// any later candidate to pass (below one, or below `min_n` where they are what counts).
    #[inline]
    fn stop_below(&self) -> i64 {
        if self.hessian {
            1
        } else {
            self.min_n.max(1)
        }
    }
}

/// [`best_split`] of a feature without a missing bin whose estimates (under [`LeafCount::Hessian`]) are none
/// negative, over its occupied value bins `occupied` from the top: the thresholds at bins `b..next` (`b` occupied,
/// `next` the next occupied bin) leave the same documents on each side, so their candidates are equal and only the
/// last, `next − 1`, is judged (it wins the tie by [`best_split`]'s rule; from the top, the first of equal gains is
/// kept). Each bin's estimate is computed as the scan reaches it, and the scan stops once the left side, real or
/// estimated, is too small for any lower threshold. The same split as [`scan_occupied`], bit for bit: the sides'
/// sums are integers, whether added from the bottom or subtracted from the leaf's.
#[inline]
fn scan_down(
    hist: &[Sums],
    occupied: &[u32],
    estimate: &impl Fn(&Sums) -> i64,
    judge: &Judge<'_>,
) -> Option<FeatureSplit> {
    let (total, min_n) = (judge.total, judge.min_n);
    let stop_below = judge.stop_below();
    let mut right = Sums::default();
    let mut estimated_right = 0i64;
    let mut best: Option<FeatureSplit> = None;
    for w in occupied.windows(2).rev() {
        let c = hist[w[1] as usize];
        right = right.plus(c);
        let left = total.minus(right);
        if left.n < stop_below {
            break;
        }
        let (l, r) = if judge.hessian {
            estimated_right += estimate(&c);
            if total.n - estimated_right < min_n {
                break;
            }
            (total.n - estimated_right, estimated_right)
        } else {
            (left.n, right.n)
        };
        if right.n >= 1 && l >= min_n && r >= min_n {
            judge.weigh(&mut best, w[1] as usize - 1, true, left, false);
        }
    }
    best
}

/// [`best_split`] of a feature without a missing bin, over its occupied value bins (`occupied`, with their
/// estimates `estimated` under [`LeafCount::Hessian`]). The thresholds at bins `b..next` (`b` occupied, `next` the
/// next occupied bin) leave the same documents on each side, so their candidates are equal and the last, `next − 1`,
/// wins the tie ([`best_split`]'s rule): only it is judged. The same split as a scan of every bin, bit for bit,
/// at a cost that follows the leaf's occupied bins rather than the feature's bins.
#[inline]
fn scan_occupied(
    hist: &[Sums],
    occupied: &[u32],
    estimated: &[i64],
    nonnegative: bool,
    judge: &Judge<'_>,
) -> Option<FeatureSplit> {
    let (total, min_n) = (judge.total, judge.min_n);
    let stop_below = judge.stop_below();
    let mut left = Sums::default();
    let mut estimated_left = 0i64;
    let mut best: Option<FeatureSplit> = None;
    for (i, &b) in occupied.iter().enumerate() {
        left = left.plus(hist[b as usize]);
        if total.n - left.n < stop_below {
            break;
        }
        if judge.hessian {
            estimated_left += estimated[i];
            if nonnegative && judge.estimated_total - estimated_left < min_n {
                break;
            }
        }
        // The last occupied bin leaves nothing on the right.
        let Some(&next) = occupied.get(i + 1) else {
            break;
        };
        judge.consider(&mut best, next as usize - 1, true, left, estimated_left);
    }
    best
}

/// [`best_split`]'s scan of a feature with a missing bin (the histogram's last), every threshold in ascending
/// order with that bin on the left, then on the right. `estimated` holds each value bin's estimated documents
/// under [`LeafCount::Hessian`] (empty otherwise) and `nonnegative` whether none is negative.
#[inline]
fn scan_with_missing(
    hist: &[Sums],
    value_bins: usize,
    estimated: &[i64],
    nonnegative: bool,
    judge: &Judge<'_>,
) -> Option<FeatureSplit> {
    let (total, min_n) = (judge.total, judge.min_n);
    let missing = hist[value_bins];
    let stop_below = judge.stop_below();
    let mut left = Sums::default();
    // The estimated documents of value bins `0..=b`, accumulated as the scan goes.
    let mut estimated_left = 0i64;
    // The best with the missing bin on the left, and with it on the right.
    let mut best_left: Option<FeatureSplit> = None;
    let mut best_right: Option<FeatureSplit> = None;
    for b in 0..value_bins.saturating_sub(1) {
        left = left.plus(hist[b]);
        if total.n - left.n < stop_below {
            break;
        }
        if judge.hessian {
            estimated_left += estimated[b];
            // With no negative estimate the estimated right sides only shrink too.
            if nonnegative
                && judge.estimated_total - estimated_left < min_n
                && total.n - estimated_left < min_n
            {
                break;
            }
        }
        judge.consider(&mut best_left, b, true, left.plus(missing), estimated_left);
        judge.consider(&mut best_right, b, false, left, estimated_left);
    }
    match (best_left, best_right) {
        (Some(l), Some(r)) if r.gain > l.gain => Some(r),
        (None, r) => r,
        (l, _) => l,
    }
}

/// `x.floor() as i64` (saturating, NaN to 0) without a call to libm's `floor`, which the baseline x86-64 target
/// does not inline: the truncation, one less where it rounded a negative value up.
#[inline]
fn floor_to_i64(x: f64) -> i64 {
    if x >= 0.0 {
        // The common case (hessians are not negative): the floor is the truncation.
        return x as i64;
    }
    let t = x as i64;
    t - ((t as f64 > x) & (t != i64::MIN)) as i64
}

/// A leaf's chosen split: position in the tree's feature list, bin, where missing values go, gain.
#[derive(Debug, Clone, Copy)]
struct Split {
    pos: usize,
    bin: usize,
    missing_left: bool,
    gain: f64,
    /// The left child's sums (over every rank).
    left: Sums,
}

/// A leaf while the tree grows.
struct Leaf {
    start: usize,
    end: usize,
    depth: usize,
    /// Sums over the leaf's documents of every rank.
    total: Sums,
    /// The leaf's histograms, flat ([`offsets`]), kept while it can split.
    hist: Option<Vec<Sums>>,
    best: Option<Split>,
    /// The internal node whose child this leaf is, and whether it is the left child.
    parent: Option<(usize, bool)>,
}

/// A tree in bin space: internal nodes split kept feature `feature[k]` at bin `bin[k]` (bins `<=` go left).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct BinTree {
    pub feature: Vec<usize>,
    pub bin: Vec<u16>,
    /// Whether the missing bin goes left (always `true` for a feature without one).
    pub default_left: Vec<bool>,
    pub left: Vec<i32>,
    pub right: Vec<i32>,
    pub leaf_value: Vec<f64>,
    /// Training gain of each split.
    pub gain: Vec<f64>,
    /// The test of each split in bin space.
    route: Vec<Route>,
    /// The documents the tree was grown on, grouped by leaf: leaf `l` holds `docs[leaf_range[l].0..leaf_range[l].1]`.
    pub docs: Vec<u32>,
    /// Each leaf's range in `docs`.
    pub leaf_range: Vec<(usize, usize)>,
}

impl BinTree {
    /// The leaf document `i` of the binned data falls into.
    #[inline]
    pub fn leaf_of(&self, data: &Binned, i: usize) -> usize {
        if self.feature.is_empty() {
            return 0;
        }
        let mut node = 0usize;
        loop {
            let c = if self.route[node].goes_left(data.bins[self.feature[node]].get(i)) {
                self.left[node]
            } else {
                self.right[node]
            };
            if c < 0 {
                return !c as usize;
            }
            node = c as usize;
        }
    }

    /// The model's tree: raw thresholds (the bins' upper bounds), original feature columns, NaN where the missing bin
    /// went.
    pub fn to_forest_tree(&self, data: &Binned, weight: f64) -> ForestTree {
        ForestTree {
            split_feature: self
                .feature
                .iter()
                .map(|&k| data.features[k] as u32)
                .collect(),
            threshold: self
                .feature
                .iter()
                .zip(&self.bin)
                .map(|(&k, &b)| data.bounds[k][b as usize])
                .collect(),
            default_left: self.default_left.clone(),
            left: self.left.clone(),
            right: self.right.clone(),
            leaf_value: self.leaf_value.clone(),
            weight,
            split_gain: self.gain.clone(),
        }
    }
}

/// Sums over this rank's `docs`, added over the ranks of `comm`.
fn totals(docs: &[u32], gh: &[[i64; 2]], comm: &dyn Allreduce) -> Result<Sums> {
    // Integer sums: the same in any grouping, so large leaves are summed in parallel pieces.
    let c = docs
        .par_chunks(1 << 16)
        .map(|d| {
            let mut c = Sums::default();
            for &i in d {
                c.add(&gh[i as usize]);
            }
            c
        })
        .reduce(Sums::default, Sums::plus);
    // One histogram of one bin: the ranks add it as they add histograms.
    let mut one = [c];
    reduce_histograms(&mut one, comm)?;
    Ok(one[0])
}

/// The best split of a leaf over all features from its flat histograms `hist` (feature position `p` at
/// `hist[at[p]..at[p + 1]]`): per-feature bests in parallel, then [`pick`].
fn find_split(
    data: &Binned,
    feats: &[usize],
    at: &[usize],
    hist: &[Sums],
    total: Sums,
    scale: &Scale,
    s: &GrowSettings,
) -> Option<Split> {
    let per: Vec<Option<FeatureSplit>> = map_features(feats.len(), hist.len(), |p| {
        best_split(
            &hist[at[p]..at[p + 1]],
            data.has_missing[feats[p]],
            total,
            scale,
            s,
        )
    });
    pick(per)
}

/// The largest gain of the per-feature bests, in feature order (ties: the earlier feature).
fn pick(per: impl IntoIterator<Item = Option<FeatureSplit>>) -> Option<Split> {
    let mut best: Option<Split> = None;
    for (pos, p) in per.into_iter().enumerate() {
        if let Some(f) = p {
            if best.is_none_or(|b| f.gain > b.gain) {
                best = Some(Split {
                    pos,
                    bin: f.bin,
                    missing_left: f.missing_left,
                    gain: f.gain,
                    left: f.left,
                });
            }
        }
    }
    best
}

/// The children of a split leaf: the smaller child's documents `small_docs` and sums, whether each child may split,
/// and the parent's histograms (which become the larger child's).
struct Children<'a> {
    small_docs: &'a [u32],
    small_total: Sums,
    small_ok: bool,
    large_total: Sums,
    large_ok: bool,
}

/// The histograms and best splits of both children of a split: the smaller child's histograms are built into
/// `small`, the larger child's are `parent` less them, subtracted in place; then each child that may split is
/// searched. On one rank, with a leaf small enough for the per-feature kernels ([`by_feature`]), the three happen
/// feature by feature in one parallel pass (a feature's histograms are searched while they are in cache, and the
/// split costs one hand-over to the thread pool instead of three). The histograms and bests are those of the three
/// passes one after another, bit for bit: integer sums, the same scans.
#[allow(clippy::too_many_arguments)]
fn split_children(
    data: &Binned,
    rows: Option<&Rows>,
    feats: &[usize],
    at: &[usize],
    c: &Children<'_>,
    gh: &[[i64; 2]],
    scale: &Scale,
    s: &GrowSettings,
    comm: &dyn Allreduce,
    small: &mut [Sums],
    parent: &mut [Sums],
) -> Result<(Option<Split>, Option<Split>)> {
    let docs = c.small_docs;
    let fused = by_feature(rows, feats, docs, contiguous(docs), comm);
    let (leaf_gh, contiguous) = if fused {
        gather(docs, gh)
    } else {
        histograms(data, rows, feats, at, docs, gh, comm, small)?;
        (Vec::new(), false)
    };
    let search = |hist: &[Sums], k: usize, total: Sums, ok: bool| {
        if ok {
            best_split(hist, data.has_missing[k], total, scale, s)
        } else {
            None
        }
    };
    let work = if fused { docs.len() * feats.len() } else { 0 } + parent.len();
    let items: Vec<(&mut [Sums], &mut [Sums])> = per_feature(small, at)
        .into_iter()
        .zip(per_feature(parent, at))
        .collect();
    let per = map_items(items, work, |p, (sm, pa)| {
        let k = feats[p];
        if fused && c.small_ok {
            feature_histogram(data, k, docs, contiguous, &leaf_gh, sm);
        }
        // A smaller child that will not split keeps no histogram; one of few documents is taken from its parent's
        // document by document rather than bin by bin: the same integers.
        if fused && (!c.small_ok || 4 * docs.len() < pa.len()) {
            subtract_documents(data, k, docs, &leaf_gh, pa);
        } else {
            for (x, y) in pa.iter_mut().zip(sm.iter()) {
                *x = x.minus(*y);
            }
        }
        (
            search(sm, k, c.small_total, c.small_ok),
            search(pa, k, c.large_total, c.large_ok),
        )
    });
    Ok((pick(per.iter().map(|x| x.0)), pick(per.iter().map(|x| x.1))))
}

/// Grow one tree on this rank's `docs` (ascending document numbers) over the kept features `feats`, leaf-wise:
/// always split the leaf with the largest gain (ties: the lowest leaf number) until `leaves` leaves or no leaf can
/// split. `gh` holds every document's fixed-point gradient and hessian under `scale`. Every decision is taken from
/// sums over all the ranks of `comm` (the histograms of each leaf's smaller child are added over them), so every
/// rank grows the same tree: the one a single process grows on all the documents. Histogram buffers come from
/// `pool` and go back to it.
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow(
    data: &Binned,
    rows: Option<&Rows>,
    feats: &[usize],
    mut docs: Vec<u32>,
    gh: &[[i64; 2]],
    scale: &Scale,
    s: &GrowSettings,
    comm: &dyn Allreduce,
    pool: &mut HistPool,
) -> Result<BinTree> {
    let can_split = |depth: usize, n: i64| {
        (s.max_depth == 0 || depth < s.max_depth) && n >= 2 * s.min_docs_in_leaf.max(1) as i64
    };
    let root_total = totals(&docs, gh, comm)?;
    let at = offsets(data, feats);
    let cells = at[feats.len()];
    let mut root = Leaf {
        start: 0,
        end: docs.len(),
        depth: 0,
        total: root_total,
        hist: None,
        best: None,
        parent: None,
    };
    if can_split(0, root_total.n) && !feats.is_empty() {
        let mut hist = pool.take(cells);
        histograms(data, rows, feats, &at, &docs, gh, comm, &mut hist)?;
        root.best = find_split(data, feats, &at, &hist, root_total, scale, s);
        if root.best.is_some() {
            root.hist = Some(hist);
        } else {
            pool.give(hist);
        }
    }
    let mut leaves = vec![root];
    let mut tree = BinTree::default();
    let mut scratch: Vec<u32> = Vec::with_capacity(docs.len());
    while leaves.len() < s.leaves {
        let mut pick: Option<(usize, f64)> = None;
        for (l, leaf) in leaves.iter().enumerate() {
            if let Some(b) = leaf.best {
                if pick.is_none_or(|(_, g)| b.gain > g) {
                    pick = Some((l, b.gain));
                }
            }
        }
        let Some((l, _)) = pick else { break };
        let split = leaves[l].best.take().expect("picked leaf has a split");
        let mut parent_hist = leaves[l]
            .hist
            .take()
            .expect("a splittable leaf keeps its histogram");
        let k = feats[split.pos];
        let node = tree.feature.len();
        let new_leaf = leaves.len();
        tree.feature.push(k);
        tree.bin.push(split.bin as u16);
        tree.default_left.push(split.missing_left);
        tree.gain.push(split.gain);
        tree.left.push(!(l as i32));
        tree.right.push(!(new_leaf as i32));
        if let Some((p, is_left)) = leaves[l].parent {
            if is_left {
                tree.left[p] = node as i32;
            } else {
                tree.right[p] = node as i32;
            }
        }
        // Stable partition of the leaf's documents: ascending order is kept on both sides.
        let (start, end) = (leaves[l].start, leaves[l].end);
        let route = Route::new(data, k, split.bin, split.missing_left);
        tree.route.push(route);
        let range = &mut docs[start..end];
        let mid = start
            + match &data.bins[k] {
                BinColumn::Narrow(c) => partition(c, route, range, &mut scratch),
                BinColumn::Wide(c) => partition(c, route, range, &mut scratch),
            };
        let depth = leaves[l].depth + 1;
        // The children's sums over every rank: the split's left side, and the rest.
        let (lt, rt) = (split.left, leaves[l].total.minus(split.left));
        // The split that makes the last leaf leaves nothing to search: neither child will split.
        let last = leaves.len() + 1 == s.leaves;
        let (lsplit, rsplit) = (
            !last && can_split(depth, lt.n),
            !last && can_split(depth, rt.n),
        );
        // Each child's histograms and best split, kept only by a child that can split.
        let (mut lbest, mut rbest) = ((None, None), (None, None));
        if lsplit || rsplit {
            // Build the smaller child's histograms (smaller over all ranks, so every rank builds the same side);
            // the larger one's are the parent's minus them.
            let left_smaller = lt.n <= rt.n;
            let c = if left_smaller {
                Children {
                    small_docs: &docs[start..mid],
                    small_total: lt,
                    small_ok: lsplit,
                    large_total: rt,
                    large_ok: rsplit,
                }
            } else {
                Children {
                    small_docs: &docs[mid..end],
                    small_total: rt,
                    small_ok: rsplit,
                    large_total: lt,
                    large_ok: lsplit,
                }
            };
            let mut small = pool.take(cells);
            let (small_best, large_best) = split_children(
                data,
                rows,
                feats,
                &at,
                &c,
                gh,
                scale,
                s,
                comm,
                &mut small,
                &mut parent_hist,
            )?;
            let (sb, lb) = ((small_best, Some(small)), (large_best, Some(parent_hist)));
            (lbest, rbest) = if left_smaller { (sb, lb) } else { (lb, sb) };
        } else {
            pool.give(parent_hist);
        }
        let mut child = |start: usize,
                         end: usize,
                         total: Sums,
                         (best, hist): (Option<Split>, Option<Vec<Sums>>),
                         is_left: bool| {
            let hist = match (best, hist) {
                (Some(_), hist) => hist,
                (None, Some(h)) => {
                    pool.give(h);
                    None
                }
                (None, None) => None,
            };
            Leaf {
                start,
                end,
                depth,
                total,
                hist,
                best,
                parent: Some((node, is_left)),
            }
        };
        let left_leaf = child(start, mid, lt, lbest, true);
        let right_leaf = child(mid, end, rt, rbest, false);
        leaves[l] = left_leaf;
        leaves.push(right_leaf);
    }
    for leaf in &mut leaves {
        if let Some(h) = leaf.hist.take() {
            pool.give(h);
        }
    }
    tree.leaf_value = leaves
        .iter()
        .map(|leaf| leaf_value(scale.cell(leaf.total), s.l2, s.shrinkage))
        .collect();
    tree.leaf_range = leaves.iter().map(|leaf| (leaf.start, leaf.end)).collect();
    tree.docs = docs;
    Ok(tree)
}
