//! [`CompiledForest`]: a [`Forest`] laid out for scoring many documents, QuickScorer-style (Lucchese et al.,
//! SIGIR 2015), with blocks of documents scored together.
//!
//! Walking a tree costs a hard-to-predict branch per level. QuickScorer instead visits, for each feature, the
//! splits on it in ascending threshold order: a document whose value is above a split's threshold goes right there,
//! so none of the leaves of that split's left subtree can be its exit leaf, and a bitvector per tree (one bit a leaf,
//! leaves numbered left to right) loses those bits. After every feature, the exit leaf of each tree is the lowest bit
//! still set. The splits of a feature are sorted, so the visit stops at the first threshold not below the value.
//!
//! Here a block of [`LANES`] documents shares each visit: the visit stops at the first threshold not below the
//! largest value of the block, and every split before it updates the block's bitvectors of its tree without a
//! branch, which the compiler turns into vector instructions (an AVX2 clone is chosen at run time where it runs).
//! Each document then sums `base_score` and its trees' `weight · leaf` in tree order, exactly as
//! [`Forest::score_rows`] does, so the scores are the same bits.

use ltr_data::{Dataset, QueryView, Row};
use rayon::prelude::*;

use crate::forest::{Forest, ForestTree};
use crate::scorer::Scorer;

/// Documents scored together: four AVX2 registers of `f32` values or of `u32` bitvectors. Measured on OHSUMED
/// with 500 trees of 31 leaves: 8 lanes score 0.62× as fast as 32, 16 lanes 0.9×, 64 lanes the same as 32.
const LANES: usize = 32;

/// Documents one parallel task scores ([`Scorer::score_dataset`]): a fixed size, so the split of the work does not
/// depend on the number of threads (and no document's score depends on the split).
const TASK_DOCS: usize = 1024;

/// A bitvector of the leaves of one tree, bit `p` for the `p`-th leaf from the left.
trait LeafMask: Copy + std::ops::BitAnd<Output = Self> + std::fmt::Debug + Send + Sync {
    /// Every leaf still possible.
    const ALL: Self;
    /// The weighted outputs of one tree's leaves, left to right, padded with zeros to one per bit: a table of fixed
    /// size, so looking up the exit leaf needs no bounds check and a block's lookups become gathers.
    type Leaves: Clone + std::fmt::Debug + Send + Sync;
    /// A table of zeros.
    const NO_LEAVES: Self::Leaves;
    /// Set the output of leaf `p` of a table.
    fn set_leaf(table: &mut Self::Leaves, p: usize, value: f64);
    /// Every bit except `lo..hi`.
    fn without(lo: usize, hi: usize) -> Self;
    /// `keep` when `right`, every bit otherwise, without a branch (so a loop of them becomes vector instructions).
    fn keep_if(right: bool, keep: Self) -> Self;
    /// `acc[l] += leaves[exit leaf of lane l]`, the exit leaf being the lowest bit still set.
    fn add_exit_leaves(acc: &mut [f64; LANES], v: &[Self; LANES], leaves: &Self::Leaves);
}

macro_rules! leaf_mask {
    ($t:ty, $bits:expr) => {
        impl LeafMask for $t {
            const ALL: Self = <$t>::MAX;
            type Leaves = [f64; $bits];
            const NO_LEAVES: Self::Leaves = [0.0; $bits];
            fn set_leaf(table: &mut Self::Leaves, p: usize, value: f64) {
                table[p] = value;
            }
            fn without(lo: usize, hi: usize) -> Self {
                (lo..hi).fold(Self::ALL, |m, b| m & !(1 << b))
            }
            #[inline(always)]
            fn keep_if(right: bool, keep: Self) -> Self {
                // `right as Self` negated is all ones when `right`: the bits to clear survive only then.
                !((right as Self).wrapping_neg() & !keep)
            }
            #[inline(always)]
            fn add_exit_leaves(acc: &mut [f64; LANES], v: &[Self; LANES], leaves: &Self::Leaves) {
                for l in 0..LANES {
                    // Some bit is always set (the rightmost leaf lies in no left subtree), so the mask changes
                    // nothing; it shows the compiler that the index is in range.
                    acc[l] += leaves[v[l].trailing_zeros() as usize & ($bits - 1)];
                }
            }
        }
    };
}
leaf_mask!(u32, 32);
leaf_mask!(u64, 64);

