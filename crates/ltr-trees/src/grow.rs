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
use crate::hist::{histograms, map_features, reduce_histograms, subtract, Rows, Sums};

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
    g_unit: f64,
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

/// `G² / (H + λ)`, 0 where the denominator is not positive.
#[inline]
fn leaf_score(c: Cell, l2: f64) -> f64 {
    let d = c.h + l2;
    if d > 0.0 {
        c.g * c.g / d
    } else {
        0.0
    }
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
    let missing = if has_missing {
        hist[value_bins]
    } else {
        Sums::default()
    };
    let total_cell = scale.cell(total);
    let total_score = leaf_score(total_cell, s.l2);
    // Under `LeafCount::Hessian`, each value bin's estimated documents (LightGBM adds 2·1e-15 to H), computed
    // once into this thread's scratch without a branch (an empty bin's is 0: `floor(0 · factor + 0.5)`, or of NaN).
    let hessian = s.leaf_count == LeafCount::Hessian;
    let factor = total.n as f64 / (total_cell.h + 2e-15);
    ESTIMATES.with_borrow_mut(|estimated| {
        estimated.clear();
        if hessian {
            estimated.extend(
                hist[..value_bins]
                    .iter()
                    .map(|b| floor_to_i64(scale.cell(*b).h * factor + 0.5)),
            );
        }
        let estimated_total: i64 = estimated.iter().sum();
        let nonnegative = estimated.iter().all(|&e| e >= 0);
        scan(
            hist,
            value_bins,
            missing,
            has_missing,
            total,
            total_score,
            estimated,
            estimated_total,
            nonnegative,
            scale,
            s,
        )
    })
}

thread_local! {
    /// [`best_split`]'s per-bin document estimates, kept from one call to the next on each thread.
    static ESTIMATES: std::cell::RefCell<Vec<i64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`best_split`]'s scan of the thresholds in ascending order. `estimated` holds each value bin's estimated
