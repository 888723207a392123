//! A binary cache of parsed datasets: loads many times faster than parsing text, and refuses to load when stale
//! or corrupt.
//!
//! Layout (little endian, format 2): magic `LTRCACHE`, format version (u32), header length (u32), the header as
//! JSON (shapes, source file size and modification time), then the arrays as raw bytes, each padded to 8 bytes, and
//! finally a checksum: XXH3-64 over the digests of the sections, each section's digest being XXH3-64 over the digests
//! of its 8 MiB blocks. Block digests are computed in parallel and large arrays are read by two threads with
//! positioned reads, straight into typed, aligned vectors.

use std::fs::File;
use std::path::Path;

use ndarray::Array2;
use sprs::CsMatI;

use crate::dataset::{Dataset, FeatureMatrix, TextColumn};
use crate::error::{DataError, Result};

const MAGIC: &[u8; 8] = b"LTRCACHE";
/// Version of the cache layout; bump on any change.
pub const CACHE_FORMAT_VERSION: u32 = 2;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Header {
    rows: u64,
    cols: u64,
    queries: u64,
    dense: bool,
    nnz: u64,
    qid_bytes: u64,
    docid_bytes: Option<u64>,
    comment_bytes: Option<u64>,
    source_len: u64,
    source_mtime_ns: u64,
}

impl Header {
    fn encode(&self) -> Vec<u8> {
        let f = |o: Option<u64>| o.map_or("null".to_string(), |v| v.to_string());
        format!(
            "{{\"rows\":{},\"cols\":{},\"queries\":{},\"dense\":{},\"nnz\":{},\"qid_bytes\":{},\"docid_bytes\":{},\"comment_bytes\":{},\"source_len\":{},\"source_mtime_ns\":{}}}",
            self.rows, self.cols, self.queries, self.dense, self.nnz, self.qid_bytes, f(self.docid_bytes), f(self.comment_bytes), self.source_len, self.source_mtime_ns
        )
        .into_bytes()
    }
    fn decode(b: &[u8]) -> Option<Self> {
        let s = std::str::from_utf8(b).ok()?;
        let get = |k: &str| -> Option<&str> {
            let key = format!("\"{k}\":");
            let p = s.find(&key)? + key.len();
            let rest = &s[p..];
            let end = rest.find([',', '}'])?;
            Some(&rest[..end])
        };
        let num = |k: &str| get(k)?.parse::<u64>().ok();
        let opt = |k: &str| -> Option<Option<u64>> {
            let v = get(k)?;
            if v == "null" {
                Some(None)
            } else {
                v.parse().ok().map(Some)
            }
        };
        Some(Header {
            rows: num("rows")?,
            cols: num("cols")?,
            queries: num("queries")?,
            dense: get("dense")? == "true",
            nnz: num("nnz")?,
            qid_bytes: num("qid_bytes")?,
            docid_bytes: opt("docid_bytes")?,
            comment_bytes: opt("comment_bytes")?,
            source_len: num("source_len")?,
            source_mtime_ns: num("source_mtime_ns")?,
        })
    }
}

fn source_stamp(source: Option<&Path>) -> (u64, u64) {
    let Some(p) = source else { return (0, 0) };
    match std::fs::metadata(p) {
        Ok(m) => {
            let mt = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as u64);
            (m.len(), mt)
        }
        Err(_) => (0, 0),
    }
}

/// Hash blocks are 8 MiB: a section's digest is XXH3 over the digests of its blocks (computed in parallel), and the
/// file checksum is XXH3 over the section digests. Large sections are read by two threads at once.
const BLOCK: usize = 8 << 20;

fn section_digest(bytes: &[u8]) -> u64 {
    use rayon::prelude::*;
    let d: Vec<u64> = bytes
        .par_chunks(BLOCK)
        .map(xxhash_rust::xxh3::xxh3_64)
        .collect();
    xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(&d))
}

fn pad_len(n: usize) -> usize {
    (8 - n % 8) % 8
}

fn text_parts(c: &TextColumn) -> (Vec<u64>, &[u8]) {
    let (data, ends) = c.raw_parts();
    (ends.iter().map(|&e| e as u64).collect(), data.as_bytes())
}

