//! Ranking a query's scores fast: the order of [`Ranking::new`] (score descending, equal scores by the tie policy),
//! computed without a comparator.
//!
//! Queries of `BUCKET_MIN` to 65,536 documents are first spread over 65,536 buckets by a map that never puts a
//! higher score in a later bucket (`(max − s) · 65535 / (max − min)`, each step rounded, so monotone); two byte
//! passes of a radix sort of 32-bit records (bucket, index) order them, and the rare runs of documents sharing a
//! bucket are then sorted exactly (score, then the tie order). Since the bucket map is monotone, the result is the
//! exact order. When scores crowd into few buckets (a far outlier, many equal scores), the query falls back to the
//! radix sort of the scores' full 64-bit keys.

use ltr_data::TextColumn;

use crate::convention::TiePolicy;
use crate::ranking::Ranking;
use crate::runs::RunQuery;

/// Scratch space of the rankers, reused across queries.
// pub for the tests in tests/unit/rank.rs; not API.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct RankBuffers {
    keys: Vec<u128>,
    records: Vec<(u64, u32)>,
    spare: Vec<(u64, u32)>,
    small: Vec<u32>,
    small_spare: Vec<u32>,
    order: Vec<u32>,
}

/// Queries at least this long are ranked by a radix sort of (score key, index) records; shorter ones by a
/// comparison sort of packed u128 keys. Both give the same order: score descending, then the tie order.
const RADIX_MIN: usize = 256;

/// Queries from this length up to 65,536 documents are ranked by buckets first (see the module documentation).
const BUCKET_MIN: usize = 64;

/// The score's order as an unsigned key, ascending for descending scores (−0 ties with +0).
#[inline]
pub(crate) fn score_key(s: f64) -> u64 {
    let s = if s == 0.0 { 0.0 } else { s };
    let b = s.to_bits();
    let ord = if b >> 63 == 1 { !b } else { b | (1 << 63) };
    !ord
}

/// The document ids that order equal scores under [`TiePolicy::DocIdDescending`].
// pub for the tests in tests/unit/rank.rs; not API (so no `Debug`).
#[doc(hidden)]
#[allow(missing_debug_implementations)]
#[derive(Clone, Copy)]
pub enum DocIds<'a> {
    /// The query's documents are entries `start..` of a dataset's column.
    Column {
        column: &'a TextColumn,
        start: usize,
    },
    /// A run's query.
    Run(&'a RunQuery),
    /// A query's ids, one per document.
    Strs(&'a [&'a str]),
}

impl<'a> DocIds<'a> {
    #[inline]
    fn get(self, d: usize) -> &'a str {
        match self {
            DocIds::Column { column, start } => column.get(start + d),
            DocIds::Run(q) => q.docid(d),
            DocIds::Strs(ids) => ids[d],
        }
    }
}

/// The order of `scores` (finite) under `ties` into `order`: `order[p]` is the document at position `p`.
/// `ids` breaks equal scores under [`TiePolicy::DocIdDescending`] (larger id first, then input order); without
/// them that policy is input order.
// pub for the tests in tests/unit/rank.rs; not API.
#[doc(hidden)]
pub fn rank_order(
    scores: &[f64],
    ties: TiePolicy,
    ids: Option<DocIds<'_>>,
    buf: &mut RankBuffers,
    order: &mut Vec<u32>,
) {
    let n = scores.len();
    order.clear();
    assert!(n <= u32::MAX as usize, "a query of {n} documents");
    let ids = if ties == TiePolicy::DocIdDescending {
        ids
    } else {
        None
    };
    let reverse = ties == TiePolicy::ReverseInput;
    if n < 2 {
        order.extend(0..n as u32);
        return;
    }
    if let Some(ties_inside) = descending(scores) {
        // Already ranked (runs written by TREC tools are): the input order, with each run of equal scores put in
        // the tie order, as the sorts below would leave it.
        order.extend(0..n as u32);
        if ties_inside {
            if let Some(ids) = ids {
                sort_equal_scores_by_id(scores, ids, order);
            } else if reverse {
                reverse_equal_scores(scores, order);
            }
        }
        return;
    }
    if (BUCKET_MIN..=1 << 16).contains(&n) && bucket_order(scores, reverse, ids, buf, order) {
        return;
    }
    key_order(scores, reverse, buf, order);
    if let Some(ids) = ids {
        sort_equal_scores_by_id(scores, ids, order);
    }
}

/// Whether `scores` never increase (NaN fails), and if so whether two neighbours are equal (−0 equals +0): one pass
/// of branch-free blocks of 16 comparisons, which stops at the first block out of order.
// pub for the tests in tests/unit/rank.rs; not API.
#[doc(hidden)]
pub fn descending(scores: &[f64]) -> Option<bool> {
    let pairs = |a: &[f64], b: &[f64]| {
        a.iter().zip(b).fold((true, false), |(down, eq), (&x, &y)| {
            (down & (x >= y), eq | (x == y))
        })
    };
    let mut equal = false;
    let mut from = 0;
    while from + 1 < scores.len() {
        let end = (from + 16).min(scores.len() - 1);
        let (down, eq) = pairs(&scores[from..end], &scores[from + 1..=end]);
        if !down {
            return None;
        }
        equal |= eq;
        from = end;
    }
    Some(equal)
}

