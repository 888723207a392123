//! Histograms of one leaf: per (feature, bin), the fixed-point sums of its documents' gradients and hessians
//! ([`Sums`]), built in partial copies (lanes) and blocks of documents, added over the ranks, and subtracted from the
//! parent's for the larger child. Integer sums: every way of building them gives the same histogram, bit for bit.

use ltr_core::{Allreduce, Result};
use rayon::prelude::*;

use crate::bins::{BinColumn, Binned};

/// Fixed-point sums of one histogram bin (or of a leaf): gradients and hessians in units of the round's
/// [`Scale`](crate::Scale), and the number of documents. Exact, so bins add and subtract without rounding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sums {
    /// Σ gradient · scale.
    pub g: i64,
    /// Σ hessian · scale.
    pub h: i64,
    /// Number of documents.
    pub n: i64,
}

impl Sums {
    #[inline(always)]
    pub(crate) fn add(&mut self, v: &[i64; 2]) {
        self.g += v[0];
        self.h += v[1];
        self.n += 1;
    }
    #[inline]
    pub(crate) fn plus(self, o: Sums) -> Sums {
        Sums {
            g: self.g + o.g,
            h: self.h + o.h,
            n: self.n + o.n,
        }
    }
    #[inline]
    pub(crate) fn minus(self, o: Sums) -> Sums {
        Sums {
            g: self.g - o.g,
            h: self.h - o.h,
            n: self.n - o.n,
        }
    }
}

/// Work (documents × features, or bins × features) below which a leaf's histograms, subtraction and split search
/// run on the calling thread: handing so little to the thread pool costs more than it saves.
const PARALLEL_FROM_CELLS: usize = 4096;

/// `f` of every feature position `0..n`, in order: on the calling thread when `work` is below
/// [`PARALLEL_FROM_CELLS`], else in a few large parallel pieces (two a thread), so that a small leaf pays for a few
/// task hand-overs, not one per feature.
pub(crate) fn map_features<R: Send>(
    n: usize,
    work: usize,
    f: impl Fn(usize) -> R + Sync + Send,
) -> Vec<R> {
    if work < PARALLEL_FROM_CELLS {
        return (0..n).map(f).collect();
    }
    let pieces = 2 * rayon::current_num_threads().max(1);
    (0..n)
        .into_par_iter()
        .with_min_len(n.div_ceil(pieces).max(1))
        .map(f)
        .collect()
}

/// Histogram of one feature (`bins`, one per document, `u8` or `u16`) over `docs`; `gh` holds every document's
/// fixed-point gradient and hessian ([`crate::Scale::quantise`]).
pub fn histogram<B: Copy + Into<usize>>(
    bins: &[B],
    n_bins: usize,
    docs: &[u32],
    gh: &[[i64; 2]],
) -> Vec<Sums> {
    let mut hist = vec![Sums::default(); n_bins];
    for &i in docs {
        let i = i as usize;
        hist[bins[i].into()].add(&gh[i]);
    }
    hist
}

/// `parent − child`, bin by bin (the sibling's histogram), exactly.
pub fn subtract(parent: &[Sums], child: &[Sums]) -> Vec<Sums> {
    parent.iter().zip(child).map(|(p, c)| p.minus(*c)).collect()
}

/// Take `docs` (`leaf_gh` in the same order) out of `hist`, kept feature `k`'s histogram over a leaf that holds
/// them: its sibling's histogram, exactly, as [`subtract`] of theirs, at a cost that follows the documents.
pub(crate) fn subtract_documents(
    data: &Binned,
    k: usize,
    docs: &[u32],
    leaf_gh: &[[i64; 2]],
    hist: &mut [Sums],
) {
    let mut take = |bin: usize, v: &[i64; 2]| {
        let cell = &mut hist[bin];
        cell.g -= v[0];
        cell.h -= v[1];
        cell.n -= 1;
    };
    match &data.bins[k] {
        BinColumn::Narrow(c) => {
            for (&i, v) in docs.iter().zip(leaf_gh) {
                take(c[i as usize] as usize, v);
            }
        }
        BinColumn::Wide(c) => {
            for (&i, v) in docs.iter().zip(leaf_gh) {
                take(c[i as usize] as usize, v);
            }
        }
    }
}
/// Independent partial histograms per feature: document `j` of a leaf (in the leaf's order) goes to copy `j % LANES`,
/// so consecutive documents in the same bin do not wait on each other's read-modify-write; the copies are added at
/// the end (integer sums: in any order, the same).
const LANES: usize = 4;