/// Save `ds` as a binary cache at `path` (atomically). `source` is the text file it was parsed from: its size and
/// modification time are recorded so a later [`load_cache`] can refuse a stale cache.
pub fn save_cache(ds: &Dataset, path: &Path, source: Option<&Path>) -> Result<()> {
    let (source_len, source_mtime_ns) = source_stamp(source);
    let qids = {
        let mut c = TextColumn::new();
        for q in ds.qids() {
            c.push(q);
        }
        c
    };
    let header = Header {
        rows: ds.n_docs() as u64,
        cols: ds.n_features() as u64,
        queries: ds.n_queries() as u64,
        dense: ds.is_dense(),
        nnz: ds.nnz() as u64,
        qid_bytes: qids.raw_parts().0.len() as u64,
        docid_bytes: ds.docids().map(|c| c.raw_parts().0.len() as u64),
        comment_bytes: ds.comments().map(|c| c.raw_parts().0.len() as u64),
        source_len,
        source_mtime_ns,
    };
    let h = header.encode();
    let mut head = MAGIC.to_vec();
    head.extend_from_slice(&CACHE_FORMAT_VERSION.to_le_bytes());
    head.extend_from_slice(&(h.len() as u32).to_le_bytes());
    head.extend_from_slice(&h);
    let offs: Vec<u64> = ds.query_offsets().iter().map(|&o| o as u64).collect();
    let mut owned: Vec<Vec<u8>> = Vec::new();
    let mut sections: Vec<&[u8]> = vec![
        &head,
        bytemuck::cast_slice(ds.labels()),
        bytemuck::cast_slice(&offs),
    ];
    let ip: Vec<u64>;
    match ds.features() {
        FeatureMatrix::Dense(a) => {
            sections.push(bytemuck::cast_slice(a.as_slice().expect("standard layout")))
        }
        FeatureMatrix::Sparse(m) => {
            ip = m
                .indptr()
                .as_slice()
                .expect("plain indptr")
                .iter()
                .map(|&o| o as u64)
                .collect();
            sections.push(bytemuck::cast_slice(&ip));
            sections.push(bytemuck::cast_slice(m.indices()));
            sections.push(bytemuck::cast_slice(m.data()));
        }
    }
    for col in [Some(&qids), ds.docids(), ds.comments()]
        .into_iter()
        .flatten()
    {
        let (ends, data) = text_parts(col);
        owned.push(bytemuck::cast_slice(&ends).to_vec());
        owned.push(data.to_vec());
    }
    sections.extend(owned.iter().map(|v| v.as_slice()));
    let digests: Vec<u64> = sections.iter().map(|s| section_digest(s)).collect();
    let checksum = xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(&digests));
    crate::write::write_atomic(path, |w| {
        for s in &sections {
            w.write_all(s)?;
            w.write_all(&[0u8; 8][..pad_len(s.len())])?;
        }
        w.write_all(&checksum.to_le_bytes())
    })
}

/// Read `len` elements of `T` at `offset`, in two parallel halves when large; returns the values and the section digest.
fn read_section<T: bytemuck::Pod + bytemuck::Zeroable + Send>(
    f: &File,
    offset: &mut u64,
    len: usize,
) -> std::io::Result<(Vec<T>, u64)> {
    use std::os::unix::fs::FileExt;
    // Never allocate more than the file can still hold: a corrupt length must fail, not exhaust memory.
    let available = f.metadata()?.len().saturating_sub(*offset);
    let needed = (len as u64).checked_mul(std::mem::size_of::<T>() as u64);
    if needed.is_none_or(|n| n > available) {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let mut v = vec![T::zeroed(); len];
    {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut v);
        if bytes.len() >= 4 * BLOCK {
            // Two halves on two threads, split on a block boundary.
            let half = (bytes.len() / 2).div_ceil(BLOCK) * BLOCK;
            let (a, b) = bytes.split_at_mut(half.min(bytes.len()));
            let (ra, rb) = rayon::join(
                || f.read_exact_at(a, *offset),
                || f.read_exact_at(b, *offset + half as u64),
            );
            ra?;
            rb?;
        } else {
            f.read_exact_at(bytes, *offset)?;
        }
    }
    let bytes: &[u8] = bytemuck::cast_slice(&v);
    let d = section_digest(bytes);
    *offset += (bytes.len() + pad_len(bytes.len())) as u64;
    Ok((v, d))
}

