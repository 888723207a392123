//! A fitted click model as JSON: what `ltr clicks fit` writes and `ltr clicks evaluate` reads.
//!
//! ```json
//! {"model": "pbm", "iterations": 50,
//!  "documents": [{"qid": "q1", "docid": "d3", "attr": 0.61}, ...],
//!  "exam": [0.98, 0.57, ...]}
//! ```
//!
//! Per-document parameters (`attr`, and `sat` for the DBN) sit with their (qid, docid). The per-rank ones, rank 1
//! first: `exam` (PBM), `cont` (DCM: continuation after a click), `exam` rows (UBM: row r holds γ(r, none) then
//! γ(r, r') for the last click above at r' = 1 … r − 1) and the DBN's single `gamma`.

use std::path::Path;

use serde_json::{json, Value};

use ltr_data::{DataError, Result};

use crate::click_models::{
    ClickModelEvaluation, ClickModelKind, ClickModelParams, FittedClickModel,
};
use crate::PropensityEstimate;

impl FittedClickModel {
    /// The model as JSON (see the module documentation of the format).
    pub fn to_json(&self) -> Value {
        let (attr, sat) = match &self.params {
            ClickModelParams::Pbm { attr, .. }
            | ClickModelParams::Cascade { attr }
            | ClickModelParams::Dcm { attr, .. }
            | ClickModelParams::Ubm { attr, .. } => (attr, None),
            ClickModelParams::Dbn { attr, sat, .. } => (attr, Some(sat)),
        };
        let documents: Vec<Value> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(i, (q, d))| {
                let mut doc = json!({"qid": q, "docid": d, "attr": attr[i]});
                if let Some(sat) = sat {
                    doc["sat"] = json!(sat[i]);
                }
                doc
            })
            .collect();
        let mut out = json!({
            "model": self.kind().name(),
            "iterations": self.iterations,
            "documents": documents,
        });
        match &self.params {
            ClickModelParams::Pbm { exam, .. } => out["exam"] = json!(exam),
            ClickModelParams::Ubm { exam, .. } => out["exam"] = json!(exam),
            ClickModelParams::Dcm { cont, .. } => out["cont"] = json!(cont),
            ClickModelParams::Dbn { gamma, .. } => out["gamma"] = json!(gamma),
            ClickModelParams::Cascade { .. } => {}
        }
        out
    }

    /// Write the JSON, atomically.
    pub fn write_json(&self, path: &Path) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.to_json())
            .map_err(|e| DataError::Invalid(e.to_string()))?;
        ltr_data::write_atomic(path, |w| writeln!(w, "{text}"))
    }

    /// Read a model written by [`Self::write_json`], checking every probability.
    pub fn read_json(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
        let bad = |what: &str| {
            DataError::Invalid(format!(
                "{}: not a click model file: {what}",
                path.display()
            ))
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
        let kind = ClickModelKind::parse(v["model"].as_str().ok_or_else(|| bad("no `model`"))?)
            .map_err(|e| bad(&e.to_string()))?;
        let prob = |x: &Value, what: &str| {
            x.as_f64()
                .filter(|p| (0.0..=1.0).contains(p))
                .ok_or_else(|| bad(&format!("{what} is not a probability")))
        };
        let probs = |x: &Value, what: &str| -> Result<Vec<f64>> {
            x.as_array()
                .ok_or_else(|| bad(&format!("no `{what}` array")))?
                .iter()
                .map(|p| prob(p, what))
                .collect()
        };
        let docs = v["documents"]
            .as_array()
            .ok_or_else(|| bad("no `documents` array"))?;
        let mut pairs = Vec::with_capacity(docs.len());
        let (mut attr, mut sat) = (Vec::new(), Vec::new());
        for d in docs {
            let id = |k: &str| {
                d[k].as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(&format!("a document without `{k}`")))
            };
            pairs.push((id("qid")?, id("docid")?));
            attr.push(prob(&d["attr"], "attr")?);
            if kind == ClickModelKind::Dbn {
                sat.push(prob(&d["sat"], "sat")?);
            }
        }
        let params = match kind {
            ClickModelKind::Pbm => ClickModelParams::Pbm {
                attr,
                exam: probs(&v["exam"], "exam")?,
            },
            ClickModelKind::Cascade => ClickModelParams::Cascade { attr },
            ClickModelKind::Dcm => ClickModelParams::Dcm {
                attr,
                cont: probs(&v["cont"], "cont")?,
            },
            ClickModelKind::Ubm => ClickModelParams::Ubm {
                attr,
                exam: v["exam"]
                    .as_array()
                    .ok_or_else(|| bad("no `exam` rows"))?
                    .iter()
                    .map(|row| probs(row, "exam"))
                    .collect::<Result<_>>()?,
            },
            ClickModelKind::Dbn => ClickModelParams::Dbn {
                attr,
                sat,
                gamma: prob(&v["gamma"], "gamma")?,
            },
        };
        Ok(FittedClickModel {
            pairs,
            params,
            iterations: v["iterations"].as_u64().unwrap_or(0) as usize,
        })
    }
}

