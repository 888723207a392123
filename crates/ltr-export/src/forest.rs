//! Tree ensembles (`lambdamart`, `mart`, `random-forest`: [`ltr_core::Forest`]) in each engine's tree format.
//!
//! The model's splits are `value <= threshold` on *preprocessed* float32 values, a NaN following the split's
//! `default_left` and an absent feature reading 0. Every split is first carried back to raw feature values (the
//! largest raw float32 whose preprocessed value goes left, so any monotone global normalisation is exact), then
//! written in the engine's comparison:
//!
//! | engine | comparison | threshold written | a missing feature | a NaN value |
//! |---|---|---|---|---|
//! | ES/OpenSearch `model/xgboost+json` | `value < t`, float32 | next float32 above | NaN → `missing` branch (set to where 0 goes) | `missing` branch |
//! | ES/OpenSearch `model/ranklib`, RankLib | `value <= t`, float32 | exact | 0 | 0 |
//! | Solr `MultipleAdditiveTreesModel` | `value <= t + 1e-6f`, float32 | t with f32(t + 1e-6) = threshold | the feature's default (0) | right |
//! | Vespa `xgboost(...)` | `value < t` (or `!(value >= t)`), double | next float32 above | 0 (query features) or NaN → `missing` (where 0 goes) | `missing` branch |
//! | Elasticsearch 8 `tree_ensemble` | `value <= t` (`lte`), double | exact | absent → `default_left` (set to where 0 goes) | `default_left` |
//!
//! So a feature the engine does not find is routed as `ltr predict` routes an absent feature (raw 0) everywhere; a
//! NaN value differs wherever the engine's NaN route is not the split's `default_left` (counted, and refused under
//! [`MissingPolicy::Strict`]).

use std::fmt::Write as _;

use ltr_core::{ForestTree, Model, ModelFile};
use ltr_data::Preprocess;
use serde_json::{json, Value};

use crate::target::{EsModel, ExportOptions, Exported, MissingPolicy, Target};
use crate::trees::{key, value};
use crate::{ExportError, Result};

/// One node of a tree on raw feature values, in pre-order (a parent before its children; the root is node 0).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawNode {
    /// `raw value <= threshold` goes to `left`; NaN goes left when `default_left`.
    Split {
        /// The feature's number in the data file (1-based).
        feature: usize,
        /// The raw threshold.
        threshold: f32,
        /// Where `ltr predict` sends a NaN.
        default_left: bool,
        left: usize,
        right: usize,
    },
    /// An output.
    Leaf(f64),
}

/// A weighted tree on raw values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawTree {
    pub weight: f64,
    pub nodes: Vec<RawNode>,
}

/// The ensemble on raw values: `Σ weight · leaf`; a non-zero base score is a first one-leaf tree of weight 1.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawForest {
    pub trees: Vec<RawTree>,
    /// The data-file numbers of the features some split uses, ascending.
    pub features: Vec<usize>,
}

impl RawForest {
    fn splits(&self) -> impl Iterator<Item = (f32, bool)> + '_ {
        self.trees.iter().flat_map(|t| {
            t.nodes.iter().filter_map(|n| match *n {
                RawNode::Split {
                    threshold,
                    default_left,
                    ..
                } => Some((threshold, default_left)),
                RawNode::Leaf(_) => None,
            })
        })
    }
}

/// Where an absent feature (raw 0) goes at a split on `threshold`.
pub(crate) fn zero_goes_left(threshold: f32) -> bool {
    0.0 <= threshold
}

/// The smallest float32 above `x` (for an engine that compares `value < t`: `v < next_up(x)` ⇔ `v <= x` for every
/// float32 `v`).
// pub for the tests in tests/unit/forest.rs; not API.
#[doc(hidden)]
pub fn next_up(x: f32) -> f32 {
    value(key(x) + 1)
}

