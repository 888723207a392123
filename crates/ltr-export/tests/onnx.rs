//! ONNX exports scored by an independent reference runtime written here from the ONNX operator specifications
//! (`Cast`, `Gather`, `Sub`, `Div`, `MatMul`, `Gemm`, `LayerNormalization`, `Relu`, `Tanh`, `Sigmoid`, `ai.onnx.ml`
//! `TreeEnsembleRegressor`): the written bytes are decoded
//! with prost into the types generated from ONNX's own schema (not through the exporter), the graph is run node by
//! node, and every score must equal `ltr predict`'s (`ModelFile::score_raw`) to 1e-6 relative — on complete test
//! data, on documents that lack features (0 in the input matrix, as `ltr predict` reads them), and on NaN values.
//!
//! The runtime keeps each tensor's values as f64 with its element type: a `Cast` to float32 rounds them, a double
//! tensor keeps them, so the graph's precision is the runtime's.

#[path = "../src/onnx_pb.rs"]
#[allow(
    missing_docs,
    missing_debug_implementations,
    clippy::all,
    clippy::pedantic
)]
pub(crate) mod onnx_pb;

use std::collections::HashMap;

use ltr_core::{Model, ModelFile, TrainingSummary};
use ltr_data::{Dataset, NormalizeKind, PreprocessSpec};
use ltr_export::{export, load_model, read_ranklib, ExportOptions, MissingPolicy, Target};
use ltr_learn::{Grid, TrainRequest};
use onnx_pb as pb;
use prost::Message;

use crate::common;
use common::{data, edited, with_missing};

fn trained(algo: &str, params: &[(&str, &str)], normalize: NormalizeKind) -> ModelFile {
    let spec = PreprocessSpec {
        normalize: Some(normalize),
        ..Default::default()
    };
    trained_with(algo, params, spec)
}

pub(crate) fn trained_with(algo: &str, params: &[(&str, &str)], spec: PreprocessSpec) -> ModelFile {
    let (train, _) = data();
    let req = TrainRequest::new(&train).preprocess(&spec);
    ltr_learn::train(algo, &Grid::single(params.iter().copied()), &req)
        .unwrap()
        .into_model_file(TrainingSummary::default())
}

/// The test data with some values NaN (dense, in memory: `ltr predict`'s reader refuses NaN, a caller's matrix may
/// hold them).
fn with_nan(test: &Dataset) -> Dataset {
    edited(
        test,
        |i, j| ((i * 5 + j) % 4 == 0).then_some(f32::NAN),
        false,
    )
}

/// A tensor of the reference runtime: values (f64) and shape, `f32` when its element type is float32.
#[derive(Clone, Debug)]
struct Tensor {
    v: Vec<f64>,
    shape: Vec<usize>,
    f32: bool,
}

const FLOAT: i32 = 1;
const INT64: i32 = 7;
const DOUBLE: i32 = 11;
const BOOL: i32 = 9;

fn initializer(t: &pb::TensorProto) -> Tensor {
    let shape: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
    let n: usize = shape.iter().product();
    let raw = |w: usize| t.raw_data.chunks_exact(w);
    let v: Vec<f64> = match t.data_type {
        DOUBLE if !t.raw_data.is_empty() => raw(8)
            .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
            .collect(),
        DOUBLE => t.double_data.clone(),
        FLOAT if !t.raw_data.is_empty() => raw(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()) as f64)
            .collect(),
        FLOAT => t.float_data.iter().map(|&x| x as f64).collect(),
        INT64 if !t.raw_data.is_empty() => raw(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()) as f64)
            .collect(),
        INT64 => t.int64_data.iter().map(|&x| x as f64).collect(),
        BOOL => t.int32_data.iter().map(|&x| f64::from(x != 0)).collect(),
        other => panic!("tensor {}: element type {other}", t.name),
    };
    assert_eq!(
        v.len(),
        n,
        "tensor {}: {} values for {shape:?}",
        t.name,
        v.len()
    );
    Tensor {
        v,
        shape,
        f32: t.data_type == FLOAT,
    }
}