/// Reverse each run of equal scores of `order` (the input order), as [`TiePolicy::ReverseInput`] ranks them.
fn reverse_equal_scores(scores: &[f64], order: &mut [u32]) {
    let mut a = 0;
    while a < order.len() {
        let mut b = a + 1;
        while b < order.len() && scores[order[b] as usize] == scores[order[a] as usize] {
            b += 1;
        }
        order[a..b].reverse();
        a = b;
    }
}

/// The order by the scores' full keys, equal scores in input order (reversed with `reverse`).
fn key_order(scores: &[f64], reverse: bool, buf: &mut RankBuffers, order: &mut Vec<u32>) {
    let n = scores.len();
    if n >= RADIX_MIN {
        // LSD radix sort on the key's bytes, stable: records enter in tie order, so equal keys keep it.
        let recs = &mut buf.records;
        recs.clear();
        if reverse {
            recs.extend((0..n).rev().map(|i| (score_key(scores[i]), i as u32)));
        } else {
            recs.extend((0..n).map(|i| (score_key(scores[i]), i as u32)));
        }
        let mut counts = [[0u32; 256]; 8];
        for &(k, _) in recs.iter() {
            for (b, c) in counts.iter_mut().enumerate() {
                c[((k >> (8 * b)) & 0xff) as usize] += 1;
            }
        }
        let spare = &mut buf.spare;
        spare.clear();
        spare.resize(n, (0, 0));
        for (b, at) in counts.iter_mut().enumerate() {
            // A byte shared by every key leaves the order as it is.
            if at[((recs[0].0 >> (8 * b)) & 0xff) as usize] as usize == n {
                continue;
            }
            exclusive_prefix_sums(at);
            for &r in recs.iter() {
                let d = ((r.0 >> (8 * b)) & 0xff) as usize;
                spare[at[d] as usize] = r;
                at[d] += 1;
            }
            std::mem::swap(recs, spare);
        }
        order.extend(recs.iter().map(|&(_, i)| i));
    } else {
        let keys = &mut buf.keys;
        keys.clear();
        keys.extend(scores.iter().enumerate().map(|(i, &s)| {
            let tie = if reverse { u32::MAX as usize - i } else { i };
            ((score_key(s) as u128) << 64) | tie as u128
        }));
        keys.sort_unstable();
        order.extend(keys.iter().map(|k| {
            let tie = *k as u64 as usize;
            (if reverse {
                u32::MAX as usize - tie
            } else {
                tie
            }) as u32
        }));
    }
}

/// Turn the counts of a byte's values into the positions where each value's records start.
#[inline]
fn exclusive_prefix_sums(counts: &mut [u32; 256]) {
    let mut sum = 0u32;
    for c in counts.iter_mut() {
        let x = *c;
        *c = sum;
        sum += x;
    }
}

/// Order each run of equal scores of `order` (input order within it) by doc id, larger first.
fn sort_equal_scores_by_id(scores: &[f64], ids: DocIds<'_>, order: &mut [u32]) {
    let id = |d: u32| ids.get(d as usize);
    let mut a = 0;
    while a < order.len() {
        let mut b = a + 1;
        while b < order.len() && scores[order[b] as usize] == scores[order[a] as usize] {
            b += 1;
        }
        if b - a > 1 {
            order[a..b].sort_by(|&x, &y| id(y).cmp(id(x)).then(x.cmp(&y)));
        }
        a = b;
    }
}

