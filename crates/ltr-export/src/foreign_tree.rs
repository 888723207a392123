//! Reading tree models trained by LightGBM and XGBoost into an exact [`Forest`], and recognising model files by
//! their content (see [`load_model`](crate::load_model)).
//!
//! Both libraries' split rules are rewritten into the forest's rule (`value <= threshold` in f32 goes left, a NaN
//! goes `default_left`) so that every f32 feature value takes the same branch:
//!
//! - XGBoost sends `v < t` left (t an f32): the forest threshold is the largest f32 below `t`.
//! - LightGBM sends `(v as f64) <= t` left (t an f64): the forest threshold is the largest f32 not above `t`.
//! - LightGBM's missing types: `NaN` sends NaN the default way; `None` scores a NaN as 0; `Zero` sends every value
//!   in `[-1e-35, 1e-35]` (and NaN, read as 0) the default way. A `Zero` split whose default way agrees with where
//!   its threshold sends those values is one forest split; otherwise it becomes three (below the zero band, the
//!   band, above it), copying the subtrees below it.
//!
//! Scores are the libraries' raw margins (LightGBM's `raw_score=True`, XGBoost's `output_margin=True`): no sigmoid,
//! which leaves a ranking unchanged. An absent feature of a LETOR line is 0 here, as in LightGBM and XGBoost given
//! a dense matrix; XGBoost given a sparse matrix (or LightGBM with `zero_as_missing`) treats absent entries as
//! missing, which a LETOR file cannot say.

use ltr_core::{Forest, ForestTree, Model, ModelFile, TrainingSummary};

use crate::{ExportError, Result};

/// An error about `source`.
pub(crate) fn bad(source: &str, problem: impl Into<String>) -> ExportError {
    ExportError::Read {
        file: source.to_string(),
        problem: problem.into(),
    }
}

/// Largest f32 strictly below `t`: `v <= below(t)` ⇔ `v < t` for every f32 `v` (`None` for `t = -∞` or NaN, when
/// no threshold says it).
// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
pub fn f32_below(t: f32) -> Option<f32> {
    if t.is_nan() || t == f32::NEG_INFINITY {
        return None;
    }
    if t == 0.0 {
        // Both zeros: the largest value below them is the negative subnormal of smallest magnitude.
        return Some(-f32::from_bits(1));
    }
    let b = t.to_bits();
    Some(f32::from_bits(if t > 0.0 { b - 1 } else { b + 1 }))
}

/// Largest f32 not above `t`: `v <= at_most(t)` ⇔ `(v as f64) <= t` for every f32 `v` (`None` for NaN).
// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
pub fn f32_at_most(t: f64) -> Option<f32> {
    if t.is_nan() {
        return None;
    }
    let r = t as f32; // nearest, ties to even; ±∞ beyond the f32 range
    if (r as f64) > t {
        f32_below(r)
    } else {
        Some(r)
    }
}

/// LightGBM's zero band `[-Z, Z]` (`kZeroThreshold`, an f32 constant).
// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
pub const ZERO_BAND: f32 = 1e-35;

/// How a split of a source tree sends a non-NaN f32 value and a NaN.
// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test {
    /// Left when `v <= t`; a NaN left when `default_left`.
    Le { t: f32, default_left: bool },
    /// LightGBM's missing type Zero: a value in the zero band and a NaN go left when `default_left`; any other
    /// value left when `v <= t`.
    ZeroBand { t: f32, default_left: bool },
}

/// A child in a source tree.
// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Child {
    Node(usize),
    Leaf(usize),
}

/// An internal node of a source tree.
// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq)]
pub struct RawNode {
    pub feature: u32,
    pub test: Test,
    pub left: Child,
    pub right: Child,
}

/// A source tree: internal nodes (the root is node 0, or leaf 0 when there are none) and leaf outputs.
// pub for the tests in tests/unit/foreign_tree.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawTree {
    pub nodes: Vec<RawNode>,
    pub leaves: Vec<f64>,
}

/// Most internal nodes one converted tree may have (missing-type-Zero splits copy subtrees).
const MAX_NODES: usize = 1 << 22;

/// What to emit at a position of the forest tree.
enum Emit {
    Src(Child),
    Split {
        feature: u32,
        t: f32,
        default_left: bool,
        left: Box<Emit>,
        right: Box<Emit>,
    },
}

