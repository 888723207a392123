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
    let ours = MEASURES.iter().map(|m| {
        serde_json::json!({"syntax": m.syntax, "params": m.params, "definition": m.definition, "source": m.source})
    });
    let trec = crate::treceval::FAMILIES.iter().map(|f| {
        serde_json::json!({
            "syntax": f.name,
            "params": f.default_params(),
            "definition": f.definition,
            "source": format!("trec_eval 10.0, m_{}.c", f.name),
            "aggregate": trec_aggregate(f.aggregate),
            "same_as": f.equivalent(),
            "trec_eval": true,
        })
    });
    ours.chain(trec).collect()
}

fn trec_aggregate(a: crate::treceval::Aggregate) -> &'static str {
    use crate::treceval::Aggregate;
    match a {
        Aggregate::Mean => "mean",
        Aggregate::Sum => "sum",
        Aggregate::GeometricMean => "geometric_mean",
        Aggregate::None => "-",
    }
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
    out.push_str(
        "\ntrec_eval 10.0's measures, under its names (for --measure, and -m of --format trec_eval): NAME, NAME.params\n\
         (P.5,10; ndcg.1=1,2=3; set_F.0.5), or a printed name (P_5, ndcg_cut_10, iprec_at_recall_0.10); nicknames\n\
         official, set, all_trec. Counts sum over queries, gm_* take the geometric mean, the rest the mean (as\n\
         trec_eval; ir_measures sums NumRet/NumRel/NumRelRet too). Computed as trec_eval's m_NAME.c computes them.\n\n",
    );
    out.push_str(&format!(
        "{:<22} {:<26} {:<10} {:<14} definition\n",
        "trec_eval measure", "default parameters", "summary", "same as"
    ));
    for f in crate::treceval::FAMILIES {
        out.push_str(&format!(
            "{:<22} {:<26} {:<10} {:<14} {} [trec_eval 10.0, m_{}.c]\n",
            f.name,
            f.default_params(),
            trec_aggregate(f.aggregate),
            f.equivalent(),
            f.definition,
            f.name
        ));
    }
    out
}

/// How a row's summary value comes from its per-query values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowAggregate {
    /// Mean over the queries.
    Mean,
    /// Sum over the queries (counts: `NumRet`, `NumRel`, `NumRelRet`, trec_eval's `num_*`), as trec_eval and
    /// ir_measures report them.
    Sum,
    /// Geometric mean (trec_eval's `gm_map`, `gm_bpref`).
    GeometricMean,
}

impl RowAggregate {
    /// `mean`, `sum` or `geometric_mean`.
    pub fn name(self) -> &'static str {
        match self {
            RowAggregate::Mean => "mean",
            RowAggregate::Sum => "sum",
            RowAggregate::GeometricMean => "geometric_mean",
        }
    }
}

/// One row of `ltr eval`'s output: a measure under the name it was asked by, its summary and per-query values.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The name as the user wrote it (or trec_eval's value name when one `-m` item gives several values).
    pub name: String,
    /// The summary value.
    pub value: f64,
    /// How `value` aggregates the queries.
    pub aggregate: RowAggregate,
    /// Per-query values (qid, value); empty for a summary-only measure (`gm_map`).
    pub per_query: Vec<(String, f64)>,
}

/// True for the counting measures that trec_eval and ir_measures sum over queries rather than average.
pub fn is_summed(m: crate::Metric) -> bool {
    use crate::{Metric, Tunable};
    matches!(
        m,
        Metric::NumRet
            | Metric::NumRel
            | Metric::NumRelRet
            | Metric::Tuned(Tunable::NumRel | Tunable::NumRelRet, _)
    )
}

impl Evaluation {
    /// The rows of this evaluation, result `i` named `names[i]` (its canonical name when `names` is shorter).
    pub fn rows(&self, names: &[String]) -> Vec<Row> {
        self.results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let summed = is_summed(r.metric);
                Row {
                    name: names
                        .get(i)
                        .cloned()
                        .unwrap_or_else(|| r.metric.to_string()),
                    value: if summed {
                        r.per_query.iter().sum()
                    } else {
                        r.mean
                    },
                    aggregate: if summed {
                        RowAggregate::Sum
                    } else {
                        RowAggregate::Mean
                    },
                    per_query: self
                        .qids
                        .iter()
                        .cloned()
                        .zip(r.per_query.iter().copied())
                        .collect(),
                }
            })
            .collect()
    }
}

fn row_qids(rows: &[Row]) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    let mut qids = Vec::new();
    for r in rows {
        for (q, _) in &r.per_query {
            if seen.insert(q.as_str()) {
                qids.push(q.as_str());
            }
        }
    }
    qids
}

/// Rows as a table, in the order given: per-query values first when asked (`-` where a measure has none), then
/// the convention and each row's summary to four decimals (sums as integers when whole).
pub fn rows_text(convention: &str, queries: usize, rows: &[Row], per_query: bool) -> String {
    let mut out = String::new();
    if per_query {
        let header: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        out.push_str(&format!("qid\t{}\n", header.join("\t")));
        let maps: Vec<std::collections::HashMap<&str, f64>> = rows
            .iter()
            .map(|r| r.per_query.iter().map(|(q, v)| (q.as_str(), *v)).collect())
            .collect();
        for q in row_qids(rows) {
            let cells: Vec<String> = maps
                .iter()
                .map(|m| m.get(q).map_or("-".to_string(), |v| format!("{v:.4}")))
                .collect();
            out.push_str(&format!("{q}\t{}\n", cells.join("\t")));
        }
        out.push('\n');
    }
    out.push_str(&format!("convention: {convention} ({queries} queries)\n"));
    let width = rows
        .iter()
        .map(|r| r.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(10);
    for r in rows {
        let v = if r.aggregate == RowAggregate::Sum && r.value.fract() == 0.0 {
            format!("{}", r.value as i64)
        } else {
            format!("{:.4}", r.value)
        };
        out.push_str(&format!("{:<width$} {v}\n", r.name));
    }
    out
}

/// Rows as JSON: `{"convention", "queries", "measures": [names in the order asked], "metrics": {name: {"value",
/// "aggregate", "mean" (also for a sum: the mean of the per-query values), "per_query"?: {qid: value}}}}`.
pub fn rows_json(
    convention: &str,
    queries: usize,
    rows: &[Row],
    per_query: bool,
) -> serde_json::Value {
    let mut metrics = serde_json::Map::new();
    for r in rows {
        let mut o = serde_json::Map::new();
        o.insert("value".into(), serde_json::json!(r.value));
        o.insert("aggregate".into(), serde_json::json!(r.aggregate.name()));
        if r.aggregate == RowAggregate::Mean {
            o.insert("mean".into(), serde_json::json!(r.value));
        } else if r.aggregate == RowAggregate::Sum && !r.per_query.is_empty() {
            let mean = r.per_query.iter().map(|x| x.1).sum::<f64>() / r.per_query.len() as f64;
            o.insert("mean".into(), serde_json::json!(mean));
        }
        if per_query && !r.per_query.is_empty() {
            let pq: serde_json::Map<String, serde_json::Value> = r
                .per_query
                .iter()
                .map(|(q, v)| (q.clone(), serde_json::json!(v)))
                .collect();
            o.insert("per_query".into(), serde_json::Value::Object(pq));
        }
        metrics.insert(r.name.clone(), serde_json::Value::Object(o));
    }
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    serde_json::json!({"convention": convention, "queries": queries, "measures": names, "metrics": metrics})
}