/// Solr adds `1e-6f` to every threshold it reads (`NODE_SPLIT_SLACK`) and compares `value <= t + 1e-6`: the float32
/// `t` whose float32 sum with the slack is exactly `x`, if one exists, else the largest `t` whose sum stays below
/// `x` (`false`: inexact).
// pub for the tests in tests/unit/forest.rs; not API.
#[doc(hidden)]
pub fn solr_threshold(x: f32) -> (f32, bool) {
    const SLACK: f32 = 1e-6;
    let sum = |k: i64| value(k) + SLACK;
    let (mut lo, mut hi) = (key(-f32::MAX), key(x));
    if sum(lo) >= x {
        return (value(lo), sum(lo) == x);
    }
    // Invariant: sum(lo) < x <= sum(hi) (the sum rounds monotonically).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if sum(mid) < x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if sum(hi) == x {
        (value(hi), true)
    } else {
        (value(lo), false)
    }
}

// pub for the tests in tests/unit/forest.rs; not API.
#[doc(hidden)]
pub enum Cut {
    /// Split raw values at this threshold.
    At(f32),
    /// Every value (the preprocessed feature is constant) goes left (`true`) or right.
    Always(bool),
}

/// The raw threshold of a split on model column `column` at preprocessed `theta`.
// pub for the tests in tests/unit/forest.rs; not API.
#[doc(hidden)]
pub fn raw_cut(
    pre: Option<&Preprocess>,
    column: usize,
    theta: f32,
) -> std::result::Result<Cut, String> {
    let r = match pre {
        None => theta,
        Some(p) => {
            let f = |r: f32| p.transform_value(column, r).unwrap_or(f32::NAN);
            let (mut lo, mut hi) = (key(f32::NEG_INFINITY), key(f32::INFINITY));
            let lowest = f(value(lo));
            if lowest.is_nan() || lowest > theta {
                return Ok(Cut::Always(false));
            }
            if f(value(hi)) <= theta {
                return Ok(Cut::Always(true));
            }
            // Invariant: f(value(lo)) <= theta < f(value(hi)); f is non-decreasing.
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if f(value(mid)) <= theta {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            value(lo)
        }
    };
    if r.is_finite() && r.abs() < f32::MAX {
        Ok(Cut::At(r))
    } else {
        Err(format!(
            "a split at {theta} has no finite raw threshold an engine can compare with"
        ))
    }
}

/// Deeper trees are refused rather than walked recursively.
const MAX_DEPTH: usize = 512;

struct Walk<'a> {
    tree: &'a ForestTree,
    pre: Option<&'a Preprocess>,
    nodes: Vec<RawNode>,
}

impl Walk<'_> {
    /// Append the subtree at child code `c` (negative: leaf `!c`) and return its node index.
    fn at(&mut self, c: i32, depth: usize) -> std::result::Result<usize, String> {
        if depth > MAX_DEPTH {
            return Err(format!("a tree deeper than {MAX_DEPTH} levels"));
        }
        if c < 0 {
            self.nodes
                .push(RawNode::Leaf(self.tree.leaf_value[!c as usize]));
            return Ok(self.nodes.len() - 1);
        }
        let i = c as usize;
        let t = self.tree;
        let column = t.split_feature[i] as usize;
        match raw_cut(self.pre, column, t.threshold[i])? {
            Cut::Always(left) => self.at(if left { t.left[i] } else { t.right[i] }, depth + 1),
            Cut::At(threshold) => {
                let me = self.nodes.len();
                self.nodes.push(RawNode::Leaf(0.0)); // until the children have indices
                let left = self.at(t.left[i], depth + 1)?;
                let right = self.at(t.right[i], depth + 1)?;
                let feature = self
                    .pre
                    .and_then(|p| p.features.as_ref())
                    .map_or(column + 1, |f| f[column]);
                self.nodes[me] = RawNode::Split {
                    feature,
                    threshold,
                    default_left: t.default_left[i],
                    left,
                    right,
                };
                Ok(me)
            }
        }
    }
}

fn refuse(target: Target, reason: impl Into<String>) -> ExportError {
    ExportError::Unsupported {
        target: target.name().into(),
        reason: reason.into(),
    }
}

