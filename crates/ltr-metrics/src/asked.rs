//! Measures as a user asks for them (`ltr eval --measure`, `ltrkit`): each item under ltr's, ir_measures' or
//! trec_eval's name, classified, suggested when unknown, and the rows reported under the name as written, in the
//! order asked.

use std::path::Path;

use crate::metric::{Metric, MEASURES};
use crate::report::Row;
use crate::treceval::{
    self, close_names, edit_distance, Inputs, MeasureSet, Options, TrecEvalError,
};

/// One measure as asked: its name as written and how it is computed.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// An ltr or ir_measures measure.
    Metric(String, Metric),
    /// A trec_eval measure, `-m` item or nickname.
    Trec(String),
}

/// The asked items: each value split at commas outside parentheses ([`split_measures`]), except a trec_eval item
/// with parameters (`P.5,10`, `ndcg.1=1,2=3`), which stays whole. Blank items are dropped.
pub fn split_asked<S: AsRef<str>>(values: &[S]) -> Vec<String> {
    let mut out = Vec::new();
    for v in values {
        let v = v.as_ref();
        if v.contains('.') && treceval::is_trec_eval_name(v) {
            out.push(v.trim().to_string());
        } else {
            out.extend(split_measures(&[v]));
        }
    }
    out
}

/// Each value split at commas outside parentheses, so `P(rel=2,judged_only=True)@5` and `OER(2,1)` stay whole;
/// items trimmed, blank ones dropped.
pub fn split_measures<S: AsRef<str>>(values: &[S]) -> Vec<String> {
    let mut out = Vec::new();
    for v in values {
        let v = v.as_ref();
        let (mut depth, mut start) = (0i32, 0);
        for (i, ch) in v.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(v[start..i].trim().to_string());
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(v[start..].trim().to_string());
    }
    out.retain(|s| !s.is_empty());
    out
}

/// Every name `--list-measures` shows for ltr and ir_measures (the syntax column's alternatives), for suggestions.
fn ltr_names() -> impl Iterator<Item = String> {
    MEASURES
        .iter()
        .flat_map(|m| m.syntax.split(" | "))
        .map(|s| s.replace("[@k]", "").replace("@k", "").replace("@r", ""))
}

/// At most six names close to an unknown `name` (edit distance ≤ 2 on its head), from every catalogue.
pub fn measure_suggestions(name: &str) -> Vec<String> {
    let head = name
        .split(['@', '(', '.'])
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    let distance = |n: &str| edit_distance(&head, &n.to_ascii_lowercase());
    let mut out: Vec<(usize, String)> = ltr_names()
        .map(|n| (distance(&n), n))
        .filter(|(d, _)| *d <= 2)
        .collect();
    out.extend(
        close_names(&head)
            .into_iter()
            .map(|n| (distance(n), n.to_string())),
    );
    out.sort();
    let mut seen = std::collections::HashSet::new();
    out.retain(|(_, n)| seen.insert(n.to_ascii_lowercase()));
    out.into_iter().map(|(_, n)| n).take(6).collect()
}

/// Classify each asked item; an unknown one is an error listing close names.
pub fn classify_asked(items: &[String]) -> Result<Vec<Asked>, TrecEvalError> {
    items
        .iter()
        .map(|s| match s.parse::<Metric>() {
            Ok(m) => Ok(Asked::Metric(s.clone(), m)),
            Err(_) if treceval::is_trec_eval_name(s) => {
                MeasureSet::parse(&[s])?;
                Ok(Asked::Trec(s.clone()))
            }
            Err(e) => {
                let close = measure_suggestions(s);
                Err(TrecEvalError::Measure(if close.is_empty() {
                    e.to_string()
                } else {
                    format!(
                        "unknown metric `{s}`; did you mean {}? (`ltr eval --list-measures` lists every measure)",
                        close.join(", ")
                    )
                }))
            }
        })
        .collect()
}

/// The `-m` items of `--format trec_eval`, read as trec_eval reads them (none: `official`); an unknown name is
/// an error listing close ones.
pub fn trec_measure_set<S: AsRef<str>>(items: &[S]) -> Result<MeasureSet, TrecEvalError> {
    if items.is_empty() {
        return Ok(MeasureSet::official());
    }
    MeasureSet::parse(items).map_err(|e| {
        let unknown = items
            .iter()
            .map(AsRef::as_ref)
            .find(|m| !treceval::is_trec_eval_name(m));
        match unknown.map(measure_suggestions) {
            Some(close) if !close.is_empty() => TrecEvalError::Measure(format!(
                "{e}; --format trec_eval takes trec_eval's names; close: {}",
                close.join(", ")
            )),
            _ => e,
        }
    })
}

/// The rows of the trec_eval items among `asked`, each evaluated with its own parameters under flags `o` (per
/// query and summary always), keyed by the item's position. The run and qrels are read once, and only when some
/// item is a trec_eval one.
pub fn trec_rows(
    asked: &[Asked],
    run: &Path,
    qrels: &Path,
    o: &Options,
) -> Result<Vec<(usize, Vec<Row>)>, TrecEvalError> {
    if !asked.iter().any(|x| matches!(x, Asked::Trec(_))) {
        return Ok(Vec::new());
    }
    let inputs = Inputs::read(qrels, run)?;
    let o = Options {
        per_query: true,
        summary: true,
        ..*o
    };
    let mut out = Vec::new();
    for (i, x) in asked.iter().enumerate() {
        if let Asked::Trec(s) = x {
            let set = MeasureSet::parse(&[s])?;
            out.push((i, inputs.evaluate(&set, &o)?.rows(&set, s)));
        }
    }
    Ok(out)
}

/// The rows in the order asked: `ltr` (the ltr and ir_measures items' rows, in their order) with the trec_eval
/// items' rows (from [`trec_rows`]) at their positions.
pub fn rows_in_order(asked: &[Asked], ltr: Vec<Row>, trec: Vec<(usize, Vec<Row>)>) -> Vec<Row> {
    let mut ltr = ltr.into_iter();
    let mut trec = trec.into_iter().peekable();
    let mut rows = Vec::new();
    for i in 0..asked.len() {
        match trec.next_if(|(j, _)| *j == i) {
            Some((_, r)) => rows.extend(r),
            None => rows.extend(ltr.next()),
        }
    }
    rows
}
