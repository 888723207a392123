//! ONNX (`--to onnx`): a model as an ONNX graph that onnxruntime (≥ 1.16) and other ONNX runtimes score.
//!
//! Input `features`, float32 `[N, F]`: column `k − 1` holds raw feature `k` (`F` = the raw width the model was
//! trained on); a feature a document lacks is 0, as `ltr predict` reads it. Output `scores`, float32 `[N, 1]`.
//!
//! - Tree models (`lambdamart`, `mart`, `random-forest`, LightGBM/XGBoost imports, RankLib ensembles, RankBoost's
//!   stumps as depth-1 trees) become one `ai.onnx.ml` `TreeEnsembleRegressor` after a `Cast` to double: the
//!   thresholds are the raw float32 thresholds of `forest.rs` (stored preprocessing carried into them exactly),
//!   compared `BRANCH_LEQ` — `ltr`'s own rule, so no threshold moves; a NaN follows each split's default direction
//!   (`nodes_missing_value_tracks_true`); tree weights are multiplied into `target_weights`, the base score is
//!   `base_values`. Double (the `*_as_tensor` attributes) makes onnxruntime add the leaves in double, as `ltr`
//!   does; only the output is rounded to float32.
//! - Neural networks (`neural`) become `Gather` → (the signed log1p, `Sign`·`Log`(1 + `Abs`), on the columns that
//!   take it, through `Where`) → `Cast` to double → `Sub`/`Div` (the stored z-score or min-max) →
//!   `Cast` to float32 (`ltr`'s preprocessed float32 values), then per layer `Gemm` (x·W + b), optionally
//!   `LayerNormalization` (ε 1e-5, the last axis), and `Relu`/`Tanh`/`Sigmoid`, then the output `Gemm`: float32
//!   throughout, as `ltr` scores, so scores agree to float32 rounding (the sums run in another order). A network
//!   with a self-attention encoder (`scorer=attention`) has it between the last hidden layer and the output
//!   (`onnx_encoder.rs`: `MatMul`/`Softmax`, allRank's norm written out); then the `N` rows of a call are the
//!   documents of one query.
//! - Linear models become `Gather` (the columns the model reads) → `Cast` to double → `Sub`/`Div` (the stored
//!   z-score or min-max, as `ltr` computes it) → `Cast` to float32, `Neg`, `Cast` back (`ltr` keeps a preprocessed
//!   value as a float32; the weights are negated) → `MatMul` with the weights → `Cast` to float32.

use ltr_core::{Forest, ForestTree, Model, ModelFile, TreeNode};
use ltr_data::Normalization;
use prost::Message;

use crate::forest::{raw_forest, RawForest, RawNode};
use crate::linear::linear_form;
use crate::onnx_pb as pb;
use crate::target::{ExportOptions, Exported, Target};
use crate::{ExportError, Result};

/// The ONNX IR version written: 8 (ONNX 1.10), which every onnxruntime since 1.10 loads.
const IR_VERSION: i64 = 8;
/// Opset of the default domain (`Cast`, `Gather`, `Sub`, `Div`, `MatMul`).
const OPSET: i64 = 13;
/// Opset of the default domain for a neural network (`LayerNormalization` is opset 17).
const NEURAL_OPSET: i64 = 17;
/// Opset of `ai.onnx.ml` (`TreeEnsembleRegressor` with the double `*_as_tensor` attributes).
const ML_OPSET: i64 = 3;
const ML: &str = "ai.onnx.ml";

fn refuse(reason: impl Into<String>) -> ExportError {
    ExportError::Unsupported {
        target: Target::Onnx.name().into(),
        reason: reason.into(),
    }
}

/// The graph's input: float32 `[N, F]`, raw feature `k` in column `k − 1`.
pub(crate) const INPUT: &str = "features";
/// The graph's output: float32 `[N, 1]`, one score a row.
pub(crate) const OUTPUT: &str = "scores";

/// The first note of every ONNX export: the input and output layout for `width` raw features.
pub(crate) fn layout_note(width: usize) -> String {
    format!("input `{INPUT}`: float32 [N, {width}], column k-1 = feature k (feature ids 1..{width}; a feature a document lacks is 0, as `ltr predict` reads it); output `{OUTPUT}`: float32 [N, 1]")
}

