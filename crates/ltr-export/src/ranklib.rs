//! Reading RankLib model files (Coordinate Ascent, AdaRank, MART, LambdaMART, Random Forests), so that models trained
//! with RankLib can be scored, evaluated and compared here.

use std::path::Path;

use ltr_core::{LinearModel, Model, ModelFile, TrainingSummary, Tree, TreeEnsemble, TreeNode};

use crate::{ExportError, Result};

fn bad(source: &str, problem: impl Into<String>) -> ExportError {
    ExportError::Read {
        file: source.to_string(),
        problem: problem.into(),
    }
}

/// A model file of either kind: an `ltr` model, or a RankLib model (its first line starts with `##`).
pub fn load_model(path: &Path) -> Result<ModelFile> {
    let head = std::fs::read(path)
        .map_err(|e| bad(&path.display().to_string(), format!("cannot read: {e}")))?;
    if head.starts_with(b"##") {
        let text = String::from_utf8(head).map_err(|_| {
            bad(
                &path.display().to_string(),
                "a RankLib model must be UTF-8 text",
            )
        })?;
        read_ranklib(&text, &path.display().to_string())
    } else {
        ModelFile::load(path).map_err(|e| ExportError::Model(e.to_string()))
    }
}

/// Parse a RankLib model; `source` names it in errors.
pub fn read_ranklib(text: &str, source: &str) -> Result<ModelFile> {
    let first = text.lines().next().unwrap_or_default().trim();
    let kind = first.trim_start_matches('#').trim();
    let (algorithm, model, n_features) = match kind {
        "Coordinate Ascent" => {
            let (w, d) = weight_line(text, source, Repeated::Last)?;
            ("ranklib-coordinate-ascent", Model::Linear(LinearModel::new(w)), d)
        }
        // AdaRank's weak rankers are single features with weights α, a feature once per round it was chosen:
        // RankLib scores Σ_t α_t·x_{f_t}, the linear model whose weight of f is the sum of its α (equal up to the
        // order of the additions).
        "AdaRank" => {
            let (w, d) = weight_line(text, source, Repeated::Sum)?;
            ("ranklib-adarank", Model::Linear(LinearModel::new(w)), d)
        }
        "MART" | "LambdaMART" | "Random Forests" => {
            // The XML starts after the `##` header lines (whose comments may contain `<`).
            let mut body = 0;
            for line in text.split_inclusive('\n') {
                if !line.trim_start().starts_with("##") {
                    break;
                }
                body += line.len();
            }
            let xml_start = text[body..]
                .find('<')
                .map(|p| body + p)
                .ok_or_else(|| bad(source, "no <ensemble> after the header"))?;
            let trees = if kind == "Random Forests" {
                forest(&text[xml_start..], source)?
            } else {
                ensemble(&text[xml_start..], source)?
            };
            let d = trees
                .iter()
                .flat_map(|t| t.nodes.iter())
                .filter_map(|n| match n {
                    TreeNode::Split { feature, .. } => Some(feature + 1),
                    TreeNode::Leaf { .. } => None,
                })
                .max()
                .unwrap_or(1);
            let algorithm = match kind {
                "MART" => "ranklib-mart",
                "LambdaMART" => "ranklib-lambdamart",
                _ => "ranklib-random-forests",
            };
            (algorithm, Model::Trees(TreeEnsemble { trees, n_features: d }), d)
        }
        other => {
            return Err(bad(
                source,
                format!("line 1: RankLib ranker `{other}` is not read here (Coordinate Ascent, AdaRank, MART, LambdaMART and Random Forests are)"),
            ))
        }
    };
    Ok(ModelFile::new(
        algorithm,
        Default::default(),
        TrainingSummary {
            train_file: source.to_string(),
            features: n_features,
            ..Default::default()
        },
        model,
    ))
}

/// What a feature named twice on a weight line means.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Repeated {
    /// The last weight holds (RankLib's Coordinate Ascent loader fills an array by feature).
    Last,
    /// The weights add up (AdaRank: one weak ranker per round).
    Sum,
}

/// The `k:w` line of a linear RankLib model (RankLib writes one, after the `##` lines).
fn weight_line(text: &str, source: &str, repeated: Repeated) -> Result<(Vec<f64>, usize)> {
    let (line_no, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with("##"))
        .ok_or_else(|| bad(source, "no weight line (`1:w1 2:w2 ...`)"))?;
    let mut pairs = Vec::new();
    for tok in line.split_whitespace() {
        let err = || {
            bad(
                source,
                format!("line {}: `{tok}` is not feature:weight", line_no + 1),
            )
        };
        let (k, w) = tok.split_once(':').ok_or_else(err)?;
        let k: usize = k.parse().map_err(|_| err())?;
        let w: f64 = w.parse().map_err(|_| err())?;
        if k == 0 || !w.is_finite() {
            return Err(err());
        }
        pairs.push((k, w));
    }
    let d = pairs.iter().map(|(k, _)| *k).max().unwrap_or(0);
    if d == 0 {
        return Err(bad(source, format!("line {}: no weights", line_no + 1)));
    }
    let mut w = vec![0.0; d];
    for (k, v) in pairs {
        match repeated {
            Repeated::Last => w[k - 1] = v,
            Repeated::Sum => w[k - 1] += v,
        }
    }
    Ok((w, d))
}

