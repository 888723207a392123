//! A binary cache of parsed datasets: loads many times faster than parsing text, and refuses to load when stale
//! or corrupt.
//!
//! Layout (little endian): magic `LTRCACHE`, format version (u32), header length (u32), the header as JSON
//! (shapes, source file size and modification time), then the arrays as raw bytes, each padded to 8 bytes, and finally an
//! XXH3-64 checksum of everything before it. Arrays are read straight into typed, aligned vectors.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use ndarray::Array2;
use sprs::CsMatI;
use xxhash_rust::xxh3::Xxh3;

use crate::dataset::{Dataset, FeatureMatrix, TextColumn};
use crate::error::{DataError, Result};

const MAGIC: &[u8; 8] = b"LTRCACHE";
/// Version of the cache layout; bump on any change.
pub const CACHE_FORMAT_VERSION: u32 = 1;

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

struct HashWriter<W: Write> {
    inner: W,
    hash: Xxh3,
    written: u64,
}
impl<W: Write> HashWriter<W> {
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.hash.update(b);
        self.written += b.len() as u64;
        self.inner.write_all(b)
    }
    fn pad(&mut self) -> std::io::Result<()> {
        let rem = (self.written % 8) as usize;
        if rem != 0 {
            self.put(&[0u8; 8][..8 - rem])?;
        }
        Ok(())
    }
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
    crate::write::write_atomic(path, |w| {
        let mut hw = HashWriter {
            inner: w,
            hash: Xxh3::new(),
            written: 0,
        };
        hw.put(MAGIC)?;
        hw.put(&CACHE_FORMAT_VERSION.to_le_bytes())?;
        let h = header.encode();
        hw.put(&(h.len() as u32).to_le_bytes())?;
        hw.put(&h)?;
        hw.pad()?;
        hw.put(bytemuck::cast_slice(ds.labels()))?;
        hw.pad()?;
        let offs: Vec<u64> = ds.query_offsets().iter().map(|&o| o as u64).collect();
        hw.put(bytemuck::cast_slice(&offs))?;
        match ds.features() {
            FeatureMatrix::Dense(a) => {
                hw.put(bytemuck::cast_slice(a.as_slice().expect("standard layout")))?;
                hw.pad()?;
            }
            FeatureMatrix::Sparse(m) => {
                let ip: Vec<u64> = m
                    .indptr()
                    .as_slice()
                    .expect("plain indptr")
                    .iter()
                    .map(|&o| o as u64)
                    .collect();
                hw.put(bytemuck::cast_slice(&ip))?;
                hw.put(bytemuck::cast_slice(m.indices()))?;
                hw.pad()?;
                hw.put(bytemuck::cast_slice(m.data()))?;
                hw.pad()?;
            }
        }
        for col in [Some(&qids), ds.docids(), ds.comments()]
            .into_iter()
            .flatten()
        {
            let (ends, data) = text_parts(col);
            hw.put(bytemuck::cast_slice(&ends))?;
            hw.put(data)?;
            hw.pad()?;
        }
        let digest = hw.hash.digest();
        hw.inner.write_all(&digest.to_le_bytes())?;
        Ok(())
    })
}

struct HashReader<R: Read> {
    inner: R,
    hash: Xxh3,
    read: u64,
}
impl<R: Read> HashReader<R> {
    fn fill(&mut self, b: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_exact(b)?;
        self.hash.update(b);
        self.read += b.len() as u64;
        Ok(())
    }
    fn vec<T: bytemuck::Pod + bytemuck::Zeroable>(&mut self, n: usize) -> std::io::Result<Vec<T>> {
        let mut v = vec![T::zeroed(); n];
        self.fill(bytemuck::cast_slice_mut(&mut v))?;
        Ok(v)
    }
    fn skip_pad(&mut self) -> std::io::Result<()> {
        let rem = (self.read % 8) as usize;
        if rem != 0 {
            let mut p = [0u8; 8];
            self.fill(&mut p[..8 - rem])?;
        }
        Ok(())
    }
}