fn attr<'a>(n: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    n.attribute.iter().find(|a| a.name == name)
}

fn ints(n: &pb::NodeProto, name: &str) -> Vec<i64> {
    attr(n, name).map_or_else(Vec::new, |a| a.ints.clone())
}

/// A float list attribute, or its double `_as_tensor` form.
fn reals(n: &pb::NodeProto, name: &str) -> Vec<f64> {
    if let Some(t) = attr(n, &format!("{name}_as_tensor")).and_then(|a| a.t.as_ref()) {
        return initializer(t).v;
    }
    attr(n, name).map_or_else(Vec::new, |a| a.floats.iter().map(|&x| x as f64).collect())
}

/// `TreeEnsembleRegressor` (ai.onnx.ml, one target, SUM, no post-transform) on the rows of `x`.
fn tree_ensemble(n: &pb::NodeProto, x: &Tensor) -> Tensor {
    let s = |name: &str| attr(n, name).map(|a| String::from_utf8(a.s.clone()).unwrap());
    assert_eq!(attr(n, "n_targets").unwrap().i, 1);
    assert!(s("aggregate_function").is_none_or(|a| a == "SUM"));
    assert!(s("post_transform").is_none_or(|p| p == "NONE"));
    let (trees, ids, feats) = (
        ints(n, "nodes_treeids"),
        ints(n, "nodes_nodeids"),
        ints(n, "nodes_featureids"),
    );
    let (yes, no) = (ints(n, "nodes_truenodeids"), ints(n, "nodes_falsenodeids"));
    let nan_yes = ints(n, "nodes_missing_value_tracks_true");
    let values = reals(n, "nodes_values");
    let modes: Vec<String> = attr(n, "nodes_modes")
        .unwrap()
        .strings
        .iter()
        .map(|m| String::from_utf8(m.clone()).unwrap())
        .collect();
    let at: HashMap<(i64, i64), usize> = trees
        .iter()
        .zip(&ids)
        .enumerate()
        .map(|(k, (&t, &i))| ((t, i), k))
        .collect();
    assert_eq!(at.len(), trees.len(), "a (tree, node) pair appears twice");
    let mut leaf_weight: HashMap<(i64, i64), f64> = HashMap::new();
    let (tt, tn, tw) = (
        ints(n, "target_treeids"),
        ints(n, "target_nodeids"),
        reals(n, "target_weights"),
    );
    for (k, t) in ints(n, "target_ids").iter().enumerate() {
        assert_eq!(*t, 0);
        *leaf_weight.entry((tt[k], tn[k])).or_default() += tw[k];
    }
    let base = reals(n, "base_values").first().copied().unwrap_or(0.0);
    let mut roots: Vec<i64> = trees.clone();
    roots.dedup();
    let width = x.shape[1];
    let out: Vec<f64> =
        x.v.chunks(width)
            .map(|row| {
                let mut sum = 0.0;
                for &t in &roots {
                    let mut k = at[&(t, 0)];
                    while modes[k] != "LEAF" {
                        let v = row[feats[k] as usize];
                        let go_yes = if v.is_nan() {
                            nan_yes.get(k) == Some(&1)
                        } else {
                            match modes[k].as_str() {
                                "BRANCH_LEQ" => v <= values[k],
                                "BRANCH_LT" => v < values[k],
                                m => panic!("mode {m}"),
                            }
                        };
                        k = at[&(t, if go_yes { yes[k] } else { no[k] })];
                    }
                    sum += leaf_weight.get(&(t, ids[k])).copied().unwrap_or(0.0);
                }
                // The operator's output is float32.
                (sum + base) as f32 as f64
            })
            .collect();
    Tensor {
        shape: vec![out.len(), 1],
        v: out,
        f32: true,
    }
}

