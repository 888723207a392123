//! A compact, flat ensemble of regression trees: what `lambdamart`, `mart` and `random-forest` (crate `ltr-trees`)
//! produce. Each tree keeps its internal nodes as parallel arrays, so a model file is small and a walk touches a few
//! contiguous arrays.

use ltr_data::Row;
use serde::{Deserialize, Serialize};

/// One regression tree as parallel arrays over its internal nodes; the root is internal node 0, or leaf 0 when the
/// tree has no internal node.
///
/// A child index `c >= 0` is an internal node, `c < 0` is leaf `!c` (so leaf 0 is `-1`). A value `v` of
/// `split_feature` goes left when `v <= threshold`; a NaN goes left when `default_left`, right otherwise; an absent
/// sparse feature is 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ForestTree {
    /// 0-based feature column of each internal node.
    pub split_feature: Vec<u32>,
    /// Raw feature value of each split: `value <= threshold` goes left.
    pub threshold: Vec<f32>,
    /// Where a NaN value goes at each split.
    pub default_left: Vec<bool>,
    /// Left child of each internal node (negative: leaf `!c`).
    pub left: Vec<i32>,
    /// Right child of each internal node (negative: leaf `!c`).
    pub right: Vec<i32>,
    /// The output of each leaf. Boosted trees store it with the learning rate already applied.
    pub leaf_value: Vec<f64>,
    /// The tree's weight: its contribution is `weight · leaf` (1 for boosted trees, 1/T for a random forest of T).
    pub weight: f64,
    /// The training gain of each split (the loss reduction `G_L²/(H_L+λ) + G_R²/(H_R+λ) − G²/(H+λ)`), for feature
    /// importance; empty for a tree read from elsewhere. Not used to score.
    #[serde(default)]
    pub split_gain: Vec<f64>,
}

impl ForestTree {
    /// A tree of one leaf.
    pub fn leaf(value: f64, weight: f64) -> Self {
        Self {
            leaf_value: vec![value],
            weight,
            ..Default::default()
        }
    }

    /// Number of leaves.
    pub fn n_leaves(&self) -> usize {
        self.leaf_value.len()
    }

    /// The leaf `row` falls into.
    #[inline]
    pub fn leaf_index(&self, row: &Row<'_>) -> usize {
        if self.split_feature.is_empty() {
            return 0;
        }
        let mut node = 0usize;
        loop {
            let v = row.get(self.split_feature[node] as usize);
            let go_left = if v.is_nan() {
                self.default_left[node]
            } else {
                v <= self.threshold[node]
            };
            let c = if go_left {
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

    /// The leaf output for `row` (without the tree weight).
    #[inline]
    pub fn output(&self, row: &Row<'_>) -> f64 {
        self.leaf_value[self.leaf_index(row)]
    }

    /// Why this tree cannot be walked, if so: arrays of different lengths, a child that does not come after its
    /// parent or is out of range, a feature beyond `n_features`, a NaN threshold, a non-finite output or weight.
    pub fn inconsistency(&self, n_features: usize) -> Option<String> {
        let n = self.split_feature.len();
        if [
            self.threshold.len(),
            self.default_left.len(),
            self.left.len(),
            self.right.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            return Some("node arrays of different lengths".into());
        }
        if !self.split_gain.is_empty() && self.split_gain.len() != n {
            return Some("split gains for a different number of splits".into());
        }
        if self.leaf_value.len() != n + 1 {
            return Some(format!(
                "{} internal nodes need {} leaves, not {}",
                n,
                n + 1,
                self.leaf_value.len()
            ));
        }
        if !self.weight.is_finite() || self.leaf_value.iter().any(|v| !v.is_finite()) {
            return Some("a non-finite leaf output or tree weight".into());
        }
        let mut leaf_seen = vec![false; n + 1];
        for i in 0..n {
            if self.split_feature[i] as usize >= n_features || self.threshold[i].is_nan() {
                return Some(format!("split {i} is malformed"));
            }
            for c in [self.left[i], self.right[i]] {
                if c < 0 {
                    let l = !c as usize;
                    if l > n || std::mem::replace(&mut leaf_seen[l], true) {
                        return Some(format!("split {i} points at a missing or shared leaf"));
                    }
                } else if (c as usize) <= i || (c as usize) >= n {
                    return Some(format!("split {i} has a child that does not follow it"));
                }
            }
        }
        None
    }
}

/// A weighted sum of [`ForestTree`]s plus a base score: `score(x) = base_score + Σ_t weight_t · leaf_t(x)`,
/// summed in tree order for every document, so a score does not depend on how documents are grouped or threaded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Forest {
    /// The trees, in the order they were grown.
    pub trees: Vec<ForestTree>,
    /// Added to every score (the starting score of boosting).
    pub base_score: f64,
    /// Number of input features of the training data.
    pub n_features: usize,
}

impl Forest {
    /// The ensemble truncated to its first `t` trees.
    pub fn truncated(&self, t: usize) -> Self {
        Self {
            trees: self.trees[..t.min(self.trees.len())].to_vec(),
            base_score: self.base_score,
            n_features: self.n_features,
        }
    }

    /// Feature importance over the whole ensemble, per feature column: how many splits use it, and the sum of
    /// their training gains (each tree's gains times its weight, so a forest's averaged trees count once).
    pub fn importance(&self) -> (Vec<u64>, Vec<f64>) {
        let mut splits = vec![0u64; self.n_features];
        let mut gains = vec![0.0; self.n_features];
        for t in &self.trees {
            for (k, &f) in t.split_feature.iter().enumerate() {
                if let Some(c) = splits.get_mut(f as usize) {
                    *c += 1;
                    gains[f as usize] +=
                        t.split_gain.get(k).copied().unwrap_or(0.0) * t.weight.abs();
                }
            }
        }
        (splits, gains)
    }

    /// Why this ensemble cannot be used, if so (see [`ForestTree::inconsistency`]).
    pub fn inconsistency(&self) -> Option<String> {
        if !self.base_score.is_finite() {
            return Some("a non-finite base score".into());
        }
        self.trees.iter().enumerate().find_map(|(k, t)| {
            t.inconsistency(self.n_features)
                .map(|p| format!("tree {k}: {p}"))
        })
    }

    /// Score `rows` into `out`: tree by tree over the block, each document's outputs added in tree order. This is
    /// the reference walk that [`CompiledForest`](crate::CompiledForest) reproduces.
    pub fn score_rows(&self, rows: &[Row<'_>], out: &mut [f64]) {
        out.fill(self.base_score);
        self.add_rows(rows, out);
    }

    /// Add the trees' outputs for `rows` to `out` (without the base score), tree by tree in tree order: boosting
    /// from another model's scores sums in this order.
    pub fn add_rows(&self, rows: &[Row<'_>], out: &mut [f64]) {
        for t in &self.trees {
            for (o, row) in out.iter_mut().zip(rows) {
                *o += t.weight * t.output(row);
            }
        }
    }
}