/// Export `model` as an ONNX model.
pub(crate) fn export_onnx(model: &ModelFile, opts: &ExportOptions) -> Result<Exported> {
    let width = crate::model_width(model);
    let (graph, mut notes) = match &model.model {
        Model::Linear(_) | Model::Aggregate(_) => linear_graph(model, width)?,
        Model::Forest(_) => tree_graph(model, width)?,
        Model::Boosted(_) => return Err(refuse("it is trees boosted from another model (init-model/init-algo), which no export target expresses as one model; export the start model and a model trained without init-… instead")),
        Model::Neural(net) => neural_graph(model, net, width)?,
        Model::Trees(_) | Model::Stumps(_) => {
            let mut as_forest = model.clone();
            as_forest.model = Model::Forest(to_forest(&model.model));
            tree_graph(&as_forest, width)?
        }
    };
    let names: Vec<String> = (1..=width).map(|k| model.feature_name(k)).collect();
    notes.insert(0, layout_note(width));
    if opts.fold_normalizer {
        notes.push("--fold-normalizer is ignored: the graph computes the stored normalisation itself, so its scores are `ltr predict`'s".into());
    }
    // LayerNormalization needs opset 17.
    let default_opset = match &model.model {
        Model::Neural(_) => NEURAL_OPSET,
        _ => OPSET,
    };
    let proto = pb::ModelProto {
        ir_version: IR_VERSION,
        opset_import: vec![opset("", default_opset), opset(ML, ML_OPSET)],
        producer_name: "ltr".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        doc_string: format!(
            "Exported by ltr from a {} model. {}",
            model.algorithm,
            notes.join(". ")
        ),
        graph: Some(pb::GraphProto {
            name: opts.name.clone(),
            input: vec![value_info(INPUT, width)],
            output: vec![value_info(OUTPUT, 1)],
            ..graph
        }),
        // Column k-1's name, as a JSON array.
        metadata_props: vec![pb::StringStringEntryProto {
            key: "feature_names".into(),
            value: serde_json::Value::from(names).to_string(),
        }],
        ..Default::default()
    };
    Ok(Exported {
        model: String::new(),
        binary: Some(proto.encode_to_vec()),
        feature_store: None,
        side_files: Vec::new(),
        notes,
    })
}

/// A RankLib ensemble or RankBoost's stumps as the equivalent forest: RankLib sends `v <= t` left and a NaN right
/// (`NaN <= t` is false); a stump adds its weight when `v > t`, so 0 on the left, its weight on the right, and a
/// NaN (which never fires) left.
fn to_forest(model: &Model) -> Forest {
    match model {
        Model::Trees(e) => Forest {
            trees: e.trees.iter().map(ranklib_tree).collect(),
            base_score: 0.0,
            n_features: e.n_features,
        },
        Model::Stumps(e) => Forest {
            trees: e
                .stumps
                .iter()
                .map(|s| ForestTree {
                    split_feature: vec![s.feature as u32],
                    threshold: vec![s.threshold],
                    default_left: vec![true],
                    left: vec![!0],
                    right: vec![!1],
                    leaf_value: vec![0.0, s.alpha],
                    weight: 1.0,
                    split_gain: Vec::new(),
                })
                .collect(),
            base_score: 0.0,
            n_features: e.n_features,
        },
        _ => unreachable!("only called on Trees and Stumps"),
    }
}

/// A RankLib tree (children after their parents) as a [`ForestTree`]: splits numbered in node order, leaves too.
fn ranklib_tree(t: &ltr_core::Tree) -> ForestTree {
    let mut code = vec![0i32; t.nodes.len()];
    let (mut splits, mut leaves) = (0i32, 0i32);
    for (i, n) in t.nodes.iter().enumerate() {
        code[i] = match n {
            TreeNode::Split { .. } => {
                splits += 1;
                splits - 1
            }
            TreeNode::Leaf { .. } => {
                leaves += 1;
                !(leaves - 1)
            }
        };
    }
    let mut f = ForestTree {
        weight: t.weight,
        ..Default::default()
    };
    let child = |c: u32| code.get(c as usize).copied().unwrap_or(i32::MAX);
    for n in &t.nodes {
        match *n {
            TreeNode::Split {
                feature,
                threshold,
                left,
                right,
            } => {
                f.split_feature.push(feature as u32);
                f.threshold.push(threshold);
                f.default_left.push(false);
                f.left.push(child(left));
                f.right.push(child(right));
            }
            TreeNode::Leaf { value } => f.leaf_value.push(value),
        }
    }
    f
}

