//! What a model file says about itself, in words and ranked lists: `ltr inspect`, `ltrkit` and reports read it
//! from here, so every front end describes a model the same way.

use crate::neural::{Dense, HiddenLayer, NeuralNet};
use crate::{Model, ModelFile};

impl ModelFile {
    /// The kind of model, in words (`linear`, `120 regression trees, 3,720 leaves`, …).
    pub fn kind_description(&self) -> String {
        kind_of(&self.model)
    }

    /// A linear model's weights as (raw feature number, name, weight), largest |weight| first (ties by feature);
    /// empty for other models.
    pub fn weights_by_magnitude(&self) -> Vec<(usize, String, f64)> {
        let Model::Linear(l) = &self.model else {
            return Vec::new();
        };
        let mut v: Vec<(usize, String, f64)> = self
            .input_features()
            .into_iter()
            .zip(&l.weights)
            .map(|((raw, name), &w)| (raw, name, w))
            .collect();
        v.sort_by(|a, b| b.2.abs().total_cmp(&a.2.abs()).then(a.0.cmp(&b.0)));
        v
    }

    /// A tree ensemble's features that split at least once, as (raw feature number, name, splits, summed gain),
    /// largest gain first (ties by feature); empty for other models.
    pub fn importance_by_gain(&self) -> Vec<(usize, String, u64, f64)> {
        // A boosted model's importance is its trees' (the start model's share is not a split gain).
        let f = match &self.model {
            Model::Forest(f) => f,
            Model::Boosted(b) => &b.forest,
            _ => return Vec::new(),
        };
        let (splits, gains) = f.importance();
        let mut v: Vec<(usize, String, u64, f64)> = self
            .input_features()
            .into_iter()
            .zip(splits.iter().zip(&gains))
            .filter(|(_, (&n, _))| n > 0)
            .map(|((raw, name), (&n, &g))| (raw, name, n, g))
            .collect();
        v.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)));
        v
    }

    /// What `ltr inspect MODEL` prints: everything the file says about the model, as pretty JSON (`json`) or as a
    /// summary with the 20 largest weights or gains (a newline ends every line).
    pub fn describe(&self, json: bool) -> String {
        let m = self;
        let kind = m.kind_description();
        let diagnostics: serde_json::Value = if m.diagnostics_json.is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&m.diagnostics_json).unwrap_or(serde_json::Value::Null)
        };
        if json {
            let v = serde_json::json!({
                "algorithm": m.algorithm,
                "kind": kind,
                "format_version": m.format_version,
                "crate_version": m.crate_version,
                "features": m.n_features,
                "params": m.params,
                "training": {
                    "train_file": m.training.train_file,
                    "validation_file": m.training.validation_file,
                    "queries": m.training.queries,
                    "documents": m.training.documents,
                    "seed": m.training.seed,
                    "seconds": m.training.seconds,
                },
                "fit": m.fit,
                "feature_names": m.feature_names,
                "weights_by_magnitude": m.weights_by_magnitude()
                    .into_iter()
                    .map(|(raw, name, w)| serde_json::json!({"feature": raw, "name": name, "weight": w}))
                    .collect::<Vec<_>>(),
                "importance": m.importance_by_gain()
                    .into_iter()
                    .map(|(raw, name, splits, gain)| serde_json::json!({"feature": raw, "name": name, "splits": splits, "gain": gain}))
                    .collect::<Vec<_>>(),
                "preprocess": m.preprocess,
                "network": match &m.model {
                    Model::Neural(n) => network_json(n),
                    _ => serde_json::Value::Null,
                },
                "diagnostics": diagnostics,
            });
            return format!("{v:#}\n");
        }
        let mut out = String::new();
        let mut line = |text: String| {
            out.push_str(&text);
            out.push('\n');
        };
        line(format!("algorithm:   {}", m.algorithm));
        line(format!("kind:        {kind}"));
        line(format!(
            "format:      v{} (written by ltr {})",
            m.format_version, m.crate_version
        ));
        line(format!("features:    {}", m.n_features));
        let params: Vec<String> = m.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        line(format!("params:      {}", params.join(" ")));
        line(format!(
            "trained on:  {} ({} queries, {} documents, seed {}, {:.3}s){}",
            m.training.train_file,
            m.training.queries,
            m.training.documents,
            m.training.seed,
            m.training.seconds,
            m.training
                .validation_file
                .as_ref()
                .map_or(String::new(), |v| format!(", validated on {v}"))
        ));
        let fit = &m.fit;
        let mut facts = Vec::new();
        if let Some(i) = fit.iterations {
            facts.push(format!("{i} iterations"));
        }
        if let Some(o) = fit.objective {
            facts.push(format!("objective {o:.6}"));
        }
        if let Some(g) = fit.duality_gap {
            facts.push(format!("duality gap {g:.3e}"));
        }
        for (k, v) in &fit.selected {
            facts.push(format!("{k}={v} (chosen)"));
        }
        if let Some(v) = fit.validation {
            facts.push(format!("validation {v:.4}"));
        }
        if !facts.is_empty() {
            line(format!("fit:         {}", facts.join(", ")));
        }
        line(match &m.preprocess {
            Some(p) => format!("preprocess:  {}", p.describe().join("; ")),
            None => "preprocess:  none (the model reads the features as given)".to_string(),
        });
        if let Model::Neural(n) = &m.model {
            for l in network_lines(n) {
                line(l);
            }
        }
        if let Model::Linear(l) = &m.model {
            line(format!("‖w‖:         {:.6}", l.norm()));
            let ranked = m.weights_by_magnitude();
            line(format!(
                "weights by magnitude (--json lists all {}):",
                ranked.len()
            ));
            for (raw, name, w) in ranked.iter().take(20) {
                line(format!("  {w:+.6}  {name} (feature {raw})"));
            }
        }
        let importance = m.importance_by_gain();
        if !importance.is_empty() {
            line(format!(
                "importance by gain (splits; --json lists all {}):",
                importance.len()
            ));
            for (raw, name, splits, gain) in importance.iter().take(20) {
                line(format!(
                    "  {gain:12.4}  {splits:6} splits  {name} (feature {raw})"
                ));
            }
        }
        if !diagnostics.is_null() {
            line(format!("diagnostics:\n{diagnostics:#}"));
        }
        out
    }
}