/// One split as QuickScorer visits it: the tree it belongs to (within its group) and the leaves left once a
/// document goes right there.
#[derive(Debug, Clone, Copy)]
struct Split<M> {
    tree: u32,
    keep: M,
}

/// The trees whose leaves fit in `M`: their leaf tables, and their splits grouped by feature (compact feature slot)
/// and sorted by threshold within a feature.
#[derive(Debug, Clone)]
struct Bitvectors<M: LeafMask> {
    /// One table per tree of the group.
    leaves: Vec<M::Leaves>,
    /// The splits on slot `c` are `start[c]..start[c + 1]`.
    start: Vec<usize>,
    /// Thresholds, ascending within a slot.
    threshold: Vec<f32>,
    /// Parallel to `threshold`.
    split: Vec<Split<M>>,
    /// The splits on slot `c` where a NaN goes right: `nan_start[c]..nan_start[c + 1]` of `nan_split`.
    nan_start: Vec<usize>,
    nan_split: Vec<Split<M>>,
}

/// One split before sorting: slot, threshold, the split, and whether a NaN goes right.
type SplitEntry<M> = (usize, f32, Split<M>, bool);

impl<M: LeafMask> Bitvectors<M> {
    fn new(n_slots: usize) -> Self {
        Self {
            leaves: Vec::new(),
            start: vec![0; n_slots + 1],
            threshold: Vec::new(),
            split: Vec::new(),
            nan_start: vec![0; n_slots + 1],
            nan_split: Vec::new(),
        }
    }

    /// Add a tree of `n_leaves` leaves whose `p`-th from the left outputs `weighted(p)`.
    fn add_tree(&mut self, n_leaves: usize, weighted: impl Fn(usize) -> f64) {
        let mut table = M::NO_LEAVES;
        for p in 0..n_leaves {
            M::set_leaf(&mut table, p, weighted(p));
        }
        self.leaves.push(table);
    }

    /// Sort the collected splits into place.
    fn fill(&mut self, mut entries: Vec<SplitEntry<M>>) {
        // Stable and total (no NaN threshold gets here): the same layout on every run.
        entries.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        for &(c, t, s, nan_right) in &entries {
            self.start[c + 1] += 1;
            self.threshold.push(t);
            self.split.push(s);
            if nan_right {
                self.nan_start[c + 1] += 1;
                self.nan_split.push(s);
            }
        }
        for c in 1..self.start.len() {
            self.start[c] += self.start[c - 1];
            self.nan_start[c] += self.nan_start[c - 1];
        }
    }
}

/// How one tree of the forest is scored.
// pub for the tests in tests/unit/compiled_forest.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Slot {
    /// One leaf: its weighted output is `constants[index]`.
    Constant { index: usize },
    /// Tree `tree` of the 32-bit group.
    Narrow { tree: usize },
    /// Tree `tree` of the 64-bit group.
    Wide { tree: usize },
    /// More than 64 leaves, or not a well-formed tree: walked node by node as [`ForestTree::leaf_index`] does.
    Walked { tree: usize },
}

/// A [`Forest`] compiled for fast scoring ([`Forest::compile`]); its scores equal the forest's bit for bit.
///
/// Trees of at most 32 leaves keep a `u32` per document, trees of 33 to 64 leaves a `u64`; larger trees, and any
/// tree whose arrays do not describe a tree over the forest's features (which [`Forest::inconsistency`] rejects),
/// are walked node by node as before.
#[derive(Debug, Clone)]
pub struct CompiledForest {
    base_score: f64,
    n_features: usize,
    /// How each tree is scored, in the forest's order (the order of each document's additions).
    // pub for the tests in tests/unit/compiled_forest.rs; not API.
    #[doc(hidden)]
    pub slots: Vec<Slot>,
    /// `weight · leaf_value` of each tree of one leaf.
    constants: Vec<f64>,
    narrow: Bitvectors<u32>,
    wide: Bitvectors<u64>,
    walked: Vec<ForestTree>,
    /// The feature column of each compact slot, ascending: only features some bitvector tree splits on are gathered.
    slot_feature: Vec<u32>,
}

