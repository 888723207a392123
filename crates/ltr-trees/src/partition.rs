//! Splitting a leaf's documents: the test a split sends a document left by ([`Route`]), and the stable partition of
//! the leaf's documents by it, in parallel pieces for a large leaf.

use rayon::prelude::*;

use crate::bins::Binned;

/// The test "goes left" of a split of kept feature `k`: value bins `0..=split_bin`, and the missing bin when it
/// exists and `missing_left` (the missing bin is above every value bin, so `bin <= split_bin` never holds it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Route {
    split_bin: usize,
    missing_bin: Option<usize>,
}

impl Route {
    pub(crate) fn new(data: &Binned, k: usize, split_bin: usize, missing_left: bool) -> Self {
        let missing_bin = (data.has_missing[k] && missing_left).then(|| data.bounds[k].len() + 1);
        Self {
            split_bin,
            missing_bin,
        }
    }
    #[inline]
    pub(crate) fn goes_left(self, bin: usize) -> bool {
        bin <= self.split_bin || Some(bin) == self.missing_bin
    }
}

/// Leaves of at least this many documents are partitioned in parallel pieces ([`partition`]).
const PARTITION_PIECE: usize = 1 << 15;

/// Stable partition of `docs` by `route` on `column`: the left documents stay in front in their order, the right
/// ones (collected in `scratch`) follow in theirs. Returns the number of left documents. A large leaf is cut into
/// pieces on the thread pool: each piece sorts its documents into its window of `scratch` (left ones from the
/// front, right ones from the back), then each piece's two runs are copied to where the whole partition puts them.
/// The order is the one stable partition, whatever the pieces. (Serial, the 30 splits of a tree over 1 M documents
/// held one core for 20 ms while the other idled.)
pub(crate) fn partition<B: Copy + Into<usize> + Sync>(
    column: &[B],
    route: Route,
    docs: &mut [u32],
    scratch: &mut Vec<u32>,
) -> usize {
    let threads = rayon::current_num_threads();
    if threads > 1 && docs.len() >= 2 * PARTITION_PIECE {
        return partition_pieces(column, route, docs, scratch, threads);
    }
    scratch.clear();
    let mut w = 0;
    for r in 0..docs.len() {
        let i = docs[r];
        if route.goes_left(column[i as usize].into()) {
            docs[w] = i;
            w += 1;
        } else {
            scratch.push(i);
        }
    }
    docs[w..].copy_from_slice(scratch);
    w
}

/// [`partition`] of a large leaf in pieces on the thread pool (about four a thread).
fn partition_pieces<B: Copy + Into<usize> + Sync>(
    column: &[B],
    route: Route,
    docs: &mut [u32],
    scratch: &mut Vec<u32>,
    threads: usize,
) -> usize {
    let n = docs.len();
    let piece = n.div_ceil(4 * threads).max(PARTITION_PIECE);
    if scratch.len() < n {
        // Zeroed on the pool too: a serial fill of the root's window was a few milliseconds a tree.
        scratch.clear();
        scratch.par_extend(rayon::iter::repeat_n(0, n));
    }
    let window = &mut scratch[..n];
    let lefts: Vec<usize> = docs
        .par_chunks(piece)
        .zip(window.par_chunks_mut(piece))
        .map(|(d, s)| {
            let (mut w, mut r) = (0, s.len());
            for &i in d {
                if route.goes_left(column[i as usize].into()) {
                    s[w] = i;
                    w += 1;
                } else {
                    r -= 1;
                    s[r] = i;
                }
            }
            w
        })
        .collect();
    let left: usize = lefts.iter().sum();
    // Each piece's left run goes after the earlier pieces' left runs, its right run (held reversed) after theirs.
    let (mut left_rest, mut right_rest) = docs.split_at_mut(left);
    let mut moves = Vec::with_capacity(lefts.len());
    for (s, &l) in window.chunks(piece).zip(&lefts) {
        let (to_left, rest) = std::mem::take(&mut left_rest).split_at_mut(l);
        left_rest = rest;
        let (to_right, rest) = std::mem::take(&mut right_rest).split_at_mut(s.len() - l);
        right_rest = rest;
        moves.push((s, to_left, to_right));
    }
    moves.into_par_iter().for_each(|(s, to_left, to_right)| {
        let (l, r) = s.split_at(to_left.len());
        to_left.copy_from_slice(l);
        for (o, &i) in to_right.iter_mut().zip(r.iter().rev()) {
            *o = i;
        }
    });
    left
}