/// Leaves of fewer documents build one-byte histograms in one lane of their own size.
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub const LANE_FROM_DOCS: usize = 2048;

/// Leaves of at least this many documents build their histograms block by block ([`blocked_histograms`]).
const BLOCKED_FROM_DOCS: usize = 32_768;

/// Documents a block: their fixed-point gradients (16 bytes each, 64 KiB) stay in the second-level cache while each
/// feature of a piece reads them.
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub const DOC_BLOCK: usize = 4096;

/// Features a piece of [`blocked_histograms`]: their partial histograms (four lanes of 256 cells of 24 bytes, 24 KiB
/// a one-byte feature) stay in the second-level cache from one block to the next.
const FEATURES_A_PIECE: usize = 8;

/// Where each feature's bins sit in a leaf's flat histograms: feature position `p`'s cells are
/// `cells[at[p]..at[p + 1]]`, `at[0] = 0`, one cell a bin.
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub fn offsets(data: &Binned, feats: &[usize]) -> Vec<usize> {
    let mut at = Vec::with_capacity(feats.len() + 1);
    at.push(0);
    for &k in feats {
        at.push(at.last().copied().unwrap_or(0) + data.n_bins(k));
    }
    at
}

/// A leaf's flat histograms cut into one mutable slice a feature (positions of [`offsets`]).
pub(crate) fn per_feature<'a>(cells: &'a mut [Sums], at: &[usize]) -> Vec<&'a mut [Sums]> {
    let mut out = Vec::with_capacity(at.len().saturating_sub(1));
    let mut rest = cells;
    for w in at.windows(2) {
        let (one, tail) = std::mem::take(&mut rest).split_at_mut(w[1] - w[0]);
        out.push(one);
        rest = tail;
    }
    out
}

/// Buffers for leaves' flat histograms, kept from one leaf (and one tree) to the next: a tree takes one for the
/// root and one for each split's smaller child (the larger child's are its parent's, subtracted in place), and
/// gives back those of leaves that will not split.
#[derive(Debug, Default)]
pub(crate) struct HistPool {
    free: Vec<Vec<Sums>>,
}

impl HistPool {
    /// A buffer of `len` cells, whatever they hold: every histogram writes each of its cells.
    pub(crate) fn take(&mut self, len: usize) -> Vec<Sums> {
        let mut cells = self.free.pop().unwrap_or_default();
        cells.resize(len, Sums::default());
        cells
    }

    /// `cells` back into the pool.
    pub(crate) fn give(&mut self, cells: Vec<Sums>) {
        self.free.push(cells);
    }
}

/// Whether `docs` (ascending) are consecutive documents, at least one.
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub fn contiguous(docs: &[u32]) -> bool {
    match (docs.first(), docs.last()) {
        (Some(&f), Some(&l)) => (l - f) as usize + 1 == docs.len(),
        _ => false,
    }
}

/// The fixed-point gradients and hessians of `docs`, in their order, and whether `docs` are consecutive documents.
/// A large leaf's are gathered on the thread pool (serial, the root's copy at 1 M documents held one core for
/// about 2 ms a tree while the other idled).
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub fn gather(docs: &[u32], gh: &[[i64; 2]]) -> (Vec<[i64; 2]>, bool) {
    let leaf_gh: Vec<[i64; 2]> = if docs.len() >= BLOCKED_FROM_DOCS {
        docs.par_iter().map(|&i| gh[i as usize]).collect()
    } else {
        docs.iter().map(|&i| gh[i as usize]).collect()
    };
    (leaf_gh, contiguous(docs))
}