impl ClickModelEvaluation {
    /// The evaluation as JSON: `sessions`, `log_likelihood`, `perplexity`, `perplexity_at_rank`.
    pub fn to_json(&self) -> Value {
        json!({
            "sessions": self.sessions,
            "log_likelihood": self.log_likelihood,
            "perplexity": self.perplexity,
            "perplexity_at_rank": self.perplexity_at_rank,
        })
    }
}

impl std::fmt::Display for ClickModelEvaluation {
    /// A table: the log-likelihood and perplexity, then the perplexity at each rank.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "sessions\t{}", self.sessions)?;
        writeln!(f, "log_likelihood\t{:.6}", self.log_likelihood)?;
        writeln!(f, "perplexity\t{:.6}", self.perplexity)?;
        for (r, p) in self.perplexity_at_rank.iter().enumerate() {
            writeln!(f, "perplexity@{}\t{p:.6}", r + 1)?;
        }
        Ok(())
    }
}

/// A propensity table as JSON (what `ltr clicks propensity --json` prints): one object per rank with `rank`,
/// `propensity`, `low`, `high` and `sessions`.
pub fn propensity_json(table: &[PropensityEstimate]) -> Value {
    table
        .iter()
        .map(|e| {
            json!({"rank": e.rank, "propensity": e.value, "low": e.low, "high": e.high, "sessions": e.sessions})
        })
        .collect()
}

/// A propensity table as text, a header line then one tab-separated line per rank (values to 4 decimals).
pub fn propensity_text(table: &[PropensityEstimate]) -> String {
    let mut out = String::from("rank\tp_k/p_1\tlow\thigh\tsessions\n");
    for e in table {
        out += &format!(
            "{}\t{:.4}\t{:.4}\t{:.4}\t{}\n",
            e.rank, e.value, e.low, e.high, e.sessions
        );
    }
    out
}

/// The propensities by position a model learned from clicks, read from its diagnostics (`position_bias.propensities`,
/// which `debias=dla` of `lambdarank`, `listnet`, `lambdamart` and `neural` write) as a table: every position the
/// sessions showed, from rank 1, with no interval. The table `ltr clicks propensity --from-model` writes.
pub fn learned_propensities(diagnostics_json: &str) -> Result<Vec<PropensityEstimate>> {
    let diagnostics: Value = match diagnostics_json {
        "" => Value::Null,
        text => serde_json::from_str(text)
            .map_err(|e| DataError::Invalid(format!("the model's diagnostics: {e}")))?,
    };
    let Some(values) = diagnostics["position_bias"]["propensities"].as_array() else {
        return Err(DataError::Invalid(
            "the model holds no learned propensities (they come from debias=dla of lambdarank, listnet, lambdamart \
             or neural)"
                .into(),
        ));
    };
    values
        .iter()
        .enumerate()
        .map(|(k, v)| match v.as_f64() {
            Some(p) if p > 0.0 && p.is_finite() => Ok(PropensityEstimate {
                rank: k as u32 + 1,
                value: p,
                low: p,
                high: p,
                sessions: 0,
            }),
            _ => Err(DataError::Invalid(format!(
                "the learned propensity at rank {} is {v}, not a positive number",
                k + 1
            ))),
        })
        .collect()
}
