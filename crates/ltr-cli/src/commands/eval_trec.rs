//! `ltr eval --run R --qrels Q`: measures under any of their names (ltr's, ir_measures', trec_eval's), reported
//! under the name as asked and in the order asked; `--format trec_eval` prints trec_eval's own lines.

use std::path::Path;

use anyhow::{bail, Context, Result};
use ltr_metrics::treceval::{self, MeasureSet, Options};
use ltr_metrics::{Metric, Row};

use super::eval_args::EvalArgs;

/// One measure as asked: its name as written and how it is computed.
pub enum Asked {
    /// An ltr or ir_measures measure.
    Metric(String, Metric),
    /// A trec_eval measure, `-m` item or nickname.
    Trec(String),
}

/// The asked items: each value split at commas outside parentheses, except a trec_eval item with parameters
/// (`P.5,10`, `ndcg.1=1,2=3`), which stays whole.
pub fn split_asked(values: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for v in values {
        if v.contains('.') && treceval::is_trec_eval_name(v) {
            out.push(v.trim().to_string());
        } else {
            out.extend(super::split_outside_parentheses(std::slice::from_ref(v)));
        }
    }
    out
}

/// Every name `--list-measures` shows for ltr and ir_measures (the syntax column's alternatives), for suggestions.
fn ltr_names() -> Vec<String> {
    ltr_metrics::MEASURES
        .iter()
        .flat_map(|m| m.syntax.split(" | "))
        .map(|s| s.replace("[@k]", "").replace("@k", "").replace("@r", ""))
        .collect()
}

/// Names close to an unknown `name`, from every catalogue.
pub fn suggestions(name: &str) -> Vec<String> {
    let head = name
        .split(['@', '(', '.'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    let mut out: Vec<(usize, String)> = ltr_names()
        .into_iter()
        .map(|n| (treceval::edit_distance(&head, &n.to_ascii_lowercase()), n))
        .filter(|(d, _)| *d <= 2)
        .collect();
    out.extend(treceval::close_names(&head).into_iter().map(|n| {
        (
            treceval::edit_distance(&head, &n.to_ascii_lowercase()),
            n.to_string(),
        )
    }));
    out.sort();
    let mut seen = std::collections::HashSet::new();
    out.retain(|(_, n)| seen.insert(n.to_ascii_lowercase()));
    out.into_iter().map(|(_, n)| n).take(6).collect()
}

/// Classify each asked item, with an error listing close names for an unknown one.
pub fn classify(items: &[String]) -> Result<Vec<Asked>> {
    items
        .iter()
        .map(|s| match s.parse::<Metric>() {
            Ok(m) => Ok(Asked::Metric(s.clone(), m)),
            Err(_) if treceval::is_trec_eval_name(s) => {
                MeasureSet::parse(&[s]).map_err(anyhow::Error::from)?;
                Ok(Asked::Trec(s.clone()))
            }
            Err(e) => {
                let close = suggestions(s);
                if close.is_empty() {
                    Err(anyhow::Error::from(e))
                } else {
                    bail!(
                        "unknown metric `{s}`; did you mean {}? (`ltr eval --list-measures` lists every measure)",
                        close.join(", ")
                    )
                }
            }
        })
        .collect::<Result<Vec<_>>>()
        .context("--measure")
}

/// trec_eval's flags from `ltr eval`'s arguments.
pub fn options(a: &EvalArgs) -> Result<Options> {
    let level = match a.relevance_level {
        Some(l) if l.fract() != 0.0 => {
            bail!("-l/--relevance-level {l}: trec_eval's relevance level is an integer")
        }
        Some(l) => l as i64,
        None => 1,
    };
    Ok(Options {
        per_query: a.per_query,
        complete: a.complete,
        relevance_level: level,
        summary: !a.no_summary,
        judged_only: a.judged_only,
        num_docs_in_coll: a.collection_size.unwrap_or(0),
        max_per_topic: a.max_per_query.unwrap_or(2_147_483_647),
    })
}

/// `--format trec_eval`: trec_eval's output, the `-m` items read as trec_eval reads them (default `official`).
pub fn print_trec_eval(a: &EvalArgs, run: &Path, qrels: &Path) -> Result<()> {
    let set = if a.metrics.is_empty() {
        MeasureSet::official()
    } else {
        MeasureSet::parse(&a.metrics).map_err(|e| {
            let name = a
                .metrics
                .iter()
                .find(|m| !treceval::is_trec_eval_name(m))
                .cloned()
                .unwrap_or_default();
            let close = suggestions(&name);
            if close.is_empty() || name.is_empty() {
                anyhow::Error::from(e)
            } else {
                anyhow::anyhow!(
                    "{e}; --format trec_eval takes trec_eval's names; close: {}",
                    close.join(", ")
                )
            }
        })?
    };
    let report = treceval::trec_eval(qrels, run, &set, &options(a)?)?;
    print!("{}", report.to_trec_eval());
    Ok(())
}

/// The rows of the trec_eval items among `asked` (each evaluated with its own parameters), by position.
pub fn trec_rows(
    a: &EvalArgs,
    asked: &[Asked],
    run: &Path,
    qrels: &Path,
) -> Result<Vec<(usize, Vec<Row>)>> {
    let mut o = options(a)?;
    o.per_query = true;
    o.summary = true;
    let mut out = Vec::new();
    for (i, x) in asked.iter().enumerate() {
        if let Asked::Trec(s) = x {
            let set = MeasureSet::parse(&[s])?;
            let report = treceval::trec_eval(qrels, run, &set, &o)?;
            out.push((i, report.rows(&set, s)));
        }
    }
    Ok(out)
}