/// Broadcast `a op b` with `b` one value, a row of the last dimension's length or `a`'s shape; a float32 result is
/// rounded to float32.
fn elementwise(a: &Tensor, b: &Tensor, op: impl Fn(f64, f64) -> f64) -> Tensor {
    let k = b.v.len();
    assert!(k == 1 || k == a.v.len() || a.shape.last() == Some(&k));
    assert_eq!(a.f32, b.f32, "operands of one type");
    let round = |v: f64| if a.f32 { v as f32 as f64 } else { v };
    let v =
        a.v.iter()
            .enumerate()
            .map(|(i, &x)| round(op(x, b.v[i % k])))
            .collect();
    Tensor { v, ..a.clone() }
}

/// Run the decoded model on raw feature rows (`[n, F]`, float32); its `scores` output.
pub(crate) fn run(model: &pb::ModelProto, x: Vec<f32>, n: usize) -> Vec<f64> {
    let g = model.graph.as_ref().unwrap();
    let mut env: HashMap<String, Tensor> = g
        .initializer
        .iter()
        .map(|t| (t.name.clone(), initializer(t)))
        .collect();
    let input = &g.input[0];
    assert_eq!(input.name, "features");
    let width = x.len() / n.max(1);
    env.insert(
        input.name.clone(),
        Tensor {
            v: x.iter().map(|&v| v as f64).collect(),
            shape: vec![n, width],
            f32: true,
        },
    );
    for node in &g.node {
        let arg = |i: usize| env[&node.input[i]].clone();
        let out = match (node.domain.as_str(), node.op_type.as_str()) {
            ("", "Cast") => {
                let mut t = arg(0);
                match attr(node, "to").unwrap().i as i32 {
                    FLOAT => {
                        t.v.iter_mut().for_each(|v| *v = *v as f32 as f64);
                        t.f32 = true;
                    }
                    DOUBLE => t.f32 = false,
                    other => panic!("Cast to {other}"),
                }
                t
            }
            ("", "Gather") => {
                assert_eq!(attr(node, "axis").unwrap().i, 1);
                let (x, idx) = (arg(0), arg(1));
                let w = x.shape[1];
                let v =
                    x.v.chunks(w)
                        .flat_map(|row| idx.v.iter().map(move |&j| row[j as usize]))
                        .collect();
                Tensor {
                    v,
                    shape: vec![x.shape[0], idx.v.len()],
                    f32: x.f32,
                }
            }
            ("", "Sub") => elementwise(&arg(0), &arg(1), |a, b| a - b),
            ("", "Div") => elementwise(&arg(0), &arg(1), |a, b| a / b),
            ("", "Neg") => {
                let mut t = arg(0);
                t.v.iter_mut().for_each(|v| *v = -*v);
                t
            }
            ("", "MatMul") => {
                let (a, b) = (arg(0), arg(1));
                let (k, m) = (b.shape[0], b.shape[1]);
                assert_eq!(a.shape[1], k);
                assert!(!a.f32 && !b.f32, "double products here");
                let w = &b.v;
                let v =
                    a.v.chunks(k)
                        .flat_map(|row| {
                            (0..m).map(move |c| (0..k).map(|j| row[j] * w[j * m + c]).sum::<f64>())
                        })
                        .collect();
                Tensor {
                    v,
                    shape: vec![a.shape[0], m],
                    f32: false,
                }
            }
            ("", "Gemm") => {
                // A·B + C on float32 (the sums in f64, rounded once).
                let (a, b, c) = (arg(0), arg(1), arg(2));
                let (k, m) = (b.shape[0], b.shape[1]);
                assert_eq!(a.shape[1], k);
                assert!(a.f32 && b.f32 && c.f32 && c.v.len() == m);
                let (w, bias) = (&b.v, &c.v);
                let v =
                    a.v.chunks(k)
                        .flat_map(|row| {
                            (0..m).map(move |o| {
                                (bias[o] + (0..k).map(|j| row[j] * w[j * m + o]).sum::<f64>())
                                    as f32 as f64
                            })
                        })
                        .collect();
                Tensor {
                    v,
                    shape: vec![a.shape[0], m],
                    f32: true,
                }
            }
            ("", "LayerNormalization") => {
                let (x, gamma, beta) = (arg(0), arg(1), arg(2));
                assert_eq!(attr(node, "axis").unwrap().i, -1);
                let eps = f64::from(attr(node, "epsilon").unwrap().f);
                let w = *x.shape.last().unwrap();
                let v = x
                    .v
                    .chunks(w)
                    .flat_map(|row| {
                        let mean = row.iter().sum::<f64>() / w as f64;
                        let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / w as f64;
                        let r = 1.0 / (var + eps).sqrt();
                        let (g, b) = (gamma.v.clone(), beta.v.clone());
                        row.iter()
                            .enumerate()
                            .map(move |(j, v)| ((v - mean) * r * g[j] + b[j]) as f32 as f64)
                            .collect::<Vec<_>>()
                    })
                    .collect();
                Tensor { v, ..x }
            }
            ("", "Add") => elementwise(&arg(0), &arg(1), |a, b| a + b),
            ("", "Mul") => elementwise(&arg(0), &arg(1), |a, b| a * b),
            ("", op @ ("Abs" | "Log" | "Sign")) => {
                let mut t = arg(0);
                assert!(!t.f32, "double here");
                t.v.iter_mut().for_each(|v| {
                    *v = match op {
                        "Abs" => v.abs(),
                        "Log" => v.ln(),
                        _ if *v == 0.0 => 0.0,
                        _ => v.signum(),
                    }
                });
                t
            }
            ("", "Where") => {
                let (c, a, b) = (arg(0), arg(1), arg(2));
                let k = c.v.len();
                assert_eq!(a.shape.last(), Some(&k));
                let v = (0..a.v.len())
                    .map(|i| if c.v[i % k] != 0.0 { a.v[i] } else { b.v[i] })
                    .collect();
                Tensor { v, ..a }
            }
            ("", op @ ("Relu" | "Tanh" | "Sigmoid")) => {
                let mut t = arg(0);
                let f = |v: f64| match op {
                    "Relu" => v.max(0.0),
                    "Tanh" => v.tanh(),
                    _ => 1.0 / (1.0 + (-v).exp()),
                };
                t.v.iter_mut().for_each(|v| *v = f(*v) as f32 as f64);
                t
            }
            ("ai.onnx.ml", "TreeEnsembleRegressor") => tree_ensemble(node, &arg(0)),
            (d, op) => panic!("operator {d}::{op}"),
        };
        env.insert(node.output[0].clone(), out);
    }
    let scores = &env[&g.output[0].name];
    assert_eq!(g.output[0].name, "scores");
    assert!(scores.f32 && scores.shape == [n, 1]);
    scores.v.clone()
}

