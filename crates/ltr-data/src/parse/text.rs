//! The file as the two passes read it: whole (a small file, scanned while it is read) or streamed block by block,
//! each block cut into sub-chunks of whole lines for the thread pool.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::line::{scan_chunk, ChunkStats};
use super::{MIN_SUB_CHUNK, SUB_CHUNK};
use crate::error::{DataError, Result};

/// A file's text as the two passes read it. A file that fits in one block is read once, in sub-chunks of whole lines
/// that pass one scans on the thread pool while the next is read, and pass two parses the same bytes (a small
/// file's second read, and the zeroing of its buffer, cost as much as half its parse; reading it whole before
/// scanning left one core idle for the read). A larger file is streamed block by block on each pass, so memory
/// stays one block whatever the file's size.
pub(super) struct Text<'p> {
    pub(super) path: &'p Path,
    /// The whole file in sub-chunks (a leading BOM removed), when it fits in one block.
    chunks: Option<Vec<Vec<u8>>>,
    /// Pass one's statistics of `chunks`, until pass one takes them.
    scanned: Option<Vec<ChunkStats>>,
    block_size: usize,
}

impl<'p> Text<'p> {
    /// Open `path`, reading (and scanning) it whole when it is at most `block_size` bytes.
    pub(super) fn open(path: &'p Path, block_size: usize) -> Result<Self> {
        let file_len = std::fs::metadata(path)
            .map_err(|e| DataError::io(path, e))?
            .len();
        let block_size = block_size.max(1024);
        let (chunks, scanned) = if file_len <= block_size as u64 {
            let (chunks, stats) = read_scanned(path, file_len as usize)?;
            (Some(chunks), Some(stats))
        } else {
            (None, None)
        };
        Ok(Self {
            path,
            chunks,
            scanned,
            block_size,
        })
    }

    /// Pass one's statistics, when the file was scanned as it was read.
    pub(super) fn take_scanned_stats(&mut self) -> Option<Vec<ChunkStats>> {
        self.scanned.take()
    }

    /// Call `f` on consecutive groups of sub-chunks of whole lines (a trailing line without newline included; a
    /// leading BOM removed): the whole file's, or each block's.
    pub(super) fn for_each_chunk_group(
        &self,
        mut f: impl FnMut(&[&[u8]]) -> Result<()>,
    ) -> Result<()> {
        match &self.chunks {
            Some(chunks) => {
                let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
                if chunks.is_empty() {
                    Ok(())
                } else {
                    f(&chunks)
                }
            }
            None => stream_blocks(self.path, self.block_size, |block| {
                f(&split_sub_chunks(block))
            }),
        }
    }
}

/// Read the file at `path` (about `len` bytes) in sub-chunks of whole lines, each handed to pass one
/// ([`scan_chunk`]) on the thread pool as soon as it is read; the chunks and their statistics in file order.
fn read_scanned(path: &Path, len: usize) -> Result<(Vec<Vec<u8>>, Vec<ChunkStats>)> {
    let size = sub_chunk_size(len);
    let mut file = File::open(path).map_err(|e| DataError::io(path, e))?;
    let (sender, receiver) = std::sync::mpsc::channel();
    rayon::scope(|scope| -> Result<()> {
        let mut carry: Vec<u8> = Vec::new();
        let mut first = true;
        for k in 0.. {
            let mut buf = std::mem::take(&mut carry);
            let eof = fill_to_a_line(path, &mut file, &mut buf, size)?;
            if first {
                if buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
                    buf.drain(..3);
                }
                first = false;
            }
            if !eof {
                let cut = memchr::memrchr(b'\n', &buf).map_or(buf.len(), |p| p + 1);
                carry = buf[cut..].to_vec();
                buf.truncate(cut);
            }
            if !buf.is_empty() {
                let sender = sender.clone();
                scope.spawn(move |_| {
                    let stats = scan_chunk(&buf);
                    // The receiver outlives the scope.
                    let _ = sender.send((k, buf, stats));
                });
            }
            if eof {
                break;
            }
        }
        Ok(())
    })?;
    drop(sender);
    let mut parts: Vec<(usize, Vec<u8>, ChunkStats)> = receiver.into_iter().collect();
    parts.sort_unstable_by_key(|p| p.0);
    Ok(parts
        .into_iter()
        .map(|(_, chunk, stats)| (chunk, stats))
        .unzip())
}