/// The model's trees on raw feature values, the stored preprocessing carried into the thresholds exactly.
pub(crate) fn raw_forest(model: &ModelFile, target: Target) -> Result<RawForest> {
    let Model::Forest(f) = &model.model else {
        return Err(refuse(target, "not a lambdamart/mart/random-forest model"));
    };
    if let Some(p) = f.inconsistency() {
        return Err(refuse(target, format!("the model is malformed: {p}")));
    }
    let pre = model.preprocess.as_ref();
    if let Some(p) = pre {
        if f.n_features > 0 && p.transform_value(0, 0.0).is_none() {
            return Err(refuse(
                target,
                "the model normalises per query, which needs every document of the query before scoring one; retrain with --normalize zscore, minmax or none",
            ));
        }
    }
    let mut trees = Vec::with_capacity(f.trees.len() + 1);
    if f.base_score != 0.0 {
        trees.push(RawTree {
            weight: 1.0,
            nodes: vec![RawNode::Leaf(f.base_score)],
        });
    }
    for (k, t) in f.trees.iter().enumerate() {
        let mut w = Walk {
            tree: t,
            pre,
            nodes: Vec::with_capacity(2 * t.leaf_value.len()),
        };
        let root = if t.split_feature.is_empty() { !0 } else { 0 };
        w.at(root, 0)
            .map_err(|p| refuse(target, format!("tree {k}: {p}")))?;
        trees.push(RawTree {
            weight: t.weight,
            nodes: w.nodes,
        });
    }
    let mut features: Vec<usize> = trees
        .iter()
        .flat_map(|t| t.nodes.iter())
        .filter_map(|n| match n {
            RawNode::Split { feature, .. } => Some(*feature),
            RawNode::Leaf(_) => None,
        })
        .collect();
    features.sort_unstable();
    features.dedup();
    if features.is_empty() {
        return Err(refuse(
            target,
            "no split depends on a feature that varied in training: the model gives every document the same score",
        ));
    }
    Ok(RawForest { trees, features })
}

/// Where an engine sends a NaN feature value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NanRoute {
    /// Where raw 0 goes (the engine reads NaN as 0, or its missing branch was set to 0's side).
    ZeroSide,
    /// Always right (a Java `<=` with NaN is false).
    Right,
}

/// How many splits send a NaN elsewhere than `ltr predict` (its `default_left`), of how many.
fn nan_differences(f: &RawForest, route: NanRoute) -> (usize, usize) {
    let mut n = 0;
    let mut differ = 0;
    for (threshold, default_left) in f.splits() {
        n += 1;
        let engine_left = match route {
            NanRoute::ZeroSide => zero_goes_left(threshold),
            NanRoute::Right => false,
        };
        differ += usize::from(engine_left != default_left);
    }
    (differ, n)
}

/// The missing-value notes of one engine (and the refusal under `--missing strict`).
fn missing_notes(
    f: &RawForest,
    target: Target,
    opts: &ExportOptions,
    absent: &str,
    nan: &str,
    route: NanRoute,
) -> Result<Vec<String>> {
    let (differ, n) = nan_differences(f, route);
    let mut notes = vec![format!(
        "missing features: {absent}; that is how `ltr predict` treats an absent feature (raw value 0)"
    )];
    if differ == 0 {
        notes.push(format!(
            "NaN values: {nan}, which is each split's default_left, as in `ltr predict`"
        ));
    } else {
        let msg = format!(
            "NaN values: {nan}, but `ltr predict` sends a NaN by the split's default_left, which differs at {differ} of {n} splits"
        );
        if opts.missing == MissingPolicy::Strict {
            return Err(refuse(
                target,
                format!("--missing strict: {msg}; export without --missing strict if the engine never sees NaN feature values"),
            ));
        }
        notes.push(msg);
    }
    Ok(notes)
}

fn name_of(model: &ModelFile) -> impl Fn(usize) -> String + '_ {
    move |k| model.feature_name(k)
}