/// Whether [`histograms`] builds the histograms of a leaf of `docs` feature by feature on this rank alone (neither
/// from the rows, nor block by block, nor added over ranks): then [`feature_histogram`] builds the same histogram
/// of one feature, which can be searched as soon as it is built.
pub(crate) fn by_feature(
    rows: Option<&Rows>,
    feats: &[usize],
    docs: &[u32],
    contiguous: bool,
    comm: &dyn Allreduce,
) -> bool {
    comm.size() == 1
        && docs.len() < BLOCKED_FROM_DOCS
        && (contiguous || !rows.is_some_and(|r| r.serves(feats, docs.len())))
}

/// The histogram of kept feature `k` over a leaf of `docs` (`leaf_gh` in the same order, `contiguous` as
/// [`gather`] says), written into `out` (its `n_bins(k)` cells).
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub fn feature_histogram(
    data: &Binned,
    k: usize,
    docs: &[u32],
    contiguous: bool,
    leaf_gh: &[[i64; 2]],
    out: &mut [Sums],
) {
    match &data.bins[k] {
        // A small leaf: four lanes of 256 cells would cost more to clear than its documents to add.
        BinColumn::Narrow(c) if docs.len() < LANE_FROM_DOCS => {
            out.fill(Sums::default());
            for (&i, v) in docs.iter().zip(leaf_gh) {
                out[c[i as usize] as usize].add(v);
            }
        }
        BinColumn::Narrow(c) => LANES_SCRATCH.with_borrow_mut(|lanes| {
            *lanes = [[Sums::default(); 256]; LANES];
            add_narrow(lanes, c, docs, contiguous, leaf_gh);
            fold_narrow(lanes, out);
        }),
        BinColumn::Wide(c) => {
            let nb = out.len();
            let mut lanes = vec![Sums::default(); LANES * nb];
            add_lanes(&mut lanes, nb, c, docs, contiguous, leaf_gh);
            fold_wide(&lanes, out);
        }
    }
}

thread_local! {
    /// [`feature_histogram`]'s four lanes of a one-byte column, kept from one call to the next on each thread.
    static LANES_SCRATCH: std::cell::RefCell<[[Sums; 256]; LANES]> =
        const { std::cell::RefCell::new([[Sums { g: 0, h: 0, n: 0 }; 256]; LANES]) };
}

/// Histograms of `feats` over this rank's `docs`, in parallel over features, added over the ranks of `comm`, into
/// the flat `out` (positions `at` of [`offsets`]). The documents' fixed-point gradients and hessians are gathered
/// once into a contiguous array; each feature then adds them into [`LANES`] partial histograms.
#[allow(clippy::too_many_arguments)]
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub fn histograms(
    data: &Binned,
    rows: Option<&Rows>,
    feats: &[usize],
    at: &[usize],
    docs: &[u32],
    gh: &[[i64; 2]],
    comm: &dyn Allreduce,
    out: &mut [Sums],
) -> Result<()> {
    let (leaf_gh, contiguous) = gather(docs, gh);
    let rows = rows.filter(|r| !contiguous && r.serves(feats, docs.len()));
    let built = if let Some(rows) = rows {
        Some(rows.histograms(data, feats, docs, &leaf_gh))
    } else if docs.len() >= BLOCKED_FROM_DOCS {
        Some(blocked_histograms(data, feats, docs, contiguous, &leaf_gh))
    } else {
        None
    };
    let slices = per_feature(out, at);
    match built {
        Some(hist) => {
            for (o, h) in slices.into_iter().zip(hist) {
                o.copy_from_slice(&h);
            }
        }
        None => {
            map_items(slices, docs.len() * feats.len(), |p, o| {
                feature_histogram(data, feats[p], docs, contiguous, &leaf_gh, o)
            });
        }
    }
    reduce_histograms(out, comm)
}

/// `f(p, item)` of every item, in order: on the calling thread when `work` is below [`PARALLEL_FROM_CELLS`], else
/// in a few large parallel pieces (two a thread), as [`map_features`].
pub(crate) fn map_items<T: Send, R: Send>(
    items: Vec<T>,
    work: usize,
    f: impl Fn(usize, T) -> R + Sync + Send,
) -> Vec<R> {
    if work < PARALLEL_FROM_CELLS {
        return items
            .into_iter()
            .enumerate()
            .map(|(p, t)| f(p, t))
            .collect();
    }
    let pieces = 2 * rayon::current_num_threads().max(1);
    let n = items.len();
    items
        .into_par_iter()
        .enumerate()
        .with_min_len(n.div_ceil(pieces).max(1))
        .map(|(p, t)| f(p, t))
        .collect()
}