/// Read into `buf` until it holds `size` bytes, then on until it holds a newline; true at the end of the file.
/// `read_to_end` through `take` reads into the spare capacity without zeroing it first.
fn fill_to_a_line(path: &Path, file: &mut File, buf: &mut Vec<u8>, size: usize) -> Result<bool> {
    loop {
        let want = size.max(buf.len() + 1024) - buf.len();
        let got = file
            .take(want as u64)
            .read_to_end(buf)
            .map_err(|e| DataError::io(path, e))?;
        if got < want {
            return Ok(true);
        }
        if memchr::memrchr(b'\n', buf).is_some() {
            return Ok(false);
        }
    }
}

/// Call `f` on consecutive blocks of whole lines of the file at `path`, read `block_size` bytes at a time.
///
/// The next block is read on another thread while `f` parses this one: the read is a copy out of the page cache
/// that no task of the pool shares, so reading in turn left a core idle for each block of each pass (a tenth of
/// the CPU time on the 1 GB file). Two blocks are held at once.
fn stream_blocks(
    path: &Path,
    block_size: usize,
    mut f: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut file = File::open(path).map_err(|e| DataError::io(path, e))?;
    let file_len = file.metadata().map_err(|e| DataError::io(path, e))?.len();
    // Never allocate more than the file needs (small files are common in tests and fuzzing).
    let block_size = block_size.max(1024).min(file_len as usize + 1);
    let spare = Vec::with_capacity(block_size + 4096);
    let mut next = read_block(path, &mut file, spare, &[], block_size, true)?;
    let mut spare = Vec::with_capacity(block_size + 4096);
    loop {
        let (block, cut, eof) = next;
        if eof {
            return if cut > 0 { f(&block[..cut]) } else { Ok(()) };
        }
        let (read, parsed) = std::thread::scope(|scope| {
            let file = &mut file;
            let carry = &block[cut..];
            let reader =
                scope.spawn(move || read_block(path, file, spare, carry, block_size, false));
            let parsed = if cut > 0 { f(&block[..cut]) } else { Ok(()) };
            let read = reader
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, parsed)
        });
        parsed?;
        next = read?;
        spare = block;
    }
}

/// The next block of `file`: `carry` (the previous block's unfinished last line) and then at least `block_size`
/// bytes in all, on to the end of a line, in `buf`; how many of its bytes are whole lines; whether the file ended.
/// The first block loses a leading UTF-8 BOM.
fn read_block(
    path: &Path,
    file: &mut File,
    mut buf: Vec<u8>,
    carry: &[u8],
    block_size: usize,
    first: bool,
) -> Result<(Vec<u8>, usize, bool)> {
    buf.clear();
    buf.extend_from_slice(carry);
    let eof = fill_to_a_line(path, file, &mut buf, block_size)?;
    if first && buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
        buf.drain(..3);
    }
    let cut = if eof {
        buf.len()
    } else {
        memchr::memrchr(b'\n', &buf).map_or(buf.len(), |p| p + 1)
    };
    Ok((buf, cut, eof))
}

/// The size of the sub-chunks `len` bytes are cut into: about four per thread, between [`MIN_SUB_CHUNK`] and
/// [`SUB_CHUNK`].
fn sub_chunk_size(len: usize) -> usize {
    (len / (4 * rayon::current_num_threads())).clamp(MIN_SUB_CHUNK, SUB_CHUNK)
}

/// Split a block into sub-chunks, each ending after a newline (or at the block end): about four per thread, between
/// [`MIN_SUB_CHUNK`] and [`SUB_CHUNK`] bytes, so that a file of a few megabytes keeps every core busy too (with
/// 1 MB chunks a 2.3 MB file was three tasks, parsed at 0.92 cores of two). Both passes cut a block the same way.
// pub for the tests in tests/unit/parse.rs; not API.
#[doc(hidden)]
pub fn split_sub_chunks(block: &[u8]) -> Vec<&[u8]> {
    let size = sub_chunk_size(block.len());
    let mut out = Vec::with_capacity(block.len() / size + 1);
    let mut start = 0;
    while start < block.len() {
        let target = (start + size).min(block.len());
        let end = if target == block.len() {
            target
        } else {
            memchr::memchr(b'\n', &block[target..]).map_or(block.len(), |p| target + p + 1)
        };
        out.push(&block[start..end]);
        start = end;
    }
    out
}