/// Export a [`Model::Forest`] to `target`.
pub(crate) fn export_forest(
    model: &ModelFile,
    target: Target,
    opts: &ExportOptions,
) -> Result<Exported> {
    let f = raw_forest(model, target)?;
    let names = name_of(model);
    let mut seen = std::collections::HashMap::new();
    for &k in &f.features {
        if let Some(other) = seen.insert(names(k), k) {
            return Err(ExportError::Option(format!(
                "features {other} and {k} are both named `{}`; engines refer to features by name (give distinct names with --feature-names)",
                names(k)
            )));
        }
    }
    match target {
        Target::EsLtr | Target::OpenSearchLtr => match opts.es_model {
            EsModel::XgboostJson => es_xgboost(model, &f, target, opts),
            EsModel::Ranklib => es_ranklib(model, &f, target, opts),
        },
        Target::RankLib => {
            let mut notes = missing_notes(
                &f,
                target,
                opts,
                "RankLib reads a feature absent from a data line as 0",
                "RankLib reads a NaN value as unknown, i.e. 0, so it goes where 0 goes",
                NanRoute::ZeroSide,
            )?;
            notes.insert(
                0,
                "load with RankLib's -load, without -norm (the thresholds are on raw values)"
                    .into(),
            );
            notes.push(RANKLIB_THRESHOLDS.into());
            Ok(Exported {
                model: ranklib_xml(model, &f, &notes)?,
                binary: None,
                feature_store: None,
                side_files: Vec::new(),
                notes,
            })
        }
        Target::SolrLtr => solr(model, &f, target, opts),
        Target::Vespa => vespa(model, &f, target, opts),
        Target::Es8Ltr => es8(model, &f, target, opts),
        Target::Onnx => unreachable!("`export` writes ONNX itself"),
    }
}

const RANKLIB_THRESHOLDS: &str = "thresholds: RankLib sends `value <= threshold` left in float32; each threshold is the exact float32 raw threshold (the stored normalisation carried into it); tree weights and leaf outputs as trained, the base score a first one-leaf tree";

/// A float32 threshold as JSON: the f64 equal to it, so that a float or a double parser reads it exactly.
fn threshold_json(t: f32) -> Value {
    json!(t as f64)
}

fn checked_next_up(t: f32, target: Target) -> Result<f32> {
    let up = next_up(t);
    if up.is_finite() {
        Ok(up)
    } else {
        Err(refuse(
            target,
            "a split at the largest float32 cannot be written as `value < t`",
        ))
    }
}

/// XGBoost's JSON dump (`[tree, …]`, each node `nodeid`, `depth`, `split`, `split_condition`, `yes`, `no`,
/// `missing`, `children`, or `nodeid` and `leaf`): `value < split_condition` goes to `yes`, a missing value to
/// `missing` (set to where raw 0 goes). Tree weights are multiplied into the leaves (the format has none).
fn xgboost_trees(model: &ModelFile, f: &RawForest, target: Target) -> Result<Value> {
    fn node(
        model: &ModelFile,
        t: &RawTree,
        i: usize,
        depth: usize,
        target: Target,
    ) -> Result<Value> {
        Ok(match t.nodes[i] {
            RawNode::Leaf(v) => json!({"nodeid": i, "leaf": v * t.weight}),
            RawNode::Split {
                feature,
                threshold,
                left,
                right,
                ..
            } => {
                let missing = if zero_goes_left(threshold) {
                    left
                } else {
                    right
                };
                json!({
                    "nodeid": i,
                    "depth": depth,
                    "split": model.feature_name(feature),
                    "split_condition": threshold_json(checked_next_up(threshold, target)?),
                    "yes": left,
                    "no": right,
                    "missing": missing,
                    "children": [
                        node(model, t, left, depth + 1, target)?,
                        node(model, t, right, depth + 1, target)?,
                    ],
                })
            }
        })
    }
    let trees: Result<Vec<Value>> = f
        .trees
        .iter()
        .map(|t| node(model, t, 0, 0, target))
        .collect();
    Ok(Value::Array(trees?))
}

const XGBOOST_THRESHOLDS: &str = "thresholds: the engine sends `value < split_condition` to `yes`; each split_condition is the next float32 above the raw threshold, so float32 values split exactly as `value <= threshold` (the stored normalisation carried into it); tree weights are multiplied into the leaves, the base score is a first one-leaf tree";

