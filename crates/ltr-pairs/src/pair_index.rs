//! Every different-label pair of a dataset addressable by a number, without storing the pairs, and a seeded
//! permutation of those numbers computed on the fly: a random pair order in O(documents) memory.
//!
//! At web scale the pairs outnumber the documents fifty to one (3.77 M MSLR-style documents have about 170 M
//! pairs); stored as records they take three times the data. [`PairIndex`] keeps each query's rows sorted by
//! grade (4 bytes a document) and, per grade group, how many pairs precede it; pair number k is then a binary
//! search over queries and a division. [`PairPermutation`] visits 0..n in a pseudo-random order.

use ltr_data::Dataset;
use rayon::prelude::*;

use crate::levels::Levels;

/// One run of equal-grade rows of a query, in the query's grade-descending order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Group {
    /// Position of the group's first row in `PairIndex::rows`.
    start: usize,
    /// Rows in the group.
    len: u32,
    /// Rows of the query after the group (all of lower grade): each row of the group pairs with each of them.
    below: u32,
    /// Pairs of the query numbered before this group's pairs.
    pairs_before: u64,
}

/// The different-label pairs of a dataset, numbered 0..[`len`](PairIndex::len) by query, then by the preferred
/// document's grade group (highest first), then the preferred row, then the other row — without storing them.
#[derive(Debug, Clone, PartialEq)]
pub struct PairIndex {
    /// Each query's rows, grade-descending (stable in row order within a grade).
    rows: Vec<u32>,
    /// Query q's pairs are numbered `query_pairs[q]..query_pairs[q + 1]`.
    // pub for the tests in tests/unit/pair_index.rs; not API.
    #[doc(hidden)]
    pub query_pairs: Vec<u64>,
    /// The query of pair number `b << bucket_shift` for every b: a pair's query is found from there by a short
    /// scan (about one query a bucket) instead of a binary search with its unpredictable branches.
    bucket_query: Vec<u32>,
    bucket_shift: u32,
    /// Query q's groups are `groups[query_groups[q]..query_groups[q + 1]]`.
    query_groups: Vec<u32>,
    groups: Vec<Group>,
}

/// A pair as [`PairIndex::pair`] decodes it (global row numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexedPair {
    /// The query.
    pub query: u32,
    /// The preferred (higher-graded) row.
    pub hi: u32,
    /// The other row.
    pub lo: u32,
}

/// Where a pair's two rows sit in [`PairIndex::row_order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairSlot {
    /// The query.
    pub query: u32,
    /// Position of the preferred row.
    pub hi: usize,
    /// Position of the other row.
    pub lo: usize,
}

impl PairIndex {
    /// Index the different-label pairs of `ds` (the pairs of [`crate::PairScheme::AllDifferent`]).
    pub fn new(ds: &Dataset) -> Self {
        let levels = Levels::new(ds);
        // Per query: its rows by grade, and per grade group (start, length, pairs before it).
        type QueryGroups = (Vec<u32>, Vec<(u32, u32, u64)>);
        let per_query: Vec<QueryGroups> = ds
            .par_queries()
            .map(|q| {
                let mut rows: Vec<u32> = q.rows().map(|r| r as u32).collect();
                rows.sort_by_key(|&r| std::cmp::Reverse(levels.of_doc[r as usize]));
                let mut groups = Vec::new();
                let n = rows.len();
                let mut i = 0;
                let mut before = 0u64;
                while i < n {
                    let level = levels.of_doc[rows[i] as usize];
                    let mut j = i + 1;
                    while j < n && levels.of_doc[rows[j] as usize] == level {
                        j += 1;
                    }
                    let len = (j - i) as u32;
                    groups.push((i as u32, len, before));
                    before += len as u64 * (n - j) as u64;
                    i = j;
                }
                (rows, groups)
            })
            .collect();
        let mut index = Self {
            rows: Vec::with_capacity(ds.n_docs()),
            bucket_query: Vec::new(),
            bucket_shift: 0,
            query_pairs: Vec::with_capacity(per_query.len() + 1),
            query_groups: Vec::with_capacity(per_query.len() + 1),
            groups: Vec::new(),
        };
        index.query_pairs.push(0);
        index.query_groups.push(0);
        let mut total = 0u64;
        for (rows, groups) in per_query {
            let base = index.rows.len();
            let n = rows.len() as u32;
            for &(start, len, before) in &groups {
                index.groups.push(Group {
                    start: base + start as usize,
                    len,
                    below: n - start - len,
                    pairs_before: before,
                });
            }
            let last = groups.last().map_or(0, |&(start, len, before)| {
                before + len as u64 * (n - start - len) as u64
            });
            total += last;
            index.rows.extend(rows);
            index.query_pairs.push(total);
            index.query_groups.push(index.groups.len() as u32);
        }
        let nq = index.n_queries().max(1) as u64;
        index.bucket_shift = 64 - (total / nq).leading_zeros();
        let buckets = if total == 0 {
            0
        } else {
            ((total - 1) >> index.bucket_shift) + 1
        };
        let mut q = 0usize;
        for b in 0..buckets {
            let first = b << index.bucket_shift;
            while index.query_pairs[q + 1] <= first {
                q += 1;
            }
            index.bucket_query.push(q as u32);
        }
        index
    }