/// A tree's leaves numbered left to right, from a depth-first walk of the nodes reached from the root.
#[derive(Debug)]
struct Shape {
    /// Raw leaf index of each leaf, left to right.
    leaf_order: Vec<usize>,
    /// For each internal node reached: the left-to-right positions `lo..mid` of its left subtree's leaves
    /// (`usize::MAX` for a node no path reaches).
    left_leaves: Vec<(usize, usize)>,
}

/// The shape of `t`, or `None` when its arrays do not describe a tree: node arrays of different lengths, a child out
/// of range or not after its parent, a node reached twice, a NaN threshold, a feature not below `n_features`, or a
/// leaf without an output.
fn shape(t: &ForestTree, n_features: usize) -> Option<Shape> {
    let n = t.split_feature.len();
    if n == 0 {
        return (!t.leaf_value.is_empty()).then(|| Shape {
            leaf_order: vec![0],
            left_leaves: Vec::new(),
        });
    }
    if [
        t.threshold.len(),
        t.default_left.len(),
        t.left.len(),
        t.right.len(),
    ]
    .iter()
    .any(|&l| l != n)
    {
        return None;
    }
    let mut left_leaves = vec![(usize::MAX, usize::MAX); n];
    let mut leaf_order = Vec::with_capacity(n + 1);
    let mut seen = vec![false; n];
    seen[0] = true;
    // An in-order walk with an explicit stack of `(node, right side next)`.
    let mut stack = vec![(0usize, false)];
    while let Some((node, right_next)) = stack.pop() {
        if t.split_feature[node] as usize >= n_features || t.threshold[node].is_nan() {
            return None;
        }
        let child = if right_next {
            left_leaves[node].1 = leaf_order.len();
            t.right[node]
        } else {
            left_leaves[node].0 = leaf_order.len();
            stack.push((node, true));
            t.left[node]
        };
        if child < 0 {
            let leaf = !child as usize;
            if leaf >= t.leaf_value.len() {
                return None;
            }
            leaf_order.push(leaf);
        } else {
            let c = child as usize;
            if c <= node || c >= n || std::mem::replace(&mut seen[c], true) {
                return None;
            }
            stack.push((c, false));
        }
    }
    Some(Shape {
        leaf_order,
        left_leaves,
    })
}

/// The internal nodes reached from the root (a node no path reaches never decides a score).
fn reached_splits(s: &Shape) -> impl Iterator<Item = usize> + '_ {
    (0..s.left_leaves.len()).filter(|&k| s.left_leaves[k].0 != usize::MAX)
}

