//! Runs and qrels read as trec_eval 10.0 reads them: whitespace-separated fields, blank lines and lines starting
//! with `#` skipped, queries and documents sorted by byte order of their ids (C's `strcmp`), a run's tag taken from
//! its last line (trec_eval's `runid`), relevance values as integers (C's `atol`: `1.5` is 1).
//!
//! Unlike trec_eval, a score that is not a number, a relevance value that is not an integer, and an empty file are
//! errors naming the file and line (trec_eval reads such a score as 0 and refuses an empty file without saying
//! why).

use std::path::{Path, PathBuf};

use super::TrecEvalError;

/// One query of a run: its documents with their scores, in file order.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunTopic {
    pub qid: String,
    pub docs: Vec<(String, f64)>,
}

/// One query of the qrels: (docno, relevance), sorted by docno.
#[derive(Debug, Clone, Default)]
pub(crate) struct QrelsTopic {
    pub qid: String,
    pub judgments: Vec<(String, i64)>,
}

/// A whole run: its queries sorted by qid, and the tag of its last line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Run {
    pub topics: Vec<RunTopic>,
    pub tag: String,
}

fn read(path: &Path) -> Result<String, TrecEvalError> {
    let bytes = std::fs::read(path).map_err(|e| TrecEvalError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    String::from_utf8(bytes).map_err(|e| TrecEvalError::Parse {
        path: path.to_path_buf(),
        line: 0,
        problem: format!("not UTF-8 text ({e})"),
    })
}

fn parse_err(path: &Path, line: usize, problem: impl Into<String>) -> TrecEvalError {
    TrecEvalError::Parse {
        path: PathBuf::from(path),
        line,
        problem: problem.into(),
    }
}

/// The lines that hold records, with their 1-based numbers.
fn records(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let t = l.trim_start();
        if t.is_empty() || t.starts_with('#') {
            None
        } else {
            Some((i + 1, t.split_whitespace().collect()))
        }
    })
}

/// Group (qid, item) pairs sorted by qid then by the item's docno, as trec_eval's `qsort` by (qid, docno).
fn group<T>(mut rows: Vec<(String, String, T)>) -> Vec<(String, Vec<(String, T)>)> {
    rows.sort_by(|a, b| (a.0.as_bytes(), a.1.as_bytes()).cmp(&(b.0.as_bytes(), b.1.as_bytes())));
    let mut out: Vec<(String, Vec<(String, T)>)> = Vec::new();
    for (q, d, v) in rows {
        match out.last_mut() {
            Some((last, items)) if *last == q => items.push((d, v)),
            _ => out.push((q, vec![(d, v)])),
        }
    }
    out
}

/// Read a TREC run (`qid iter docno rank score tag`; further fields ignored).
pub(crate) fn read_run(path: &Path) -> Result<Run, TrecEvalError> {
    let text = read(path)?;
    let mut rows = Vec::new();
    let mut tag = String::new();
    for (line, f) in records(&text) {
        if f.len() < 6 {
            return Err(parse_err(
                path,
                line,
                format!(
                    "expected 6 fields `qid iter docno rank score tag`, found {}",
                    f.len()
                ),
            ));
        }
        let score: f64 = f[4]
            .parse()
            .map_err(|_| parse_err(path, line, format!("score `{}` is not a number", f[4])))?;
        tag = f[5].to_string();
        rows.push((f[0].to_string(), f[2].to_string(), score));
    }
    if rows.is_empty() {
        return Err(TrecEvalError::Empty {
            path: path.to_path_buf(),
            what: "run",
        });
    }
    let topics = group(rows)
        .into_iter()
        .map(|(qid, docs)| RunTopic { qid, docs })
        .collect();
    Ok(Run { topics, tag })
}

/// C's `atol`: optional sign and leading digits; `None` when there are no digits.
fn atol(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (neg, start) = match b.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let digits = b[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let v: i64 = s[start..start + digits].parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Read TREC qrels (`qid iter docno rel`).
pub(crate) fn read_qrels(path: &Path) -> Result<Vec<QrelsTopic>, TrecEvalError> {
    let text = read(path)?;
    let mut rows = Vec::new();
    for (line, f) in records(&text) {
        if f.len() != 4 {
            return Err(parse_err(
                path,
                line,
                format!("expected 4 fields `qid iter docno rel`, found {}", f.len()),
            ));
        }
        let rel = match atol(f[3]) {
            Some(r) if f[3].parse::<f64>().is_ok() => r,
            _ => {
                return Err(parse_err(
                    path,
                    line,
                    format!("relevance `{}` is not a number", f[3]),
                ))
            }
        };
        rows.push((f[0].to_string(), f[2].to_string(), rel));
    }
    if rows.is_empty() {
        return Err(TrecEvalError::Empty {
            path: path.to_path_buf(),
            what: "qrels",
        });
    }
    Ok(group(rows)
        .into_iter()
        .map(|(qid, judgments)| QrelsTopic { qid, judgments })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atol_as_c() {
        assert_eq!(atol("12"), Some(12));
        assert_eq!(atol("-2"), Some(-2));
        assert_eq!(atol("1.5"), Some(1));
        assert_eq!(atol("x"), None);
    }
}