fn es_xgboost(
    model: &ModelFile,
    f: &RawForest,
    target: Target,
    opts: &ExportOptions,
) -> Result<Exported> {
    let mut notes = missing_notes(
        f,
        target,
        opts,
        "the plugin gives a feature whose query does not match the document (or scores NaN) no value, and XGBoost's `missing` branch of each split, written as the side raw value 0 goes, takes it",
        "a NaN value follows the `missing` branch, i.e. goes where 0 goes",
        NanRoute::ZeroSide,
    )?;
    notes.insert(
        0,
        format!(
            "upload: POST _ltr/_featureset/{}/_createmodel with this body (model/xgboost+json); every feature name must exist in that feature set",
            opts.feature_set
        ),
    );
    notes.push(XGBOOST_THRESHOLDS.into());
    let body = json!({"model": {"name": opts.name, "model": {
        "type": "model/xgboost+json",
        "definition": xgboost_trees(model, f, target)?,
    }}});
    Ok(Exported {
        model: format!("{body:#}\n"),
        binary: None,
        feature_store: None,
        side_files: Vec::new(),
        notes,
    })
}

fn es_ranklib(
    model: &ModelFile,
    f: &RawForest,
    target: Target,
    opts: &ExportOptions,
) -> Result<Exported> {
    let mut notes = missing_notes(
        f,
        target,
        opts,
        "the plugin gives RankLib 0 for a feature whose query does not match the document",
        "a NaN score is not stored either, so it reads 0 and goes where 0 goes",
        NanRoute::ZeroSide,
    )?;
    notes.insert(
        0,
        format!(
            "upload: POST _ltr/_featureset/{}/_createmodel with this body (model/ranklib); RankLib refers to features by position, so feature k of the set must be feature k of the training file",
            opts.feature_set
        ),
    );
    notes.push(RANKLIB_THRESHOLDS.into());
    let body = json!({"model": {"name": opts.name, "model": {
        "type": "model/ranklib",
        "definition": ranklib_xml(model, f, &notes)?,
    }}});
    Ok(Exported {
        model: format!("{body:#}\n"),
        binary: None,
        feature_store: None,
        side_files: Vec::new(),
        notes,
    })
}

/// RankLib's ensemble XML (`## LambdaMART` or `## MART` header, `<ensemble><tree id weight><split>…`): a value
/// `<= threshold` goes left. The notes go into the `##` header.
fn ranklib_xml(model: &ModelFile, f: &RawForest, notes: &[String]) -> Result<String> {
    fn node(x: &mut String, t: &RawTree, i: usize, indent: usize, pos: Option<&str>) {
        let tab = "\t".repeat(indent);
        let open = pos.map_or("<split>".to_string(), |p| format!("<split pos=\"{p}\">"));
        match t.nodes[i] {
            RawNode::Leaf(v) => {
                let _ = write!(
                    x,
                    "{tab}{open}\n{tab}\t<output> {v} </output>\n{tab}</split>\n"
                );
            }
            RawNode::Split {
                feature,
                threshold,
                left,
                right,
                ..
            } => {
                let _ = write!(
                    x,
                    "{tab}{open}\n{tab}\t<feature> {feature} </feature>\n{tab}\t<threshold> {threshold} </threshold>\n"
                );
                node(x, t, left, indent + 1, Some("left"));
                node(x, t, right, indent + 1, Some("right"));
                let _ = writeln!(x, "{tab}</split>");
            }
        }
    }
    let kind = if model.algorithm == "lambdamart" {
        "LambdaMART"
    } else {
        "MART"
    };
    let leaves = f
        .trees
        .iter()
        .map(|t| {
            t.nodes
                .iter()
                .filter(|n| matches!(n, RawNode::Leaf(_)))
                .count()
        })
        .max()
        .unwrap_or(1);
    let mut x = format!(
        "## {kind}\n## Exported by ltr from a {} model\n## No. of trees = {}\n## No. of leaves = {leaves}\n## Learning rate = 1.0\n",
        model.algorithm,
        f.trees.len()
    );
    for n in notes {
        let _ = writeln!(x, "## {}", n.replace('\n', " "));
    }
    x.push_str("<ensemble>\n");
    for (k, t) in f.trees.iter().enumerate() {
        let _ = writeln!(x, "\t<tree id=\"{}\" weight=\"{}\">", k + 1, t.weight);
        node(&mut x, t, 0, 2, None);
        x.push_str("\t</tree>\n");
    }
    x.push_str("</ensemble>\n");
    Ok(x)
}

