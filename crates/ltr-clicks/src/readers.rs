//! Click logs in the layouts people have, read into the records of the click-log TSV ([`ClickRecord`]) so that
//! everything that reads a log reads them too (`ltr clicks convert` writes them as the TSV):
//!
//! - a **per-document table** ([`read_document_table`]): one row per (query, document) with its display position
//!   and click, as a data frame exports it;
//! - **Baidu-ULTR's session layout** ([`read_baidu_sessions`]): the Web Search Session Data of Zou et al.'s *A
//!   Large Scale Search Dataset for Unbiased Learning to Rank* (NeurIPS 2022), as its repository's README
//!   documents it.
//!
//! Both are checked as strictly as the TSV: a negative or unreadable position, positions that are not 1 to n within
//! a session, a click on a document the session did not display, and a session that displays nothing are refused
//! naming the file and line. Sessions are numbered 1, 2, … in the order they start.
//!
//! ## The per-document table
//!
//! A header line, then one line per row; fields separated by tabs, or by commas when the header has no tab. The
//! header names the columns, in any order: `qid`, `docid` (or `doc`), `position` and `click` are required,
//! `session` and `propensity` optional, others ignored. `position` is the 1-based display rank, empty (or `-`,
//! `NA`, `NaN`) for a candidate that was not displayed: such a row is left out of the log, and a click on it is a
//! click without an impression. `click` is 0 or 1. A session is the rows of one `session` value (of one `qid`
//! when there is no `session` column), which must be contiguous and of one query; within it rows may come in any
//! order and are put in position order. `#` lines are comments.
//!
//! ## Baidu-ULTR
//!
//! Tab-separated, one session after another (decompress the `part-*.gz` files first). A session starts with a
//! query line of three fields (query id, the query's token ids, its reformulations); each document line after it
//! has at least six fields: the position (1 to 30 in the released data), the URL's MD5, the title's and the
//! abstract's token ids, the multimedia type and the click (0 or 1), then the behaviour columns (skip, display
//! times, dwelling time, …), which are not read. The query id is the log's `qid` and the URL MD5 its `docid`:
//! features (the ones computed for the dataset, or your own) join by them, as for any log. The layout carries no
//! propensity.

use std::path::Path;

use ltr_data::{DataError, Result};

use crate::clicks::ClickRecord;

fn parse_err(path: &Path, line: usize, token: &str, problem: &str, expected: &str) -> DataError {
    DataError::Parse {
        path: path.to_path_buf(),
        line,
        token: token.chars().take(40).collect(),
        problem: problem.into(),
        expected: expected.into(),
    }
}

/// A row of a session before its positions are checked: (line, position, record).
type Row = (usize, Option<u32>, ClickRecord);

/// A position field: `None` when the document was not displayed, an error when it is not a rank ≥ 1.
fn position(path: &Path, n: usize, token: &str) -> Result<Option<u32>> {
    let t = token.trim();
    if t.is_empty() || t == "-" || t.eq_ignore_ascii_case("na") || t.eq_ignore_ascii_case("nan") {
        return Ok(None);
    }
    match t.parse::<i64>() {
        Ok(p) if p < 0 => Err(parse_err(
            path,
            n,
            t,
            "a negative position",
            "a display rank >= 1",
        )),
        Ok(p) if p >= 1 && p <= u32::MAX as i64 => Ok(Some(p as u32)),
        _ => Err(parse_err(
            path,
            n,
            t,
            "bad position",
            "a display rank >= 1 (empty when not displayed)",
        )),
    }
}

fn click(path: &Path, n: usize, token: &str) -> Result<bool> {
    match token.trim() {
        "0" => Ok(false),
        "1" => Ok(true),
        other => Err(parse_err(path, n, other, "bad click", "0 or 1")),
    }
}

