//! XGBoost JSON models (`booster.save_model("m.json")`, or `"m.ubj"`: the same document in UBJSON, decoded by
//! `ubjson.rs`), read into an exact [`Forest`] (see `import.rs` for the split rules).
//!
//! Read: `gbtree` and `dart` boosters (dart trees weigh their `weight_drop`), numerical splits, one output. A leaf's
//! output is its `split_conditions` entry (XGBoost keeps the leaf value there; `base_weights` hold the weights before
//! the learning rate). The base margin is `base_score` as XGBoost turns it into a margin: the logit for the
//! logistic objectives, the value itself otherwise. Refused, naming the file and the JSON path: categorical splits,
//! multi-class or multi-target models, `gblinear`, objectives other than [`XGBOOST_OBJECTIVES`], malformed files.

use serde_json::Value;

use ltr_core::{Forest, ModelFile};

use crate::foreign_tree::{bad, f32_below, model_file, Child, RawNode, RawTree, Test};
use crate::Result;

/// The XGBoost objectives whose models are read (their margins rank; the logistic ones are read as their margin,
/// before the sigmoid, which ranks the same).
pub const XGBOOST_OBJECTIVES: &[&str] = &[
    "rank:ndcg",
    "rank:pairwise",
    "rank:map",
    "reg:squarederror",
    "reg:logistic",
    "binary:logistic",
    "binary:logitraw",
];

/// Parse an XGBoost JSON model; `source` names it in errors.
pub fn read_xgboost(text: &str, source: &str) -> Result<ModelFile> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| bad(source, format!("invalid JSON: {e}")))?;
    from_value(&v, source)
}

/// Parse an XGBoost UBJSON model (`booster.save_model("m.ubj")`, XGBoost ≥ 2), the JSON model in Universal Binary
/// JSON; `source` names it in errors.
pub fn read_xgboost_ubjson(bytes: &[u8], source: &str) -> Result<ModelFile> {
    let v = crate::ubjson::decode(bytes).map_err(|e| bad(source, e))?;
    if v.get("learner").is_none() {
        return Err(bad(
            source,
            "a UBJSON document without `learner` is not an XGBoost model",
        ));
    }
    let mut m = from_value(&v, source)?;
    m.params
        .insert("source_format".into(), "xgboost-ubjson".into());
    Ok(m)
}

/// `v[path…]`, or an error naming the path.
fn at<'a>(v: &'a Value, path: &[&str], source: &str) -> Result<&'a Value> {
    let mut cur = v;
    for (i, k) in path.iter().enumerate() {
        cur = cur
            .get(k)
            .ok_or_else(|| bad(source, format!("`{}` is missing", path[..=i].join("."))))?;
    }
    Ok(cur)
}

/// A number XGBoost may write as a JSON number or a string (`"8"`, `"5E-1"`, `"[5E-1]"`).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s
            .trim()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim()
            .parse()
            .ok(),
        _ => None,
    }
}

