//! Runs and qrels read as trec_eval 10.0 reads them: whitespace-separated fields, blank lines and lines starting
//! with `#` skipped, queries and documents sorted by byte order of their ids (C's `strcmp`), a run's tag taken from
//! its last line (trec_eval's `runid`), relevance values as integers (C's `atol`: `1.5` is 1).
//!
//! Unlike trec_eval, a score that is not a number (`nan` included; `inf` and `-inf` are ranked as trec_eval ranks
//! them), a relevance value that is not an integer, and an empty file are
//! errors naming the file and line (trec_eval reads such a score as 0 and refuses an empty file without saying
//! why).

use std::path::{Path, PathBuf};

use super::TrecEvalError;

/// A document id where it lies in its file's text, which is kept whole: a run or qrels of ten million lines is
/// not ten million strings (allocating and freeing them was a third of `--format trec_eval`'s time).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Docno {
    start: usize,
    len: usize,
}

impl Docno {
    /// `id`, a slice of `text`, by its place there.
    fn within(text: &str, id: &str) -> Docno {
        Docno {
            start: id.as_ptr() as usize - text.as_ptr() as usize,
            len: id.len(),
        }
    }

    /// The whole of `text` as one id.
    pub(crate) fn whole(text: &str) -> Docno {
        Docno {
            start: 0,
            len: text.len(),
        }
    }

    /// The id in `text`, the text it was found in.
    pub(crate) fn of(self, text: &str) -> &str {
        &text[self.start..self.start + self.len]
    }
}

/// One query of a run: its documents with their scores, in file order.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunTopic {
    pub qid: String,
    pub docs: Vec<(Docno, f64)>,
}

/// One query of the qrels: (docno, relevance), sorted by docno.
#[derive(Debug, Clone, Default)]
pub(crate) struct QrelsTopic {
    pub qid: String,
    pub judgments: Vec<(Docno, i64)>,
}

/// A whole run: its queries sorted by qid (each query's documents in file order), the tag of its last line, and
/// the text its document ids are in.
#[derive(Debug, Clone, Default)]
pub(crate) struct Run {
    pub topics: Vec<RunTopic>,
    pub tag: String,
    pub text: String,
}

/// Whole qrels: their queries sorted by qid, and the text their document ids are in.
#[derive(Debug, Clone, Default)]
pub(crate) struct Qrels {
    pub topics: Vec<QrelsTopic>,
    pub text: String,
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

/// The lines of `text` that hold records: their 0-based numbers, their first six fields and how many fields they
/// have.
fn records(text: &str) -> impl Iterator<Item = (usize, [&str; 6], usize)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let (mut f, mut n) = ([""; 6], 0);
        for w in l.split_whitespace() {
            if n < 6 {
                f[n] = w;
            }
            n += 1;
        }
        (n > 0 && !f[0].starts_with('#')).then_some((i, f, n))
    })
}

/// (qid, docno, item) rows grouped as trec_eval's `qsort` by (qid, docno) leaves them: queries in byte order of
/// their ids, each query's items (when asked) in byte order of their docnos (equal pairs, which trec_eval's sort
/// leaves in no set order, stay in file order; they are refused later). Grouped as they come and sorted per query,
/// in parallel: a sort of every row by both ids took most of `--format trec_eval`'s time on big runs.
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
    /// Add the items of a run of consecutive lines of one query.
    fn absorb(&mut self, qid: &'t str, mut items: Vec<(&'t str, T)>) {
        self.push_topic(qid);
        let topic = &mut self.topics[self.last].1;
        if topic.is_empty() {
            *topic = items;
        } else {
            topic.append(&mut items);
        }
    }

    fn push_topic(&mut self, qid: &'t str) {
        // A file lists a query's lines together: the last query is compared before hashing.
        if self.topics.get(self.last).is_none_or(|t| t.0 != qid) {
            let topics = &mut self.topics;
            self.last = *self.index.entry(qid).or_insert_with(|| {
                topics.push((qid, Vec::new()));
                topics.len() - 1
            });
        }
    }

    /// The queries in byte order of their ids, each query's items in byte order of their docnos when `by_docno`
    /// (else in file order).
    fn finish(mut self, text: &str, by_docno: bool) -> Vec<(String, Vec<(Docno, T)>)> {
        use rayon::prelude::*;
        self.topics
            .sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        self.topics
            .into_par_iter()
            .map(|(qid, mut items)| {
                if by_docno {
                    items.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                }
                let items = items
                    .into_iter()
                    .map(|(d, v)| (Docno::within(text, d), v))
                    .collect();
                (qid.to_string(), items)
            })
            .collect()
    }
}