/// The displayed rows of one session in position order, checked: a click on an undisplayed row, positions that
/// are not 1 to n, a session with nothing displayed. `start` is the session's first line.
fn close_session(
    path: &Path,
    start: usize,
    rows: Vec<Row>,
    out: &mut Vec<ClickRecord>,
) -> Result<()> {
    if let Some((n, _, r)) = rows.iter().find(|(_, p, r)| p.is_none() && r.clicked) {
        return Err(parse_err(
            path,
            *n,
            &r.docid,
            "a click without an impression (the document has no position)",
            "a position for every clicked document",
        ));
    }
    let mut shown: Vec<(usize, u32, ClickRecord)> = rows
        .into_iter()
        .filter_map(|(n, p, r)| p.map(|p| (n, p, r)))
        .collect();
    if shown.is_empty() {
        return Err(parse_err(
            path,
            start,
            "",
            "an empty session (it displays no document)",
            "at least one displayed document per session",
        ));
    }
    shown.sort_by_key(|s| s.1);
    for (i, (n, p, _)) in shown.iter().enumerate() {
        let want = i as u32 + 1;
        if *p != want {
            let problem = if *p < want {
                format!("position {p} is displayed twice in the session")
            } else {
                format!("position {p} but the session's positions skip {want}")
            };
            return Err(parse_err(
                path,
                *n,
                &p.to_string(),
                &problem,
                &format!("positions 1 to {} in the session", shown.len()),
            ));
        }
    }
    out.extend(shown.into_iter().map(|(_, p, mut r)| {
        r.rank = p;
        r
    }));
    Ok(())
}

/// Read a log of the layout `layout`: `table` ([`read_document_table`]), `baidu` ([`read_baidu_sessions`]) or `tsv`
/// ([`crate::read_click_log`]).
pub fn read_log_layout(layout: &str, path: &Path) -> Result<Vec<ClickRecord>> {
    match layout {
        "table" => read_document_table(path),
        "baidu" => read_baidu_sessions(path),
        "tsv" => crate::read_click_log(path),
        other => Err(DataError::Invalid(format!(
            "unknown click-log layout `{other}` (expected tsv, table or baidu)"
        ))),
    }
}

/// Read a per-document (qid, docid, position, click) table (see the module documentation).
pub fn read_document_table(path: &Path) -> Result<Vec<ClickRecord>> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
    let expected = "a header naming qid, docid, position and click (tab- or comma-separated)";
    let Some((hline, header)) = lines.next() else {
        return Err(parse_err(path, 1, "", "empty table", expected));
    };
    let sep = if header.contains('\t') { '\t' } else { ',' };
    let names: Vec<&str> = header.split(sep).map(str::trim).collect();
    let col = |want: &[&str]| names.iter().position(|n| want.contains(n));
    let (Some(qid), Some(doc), Some(pos), Some(clk)) = (
        col(&["qid"]),
        col(&["docid", "doc"]),
        col(&["position"]),
        col(&["click"]),
    ) else {
        return Err(parse_err(
            path,
            hline,
            header,
            "not a table header",
            expected,
        ));
    };
    let (session_col, propensity_col) = (col(&["session"]), col(&["propensity"]));
    let mut out = Vec::new();
    // The current session: its key, first line and rows; and the keys of the sessions already closed.
    let mut current: Option<(String, usize, Vec<Row>)> = None;
    let mut closed: std::collections::HashMap<String, usize> = Default::default();
    let mut next_id = 1u64;
    for (n, line) in lines {
        let f: Vec<&str> = line.split(sep).collect();
        if f.len() != names.len() {
            return Err(parse_err(
                path,
                n,
                line,
                &format!("{} fields", f.len()),
                &format!("{} fields as in the header", names.len()),
            ));
        }
        let (q, d) = (f[qid].trim(), f[doc].trim());
        if q.is_empty() || d.is_empty() {
            return Err(parse_err(
                path,
                n,
                line,
                "empty qid or docid",
                "non-empty ids",
            ));
        }
        if q.contains('\t') || d.contains('\t') {
            return Err(parse_err(
                path,
                n,
                line,
                "a tab inside the qid or docid",
                "ids without tabs (the click-log TSV separates its fields by tabs)",
            ));
        }
        let key = session_col.map_or(q, |c| f[c].trim()).to_string();
        let propensity = match propensity_col.map(|c| f[c].trim()) {
            None | Some("") => None,
            Some(p) => Some(
                p.parse::<f64>()
                    .ok()
                    .filter(|v| *v > 0.0 && *v <= 1.0)
                    .ok_or_else(|| parse_err(path, n, p, "bad propensity", "a number in (0, 1]"))?,
            ),
        };
        let row_position = position(path, n, f[pos])?;
        let clicked = click(path, n, f[clk])?;
        if current.as_ref().is_none_or(|c| c.0 != key) {
            if let Some((k, start, rows)) = current.take() {
                close_session(path, start, rows, &mut out)?;
                closed.insert(k, start);
            }
            if let Some(first) = closed.get(&key) {
                return Err(parse_err(
                    path,
                    n,
                    &key,
                    &format!("session {key} reappears (it started at line {first})"),
                    "each session's rows together",
                ));
            }
            current = Some((key.clone(), n, Vec::new()));
            next_id += 1;
        }
        let (_, _, rows) = current.as_mut().expect("opened above");
        if let Some((_, _, first)) = rows.first() {
            if first.qid != q {
                return Err(parse_err(
                    path,
                    n,
                    q,
                    &format!("session {key} changes query (was `{}`)", first.qid),
                    "one qid per session",
                ));
            }
        }
        rows.push((
            n,
            row_position,
            ClickRecord {
                session: next_id - 1,
                qid: q.to_string(),
                docid: d.to_string(),
                rank: 0,
                clicked,
                propensity,
                production_rank: None,
            },
        ));
    }
    if let Some((_, start, rows)) = current {
        close_session(path, start, rows, &mut out)?;
    }
    if out.is_empty() {
        return Err(parse_err(
            path,
            hline + 1,
            "",
            "a table without rows",
            "rows",
        ));
    }
    Ok(out)
}

