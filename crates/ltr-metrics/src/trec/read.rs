//! Runs and qrels read in parallel blocks of about a mebibyte (`pread` into each thread's buffer, plain ASCII
//! lines split eight bytes at a time), with the results and errors (file:line) of a line-by-line read.

use std::collections::HashMap;
use std::path::Path;

use super::number::{parse_decimal, parse_f32, values_into, Decimal};
use super::{io, read_text, FileError};
use crate::runs::{Qrels, QueryQrels, RunQuery, Table};

/// Call `each` with the whitespace-separated fields of every non-blank line of `path` and a maker of errors that name
/// the file and that line.
// pub for the tests in tests/unit/trec_read.rs; not API.
#[doc(hidden)]
pub fn for_each_record(
    path: &Path,
    mut each: impl FnMut(&[&str], &dyn Fn(String) -> FileError) -> Result<(), FileError>,
) -> Result<(), FileError> {
    let text = read_text(path)?;
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() || fields[0].starts_with('#') {
            continue;
        }
        let err = |problem: String| FileError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            problem,
        };
        each(&fields, &err)?;
    }
    Ok(())
}

/// Blocks of about this many bytes are parsed in parallel by the TREC readers.
// pub for the tests in tests/unit/trec_read.rs and trec_stream.rs; not API.
#[doc(hidden)]
pub const BLOCK: usize = 1 << 20;

/// The whitespace-separated fields of a line (`str::split_whitespace`'s): the first `N` and how many there are in
/// all. `ascii` says the line is ASCII without a vertical tab, where ASCII whitespace is the same set and
/// splitting bytes is faster.
#[inline]
fn fields<const N: usize>(line: &str, ascii: bool) -> ([&str; N], usize) {
    let mut f = [""; N];
    let mut n = 0;
    if ascii {
        // Fields between runs of ASCII whitespace, found byte by byte.
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i > start {
                if n < N {
                    f[n] = &line[start..i];
                }
                n += 1;
            }
        }
    } else {
        for w in line.split_whitespace() {
            if n < N {
                f[n] = w;
            }
            n += 1;
        }
    }
    (f, n)
}

/// Is `chunk` ASCII whose only bytes below `!` are ASCII whitespace (space, tab, newline, form feed, carriage
/// return)? Then a byte is whitespace exactly when it is below `!`, which [`plain_line`] tests eight bytes at once.
// pub for the tests in tests/unit/trec_read.rs; not API.
#[doc(hidden)]
pub fn plain_ascii(chunk: &[u8]) -> bool {
    chunk.iter().fold(true, |ok, &b| {
        ok & (b < 0x80)
            & ((b > 0x20) | (b == b' ') | (b == b'\t') | (b == b'\n') | (b == b'\r') | (b == 0x0c))
    })
}

/// Eight bytes of `b` from `at`, little-endian; past the end, newlines.
#[inline]
fn word(b: &[u8], at: usize) -> u64 {
    const NEWLINES: u64 = 0x0a0a_0a0a_0a0a_0a0a;
    match b.get(at..at + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().expect("eight bytes")),
        None => {
            let rest = &b[at.min(b.len())..];
            rest.iter()
                .rev()
                .fold(NEWLINES, |x, &c| (x << 8) | c as u64)
        }
    }
}