impl CompiledForest {
    /// Compile `forest` (see [`Forest::compile`]).
    pub fn new(forest: &Forest) -> Self {
        let shapes: Vec<Option<Shape>> = forest
            .trees
            .iter()
            .map(|t| shape(t, forest.n_features))
            .collect();
        let bitvector_tree = |s: &Shape| (2..=64).contains(&s.leaf_order.len());
        // Compact slots for the features the bitvector trees split on, in column order.
        let mut used: Vec<u32> = forest
            .trees
            .iter()
            .zip(&shapes)
            .filter_map(|(t, s)| s.as_ref().filter(|s| bitvector_tree(s)).map(|s| (t, s)))
            .flat_map(|(t, s)| reached_splits(s).map(|k| t.split_feature[k]))
            .collect();
        used.sort_unstable();
        used.dedup();
        let mut out = Self {
            base_score: forest.base_score,
            n_features: forest.n_features,
            slots: Vec::with_capacity(forest.trees.len()),
            constants: Vec::new(),
            narrow: Bitvectors::new(used.len()),
            wide: Bitvectors::new(used.len()),
            walked: Vec::new(),
            slot_feature: used,
        };
        let mut narrow_splits = Vec::new();
        let mut wide_splits = Vec::new();
        for (t, s) in forest.trees.iter().zip(&shapes) {
            // The same product `weight · leaf` the walk computes, taken once here.
            let weighted = |p: usize, s: &Shape| t.weight * t.leaf_value[s.leaf_order[p]];
            let slot = match s {
                Some(s) if s.leaf_order.len() == 1 => {
                    out.constants.push(weighted(0, s));
                    Slot::Constant {
                        index: out.constants.len() - 1,
                    }
                }
                Some(s) if s.leaf_order.len() <= 32 => {
                    let tree = out.narrow.leaves.len();
                    narrow_splits.extend(out.split_entries::<u32>(t, s, tree));
                    out.narrow.add_tree(s.leaf_order.len(), |p| weighted(p, s));
                    Slot::Narrow { tree }
                }
                Some(s) if bitvector_tree(s) => {
                    let tree = out.wide.leaves.len();
                    wide_splits.extend(out.split_entries::<u64>(t, s, tree));
                    out.wide.add_tree(s.leaf_order.len(), |p| weighted(p, s));
                    Slot::Wide { tree }
                }
                _ => {
                    out.walked.push(t.clone());
                    Slot::Walked {
                        tree: out.walked.len() - 1,
                    }
                }
            };
            out.slots.push(slot);
        }
        out.narrow.fill(narrow_splits);
        out.wide.fill(wide_splits);
        out
    }

    /// The splits of one tree, numbered `tree` in its group.
    fn split_entries<M: LeafMask>(
        &self,
        t: &ForestTree,
        s: &Shape,
        tree: usize,
    ) -> Vec<SplitEntry<M>> {
        reached_splits(s)
            .map(|k| {
                let (lo, mid) = s.left_leaves[k];
                let split = Split {
                    tree: tree as u32,
                    keep: M::without(lo, mid),
                };
                let slot = self
                    .slot_feature
                    .binary_search(&t.split_feature[k])
                    .expect("every reached split's feature has a slot");
                (slot, t.threshold[k], split, !t.default_left[k])
            })
            .collect()
    }