fn feature_store(model: &ModelFile, f: &RawForest, opts: &ExportOptions) -> String {
    let store: Vec<Value> = f
        .features
        .iter()
        .map(|&k| {
            let n = model.feature_name(k);
            json!({
                "name": n,
                "class": "org.apache.solr.ltr.feature.SolrFeature",
                "params": {"q": format!("TODO: the query whose score is feature {k} (`{n}`)")},
                "store": opts.feature_set,
            })
        })
        .collect();
    format!("{:#}\n", Value::Array(store))
}

fn solr(
    model: &ModelFile,
    f: &RawForest,
    target: Target,
    opts: &ExportOptions,
) -> Result<Exported> {
    let mut inexact = 0usize;
    let mut node = |t: &RawTree, i: usize| -> Value {
        fn go(model: &ModelFile, t: &RawTree, i: usize, inexact: &mut usize) -> Value {
            match t.nodes[i] {
                RawNode::Leaf(v) => json!({"value": v.to_string()}),
                RawNode::Split {
                    feature,
                    threshold,
                    left,
                    right,
                    ..
                } => {
                    let (t_solr, exact) = solr_threshold(threshold);
                    *inexact += usize::from(!exact);
                    json!({
                        "feature": model.feature_name(feature),
                        "threshold": t_solr.to_string(),
                        "left": go(model, t, left, inexact),
                        "right": go(model, t, right, inexact),
                    })
                }
            }
        }
        go(model, t, i, &mut inexact)
    };
    let trees: Vec<Value> = f
        .trees
        .iter()
        .map(|t| json!({"weight": t.weight.to_string(), "root": node(t, 0)}))
        .collect();
    let model_json = json!({
        "class": "org.apache.solr.ltr.model.MultipleAdditiveTreesModel",
        "name": opts.name,
        "store": opts.feature_set,
        "features": f.features.iter().map(|&k| json!({"name": model.feature_name(k)})).collect::<Vec<_>>(),
        "params": {"trees": trees},
    });
    let mut notes = missing_notes(
        f,
        target,
        opts,
        "Solr gives a feature that does not match the document its default value, 0 unless the feature store sets defaultValue",
        "a NaN value fails Solr's `<=` and goes right",
        NanRoute::Right,
    )?;
    notes.insert(0, format!("upload: PUT the feature store to /solr/<core>/schema/feature-store (fill in each feature's query first), then this model to /solr/<core>/schema/model-store; query with rq={{!ltr model={}}}", opts.name));
    let mut th = "thresholds: Solr adds 1e-6 (float32) to each threshold and sends `value <= threshold + 1e-6` left; each threshold t is written so that float32(t + 1e-6) is the raw threshold exactly".to_string();
    if inexact > 0 {
        let _ = write!(th, " — except at {inexact} splits, where no float32 t does and the split moves by one float32 step");
    }
    notes.push(th);
    Ok(Exported {
        model: format!("{model_json:#}\n"),
        binary: None,
        feature_store: Some(feature_store(model, f, opts)),
        side_files: Vec::new(),
        notes,
    })
}

fn vespa(
    model: &ModelFile,
    f: &RawForest,
    target: Target,
    opts: &ExportOptions,
) -> Result<Exported> {
    let mut notes = missing_notes(
        f,
        target,
        opts,
        "Vespa's xgboost import sends a NaN (e.g. an unset float attribute) down each split's `missing` branch, written as the side raw value 0 goes, and query features such as bm25 or nativeRank are 0 when nothing matches; an unset integer attribute holds its type's undefined sentinel instead, which differs",
        "a NaN value follows the `missing` branch, i.e. goes where 0 goes",
        NanRoute::ZeroSide,
    )?;
    let file = format!("{}.json", opts.name);
    notes.insert(
        0,
        format!("add this rank-profile to your schema and save the XGBoost JSON (the side file FILE.xgboost.json) as models/{file} in the application package; each feature name must be a Vespa rank feature (e.g. bm25(title), attribute(pagerank)) — name them so with --feature-names"),
    );
    notes.push("thresholds: Vespa compares `value < split_condition` in double; each split_condition is the next float32 above the raw threshold, so float32 feature values split exactly as `value <= threshold` (a double feature between the threshold and that float can differ); tree weights are multiplied into the leaves, the base score is a first one-leaf tree".into());
    let mut profile = String::from("# Exported by ltr.\n");
    for n in &notes[1..] {
        let _ = writeln!(profile, "# {}", n.replace('\n', " "));
    }
    let _ = write!(
        profile,
        "rank-profile {} inherits default {{\n    first-phase {{\n        expression: xgboost(\"{file}\")\n    }}\n}}\n",
        opts.name
    );
    let trees = xgboost_trees(model, f, target)?;
    Ok(Exported {
        model: profile,
        binary: None,
        feature_store: None,
        side_files: vec![(".xgboost.json".into(), format!("{trees:#}\n").into_bytes())],
        notes,
    })
}