/// The bucket ranking of the module documentation; false (and `order` left empty) when more than one document in
/// eight shares its bucket with the one before it, or the scores' range does not scale.
fn bucket_order(
    scores: &[f64],
    reverse: bool,
    ids: Option<DocIds<'_>>,
    buf: &mut RankBuffers,
    order: &mut Vec<u32>,
) -> bool {
    let n = scores.len();
    // The least and largest scores, over eight lanes (so that the compiler can use vector instructions).
    let (mut lo, mut hi) = ([scores[0]; 8], [scores[0]; 8]);
    let mut chunks = scores.chunks_exact(8);
    for c in &mut chunks {
        for j in 0..8 {
            lo[j] = if c[j] < lo[j] { c[j] } else { lo[j] };
            hi[j] = if c[j] > hi[j] { c[j] } else { hi[j] };
        }
    }
    for &s in chunks.remainder() {
        lo[0] = if s < lo[0] { s } else { lo[0] };
        hi[0] = if s > hi[0] { s } else { hi[0] };
    }
    let lo = lo.iter().fold(lo[0], |a, &b| if b < a { b } else { a });
    let hi = hi.iter().fold(hi[0], |a, &b| if b > a { b } else { a });
    let span = hi - lo;
    let scale = 65535.0 / span;
    if !(span > 0.0 && span.is_finite() && scale.is_finite()) {
        return false;
    }
    // Bucket 0 holds the highest scores. (max − s)·scale lies in [0, 65535] (up to rounding, which the `min`
    // guards); adding 1.5·2^52 rounds it to an integer held in the low bits. Every step rounds monotonically, so
    // s > t never gives s a later bucket than t.
    const ROUND: f64 = 6_755_399_441_055_744.0;
    let bucket = |s: f64| (((hi - s) * scale + ROUND).to_bits() as u32).min(0xffff);
    // The records (bucket, index), without a branch (vector instructions), then the two bytes' counts.
    let recs = &mut buf.small;
    recs.clear();
    if reverse {
        recs.extend((0..n).rev().map(|i| (bucket(scores[i]) << 16) | i as u32));
    } else {
        recs.extend(
            scores
                .iter()
                .enumerate()
                .map(|(i, &s)| (bucket(s) << 16) | i as u32),
        );
    }
    let mut counts = [[0u32; 256]; 2];
    for &r in recs.iter() {
        counts[0][((r >> 16) & 0xff) as usize] += 1;
        counts[1][(r >> 24) as usize] += 1;
    }
    let spare = &mut buf.small_spare;
    spare.clear();
    spare.resize(n, 0);
    for (pass, at) in counts.iter_mut().enumerate() {
        let shift = 16 + 8 * pass;
        if at[((recs[0] >> shift) & 0xff) as usize] as usize == n {
            continue;
        }
        exclusive_prefix_sums(at);
        for &r in recs.iter() {
            let d = ((r >> shift) & 0xff) as usize;
            spare[at[d] as usize] = r;
            at[d] += 1;
        }
        std::mem::swap(recs, spare);
    }
    // Out in order. A run of records sharing a bucket entered in tie order; a stable sort by score (then id)
    // finishes it. Blocks of 16 neighbours with no shared bucket (most) are passed after one vectorisable test.
    // When many share buckets, the key sort is faster.
    order.clear();
    order.extend(recs.iter().map(|&r| r & 0xffff));
    let key = |r: u32| score_key(scores[(r & 0xffff) as usize]);
    let same = |x: u32, y: u32| (x ^ y) >> 16 == 0;
    let mut shared = 0;
    let mut from = 0;
    while from + 1 < n {
        let end = (from + 16).min(n - 1);
        let pairs = recs[from..end].iter().zip(&recs[from + 1..=end]);
        if !pairs.fold(false, |any, (&x, &y)| any | same(x, y)) {
            from = end;
            continue;
        }
        let mut a = from;
        while a < end {
            if !same(recs[a], recs[a + 1]) {
                a += 1;
                continue;
            }
            let mut b = a + 2;
            while b < n && same(recs[a], recs[b]) {
                b += 1;
            }
            shared += b - a - 1;
            if shared > n / 8 {
                order.clear();
                return false;
            }
            let run = &mut recs[a..b];
            match ids {
                None => run.sort_by_key(|&r| key(r)),
                Some(ids) => {
                    let id = |r: u32| ids.get((r & 0xffff) as usize);
                    run.sort_by(|&x, &y| key(x).cmp(&key(y)).then_with(|| id(y).cmp(id(x))));
                }
            }
            for (o, &r) in order[a..b].iter_mut().zip(run.iter()) {
                *o = r & 0xffff;
            }
            a = b;
        }
        from = a;
    }
    true
}

/// Rank by score descending with ties in input order, sorting integer keys (much faster than a comparator).
pub fn fast_ranking(scores: &[f64], ties: TiePolicy) -> Ranking {
    let mut out = Ranking {
        order: Vec::new(),
        groups: Vec::new(),
    };
    fast_ranking_into(scores, ties, &mut RankBuffers::default(), &mut out);
    out
}

/// [`fast_ranking`] into `out`, reusing its vectors and `buf` ([`TiePolicy::DocIdDescending`] is input order).
// pub for the tests in tests/unit/rank.rs; not API.
#[doc(hidden)]
pub fn fast_ranking_into(
    scores: &[f64],
    ties: TiePolicy,
    buf: &mut RankBuffers,
    out: &mut Ranking,
) {
    let mut order = std::mem::take(&mut buf.order);
    rank_order(scores, ties, None, buf, &mut order);
    ranking_from_order(scores, ties, &order, out);
    buf.order = order;
}

/// The [`Ranking`] of an order computed by [`rank_order`]: one group per document, or under
/// [`TiePolicy::Expected`] one per run of equal scores.
// pub for the tests in tests/unit/rank.rs; not API.
#[doc(hidden)]
pub fn ranking_from_order(scores: &[f64], ties: TiePolicy, order: &[u32], out: &mut Ranking) {
    out.order.clear();
    out.order.extend(order.iter().map(|&d| d as usize));
    let order = &out.order;
    out.groups.clear();
    if ties == TiePolicy::Expected {
        let mut start = 0;
        for p in 1..=order.len() {
            if p == order.len() || scores[order[p]] != scores[order[start]] {
                out.groups.push((start, p - start));
                start = p;
            }
        }
    } else {
        out.groups.extend((0..order.len()).map(|p| (p, 1)));
    }
}
