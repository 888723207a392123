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

/// The lines that hold records: their 1-based numbers, their first six fields and how many fields they have.
fn records(text: &str) -> impl Iterator<Item = (usize, [&str; 6], usize)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let (mut f, mut n) = ([""; 6], 0);
        for w in l.split_whitespace() {
            if n < 6 {
                f[n] = w;
            }
            n += 1;
        }
        (n > 0 && !f[0].starts_with('#')).then_some((i + 1, f, n))
    })
}

/// (qid, docno, item) rows grouped as trec_eval's `qsort` by (qid, docno) leaves them: queries in byte order of
/// their ids, each query's items in byte order of their docnos (equal pairs, which trec_eval's sort leaves in no set
/// order, stay in file order; they are refused later). Grouped as they come and sorted per query, in parallel: a sort
/// of every row by both ids took most of `--format trec_eval`'s time on big runs.
struct Groups<'t, T> {
    topics: Vec<(&'t str, Vec<(&'t str, T)>)>,
    index: std::collections::HashMap<&'t str, usize>,
    last: usize,
}

impl<'t, T: Send> Groups<'t, T> {
    fn new() -> Self {
        Groups {
            topics: Vec::new(),
            index: std::collections::HashMap::new(),
            last: 0,
        }
    }
    fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }
    fn push(&mut self, qid: &'t str, docno: &'t str, item: T) {
        // A file lists a query's lines together: the last query is compared before hashing.
        if self.topics.get(self.last).is_none_or(|t| t.0 != qid) {
            let topics = &mut self.topics;
            self.last = *self.index.entry(qid).or_insert_with(|| {
                topics.push((qid, Vec::new()));
                topics.len() - 1
            });
        }
        self.topics[self.last].1.push((docno, item));
    }
    fn finish(mut self) -> Vec<(String, Vec<(String, T)>)> {
        use rayon::prelude::*;
        self.topics
            .sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        self.topics
            .into_par_iter()
            .map(|(qid, mut items)| {
                items.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                let items = items.into_iter().map(|(d, v)| (d.to_string(), v)).collect();
                (qid.to_string(), items)
            })
            .collect()
    }
}

/// Read a TREC run (`qid iter docno rank score tag`; further fields ignored).
pub(crate) fn read_run(path: &Path) -> Result<Run, TrecEvalError> {
    let text = read(path)?;
    let mut rows = Groups::new();
    let mut tag = "";
    for (line, f, n) in records(&text) {
        if n < 6 {
            return Err(parse_err(
                path,
                line,
                format!("expected 6 fields `qid iter docno rank score tag`, found {n}"),
            ));
        }
        let score: f64 = f[4]
            .parse()
            .map_err(|_| parse_err(path, line, format!("score `{}` is not a number", f[4])))?;
        tag = f[5];
        rows.push(f[0], f[2], score);
    }
    let tag = tag.to_string();
    if rows.is_empty() {
        return Err(TrecEvalError::Empty {
            path: path.to_path_buf(),
            what: "run",
        });
    }
    let topics = rows
        .finish()
        .into_iter()
        .map(|(qid, docs)| RunTopic { qid, docs })
        .collect();
    Ok(Run { topics, tag })
}

/// C's `atol`: optional sign and leading digits; `None` when there are no digits.
// pub for the tests in tests/unit/treceval_input.rs; not API.
#[doc(hidden)]
pub fn atol(s: &str) -> Option<i64> {
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
    let mut rows = Groups::new();
    for (line, f, n) in records(&text) {
        if n != 4 {
            return Err(parse_err(
                path,
                line,
                format!("expected 4 fields `qid iter docno rel`, found {n}"),
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
        rows.push(f[0], f[2], rel);
    }
    if rows.is_empty() {
        return Err(TrecEvalError::Empty {
            path: path.to_path_buf(),
            what: "qrels",
        });
    }
    Ok(rows
        .finish()
        .into_iter()
        .map(|(qid, judgments)| QrelsTopic { qid, judgments })
        .collect())
}
