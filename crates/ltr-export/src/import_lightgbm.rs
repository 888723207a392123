//! LightGBM models: the text of `booster.save_model("m.txt")` and the JSON of `booster.dump_model()`, read into an
//! exact [`Forest`] (see `import.rs` for the split rules).
//!
//! Read: one tree per iteration (`num_class=1`), numerical splits of any missing type, `average_output` (random
//! forest mode: each tree weighs 1/T). Leaf values already carry the learning rate (`shrinkage`). Refused, naming
//! the file and the line (or JSON path): categorical splits, linear trees, multi-class models, objectives other
//! than [`LIGHTGBM_OBJECTIVES`], and malformed or truncated files.

use serde_json::Value;

use ltr_core::{Forest, ModelFile};

use crate::foreign_tree::{bad, f32_at_most, model_file, Child, RawNode, RawTree, Test};
use crate::Result;

/// The LightGBM objectives whose models are read (their raw scores rank; `binary` is read as its margin, before the
/// sigmoid, which ranks the same).
pub const LIGHTGBM_OBJECTIVES: &[&str] = &[
    "lambdarank",
    "rank_xendcg",
    "regression",
    "regression_l1",
    "huber",
    "binary",
];

/// What the model header says.
struct Header {
    version: String,
    objective: String,
    num_class: i64,
    per_iteration: i64,
    max_feature_idx: i64,
    average_output: bool,
    feature_names: Vec<String>,
}