/// The histograms of a large leaf, whose gradients (16 bytes a document) outgrow the caches: feature by feature,
/// every feature would read them all from memory again (136 features of 3.8 M documents: 8 GB for one histogram
/// pass). Instead each parallel piece of [`FEATURES_A_PIECE`] features walks the documents in blocks of
/// [`DOC_BLOCK`] and adds each block to all its features while the block is in cache. The sums are integers, so the
/// histograms are those of [`feature_histogram`], bit for bit.
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub fn blocked_histograms(
    data: &Binned,
    feats: &[usize],
    docs: &[u32],
    contiguous: bool,
    gh: &[[i64; 2]],
) -> Vec<Vec<Sums>> {
    let piece = |fs: &[usize]| -> Vec<Vec<Sums>> {
        let mut partial: Vec<Lanes> = fs
            .iter()
            .map(|&k| match &data.bins[k] {
                BinColumn::Narrow(_) => Lanes::Narrow(vec![[Sums::default(); 256]; LANES]),
                BinColumn::Wide(_) => Lanes::Wide(vec![Sums::default(); LANES * data.n_bins(k)]),
            })
            .collect();
        for (block, block_gh) in docs.chunks(DOC_BLOCK).zip(gh.chunks(DOC_BLOCK)) {
            for (&k, lanes) in fs.iter().zip(&mut partial) {
                match (&data.bins[k], lanes) {
                    (BinColumn::Narrow(c), Lanes::Narrow(l)) => {
                        add_narrow(l, c, block, contiguous, block_gh)
                    }
                    (BinColumn::Wide(c), Lanes::Wide(l)) => {
                        add_lanes(l, data.n_bins(k), c, block, contiguous, block_gh)
                    }
                    _ => unreachable!("lanes made for the column's width"),
                }
            }
        }
        fs.iter()
            .zip(&partial)
            .map(|(&k, lanes)| lanes.fold(data.n_bins(k)))
            .collect()
    };
    feats
        .par_chunks(FEATURES_A_PIECE)
        .flat_map_iter(piece)
        .collect()
}

/// One feature's partial histograms while a leaf's documents are added block by block.
enum Lanes {
    /// A one-byte column: [`LANES`] lanes of 256 cells.
    Narrow(Vec<[Sums; 256]>),
    /// A two-byte column: [`LANES`] lanes of the feature's bin count, one after another.
    Wide(Vec<Sums>),
}

impl Lanes {
    /// The histogram: the lanes added bin by bin.
    fn fold(&self, nb: usize) -> Vec<Sums> {
        let mut out = vec![Sums::default(); nb];
        match self {
            Lanes::Narrow(l) => fold_narrow(l, &mut out),
            Lanes::Wide(l) => fold_wide(l, &mut out),
        }
        out
    }
}

/// Add every rank's histograms, bin by bin (one integer Allreduce of all of them; nothing to do on one rank).
pub(crate) fn reduce_histograms(hist: &mut [Sums], comm: &dyn Allreduce) -> Result<()> {
    if comm.size() == 1 {
        return Ok(());
    }
    let mut flat: Vec<i64> = hist.iter().flat_map(|c| [c.g, c.h, c.n]).collect();
    comm.sum_i64(&mut flat)?;
    for (c, v) in hist.iter_mut().zip(flat.chunks_exact(3)) {
        *c = Sums {
            g: v[0],
            h: v[1],
            n: v[2],
        };
    }
    Ok(())
}

/// The four lanes of a one-byte column added bin by bin into `out` (its bins).
fn fold_narrow(l: &[[Sums; 256]], out: &mut [Sums]) {
    for (b, o) in out.iter_mut().enumerate() {
        *o = l[0][b].plus(l[1][b]).plus(l[2][b].plus(l[3][b]));
    }
}