/// The exported bytes decoded and checked: IR version, both opsets, the input's declared width.
pub(crate) fn decode(bytes: &[u8], width: usize) -> pb::ModelProto {
    let m = pb::ModelProto::decode(bytes).unwrap();
    assert!(
        (3..=10).contains(&m.ir_version),
        "IR version {}",
        m.ir_version
    );
    let opset = |d: &str| {
        m.opset_import
            .iter()
            .find(|o| o.domain == d)
            .map(|o| o.version)
    };
    assert!(opset("").is_some_and(|v| v >= 13));
    assert!(opset("ai.onnx.ml").is_some_and(|v| v >= 3));
    let names = &m
        .metadata_props
        .iter()
        .find(|p| p.key == "feature_names")
        .unwrap()
        .value;
    let names: Vec<String> = serde_json::from_str(names).unwrap();
    assert_eq!(names.len(), width);
    let g = m.graph.as_ref().unwrap();
    let Some(pb::type_proto::Value::TensorType(t)) =
        g.input[0].r#type.as_ref().and_then(|t| t.value.clone())
    else {
        panic!("the input is not a tensor")
    };
    assert_eq!(t.elem_type, FLOAT);
    let dims = t.shape.unwrap().dim;
    assert_eq!(dims.len(), 2);
    assert_eq!(
        dims[1].value,
        Some(pb::tensor_shape_proto::dimension::Value::DimValue(
            width as i64
        ))
    );
    m
}