/// The line of the [`plain_ascii`] block `text` that starts at `start`: where it ends (its newline, or the block's
/// end), its fields numbered `want` (each below 6; empty past the last) and how many fields it has (as [`fields`]
/// counts them). Eight bytes at a time: the first newline is the lowest zero byte of the word xor `\n`s (a borrow
/// only runs upward from a zero byte, so the lowest flag is exact); whitespace is a byte below `!` (adding 0x5f to
/// an ASCII byte sets its top bit exactly when it is 0x21 or more), its top bits gathered into a bit per byte. The
/// fields are the runs of clear bits: each starts where the bit before it is set and ends where the bit after it
/// is; their count is the number of starts, and only the fields wanted are cut out. Lines of 64 bytes or more take
/// `memchr` and [`fields`].
// pub for the tests in tests/unit/trec_read.rs; not API.
#[doc(hidden)]
#[inline(always)]
pub fn plain_line<const N: usize>(
    text: &str,
    start: usize,
    want: [usize; N],
) -> (usize, [&str; N], usize) {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let b = text.as_bytes();
    let mut ws = 0u64;
    let mut len = None;
    for k in 0..8 {
        let x = word(b, start + 8 * k);
        let t = x ^ 0x0a0a_0a0a_0a0a_0a0a;
        let newline = t.wrapping_sub(0x0101_0101_0101_0101) & !t & HIGH;
        let low = !x.wrapping_add(0x5f5f_5f5f_5f5f_5f5f) & HIGH;
        ws |= (low.wrapping_mul(0x0002_0408_1020_4081) >> 56) << (8 * k);
        if newline != 0 {
            len = Some(8 * k + newline.trailing_zeros() as usize / 8);
            break;
        }
    }
    let Some(len) = len else {
        let end = memchr::memchr(b'\n', &b[start..]).map_or(b.len(), |i| start + i);
        let (f, n) = fields::<6>(&text[start..end], true);
        return (end, want.map(|k| f[k]), n);
    };
    let line = &text[start..start + len];
    ws |= !0u64 << len;
    let starts = !ws & ((ws << 1) | 1);
    let ends = !ws & (ws >> 1);
    let n = starts.count_ones() as usize;
    /// The position of the `k`th set bit of `m` (it has more than `k`).
    #[inline(always)]
    fn nth(mut m: u64, k: usize) -> usize {
        for _ in 0..k {
            m &= m - 1;
        }
        m.trailing_zeros() as usize
    }
    // A loop, not `want.map`: the profile showed `[T; N]::try_map` not inlined, 7.9% of `ltr eval`'s samples.
    let mut f = [""; N];
    for (out, &k) in f.iter_mut().zip(&want) {
        if k < n {
            *out = &line[nth(starts, k)..=nth(ends, k)];
        }
    }
    (start + len, f, n)
}

/// What one block of a file gave: consecutive runs of lines of one query (`(qid, part)`), the number of lines it
/// holds, whether it is UTF-8, and its first bad line (0-based within the block) with the problem.
pub(super) struct Block<T> {
    pub(super) segments: Vec<(String, T)>,
    lines: usize,
    utf8: bool,
    error: Option<(usize, String)>,
}

/// Bytes `at..at + len` of `file` (fewer at its end) into `buf` after its first `filled` bytes; the new count of
/// bytes filled. `buf` only grows (its bytes past `filled` are overwritten, never cleared first): each thread
/// reads its blocks into one buffer, and zeroing it before every read was 2.4% of `ltr eval`'s time.
fn read_more(
    file: &std::fs::File,
    at: u64,
    len: usize,
    buf: &mut Vec<u8>,
    filled: usize,
) -> std::io::Result<usize> {
    if buf.len() < filled + len {
        buf.resize(filled + len, 0);
    }
    let mut got = 0;
    while got < len {
        let n = read_at(file, &mut buf[filled + got..filled + len], at + got as u64)?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(filled + got)
}

/// The file's bytes `span.0..span.1` into `buf` (its length then theirs).
pub(super) fn read_span(
    file: &std::fs::File,
    span: (u64, u64),
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    let n = read_more(file, span.0, (span.1 - span.0) as usize, buf, 0)?;
    buf.truncate(n);
    Ok(())
}

#[cfg(unix)]
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, at)
}

#[cfg(windows)]
fn read_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, at)
}