/// Read Baidu-ULTR's session layout (see the module documentation).
pub fn read_baidu_sessions(path: &Path) -> Result<Vec<ClickRecord>> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    let mut out = Vec::new();
    // The current session: its first line, qid and rows.
    let mut current: Option<(usize, String, Vec<Row>)> = None;
    let mut id = 0u64;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        match f.len() {
            3 => {
                if let Some((start, _, rows)) = current.take() {
                    close_session(path, start, rows, &mut out)?;
                }
                let qid = f[0].trim();
                if qid.is_empty() {
                    return Err(parse_err(path, n, line, "empty query id", "a query id"));
                }
                id += 1;
                current = Some((n, qid.to_string(), Vec::new()));
            }
            k if k >= 6 => {
                let Some((_, qid, rows)) = current.as_mut() else {
                    return Err(parse_err(
                        path,
                        n,
                        line,
                        "a document line before any query line",
                        "a query line (query id, query, reformulations) first",
                    ));
                };
                let p = position(path, n, f[0])?;
                if p.is_none() {
                    return Err(parse_err(
                        path,
                        n,
                        f[0],
                        "no position",
                        "a display rank >= 1",
                    ));
                }
                let url = f[1].trim();
                if url.is_empty() {
                    return Err(parse_err(path, n, line, "empty URL MD5", "the URL's MD5"));
                }
                if rows.iter().any(|(_, _, r)| r.docid == url) {
                    return Err(parse_err(
                        path,
                        n,
                        url,
                        "the session displays this document twice",
                        "each document once per session",
                    ));
                }
                let expected_rank = rows.len() as u32 + 1;
                if p != Some(expected_rank) {
                    return Err(parse_err(
                        path,
                        n,
                        f[0],
                        &format!(
                            "position {} after {} document(s) of the session",
                            f[0].trim(),
                            rows.len()
                        ),
                        &format!("position {expected_rank}"),
                    ));
                }
                rows.push((
                    n,
                    p,
                    ClickRecord {
                        session: id,
                        qid: qid.clone(),
                        docid: url.to_string(),
                        rank: 0,
                        clicked: click(path, n, f[5])?,
                        propensity: None,
                        production_rank: None,
                    },
                ));
            }
            k => {
                return Err(parse_err(
                    path,
                    n,
                    line,
                    &format!("{k} tab-separated fields"),
                    "3 (a query line) or at least 6 (a document line)",
                ))
            }
        }
    }
    if let Some((start, _, rows)) = current {
        close_session(path, start, rows, &mut out)?;
    }
    if out.is_empty() {
        return Err(parse_err(
            path,
            1,
            "",
            "no session",
            "a query line, then its documents",
        ));
    }
    Ok(out)
}
