//! The engines' formats, written from a [`LinearForm`].

use std::fmt::Write as _;

use ltr_core::ModelFile;
use serde_json::{json, Map, Value};

use crate::forest::export_forest;
use crate::linear::{linear_form, LinearForm, Normalizer, Term};
use crate::onnx::export_onnx;
use crate::target::{ExportOptions, Exported, Target};
use crate::trees::{raw_stumps, RawStump};
use crate::vespa_onnx::vespa_onnx;
use crate::{ExportError, Result};

const MISSING_FEATURES: &str = "a feature absent from a document counts as raw value 0 (as in training), which the normaliser then maps like any other value";

/// Export `model` to `target`.
pub fn export(model: &ModelFile, target: Target, opts: &ExportOptions) -> Result<Exported> {
    if target == Target::Onnx {
        return export_onnx(model, opts);
    }
    match model.model {
        ltr_core::Model::Boosted(_) => {
            return Err(ExportError::Unsupported {
                target: target.name().into(),
                reason: "it is trees boosted from another model (init-model/init-algo), which no export target expresses as one model; export the start model and a model trained without init-… instead".into(),
            })
        }
        ltr_core::Model::Forest(_) => return export_forest(model, target, opts),
        ltr_core::Model::Neural(ref net) if target == Target::Vespa => {
            return vespa_onnx(model, net, opts)
        }
        _ if target == Target::Es8Ltr => {
            return Err(ExportError::Unsupported {
                target: target.name().into(),
                reason: "Elasticsearch 8's learning to rank runs tree ensembles; train lambdamart, mart or random-forest, or export this model to es-ltr (the LTR plugin)".into(),
            })
        }
        ltr_core::Model::Stumps(_) => return export_trees(model, target, opts),
        _ => {}
    }
    let form = linear_form(model, target.name())?;
    if form.terms.is_empty() {
        return Err(ExportError::Unsupported {
            target: target.name().into(),
            reason: "every weight is zero: the model ranks nothing".into(),
        });
    }
    let fold = opts.fold_normalizer || target == Target::RankLib;
    let form = if fold { form.folded() } else { form };
    let mut notes = vec![format!("missing features: {MISSING_FEATURES}")];
    if fold {
        notes.push(
            "normalisers are folded into the weights: scores differ from `ltr predict` by a constant, rankings are the same"
                .into(),
        );
    }
    Ok(match target {
        Target::EsLtr | Target::OpenSearchLtr => es_ltr(&form, target, opts, &mut notes)?,
        Target::SolrLtr => solr_ltr(&form, opts, &mut notes),
        Target::Vespa => vespa(&form, opts, &mut notes),
        Target::RankLib => ranklib(&form, &mut notes),
        Target::Es8Ltr | Target::Onnx => unreachable!("written above"),
    })
}

/// Weights as the engines store them (float32), written as the f64 nearest to that float.
fn f32_value(w: f64) -> Value {
    json!(w as f32 as f64)
}

fn es_ltr(
    form: &LinearForm,
    target: Target,
    opts: &ExportOptions,
    notes: &mut Vec<String>,
) -> Result<Exported> {
    let mut definition = Map::new();
    let mut normalizers = Map::new();
    for t in &form.terms {
        definition.insert(t.name.clone(), f32_value(t.weight));
        match t.normalizer {
            Normalizer::Identity => {}
            Normalizer::Standard { mean, std } => {
                normalizers.insert(
                    t.name.clone(),
                    json!({"standard": {"mean": mean, "standard_deviation": std}}),
                );
            }
            Normalizer::MinMax { min, max } => {
                if min < 0.0 {
                    return Err(ExportError::Unsupported {
                        target: target.name().into(),
                        reason: format!(
                            "its min_max normaliser needs 0 <= minimum, but feature `{}` reaches {min} in training; export with --fold-normalizer, or train with --normalize zscore",
                            t.name
                        ),
                    });
                }
                normalizers.insert(
                    t.name.clone(),
                    json!({"min_max": {"minimum": min, "maximum": max}}),
                );
            }
        }
    }
    let mut inner = json!({"type": "model/linear", "definition": definition});
    if !normalizers.is_empty() {
        inner["feature_normalizers"] = Value::Object(normalizers);
    }
    let body = json!({"model": {"name": opts.name, "model": inner}});
    notes.insert(
        0,
        format!(
            "upload: POST _ltr/_featureset/{}/_createmodel with this body; every feature name must exist in that feature set",
            opts.feature_set
        ),
    );
    Ok(Exported {
        model: format!("{body:#}\n"),
        binary: None,
        feature_store: None,
        side_files: Vec::new(),
        notes: std::mem::take(notes),
    })
}

