//! `ltr inspect FILE [--json]`: a dataset or model summary.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use ltr_core::{Model, ModelFile};

/// Arguments of `ltr inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A LETOR/SVMlight data file or a model file.
    pub file: PathBuf,
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// How the data file is read.
    #[command(flatten)]
    pub read: super::DataOpts,
}

/// Run the command.
pub fn run(a: InspectArgs) -> Result<()> {
    if ltr_export::is_model_file(&a.file) {
        // An ltr model, or a RankLib one.
        let m = ltr_export::load_model(&a.file)?;
        return inspect_model(&m, a.json);
    }
    let ds = super::load_dataset(&a.file, &a.read)?;
    let s = ds.summary();
    let qids: Vec<i64> = ds.qids().iter().filter_map(|q| q.parse().ok()).collect();
    let qid_range = (qids.len() == ds.n_queries() && !qids.is_empty()).then(|| {
        (
            qids.iter().min().copied().unwrap_or(0),
            qids.iter().max().copied().unwrap_or(0),
        )
    });
    // What training would hold, per algorithm, under the default `auto` preprocessing: a z-score on raw features,
    // applied in place — a copy only where sparse storage grows to dense.
    let copies = !ds.features_in_unit_interval() && !ds.is_dense();
    let training: Vec<(&str, u64)> = ltr_learn::memory_estimates(&ds, copies)
        .into_iter()
        .map(|(name, e)| (name, e.total()))
        .collect();
    if a.json {
        let labels: serde_json::Map<String, serde_json::Value> = s
            .labels
            .iter()
            .map(|(l, c)| (format!("{l}"), serde_json::json!(c)))
            .collect();
        let v = serde_json::json!({
            "file": a.file.display().to_string(),
            "queries": s.queries,
            "documents": s.documents,
            "features": s.features,
            "density": s.density,
            "storage": s.storage,
            "labels": labels,
            "docs_per_query": {"min": s.docs_per_query_min, "median": s.docs_per_query_median, "max": s.docs_per_query_max},
            "qid_range": qid_range.map(|(lo, hi)| serde_json::json!({"min": lo, "max": hi})),
            "first_qid": ds.qids().first(),
            "last_qid": ds.qids().last(),
            "has_docids": ds.docids().is_some(),
            "memory_bytes": ds.memory_bytes(),
            "training_memory_bytes": training.iter().map(|(n, b)| (n.to_string(), serde_json::json!(b))).collect::<serde_json::Map<_, _>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("file:            {}", a.file.display());
        println!("queries:         {}", s.queries);
        println!("documents:       {}", s.documents);
        println!(
            "features:        {} ({} storage, density {:.3})",
            s.features, s.storage, s.density
        );
        let hist: Vec<String> = s.labels.iter().map(|(l, c)| format!("{l}:{c}")).collect();
        println!("labels:          {}", hist.join(" "));
        println!(
            "docs per query:  min {} / median {} / max {}",
            s.docs_per_query_min, s.docs_per_query_median, s.docs_per_query_max
        );
        match qid_range {
            Some((lo, hi)) => println!("qid range:       {lo}..{hi}"),
            None => println!(
                "qids:            {} … {}",
                ds.qids().first().map_or("", String::as_str),
                ds.qids().last().map_or("", String::as_str)
            ),
        }
        println!(
            "doc ids:         {}",
            if ds.docids().is_some() { "yes" } else { "no" }
        );
        println!(
            "memory:          {} loaded",
            ltr_learn::human_bytes(ds.memory_bytes())
        );
        let per_algo: Vec<String> = training
            .iter()
            .map(|(n, b)| format!("{n} {}", ltr_learn::human_bytes(*b)))
            .collect();
        println!("training needs:  {}", per_algo.join(", "));
    }
    Ok(())
}

fn inspect_model(m: &ModelFile, json: bool) -> Result<()> {
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
            "diagnostics": diagnostics,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!("algorithm:   {}", m.algorithm);
    println!("kind:        {kind}");
    println!(
        "format:      v{} (written by ltr {})",
        m.format_version, m.crate_version
    );
    println!("features:    {}", m.n_features);
    let params: Vec<String> = m.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("params:      {}", params.join(" "));
    println!(
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
    );
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
        println!("fit:         {}", facts.join(", "));
    }
    match &m.preprocess {
        Some(p) => println!("preprocess:  {}", p.describe().join("; ")),
        None => println!("preprocess:  none (the model reads the features as given)"),
    }
    if let Model::Linear(l) = &m.model {
        println!("‖w‖:         {:.6}", l.norm());
        let ranked = m.weights_by_magnitude();
        println!("weights by magnitude (--json lists all {}):", ranked.len());
        for (raw, name, w) in ranked.iter().take(20) {
            println!("  {w:+.6}  {name} (feature {raw})");
        }
    }
    let importance = m.importance_by_gain();
    if !importance.is_empty() {
        println!(
            "importance by gain (splits; --json lists all {}):",
            importance.len()
        );
        for (raw, name, splits, gain) in importance.iter().take(20) {
            println!("  {gain:12.4}  {splits:6} splits  {name} (feature {raw})");
        }
    }
    if !diagnostics.is_null() {
        println!(
            "diagnostics:\n{}",
            serde_json::to_string_pretty(&diagnostics)?
        );
    }
    Ok(())
}
