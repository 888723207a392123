//! Histograms of gradient and hessian sums per (feature, bin), the best split of a leaf, and leaf-wise best-first
//! growth of one regression tree with histogram subtraction.
//!
//! Determinism: each feature's histogram is summed over the leaf's documents in ascending document order (the
//! leaf's document list stays sorted: partitions are stable), spread over four partial histograms by position in
//! that order and added in a fixed order; work is parallel over features only, and the best split is chosen by a
//! sequential scan in feature order; so a tree is bit-identical at any thread count.

use ltr_core::ForestTree;
use rayon::prelude::*;

use crate::bins::{BinColumn, Binned};

/// Sums of one histogram bin (or of a leaf): gradients, hessians, documents (a count held as f64 so that bins add
/// and subtract alike; exact below 2^53).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cell {
    /// Σ gradient.
    pub g: f64,
    /// Σ hessian.
    pub h: f64,
    /// Number of documents.
    pub n: f64,
}

impl Cell {
    fn add(&mut self, g: f64, h: f64) {
        self.g += g;
        self.h += h;
        self.n += 1.0;
    }
    fn minus(self, o: Cell) -> Cell {
        Cell {
            g: self.g - o.g,
            h: self.h - o.h,
            n: self.n - o.n,
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
    /// L2 penalty on leaf values.
    pub l2: f64,
    /// Leaf values are multiplied by this (the learning rate).
    pub shrinkage: f64,
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

/// Histogram of one feature (`bins`, one per document, `u8` or `u16`) over `docs`, summed in the order of `docs`.
pub fn histogram<B: Copy + Into<usize>>(
    bins: &[B],
    n_bins: usize,
    docs: &[u32],
    g: &[f64],
    h: &[f64],
) -> Vec<Cell> {
    let mut hist = vec![Cell::default(); n_bins];
    for &i in docs {
        let i = i as usize;
        hist[bins[i].into()].add(g[i], h[i]);
    }
    hist
}

/// `parent − child`, bin by bin (the sibling's histogram).
pub fn subtract(parent: &[Cell], child: &[Cell]) -> Vec<Cell> {
    parent.iter().zip(child).map(|(p, c)| p.minus(*c)).collect()
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
    pub left: Cell,
}

/// The best split of one feature's histogram over a leaf with sums `total`: the largest positive gain that leaves
/// both sides enough documents and hessian. When `has_missing`, the histogram's last bin holds the missing values
/// and every threshold is tried with that bin on the left, then on the right. Ties: the smaller `bin`, then the
/// missing bin on the left (so a leaf without missing documents keeps `missing_left = true`, the old default).
pub fn best_split(
    hist: &[Cell],
    has_missing: bool,
    total: Cell,
    s: &GrowSettings,
) -> Option<FeatureSplit> {
    let min_n = s.min_docs_in_leaf as f64;
    let value_bins = hist.len().saturating_sub(has_missing as usize);
    let missing = if has_missing {
        hist[value_bins]
    } else {
        Cell::default()
    };
    let mut left = Cell::default();
    let mut best: Option<FeatureSplit> = None;
    let mut consider = |bin: usize, missing_left: bool, left: Cell| {
        let right = total.minus(left);
        if left.n < min_n || right.n < min_n {
            return;
        }
        if left.h < s.min_hessian_in_leaf || right.h < s.min_hessian_in_leaf {
            return;
        }
        let gain = split_gain(left, right, total, s.l2);
        if gain > 0.0 && best.is_none_or(|b| gain > b.gain) {
            best = Some(FeatureSplit {
                bin,
                missing_left,
                gain,
                left,
            });
        }
    };
    for b in 0..value_bins.saturating_sub(1) {
        left.g += hist[b].g;
        left.h += hist[b].h;
        left.n += hist[b].n;
        if has_missing {
            let with_missing = Cell {
                g: left.g + missing.g,
                h: left.h + missing.h,
                n: left.n + missing.n,
            };
            consider(b, true, with_missing);
        }
        consider(b, !has_missing, left);
    }
    best
}

/// A leaf's chosen split: position in the tree's feature list, bin, where missing values go, gain.
#[derive(Debug, Clone, Copy)]
struct Split {
    pos: usize,
    bin: usize,
    missing_left: bool,
    gain: f64,
}

/// A leaf while the tree grows.
struct Leaf {
    start: usize,
    end: usize,
    depth: usize,
    total: Cell,
    hist: Option<Vec<Vec<Cell>>>,
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

/// Independent partial histograms per feature: document `j` of a leaf (in the leaf's order) goes to copy `j % LANES`,
/// so consecutive documents in the same bin do not wait on each other's read-modify-write, and the copies are added
/// in a fixed order. The result depends only on the leaf's documents, never on the thread count.
const LANES: usize = 4;

/// Histograms of `feats` over `docs`, in parallel over features. The documents' gradients and hessians are
/// gathered once into contiguous arrays; each feature then adds them into [`LANES`] partial histograms and sums
/// those as `(c0 + c1) + (c2 + c3)`.
fn histograms(
    data: &Binned,
    feats: &[usize],
    docs: &[u32],
    g: &[f64],
    h: &[f64],
) -> Vec<Vec<Cell>> {
    let gh: Vec<[f64; 2]> = docs
        .iter()
        .map(|&i| [g[i as usize], h[i as usize]])
        .collect();
    let span = match (docs.first(), docs.last()) {
        (Some(&f), Some(&l)) => (l - f) as usize + 1,
        _ => 0,
    };
    let contiguous = span == docs.len() && span > 0;
    feats
        .par_iter()
        .map(|&k| match &data.bins[k] {
            BinColumn::Narrow(c) => narrow_histogram(c, data.n_bins(k), docs, contiguous, &gh),
            BinColumn::Wide(c) => lane_histogram(c, data.n_bins(k), docs, contiguous, &gh),
        })
        .collect()
}

/// One feature's histogram over `docs` (whose gradient and hessian pairs are `gh`, in the same order), in
/// [`LANES`] partial histograms summed by [`fold_lanes`].
fn lane_histogram<B: Copy + Into<usize>>(
    column: &[B],
    nb: usize,
    docs: &[u32],
    contiguous: bool,
    gh: &[[f64; 2]],
) -> Vec<Cell> {
    let mut lanes = vec![Cell::default(); LANES * nb];
    let mut add = |j: usize, b: usize, v: &[f64; 2]| {
        let c = &mut lanes[(j % LANES) * nb + b];
        c.g += v[0];
        c.h += v[1];
        c.n += 1.0;
    };
    if contiguous {
        // A leaf of consecutive documents (the root, and any leaf that kept a run) reads its bins directly.
        let bins = &column[docs[0] as usize..docs[0] as usize + docs.len()];
        for (j, (&b, v)) in bins.iter().zip(gh).enumerate() {
            add(j, b.into(), v);
        }
    } else {
        for (j, (&i, v)) in docs.iter().zip(gh).enumerate() {
            add(j, column[i as usize].into(), v);
        }
    }
    fold_lanes(&lanes, nb)
}

/// [`lane_histogram`] for a one-byte column, the common case: four lanes of 256 cells, so a bin (a `u8`) indexes a
/// lane without a bounds check, and documents come four at a time, one to each lane, so no lane index is computed.
/// Document `j` of `docs` still goes to lane `j % 4` in order: the sums are bit-identical to [`lane_histogram`]'s.
fn narrow_histogram(
    column: &[u8],
    nb: usize,
    docs: &[u32],
    contiguous: bool,
    gh: &[[f64; 2]],
) -> Vec<Cell> {
    const _: () = assert!(LANES == 4);
    let mut lanes = vec![[Cell::default(); 256]; LANES];
    let [l0, l1, l2, l3] = &mut lanes[..] else {
        unreachable!("four lanes")
    };
    #[inline(always)]
    fn add(c: &mut Cell, v: &[f64; 2]) {
        c.g += v[0];
        c.h += v[1];
        c.n += 1.0;
    }
    let gh4 = gh.chunks_exact(4);
    let gh_rest = gh4.remainder();
    if contiguous {
        let bins = &column[docs[0] as usize..docs[0] as usize + docs.len()];
        let b4 = bins.chunks_exact(4);
        let b_rest = b4.remainder();
        for (b, v) in b4.zip(gh4) {
            add(&mut l0[b[0] as usize], &v[0]);
            add(&mut l1[b[1] as usize], &v[1]);
            add(&mut l2[b[2] as usize], &v[2]);
            add(&mut l3[b[3] as usize], &v[3]);
        }
        let tail = [&mut *l0, &mut *l1, &mut *l2];
        for ((lane, &b), v) in tail.into_iter().zip(b_rest).zip(gh_rest) {
            add(&mut lane[b as usize], v);
        }
    } else {
        let d4 = docs.chunks_exact(4);
        let d_rest = d4.remainder();
        for (d, v) in d4.zip(gh4) {
            add(&mut l0[column[d[0] as usize] as usize], &v[0]);
            add(&mut l1[column[d[1] as usize] as usize], &v[1]);
            add(&mut l2[column[d[2] as usize] as usize], &v[2]);
            add(&mut l3[column[d[3] as usize] as usize], &v[3]);
        }
        let tail = [&mut *l0, &mut *l1, &mut *l2];
        for ((lane, &i), v) in tail.into_iter().zip(d_rest).zip(gh_rest) {
            add(&mut lane[column[i as usize] as usize], v);
        }
    }
    let sum = |x: Cell, y: Cell| Cell {
        g: x.g + y.g,
        h: x.h + y.h,
        n: x.n + y.n,
    };
    (0..nb)
        .map(|b| sum(sum(l0[b], l1[b]), sum(l2[b], l3[b])))
        .collect()
}

/// The histogram of `nb` bins from its [`LANES`] partial copies (copy `l` at `lanes[l * nb..]`), summed as
/// `(c0 + c1) + (c2 + c3)`.
fn fold_lanes(lanes: &[Cell], nb: usize) -> Vec<Cell> {
    let sum = |x: Cell, y: Cell| Cell {
        g: x.g + y.g,
        h: x.h + y.h,
        n: x.n + y.n,
    };
    (0..nb)
        .map(|b| {
            let c = |l: usize| lanes[l * nb + b];
            sum(sum(c(0), c(1)), sum(c(2), c(3)))
        })
        .collect()
}

/// Sums over `docs` in their order.
fn totals(docs: &[u32], g: &[f64], h: &[f64]) -> Cell {
    let mut c = Cell::default();
    for &i in docs {
        c.add(g[i as usize], h[i as usize]);
    }
    c
}

/// The best split of a leaf over all features: per-feature bests in parallel, then the largest gain in feature
/// order (ties: the earlier feature).
fn find_split(
    data: &Binned,
    feats: &[usize],
    hist: &[Vec<Cell>],
    total: Cell,
    s: &GrowSettings,
) -> Option<Split> {
    let per: Vec<Option<FeatureSplit>> = hist
        .par_iter()
        .zip(feats)
        .map(|(hk, &k)| best_split(hk, data.has_missing[k], total, s))
        .collect();
    let mut best: Option<Split> = None;
    for (pos, p) in per.into_iter().enumerate() {
        if let Some(f) = p {
            if best.is_none_or(|b| f.gain > b.gain) {
                best = Some(Split {
                    pos,
                    bin: f.bin,
                    missing_left: f.missing_left,
                    gain: f.gain,
                });
            }
        }
    }
    best
}

/// Grow one tree on `docs` (ascending document numbers) over the kept features `feats`, leaf-wise: always split
/// the leaf with the largest gain (ties: the lowest leaf number) until `leaves` leaves or no leaf can split.
pub(crate) fn grow(
    data: &Binned,
    feats: &[usize],
    mut docs: Vec<u32>,
    g: &[f64],
    h: &[f64],
    s: &GrowSettings,
) -> BinTree {
    let can_split = |depth: usize, n: usize| {
        (s.max_depth == 0 || depth < s.max_depth) && n >= 2 * s.min_docs_in_leaf.max(1)
    };
    let root_total = totals(&docs, g, h);
    let mut root = Leaf {
        start: 0,
        end: docs.len(),
        depth: 0,
        total: root_total,
        hist: None,
        best: None,
        parent: None,
    };
    if can_split(0, docs.len()) && !feats.is_empty() {
        let hist = histograms(data, feats, &docs, g, h);
        root.best = find_split(data, feats, &hist, root_total, s);
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
        let w = start
            + match &data.bins[k] {
                BinColumn::Narrow(c) => partition(c, route, range, &mut scratch),
                BinColumn::Wide(c) => partition(c, route, range, &mut scratch),
            };
        let mid = w;
        let depth = leaves[l].depth + 1;
        let (ldocs, rdocs) = (&docs[start..mid], &docs[mid..end]);
        let (lt, rt) = (totals(ldocs, g, h), totals(rdocs, g, h));
        let (lsplit, rsplit) = (can_split(depth, ldocs.len()), can_split(depth, rdocs.len()));
        let (mut lhist, mut rhist) = (None, None);
        if lsplit || rsplit {
            // Build the smaller child's histograms; the larger one's are the parent's minus them.
            let left_smaller = ldocs.len() <= rdocs.len();
            let small_docs = if left_smaller { ldocs } else { rdocs };
            let small = histograms(data, feats, small_docs, g, h);
            let large: Vec<Vec<Cell>> = parent_hist
                .par_iter()
                .zip(&small)
                .map(|(p, c)| subtract(p, c))
                .collect();
            if left_smaller {
                (lhist, rhist) = (Some(small), Some(large));
            } else {
                (lhist, rhist) = (Some(large), Some(small));
            }
        }
        let child = |start: usize,
                     end: usize,
                     total: Cell,
                     hist: Option<Vec<Vec<Cell>>>,
                     ok: bool,
                     is_left: bool| {
            let (hist, best) = match hist {
                Some(hh) if ok => {
                    let b = find_split(data, feats, &hh, total, s);
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
        .map(|leaf| leaf_value(leaf.total, s.l2, s.shrinkage))
        .collect();
    tree.leaf_range = leaves.iter().map(|leaf| (leaf.start, leaf.end)).collect();
    tree.docs = docs;
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-byte fast path sums every bin bit for bit as the generic lane path does, on contiguous and scattered
    /// leaves whose sizes are and are not multiples of four (the remainder goes to the first lanes).
    #[test]
    fn narrow_histograms_equal_lane_histograms_bit_for_bit() {
        let n = 1000;
        let column: Vec<u8> = (0..n).map(|i| ((i * 7919 + i / 3) % 200) as u8).collect();
        let g: Vec<f64> = (0..n)
            .map(|i| ((i * 104_729) % 1000) as f64 / 999.0 - 0.5)
            .collect();
        let h: Vec<f64> = (0..n).map(|i| ((i * 31) % 997) as f64 / 996.0).collect();
        for (first, len, every) in [
            (0, 1000, 1),
            (3, 10, 1),
            (5, 7, 1),
            (0, 1000, 3),
            (1, 900, 7),
            (2, 50, 11),
        ] {
            let docs: Vec<u32> = (first..first + len)
                .filter(|i| (i - first) % every == 0)
                .map(|i| i as u32)
                .collect();
            let gh: Vec<[f64; 2]> = docs
                .iter()
                .map(|&i| [g[i as usize], h[i as usize]])
                .collect();
            let contiguous = every == 1;
            let bits = |hs: Vec<Cell>| -> Vec<[u64; 3]> {
                hs.iter()
                    .map(|c| [c.g.to_bits(), c.h.to_bits(), c.n.to_bits()])
                    .collect()
            };
            let fast = narrow_histogram(&column, 200, &docs, contiguous, &gh);
            let lanes = lane_histogram(&column, 200, &docs, contiguous, &gh);
            assert_eq!(bits(fast.clone()), bits(lanes), "{first} {len} {every}");
            // And both are the histogram: counts exact, sums to rounding.
            for (a, b) in fast.iter().zip(histogram(&column, 200, &docs, &g, &h)) {
                assert_eq!(a.n, b.n);
                assert!((a.g - b.g).abs() < 1e-12 && (a.h - b.h).abs() < 1e-12);
            }
        }
    }
}