fn solr_ltr(form: &LinearForm, opts: &ExportOptions, notes: &mut Vec<String>) -> Exported {
    let features: Vec<Value> = form
        .terms
        .iter()
        .map(|t| match t.normalizer {
            Normalizer::Identity => json!({"name": t.name}),
            Normalizer::Standard { mean, std } => json!({
                "name": t.name,
                "norm": {"class": "org.apache.solr.ltr.norm.StandardNormalizer",
                         "params": {"avg": mean.to_string(), "std": std.to_string()}}
            }),
            Normalizer::MinMax { min, max } => json!({
                "name": t.name,
                "norm": {"class": "org.apache.solr.ltr.norm.MinMaxNormalizer",
                         "params": {"min": min.to_string(), "max": max.to_string()}}
            }),
        })
        .collect();
    let weights: Map<String, Value> = form
        .terms
        .iter()
        .map(|t| (t.name.clone(), f32_value(t.weight)))
        .collect();
    let model = json!({
        "class": "org.apache.solr.ltr.model.LinearModel",
        "name": opts.name,
        "store": opts.feature_set,
        "features": features,
        "params": {"weights": weights},
    });
    let store: Vec<Value> = form
        .terms
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "class": "org.apache.solr.ltr.feature.SolrFeature",
                "params": {"q": format!("TODO: the query whose score is feature {} (`{}`)", t.feature, t.name)},
                "store": opts.feature_set,
            })
        })
        .collect();
    notes.insert(
        0,
        format!(
            "upload: PUT the feature store to /solr/<core>/schema/feature-store (fill in each feature's query first), then this model to /solr/<core>/schema/model-store; query with rq={{!ltr model={}}}",
            opts.name
        ),
    );
    Exported {
        model: format!("{model:#}\n"),
        binary: None,
        feature_store: Some(format!("{:#}\n", Value::Array(store))),
        side_files: Vec::new(),
        notes: std::mem::take(notes),
    }
}

fn vespa_term(t: &Term) -> String {
    let x = &t.name;
    match t.normalizer {
        Normalizer::Identity => x.clone(),
        Normalizer::Standard { mean, std } => format!("(({x} - {mean}) / {std})"),
        Normalizer::MinMax { min, max } => format!("(({x} - {min}) / {})", max - min),
    }
}

fn vespa(form: &LinearForm, opts: &ExportOptions, notes: &mut Vec<String>) -> Exported {
    let mut expr = String::new();
    for (k, t) in form.terms.iter().enumerate() {
        let w = t.weight as f32 as f64;
        let sign = if w < 0.0 { "-" } else { "+" };
        if k == 0 {
            if w < 0.0 {
                expr.push('-');
            }
        } else {
            let _ = write!(expr, "\n            {sign} ");
        }
        let _ = write!(expr, "{} * {}", w.abs(), vespa_term(t));
    }
    let model = format!(
        "# Exported by ltr. Missing features count as 0 (raw value, before normalisation).\nrank-profile {} inherits default {{\n    first-phase {{\n        expression {{\n            {expr}\n        }}\n    }}\n}}\n",
        opts.name
    );
    notes.insert(
        0,
        "add this rank-profile to your schema; each feature name must be a Vespa rank feature (e.g. bm25(title), attribute(pagerank)) — name them so with --feature-names".into(),
    );
    Exported {
        model,
        binary: None,
        feature_store: None,
        side_files: Vec::new(),
        notes: std::mem::take(notes),
    }
}

fn ranklib(form: &LinearForm, notes: &mut Vec<String>) -> Exported {
    let mut model = String::from(
        "## Coordinate Ascent\n## Exported by ltr: a linear model, normalisers folded into the weights\n## Missing features count as 0\n## Restart = 1\n## MaxIteration = 0\n",
    );
    let line: Vec<String> = form
        .terms
        .iter()
        .map(|t| format!("{}:{}", t.feature, t.weight as f32 as f64))
        .collect();
    model.push_str(&line.join(" "));
    model.push('\n');
    notes.insert(
        0,
        "load with RankLib's -load, without -norm (the normalisation is already in the weights)"
            .into(),
    );
    Exported {
        model,
        binary: None,
        feature_store: None,
        side_files: Vec::new(),
        notes: std::mem::take(notes),
    }
}