/// Call `each` with the 0-based number, the first six fields and the field count of every line of `piece` that holds
/// a record (as [`records`] gives them), until it returns false; the number of lines. Plain ASCII text (no byte
/// below `!` but ASCII whitespace, where Unicode's and ASCII's whitespace agree) is split eight bytes at a time by
/// `trec::read::plain_line`, the fast reader's splitter; other text by [`records`].
fn for_records<'t>(
    piece: &'t str,
    mut each: impl FnMut(usize, [&'t str; 6], usize) -> bool,
) -> usize {
    use crate::trec::read::{plain_ascii, plain_line};
    if !plain_ascii(piece.as_bytes()) {
        for (i, f, n) in records(piece) {
            if !each(i, f, n) {
                break;
            }
        }
        return piece.lines().count();
    }
    let (mut start, mut i) = (0, 0);
    while start < piece.len() {
        let (end, f, n) = plain_line(piece, start, [0, 1, 2, 3, 4, 5]);
        if n > 0 && !f[0].starts_with('#') && !each(i, f, n) {
            break;
        }
        start = end + 1;
        i += 1;
    }
    // Every line of the piece is counted, also after a stop, as `records`' path counts them.
    i + memchr::memchr_iter(b'\n', &piece.as_bytes()[start.min(piece.len())..]).count()
        + usize::from(start < piece.len() && !piece.ends_with('\n'))
}

/// The records of `text` grouped by query ([`Groups`]), with the fields of the last record: `row` turns a record's
/// fields and their count into (qid, docno, item) or a problem. The text is parsed in pieces of whole lines in
/// parallel, each piece into runs of consecutive lines of one query, which are then joined in file order; the first
/// problem in file order is returned with its 1-based line.
#[allow(clippy::type_complexity)]
fn grouped<'t, T: Send>(
    path: &Path,
    text: &'t str,
    row: impl Fn(&[&'t str; 6], usize) -> Result<(&'t str, &'t str, T), String> + Sync,
) -> Result<(Groups<'t, T>, Option<[&'t str; 6]>), TrecEvalError> {
    use rayon::prelude::*;
    /// What a piece of the text gave: its runs of one query, its last record, its line count, its first problem.
    struct Piece<'t, T> {
        runs: Vec<(&'t str, Vec<(&'t str, T)>)>,
        last: Option<[&'t str; 6]>,
        lines: usize,
        problem: Option<(usize, String)>,
    }
    const PIECE: usize = 1 << 22;
    let mut bounds = vec![0];
    while let Some(&at) = bounds.last() {
        if at >= text.len() {
            break;
        }
        let end = (at + PIECE).min(text.len());
        let end =
            memchr::memchr(b'\n', &text.as_bytes()[end - 1..]).map_or(text.len(), |i| end + i);
        bounds.push(end);
    }
    let pieces: Vec<Piece<'t, T>> = bounds
        .par_windows(2)
        .map(|w| {
            let piece = &text[w[0]..w[1]];
            let mut out = Piece {
                runs: Vec::new(),
                last: None,
                lines: 0,
                problem: None,
            };
            out.lines = for_records(piece, |i, f, n| match row(&f, n) {
                Ok((qid, docno, item)) => {
                    match out.runs.last_mut() {
                        Some((q, items)) if *q == qid => items.push((docno, item)),
                        _ => out.runs.push((qid, vec![(docno, item)])),
                    }
                    out.last = Some(f);
                    true
                }
                Err(problem) => {
                    out.problem = Some((i, problem));
                    false
                }
            });
            out
        })
        .collect();
    let (mut groups, mut last, mut lines) = (Groups::new(), None, 0);
    for piece in pieces {
        if let Some((i, problem)) = piece.problem {
            return Err(parse_err(path, lines + i + 1, problem));
        }
        for (qid, items) in piece.runs {
            groups.absorb(qid, items);
        }
        last = piece.last.or(last);
        lines += piece.lines;
    }
    Ok((groups, last))
}

/// Read a TREC run (`qid iter docno rank score tag`; further fields ignored).
pub(crate) fn read_run(path: &Path) -> Result<Run, TrecEvalError> {
    let text = read(path)?;
    let (rows, last) = grouped(path, &text, |f, n| {
        if n < 6 {
            return Err(format!(
                "expected 6 fields `qid iter docno rank score tag`, found {n}"
            ));
        }
        let score: f64 = f[4]
            .parse()
            .ok()
            .filter(|s: &f64| !s.is_nan())
            .ok_or_else(|| format!("score `{}` is not a number", f[4]))?;
        Ok((f[0], f[2], score))
    })?;
    let tag = last.map_or("", |f| f[5]).to_string();
    if rows.is_empty() {
        return Err(TrecEvalError::Empty {
            path: path.to_path_buf(),
            what: "run",
        });
    }
    // Left in file order: the ranking sorts each query's documents by score and docno, which decides every order.
    let topics = rows
        .finish(&text, false)
        .into_iter()
        .map(|(qid, docs)| RunTopic { qid, docs })
        .collect();
    Ok(Run { topics, tag, text })
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
pub(crate) fn read_qrels(path: &Path) -> Result<Qrels, TrecEvalError> {
    let text = read(path)?;
    let (rows, _) = grouped(path, &text, |f, n| {
        if n != 4 {
            return Err(format!("expected 4 fields `qid iter docno rel`, found {n}"));
        }
        match atol(f[3]) {
            Some(r) if f[3].parse::<f64>().is_ok() => Ok((f[0], f[2], r)),
            _ => Err(format!("relevance `{}` is not a number", f[3])),
        }
    })?;
    if rows.is_empty() {
        return Err(TrecEvalError::Empty {
            path: path.to_path_buf(),
            what: "qrels",
        });
    }
    let topics = rows
        .finish(&text, true)
        .into_iter()
        .map(|(qid, judgments)| QrelsTopic { qid, judgments })
        .collect();
    Ok(Qrels { topics, text })
}