/// The model's declared width and its input matrix: raw feature k in column k − 1, an absent feature 0.
fn matrix(test: &Dataset, width: usize) -> Vec<f32> {
    (0..test.n_docs())
        .flat_map(|i| {
            let row = test.row(i);
            (0..width).map(move |j| row.get(j))
        })
        .collect()
}

fn onnx_bytes(model: &ModelFile, opts: &ExportOptions) -> Vec<u8> {
    let out =
        export(model, Target::Onnx, opts).unwrap_or_else(|e| panic!("{}: {e}", model.algorithm));
    assert!(out.model.is_empty());
    out.binary.unwrap()
}

/// The ONNX export of `model` scores `test` as `ltr predict` does, to 1e-6 relative.
fn check(model: &ModelFile, test: &Dataset, what: &str) -> pb::ModelProto {
    check_to(model, test, what, 1e-6)
}

/// [`check`] to a tolerance `tol` relative to max(1, |score|).
fn check_to(model: &ModelFile, test: &Dataset, what: &str, tol: f64) -> pb::ModelProto {
    let width = model
        .preprocess
        .as_ref()
        .map_or(model.n_features, |p| p.raw_features);
    let decoded = decode(&onnx_bytes(model, &ExportOptions::default()), width);
    let got = run(&decoded, matrix(test, width), test.n_docs());
    let want = model.score_raw(test).unwrap();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= tol * w.abs().max(if tol > 1e-6 { 1.0 } else { 1e-9 })
                || (g.is_nan() && w.is_nan()),
            "{what}: document {i}: ltr {w} but ONNX {g}"
        );
    }
    decoded
}

fn ensemble_node(m: &pb::ModelProto) -> &pb::NodeProto {
    let g = m.graph.as_ref().unwrap();
    g.node
        .iter()
        .find(|n| n.op_type == "TreeEnsembleRegressor")
        .unwrap()
}

#[test]
fn lambdamart_scores_as_ltr_with_and_without_preprocessing_and_missing_features() {
    let (_, test) = data();
    let missing = with_missing(&test);
    for normalize in [
        NormalizeKind::None,
        NormalizeKind::ZScore,
        NormalizeKind::MinMax,
    ] {
        let m = trained("lambdamart", &[("trees", "40"), ("leaves", "8")], normalize);
        let what = format!("lambdamart {normalize:?}");
        let decoded = check(&m, &test, &what);
        check(&m, &missing, &format!("{what}, features missing"));
        check(&m, &with_nan(&test), &format!("{what}, NaN values"));
        // Every split is written in ltr's own comparison, with the NaN direction of the model (left: ltr's trees).
        let e = ensemble_node(&decoded);
        let modes = &attr(e, "nodes_modes").unwrap().strings;
        let splits = modes
            .iter()
            .filter(|m| m.as_slice() == b"BRANCH_LEQ")
            .count();
        assert!(splits > 40, "{what}: {splits} splits");
        assert_eq!(
            splits + modes.iter().filter(|m| m.as_slice() == b"LEAF").count(),
            modes.len()
        );
        let nan_left: Vec<i64> = ints(e, "nodes_missing_value_tracks_true");
        assert_eq!(nan_left.iter().sum::<i64>() as usize, splits);
    }
}