    /// Number of input features of the forest.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Score `rows` into `out` (`rows.len() == out.len()`): the same bits as [`Forest::score_rows`].
    pub fn score_rows(&self, rows: &[Row<'_>], out: &mut [f64]) {
        let mut scratch = Scratch::new(self);
        for (rows, out) in rows.chunks(LANES).zip(out.chunks_mut(LANES)) {
            score_block(self, rows, out, &mut scratch);
        }
    }
}

/// One value per lane, aligned to a cache line: a block's row of values or bitvectors then never straddles two
/// lines, which made the speed depend on where the allocator put the buffers.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
struct Block<T>([T; LANES]);

impl<T> std::ops::Deref for Block<T> {
    type Target = [T; LANES];
    fn deref(&self) -> &[T; LANES] {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Block<T> {
    fn deref_mut(&mut self) -> &mut [T; LANES] {
        &mut self.0
    }
}

/// The buffers of a block, kept across blocks: its feature values (slot-major), each slot's largest value and
/// whether one is NaN, and its bitvectors (tree-major).
#[derive(Debug)]
struct Scratch {
    values: Vec<Block<f32>>,
    tops: Vec<(f32, bool)>,
    narrow: Vec<Block<u32>>,
    wide: Vec<Block<u64>>,
}

impl Scratch {
    fn new(f: &CompiledForest) -> Self {
        Self {
            values: vec![Block([0.0; LANES]); f.slot_feature.len()],
            tops: vec![(0.0, false); f.slot_feature.len()],
            narrow: vec![Block([0; LANES]); f.narrow.leaves.len()],
            wide: vec![Block([0; LANES]); f.wide.leaves.len()],
        }
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx2+fma" if Avx2Fma, "x86_64+avx2" if Avx2);
/// Score one block of at most [`LANES`] rows. Compiled also for AVX2 and chosen at run time: only the instructions
/// differ, not the order of any addition. No AVX-512 clone: on the AMD EPYC (Zen 4) we measure on, it scored
/// 500 trees × 31 leaves 10–15% slower than the AVX2 one, its 512-bit gathers and masked stores costing more.
fn score_block<'a>(f: &CompiledForest, rows: &[Row<'a>], out: &mut [f64], scratch: &mut Scratch) {
    gather(f, rows, &mut scratch.values, &mut scratch.tops);
    eliminate_narrow(
        &f.narrow,
        &scratch.values,
        &scratch.tops,
        &mut scratch.narrow,
    );
    eliminate_wide(&f.wide, &scratch.values, &scratch.tops, &mut scratch.wide);
    let mut acc = [f.base_score; LANES];
    for slot in &f.slots {
        match *slot {
            Slot::Constant { index } => {
                for a in &mut acc {
                    *a += f.constants[index];
                }
            }
            Slot::Narrow { tree } => {
                u32::add_exit_leaves(&mut acc, &scratch.narrow[tree], &f.narrow.leaves[tree])
            }
            Slot::Wide { tree } => {
                u64::add_exit_leaves(&mut acc, &scratch.wide[tree], &f.wide.leaves[tree])
            }
            Slot::Walked { tree } => {
                let t = &f.walked[tree];
                for (a, row) in acc.iter_mut().zip(rows) {
                    *a += t.weight * t.output(row);
                }
            }
        }
    }
    out.copy_from_slice(&acc[..out.len()]);
}
}

/// The block's values of every compact slot (a feature absent from a sparse row, or beyond a dense row's end, is
/// 0; a lane without a row holds −∞, which never goes right), and per slot the largest value and whether one is NaN.
#[inline(always)]
fn gather(
    f: &CompiledForest,
    rows: &[Row<'_>],
    values: &mut [Block<f32>],
    tops: &mut [(f32, bool)],
) {
    for v in values.iter_mut() {
        v[rows.len()..].fill(f32::NEG_INFINITY);
    }
    for (l, row) in rows.iter().enumerate() {
        match *row {
            Row::Dense(x) => {
                for (v, &col) in values.iter_mut().zip(&f.slot_feature) {
                    v[l] = x.get(col as usize).copied().unwrap_or(0.0);
                }
            }
            Row::Sparse {
                indices,
                values: xs,
            } => {
                // Both column lists are sorted: one merge finds the stored values.
                let mut k = 0;
                for (v, &col) in values.iter_mut().zip(&f.slot_feature) {
                    while k < indices.len() && indices[k] < col {
                        k += 1;
                    }
                    v[l] = match indices.get(k) {
                        Some(&i) if i == col => xs[k],
                        _ => 0.0,
                    };
                }
            }
        }
    }
    // Here rather than in `eliminate`: reducing the lanes there made the compiler split the block's values into
    // scalars and give up vectorising the loop over the splits.
    for (top, x) in tops.iter_mut().zip(values.iter()) {
        // `f32::max` passes over NaN, so the top is the largest value that compares.
        *top = (
            x.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v)),
            x.iter().any(|v| v.is_nan()),
        );
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx2+fma" if Avx2Fma, "x86_64+avx2" if Avx2);
/// [`eliminate`] for the 32-bit group, compiled on its own (called, not inlined into [`score_block`]) so that the
/// compiler knows the values and the bitvectors do not overlap, and vectorises the loop over the block.
fn eliminate_narrow(
    g: &Bitvectors<u32>,
    values: &[Block<f32>],
    tops: &[(f32, bool)],
    v: &mut [Block<u32>],
) {
    eliminate(g, values, tops, v)
}
}

ltr_data::multiversioned! {
clones("x86_64+avx2+fma" if Avx2Fma, "x86_64+avx2" if Avx2);
/// [`eliminate`] for the 64-bit group (see [`eliminate_narrow`]).
fn eliminate_wide(
    g: &Bitvectors<u64>,
    values: &[Block<f32>],
    tops: &[(f32, bool)],
    v: &mut [Block<u64>],
) {
    eliminate(g, values, tops, v)
}
}

/// QuickScorer's pass over a block: each feature's splits, in ascending threshold order, up to the block's largest
/// value; then, for a block with a NaN, the splits where a NaN goes right.
#[inline(always)]
fn eliminate<M: LeafMask>(
    g: &Bitvectors<M>,
    values: &[Block<f32>],
    tops: &[(f32, bool)],
    v: &mut [Block<M>],
) {
    if g.leaves.is_empty() {
        return;
    }
    v.fill(Block([M::ALL; LANES]));
    for (c, &x) in values.iter().enumerate() {
        let (first, last) = (g.start[c], g.start[c + 1]);
        if first == last {
            continue;
        }
        let (top, any_nan) = tops[c];
        // Thresholds at or above `top` are at or above every value: no document goes right there.
        let end = first + g.threshold[first..last].partition_point(|&t| t < top);
        for (&t, s) in g.threshold[first..end].iter().zip(&g.split[first..end]) {
            let lanes = &mut v[s.tree as usize];
            for l in 0..LANES {
                // `v <= t` goes left, so `v > t` goes right; a NaN compares false here and is handled below.
                lanes[l] = lanes[l] & M::keep_if(x[l] > t, s.keep);
            }
        }
        if any_nan {
            for s in &g.nan_split[g.nan_start[c]..g.nan_start[c + 1]] {
                let lanes = &mut v[s.tree as usize];
                for l in 0..LANES {
                    lanes[l] = lanes[l] & M::keep_if(x[l].is_nan(), s.keep);
                }
            }
        }
    }
}

impl Scorer for CompiledForest {
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]) {
        let mut scratch = Scratch::new(self);
        let mut rows = Vec::with_capacity(LANES);
        for (b, chunk) in out.chunks_mut(LANES).enumerate() {
            rows.clear();
            rows.extend((0..chunk.len()).map(|i| query.row(b * LANES + i)));
            score_block(self, &rows, chunk, &mut scratch);
        }
    }

