//! One line of LETOR / SVMlight text: the split into data and comment, the tokens, the well-formed fast path of
//! `index:value` and its slow path with the error that names what is wrong, pass one's count of a sub-chunk
//! ([`scan_chunk`]) and pass two's parse of it into its slice of the final arrays ([`parse_chunk`]).

use std::path::Path;

use super::{changed, NullPolicy, ParseOptions, MAX_INDEX};
use crate::dataset::TextColumn;
use crate::error::{DataError, Result};
#[derive(Debug, Default)]
pub(super) struct ChunkStats {
    pub(super) physical_lines: usize,
    pub(super) rows: usize,
    pub(super) nnz: usize,
    pub(super) max_index: u64,
    pub(super) overflow: Option<(usize, String)>,
}

/// The data part of a line (before `#`, whitespace-trimmed) and its comment, or `None` for blank/comment lines.
#[inline]
pub(super) fn split_line(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let (data, comment) = match memchr::memchr(b'#', line) {
        Some(p) => (&line[..p], &line[p + 1..]),
        None => (line, &line[..0]),
    };
    let data = data.trim_ascii();
    if data.is_empty() {
        None
    } else {
        Some((data, comment.trim_ascii()))
    }
}

/// A token separator inside a line.
#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The token of `data` at or after `*at` (skipping separators), moving `*at` past it.
#[inline]
fn next_token<'d>(data: &'d [u8], at: &mut usize) -> Option<&'d [u8]> {
    let start = skip_blanks(data, *at);
    let mut i = start;
    while i < data.len() && !is_blank(data[i]) {
        i += 1;
    }
    *at = i;
    (start < i).then(|| &data[start..i])
}

/// The first position at or after `at` that is not a separator (`data.len()` at the end).
#[inline]
fn skip_blanks(data: &[u8], mut at: usize) -> usize {
    while at < data.len() && is_blank(data[at]) {
        at += 1;
    }
    at
}

/// The common, well-formed `index:value` token at `data[*at..]` (an index after `last_index`, a finite value
/// ending at a separator or the line's end), read in one pass over its bytes, moving `*at` past it. `None` for
/// anything else, which [`parse_feature`] then reads again to accept (`NULL`) or to say what is wrong.
#[inline]
fn well_formed_feature(data: &[u8], at: &mut usize, last_index: u64) -> Option<(u64, f32)> {
    let start = *at;
    let mut i = start;
    let mut index: u64 = 0;
    // Ten digits hold every u32 index without overflowing a u64; a longer one takes the slow path.
    while i < data.len() && i - start < 10 && data[i].is_ascii_digit() {
        index = index * 10 + u64::from(data[i] - b'0');
        i += 1;
    }
    if i == start || data.get(i) != Some(&b':') || index <= last_index || index > MAX_INDEX {
        return None;
    }
    let text = &data[i + 1..];
    let (value, used) = match short_decimal(text) {
        Some((value, used)) if text.get(used).is_none_or(|&b| is_blank(b)) => (value, used),
        _ => fast_float2::parse_partial::<f32, _>(text).ok()?,
    };
    let end = i + 1 + used;
    if !value.is_finite() || data.get(end).is_some_and(|&b| !is_blank(b)) {
        return None;
    }
    *at = end;
    Some((index, value))
}