/// RankBoost as depth-1 trees on raw values: RankLib MART XML (also the `model/ranklib` definition of
/// Elasticsearch/OpenSearch), Solr's MultipleAdditiveTreesModel, or a Vespa sum of `if` terms.
fn export_trees(model: &ModelFile, target: Target, opts: &ExportOptions) -> Result<Exported> {
    let stumps = raw_stumps(model, target.name())?;
    if stumps.is_empty() {
        return Err(ExportError::Unsupported {
            target: target.name().into(),
            reason: "no weak ranker depends on a feature that varied in training: the model ranks nothing".into(),
        });
    }
    let mut notes = vec![
        "missing features: a feature absent from a document counts as raw value 0 (as in training)".to_string(),
        "thresholds are on raw feature values (the stored normalisation is carried into them exactly)".to_string(),
    ];
    Ok(match target {
        Target::RankLib => {
            notes.insert(0, "load with RankLib's -load, without -norm".into());
            Exported {
                model: ranklib_mart(&stumps),
                binary: None,
                feature_store: None,
                side_files: Vec::new(),
                notes,
            }
        }
        Target::EsLtr | Target::OpenSearchLtr => {
            let body = json!({"model": {"name": opts.name, "model": {
                "type": "model/ranklib",
                "definition": ranklib_mart(&stumps),
            }}});
            notes.insert(
                0,
                format!(
                    "upload: POST _ltr/_featureset/{}/_createmodel with this body; model/ranklib refers to features by position, so feature k of the set must be feature k of the training file",
                    opts.feature_set
                ),
            );
            Exported {
                model: format!("{body:#}\n"),
                binary: None,
                feature_store: None,
                side_files: Vec::new(),
                notes,
            }
        }
        Target::SolrLtr => {
            let trees: Vec<Value> = stumps
                .iter()
                .map(|s| {
                    json!({"weight": "1", "root": {
                        "feature": s.name,
                        "threshold": s.threshold.to_string(),
                        "left": {"value": "0"},
                        "right": {"value": (s.alpha as f32).to_string()},
                    }})
                })
                .collect();
            let mut names: Vec<(usize, &str)> = stumps
                .iter()
                .map(|s| (s.feature, s.name.as_str()))
                .collect();
            names.sort();
            names.dedup();
            let model = json!({
                "class": "org.apache.solr.ltr.model.MultipleAdditiveTreesModel",
                "name": opts.name,
                "store": opts.feature_set,
                "features": names.iter().map(|(_, n)| json!({"name": n})).collect::<Vec<_>>(),
                "params": {"trees": trees},
            });
            let store: Vec<Value> = names
                .iter()
                .map(|(k, n)| json!({
                    "name": n,
                    "class": "org.apache.solr.ltr.feature.SolrFeature",
                    "params": {"q": format!("TODO: the query whose score is feature {k} (`{n}`)")},
                    "store": opts.feature_set,
                }))
                .collect();
            notes.insert(0, format!("upload: the feature store to /solr/<core>/schema/feature-store, then this model to /solr/<core>/schema/model-store; query with rq={{!ltr model={}}}", opts.name));
            Exported {
                model: format!("{model:#}\n"),
                binary: None,
                feature_store: Some(format!("{:#}\n", Value::Array(store))),
                side_files: Vec::new(),
                notes,
            }
        }
        Target::Es8Ltr | Target::Onnx => unreachable!("written in export"),
        Target::Vespa => {
            let terms: Vec<String> = stumps
                .iter()
                .map(|s| format!("if ({} > {}, {}, 0)", s.name, s.threshold, s.alpha as f32))
                .collect();
            notes.insert(0, "add this rank-profile to your schema; each feature name must be a Vespa rank feature".into());
            Exported {
                model: format!(
                    "# Exported by ltr. Missing features count as 0 (raw value, before normalisation).\nrank-profile {} inherits default {{\n    first-phase {{\n        expression {{\n            {}\n        }}\n    }}\n}}\n",
                    opts.name,
                    terms.join("\n            + ")
                ),
                binary: None,
                feature_store: None,
                side_files: Vec::new(),
                notes,
            }
        }
    })
}

/// RankLib's ensemble XML: one depth-1 tree per stump (a value ≤ the threshold goes left).
fn ranklib_mart(stumps: &[RawStump]) -> String {
    let mut x = format!(
        "## MART\n## Exported by ltr: RankBoost weak rankers as depth-1 trees on raw values; missing features count as 0\n## No. of trees = {}\n## No. of leaves = 2\n## Learning rate = 1.0\n<ensemble>\n",
        stumps.len()
    );
    for (i, s) in stumps.iter().enumerate() {
        let _ = write!(
            x,
            "\t<tree id=\"{}\" weight=\"1.0\">\n\t\t<split>\n\t\t\t<feature> {} </feature>\n\t\t\t<threshold> {} </threshold>\n\t\t\t<split pos=\"left\">\n\t\t\t\t<output> 0.0 </output>\n\t\t\t</split>\n\t\t\t<split pos=\"right\">\n\t\t\t\t<output> {} </output>\n\t\t\t</split>\n\t\t</split>\n\t</tree>\n",
            i + 1,
            s.feature,
            s.threshold,
            s.alpha as f32
        );
    }
    x.push_str("</ensemble>\n");
    x
}