/// [`LANES`] lanes of `out.len()` cells each, one after another in `l`, added bin by bin into `out`.
fn fold_wide(l: &[Sums], out: &mut [Sums]) {
    let nb = out.len();
    for (b, o) in out.iter_mut().enumerate() {
        *o = (1..LANES).fold(l[b], |acc, k| acc.plus(l[k * nb + b]));
    }
}

/// Add `docs` to [`LANES`] partial histograms of `nb` cells each, one after another in `lanes`.
fn add_lanes<B: Copy + Into<usize>>(
    lanes: &mut [Sums],
    nb: usize,
    column: &[B],
    docs: &[u32],
    contiguous: bool,
    gh: &[[i64; 2]],
) {
    if contiguous {
        // A leaf of consecutive documents (the root, and any leaf that kept a run) reads its bins directly.
        let bins = &column[docs[0] as usize..docs[0] as usize + docs.len()];
        for (j, (&b, v)) in bins.iter().zip(gh).enumerate() {
            lanes[(j % LANES) * nb + b.into()].add(v);
        }
    } else {
        for (j, (&i, v)) in docs.iter().zip(gh).enumerate() {
            lanes[(j % LANES) * nb + column[i as usize].into()].add(v);
        }
    }
}

/// Add `docs` to the four 256-cell lanes of a one-byte column, the common case: a bin (a `u8`) indexes a lane
/// without a bounds check, and documents come four at a time, one to each lane, so no lane index is computed.
fn add_narrow(
    lanes: &mut [[Sums; 256]],
    column: &[u8],
    docs: &[u32],
    contiguous: bool,
    gh: &[[i64; 2]],
) {
    const _: () = assert!(LANES == 4);
    let [l0, l1, l2, l3] = lanes else {
        unreachable!("four lanes")
    };
    let gh4 = gh.chunks_exact(4);
    let gh_rest = gh4.remainder();
    if contiguous {
        let bins = &column[docs[0] as usize..docs[0] as usize + docs.len()];
        let b4 = bins.chunks_exact(4);
        let b_rest = b4.remainder();
        for (b, v) in b4.zip(gh4) {
            l0[b[0] as usize].add(&v[0]);
            l1[b[1] as usize].add(&v[1]);
            l2[b[2] as usize].add(&v[2]);
            l3[b[3] as usize].add(&v[3]);
        }
        for (&b, v) in b_rest.iter().zip(gh_rest) {
            l0[b as usize].add(v);
        }
    } else {
        let d4 = docs.chunks_exact(4);
        let d_rest = d4.remainder();
        for (d, v) in d4.zip(gh4) {
            l0[column[d[0] as usize] as usize].add(&v[0]);
            l1[column[d[1] as usize] as usize].add(&v[1]);
            l2[column[d[2] as usize] as usize].add(&v[2]);
            l3[column[d[3] as usize] as usize].add(&v[3]);
        }
        for (&i, v) in d_rest.iter().zip(gh_rest) {
            l0[column[i as usize] as usize].add(v);
        }
    }
}

/// Documents (of a scattered leaf) from which its histograms are built from [`Rows`].
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub const ROWS_FROM_DOCS: usize = 4096;

/// Bin cells (documents × features) from which the training data keeps the row-major copy [`Rows`] (33.5 M: 247 k
/// documents of 136 features): below it the columns stay in the caches and the column passes were as fast
/// (195 k documents), above it the rows took a sixth off the histograms (359 k; BENCHMARKS.md, issue 51's profile).
pub const ROWS_FROM_CELLS: usize = 1 << 25;

/// A row-major copy of one-byte bins: document `i`'s bins of every kept feature, in `bytes[i · nf..(i + 1) · nf]`.
///
/// A scattered leaf's histograms read each of its documents' bins from one row instead of one byte from each
/// column: on data whose columns outgrow the caches, a leaf holding one document in 64 reads every cache line of
/// every column (136 features of 3.8 M documents: 513 MB for each leaf's histograms), where its rows are
/// `documents × 136` bytes. Each parallel piece of the leaf adds its documents to its own histograms of every
/// feature (one cell a feature a document: consecutive documents touch cells 256 apart, so no lanes are needed);
/// the pieces' integer sums are then added, which gives the column passes' histograms bit for bit.
// pub for the tests in tests/unit/hist.rs; not API.
#[doc(hidden)]
pub struct Rows {
    nf: usize,
    bytes: Vec<u8>,
}