impl RawTree {
    /// The source tree as a forest tree scoring every f32 input as the source does; `Err` says what is wrong with
    /// the source (a child out of range or reached twice, a feature beyond `n_features`, a non-finite leaf).
    pub fn to_forest(
        &self,
        weight: f64,
        n_features: usize,
    ) -> std::result::Result<ForestTree, String> {
        let n = self.nodes.len();
        if self.leaves.len() != n + 1 {
            return Err(format!(
                "{n} splits need {} leaves, not {}",
                n + 1,
                self.leaves.len()
            ));
        }
        if let Some(v) = self.leaves.iter().find(|v| !v.is_finite()) {
            return Err(format!("leaf output {v} is not finite"));
        }
        // Each node and leaf but the root must be the child of exactly one split.
        let mut node_seen = vec![false; n];
        let mut leaf_seen = vec![false; n + 1];
        for (i, nd) in self.nodes.iter().enumerate() {
            if nd.feature as usize >= n_features {
                return Err(format!(
                    "split {i} uses feature index {} (feature {}) but the model has {n_features} features",
                    nd.feature,
                    nd.feature as usize + 1
                ));
            }
            for c in [nd.left, nd.right] {
                let seen = match c {
                    Child::Node(k) if k > 0 && k < n => &mut node_seen[k],
                    Child::Leaf(k) if k <= n => &mut leaf_seen[k],
                    _ => {
                        return Err(format!(
                            "split {i} has a child out of range or the root as a child"
                        ))
                    }
                };
                if std::mem::replace(seen, true) {
                    return Err(format!("split {i} has a child that another split has too"));
                }
            }
        }
        let mut tree = ForestTree {
            weight,
            ..Default::default()
        };
        if n == 0 {
            tree.leaf_value.push(self.leaves[0]);
            return Ok(tree);
        }
        // Pre-order: a split's index is taken before its children's, so children follow their parents; each leaf
        // reached is a new forest leaf.
        let mut stack: Vec<(Emit, Option<(usize, bool)>)> = vec![(Emit::Src(Child::Node(0)), None)];
        while let Some((e, slot)) = stack.pop() {
            let id = match e {
                Emit::Src(Child::Leaf(k)) => {
                    tree.leaf_value.push(self.leaves[k]);
                    !((tree.leaf_value.len() - 1) as i32)
                }
                Emit::Src(Child::Node(k)) => {
                    let nd = &self.nodes[k];
                    let (l, r) = (Box::new(Emit::Src(nd.left)), Box::new(Emit::Src(nd.right)));
                    let e = expand(nd.feature, nd.test, l, r);
                    // Re-queue the plain split it expands to at the same slot.
                    stack.push((e, slot));
                    continue;
                }
                Emit::Split {
                    feature,
                    t,
                    default_left,
                    left,
                    right,
                } => {
                    let at = tree.split_feature.len();
                    if at >= MAX_NODES {
                        return Err(format!(
                            "more than {MAX_NODES} splits once LightGBM's zero-as-missing splits are written out"
                        ));
                    }
                    tree.split_feature.push(feature);
                    tree.threshold.push(t);
                    tree.default_left.push(default_left);
                    tree.left.push(0);
                    tree.right.push(0);
                    stack.push((*right, Some((at, false))));
                    stack.push((*left, Some((at, true))));
                    at as i32
                }
            };
            if let Some((p, is_left)) = slot {
                if is_left {
                    tree.left[p] = id;
                } else {
                    tree.right[p] = id;
                }
            }
        }
        if let Some(p) = tree.inconsistency(n_features) {
            return Err(p);
        }
        Ok(tree)
    }
}

/// The plain (forest) splits that send every f32 value and NaN as `test` does.
fn expand(feature: u32, test: Test, l: Box<Emit>, r: Box<Emit>) -> Emit {
    let split = |t: f32, default_left: bool, left: Box<Emit>, right: Box<Emit>| Emit::Split {
        feature,
        t,
        default_left,
        left,
        right,
    };
    match test {
        Test::Le { t, default_left } => split(t, default_left, l, r),
        Test::ZeroBand { t, default_left } => {
            let z = ZERO_BAND;
            if (default_left && t >= z) || (!default_left && t < -z) {
                // The band already goes the default way by the threshold.
                return split(t, default_left, l, r);
            }
            let below_band = f32_below(-z).expect("finite");
            let dup = |e: &Emit| Box::new(copy(e));
            // Values below the band, by the threshold.
            let low = if t >= below_band {
                dup(&l)
            } else {
                Box::new(split(t, false, dup(&l), dup(&r)))
            };
            // Values above the band, by the threshold.
            let high = if t <= z {
                dup(&r)
            } else {
                Box::new(split(t, false, dup(&l), dup(&r)))
            };
            let band = if default_left { l } else { r };
            split(below_band, false, low, Box::new(split(z, true, band, high)))
        }
    }
}

fn copy(e: &Emit) -> Emit {
    match e {
        Emit::Src(c) => Emit::Src(*c),
        Emit::Split {
            feature,
            t,
            default_left,
            left,
            right,
        } => Emit::Split {
            feature: *feature,
            t: *t,
            default_left: *default_left,
            left: Box::new(copy(left)),
            right: Box::new(copy(right)),
        },
    }
}

/// The model file of an imported forest.
pub(crate) fn model_file(
    algorithm: &str,
    params: Vec<(&str, String)>,
    forest: Forest,
    feature_names: Vec<String>,
    source: &str,
) -> Result<ModelFile> {
    if let Some(p) = forest.inconsistency() {
        return Err(bad(source, p));
    }
    let n_features = forest.n_features;
    let mut m = ModelFile::new(
        algorithm,
        params
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        TrainingSummary {
            train_file: source.to_string(),
            features: n_features,
            ..Default::default()
        },
        Model::Forest(forest),
    );
    // Names the library made up (`Column_0`, `f0`) say nothing: `ltr` names unnamed features `f<k>` itself.
    let made_up = feature_names
        .iter()
        .enumerate()
        .all(|(k, s)| *s == format!("Column_{k}") || *s == format!("f{k}"));
    if !made_up && feature_names.len() == n_features {
        m.feature_names = feature_names;
    }
    Ok(m)
}