#[test]
fn nan_follows_each_splits_default_direction() {
    let (_, test) = data();
    let nan = with_nan(&test);
    // ltr's trees send NaN left; flipping every other split's default makes a model that sends NaN both ways.
    let mut m = trained("lambdamart", &[("trees", "30")], NormalizeKind::ZScore);
    let Model::Forest(f) = &mut m.model else {
        unreachable!()
    };
    for t in &mut f.trees {
        for (k, d) in t.default_left.iter_mut().enumerate() {
            *d = k % 2 == 1;
        }
    }
    let flipped = m.score_raw(&nan).unwrap();
    let before = trained("lambdamart", &[("trees", "30")], NormalizeKind::ZScore)
        .score_raw(&nan)
        .unwrap();
    assert_ne!(flipped, before, "the NaN values must reach flipped splits");
    let decoded = check(&m, &nan, "lambdamart, NaN right at even splits");
    let e = ensemble_node(&decoded);
    let tracks = ints(e, "nodes_missing_value_tracks_true");
    assert!(tracks.contains(&0) && tracks.contains(&1));
    // LightGBM's zero-as-missing splits (imported: a NaN reads as 0 and goes the zero band's way).
    let lgb = load_model(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/imports/lgb_zero_as_missing.txt"),
    )
    .unwrap();
    let fixture = ltr_data::read_letor(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/imports/test.txt"),
    )
    .unwrap();
    check(&lgb, &fixture, "LightGBM zero-as-missing");
    check(
        &lgb,
        &with_nan(&fixture),
        "LightGBM zero-as-missing, NaN values",
    );
}

#[test]
fn random_forest_mart_and_rankboost_score_as_ltr() {
    let (_, test) = data();
    let missing = with_missing(&test);
    let rf = trained("random-forest", &[("trees", "20")], NormalizeKind::ZScore);
    check(&rf, &test, "random-forest");
    check(&rf, &missing, "random-forest, features missing");
    let mart = trained("mart", &[("trees", "20")], NormalizeKind::MinMax);
    let Model::Forest(f) = &mart.model else {
        unreachable!()
    };
    assert!(f.base_score != 0.0, "mart starts from the mean label");
    let decoded = check(&mart, &test, "mart");
    assert_eq!(
        reals(ensemble_node(&decoded), "base_values"),
        vec![f.base_score]
    );
    check(&mart, &missing, "mart, features missing");
    let boost = trained("rankboost", &[("rounds", "40")], NormalizeKind::ZScore);
    check(&boost, &test, "rankboost");
    check(&boost, &with_nan(&test), "rankboost, NaN values");
}

#[test]
fn ranklib_ensembles_send_nan_right_as_ltr_reads_them() {
    let (_, test) = data();
    let m = trained("lambdamart", &[("trees", "20")], NormalizeKind::None);
    let xml = export(&m, Target::RankLib, &ExportOptions::default())
        .unwrap()
        .model;
    let ranklib = read_ranklib(&xml, "ranklib.txt").unwrap();
    assert!(matches!(ranklib.model, Model::Trees(_)));
    let decoded = check(&ranklib, &test, "RankLib LambdaMART");
    check(&ranklib, &with_nan(&test), "RankLib LambdaMART, NaN values");
    assert!(
        ints(ensemble_node(&decoded), "nodes_missing_value_tracks_true")
            .iter()
            .all(|&t| t == 0)
    );
}

#[test]
fn linear_models_score_as_ltr_with_their_normalisation() {
    let (_, test) = data();
    for normalize in [
        NormalizeKind::None,
        NormalizeKind::ZScore,
        NormalizeKind::MinMax,
    ] {
        let m = trained("ranksvm", &[("c", "0.1")], normalize);
        let what = format!("ranksvm {normalize:?}");
        check(&m, &test, &what);
        check(
            &m,
            &with_missing(&test),
            &format!("{what}, features missing"),
        );
        check(&m, &with_nan(&test), &format!("{what}, NaN values"));
    }
}