pub(crate) fn from_value(v: &Value, source: &str) -> Result<ModelFile> {
    let param =
        |k: &str| -> Result<&Value> { at(v, &["learner", "learner_model_param", k], source) };
    let num_param = |k: &str| -> Result<f64> {
        number(param(k)?).ok_or_else(|| {
            bad(
                source,
                format!("`learner.learner_model_param.{k}` is not a number"),
            )
        })
    };
    let objective = at(v, &["learner", "objective", "name"], source)?
        .as_str()
        .unwrap_or_default()
        .to_string();
    if !XGBOOST_OBJECTIVES.contains(&objective.as_str()) {
        return Err(bad(
            source,
            format!(
                "XGBoost objective `{objective}` is not read (accepted: {})",
                XGBOOST_OBJECTIVES.join(", ")
            ),
        ));
    }
    let num_class = num_param("num_class")?;
    let num_target = if param("num_target").is_ok() {
        num_param("num_target")?
    } else {
        1.0
    };
    if num_class > 1.0 || num_target > 1.0 {
        return Err(bad(
            source,
            format!(
                "a multi-class or multi-target XGBoost model (num_class={num_class}, num_target={num_target}) is not \
                 read: ranking needs one score per document"
            ),
        ));
    }
    let num_feature = num_param("num_feature")?;
    if !(1.0..=f64::from(u32::MAX)).contains(&num_feature) || num_feature.fract() != 0.0 {
        return Err(bad(
            source,
            format!("num_feature={num_feature} is not a feature count"),
        ));
    }
    let n_features = num_feature as usize;
    // base_score: one value (XGBoost ≥ 2 writes a bracketed list, one per target).
    let base_raw = param("base_score")?;
    let base_text = base_raw
        .as_str()
        .map_or_else(|| base_raw.to_string(), str::to_string);
    if base_text.contains(',') {
        return Err(bad(
            source,
            format!("base_score `{base_text}` has several values (a multi-target model)"),
        ));
    }
    let base = number(base_raw)
        .map(|b| b as f32)
        .filter(|b| b.is_finite())
        .ok_or_else(|| bad(source, format!("base_score `{base_text}` is not a number")))?;
    let base_margin = if matches!(objective.as_str(), "reg:logistic" | "binary:logistic") {
        if !(base > 0.0 && base < 1.0) {
            return Err(bad(
                source,
                format!("base_score {base} of a logistic objective is not in (0, 1)"),
            ));
        }
        // The logit, in f32 as XGBoost computes it.
        -(1.0f32 / base - 1.0).ln()
    } else {
        base
    };
    let booster = at(v, &["learner", "gradient_booster"], source)?;
    let name = booster
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (model, model_path, weights) = match name {
        "gbtree" => (at(booster, &["model"], source)?, "learner.gradient_booster.model", None),
        "dart" => {
            let w = booster
                .get("weight_drop")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(source, "`learner.gradient_booster.weight_drop` is missing"))?;
            let w = w
                .iter()
                .map(|x| number(x).filter(|x| x.is_finite()))
                .collect::<Option<Vec<f64>>>()
                .ok_or_else(|| bad(source, "`learner.gradient_booster.weight_drop` holds a non-number"))?;
            (
                at(booster, &["gbtree", "model"], source)?,
                "learner.gradient_booster.gbtree.model",
                Some(w),
            )
        }
        other => {
            return Err(bad(
                source,
                format!("XGBoost booster `{other}` is not read (gbtree and dart are): it is not a tree model"),
            ))
        }
    };
    let trees = model
        .get("trees")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            bad(
                source,
                format!("`{model_path}.trees` is missing or not a list"),
            )
        })?;
    if let Some(info) = model.get("tree_info").and_then(Value::as_array) {
        if info.iter().any(|g| number(g) != Some(0.0)) {
            return Err(bad(
                source,
                "trees for several outputs (a multi-class model) are not read",
            ));
        }
    }
    if let Some(w) = &weights {
        if w.len() != trees.len() {
            return Err(bad(
                source,
                format!("{} dart weights for {} trees", w.len(), trees.len()),
            ));
        }
    }
    let mut forest_trees = Vec::with_capacity(trees.len());
    for (k, t) in trees.iter().enumerate() {
        let path = format!("{model_path}.trees[{k}]");
        let raw = tree(t, &path).map_err(|p| bad(source, p))?;
        let weight = weights.as_ref().map_or(1.0, |w| w[k]);
        forest_trees.push(
            raw.to_forest(weight, n_features)
                .map_err(|p| bad(source, format!("{path}: {p}")))?,
        );
    }
    let n_trees = forest_trees.len();
    let forest = Forest {
        trees: forest_trees,
        base_score: f64::from(base_margin),
        n_features,
    };
    let version = v
        .get("version")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(".")
        })
        .unwrap_or_default();
    let names = v
        .get("learner")
        .and_then(|l| l.get("feature_names"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    model_file(
        &format!("xgboost-{objective}"),
        vec![
            ("source_format", "xgboost-json".to_string()),
            ("xgboost_version", version),
            ("objective", objective.clone()),
            ("base_score", base_text),
            ("booster", name.to_string()),
            ("trees", n_trees.to_string()),
        ],
        forest,
        names,
        source,
    )
}

/// One XGBoost tree as a source tree, walked from the root (nodes that no split reaches are left out).
fn tree(t: &Value, path: &str) -> std::result::Result<RawTree, String> {
    let list = |key: &str| -> std::result::Result<&Vec<Value>, String> {
        t.get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{path}.{key} is missing or not a list"))
    };
    let n: usize = t
        .get("tree_param")
        .and_then(|p| p.get("num_nodes"))
        .and_then(number)
        .filter(|n| *n >= 1.0 && n.fract() == 0.0)
        .ok_or_else(|| {
            format!("{path}.tree_param.num_nodes is missing or not a positive integer")
        })? as usize;
    if let Some(s) = t
        .get("tree_param")
        .and_then(|p| p.get("size_leaf_vector"))
        .and_then(number)
    {
        if s > 1.0 {
            return Err(format!(
                "{path}: vector leaves (size_leaf_vector={s}, a multi-target tree) are not read"
            ));
        }
    }
    let ints = |key: &str| -> std::result::Result<Vec<i64>, String> {
        let a = list(key)?;
        if a.len() != n {
            return Err(format!(
                "{path}.{key} has {} entries, not num_nodes={n}",
                a.len()
            ));
        }
        a.iter()
            .map(|x| match x {
                Value::Bool(b) => Some(i64::from(*b)),
                _ => x.as_i64(),
            })
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(|| format!("{path}.{key} holds a non-integer"))
    };
    let left = ints("left_children")?;
    let right = ints("right_children")?;
    let feature = ints("split_indices")?;
    let default_left = ints("default_left")?;
    let split_type = if t.get("split_type").is_some() {
        ints("split_type")?
    } else {
        vec![0; n]
    };
    let cond = list("split_conditions")?;
    if cond.len() != n {
        return Err(format!(
            "{path}.split_conditions has {} entries, not num_nodes={n}",
            cond.len()
        ));
    }
    let cond = cond
        .iter()
        .map(|x| x.as_f64().map(|x| x as f32))
        .collect::<Option<Vec<f32>>>()
        .ok_or_else(|| format!("{path}.split_conditions holds a non-number"))?;
    let mut raw = RawTree::default();
    let mut seen = vec![false; n];
    let mut stack: Vec<(i64, Option<(usize, bool)>)> = vec![(0, None)];
    while let Some((i, slot)) = stack.pop() {
        let node = usize::try_from(i)
            .ok()
            .filter(|&i| i < n && !std::mem::replace(&mut seen[i], true))
            .ok_or_else(|| format!("{path}: child {i} is out of range or reached twice"))?;
        let child = if left[node] == -1 {
            if right[node] != -1 {
                return Err(format!(
                    "{path}: node {node} has a right child but no left one"
                ));
            }
            raw.leaves.push(f64::from(cond[node]));
            Child::Leaf(raw.leaves.len() - 1)
        } else {
            if split_type[node] != 0 {
                return Err(format!(
                    "{path}: node {node} is a categorical split, which is not read here (train with numerical features)"
                ));
            }
            let f = u32::try_from(feature[node])
                .map_err(|_| format!("{path}: node {node} has feature {}", feature[node]))?;
            let t = f32_below(cond[node]).ok_or_else(|| {
                format!(
                    "{path}: node {node} has threshold {}, which `<` cannot be written as `<=` for",
                    cond[node]
                )
            })?;
            let at = raw.nodes.len();
            raw.nodes.push(RawNode {
                feature: f,
                test: Test::Le {
                    t,
                    default_left: default_left[node] != 0,
                },
                left: Child::Leaf(0),
                right: Child::Leaf(0),
            });
            stack.push((right[node], Some((at, false))));
            stack.push((left[node], Some((at, true))));
            Child::Node(at)
        };
        if let Some((p, is_left)) = slot {
            if is_left {
                raw.nodes[p].left = child;
            } else {
                raw.nodes[p].right = child;
            }
        }
    }
    Ok(raw)
}