/// Load a cache written by [`save_cache`]. With `source`, the cache must have been made from that file at its
/// current size and modification time; otherwise it is rejected as stale. A wrong magic, version or checksum, or a
/// truncated file, is rejected with [`DataError::Cache`].
pub fn load_cache(path: &Path, source: Option<&Path>) -> Result<Dataset> {
    use std::os::unix::fs::FileExt;
    let bad = |p: &str| DataError::Cache {
        path: path.to_path_buf(),
        problem: p.to_string(),
    };
    let f = File::open(path).map_err(|e| DataError::io(path, e))?;
    let file_len = f.metadata().map_err(|e| DataError::io(path, e))?.len();
    let io = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            bad("the file is truncated")
        } else {
            DataError::io(path, e)
        }
    };
    let mut pre = [0u8; 16];
    f.read_exact_at(&mut pre, 0).map_err(io)?;
    if &pre[..8] != MAGIC {
        return Err(bad("not an ltr dataset cache (wrong magic number)"));
    }
    let version = u32::from_le_bytes(pre[8..12].try_into().expect("4 bytes"));
    if version != CACHE_FORMAT_VERSION {
        return Err(bad(&format!(
            "format version {version}, this build reads version {CACHE_FORMAT_VERSION}"
        )));
    }
    let hlen = u32::from_le_bytes(pre[12..16].try_into().expect("4 bytes")) as usize;
    if hlen > 1 << 20 {
        return Err(bad("header too large"));
    }
    let mut head = vec![0u8; 16 + hlen];
    f.read_exact_at(&mut head, 0).map_err(io)?;
    let h = Header::decode(&head[16..]).ok_or_else(|| bad("unreadable header"))?;
    if let Some(src) = source {
        let (len, mt) = source_stamp(Some(src));
        if len != h.source_len || mt != h.source_mtime_ns {
            return Err(bad(&format!(
                "stale: {} changed since the cache was written",
                src.display()
            )));
        }
    }
    // Refuse sizes the file cannot hold before allocating anything (a corrupt header must not allocate terabytes).
    let cells = if h.dense {
        h.rows.saturating_mul(h.cols)
    } else {
        h.nnz
    };
    let min_bytes = cells
        .saturating_mul(4)
        .saturating_add(h.rows.saturating_mul(4));
    if min_bytes > file_len {
        return Err(bad(
            "the file is truncated (the header promises more data than it holds)",
        ));
    }
    let mut digests = vec![section_digest(&head)];
    let mut off = (head.len() + pad_len(head.len())) as u64;
    let (rows, cols, nq) = (h.rows as usize, h.cols as usize, h.queries as usize);
    let (labels, d) = read_section::<f32>(&f, &mut off, rows).map_err(io)?;
    digests.push(d);
    let (offsets, d) = read_section::<u64>(&f, &mut off, nq.saturating_add(1)).map_err(io)?;
    digests.push(d);
    let features = if h.dense {
        let (vals, d) = read_section::<f32>(&f, &mut off, rows.saturating_mul(cols)).map_err(io)?;
        digests.push(d);
        FeatureMatrix::Dense(
            Array2::from_shape_vec((rows, cols), vals).map_err(|_| bad("bad dense shape"))?,
        )
    } else {
        let (ip, d1) = read_section::<u64>(&f, &mut off, rows.saturating_add(1)).map_err(io)?;
        let (ix, d2) = read_section::<u32>(&f, &mut off, h.nnz as usize).map_err(io)?;
        let (data, d3) = read_section::<f32>(&f, &mut off, h.nnz as usize).map_err(io)?;
        digests.extend([d1, d2, d3]);
        let ip: Vec<usize> = ip.into_iter().map(|x| x as usize).collect();
        let m = CsMatI::try_new((rows, cols), ip, ix, data)
            .map_err(|e| bad(&format!("bad sparse structure: {}", e.3)))?;
        FeatureMatrix::Sparse(m)
    };
    let mut read_text = |n: usize, bytes: u64| -> Result<TextColumn> {
        let (ends, d1) = read_section::<u64>(&f, &mut off, n).map_err(io)?;
        let (data, d2) = read_section::<u8>(&f, &mut off, bytes as usize).map_err(io)?;
        digests.extend([d1, d2]);
        let s = String::from_utf8(data).map_err(|_| bad("text column is not UTF-8"))?;
        TextColumn::from_raw_parts(s, ends.into_iter().map(|e| e as usize).collect())
            .map_err(|e| bad(&format!("bad text column: {e}")))
    };
    let qids_col = read_text(nq, h.qid_bytes)?;
    let docids = h.docid_bytes.map(|b| read_text(rows, b)).transpose()?;
    let comments = h.comment_bytes.map(|b| read_text(rows, b)).transpose()?;
    let mut stored = [0u8; 8];
    f.read_exact_at(&mut stored, off).map_err(io)?;
    if off + 8 != file_len {
        return Err(bad("trailing bytes after the checksum"));
    }
    // The structure is validated before the checksum is compared, so these checks are reached (and fuzzed) for
    // any bytes, not only for files whose checksum happens to match.
    let qids: Vec<String> = qids_col.iter().map(str::to_string).collect();
    let offsets: Vec<usize> = offsets.into_iter().map(|o| o as usize).collect();
    let mut ds = Dataset::new(features, labels, offsets, qids)
        .map_err(|e| bad(&format!("inconsistent contents: {e}")))?;
    let inconsistent = |e: DataError| bad(&format!("inconsistent contents: {e}"));
    if let Some(d) = docids {
        ds = ds.with_docids(d).map_err(inconsistent)?;
    }
    if let Some(c) = comments {
        ds = ds.with_comments(c).map_err(inconsistent)?;
    }
    if u64::from_le_bytes(stored) != xxhash_rust::xxh3::xxh3_64(bytemuck::cast_slice(&digests)) {
        return Err(bad("checksum mismatch (the file is corrupt)"));
    }
    Ok(ds)
}

/// Parse `source` through a cache at `source.ltrcache`: load the cache when it is valid for the current file, else
/// parse the text and (re)write the cache. A stale or corrupt cache is reported in the log and rebuilt.
pub fn read_cached(source: &Path, opts: &crate::parse::ParseOptions) -> Result<Dataset> {
    let mut cache = source.as_os_str().to_owned();
    cache.push(".ltrcache");
    let cache = std::path::PathBuf::from(cache);
    if cache.is_file() {
        match load_cache(&cache, Some(source)) {
            Ok(ds) => return Ok(ds),
            Err(e) => tracing::warn!("{e}"),
        }
    }
    let ds = crate::parse::read_letor_with(source, opts)?;
    save_cache(&ds, &cache, Some(source))?;
    Ok(ds)
}
