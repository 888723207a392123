//! A neural network to Vespa (`--to vespa`): Vespa runs ONNX models in ranking (`onnx-model` in a rank profile,
//! evaluated by onnxruntime inside the content node), so the export is the network's ONNX graph (`onnx.rs`, the
//! side file `FILE.onnx`) and a rank profile that feeds it one document's features and sums its score.
//!
//! The profile builds the graph's input `features`, float32 `[N, F]` with `N` = 1, as a dense tensor literal whose
//! cells are rank features: `tensor<float>(d0[1],d1[F]):[[name₁, …, name_F]]`, column `k − 1` the expression named
//! for raw feature `k` (`--feature-names`). Vespa names an ONNX input's dimensions `d0, d1, …` in order, so `d0[1]`
//! binds the graph's symbolic row count to one document. A column the network does not read (a feature selection
//! left it out) is written `0`, so Vespa computes no feature for it. The graph's output `scores` `[1, 1]` becomes
//! `tensor<float>(d0[1],d1[1])`, and `sum` makes it the document's score. The stored preprocessing (z-score,
//! min–max, `log1p`) is inside the graph, so the profile passes raw values, as `ltr predict` reads them.
//!
//! A self-attention network scores the documents of a query together; a rank profile scores one document at a
//! time, so that network is refused with the reason.

use std::fmt::Write as _;

use ltr_core::{ModelFile, NeuralNet};

use crate::onnx::{export_onnx, layout_note, INPUT as ONNX_INPUT, OUTPUT as ONNX_OUTPUT};
use crate::target::{ExportOptions, Exported, Target};
use crate::{ExportError, Result};

/// `model`, whose network is `net`, as a Vespa rank profile and its ONNX side file (an encoder is refused).
pub(crate) fn vespa_onnx(
    model: &ModelFile,
    net: &NeuralNet,
    opts: &ExportOptions,
) -> Result<Exported> {
    if net.encoder.is_some() {
        return Err(ExportError::Unsupported {
            target: Target::Vespa.name().into(),
            reason: "its self-attention encoder scores the documents of a query together, and a rank profile \
                     scores one document at a time; export it with --to onnx and score each query's documents in \
                     one call (a container component), or train scorer=mlp"
                .into(),
        });
    }
    let onnx = export_onnx(model, opts)?;
    let Some(bytes) = onnx.binary else {
        return Err(ExportError::Model(
            "the ONNX export of the network wrote no graph".into(),
        ));
    };
    let width = crate::model_width(model);
    let read: Option<&Vec<usize>> = model.preprocess.as_ref().and_then(|p| p.features.as_ref());
    let cells: Vec<String> = (1..=width)
        .map(|k| match read {
            Some(f) if !f.contains(&k) => "0".to_string(),
            _ => model.feature_name(k),
        })
        .collect();
    let name = &opts.name;
    let file = format!("{name}.onnx");
    let mut notes = vec![
        format!(
            "add this rank-profile to your schema and save the ONNX model (the side file FILE.onnx) as models/{file} \
             in the application package; each feature name must be a Vespa rank feature (e.g. bm25(title), \
             attribute(pagerank)) — name them so with --feature-names"
        ),
        "missing features: write a Vespa feature that is 0 where `ltr predict` reads an absent feature (an unset \
         float attribute is NaN in Vespa, which the network does not map to 0)"
            .to_string(),
        "the network runs in first-phase for every match; for large result sets move it to second-phase \
         (with a rerank-count) behind a cheap first-phase such as bm25"
            .to_string(),
    ];
    // The profile builds the input itself, so the ONNX layout note is not the user's to follow.
    let layout = layout_note(width);
    notes.extend(onnx.notes.into_iter().filter(|n| *n != layout));
    let mut profile =
        String::from("# Exported by ltr: a neural network, scored by Vespa's onnx-model.\n");
    for n in &notes[1..] {
        let _ = writeln!(profile, "# {}", n.replace('\n', " "));
    }
    let _ = write!(
        profile,
        "rank-profile {name} inherits default {{\n    function ltr_features() {{\n        expression: \
         tensor<float>(d0[1],d1[{width}]):[[{}]]\n    }}\n    onnx-model {name} {{\n        file: models/{file}\n        \
         input \"{ONNX_INPUT}\": ltr_features\n        output \"{ONNX_OUTPUT}\": {ONNX_OUTPUT}\n    }}\n    \
         first-phase {{\n        expression: sum(onnx({name}).{ONNX_OUTPUT})\n    }}\n}}\n",
        cells.join(", ")
    );
    Ok(Exported {
        model: profile,
        binary: None,
        feature_store: None,
        side_files: vec![(".onnx".into(), bytes)],
        notes,
    })
}