    fn n_features(&self) -> usize {
        self.n_features
    }

    /// Blocks of consecutive documents, across query boundaries (a document's score does not depend on its query).
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        let mut out = vec![0.0; ds.n_docs()];
        out.par_chunks_mut(TASK_DOCS).enumerate().for_each_init(
            || (Scratch::new(self), Vec::with_capacity(LANES)),
            |(scratch, rows), (k, task)| {
                let first = k * TASK_DOCS;
                for (b, chunk) in task.chunks_mut(LANES).enumerate() {
                    rows.clear();
                    let at = first + b * LANES;
                    rows.extend((at..at + chunk.len()).map(|i| ds.row(i)));
                    score_block(self, rows, chunk, scratch);
                }
            },
        );
        out
    }
}

impl Forest {
    /// The ensemble laid out for scoring many documents at once ([`CompiledForest`]): the same scores, bit for bit.
    /// Compiling costs about as much as scoring a few hundred documents; [`Scorer::score_dataset`] compiles once per
    /// call, and a caller that scores many queries one by one should compile once and score through the result.
    pub fn compile(&self) -> CompiledForest {
        CompiledForest::new(self)
    }
}

/// Documents scored together, tree by tree (the block's rows stay in cache while each tree is walked).
const BLOCK: usize = 64;

impl Scorer for Forest {
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]) {
        let mut rows = Vec::with_capacity(BLOCK.min(out.len()));
        for (b, chunk) in out.chunks_mut(BLOCK).enumerate() {
            rows.clear();
            rows.extend((0..chunk.len()).map(|i| query.row(b * BLOCK + i)));
            self.score_rows(&rows, chunk);
        }
    }
    fn n_features(&self) -> usize {
        self.n_features
    }
    /// Through [`Forest::compile`]: whole blocks of documents at a time, across query boundaries.
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        self.compile().score_dataset(ds)
    }
}