/// 10^0 … 10^15, each exact in f64.
const POWERS_OF_TEN: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// The plain decimal at the start of `text` (`-`, digits, `.`, digits; at most 15 digits in all) as the f32 nearest
/// to it, and the bytes it took; `None` for anything else and for the rare value that needs the exact parser.
///
/// Written f32 values (`0.53554475`) are this form, and `fast_float2` spent a third of a parse on its general
/// scaffolding for them. The digits make an integer m < 10^15 < 2^53 and the point a power 10^e, e ≤ 15, both exact
/// in f64, so m / 10^e is the correctly rounded f64 of the decimal. Rounding that to f32 gives the correctly
/// rounded f32 (what `fast_float2` and `str::parse` return) unless the f64 lies exactly halfway between two f32
/// values: f32's halfway points are f64 values and rounding is monotone, so an f64 that is not one of them lies on
/// the same side of each as the decimal. That case is left to the exact parser. The values stay far inside f32's
/// normal range (10^-15 ≤ |x| < 10^15, or 0), where a halfway point is an f64 whose 29 bits below f32's precision
/// are 1000…0.
// pub for the tests in tests/unit/parse.rs; not API.
#[doc(hidden)]
#[inline]
pub fn short_decimal(text: &[u8]) -> Option<(f32, usize)> {
    let negative = text.first() == Some(&b'-');
    let mut i = usize::from(negative);
    let mut mantissa: u64 = 0;
    let mut digits = 0usize;
    while let Some(d) = text
        .get(i)
        .map(|b| b.wrapping_sub(b'0'))
        .filter(|&d| d < 10)
    {
        mantissa = mantissa * 10 + u64::from(d);
        digits += 1;
        i += 1;
        if digits > 15 {
            return None;
        }
    }
    let mut fraction = 0usize;
    if text.get(i) == Some(&b'.') {
        i += 1;
        while let Some(d) = text
            .get(i)
            .map(|b| b.wrapping_sub(b'0'))
            .filter(|&d| d < 10)
        {
            mantissa = mantissa * 10 + u64::from(d);
            digits += 1;
            fraction += 1;
            i += 1;
            if digits > 15 {
                return None;
            }
        }
    }
    if digits == 0 {
        return None;
    }
    let value = mantissa as f64 / POWERS_OF_TEN[fraction];
    if value.to_bits() & 0x1FFF_FFFF == 0x1000_0000 {
        return None;
    }
    let value = value as f32;
    Some((if negative { -value } else { value }, i))
}