/// The ensemble as one `TreeEnsembleRegressor` on the features cast to double.
fn tree_graph(model: &ModelFile, width: usize) -> Result<(pb::GraphProto, Vec<String>)> {
    let f: RawForest = raw_forest(model, Target::Onnx)?;
    if let Some(&k) = f.features.iter().find(|&&k| k > width) {
        return Err(refuse(format!(
            "a split uses feature {k} but the model reads {width} features"
        )));
    }
    let base = match &model.model {
        Model::Forest(forest) => forest.base_score,
        _ => 0.0,
    };
    // raw_forest writes a non-zero base score as a first one-leaf tree of weight 1: it goes to base_values.
    let trees = if base != 0.0 {
        &f.trees[1..]
    } else {
        &f.trees[..]
    };
    let mut a = TreeAttrs::default();
    for (tree, t) in trees.iter().enumerate() {
        for (i, n) in t.nodes.iter().enumerate() {
            a.tree.push(tree as i64);
            a.node.push(i as i64);
            match *n {
                RawNode::Split {
                    feature,
                    threshold,
                    default_left,
                    left,
                    right,
                } => {
                    a.feature.push(feature as i64 - 1);
                    a.mode.push(b"BRANCH_LEQ".to_vec());
                    a.value.push(threshold as f64);
                    a.yes.push(left as i64);
                    a.no.push(right as i64);
                    a.nan_yes.push(i64::from(default_left));
                }
                RawNode::Leaf(v) => {
                    a.feature.push(0);
                    a.mode.push(b"LEAF".to_vec());
                    a.value.push(0.0);
                    a.yes.push(0);
                    a.no.push(0);
                    a.nan_yes.push(0);
                    a.target_tree.push(tree as i64);
                    a.target_node.push(i as i64);
                    a.target_weight.push(v * t.weight);
                }
            }
        }
    }
    let n_targets = a.target_tree.len();
    let ensemble = pb::NodeProto {
        input: vec!["features_f64".into()],
        output: vec!["scores".into()],
        name: "trees".into(),
        op_type: "TreeEnsembleRegressor".into(),
        domain: ML.into(),
        attribute: vec![
            attr_int("n_targets", 1),
            attr_string("aggregate_function", "SUM"),
            attr_string("post_transform", "NONE"),
            attr_tensor("base_values_as_tensor", tensor_f64(vec![1], vec![base])),
            attr_ints("nodes_treeids", a.tree),
            attr_ints("nodes_nodeids", a.node),
            attr_ints("nodes_featureids", a.feature),
            attr_strings("nodes_modes", a.mode),
            attr_tensor(
                "nodes_values_as_tensor",
                tensor_f64(vec![a.value.len() as i64], a.value),
            ),
            attr_ints("nodes_truenodeids", a.yes),
            attr_ints("nodes_falsenodeids", a.no),
            attr_ints("nodes_missing_value_tracks_true", a.nan_yes),
            attr_ints("target_treeids", a.target_tree),
            attr_ints("target_nodeids", a.target_node),
            attr_ints("target_ids", vec![0; n_targets]),
            attr_tensor(
                "target_weights_as_tensor",
                tensor_f64(vec![n_targets as i64], a.target_weight),
            ),
        ],
        ..Default::default()
    };
    let graph = pb::GraphProto {
        node: vec![cast("features", "features_f64", Dtype::Double), ensemble],
        ..Default::default()
    };
    let notes = vec![
        "NaN values: each split sends a NaN its default direction (nodes_missing_value_tracks_true), as `ltr predict` does".into(),
        format!("thresholds: {} trees, `value <= threshold` (BRANCH_LEQ) on the raw float32 thresholds (the stored normalisation carried into them exactly), compared and summed in double; tree weights are multiplied into target_weights, the base score is base_values", trees.len()),
    ];
    Ok((graph, notes))
}

/// The parallel attribute lists of a `TreeEnsembleRegressor`.
#[derive(Default)]
struct TreeAttrs {
    tree: Vec<i64>,
    node: Vec<i64>,
    feature: Vec<i64>,
    mode: Vec<Vec<u8>>,
    value: Vec<f64>,
    yes: Vec<i64>,
    no: Vec<i64>,
    nan_yes: Vec<i64>,
    target_tree: Vec<i64>,
    target_node: Vec<i64>,
    target_weight: Vec<f64>,
}