/// Load a cache written by [`save_cache`]. With `source`, the cache must have been made from that file at its
/// current size and modification time; otherwise it is rejected as stale. A wrong magic, version or checksum, or a
/// truncated file, is rejected with [`DataError::Cache`].
pub fn load_cache(path: &Path, source: Option<&Path>) -> Result<Dataset> {
    let bad = |p: &str| DataError::Cache {
        path: path.to_path_buf(),
        problem: p.to_string(),
    };
    let file = File::open(path).map_err(|e| DataError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| DataError::io(path, e))?.len();
    let mut r = HashReader {
        inner: std::io::BufReader::with_capacity(1 << 16, file),
        hash: Xxh3::new(),
        read: 0,
    };
    let io = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            bad("the file is truncated")
        } else {
            DataError::io(path, e)
        }
    };
    let mut magic = [0u8; 8];
    r.fill(&mut magic).map_err(io)?;
    if &magic != MAGIC {
        return Err(bad("not an ltr dataset cache (wrong magic number)"));
    }
    let mut v = [0u8; 4];
    r.fill(&mut v).map_err(io)?;
    let version = u32::from_le_bytes(v);
    if version != CACHE_FORMAT_VERSION {
        return Err(bad(&format!(
            "format version {version}, this build reads version {CACHE_FORMAT_VERSION}"
        )));
    }
    r.fill(&mut v).map_err(io)?;
    let hlen = u32::from_le_bytes(v) as usize;
    if hlen > 1 << 20 {
        return Err(bad("header too large"));
    }
    let mut hb = vec![0u8; hlen];
    r.fill(&mut hb).map_err(io)?;
    let h = Header::decode(&hb).ok_or_else(|| bad("unreadable header"))?;
    if let Some(src) = source {
        let (len, mt) = source_stamp(Some(src));
        if len != h.source_len || mt != h.source_mtime_ns {
            return Err(bad(&format!(
                "stale: {} changed since the cache was written",
                src.display()
            )));
        }
    }
    // Refuse absurd sizes before allocating (a corrupt header must not allocate terabytes).
    let cells = if h.dense {
        h.rows.saturating_mul(h.cols)
    } else {
        h.nnz
    };
    let min_bytes = cells
        .saturating_mul(4)
        .saturating_add(h.rows.saturating_mul(4));
    if min_bytes > file_len {
        return Err(bad("header sizes exceed the file size"));
    }
    let (rows, cols, nq) = (h.rows as usize, h.cols as usize, h.queries as usize);
    r.skip_pad().map_err(io)?;
    let labels: Vec<f32> = r.vec(rows).map_err(io)?;
    r.skip_pad().map_err(io)?;
    let offsets: Vec<u64> = r.vec(nq + 1).map_err(io)?;
    let features = if h.dense {
        let vals: Vec<f32> = r.vec(rows * cols).map_err(io)?;
        r.skip_pad().map_err(io)?;
        FeatureMatrix::Dense(
            Array2::from_shape_vec((rows, cols), vals).map_err(|_| bad("bad dense shape"))?,
        )
    } else {
        let ip: Vec<u64> = r.vec(rows + 1).map_err(io)?;
        let ix: Vec<u32> = r.vec(h.nnz as usize).map_err(io)?;
        r.skip_pad().map_err(io)?;
        let data: Vec<f32> = r.vec(h.nnz as usize).map_err(io)?;
        r.skip_pad().map_err(io)?;
        let ip: Vec<usize> = ip.into_iter().map(|x| x as usize).collect();
        let m = CsMatI::try_new((rows, cols), ip, ix, data)
            .map_err(|e| bad(&format!("bad sparse structure: {}", e.3)))?;
        FeatureMatrix::Sparse(m)
    };
    let mut read_text = |n: usize, bytes: u64| -> Result<TextColumn> {
        let ends: Vec<u64> = r.vec(n).map_err(io)?;
        let mut data = vec![0u8; bytes as usize];
        r.fill(&mut data).map_err(io)?;
        r.skip_pad().map_err(io)?;
        let s = String::from_utf8(data).map_err(|_| bad("text column is not UTF-8"))?;
        TextColumn::from_raw_parts(s, ends.into_iter().map(|e| e as usize).collect())
    };
    let qids_col = read_text(nq, h.qid_bytes)?;
    let docids = h.docid_bytes.map(|b| read_text(rows, b)).transpose()?;
    let comments = h.comment_bytes.map(|b| read_text(rows, b)).transpose()?;
    let digest = r.hash.digest();
    let mut stored = [0u8; 8];
    r.inner.read_exact(&mut stored).map_err(io)?;
    if u64::from_le_bytes(stored) != digest {
        return Err(bad("checksum mismatch (the file is corrupt)"));
    }
    let mut extra = [0u8; 1];
    if r.inner
        .read(&mut extra)
        .map_err(|e| DataError::io(path, e))?
        != 0
    {
        return Err(bad("trailing bytes after the checksum"));
    }
    let qids: Vec<String> = qids_col.iter().map(str::to_string).collect();
    let offsets: Vec<usize> = offsets.into_iter().map(|o| o as usize).collect();
    let mut ds = Dataset::new(features, labels, offsets, qids)?;
    if let Some(d) = docids {
        ds = ds.with_docids(d)?;
    }
    if let Some(c) = comments {
        ds = ds.with_comments(c)?;
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
