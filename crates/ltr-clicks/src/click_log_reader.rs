//! Reading the click-log TSV ([`crate::CLICK_LOG_HEADER`]; the rules are in `clicks.rs`'s module documentation) a
//! session at a time: a log of 10⁷ sessions (3.6 GB of text) is never held whole, only the session being read and
//! the set of session numbers already seen (to refuse one that comes back after others).

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use ltr_data::{DataError, Dataset, Result};

use crate::clicks::{parse_err, ClickRecord, CLICK_LOG_HEADER};

/// Read a click log, checking every line and every session (see the module documentation of the format).
pub fn read_click_log(path: &Path) -> Result<Vec<ClickRecord>> {
    let mut out = Vec::new();
    for_each_click_session(path, |session| {
        out.extend_from_slice(session);
        Ok(())
    })?;
    Ok(out)
}

/// Read a click log a session at a time: `each` is given every session's records, in log order and checked as
/// [`read_click_log`] checks them, as soon as the session's last line has been read. The first error (of the log,
/// or returned by `each`) stops the reading. Memory: one session and the numbers of the sessions seen.
pub fn for_each_click_session(
    path: &Path,
    mut each: impl FnMut(&[ClickRecord]) -> Result<()>,
) -> Result<()> {
    let file = std::fs::File::open(path).map_err(|e| DataError::io(path, e))?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut buf = String::new();
    let mut number = 0usize;
    // The next line that is neither blank nor a `#` comment, numbered from 1, without its line end.
    let mut next_line = |buf: &mut String| -> Result<Option<usize>> {
        loop {
            buf.clear();
            if reader.read_line(buf).map_err(|e| DataError::io(path, e))? == 0 {
                return Ok(None);
            }
            number += 1;
            let end = buf.trim_end_matches(['\n', '\r']).len();
            buf.truncate(end);
            if !buf.trim().is_empty() && !buf.starts_with('#') {
                return Ok(Some(number));
            }
        }
    };
    let Some(hline) = next_line(&mut buf)? else {
        return Err(parse_err(path, 1, "", "empty click log", CLICK_LOG_HEADER));
    };
    let want = header_columns(path, hline, &buf)?;
    let mut session: Vec<ClickRecord> = Vec::new();
    let mut seen_sessions: HashMap<u64, usize> = HashMap::new();
    while let Some(n) = next_line(&mut buf)? {
        let record = parse_record(path, n, &buf, want)?;
        match session.last() {
            Some(prev) if prev.session == record.session => {
                check_continues(path, n, &buf, prev, &record)?
            }
            _ => {
                if let Some(first) = seen_sessions.insert(record.session, n) {
                    return Err(parse_err(
                        path,
                        n,
                        field(&buf, 0),
                        &format!(
                            "session {} reappears (it started at line {first})",
                            record.session
                        ),
                        "each session's lines together",
                    ));
                }
                if record.rank != 1 {
                    return Err(parse_err(
                        path,
                        n,
                        field(&buf, 3),
                        "a session starts below rank 1",
                        "rank 1",
                    ));
                }
                if !session.is_empty() {
                    each(&session)?;
                    session.clear();
                }
            }
        }
        session.push(record);
    }
    if !session.is_empty() {
        each(&session)?;
    }
    Ok(())
}

/// Which sessions of a click log a join to a feature file reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SessionScope {
    /// Every session. A session of a query the feature file does not have is an error: the log is meant to
    /// describe that file (`ltr train --clicks`).
    #[default]
    Every,
    /// Only the sessions of the feature file's queries; the others are checked as every line is, then skipped and
    /// counted. For a log over more queries than the training data holds: one log over a whole data set that an
    /// experiment splits into folds, or a fold whose validation queries were carved out of its training file.
    FeatureQueries,
}

