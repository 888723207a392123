//! A neural network to Vespa: the rank profile that feeds its ONNX graph (the side file) one document's features.
//!
//! The profile is read here as Vespa reads it: the `onnx-model` block names the file, binds the graph's input to
//! the function whose tensor literal lists one rank feature per column, and names the output the first phase sums.
//! Each document's features are then looked up by those names, the side file is run by the reference runtime of
//! `onnx.rs`, one document a call (Vespa's `d0[1]`), and every score must be `ltr predict`'s.

use ltr_core::ModelFile;
use ltr_data::{Dataset, NormalizeKind, PreprocessSpec};
use ltr_export::{export, ExportOptions, Exported, Target};

use crate::common::{data, with_missing};
use crate::onnx::{decode, run, trained_with};

/// The text between `open` and the next `close` after it.
fn between<'a>(s: &'a str, open: &str, close: &str) -> &'a str {
    let start = s
        .find(open)
        .unwrap_or_else(|| panic!("no `{open}` in\n{s}"))
        + open.len();
    let len = s[start..].find(close).unwrap();
    &s[start..start + len]
}

/// `model` exported to Vespa with its features named as Vespa rank features (`attribute(fK)`).
fn to_vespa(model: &ModelFile, width: usize) -> Exported {
    let mut named = model.clone();
    named.feature_names = (1..=width).map(|k| format!("attribute(f{k})")).collect();
    export(&named, Target::Vespa, &ExportOptions::default()).unwrap()
}

/// Score `test` as Vespa would with the profile and side file of `out`: one document a call.
fn vespa_scores(out: &Exported, width: usize, test: &Dataset) -> Vec<f64> {
    let profile = &out.model;
    assert_eq!(out.side_files.len(), 1);
    let (suffix, onnx) = &out.side_files[0];
    assert_eq!(suffix, ".onnx");
    // The onnx-model block: the file under models/, the graph's input bound to a function, its output aliased.
    let block = between(profile, "onnx-model ltr_model {", "}");
    assert!(block.contains("file: models/ltr_model.onnx"), "{block}");
    let input_fn = between(block, "input \"features\": ", "\n").trim();
    let output = between(block, "output \"scores\": ", "\n").trim();
    assert!(
        profile.contains(&format!("expression: sum(onnx(ltr_model).{output})")),
        "{profile}"
    );
    // The function's tensor literal: one cell a column, in column order.
    let body = between(profile, &format!("function {input_fn}() {{"), "}");
    let literal = between(
        body,
        &format!("tensor<float>(d0[1],d1[{width}]):[["),
        "]]\n",
    );
    let cells: Vec<&str> = literal.split(", ").collect();
    assert_eq!(cells.len(), width, "{literal}");
    let graph = decode(onnx, width);
    (0..test.n_docs())
        .map(|i| {
            let row = test.row(i);
            // A rank feature `attribute(fK)` is the document's raw feature K (0 where it has none); `0` is 0.
            let x: Vec<f32> = cells
                .iter()
                .map(|c| match c.strip_prefix("attribute(f") {
                    Some(k) => row.get(k.trim_end_matches(')').parse::<usize>().unwrap() - 1),
                    None => {
                        assert_eq!(*c, "0");
                        0.0
                    }
                })
                .collect();
            run(&graph, x, 1)[0]
        })
        .collect()
}

fn assert_scores_as_ltr(model: &ModelFile, test: &Dataset, what: &str) {
    let width = ltr_export::model_width(model);
    let out = to_vespa(model, width);
    let got = vespa_scores(&out, width, test);
    let want = model.score_raw(test).unwrap();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs().max(1.0),
            "{what}: document {i}: ltr {w} but Vespa's ONNX {g}"
        );
    }
    // The side file is the ONNX export of the same model, byte for byte.
    let mut named = model.clone();
    named.feature_names = (1..=width).map(|k| format!("attribute(f{k})")).collect();
    let onnx = export(&named, Target::Onnx, &ExportOptions::default()).unwrap();
    assert_eq!(out.side_files[0].1, onnx.binary.unwrap(), "{what}");
}

#[test]
fn neural_networks_go_to_vespa_as_onnx_and_score_as_ltr() {
    let (_, test) = data();
    let spec = |features: Option<Vec<usize>>, log1p: Vec<usize>| PreprocessSpec {
        features,
        log1p,
        normalize: Some(NormalizeKind::ZScore),
    };
    let plain = trained_with(
        "neural",
        &[("sizes", "16/8"), ("epochs", "3")],
        spec(None, vec![]),
    );
    assert_scores_as_ltr(&plain, &test, "neural");
    assert_scores_as_ltr(&plain, &with_missing(&test), "neural, features missing");
    // A selection that reorders and drops columns, and DASALC's log1p: the dropped columns are written 0.
    let selected = trained_with(
        "neural",
        &[("sizes", "8"), ("epochs", "2"), ("layer-norm", "true")],
        spec(Some(vec![9, 2, 1, 4, 12, 3, 7]), vec![1, 2, 9]),
    );
    assert_scores_as_ltr(&selected, &test, "neural, log1p + selection");
    let width = ltr_export::model_width(&selected);
    let profile = to_vespa(&selected, width).model;
    let literal = between(&profile, "):[[", "]]");
    assert!(literal.starts_with("attribute(f1), attribute(f2), attribute(f3), attribute(f4), 0, 0, attribute(f7), 0, attribute(f9), 0, 0, attribute(f12)"), "{literal}");
}

#[test]
fn attention_is_refused_and_the_other_engines_point_to_vespa() {
    let attention = trained_with(
        "neural",
        &[
            ("scorer", "attention"),
            ("sizes", "8"),
            ("blocks", "1"),
            ("heads", "2"),
            ("d-ff", "8"),
            ("epochs", "1"),
        ],
        PreprocessSpec::default(),
    );
    let e = export(&attention, Target::Vespa, &ExportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("vespa cannot run this model") && e.contains("documents of a query together"),
        "{e}"
    );
    // The attention network still goes to ONNX, one query a call.
    assert!(export(&attention, Target::Onnx, &ExportOptions::default()).is_ok());
    // The other engines point to ONNX and Vespa.
    let mlp = trained_with(
        "neural",
        &[("sizes", "8"), ("epochs", "1")],
        PreprocessSpec::default(),
    );
    for target in [Target::EsLtr, Target::SolrLtr, Target::RankLib] {
        let e = export(&mlp, target, &ExportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--to vespa"), "{e}");
    }
}