/// A Random Forest: one `<ensemble>` per bag, one after the other (not one XML document). RankLib scores the mean of
/// the bags' scores, so every tree is kept with its weight divided by the number of bags.
fn forest(xml: &str, source: &str) -> Result<Vec<Tree>> {
    let mut bags: Vec<Vec<Tree>> = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<ensemble") {
        let end = rest[start..]
            .find("</ensemble>")
            .map(|e| start + e + "</ensemble>".len())
            .ok_or_else(|| bad(source, format!("bag {} has no </ensemble>", bags.len() + 1)))?;
        bags.push(ensemble(&rest[start..end], source)?);
        rest = &rest[end..];
    }
    if bags.is_empty() {
        return Err(bad(source, "a Random Forest without an <ensemble>"));
    }
    if !rest.trim().is_empty() {
        return Err(bad(source, "text after the last </ensemble>"));
    }
    let n = bags.len() as f64;
    Ok(bags
        .into_iter()
        .flatten()
        .map(|t| Tree {
            weight: t.weight / n,
            nodes: t.nodes,
        })
        .collect())
}

/// `<ensemble><tree id weight><split>…</split></tree>…</ensemble>`.
fn ensemble(xml: &str, source: &str) -> Result<Vec<Tree>> {
    let doc =
        roxmltree::Document::parse(xml).map_err(|e| bad(source, format!("ensemble XML: {e}")))?;
    let root = doc.root_element();
    if root.tag_name().name() != "ensemble" {
        return Err(bad(source, "the XML root is not <ensemble>"));
    }
    let mut trees = Vec::new();
    for t in root.children().filter(|n| n.has_tag_name("tree")) {
        let weight: f64 = match t.attribute("weight") {
            None => 1.0,
            Some(w) => w
                .trim()
                .parse()
                .map_err(|_| bad(source, format!("tree weight `{w}` is not a number")))?,
        };
        let split = t
            .children()
            .find(|n| n.has_tag_name("split"))
            .ok_or_else(|| bad(source, "a <tree> without a <split>"))?;
        let mut nodes = Vec::new();
        node(split, &mut nodes, source, 0)?;
        trees.push(Tree { weight, nodes });
    }
    if trees.is_empty() {
        return Err(bad(source, "an <ensemble> without trees"));
    }
    Ok(trees)
}

fn child_text<'a>(n: roxmltree::Node<'a, '_>, tag: &str) -> Option<&'a str> {
    n.children()
        .find(|c| c.has_tag_name(tag))
        .and_then(|c| c.text())
        .map(str::trim)
}

/// Append the subtree at `n` in pre-order (a parent before its children) and return its index.
fn node(
    n: roxmltree::Node<'_, '_>,
    nodes: &mut Vec<TreeNode>,
    source: &str,
    depth: usize,
) -> Result<u32> {
    if depth > 256 {
        return Err(bad(source, "a tree deeper than 256 levels"));
    }
    let at = nodes.len() as u32;
    if let Some(v) = child_text(n, "output") {
        let value: f64 = v
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| bad(source, format!("leaf output `{v}` is not a finite number")))?;
        nodes.push(TreeNode::Leaf { value });
        return Ok(at);
    }
    let feature: usize = child_text(n, "feature")
        .and_then(|f| f.parse().ok())
        .filter(|f| *f >= 1)
        .ok_or_else(|| bad(source, "a split without a feature number >= 1"))?;
    let threshold: f32 = child_text(n, "threshold")
        .and_then(|t| t.parse().ok())
        .filter(|t: &f32| !t.is_nan())
        .ok_or_else(|| bad(source, "a split without a numeric threshold"))?;
    let side = |pos: &str| {
        n.children()
            .find(|c| c.has_tag_name("split") && c.attribute("pos") == Some(pos))
            .ok_or_else(|| bad(source, format!("a split without its `{pos}` branch")))
    };
    let (l, r) = (side("left")?, side("right")?);
    nodes.push(TreeNode::Leaf { value: 0.0 }); // placeholder until the children have indices
    let left = node(l, nodes, source, depth + 1)?;
    let right = node(r, nodes, source, depth + 1)?;
    nodes[at as usize] = TreeNode::Split {
        feature: feature - 1,
        threshold,
        left,
        right,
    };
    Ok(at)
}

/// Widen a model read from RankLib (algorithm `ranklib-…`) to the width of the data it scores: RankLib files only
/// list the features they use, and an absent feature has weight 0 or is never split on. Any other model is left as
/// it is, so every scorer of loaded models can call this before checking the data's width.
pub fn widen_to(model: &mut ModelFile, width: usize) {
    if width <= model.n_features || !model.algorithm.starts_with("ranklib-") {
        return;
    }
    match &mut model.model {
        Model::Linear(m) => m.weights.resize(width, 0.0),
        Model::Trees(t) => t.n_features = width,
        _ => return,
    }
    model.n_features = width;
}