impl SessionScope {
    /// The scope of a `--click-sessions` value: `every`, or `train-queries` / `feature-queries` (the feature
    /// file's queries, named after the flag that gives the file: `ltr train --train`, `ltr clicks estimate
    /// --features`).
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "every" => Ok(Self::Every),
            "train-queries" | "feature-queries" => Ok(Self::FeatureQueries),
            other => Err(DataError::Invalid(format!(
                "unknown click-session scope `{other}` (expected every, train-queries or feature-queries)"
            ))),
        }
    }
}

/// [`for_each_click_session`] over the sessions `scope` keeps for `features`; the number of sessions skipped
/// (always 0 for [`SessionScope::Every`], under which a session of a query `features` lacks is an error naming the
/// session and the way to read the log in part).
pub fn for_each_session_in_scope(
    path: &Path,
    features: &Dataset,
    scope: SessionScope,
    mut each: impl FnMut(&[ClickRecord]) -> Result<()>,
) -> Result<usize> {
    let qids: HashSet<&str> = features.qids().iter().map(String::as_str).collect();
    let (mut skipped, mut read) = (0, 0);
    for_each_click_session(path, |session| {
        let first = &session[0];
        if qids.contains(first.qid.as_str()) {
            read += 1;
            return each(session);
        }
        match scope {
            SessionScope::FeatureQueries => {
                skipped += 1;
                Ok(())
            }
            SessionScope::Every => Err(DataError::ClickSession {
                session: first.session,
                problem: format!(
                    "shows query `{}`, which the feature file lacks (a log over more queries than the \
                     feature file can be read in part: `--click-sessions` of `ltr train` and `ltr clicks \
                     estimate`)",
                    first.qid
                ),
            }),
        }
    })?;
    if read == 0 && skipped > 0 {
        return Err(DataError::Invalid(format!(
            "{}: none of the log's {skipped} sessions shows a query of the feature file",
            path.display()
        )));
    }
    Ok(skipped)
}

/// The number of columns of the header line `header` (5 to 7, the format's first columns in order).
fn header_columns(path: &Path, line: usize, header: &str) -> Result<usize> {
    let columns: Vec<&str> = header.split('\t').collect();
    let full: Vec<&str> = CLICK_LOG_HEADER.split('\t').collect();
    let want = columns.len();
    match want {
        5..=7 if columns == full[..want] => Ok(want),
        _ => Err(parse_err(
            path,
            line,
            header,
            "not the click-log header",
            CLICK_LOG_HEADER,
        )),
    }
}

/// One record of line `n`, its fields checked (`want` of them, as in the header).
fn parse_record(path: &Path, n: usize, line: &str, want: usize) -> Result<ClickRecord> {
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() != want {
        return Err(parse_err(
            path,
            n,
            line,
            &format!("{} tab-separated fields", f.len()),
            &format!("{want} fields as in the header"),
        ));
    }
    let session: u64 = f[0]
        .parse()
        .map_err(|_| parse_err(path, n, f[0], "bad session", "an unsigned integer"))?;
    if f[1].is_empty() || f[2].is_empty() {
        return Err(parse_err(
            path,
            n,
            line,
            "empty qid or docid",
            "non-empty ids",
        ));
    }
    let rank: u32 = f[3]
        .parse()
        .ok()
        .filter(|&r| r >= 1)
        .ok_or_else(|| parse_err(path, n, f[3], "bad rank", "an integer >= 1"))?;
    let clicked = match f[4] {
        "0" => false,
        "1" => true,
        other => return Err(parse_err(path, n, other, "bad click", "0 or 1")),
    };
    let propensity = match f.get(5) {
        None | Some(&"") => None,
        Some(p) => Some(
            p.parse::<f64>()
                .ok()
                .filter(|v| *v > 0.0 && *v <= 1.0)
                .ok_or_else(|| parse_err(path, n, p, "bad propensity", "a number in (0, 1]"))?,
        ),
    };
    let production_rank = match f.get(6) {
        None | Some(&"") => None,
        Some(r) => Some(
            r.parse::<u32>()
                .ok()
                .filter(|&r| r >= 1)
                .ok_or_else(|| parse_err(path, n, r, "bad production rank", "an integer >= 1"))?,
        ),
    };
    Ok(ClickRecord {
        session,
        qid: f[1].to_string(),
        docid: f[2].to_string(),
        rank,
        clicked,
        propensity,
        production_rank,
    })
}