    /// Number of pairs.
    pub fn len(&self) -> u64 {
        *self.query_pairs.last().expect("starts with 0")
    }

    /// True when there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of queries.
    pub fn n_queries(&self) -> usize {
        self.query_pairs.len() - 1
    }

    /// Number of pairs of query `q`.
    pub fn query_len(&self, q: usize) -> u64 {
        self.query_pairs[q + 1] - self.query_pairs[q]
    }

    /// Pair number `k` (< [`len`](Self::len)).
    #[inline]
    pub fn pair(&self, k: u64) -> IndexedPair {
        let slot = self.locate(k);
        IndexedPair {
            query: slot.query,
            hi: self.rows[slot.hi],
            lo: self.rows[slot.lo],
        }
    }

    /// Where pair number `k`'s rows are in [`row_order`](Self::row_order), without reading them: a loop at scale
    /// locates a batch of pairs, prefetches their entries, then reads them (the row order is larger than the
    /// cache and read at random).
    #[inline]
    pub fn locate(&self, k: u64) -> PairSlot {
        // The query whose numbers hold k (queries without pairs own none and are passed over).
        let mut q = self.bucket_query[(k >> self.bucket_shift) as usize] as usize;
        while self.query_pairs[q + 1] <= k {
            q += 1;
        }
        let rem = k - self.query_pairs[q];
        let groups = &self.groups[self.query_groups[q] as usize..self.query_groups[q + 1] as usize];
        // Few grades per query: a linear scan beats a search.
        let g = groups
            .iter()
            .rev()
            .find(|g| g.pairs_before <= rem && g.below > 0)
            .expect("k < len");
        let r = rem - g.pairs_before;
        let (i, j) = (r / g.below as u64, r % g.below as u64);
        PairSlot {
            query: q as u32,
            hi: g.start + i as usize,
            lo: g.start + g.len as usize + j as usize,
        }
    }

    /// Every query's rows, grade-descending: a [`PairSlot`]'s positions index it.
    pub fn row_order(&self) -> &[u32] {
        &self.rows
    }

    /// Bytes held (what a run at scale pays instead of the pair records).
    pub fn memory_bytes(&self) -> u64 {
        (self.rows.len() * 4
            + self.query_pairs.len() * 8
            + self.query_groups.len() * 4
            + self.bucket_query.len() * 4
            + self.groups.len() * std::mem::size_of::<Group>()) as u64
    }
}

/// A seeded pseudo-random permutation of 0..n computed one number at a time: a keyed bijection of the b-bit
/// integers, b the fewest bits that hold n − 1, made of steps that are each invertible modulo 2^b (adding a key,
/// multiplying by an odd key, xor with the value shifted right), with cycle walking (a value ≥ n is mapped again
/// until it falls below n). A bijection, so every number is visited exactly once; the domain is under 2n, so a
/// step costs under two mappings on average. The order only has to look random to the perceptron (no query
/// structure), not to an adversary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairPermutation {
    n: u64,
    mask: u64,
    shift: u32,
    keys: [u64; 4],
}

impl PairPermutation {
    /// The permutation of 0..n under `keys` (draw them from a seeded generator).
    pub fn new(n: u64, keys: [u64; 4]) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        Self {
            n,
            mask,
            shift: bits.div_ceil(2).max(1),
            // The multipliers must be odd to be invertible modulo 2^b.
            keys: [keys[0], keys[1] | 1, keys[2], keys[3] | 1],
        }
    }

    /// Length of the permutation.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True when it permutes nothing.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The k-th number of the permutation (k < n).
    #[inline]
    pub fn at(&self, k: u64) -> u64 {
        debug_assert!(k < self.n);
        let mut x = k;
        loop {
            x = self.map(x);
            if x < self.n {
                return x;
            }
        }
    }

    /// The permutation in order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.n).map(move |k| self.at(k))
    }

    #[inline]
    fn map(&self, mut x: u64) -> u64 {
        let (m, s) = (self.mask, self.shift);
        // Multiplication carries low bits up, the shift brings high bits down: two rounds mix every bit.
        for pair in self.keys.chunks_exact(2) {
            x = x.wrapping_add(pair[0]) & m;
            x = x.wrapping_mul(pair[1]) & m;
            x ^= x >> s;
        }
        x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15) & m;
        x ^ (x >> s)
    }
}