fn finish(h: Header, trees: Vec<RawTree>, source: &str, format: &str) -> Result<ModelFile> {
    if h.num_class != 1 || h.per_iteration != 1 {
        return Err(bad(
            source,
            format!(
                "a multi-class LightGBM model (num_class={}, num_tree_per_iteration={}) is not read: ranking needs \
                 one score per document",
                h.num_class, h.per_iteration
            ),
        ));
    }
    let objective = h.objective.split_whitespace().next().unwrap_or_default();
    if !LIGHTGBM_OBJECTIVES.contains(&objective) {
        return Err(bad(
            source,
            format!(
                "LightGBM objective `{}` is not read (accepted: {})",
                h.objective,
                LIGHTGBM_OBJECTIVES.join(", ")
            ),
        ));
    }
    if !(0..=i64::from(u32::MAX)).contains(&h.max_feature_idx) {
        return Err(bad(
            source,
            format!("max_feature_idx={} is out of range", h.max_feature_idx),
        ));
    }
    let n_features = h.max_feature_idx as usize + 1;
    let weight = if h.average_output {
        1.0 / trees.len().max(1) as f64
    } else {
        1.0
    };
    let trees = trees
        .iter()
        .enumerate()
        .map(|(k, t)| {
            t.to_forest(weight, n_features)
                .map_err(|p| bad(source, format!("Tree={k}: {p}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let n_trees = trees.len();
    let forest = Forest {
        trees,
        base_score: 0.0,
        n_features,
    };
    model_file(
        &format!("lightgbm-{objective}"),
        vec![
            ("source_format", format.to_string()),
            ("lightgbm_version", h.version),
            ("objective", h.objective.clone()),
            ("trees", n_trees.to_string()),
            ("average_output", h.average_output.to_string()),
        ],
        forest,
        h.feature_names,
        source,
    )
}

/// The test of a numerical split with `decision_type` bits (1: categorical, 2: default left, 4·m: missing type m,
/// 0 None, 1 Zero, 2 NaN) and threshold `t`.
fn test(decision_type: i64, t: f64) -> std::result::Result<Test, String> {
    if decision_type & 1 != 0 {
        return Err("a categorical split (not read here: train with numerical features)".into());
    }
    if !(0..16).contains(&decision_type) {
        return Err(format!(
            "decision_type {decision_type} is not a LightGBM decision type"
        ));
    }
    let default_left = decision_type & 2 != 0;
    let t32 = f32_at_most(t).ok_or("a NaN threshold")?;
    Ok(match (decision_type >> 2) & 3 {
        // A NaN is scored as 0.
        0 => Test::Le {
            t: t32,
            default_left: 0.0 <= t,
        },
        1 => Test::ZeroBand {
            t: t32,
            default_left,
        },
        2 => Test::Le {
            t: t32,
            default_left,
        },
        m => return Err(format!("missing type {m} is not a LightGBM missing type")),
    })
}

fn child(c: i64, n_leaves: usize) -> std::result::Result<Child, String> {
    let out = || format!("child {c} is out of range for {n_leaves} leaves");
    if c < 0 {
        let l = usize::try_from(!c).map_err(|_| out())?;
        (l < n_leaves).then_some(Child::Leaf(l)).ok_or_else(out)
    } else {
        let k = c as usize;
        (k + 1 < n_leaves).then_some(Child::Node(k)).ok_or_else(out)
    }
}

/// A `key=value` line: its number, key and value.
type KeyLine<'a> = (usize, &'a str, &'a str);

/// Parse LightGBM model text (`save_model`); `source` names it in errors.
pub fn read_lightgbm(text: &str, source: &str) -> Result<ModelFile> {
    let at = |line: usize, p: String| bad(source, format!("line {line}: {p}"));
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')));
    match lines.next() {
        Some((_, "tree")) => {}
        _ => return Err(bad(source, "line 1: a LightGBM model starts with `tree`")),
    }
    // Header: `key=value` lines (and `average_output`) up to the first `Tree=`.
    let mut header: Vec<KeyLine<'_>> = Vec::new();
    let mut tree_blocks: Vec<(usize, Vec<KeyLine<'_>>)> = Vec::new();
    let mut ended = false;
    let mut last = 1;
    for (no, line) in lines.by_ref() {
        last = no;
        if line == "end of trees" {
            ended = true;
            break;
        }
        if line.is_empty() {
            continue;
        }
        let (k, v) = line.split_once('=').unwrap_or((line, ""));
        if k == "Tree" {
            let want = tree_blocks.len().to_string();
            if v != want {
                return Err(at(no, format!("`{line}` where `Tree={want}` was expected")));
            }
            tree_blocks.push((no, Vec::new()));
        } else if let Some((_, kv)) = tree_blocks.last_mut() {
            kv.push((no, k, v));
        } else {
            header.push((no, k, v));
        }
    }
    if !ended {
        return Err(bad(
            source,
            format!("truncated: no `end of trees` line after line {last}"),
        ));
    }
    let get = |key: &str| {
        header
            .iter()
            .find(|(_, k, _)| *k == key)
            .map(|&(no, _, v)| (no, v))
    };
    let int = |key: &str| -> Result<i64> {
        let (no, v) =
            get(key).ok_or_else(|| bad(source, format!("no `{key}=` line in the header")))?;
        v.trim()
            .parse()
            .map_err(|_| at(no, format!("{key}=`{v}` is not an integer")))
    };
    let h = Header {
        version: get("version")
            .map(|(_, v)| v.to_string())
            .unwrap_or_default(),
        objective: get("objective")
            .map(|(_, v)| v.to_string())
            .ok_or_else(|| {
                bad(
                    source,
                    format!(
                        "no `objective=` line (a custom objective?): the objectives read are {}",
                        LIGHTGBM_OBJECTIVES.join(", ")
                    ),
                )
            })?,
        num_class: int("num_class")?,
        per_iteration: int("num_tree_per_iteration")?,
        max_feature_idx: int("max_feature_idx")?,
        average_output: get("average_output").is_some(),
        feature_names: get("feature_names")
            .map(|(_, v)| v.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default(),
    };
    if let Some((no, sizes)) = get("tree_sizes") {
        let n = sizes.split_whitespace().count();
        if n != tree_blocks.len() {
            return Err(at(
                no,
                format!(
                    "tree_sizes lists {n} trees but {} were found (truncated?)",
                    tree_blocks.len()
                ),
            ));
        }
    }
    if tree_blocks.is_empty() {
        return Err(bad(source, "no trees"));
    }
    let mut trees = Vec::with_capacity(tree_blocks.len());
    for (k, (tree_line, kv)) in tree_blocks.iter().enumerate() {
        let field = |key: &str| {
            kv.iter()
                .find(|(_, k, _)| *k == key)
                .map(|&(no, _, v)| (no, v))
        };
        let need = |key: &str| {
            field(key).ok_or_else(|| at(*tree_line, format!("Tree={k} has no `{key}=` line")))
        };
        let array = |key: &str, len: usize| -> Result<(usize, Vec<f64>)> {
            let (no, v) = need(key)?;
            let xs = v
                .split_whitespace()
                .map(|s| {
                    s.parse::<f64>()
                        .map_err(|_| at(no, format!("{key}: `{s}` is not a number")))
                })
                .collect::<Result<Vec<f64>>>()?;
            if xs.len() != len {
                return Err(at(
                    no,
                    format!("{key} has {} values, not {len} (truncated?)", xs.len()),
                ));
            }
            Ok((no, xs))
        };
        let (no, v) = need("num_leaves")?;
        let n_leaves: usize = v
            .trim()
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| at(no, format!("num_leaves=`{v}` is not a positive integer")))?;
        if let Some((no, v)) = field("num_cat") {
            if v.trim() != "0" {
                return Err(at(
                    no,
                    format!(
                        "Tree={k} has categorical splits (num_cat={v}), which are not read here"
                    ),
                ));
            }
        }
        if let Some((no, v)) = field("is_linear") {
            if v.trim() != "0" {
                return Err(at(
                    no,
                    format!("Tree={k} is a linear tree (linear_tree=true), which is not read here"),
                ));
            }
        }
        let (_, leaves) = array("leaf_value", n_leaves)?;
        let mut raw = RawTree {
            nodes: Vec::with_capacity(n_leaves - 1),
            leaves,
        };
        if n_leaves > 1 {
            let m = n_leaves - 1;
            let (fno, feat) = array("split_feature", m)?;
            let (tno, thr) = array("threshold", m)?;
            let (dno, dt) = array("decision_type", m)?;
            let (lno, left) = array("left_child", m)?;
            let (rno, right) = array("right_child", m)?;
            for (no, key, xs) in [
                (dno, "decision_type", &dt),
                (lno, "left_child", &left),
                (rno, "right_child", &right),
            ] {
                if let Some(x) = xs.iter().find(|x| x.fract() != 0.0) {
                    return Err(at(no, format!("{key}: `{x}` is not an integer")));
                }
            }
            for i in 0..m {
                let f = feat[i];
                if f.fract() != 0.0 || !(0.0..=f64::from(u32::MAX)).contains(&f) {
                    return Err(at(fno, format!("split_feature {f} is not a feature index")));
                }
                let test = test(dt[i] as i64, thr[i]).map_err(|p| {
                    at(
                        if dt[i] as i64 & 1 != 0 { dno } else { tno },
                        format!("Tree={k} split {i}: {p}"),
                    )
                })?;
                raw.nodes.push(RawNode {
                    feature: f as u32,
                    test,
                    left: child(left[i] as i64, n_leaves).map_err(|p| at(lno, p))?,
                    right: child(right[i] as i64, n_leaves).map_err(|p| at(rno, p))?,
                });
            }
        }
        trees.push(raw);
    }
    finish(h, trees, source, "lightgbm-text")
}

/// Parse the JSON of LightGBM's `dump_model()`; `source` names it in errors.
pub fn read_lightgbm_json(text: &str, source: &str) -> Result<ModelFile> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| bad(source, format!("invalid JSON: {e}")))?;
    from_json_value(&v, source)
}

pub(crate) fn from_json_value(v: &Value, source: &str) -> Result<ModelFile> {
    let int = |key: &str| {
        v.get(key)
            .and_then(Value::as_i64)
            .ok_or_else(|| bad(source, format!("`{key}` is missing or not an integer")))
    };
    let h = Header {
        version: v
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        objective: v
            .get("objective")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                bad(
                    source,
                    format!(
                        "no `objective` (a custom objective?): the objectives read are {}",
                        LIGHTGBM_OBJECTIVES.join(", ")
                    ),
                )
            })?
            .to_string(),
        num_class: int("num_class")?,
        per_iteration: int("num_tree_per_iteration")?,
        max_feature_idx: int("max_feature_idx")?,
        average_output: v
            .get("average_output")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        feature_names: v
            .get("feature_names")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|s| s.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default(),
    };
    let infos = v
        .get("tree_info")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(source, "`tree_info` is missing or not a list"))?;
    if infos.is_empty() {
        return Err(bad(source, "no trees"));
    }
    let mut trees = Vec::with_capacity(infos.len());
    for (k, info) in infos.iter().enumerate() {
        let path = format!("tree_info[{k}].tree_structure");
        let root = info
            .get("tree_structure")
            .ok_or_else(|| bad(source, format!("`{path}` is missing")))?;
        let mut raw = RawTree::default();
        json_node(root, &mut raw, &path).map_err(|p| bad(source, p))?;
        trees.push(raw);
    }
    finish(h, trees, source, "lightgbm-json")
}

/// Append the subtree at `n` (nodes in pre-order, leaves in the order met) and return its child reference.
fn json_node(n: &Value, raw: &mut RawTree, path: &str) -> std::result::Result<Child, String> {
    if let Some(v) = n.get("leaf_value") {
        let v = v
            .as_f64()
            .ok_or_else(|| format!("{path}.leaf_value is not a number"))?;
        raw.leaves.push(v);
        return Ok(Child::Leaf(raw.leaves.len() - 1));
    }
    let field = |key: &str| n.get(key).ok_or_else(|| format!("{path}.{key} is missing"));
    let decision = field("decision_type")?.as_str().unwrap_or_default();
    if decision != "<=" {
        return Err(format!(
            "{path}: decision_type `{decision}` (a categorical split) is not read here: train with numerical features"
        ));
    }
    let feature = field("split_feature")?
        .as_u64()
        .filter(|f| *f <= u64::from(u32::MAX))
        .ok_or_else(|| format!("{path}.split_feature is not a feature index"))?;
    let t = field("threshold")?
        .as_f64()
        .ok_or_else(|| format!("{path}.threshold is not a number"))?;
    let default_left = field("default_left")?
        .as_bool()
        .ok_or_else(|| format!("{path}.default_left is not true or false"))?;
    let missing = match field("missing_type")?.as_str() {
        Some("None") => 0,
        Some("Zero") => 1,
        Some("NaN") => 2,
        other => {
            return Err(format!(
                "{path}.missing_type {other:?} is not None, Zero or NaN"
            ))
        }
    };
    let test = test(missing * 4 + if default_left { 2 } else { 0 }, t)
        .map_err(|p| format!("{path}: {p}"))?;
    let at = raw.nodes.len();
    raw.nodes.push(RawNode {
        feature: feature as u32,
        test,
        left: Child::Leaf(0),
        right: Child::Leaf(0),
    });
    let left = json_node(field("left_child")?, raw, &format!("{path}.left_child"))?;
    let right = json_node(field("right_child")?, raw, &format!("{path}.right_child"))?;
    raw.nodes[at].left = left;
    raw.nodes[at].right = right;
    Ok(Child::Node(at))
}