/// A linear model: the columns it reads, normalised as `ltr` does, times its weights.
fn linear_graph(model: &ModelFile, width: usize) -> Result<(pb::GraphProto, Vec<String>)> {
    // The refusals every engine shares: rank aggregates, log1p, per-query normalisation.
    let _ = linear_form(model, Target::Onnx.name())?;
    let Model::Linear(m) = &model.model else {
        unreachable!("linear_form refuses every other model")
    };
    let pre = model.preprocess.as_ref();
    let norm = pre.and_then(|p| p.normalization.as_ref());
    // One entry per model column whose value can vary: (raw column, weight, shift, divisor). A column constant on
    // the training data reads 0 whatever its value (a NaN too), so it is left out.
    let mut cols: Vec<(i64, f64, f64, f64)> = Vec::new();
    for (j, &w) in m.weights.iter().enumerate() {
        let feature = pre
            .and_then(|p| p.features.as_ref())
            .map_or(j + 1, |f| f[j]);
        let (shift, divisor) = match norm {
            None => (0.0, 1.0),
            Some(Normalization::ZScore(z)) => (z.mean[j], z.std[j]),
            Some(Normalization::MinMax { min, max }) => (min[j], max[j] - min[j]),
            Some(_) => unreachable!("linear_form refuses per-query normalisation"),
        };
        if divisor <= 0.0 {
            continue;
        }
        if feature == 0 || feature > width {
            return Err(refuse(format!(
                "weight {j} reads feature {feature} but the model reads {width} features"
            )));
        }
        cols.push((feature as i64 - 1, w, shift, divisor));
    }
    if cols.is_empty() {
        return Err(refuse(
            "no weight reads a feature that varied in training: the model gives every document the same score",
        ));
    }
    let k = cols.len() as i64;
    let mut init = vec![pb::TensorProto {
        dims: vec![k],
        data_type: Dtype::Int64 as i32,
        int64_data: cols.iter().map(|c| c.0).collect(),
        name: "columns".into(),
        ..Default::default()
    }];
    let mut node = vec![
        pb::NodeProto {
            input: vec!["features".into(), "columns".into()],
            output: vec!["read".into()],
            name: "read".into(),
            op_type: "Gather".into(),
            attribute: vec![attr_int("axis", 1)],
            ..Default::default()
        },
        cast("read", "read_f64", Dtype::Double),
    ];
    let mut x = "read_f64";
    let mut negate = false;
    if norm.is_some() {
        init.push(named(
            tensor_f64(vec![k], cols.iter().map(|c| c.2).collect()),
            "shift",
        ));
        init.push(named(
            tensor_f64(vec![k], cols.iter().map(|c| c.3).collect()),
            "divisor",
        ));
        node.extend([
            binary("Sub", "read_f64", "shift", "centred"),
            binary("Div", "centred", "divisor", "normalised"),
            // `ltr` keeps each preprocessed value as a float32. An exact `Neg` keeps the two casts apart (the
            // weights are negated to match): onnxruntime 1.16 drops a double → float → double cast pair, and its
            // rounding, even with every optimisation off, and its optimiser removes a `Mul` by 1.
            cast("normalised", "normalised_f32", Dtype::Float),
            unary("Neg", "normalised_f32", "negated"),
            cast("negated", "normalised_f64", Dtype::Double),
        ]);
        negate = true;
        x = "normalised_f64";
    }
    let sign = if negate { -1.0 } else { 1.0 };
    init.push(named(
        tensor_f64(vec![k, 1], cols.iter().map(|c| sign * c.1).collect()),
        "weights",
    ));
    node.extend([
        binary("MatMul", x, "weights", "scores_f64"),
        cast("scores_f64", "scores", Dtype::Float),
    ]);
    let graph = pb::GraphProto {
        node,
        initializer: init,
        ..Default::default()
    };
    let notes = vec![
        "NaN values: a NaN in a feature the model reads makes the score NaN, as in `ltr predict`".into(),
        format!("weights: {k} columns, normalised as `ltr predict` normalises them (float32 values) and summed in double"),
    ];
    Ok((graph, notes))
}

