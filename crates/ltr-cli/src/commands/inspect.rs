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
    /// Merge runs of a qid that reappears (default: error).
    #[arg(long)]
    pub regroup: bool,
    /// Accept the same `#docid` twice within one query (default: an error naming both lines).
    #[arg(long)]
    pub allow_duplicate_docids: bool,
}

fn is_model(path: &std::path::Path) -> bool {
    let Ok(mut f) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = [0u8; 4096];
    let n = std::io::Read::read(&mut f, &mut head).unwrap_or(0);
    let text = String::from_utf8_lossy(&head[..n]);
    head[..n].starts_with(b"LTRMODEL")
        || text.contains("\"format_version\"")
        || ["## Coordinate Ascent", "## MART", "## LambdaMART"]
            .iter()
            .any(|h| text.starts_with(h))
        || ltr_export::is_foreign_model(&head[..n])
}

/// Run the command.
pub fn run(a: InspectArgs) -> Result<()> {
    if is_model(&a.file) {
        // An ltr model, or a RankLib one.
        let m = ltr_export::load_model(&a.file)?;
        return inspect_model(&m, a.json);
    }
    let ds = super::load_dataset(&a.file, a.regroup, a.allow_duplicate_docids)?;
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

/// (raw feature number, name, weight), largest |weight| first.
fn weights_by_magnitude(m: &ModelFile, w: &[f64]) -> Vec<(usize, String, f64)> {
    let mut v: Vec<(usize, String, f64)> = m
        .input_features()
        .into_iter()
        .zip(w)
        .map(|((raw, name), &w)| (raw, name, w))
        .collect();
    v.sort_by(|a, b| b.2.abs().total_cmp(&a.2.abs()).then(a.0.cmp(&b.0)));
    v
}

/// A tree ensemble's features that split at least once: (raw feature number, name, splits, summed gain), largest gain
/// first. Empty for other models.
fn importance_by_gain(m: &ModelFile) -> Vec<(usize, String, u64, f64)> {
    let Model::Forest(f) = &m.model else {
        return Vec::new();
    };
    let (splits, gains) = f.importance();
    let mut v: Vec<(usize, String, u64, f64)> = m
        .input_features()
        .into_iter()
        .zip(splits.iter().zip(&gains))
        .filter(|(_, (&n, _))| n > 0)
        .map(|((raw, name), (&n, &g))| (raw, name, n, g))
        .collect();
    v.sort_by(|a, b| b.3.total_cmp(&a.3).then(a.0.cmp(&b.0)));
    v
}

fn inspect_model(m: &ModelFile, json: bool) -> Result<()> {
    let kind = match &m.model {
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
    };
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
            "weights_by_magnitude": match &m.model {
                Model::Linear(l) => weights_by_magnitude(m, &l.weights)
                    .into_iter()
                    .map(|(raw, name, w)| serde_json::json!({"feature": raw, "name": name, "weight": w}))
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            },
            "importance": importance_by_gain(m)
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
        let ranked = weights_by_magnitude(m, &l.weights);
        println!("weights by magnitude (--json lists all {}):", ranked.len());
        for (raw, name, w) in ranked.iter().take(20) {
            println!("  {w:+.6}  {name} (feature {raw})");
        }
    }
    let importance = importance_by_gain(m);
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