/// Field `i` of a log line (tab-separated), for an error's token.
fn field(line: &str, i: usize) -> &str {
    line.split('\t').nth(i).unwrap_or("")
}

/// Line `n`'s record `r` continues the session of `prev`: the same query, the next rank.
fn check_continues(
    path: &Path,
    n: usize,
    line: &str,
    prev: &ClickRecord,
    r: &ClickRecord,
) -> Result<()> {
    if prev.qid != r.qid {
        return Err(parse_err(
            path,
            n,
            &r.qid,
            &format!("session {} changes query (was `{}`)", r.session, prev.qid),
            "one qid per session",
        ));
    }
    if r.rank != prev.rank + 1 {
        return Err(parse_err(
            path,
            n,
            field(line, 3),
            &format!("rank after rank {} of session {}", prev.rank, r.session),
            &format!("rank {}", prev.rank + 1),
        ));
    }
    Ok(())
}

/// What is done with one session of a log.
pub(crate) type EachSession<'e> = dyn FnMut(&[ClickRecord]) -> Result<()> + 'e;

/// A log's sessions, each given in order to the callback (a slice's [`by_session`], or a file read a session at a
/// time by [`for_each_click_session`]).
pub(crate) type Sessions<'s> = dyn FnMut(&mut EachSession<'_>) -> Result<()> + 's;

/// The sessions of records held in memory, cut where the session number changes.
pub(crate) fn by_session(
    log: &[ClickRecord],
) -> impl FnMut(&mut EachSession<'_>) -> Result<()> + '_ {
    move |each| {
        for session in log.chunk_by(|a, b| a.session == b.session) {
            each(session)?;
        }
        Ok(())
    }
}

/// [`by_session`] for consumers that refuse a session split in two (as the file reader does, naming the line): a
/// session number that comes back after another session's records is an error naming the session.
pub(crate) fn by_distinct_session(
    log: &[ClickRecord],
) -> impl FnMut(&mut EachSession<'_>) -> Result<()> + '_ {
    move |each| {
        let mut seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
        for session in log.chunk_by(|a, b| a.session == b.session) {
            let id = session[0].session;
            if !seen.insert(id) {
                return Err(DataError::ClickSession {
                    session: id,
                    problem:
                        "appears again after other sessions (a session's lines must be together)"
                            .into(),
                });
            }
            each(session)?;
        }
        Ok(())
    }
}

/// Each (qid, docid) of a log numbered from 0 in order of first display, looked up by `&str` a level at a time, so
/// that an impression clones no string (only a new pair is stored).
#[derive(Debug, Default)]
pub(crate) struct DocumentIndex {
    by_query: HashMap<String, HashMap<String, usize>>,
    len: usize,
}

impl DocumentIndex {
    /// The number of (`qid`, `docid`), and whether this is its first display.
    pub(crate) fn id(&mut self, qid: &str, docid: &str) -> (usize, bool) {
        let docs = match self.by_query.get_mut(qid) {
            Some(docs) => docs,
            None => self.by_query.entry(qid.to_string()).or_default(),
        };
        if let Some(&id) = docs.get(docid) {
            return (id, false);
        }
        docs.insert(docid.to_string(), self.len);
        self.len += 1;
        (self.len - 1, true)
    }

    /// How many pairs have been numbered.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every (qid, docid, number), in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &str, usize)> {
        self.by_query
            .iter()
            .flat_map(|(q, docs)| docs.iter().map(move |(d, &k)| (q.as_str(), d.as_str(), k)))
    }
}
