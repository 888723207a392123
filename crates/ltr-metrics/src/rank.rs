//! Ranking a query's scores fast: the order of [`Ranking::new`] (score descending, equal scores by the tie policy),
//! computed without a comparator.
//!
//! Queries of [`BUCKET_MIN`] to 65,536 documents are first spread over 65,536 buckets by a map that never puts a
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
#[derive(Debug, Default)]
pub(crate) struct RankBuffers {
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
#[derive(Clone, Copy)]
pub(crate) enum DocIds<'a> {
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
pub(crate) fn rank_order(
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
fn descending(scores: &[f64]) -> Option<bool> {
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
pub(crate) fn fast_ranking_into(
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
pub(crate) fn ranking_from_order(
    scores: &[f64],
    ties: TiePolicy,
    order: &[u32],
    out: &mut Ranking,
) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_ranking_matches_comparator_ranking() {
        let s = [0.5, -0.0, 0.0, 3.0, -2.0, 0.5, f64::MIN_POSITIVE, -1e300];
        for t in [
            TiePolicy::InputOrder,
            TiePolicy::ReverseInput,
            TiePolicy::Expected,
        ] {
            assert_eq!(fast_ranking(&s, t), Ranking::new(&s, t, None));
        }
    }

    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut rng = ltr_testdata::XorShift64::new(seed);
        move || rng.next_u64()
    }

    /// Long queries take the bucket or radix sort: the same order and groups as the comparator, on scores with many
    /// ties, both zeros, negatives, extremes and far outliers, with one set of buffers reused across queries of
    /// varying length.
    #[test]
    fn radix_ranking_matches_comparator_ranking_with_ties() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let mut buf = RankBuffers::default();
        let mut out = Ranking {
            order: Vec::new(),
            groups: Vec::new(),
        };
        for n in [0, 1, 2, 63, 64, 255, 256, 257, 1000, 3000, 65_536, 65_537] {
            for distinct in [2u64, 17, 20_000, 1_000_000_007] {
                for shape in 0..3 {
                    if n > 5000 && shape > 0 {
                        continue;
                    }
                    let s: Vec<f64> = (0..n)
                        .map(|_| match (shape, next() % 8) {
                            (0, 0) => -0.0,
                            (0, 1) => 0.0,
                            (0, 2) => f64::MAX,
                            (0, 3) => -f64::MIN_POSITIVE,
                            // Clustered: many close scores share a bucket, with one far outlier in 8.
                            (1, 0) => 1e12,
                            (1, _) => 1.0 + (next() % distinct) as f64 * 1e-9,
                            _ => ((next() % distinct) as f64 - distinct as f64 / 2.0) / 7.0,
                        })
                        .collect();
                    for t in [
                        TiePolicy::InputOrder,
                        TiePolicy::ReverseInput,
                        TiePolicy::Expected,
                    ] {
                        let want = Ranking::new(&s, t, None);
                        fast_ranking_into(&s, t, &mut buf, &mut out);
                        assert_eq!(out, want, "n {n}, {distinct} values, shape {shape}, {t:?}");
                        assert_eq!(fast_ranking(&s, t), want);
                    }
                }
            }
        }
    }

    /// Doc-id tie order: equal scores by id descending, then input order, through both the bucket and the key path
    /// (few distinct scores send a query to the key path).
    #[test]
    fn doc_id_ties_match_comparator() {
        let mut next = xorshift(0x1234_5678_9abc_def1);
        let mut buf = RankBuffers::default();
        let mut order = Vec::new();
        for n in [2usize, 70, 300, 1000] {
            for distinct in [3u64, 400, 20_000, 1_000_000_007] {
                let s: Vec<f64> = (0..n).map(|_| (next() % distinct) as f64 / 3.0).collect();
                let mut column = TextColumn::new();
                column.push("before");
                for _ in 0..n {
                    column.push(&format!("d{}", next() % 50));
                }
                let id = |d: usize| column.get(1 + d);
                let want = Ranking::new(&s, TiePolicy::DocIdDescending, Some(&id));
                let ids = DocIds::Column {
                    column: &column,
                    start: 1,
                };
                rank_order(
                    &s,
                    TiePolicy::DocIdDescending,
                    Some(ids),
                    &mut buf,
                    &mut order,
                );
                let got: Vec<usize> = order.iter().map(|&d| d as usize).collect();
                assert_eq!(got, want.order, "n {n}, {distinct} values");
            }
        }
    }

    /// Scores already in rank order (as TREC runs are written) take the pass that keeps the input order: the same
    /// order as the comparator under every tie policy, with ties at the start, in the middle and at the end (in
    /// doc-id order and out of it), −0 next to +0, every score equal, and inputs out of order that must take the
    /// sorts (reversed, one pair swapped at the end). Lengths cover the key sort, the bucket sort and the radix sort.
    #[test]
    fn ranked_input_matches_comparator() {
        let mut next = xorshift(0x5151_7e57_0dd5_eed1);
        let mut buf = RankBuffers::default();
        let mut order = Vec::new();
        for n in [2usize, 3, 17, 64, 100, 300, 1000] {
            for shape in 0..7 {
                let mut s: Vec<f64> = (0..n).map(|_| (next() % 1000) as f64 / 7.0).collect();
                s.sort_by(|a, b| b.partial_cmp(a).unwrap());
                match shape {
                    // Distinct scores.
                    0 => s
                        .iter_mut()
                        .enumerate()
                        .for_each(|(i, x)| *x = (n - i) as f64),
                    // Ties in the middle, at the start and at the end.
                    1 => {
                        s[n / 2] = s[n / 2 - 1];
                        s[1] = s[0];
                        s[n - 1] = s[n - 2];
                    }
                    // −0 beside +0 (equal scores).
                    2 => {
                        s.iter_mut()
                            .enumerate()
                            .for_each(|(i, x)| *x = (n / 2) as f64 - i as f64);
                        s[n / 2] = -0.0;
                        if n / 2 > 0 {
                            s[n / 2 - 1] = 0.0;
                        }
                        s[n / 2..].sort_by(|a, b| b.partial_cmp(a).unwrap());
                    }
                    // Every score equal.
                    3 => s.iter_mut().for_each(|x| *x = 1.5),
                    // Reversed: ascending.
                    4 => s.reverse(),
                    // In order but for the last pair.
                    5 => s.swap(n - 2, n - 1),
                    // Few distinct values: long runs of ties.
                    _ => s.iter_mut().for_each(|x| *x = (*x * 7.0 / 200.0).floor()),
                }
                let mut column = TextColumn::new();
                for _ in 0..n {
                    column.push(&format!("d{}", next() % 40));
                }
                let id = |d: usize| column.get(d);
                let ids = DocIds::Column {
                    column: &column,
                    start: 0,
                };
                for t in [
                    TiePolicy::InputOrder,
                    TiePolicy::ReverseInput,
                    TiePolicy::Expected,
                    TiePolicy::DocIdDescending,
                ] {
                    let want = Ranking::new(&s, t, Some(&id));
                    rank_order(&s, t, Some(ids), &mut buf, &mut order);
                    let got: Vec<usize> = order.iter().map(|&d| d as usize).collect();
                    assert_eq!(got, want.order, "n {n}, shape {shape}, {t:?}");
                    let mut r = Ranking {
                        order: Vec::new(),
                        groups: Vec::new(),
                    };
                    ranking_from_order(&s, t, &order, &mut r);
                    assert_eq!(r, want, "n {n}, shape {shape}, {t:?}");
                }
            }
        }
    }

    /// The ranked-input test: only inputs that never increase pass it, and it reports equal neighbours.
    #[test]
    fn descending_detects_order_and_ties() {
        assert_eq!(descending(&[]), Some(false));
        assert_eq!(descending(&[1.0]), Some(false));
        assert_eq!(descending(&[2.0, 1.0]), Some(false));
        assert_eq!(descending(&[1.0, 2.0]), None);
        assert_eq!(descending(&[0.0, -0.0]), Some(true));
        assert_eq!(descending(&[-0.0, 0.0]), Some(true));
        assert_eq!(descending(&[1.0, f64::NAN]), None);
        let mut s: Vec<f64> = (0..100).rev().map(f64::from).collect();
        assert_eq!(descending(&s), Some(false));
        s[40] = s[41];
        assert_eq!(descending(&s), Some(true));
        s[99] = 5.0;
        assert_eq!(descending(&s), None);
    }
}
