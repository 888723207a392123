//! What `ltr inspect DATA` prints: the dataset's shape, labels and queries, and the memory each registered
//! algorithm would need to train on it (the rows' [`crate::Memory`]).

use ltr_data::{Dataset, PreprocessSpec};

/// The dataset read from `file` described as pretty JSON (`json`) or as a summary (a newline ends every line).
/// Training memory is estimated under the default `auto` preprocessing, as `ltr train` would run.
pub fn describe_dataset(ds: &Dataset, file: &str, json: bool) -> String {
    let s = ds.summary();
    let qids: Vec<i64> = ds.qids().iter().filter_map(|q| q.parse().ok()).collect();
    let qid_range = (qids.len() == ds.n_queries() && !qids.is_empty()).then(|| {
        (
            qids.iter().min().copied().unwrap_or(0),
            qids.iter().max().copied().unwrap_or(0),
        )
    });
    let copies = PreprocessSpec::default().copies(ds);
    let training: Vec<(&str, u64)> = crate::memory_estimates(ds, copies)
        .into_iter()
        .map(|(name, e)| (name, e.total()))
        .collect();
    if json {
        let labels: serde_json::Map<String, serde_json::Value> = s
            .labels
            .iter()
            .map(|(l, c)| (format!("{l}"), serde_json::json!(c)))
            .collect();
        let v = serde_json::json!({
            "file": file,
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
        return format!("{v:#}\n");
    }
    let hist: Vec<String> = s.labels.iter().map(|(l, c)| format!("{l}:{c}")).collect();
    let qids = match qid_range {
        Some((lo, hi)) => format!("qid range:       {lo}..{hi}"),
        None => format!(
            "qids:            {} … {}",
            ds.qids().first().map_or("", String::as_str),
            ds.qids().last().map_or("", String::as_str)
        ),
    };
    let per_algo: Vec<String> = training
        .iter()
        .map(|(n, b)| format!("{n} {}", crate::human_bytes(*b)))
        .collect();
    [
        format!("file:            {file}"),
        format!("queries:         {}", s.queries),
        format!("documents:       {}", s.documents),
        format!(
            "features:        {} ({} storage, density {:.3})",
            s.features, s.storage, s.density
        ),
        format!("labels:          {}", hist.join(" ")),
        format!(
            "docs per query:  min {} / median {} / max {}",
            s.docs_per_query_min, s.docs_per_query_median, s.docs_per_query_max
        ),
        qids,
        format!(
            "doc ids:         {}",
            if ds.docids().is_some() { "yes" } else { "no" }
        ),
        format!(
            "memory:          {} loaded",
            crate::human_bytes(ds.memory_bytes())
        ),
        format!("training needs:  {}", per_algo.join(", ")),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}
