//! An evaluation and the measure catalogue as text and JSON: what `ltr eval` prints, in one place so every front
//! end (the CLI, `ltrkit`, reports) shows the same numbers the same way.

use crate::{Evaluation, MEASURES};

impl Evaluation {
    /// `{"convention", "queries", "metrics": {name: {"mean", "per_query"?: {qid: value}}}}`.
    pub fn to_json(&self, per_query: bool) -> serde_json::Value {
        let mut metrics = serde_json::Map::new();
        for r in &self.results {
            let mut o = serde_json::Map::new();
            o.insert("mean".into(), serde_json::json!(r.mean));
            if per_query {
                let pq: serde_json::Map<String, serde_json::Value> = self
                    .qids
                    .iter()
                    .zip(&r.per_query)
                    .map(|(q, v)| (q.clone(), serde_json::json!(v)))
                    .collect();
                o.insert("per_query".into(), serde_json::Value::Object(pq));
            }
            metrics.insert(r.metric.to_string(), serde_json::Value::Object(o));
        }
        serde_json::json!({"convention": self.convention.name, "queries": self.qids.len(), "metrics": metrics})
    }

    /// A table: per-query values first when asked (`qid` then one column per metric), then the convention and each
    /// metric's mean to four decimals.
    pub fn to_text(&self, per_query: bool) -> String {
        let mut out = String::new();
        if per_query {
            let header: Vec<String> = self.results.iter().map(|r| r.metric.to_string()).collect();
            out.push_str(&format!("qid\t{}\n", header.join("\t")));
            for (i, q) in self.qids.iter().enumerate() {
                let row: Vec<String> = self
                    .results
                    .iter()
                    .map(|r| format!("{:.4}", r.per_query[i]))
                    .collect();
                out.push_str(&format!("{q}\t{}\n", row.join("\t")));
            }
            out.push('\n');
        }
        out.push_str(&format!(
            "convention: {} ({} queries)\n",
            self.convention.name,
            self.qids.len()
        ));
        let names: Vec<String> = self.results.iter().map(|r| r.metric.to_string()).collect();
        let width = names
            .iter()
            .map(|n| n.chars().count())
            .max()
            .unwrap_or(0)
            .max(10);
        for (name, r) in names.iter().zip(&self.results) {
            out.push_str(&format!("{name:<width$} {:.4}\n", r.mean));
        }
        out
    }
}

/// Every measure of [`MEASURES`] as JSON: syntax, options, definition and source.
pub fn measures_json() -> serde_json::Value {
    MEASURES
        .iter()
        .map(|m| {
            serde_json::json!({"syntax": m.syntax, "params": m.params, "definition": m.definition, "source": m.source})
        })
        .collect()
}

/// Every measure of [`MEASURES`] as a table, with how names and options are read.
pub fn measures_text() -> String {
    let mut out = String::from(
        "Measures for --metric (case-insensitive; ir_measures' syntax NAME(option=value,...)@cutoff).\n\
         Values equal trec_eval's and ir_measures' under --convention trec; rel=r counts grades >= r as relevant\n\
         for that measure only; judged_only=True drops unjudged documents first (TREC runs; no-op on LETOR data).\n\n",
    );
    out.push_str(&format!(
        "{:<22} {:<34} definition [source]\n",
        "measure", "options (defaults)"
    ));
    for m in MEASURES {
        out.push_str(&format!(
            "{:<22} {:<34} {} [{}]\n",
            m.syntax, m.params, m.definition, m.source
        ));
    }
    out
}
