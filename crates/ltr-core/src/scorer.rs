//! The `Scorer` trait and the linear model every learner of the papers produces.

use ltr_data::{Dataset, QueryView};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Anything that scores the documents of a query (higher = ranked higher).
pub trait Scorer: Send + Sync {
    /// Write one score per document of `query` into `out` (`out.len() == query.len()`).
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]);

    /// Number of features the scorer was trained on.
    fn n_features(&self) -> usize;

    /// Scores of every document of `ds`, in row order, computed in parallel over queries.
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        score_by_query(ds, |q, s| self.score_query(q, s))
    }
}

/// A linear scoring function `s(x) = <w, x>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearModel {
    /// One weight per feature (column `k` is feature `k + 1` of the file).
    pub weights: Vec<f64>,
}

impl LinearModel {
    /// A model with the given weights.
    pub fn new(weights: Vec<f64>) -> Self {
        Self { weights }
    }
    /// The all-zero model over `d` features.
    pub fn zeros(d: usize) -> Self {
        Self {
            weights: vec![0.0; d],
        }
    }
    /// Euclidean norm of the weights.
    pub fn norm(&self) -> f64 {
        self.weights.iter().map(|w| w * w).sum::<f64>().sqrt()
    }
    /// Cosine similarity with another model (0 when either is zero).
    pub fn cosine(&self, other: &LinearModel) -> f64 {
        let dot: f64 = self
            .weights
            .iter()
            .zip(&other.weights)
            .map(|(a, b)| a * b)
            .sum();
        let n = self.norm() * other.norm();
        if n == 0.0 {
            0.0
        } else {
            dot / n
        }
    }
}

impl Scorer for LinearModel {
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]) {
        query.scores_into(&self.weights, out);
    }
    fn n_features(&self) -> usize {
        self.weights.len()
    }
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        ds.scores(&self.weights)
    }
}

/// One threshold weak ranker: `alpha · 1[x_feature > threshold]` (RankBoost's binary weak rankers).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stump {
    /// 0-based feature column.
    pub feature: usize,
    /// The document fires when its value is strictly above this.
    pub threshold: f32,
    /// Weight of the weak ranker.
    pub alpha: f64,
}

/// A weighted sum of threshold weak rankers (a RankBoost model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct StumpEnsemble {
    /// The weak rankers, in the order they were chosen.
    pub stumps: Vec<Stump>,
    /// Number of features of the training data.
    pub n_features: usize,
}

impl StumpEnsemble {
    /// The ensemble truncated to its first `t` rounds.
    pub fn truncated(&self, t: usize) -> Self {
        Self {
            stumps: self.stumps[..t.min(self.stumps.len())].to_vec(),
            n_features: self.n_features,
        }
    }
}

impl Scorer for StumpEnsemble {
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate() {
            let row = query.row(i);
            *o = self
                .stumps
                .iter()
                .filter(|s| row.get(s.feature) > s.threshold)
                .map(|s| s.alpha)
                .sum();
        }
    }
    fn n_features(&self) -> usize {
        self.n_features
    }
}

/// One node of a regression tree: a split sends a value ≤ `threshold` to `left` (RankLib's, Solr's and LightGBM's
/// rule), a leaf holds its output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum TreeNode {
    /// An internal node. Children come after their parent in the node list, so every walk ends.
    Split {
        /// 0-based feature column.
        feature: usize,
        /// Values ≤ this go left.
        threshold: f32,
        /// Index of the left child.
        left: u32,
        /// Index of the right child.
        right: u32,
    },
    /// A leaf.
    Leaf {
        /// Its output.
        value: f64,
    },
}

/// A weighted regression tree; the root is node 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    /// The tree's weight (RankLib's `weight`, a learning rate).
    pub weight: f64,
    /// The nodes, root first.
    pub nodes: Vec<TreeNode>,
}

impl Tree {
    /// The output for `row`.
    fn output(&self, row: &ltr_data::Row<'_>) -> f64 {
        let mut at = 0usize;
        loop {
            match self.nodes[at] {
                TreeNode::Leaf { value } => return value,
                TreeNode::Split {
                    feature,
                    threshold,
                    left,
                    right,
                } => {
                    at = if row.get(feature) <= threshold {
                        left as usize
                    } else {
                        right as usize
                    };
                }
            }
        }
    }

    /// Why this tree cannot be walked, if so: a child index that does not come after its parent or is out of
    /// range, a feature beyond `n_features`, a NaN threshold or a non-finite output.
    pub fn inconsistency(&self, n_features: usize) -> Option<String> {
        if self.nodes.is_empty() || !self.weight.is_finite() {
            return Some("an empty tree or a non-finite tree weight".into());
        }
        for (i, n) in self.nodes.iter().enumerate() {
            match *n {
                TreeNode::Leaf { value } if !value.is_finite() => {
                    return Some(format!("leaf {i} has a non-finite output"))
                }
                TreeNode::Split {
                    feature,
                    threshold,
                    left,
                    right,
                } => {
                    let child_ok = |c: u32| (c as usize) > i && (c as usize) < self.nodes.len();
                    if feature >= n_features
                        || threshold.is_nan()
                        || !child_ok(left)
                        || !child_ok(right)
                    {
                        return Some(format!("split {i} is malformed"));
                    }
                }
                TreeNode::Leaf { .. } => {}
            }
        }
        None
    }
}

/// A weighted sum of regression trees (RankLib MART/LambdaMART models read by `ltr predict`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeEnsemble {
    /// The trees.
    pub trees: Vec<Tree>,
    /// Number of input features.
    pub n_features: usize,
}

impl Scorer for TreeEnsemble {
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]) {
        for (i, o) in out.iter_mut().enumerate() {
            let row = query.row(i);
            *o = self.trees.iter().map(|t| t.weight * t.output(&row)).sum();
        }
    }
    fn n_features(&self) -> usize {
        self.n_features
    }
}

/// Scores of every document of `ds`, in row order: `score(query, out)` over the queries in parallel (the default
/// [`Scorer::score_dataset`], and a network's with an encoder).
pub(crate) fn score_by_query(
    ds: &Dataset,
    score: impl Fn(&QueryView<'_>, &mut [f64]) + Sync,
) -> Vec<f64> {
    let mut out = vec![0.0; ds.n_docs()];
    let mut slices: Vec<&mut [f64]> = Vec::with_capacity(ds.n_queries());
    let mut rest: &mut [f64] = &mut out;
    for w in ds.query_offsets().windows(2) {
        let (a, b) = rest.split_at_mut(w[1] - w[0]);
        slices.push(a);
        rest = b;
    }
    slices
        .into_par_iter()
        .enumerate()
        .for_each(|(q, s)| score(&ds.query(q), s));
    out
}