/// A neural network: the columns it reads, normalised as `ltr` does (float32 values), then its layers.
fn neural_graph(
    model: &ModelFile,
    net: &ltr_core::NeuralNet,
    width: usize,
) -> Result<(pb::GraphProto, Vec<String>)> {
    let pre = model.preprocess.as_ref();
    let norm = pre.and_then(|p| p.normalization.as_ref());
    let d = net.n_features;
    let logged: Vec<bool> = (0..d)
        .map(|j| {
            pre.is_some_and(|p| {
                let feature = p.features.as_ref().map_or(j + 1, |f| f[j]);
                p.log1p.contains(&feature)
            })
        })
        .collect();
    // Per model column: (raw column, shift, divisor); a column constant in training reads 0 (divisor ∞).
    let mut cols: Vec<(i64, f64, f64)> = Vec::with_capacity(d);
    for j in 0..d {
        let feature = pre
            .and_then(|p| p.features.as_ref())
            .map_or(j + 1, |f| f[j]);
        if feature == 0 || feature > width {
            return Err(refuse(format!(
                "input {j} reads feature {feature} but the model reads {width} features"
            )));
        }
        let (shift, divisor) = match norm {
            None => (0.0, 1.0),
            Some(Normalization::ZScore(z)) => (z.mean[j], z.std[j]),
            Some(Normalization::MinMax { min, max }) => (min[j], max[j] - min[j]),
            Some(_) => {
                return Err(refuse(
                    "per-query normalisation needs the whole query, which a row-wise graph does not see",
                ))
            }
        };
        let divisor = if divisor > 0.0 {
            divisor
        } else {
            f64::INFINITY
        };
        cols.push((feature as i64 - 1, shift, divisor));
    }
    let mut init = vec![pb::TensorProto {
        dims: vec![d as i64],
        data_type: Dtype::Int64 as i32,
        int64_data: cols.iter().map(|c| c.0).collect(),
        name: "columns".into(),
        ..Default::default()
    }];
    let mut node = vec![pb::NodeProto {
        input: vec!["features".into(), "columns".into()],
        output: vec!["read".into()],
        name: "read".into(),
        op_type: "Gather".into(),
        attribute: vec![attr_int("axis", 1)],
        ..Default::default()
    }];
    let mut x = "read".to_string();
    if logged.contains(&true) {
        // `ltr`'s signed log1p, sign(x)·ln(1 + |x|) in double, on the columns that take it, kept as float32.
        init.push(pb::TensorProto {
            dims: vec![d as i64],
            data_type: Dtype::Bool as i32,
            int32_data: logged.iter().map(|&l| i32::from(l)).collect(),
            name: "logged".into(),
            ..Default::default()
        });
        init.push(named(tensor_f64(vec![1], vec![1.0]), "one"));
        node.extend([
            cast("read", "log_in", Dtype::Double),
            unary("Abs", "log_in", "log_abs"),
            binary("Add", "log_abs", "one", "log_arg"),
            unary("Log", "log_arg", "log_mag"),
            unary("Sign", "log_in", "log_sign"),
            binary("Mul", "log_sign", "log_mag", "log1p"),
            pb::NodeProto {
                input: vec!["logged".into(), "log1p".into(), "log_in".into()],
                output: vec!["log_out".into()],
                name: "log_out".into(),
                op_type: "Where".into(),
                ..Default::default()
            },
            cast("log_out", "log_f32", Dtype::Float),
        ]);
        x = "log_f32".into();
    }
    if norm.is_some() {
        // As `ltr`: (float32 value − shift) / divisor in double, kept as float32. After a float32 value from
        // double (log1p), an exact `Neg` keeps the casts apart (onnxruntime drops a double → float → double pair);
        // shift and divisor are negated to match.
        let sign = if x == "read" { 1.0 } else { -1.0 };
        init.push(named(
            tensor_f64(vec![d as i64], cols.iter().map(|c| sign * c.1).collect()),
            "shift",
        ));
        init.push(named(
            tensor_f64(vec![d as i64], cols.iter().map(|c| sign * c.2).collect()),
            "divisor",
        ));
        if sign < 0.0 {
            node.push(unary("Neg", &x, "norm_neg"));
            x = "norm_neg".into();
        }
        node.extend([
            cast(&x, "norm_f64", Dtype::Double),
            binary("Sub", "norm_f64", "shift", "centred"),
            binary("Div", "centred", "divisor", "normalised"),
            cast("normalised", "input", Dtype::Float),
        ]);
        x = "input".into();
    }
    let f32_tensor = |dims: Vec<i64>, v: &[f32], name: &str| pb::TensorProto {
        dims,
        data_type: Dtype::Float as i32,
        float_data: v.to_vec(),
        name: name.into(),
        ..Default::default()
    };
    let layer_norm = |n: &ltr_core::neural::LayerNorm,
                      input: &str,
                      out: &str,
                      init: &mut Vec<pb::TensorProto>,
                      node: &mut Vec<pb::NodeProto>| {
        let w = n.gamma.len() as i64;
        init.push(f32_tensor(vec![w], &n.gamma, &format!("{out}_gamma")));
        init.push(f32_tensor(vec![w], &n.beta, &format!("{out}_beta")));
        node.push(pb::NodeProto {
            input: vec![input.into(), format!("{out}_gamma"), format!("{out}_beta")],
            output: vec![out.into()],
            name: out.into(),
            op_type: "LayerNormalization".into(),
            attribute: vec![
                attr_int("axis", -1),
                pb::AttributeProto {
                    f: ltr_core::neural::LAYER_NORM_EPS as f32,
                    ..attr("epsilon", AttributeType::Float)
                },
            ],
            ..Default::default()
        });
    };
    let gemm = |dense: &ltr_core::neural::Dense,
                input: &str,
                out: &str,
                init: &mut Vec<pb::TensorProto>,
                node: &mut Vec<pb::NodeProto>| {
        init.push(f32_tensor(
            vec![dense.inputs as i64, dense.outputs as i64],
            &dense.weights,
            &format!("{out}_w"),
        ));
        init.push(f32_tensor(
            vec![dense.outputs as i64],
            &dense.bias,
            &format!("{out}_b"),
        ));
        node.push(pb::NodeProto {
            input: vec![input.into(), format!("{out}_w"), format!("{out}_b")],
            output: vec![out.into()],
            name: out.into(),
            op_type: "Gemm".into(),
            ..Default::default()
        });
    };
    if let Some(n) = &net.input_norm {
        layer_norm(n, &x, "input_norm", &mut init, &mut node);
        x = "input_norm".into();
    }
    for (l, h) in net.hidden.iter().enumerate() {
        let lin = format!("hidden{}", l + 1);
        gemm(&h.dense, &x, &lin, &mut init, &mut node);
        x = lin;
        if let Some(n) = &h.norm {
            let out = format!("hidden{}_norm", l + 1);
            layer_norm(n, &x, &out, &mut init, &mut node);
            x = out;
        }
        if let Some(b) = &h.batch_norm {
            // Inference mode: the running statistics stored in the model (not folded into the Gemm, so the
            // graph shows the layer as trained and computes (x − mean)/sqrt(var + ε)·γ + β as `ltr predict` does).
            let out = format!("hidden{}_bn", l + 1);
            let w = b.gamma.len() as i64;
            for (what, v) in [
                ("scale", &b.gamma),
                ("bias", &b.beta),
                ("mean", &b.running_mean),
                ("var", &b.running_var),
            ] {
                init.push(f32_tensor(vec![w], v, &format!("{out}_{what}")));
            }
            node.push(pb::NodeProto {
                input: ["scale", "bias", "mean", "var"].iter().fold(
                    vec![x.clone()],
                    |mut v, what| {
                        v.push(format!("{out}_{what}"));
                        v
                    },
                ),
                output: vec![out.clone()],
                name: out.clone(),
                op_type: "BatchNormalization".into(),
                attribute: vec![pb::AttributeProto {
                    f: ltr_core::neural::BATCH_NORM_EPS as f32,
                    ..attr("epsilon", AttributeType::Float)
                }],
                ..Default::default()
            });
            x = out;
        }
        let op = match net.activation {
            ltr_core::neural::Activation::Relu => Some("Relu"),
            ltr_core::neural::Activation::Tanh => Some("Tanh"),
            ltr_core::neural::Activation::Sigmoid => Some("Sigmoid"),
            ltr_core::neural::Activation::Identity => None,
        };
        if let Some(op) = op {
            let out = format!("hidden{}_act", l + 1);
            node.push(unary(op, &x, &out));
            x = out;
        }
    }
    if let Some(e) = &net.encoder {
        x = crate::onnx_encoder::encoder_nodes(e, &x, &mut init, &mut node);
    }
    gemm(&net.output, &x, "scores", &mut init, &mut node);
    let graph = pb::GraphProto {
        node,
        initializer: init,
        ..Default::default()
    };
    let mut notes = vec![format!(
        "a neural network of {} hidden layer(s), float32 as `ltr predict` computes it",
        net.hidden.len()
    )];
    if let Some(e) = &net.encoder {
        notes.push(format!(
            "a self-attention encoder of {} block(s): the N rows of one call are the documents of ONE query (they \
             attend to each other); score one query per call",
            e.blocks.len()
        ));
    }
    Ok((graph, notes))
}