/// documents under [`LeafCount::Hessian`] (empty otherwise), `estimated_total` their sum and `nonnegative` whether
/// none is negative.
#[allow(clippy::too_many_arguments)]
#[inline]
fn scan(
    hist: &[Sums],
    value_bins: usize,
    missing: Sums,
    has_missing: bool,
    total: Sums,
    total_score: f64,
    estimated: &[i64],
    estimated_total: i64,
    nonnegative: bool,
    scale: &Scale,
    s: &GrowSettings,
) -> Option<FeatureSplit> {
    let min_n = s.min_docs_in_leaf as i64;
    let hessian = s.leaf_count == LeafCount::Hessian;
    // Whether the sides pass `min_docs_in_leaf`: the real counts, or the estimate counted on the side LightGBM's
    // scan accumulates (above the threshold with the missing bin on the left, below it with the bin on the
    // right) and the leaf's documents less that estimate on the other.
    let enough = |missing_left: bool, left: Sums, estimated_left: i64| -> bool {
        let right = total.minus(left);
        if left.n < 1 || right.n < 1 {
            return false;
        }
        let (l, r) = if !hessian {
            (left.n, right.n)
        } else if missing_left {
            let r = estimated_total - estimated_left;
            (total.n - r, r)
        } else {
            (estimated_left, total.n - estimated_left)
        };
        l >= min_n && r >= min_n
    };
    let consider = |best: &mut Option<FeatureSplit>,
                    bin: usize,
                    missing_left: bool,
                    left: Sums,
                    estimated_left: i64| {
        if !enough(missing_left, left, estimated_left) {
            return;
        }
        let right = total.minus(left);
        let (l, r) = (scale.cell(left), scale.cell(right));
        if l.h < s.min_hessian_in_leaf || r.h < s.min_hessian_in_leaf {
            return;
        }
        let gain = leaf_score(l, s.l2) + leaf_score(r, s.l2) - total_score;
        // Ascending bins: a later equal gain wins on the left (the larger bin), not on the right.
        let better = best.is_none_or(|b| gain > b.gain || missing_left && gain == b.gain);
        if gain > 0.0 && better {
            *best = Some(FeatureSplit {
                bin,
                missing_left,
                gain,
                left,
            });
        }
    };
    // The scan stops once the real documents right of the threshold, which only shrink, are too few for any later
    // candidate to pass: below one, or below `min_n` where they are what counts.
    let stop_below = if hessian { 1 } else { min_n.max(1) };
    let mut left = Sums::default();
    // The estimated documents of value bins `0..=b`, accumulated as the scan goes.
    let mut estimated_left = 0i64;
    // The best with the missing bin on the left (or no missing bin), and with it on the right.
    let mut best_left: Option<FeatureSplit> = None;
    let mut best_right: Option<FeatureSplit> = None;
    for b in 0..value_bins.saturating_sub(1) {
        left = left.plus(hist[b]);
        if total.n - left.n < stop_below {
            break;
        }
        if hessian {
            estimated_left += estimated[b];
            // With no negative estimate the estimated right sides only shrink too.
            if nonnegative
                && estimated_total - estimated_left < min_n
                && (!has_missing || total.n - estimated_left < min_n)
            {
                break;
            }
        }
        if has_missing {
            consider(&mut best_left, b, true, left.plus(missing), estimated_left);
            consider(&mut best_right, b, false, left, estimated_left);
        } else {
            consider(&mut best_left, b, true, left, estimated_left);
        }
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
    hist: Option<Vec<Vec<Sums>>>,
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

/// The test "goes left" of a split of kept feature `k`: value bins `0..=split_bin`, and the missing bin when it
/// exists and `missing_left` (the missing bin is above every value bin, so `bin <= split_bin` never holds it).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Route {
    split_bin: usize,
    missing_bin: Option<usize>,
}

impl Route {
    fn new(data: &Binned, k: usize, split_bin: usize, missing_left: bool) -> Self {
        let missing_bin = (data.has_missing[k] && missing_left).then(|| data.bounds[k].len() + 1);
        Self {
            split_bin,
            missing_bin,
        }
    }
    #[inline]
    fn goes_left(self, bin: usize) -> bool {
        bin <= self.split_bin || Some(bin) == self.missing_bin
    }
}

/// Stable partition of `docs` by `route` on `column`: the left documents stay in front in their order, the right
/// ones (collected in `scratch`) follow in theirs. Returns the number of left documents.
fn partition<B: Copy + Into<usize>>(
    column: &[B],
    route: Route,
    docs: &mut [u32],
    scratch: &mut Vec<u32>,
) -> usize {
    scratch.clear();
    let mut w = 0;
    for r in 0..docs.len() {
        let i = docs[r];
        if route.goes_left(column[i as usize].into()) {
            docs[w] = i;
            w += 1;
        } else {
            scratch.push(i);
        }
    }
    docs[w..].copy_from_slice(scratch);
    w
}

/// Sums over this rank's `docs`, added over the ranks of `comm`.
fn totals(docs: &[u32], gh: &[[i64; 2]], comm: &dyn Allreduce) -> Result<Sums> {
    let mut c = Sums::default();
    for &i in docs {
        c.add(&gh[i as usize]);
    }
    // One histogram of one bin: the ranks add it as they add histograms.
    let mut one = [vec![c]];
    reduce_histograms(&mut one, comm)?;
    Ok(one[0][0])
}

/// The best split of a leaf over all features: per-feature bests in parallel, then the largest gain in feature
/// order (ties: the earlier feature).
fn find_split(
    data: &Binned,
    feats: &[usize],
    hist: &[Vec<Sums>],
    total: Sums,
    scale: &Scale,
    s: &GrowSettings,
) -> Option<Split> {
    let bins: usize = hist.iter().map(Vec::len).sum();
    let per: Vec<Option<FeatureSplit>> = map_features(feats.len(), bins, |p| {
        best_split(&hist[p], data.has_missing[feats[p]], total, scale, s)
    });
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

/// Grow one tree on this rank's `docs` (ascending document numbers) over the kept features `feats`, leaf-wise:
/// always split the leaf with the largest gain (ties: the lowest leaf number) until `leaves` leaves or no leaf can
/// split. `gh` holds every document's fixed-point gradient and hessian under `scale`. Every decision is taken from
/// sums over all the ranks of `comm` (the histograms of each leaf's smaller child are added over them), so every
/// rank grows the same tree: the one a single process grows on all the documents.
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
) -> Result<BinTree> {
    let can_split = |depth: usize, n: i64| {
        (s.max_depth == 0 || depth < s.max_depth) && n >= 2 * s.min_docs_in_leaf.max(1) as i64
    };
    let root_total = totals(&docs, gh, comm)?;
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
        let hist = histograms(data, rows, feats, &docs, gh, comm)?;
        root.best = find_split(data, feats, &hist, root_total, scale, s);
        root.hist = Some(hist);
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
        let parent_hist = leaves[l]
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
        let (lsplit, rsplit) = (can_split(depth, lt.n), can_split(depth, rt.n));
        let (mut lhist, mut rhist) = (None, None);
        if lsplit || rsplit {
            // Build the smaller child's histograms (smaller over all ranks, so every rank builds the same side);
            // the larger one's are the parent's minus them.
            let left_smaller = lt.n <= rt.n;
            let small_docs = if left_smaller {
                &docs[start..mid]
            } else {
                &docs[mid..end]
            };
            let small = histograms(data, rows, feats, small_docs, gh, comm)?;
            let bins: usize = small.iter().map(Vec::len).sum();
            let large: Vec<Vec<Sums>> =
                map_features(feats.len(), bins, |p| subtract(&parent_hist[p], &small[p]));
            if left_smaller {
                (lhist, rhist) = (Some(small), Some(large));
            } else {
                (lhist, rhist) = (Some(large), Some(small));
            }
        }
        let child = |start: usize,
                     end: usize,
                     total: Sums,
                     hist: Option<Vec<Vec<Sums>>>,
                     ok: bool,
                     is_left: bool| {
            let (hist, best) = match hist {
                Some(hh) if ok => {
                    let b = find_split(data, feats, &hh, total, scale, s);
                    (b.map(|_| hh), b)
                }
                _ => (None, None),
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
        let left_leaf = child(start, mid, lt, lhist, lsplit, true);
        let right_leaf = child(mid, end, rt, rhist, rsplit, false);
        leaves[l] = left_leaf;
        leaves.push(right_leaf);
    }
    tree.leaf_value = leaves
        .iter()
        .map(|leaf| leaf_value(scale.cell(leaf.total), s.l2, s.shrinkage))
        .collect();
    tree.leaf_range = leaves.iter().map(|leaf| (leaf.start, leaf.end)).collect();
    tree.docs = docs;
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// to half a unit.
    #[test]
    fn fixed_point_sums_cannot_overflow_and_round_trip() {
        for (max, docs) in [
            (1.0, 1usize),
            (0.75, 9630),
            (3e5, 3_776_267),
            (1e-300, 10),
            (1e300, 10),
        ] {
            let s = Scale::new(max, max, docs);
            let q = s.quantise(max, -max);
            assert!(
                (q[0] as i128).abs() * docs as i128 <= 1i128 << 62,
                "{max} {docs}"
            );
            let back = s.cell(Sums {
                g: q[0],
                h: q[1],
                n: 1,
            });
            assert!((back.g - max).abs() <= 0.5 * s.g_unit, "{max}: {}", back.g);
        }
        // Nothing but zeros: any scale.
        assert_eq!(Scale::new(0.0, 0.0, 5).quantise(0.0, 0.0), [0, 0]);
    }
}
