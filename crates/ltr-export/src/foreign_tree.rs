//! Reading tree models trained by LightGBM and XGBoost into an exact [`Forest`], and recognising model files by
//! their content (see [`load_model`]).
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
pub(crate) fn f32_below(t: f32) -> Option<f32> {
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
pub(crate) fn f32_at_most(t: f64) -> Option<f32> {
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
const ZERO_BAND: f32 = 1e-35;

/// How a split of a source tree sends a non-NaN f32 value and a NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Test {
    /// Left when `v <= t`; a NaN left when `default_left`.
    Le { t: f32, default_left: bool },
    /// LightGBM's missing type Zero: a value in the zero band and a NaN go left when `default_left`; any other
    /// value left when `v <= t`.
    ZeroBand { t: f32, default_left: bool },
}

/// A child in a source tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Child {
    Node(usize),
    Leaf(usize),
}

/// An internal node of a source tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawNode {
    pub feature: u32,
    pub test: Test,
    pub left: Child,
    pub right: Child,
}

/// A source tree: internal nodes (the root is node 0, or leaf 0 when there are none) and leaf outputs.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct RawTree {
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
    pub(crate) fn to_forest(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::is_foreign_model;
    use ltr_data::Row;

    /// Every f32 around `t`, and special values.
    fn probes(t: f32) -> Vec<f32> {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        v.extend([f32::from_bits(1), -f32::from_bits(1), ZERO_BAND, -ZERO_BAND]);
        if t.is_finite() {
            let mut x = t;
            let mut y = t;
            for _ in 0..4 {
                x = f32_below(x).unwrap_or(x);
                y = f32_below(-y).map_or(y, |b| -b);
                v.extend([x, y]);
            }
            v.push(t);
        }
        v
    }

    #[test]
    fn strict_thresholds_become_the_f32_below() {
        for t in [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            4.0,
            0.5149597,
            -1.0582902,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
        ] {
            let b = f32_below(t).unwrap();
            for v in probes(t) {
                assert_eq!(v <= b, v < t, "t={t:e} v={v:e} b={b:e}");
            }
        }
        assert_eq!(f32_below(f32::NEG_INFINITY), None);
        assert_eq!(f32_below(0.0), Some(-f32::from_bits(1)));
        assert_eq!(f32_below(-0.0), Some(-f32::from_bits(1)));
    }

    #[test]
    fn f64_thresholds_become_the_f32_at_most() {
        let ts = [
            0.0f64,
            -0.0,
            3.5000000000000004,
            0.5511593222618104,
            -1.0557883381843565,
            1e300,
            -1e300,
            1e-35,
            1.0000000180025095e-35,
            -1e-40,
            1e-46,
            -1e-46,
            f32::MAX as f64 * 1.0000001,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.1,
        ];
        for t in ts {
            let a = f32_at_most(t).unwrap();
            for v in probes(t as f32).into_iter().chain(probes(a)) {
                assert_eq!(v <= a, (v as f64) <= t, "t={t:e} v={v:e} a={a:e}");
            }
        }
        assert_eq!(f32_at_most(3.5000000000000004), Some(3.5));
        assert_eq!(f32_at_most(0.1), Some(f32_below(0.1f32).unwrap()));
    }

    /// LightGBM's rule for one split, as documented (value as f64; NaN is 0 unless the missing type is NaN).
    fn lightgbm_left(v: f32, t: f64, missing: u8, default_left: bool) -> bool {
        let mut x = v as f64;
        if x.is_nan() && missing != 2 {
            x = 0.0;
        }
        let zero = (-(ZERO_BAND as f64)..=ZERO_BAND as f64).contains(&x);
        if (missing == 1 && zero) || (missing == 2 && x.is_nan()) {
            return default_left;
        }
        x <= t
    }

    #[test]
    fn every_lightgbm_missing_type_is_exact() {
        for t in [
            -2.0,
            -1e-35,
            -1e-36,
            -0.0,
            0.0,
            1e-36,
            1.0000000180025095e-35,
            1e-30,
            3.0,
        ] {
            for missing in 0u8..3 {
                for default_left in [false, true] {
                    let t32 = f32_at_most(t).unwrap();
                    let test = match missing {
                        0 => Test::Le {
                            t: t32,
                            default_left: 0.0 <= t,
                        },
                        1 => Test::ZeroBand {
                            t: t32,
                            default_left,
                        },
                        _ => Test::Le {
                            t: t32,
                            default_left,
                        },
                    };
                    let raw = RawTree {
                        nodes: vec![RawNode {
                            feature: 0,
                            test,
                            left: Child::Leaf(0),
                            right: Child::Leaf(1),
                        }],
                        leaves: vec![1.0, 2.0],
                    };
                    let f = raw.to_forest(1.0, 1).unwrap();
                    let mut vs = probes(t as f32);
                    vs.extend(probes(t32));
                    vs.push(f32::NAN);
                    for v in vs {
                        let want = if lightgbm_left(v, t, missing, default_left) {
                            1.0
                        } else {
                            2.0
                        };
                        assert_eq!(
                            f.output(&Row::Dense(&[v])),
                            want,
                            "t={t:e} missing={missing} dl={default_left} v={v:e}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn malformed_source_trees_are_refused() {
        let node = |left, right| RawNode {
            feature: 0,
            test: Test::Le {
                t: 0.0,
                default_left: true,
            },
            left,
            right,
        };
        let t = RawTree {
            nodes: vec![node(Child::Leaf(0), Child::Leaf(0))],
            leaves: vec![1.0, 2.0],
        };
        assert!(t.to_forest(1.0, 1).unwrap_err().contains("another split"));
        let t = RawTree {
            nodes: vec![node(Child::Leaf(0), Child::Node(0))],
            leaves: vec![1.0, 2.0],
        };
        assert!(t.to_forest(1.0, 1).unwrap_err().contains("out of range"));
        let t = RawTree {
            nodes: vec![node(Child::Leaf(0), Child::Leaf(1))],
            leaves: vec![1.0, 2.0],
        };
        assert!(t.to_forest(1.0, 0).unwrap_err().contains("feature index 0"));
        let t = RawTree {
            nodes: vec![],
            leaves: vec![f64::NAN],
        };
        assert!(t.to_forest(1.0, 1).unwrap_err().contains("not finite"));
    }

    #[test]
    fn content_decides_the_kind() {
        assert!(is_foreign_model(b"tree\nversion=v4\nnum_class=1\n"));
        assert!(is_foreign_model(b"{\"learner\": {}}"));
        assert!(is_foreign_model(
            b"{\"name\": \"tree\", \"version\": \"v4\"}"
        ));
        assert!(!is_foreign_model(b"{\n  \"format_version\": 3"));
        assert!(!is_foreign_model(b"## LambdaMART\n"));
    }
}