/// The lines of `file` (`len` bytes) that start in `lo..hi`, read into `buf`: from the first line start at or after
/// `lo` (a line starts at 0 and after each newline) through the newline that ends the last of them (or the file's
/// end). Empty when no line starts there.
fn block_text<'b>(
    file: &std::fs::File,
    len: u64,
    lo: u64,
    hi: u64,
    buf: &'b mut Vec<u8>,
) -> std::io::Result<(u64, &'b [u8])> {
    // From the byte before `lo`: a newline there makes `lo` a line start.
    let from = lo.saturating_sub(1);
    let mut filled = read_more(file, from, (hi - from) as usize, buf, 0)?;
    let first = if lo == 0 {
        0
    } else {
        match memchr::memchr(b'\n', &buf[..filled]) {
            Some(i) => i + 1,
            None => return Ok((hi, &[])),
        }
    };
    let at = from + first as u64;
    if at >= hi {
        return Ok((hi, &[]));
    }
    // The last line starting before `hi` goes on to its newline: read until one at or after `hi - 1`.
    let mut searched = ((hi - 1 - from) as usize).min(filled);
    loop {
        if let Some(i) = memchr::memchr(b'\n', &buf[searched..filled]) {
            return Ok((at, &buf[first..searched + i + 1]));
        }
        let end = from + filled as u64;
        if end >= len {
            return Ok((at, &buf[first..filled]));
        }
        searched = filled;
        filled = read_more(file, end, 64 << 10, buf, filled)?;
        if filled == searched {
            return Ok((at, &buf[first..filled]));
        }
    }
}

/// One run of consecutive lines of one query within a block, as [`parse_file`] hands it over: the query id, each
/// line's document id and value, whether the block has lines of other queries both before and after it (the
/// query may still recur elsewhere in the file), and the file's bytes `span.0..span.1` that hold it (from its first
/// line's start to its last line's end).
pub(super) struct Segment<'a, V> {
    pub(super) qid: &'a str,
    pub(super) ids: &'a [&'a str],
    pub(super) values: &'a [V],
    pub(super) interior: bool,
    pub(super) span: (u64, u64),
}