/// Elasticsearch 8's `PUT _ml/trained_models/<name>` body: a `tree_ensemble` (`ensemble` of `tree`s, each
/// `tree_structure` node `node_index`, `split_feature`, `threshold`, `decision_type` `lte`, `default_left`,
/// `left_child`, `right_child` or `leaf_value`), tree weights in `aggregate_output.weighted_sum`, and a
/// `learning_to_rank` inference config with one placeholder query extractor per feature.
fn es8(model: &ModelFile, f: &RawForest, target: Target, opts: &ExportOptions) -> Result<Exported> {
    let names: Vec<String> = f.features.iter().map(|&k| model.feature_name(k)).collect();
    let column = |k: usize| f.features.binary_search(&k).expect("collected above");
    let trees: Vec<Value> = f
        .trees
        .iter()
        .map(|t| {
            let nodes: Vec<Value> = t
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| match *n {
                    RawNode::Leaf(v) => json!({"node_index": i, "leaf_value": [v]}),
                    RawNode::Split {
                        feature,
                        threshold,
                        left,
                        right,
                        ..
                    } => json!({
                        "node_index": i,
                        "split_feature": column(feature),
                        "threshold": threshold_json(threshold),
                        "decision_type": "lte",
                        "default_left": zero_goes_left(threshold),
                        "left_child": left,
                        "right_child": right,
                    }),
                })
                .collect();
            json!({"tree": {
                "feature_names": names,
                "target_type": "regression",
                "tree_structure": nodes,
            }})
        })
        .collect();
    let weights: Vec<f64> = f.trees.iter().map(|t| t.weight).collect();
    let mut notes = missing_notes(
        f,
        target,
        opts,
        "Elasticsearch leaves a feature whose query does not match the document out of the feature map, and each split's default_left, written as the side raw value 0 goes, takes it",
        "a NaN value is missing too and follows default_left, i.e. goes where 0 goes",
        NanRoute::ZeroSide,
    )?;
    notes.insert(0, format!("upload: PUT _ml/trained_models/{} with this body after replacing each feature's placeholder query; rescore with {{\"learning_to_rank\": {{\"model_id\": \"{}\", \"params\": {{\"query\": ...}}}}}}", opts.name, opts.name));
    notes.push("thresholds: Elasticsearch sends `value <= threshold` (decision_type lte) left in double; each threshold is the exact float32 raw threshold (the stored normalisation carried into it), so float32 scores split as in `ltr predict`; tree weights are the ensemble's weighted_sum weights, the base score a first one-leaf tree".into());
    let extractors: Vec<Value> = f
        .features
        .iter()
        .zip(&names)
        .map(|(k, n)| {
            json!({"query_extractor": {
                "feature_name": n,
                "query": {"query_string": {"query": format!("TODO: the query whose score is feature {k} (`{n}`), e.g. a match on {{{{query}}}}")}},
            }})
        })
        .collect();
    let body = json!({
        "description": format!("Exported by ltr from a {} model. {}", model.algorithm, notes[1..].join(". ")),
        "input": {"field_names": names},
        "inference_config": {"learning_to_rank": {"feature_extractors": extractors}},
        "definition": {"trained_model": {"ensemble": {
            "feature_names": names,
            "target_type": "regression",
            "aggregate_output": {"weighted_sum": {"weights": weights}},
            "trained_models": trees,
        }}},
    });
    Ok(Exported {
        model: format!("{body:#}\n"),
        binary: None,
        feature_store: None,
        side_files: Vec::new(),
        notes,
    })
}