/// A network's float32 layers in another summation order: equal to 1e-5 of max(1, |score|).
#[test]
fn neural_networks_score_as_ltr() {
    let (_, test) = data();
    for (normalize, params) in [
        (
            NormalizeKind::ZScore,
            vec![("sizes", "16/8"), ("epochs", "3")],
        ),
        (
            NormalizeKind::MinMax,
            vec![
                ("sizes", "12"),
                ("epochs", "2"),
                ("layer-norm", "true"),
                ("input-norm", "true"),
                ("activation", "tanh"),
            ],
        ),
        (
            NormalizeKind::None,
            vec![("sizes", "none"), ("epochs", "2")],
        ),
        (
            NormalizeKind::ZScore,
            vec![("sizes", "8"), ("epochs", "2"), ("activation", "sigmoid")],
        ),
    ] {
        let m = trained("neural", &params, normalize);
        let what = format!("neural {normalize:?} {params:?}");
        check_to(&m, &test, &what, 1e-5);
        check_to(
            &m,
            &with_missing(&test),
            &format!("{what}, features missing"),
            1e-5,
        );
    }
    let selected = trained_with(
        "neural",
        &[("sizes", "8"), ("epochs", "2")],
        PreprocessSpec {
            features: Some(vec![9, 2, 1, 4, 12, 3, 7]),
            log1p: vec![],
            normalize: Some(NormalizeKind::ZScore),
        },
    );
    check_to(&selected, &test, "neural, selection", 1e-5);
    // DASALC's log1p on some selected columns, then the z-score.
    let logged = trained_with(
        "neural",
        &[("sizes", "8"), ("epochs", "2")],
        PreprocessSpec {
            features: Some(vec![9, 2, 1, 4, 12, 3, 7]),
            log1p: vec![1, 2, 9],
            normalize: Some(NormalizeKind::ZScore),
        },
    );
    check_to(&logged, &test, "neural, log1p + selection", 1e-5);
    check_to(
        &logged,
        &with_missing(&test),
        "neural, log1p + selection, features missing",
        1e-5,
    );
}

#[test]
fn log1p_and_feature_selection_travel_with_the_model() {
    let (_, test) = data();
    // Features 1-4 are mostly negative: the signed log1p and a selection that reorders and drops features.
    let spec = PreprocessSpec {
        features: Some(vec![9, 2, 1, 4, 12, 3, 7]),
        log1p: vec![1, 2, 9],
        normalize: Some(NormalizeKind::ZScore),
    };
    let m = trained_with("lambdamart", &[("trees", "30")], spec.clone());
    let decoded = check(&m, &test, "lambdamart, log1p + selection");
    check(
        &m,
        &with_missing(&test),
        "lambdamart, log1p + selection, features missing",
    );
    check(
        &m,
        &with_nan(&test),
        "lambdamart, log1p + selection, NaN values",
    );
    let used: Vec<i64> = ints(ensemble_node(&decoded), "nodes_featureids");
    assert!(used.iter().all(|f| [8, 1, 0, 3, 11, 2, 6].contains(f)));
    // A linear model with log1p is refused, as by every engine (ONNX has no log1p; log(1 + |x|) is not it).
    let linear = trained_with("ranksvm", &[], spec);
    let e = export(&linear, Target::Onnx, &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("onnx") && e.contains("log1p"), "{e}");
    // Without log1p the selected, reordered columns are read by a Gather.
    let linear = trained_with(
        "ranksvm",
        &[],
        PreprocessSpec {
            features: Some(vec![9, 2, 1, 4, 12, 3, 7]),
            log1p: vec![],
            normalize: Some(NormalizeKind::MinMax),
        },
    );
    check(&linear, &test, "ranksvm, selection");
    check(&linear, &with_nan(&test), "ranksvm, selection, NaN values");
}

#[test]
fn what_onnx_cannot_express_is_refused_with_the_reason() {
    let strict = ExportOptions {
        missing: MissingPolicy::Strict,
        ..Default::default()
    };
    // Nothing differs from `ltr predict`, so --missing strict exports.
    onnx_bytes(
        &trained("lambdamart", &[("trees", "5")], NormalizeKind::ZScore),
        &strict,
    );
    let cases = [
        (
            trained("mhr", &[], NormalizeKind::ZScore),
            "aggregates the rankings",
        ),
        (
            trained("ranksvm", &[], NormalizeKind::QueryZScore),
            "per query",
        ),
        (
            trained("lambdamart", &[("trees", "5")], NormalizeKind::QueryMinMax),
            "per query",
        ),
    ];
    for (model, needle) in cases {
        let e = export(&model, Target::Onnx, &ExportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("onnx cannot run this model") && e.contains(needle),
            "{e}"
        );
    }
}