/// Parse the file at `path` in blocks of about `block` bytes, in parallel, each read into its thread's buffer (a
/// block owns the lines that start in its range; the whole file is never held at once). Each block must be UTF-8
/// (the whole file is exactly when every block is, a block starting after a newline); `check` turns the fields of a
/// non-blank line numbered `want` (its qid, its docid and its value; each below 6) and its count of fields into its
/// value or a problem, and `part` makes each run of consecutive lines of one query (a [`Segment`]) into a part of
/// that query, with a scratch space of its thread (made by `init`). The blocks come back in file order; a file that
/// is not UTF-8 is refused as `read_to_string` refuses it, and otherwise the first error of the file (as a serial
/// reader would meet it) names the file and its 1-based line.
pub(super) fn parse_file<V: Send, T: Send, S>(
    path: &Path,
    block: usize,
    want: [usize; 3],
    check: impl Fn(&[&str; 3], usize) -> Result<V, String> + Sync,
    init: impl Fn() -> S + Sync + Send,
    part: impl Fn(&mut S, Segment<'_, V>) -> T + Sync,
) -> Result<Vec<Block<T>>, FileError> {
    use rayon::prelude::*;
    if path.is_dir() {
        return Err(io(path, std::io::Error::other("is a directory")));
    }
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let len = file.metadata().map_err(|e| io(path, e))?.len();
    let block = block.max(1) as u64;
    let blocks: Vec<Block<T>> = (0..len.div_ceil(block))
        .into_par_iter()
        .map_init(
            || (Vec::new(), init()),
            |(buf, scratch), k| {
                let mut b = Block {
                    segments: Vec::new(),
                    lines: 0,
                    utf8: true,
                    error: None,
                };
                let (base, raw) =
                    block_text(&file, len, k * block, ((k + 1) * block).min(len), buf)?;
                let Ok(chunk) = std::str::from_utf8(raw) else {
                    b.utf8 = false;
                    return Ok(b);
                };
                // Lines as `str::lines` gives them (a trailing `\r` is whitespace to the field split).
                let plain = plain_ascii(raw);
                let ascii = plain || (chunk.is_ascii() && memchr::memchr(0x0b, raw).is_none());
                let (mut ids, mut values, mut qid_now) = (Vec::new(), Vec::new(), "");
                // The current segment's first line start and last line end, and whether it is the block's first.
                let (mut lo, mut hi, mut first) = (0, 0, true);
                let mut start = 0;
                let mut i = 0;
                while start < raw.len() {
                    let (end, f, n) = if plain {
                        plain_line(chunk, start, want)
                    } else {
                        let end =
                            memchr::memchr(b'\n', &raw[start..]).map_or(raw.len(), |k| start + k);
                        let (f, n) = fields::<6>(&chunk[start..end], ascii);
                        (end, want.map(|k| f[k]), n)
                    };
                    let line_start = start;
                    start = end + 1;
                    i += 1;
                    b.lines = i;
                    // Blank lines and `#` comment lines are skipped, as trec_eval 10.0 skips them.
                    if n == 0 || f[0].as_bytes()[0] == b'#' {
                        continue;
                    }
                    match check(&f, n) {
                        Ok(value) => {
                            let qid = f[0];
                            // Byte by byte: query ids are short, and a call to `memcmp` a line cost more.
                            let same = qid.len() == qid_now.len()
                                && qid.bytes().zip(qid_now.bytes()).all(|(a, b)| a == b);
                            if !same {
                                if !ids.is_empty() {
                                    let seg = Segment {
                                        qid: qid_now,
                                        ids: &ids,
                                        values: &values,
                                        interior: !first,
                                        span: (base + lo as u64, base + hi as u64),
                                    };
                                    b.segments.push((qid_now.to_string(), part(scratch, seg)));
                                    ids.clear();
                                    values.clear();
                                    first = false;
                                }
                                lo = line_start;
                            }
                            hi = end;
                            qid_now = qid;
                            ids.push(f[1]);
                            values.push(value);
                        }
                        Err(problem) => {
                            b.error = Some((i - 1, problem));
                            return Ok(b);
                        }
                    }
                }
                if !ids.is_empty() {
                    let seg = Segment {
                        qid: qid_now,
                        ids: &ids,
                        values: &values,
                        interior: false,
                        span: (base + lo as u64, base + hi as u64),
                    };
                    b.segments.push((qid_now.to_string(), part(scratch, seg)));
                }
                Ok(b)
            },
        )
        .collect::<Result<_, std::io::Error>>()
        .map_err(|e| io(path, e))?;
    if blocks.iter().any(|b| !b.utf8) {
        return Err(io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ),
        ));
    }
    let mut before = 0;
    for b in &blocks {
        if let Some((i, problem)) = &b.error {
            return Err(FileError::Parse {
                path: path.to_path_buf(),
                line: before + i + 1,
                problem: problem.clone(),
            });
        }
        before += b.lines;
    }
    Ok(blocks)
}