/// A model's kind, in words.
fn kind_of(model: &Model) -> String {
    match model {
        Model::Linear(_) => "linear".to_string(),
        Model::Aggregate(a) => format!(
            "rank aggregate of {} linear members ({:?})",
            a.members.len(),
            a.method
        ),
        Model::Stumps(s) => format!("{} threshold weak rankers", s.stumps.len()),
        Model::Trees(t) => format!("{} regression trees", t.trees.len()),
        Model::Forest(f) => format!(
            "{} regression trees, {} leaves",
            f.trees.len(),
            f.trees.iter().map(|t| t.n_leaves()).sum::<usize>()
        ),
        Model::Boosted(b) => format!(
            "{} regression trees, {} leaves, boosted from a start model: {}",
            b.forest.trees.len(),
            b.forest.trees.iter().map(|t| t.n_leaves()).sum::<usize>(),
            kind_of(&b.init.model)
        ),
        Model::Neural(n) => format!(
            "neural network, {} hidden layer{} ({}){}, {} parameters",
            n.hidden.len(),
            if n.hidden.len() == 1 { "" } else { "s" },
            if n.hidden.is_empty() {
                "linear with a bias".to_string()
            } else {
                n.hidden
                    .iter()
                    .map(|h| h.dense.outputs.to_string())
                    .collect::<Vec<_>>()
                    .join("→")
                    + " "
                    + n.activation.name()
            },
            n.encoder.as_ref().map_or(String::new(), |e| format!(
                ", self-attention encoder of {} block{} ({} heads, width {}, d_ff {})",
                e.blocks.len(),
                if e.blocks.len() == 1 { "" } else { "s" },
                e.heads,
                e.width(),
                e.d_ff()
            )),
            n.n_parameters()
        ),
    }
}

/// A layer's normalisation, in words.
fn norm_of(h: &HiddenLayer) -> &'static str {
    match (&h.norm, &h.batch_norm) {
        (Some(_), _) => "layer norm",
        (None, Some(_)) => "batch norm (running statistics)",
        (None, None) => "none",
    }
}

/// `ltr inspect`'s lines for a neural network: one a layer, input to output.
fn network_lines(n: &NeuralNet) -> Vec<String> {
    let dense = |d: &Dense| d.weights.len() + d.bias.len();
    let mut widths = vec![n.n_features.to_string()];
    widths.extend(n.hidden.iter().map(|h| h.dense.outputs.to_string()));
    widths.push("1".into());
    let mut out = vec![format!(
        "network:     {} ({}), {} parameters",
        widths.join(" → "),
        n.activation.name(),
        n.n_parameters()
    )];
    out.push(format!(
        "  input       {} features{}",
        n.n_features,
        if n.input_norm.is_some() {
            format!(", layer norm ({} parameters)", 2 * n.n_features)
        } else {
            String::new()
        }
    ));
    for (l, h) in n.hidden.iter().enumerate() {
        let norm = 2 * h.norm.as_ref().map_or(0, |x| x.gamma.len())
            + 2 * h.batch_norm.as_ref().map_or(0, |x| x.gamma.len());
        out.push(format!(
            "  hidden {:<4} dense {} → {}, {}, {} ({} parameters)",
            l + 1,
            h.dense.inputs,
            h.dense.outputs,
            norm_of(h),
            n.activation.name(),
            dense(&h.dense) + norm
        ));
    }
    if let Some(e) = &n.encoder {
        out.push(format!(
            "  encoder     {} self-attention block{} ({} heads, width {}, d_ff {}), final norm ({} parameters)",
            e.blocks.len(),
            if e.blocks.len() == 1 { "" } else { "s" },
            e.heads,
            e.width(),
            e.d_ff(),
            e.n_parameters()
        ));
    }
    out.push(format!(
        "  output      dense {} → 1 ({} parameters)",
        n.output.inputs,
        dense(&n.output)
    ));
    out
}

/// The network as `ltr inspect --json` lists it.
fn network_json(n: &NeuralNet) -> serde_json::Value {
    let dense = |d: &Dense| d.weights.len() + d.bias.len();
    serde_json::json!({
        "inputs": n.n_features,
        "input_norm": n.input_norm.is_some(),
        "activation": n.activation.name(),
        "parameters": n.n_parameters(),
        "hidden": n.hidden.iter().map(|h| serde_json::json!({
            "inputs": h.dense.inputs,
            "outputs": h.dense.outputs,
            "norm": match (&h.norm, &h.batch_norm) {
                (Some(_), _) => "layer",
                (None, Some(_)) => "batch",
                (None, None) => "none",
            },
            "parameters": dense(&h.dense)
                + 2 * h.norm.as_ref().map_or(0, |x| x.gamma.len())
                + 2 * h.batch_norm.as_ref().map_or(0, |x| x.gamma.len()),
        })).collect::<Vec<_>>(),
        "encoder": n.encoder.as_ref().map(|e| serde_json::json!({
            "blocks": e.blocks.len(),
            "heads": e.heads,
            "width": e.width(),
            "d_ff": e.d_ff(),
            "parameters": e.n_parameters(),
        })),
        "output": {"inputs": n.output.inputs, "parameters": dense(&n.output)},
    })
}