/// A [`Sums`] cell of [`Rows::histograms`], 32 bytes aligned to 32: its histograms of every feature (136 × 256
/// cells, 1.1 MB a parallel piece) are read at random, and a 24-byte cell straddles two cache lines three times
/// in eight, each such add missing the first-level cache twice.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct RowCell {
    g: i64,
    h: i64,
    n: i64,
}

impl RowCell {
    #[inline(always)]
    fn add(&mut self, v: [i64; 2]) {
        self.g += v[0];
        self.h += v[1];
        self.n += 1;
    }
    #[inline]
    fn sums(self) -> Sums {
        Sums {
            g: self.g,
            h: self.h,
            n: self.n,
        }
    }
}

impl Rows {
    /// The rows of `data` when it is large enough to gain from them ([`ROWS_FROM_CELLS`]) and every column is one
    /// byte a document; `None` otherwise.
    pub(crate) fn of(data: &Binned, n_docs: usize) -> Option<Self> {
        if n_docs.saturating_mul(data.bins.len()) < ROWS_FROM_CELLS {
            return None;
        }
        Self::build(data, n_docs)
    }

    /// The rows of `data` (`n_docs` documents) whatever its size; `None` unless every column is one byte a
    /// document.
    pub fn build(data: &Binned, n_docs: usize) -> Option<Self> {
        let nf = data.bins.len();
        let narrow: Option<Vec<&[u8]>> = data
            .bins
            .iter()
            .map(|c| match c {
                BinColumn::Narrow(c) => Some(&c[..]),
                BinColumn::Wide(_) => None,
            })
            .collect();
        let columns = narrow?;
        if nf == 0 {
            return None;
        }
        let mut bytes = vec![0u8; n_docs * nf];
        // Blocks of rows in parallel, each read column by column (a block of a column is contiguous).
        const BLOCK: usize = 1024;
        bytes
            .par_chunks_mut(BLOCK * nf)
            .enumerate()
            .for_each(|(b, out)| {
                let first = b * BLOCK;
                let len = out.len() / nf;
                for (f, c) in columns.iter().enumerate() {
                    for (r, &v) in c[first..first + len].iter().enumerate() {
                        out[r * nf + f] = v;
                    }
                }
            });
        Some(Self { nf, bytes })
    }

    /// Whether a scattered leaf of `docs` documents over `feats` builds its histograms from the rows: a leaf
    /// large enough to pay for clearing a histogram of every feature, with most features kept (the rows hold
    /// them all).
    pub fn serves(&self, feats: &[usize], docs: usize) -> bool {
        docs >= ROWS_FROM_DOCS && 2 * feats.len() >= self.nf
    }

    /// The histograms of `feats` over `docs` (`gh` in the same order), from the rows.
    pub fn histograms(
        &self,
        data: &Binned,
        feats: &[usize],
        docs: &[u32],
        gh: &[[i64; 2]],
    ) -> Vec<Vec<Sums>> {
        let nf = self.nf;
        let pieces = rayon::current_num_threads().max(1);
        let per = docs.len().div_ceil(pieces).max(ROWS_FROM_DOCS / 2);
        let partial: Vec<Vec<[RowCell; 256]>> = docs
            .par_chunks(per)
            .zip(gh.par_chunks(per))
            .map(|(docs, gh)| {
                let mut cells = vec![[RowCell::default(); 256]; nf];
                for (&i, &v) in docs.iter().zip(gh) {
                    let row = &self.bytes[i as usize * nf..(i as usize + 1) * nf];
                    for (cell, &b) in cells.iter_mut().zip(row) {
                        cell[b as usize].add(v);
                    }
                }
                cells
            })
            .collect();
        map_features(feats.len(), docs.len() * feats.len(), |p| {
            let k = feats[p];
            (0..data.n_bins(k))
                .map(|b| {
                    partial
                        .iter()
                        .fold(Sums::default(), |acc, cells| acc.plus(cells[k][b].sums()))
                })
                .collect()
        })
    }
}