/// The tensor element types used here (ONNX's `TensorProto.DataType` numbers).
#[derive(Clone, Copy)]
enum Dtype {
    Float = 1,
    Bool = 9,
    Int64 = 7,
    Double = 11,
}

fn opset(domain: &str, version: i64) -> pb::OperatorSetIdProto {
    pb::OperatorSetIdProto {
        domain: domain.into(),
        version,
    }
}

/// A float32 `[N, cols]` tensor's description (`N` symbolic).
fn value_info(name: &str, cols: usize) -> pb::ValueInfoProto {
    use pb::tensor_shape_proto::{dimension::Value, Dimension};
    let dim = |v| Dimension {
        value: Some(v),
        ..Default::default()
    };
    let shape = vec![
        dim(Value::DimParam("N".into())),
        dim(Value::DimValue(cols as i64)),
    ];
    pb::ValueInfoProto {
        name: name.into(),
        r#type: Some(pb::TypeProto {
            value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                elem_type: Dtype::Float as i32,
                shape: Some(pb::TensorShapeProto { dim: shape }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn tensor_f64(dims: Vec<i64>, data: Vec<f64>) -> pb::TensorProto {
    pb::TensorProto {
        dims,
        data_type: Dtype::Double as i32,
        double_data: data,
        ..Default::default()
    }
}

fn named(mut t: pb::TensorProto, name: &str) -> pb::TensorProto {
    t.name = name.into();
    t
}

fn cast(from: &str, to: &str, dtype: Dtype) -> pb::NodeProto {
    pb::NodeProto {
        input: vec![from.into()],
        output: vec![to.into()],
        name: to.into(),
        op_type: "Cast".into(),
        attribute: vec![attr_int("to", dtype as i64)],
        ..Default::default()
    }
}

fn unary(op: &str, a: &str, out: &str) -> pb::NodeProto {
    pb::NodeProto {
        input: vec![a.into()],
        output: vec![out.into()],
        name: out.into(),
        op_type: op.into(),
        ..Default::default()
    }
}

fn binary(op: &str, a: &str, b: &str, out: &str) -> pb::NodeProto {
    pb::NodeProto {
        input: vec![a.into(), b.into()],
        output: vec![out.into()],
        name: out.into(),
        op_type: op.into(),
        ..Default::default()
    }
}

use pb::attribute_proto::AttributeType;

fn attr(name: &str, kind: AttributeType) -> pb::AttributeProto {
    pb::AttributeProto {
        name: name.into(),
        r#type: kind as i32,
        ..Default::default()
    }
}

fn attr_int(name: &str, i: i64) -> pb::AttributeProto {
    pb::AttributeProto {
        i,
        ..attr(name, AttributeType::Int)
    }
}

fn attr_ints(name: &str, ints: Vec<i64>) -> pb::AttributeProto {
    pb::AttributeProto {
        ints,
        ..attr(name, AttributeType::Ints)
    }
}

fn attr_string(name: &str, s: &str) -> pb::AttributeProto {
    pb::AttributeProto {
        s: s.as_bytes().to_vec(),
        ..attr(name, AttributeType::String)
    }
}

fn attr_strings(name: &str, strings: Vec<Vec<u8>>) -> pb::AttributeProto {
    pb::AttributeProto {
        strings,
        ..attr(name, AttributeType::Strings)
    }
}

fn attr_tensor(name: &str, t: pb::TensorProto) -> pb::AttributeProto {
    pb::AttributeProto {
        t: Some(t),
        ..attr(name, AttributeType::Tensor)
    }
}