/// Each query's parts in file order, queries in order of first appearance.
pub(super) fn parts_by_query<T>(blocks: Vec<Block<T>>) -> Vec<(String, Vec<T>)> {
    let mut by_qid: Vec<(String, Vec<T>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for b in blocks {
        for (qid, part) in b.segments {
            match index.get(&qid) {
                Some(&q) => by_qid[q].1.push(part),
                None => {
                    index.insert(qid.clone(), by_qid.len());
                    by_qid.push((qid, vec![part]));
                }
            }
        }
    }
    by_qid
}

/// Read a TREC run (`qid Q0 docid rank score tag`), grouped by qid in order of first appearance. The rank column is
/// ignored (trec_eval re-sorts by score). Large files are read and parsed in parallel blocks; the result and the
/// errors are those of a line-by-line read.
pub fn read_run(path: &Path) -> Result<Vec<RunQuery>, FileError> {
    read_run_in_blocks(path, BLOCK)
}

/// The fields of a run line that the readers use: qid, docid, score.
pub(super) const RUN_FIELDS: [usize; 3] = [0, 2, 4];

/// The score of a run line (its fields [`RUN_FIELDS`] and its count of fields), or the problem. Inlined into the
/// block loop, its problems written out of line.
#[inline]
pub(super) fn run_value(f: &[&str; 3], n: usize) -> Result<Decimal, String> {
    if n < 5 {
        return Err(run_problem(f, n));
    }
    match parse_decimal(f[2]) {
        Some(score) if score.is_finite() => Ok(score),
        _ => Err(run_problem(f, n)),
    }
}

/// What is wrong with a run line that [`run_value`] refuses.
#[cold]
#[inline(never)]
fn run_problem(f: &[&str; 3], n: usize) -> String {
    if n < 5 {
        format!("{n} fields; a run line is `qid Q0 docid rank score [tag]`")
    } else if parse_decimal(f[2]).is_none() {
        format!("score `{}` is not a number", f[2])
    } else {
        format!("score `{}` is not finite", f[2])
    }
}

// pub for the tests in tests/unit/trec_read.rs; not API.
#[doc(hidden)]
pub fn read_run_in_blocks(path: &Path, block: usize) -> Result<Vec<RunQuery>, FileError> {
    let blocks = parse_file(path, block, RUN_FIELDS, run_value, Vec::new, |scores, s| {
        values_into(s.values, scores);
        RunQuery::from_items(s.ids, scores)
    })?;
    Ok(parts_by_query(blocks)
        .into_iter()
        .map(|(qid, parts)| {
            let mut parts = parts.into_iter();
            let mut q = parts.next().expect("a query has a part");
            for p in parts {
                q.append(&p);
            }
            q.set_qid(&qid);
            q
        })
        .collect())
}

/// Read qrels (`qid iter docid rel`). A (qid, docid) given twice keeps its last value. Large files are read and
/// parsed in parallel blocks, each building its queries' judgments; a query split over blocks is joined in parallel
/// with the others. The result and the errors are those of a line-by-line read.
pub fn read_qrels(path: &Path) -> Result<Qrels, FileError> {
    read_qrels_in_blocks(path, BLOCK, true)
}

/// [`read_qrels`] for one evaluation: a document judged twice is left listed twice (unchecked, see
/// `QueryQrels::unchecked`), for the evaluation to find in the table it builds anyway.
// pub for the tests in tests/unit/trec_stream.rs; not API.
#[doc(hidden)]
pub fn read_qrels_unchecked(path: &Path) -> Result<Qrels, FileError> {
    read_qrels_in_blocks(path, BLOCK, false)
}

/// What is wrong with a qrels line (its qid, docid and relevance, and its count of fields).
#[cold]
#[inline(never)]
fn qrels_problem(f: &[&str; 3], n: usize) -> String {
    match parse_f32(f[2]) {
        _ if n != 4 => format!("{n} fields; a qrels line is `qid iter docid rel`"),
        None => format!("relevance `{}` is not a number", f[2]),
        Some(_) => "relevance is not finite".into(),
    }
}

/// The qrels at `path`; `checked`: with their duplicates merged (else unchecked).
// pub for the tests in tests/unit/trec_read.rs; not API.
#[doc(hidden)]
pub fn read_qrels_in_blocks(path: &Path, block: usize, checked: bool) -> Result<Qrels, FileError> {
    use rayon::prelude::*;
    let blocks = parse_file(
        path,
        block,
        [0, 2, 3],
        |f, n| match parse_f32(f[2]) {
            Some(rel) if n == 4 && rel.is_finite() => Ok(rel),
            _ => Err(qrels_problem(f, n)),
        },
        Table::default,
        |table, s| {
            if checked {
                QueryQrels::from_items(s.ids, s.values, table)
            } else {
                QueryQrels::from_items_unchecked(s.ids, s.values)
            }
        },
    )?;
    let joined: Vec<(String, QueryQrels)> = parts_by_query(blocks)
        .into_par_iter()
        .map(|(qid, parts)| {
            let mut parts = parts.into_iter();
            let mut q = parts.next().expect("a query has a part");
            for p in parts {
                q.merge(&p);
            }
            (qid, q)
        })
        .collect();
    let mut out = Qrels::new();
    for (qid, q) in joined {
        out.add(&qid, q);
    }
    Ok(out)
}