/// The lines of `chunk` (without their `\n`), as `split` would give them, found with memchr.
fn lines(chunk: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(chunk.strip_suffix(b"\n").unwrap_or(chunk));
    std::iter::from_fn(move || {
        let text = rest?;
        match memchr::memchr(b'\n', text) {
            Some(p) => {
                rest = Some(&text[p + 1..]);
                Some(&text[..p])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

pub(super) fn scan_chunk(chunk: &[u8]) -> ChunkStats {
    let mut s = ChunkStats::default();
    if chunk.is_empty() {
        return s;
    }
    for (li, line) in lines(chunk).enumerate() {
        s.physical_lines += 1;
        let Some((data, _)) = split_line(line) else {
            continue;
        };
        s.rows += 1;
        // A stored value is a token `index:value`: digits from the token's start up to its first colon. Colons are
        // found with memchr instead of splitting the line into tokens, which made this pass as slow as parsing. A
        // colon with anything else before it (`qid:`, a label, a malformed token) is not counted; on a well-formed
        // line that counts exactly the values pass 2 writes, and pass 2 rejects any other line with its number.
        for colon in memchr::memchr_iter(b':', data) {
            let start = data[..colon]
                .iter()
                .rposition(|b| !b.is_ascii_digit())
                .map_or(0, |p| p + 1);
            if start == colon || (start > 0 && !is_blank(data[start - 1])) {
                continue;
            }
            s.nnz += 1;
            if let Some(v) = parse_index(&data[start..colon]) {
                if v > MAX_INDEX {
                    if s.overflow.is_none() {
                        let end = data[colon..]
                            .iter()
                            .position(|&b| is_blank(b))
                            .map_or(data.len(), |p| colon + p);
                        s.overflow = Some((li + 1, truncate(&data[start..end])));
                    }
                } else {
                    s.max_index = s.max_index.max(v);
                }
            }
        }
    }
    s
}

/// Parse a decimal index; `None` if not all digits or absurdly long (overflow is saturated to u64::MAX).
#[inline]
fn parse_index(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 40 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.saturating_mul(10).saturating_add((c - b'0') as u64);
    }
    Some(v)
}

pub(super) enum Sink<'a> {
    Dense {
        values: &'a mut [f32],
        width: usize,
    },
    Sparse {
        indptr: &'a mut [usize],
        indices: &'a mut [u32],
        values: &'a mut [f32],
        base: usize,
    },
}

#[derive(Default)]
pub(super) struct ChunkOutput {
    pub(super) runs: Vec<(String, usize, usize)>, // qid, global row, line
    pub(super) docids: TextColumn,
    pub(super) comments: TextColumn,
    pub(super) rows_with_qid: usize,
    pub(super) first_line: Option<usize>,
    pub(super) first_has_qid: bool,
    pub(super) first_with_qid: Option<usize>,
    pub(super) first_without_qid: Option<usize>,
    pub(super) error: Option<DataError>,
}

pub(super) fn truncate(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(tok);
    if s.chars().count() > 40 {
        let mut t: String = s.chars().take(40).collect();
        t.push('…');
        t
    } else {
        s.into_owned()
    }
}

pub(super) fn parse_err(
    path: &Path,
    line: usize,
    tok: &str,
    problem: &str,
    expected: &str,
) -> DataError {
    DataError::Parse {
        path: path.to_path_buf(),
        line,
        token: tok.to_string(),
        problem: problem.to_string(),
        expected: expected.to_string(),
    }
}

/// Extract `X` from a comment containing `docid = X` or `docid=X`.
pub fn extract_docid(comment: &str) -> Option<&str> {
    let p = comment.find("docid")?;
    let rest = comment[p + 5..].trim_start();
    let rest = rest.strip_prefix('=')?.trim_start();
    let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

#[inline]
fn parse_f32(tok: &[u8]) -> Option<f32> {
    fast_float2::parse::<f32, _>(tok).ok()
}

/// The error of one token on one line: what is wrong and what was expected.
type TokenError<'e> = dyn Fn(&[u8], &str, &str) -> DataError + 'e;

/// A label token: a finite number.
fn parse_label(tok: &[u8], err: &TokenError<'_>) -> Result<f32> {
    let label = parse_f32(tok).ok_or_else(|| {
        err(
            tok,
            "the label is not a number",
            "a numeric relevance label",
        )
    })?;
    if !label.is_finite() {
        return Err(err(
            tok,
            "the label is not finite",
            "a finite relevance label",
        ));
    }
    Ok(label)
}

/// One `index:value` token after the feature index `last_index`: its 1-based index and its value.
fn parse_feature(
    tok: &[u8],
    last_index: u64,
    opts: &ParseOptions,
    err: &TokenError<'_>,
) -> Result<(u64, f32)> {
    let Some(c) = memchr::memchr(b':', tok) else {
        return Err(err(tok, "a feature token has no `:`", "`index:value`"));
    };
    let (idx_b, val_b) = (&tok[..c], &tok[c + 1..]);
    if idx_b == b"qid" {
        return Err(err(
            tok,
            "`qid:` must come right after the label",
            "`index:value`",
        ));
    }
    let idx = match parse_index(idx_b) {
        Some(0) => {
            return Err(err(
                tok,
                "feature index 0",
                "a feature index >= 1 (LETOR/SVMlight indices are 1-based)",
            ))
        }
        Some(v) if v > MAX_INDEX => {
            return Err(err(
                tok,
                "feature index exceeds 4294967295",
                "an index that fits in 32 bits",
            ))
        }
        Some(v) => v,
        None if idx_b.first() == Some(&b'-') => {
            return Err(err(tok, "negative feature index", "a feature index >= 1"))
        }
        None => {
            return Err(err(
                tok,
                "the feature index is not a whole number",
                "`index:value` with a positive integer index",
            ))
        }
    };
    if idx == last_index {
        return Err(err(
            tok,
            "the same feature index appears twice on the line",
            "strictly increasing feature indices",
        ));
    }
    if idx < last_index {
        return Err(err(
            tok,
            "feature indices decrease",
            "strictly increasing feature indices",
        ));
    }
    let val = if val_b.eq_ignore_ascii_case(b"null") {
        match opts.null {
            NullPolicy::Zero => 0.0,
            NullPolicy::Error => {
                return Err(err(
                    tok,
                    "NULL feature value",
                    "a number (or read with the NULL-as-zero option)",
                ))
            }
        }
    } else {
        let v = parse_f32(val_b).ok_or_else(|| {
            err(
                tok,
                "the feature value is not a number",
                "`index:value` with a numeric value",
            )
        })?;
        if !v.is_finite() {
            return Err(err(
                tok,
                "the feature value is not finite (NaN or infinity)",
                "a finite feature value",
            ));
        }
        v
    };
    Ok((idx, val))
}

pub(super) fn parse_chunk(
    path: &Path,
    chunk: &[u8],
    labels: &mut [f32],
    mut sink: Sink<'_>,
    line_base: usize,
    row_base: usize,
    expected_rows: usize,
    opts: &ParseOptions,
) -> ChunkOutput {
    let mut out = ChunkOutput::default();
    let mut row = 0usize;
    let mut pos = 0usize; // sparse write position within this chunk
    let mut prev_qid: &[u8] = &[];
    let result: Result<()> = (|| {
        for (li, line) in lines(chunk).enumerate() {
            let line_no = line_base + li + 1;
            let Some((data, comment)) = split_line(line) else {
                continue;
            };
            if row >= expected_rows {
                return Err(changed(path));
            }
            let err = |tok: &[u8], problem: &str, expected: &str| {
                parse_err(path, line_no, &truncate(tok), problem, expected)
            };
            let mut at = 0;
            let label_tok = next_token(data, &mut at).expect("non-empty data");
            let label = parse_label(label_tok, &err)?;
            labels[row] = label;
            // Optional qid.
            let mut has_qid = false;
            let after_label = at;
            if let Some(t) = next_token(data, &mut at) {
                if let Some(q) = t.strip_prefix(b"qid:") {
                    if q.is_empty() {
                        return Err(err(t, "`qid:` has no value", "a query id after `qid:`"));
                    }
                    has_qid = true;
                    if out.runs.is_empty() || prev_qid != q {
                        out.runs.push((
                            String::from_utf8_lossy(q).into_owned(),
                            row_base + row,
                            line_no,
                        ));
                        prev_qid = q;
                    }
                }
            }
            if !has_qid {
                at = after_label;
            }
            if out.first_line.is_none() {
                out.first_line = Some(line_no);
                out.first_has_qid = has_qid;
            }
            if has_qid {
                out.rows_with_qid += 1;
                out.first_with_qid.get_or_insert(line_no);
            } else {
                out.first_without_qid.get_or_insert(line_no);
            }
            let mut last_index: u64 = 0;
            loop {
                at = skip_blanks(data, at);
                if at == data.len() {
                    break;
                }
                let (idx, val) = match well_formed_feature(data, &mut at, last_index) {
                    Some(feature) => feature,
                    None => {
                        let tok = next_token(data, &mut at).expect("a token starts here");
                        parse_feature(tok, last_index, opts, &err)?
                    }
                };
                last_index = idx;
                let col = (idx - 1) as usize;
                match &mut sink {
                    Sink::Dense { values, width } => {
                        // Pass 1 sized the rows by the largest index it saw; a file that changed since is refused.
                        if col >= *width {
                            return Err(changed(path));
                        }
                        values[row * *width + col] = val
                    }
                    Sink::Sparse {
                        indices, values, ..
                    } => {
                        if pos >= indices.len() {
                            return Err(changed(path));
                        }
                        indices[pos] = col as u32;
                        values[pos] = val;
                        pos += 1;
                    }
                }
            }
            if let Sink::Sparse { indptr, base, .. } = &mut sink {
                indptr[row] = *base + pos;
            }
            let comment = std::str::from_utf8(comment).unwrap_or("");
            out.docids.push(extract_docid(comment).unwrap_or(""));
            if opts.keep_comments {
                out.comments.push(comment);
            }
            row += 1;
        }
        if row != expected_rows {
            return Err(changed(path));
        }
        Ok(())
    })();
    if let Err(e) = result {
        out.error = Some(e);
    }
    out
}
