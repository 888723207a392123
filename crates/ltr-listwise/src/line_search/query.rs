//! One query's line: its value at t = −∞ and the changes of its measure as the coordinate's weight t grows, from
//! a sweep of each relevant document's crossings with the others.

use super::line::to_key;
use crate::measure::QueryMeasure;

/// Buffers one run of queries reuses: every per-query array of [`query_line`].
#[derive(Debug, Default)]
pub(super) struct QueryScratch {
    intercepts: Vec<f64>,
    order: Vec<u32>,
    rank0: Vec<u32>,
    member: Vec<bool>,
    members: Vec<u32>,
    /// The documents' keys of the order at t = −∞.
    keys: Vec<u128>,
    /// Each crossing's sort key: t's order key cut to its high bits, the other document in the low [`DOC_MASK`].
    coarse: Vec<u64>,
    /// Per document, the order key of t where it crosses the swept document.
    t_key: Vec<u64>,
    /// A run of crossings whose cut keys tie, in full.
    tied: Vec<u128>,
    counts: Vec<u32>,
    counted: Vec<u32>,
    layers: LayerScratch,
}

/// One query's value at t = −∞ (its feature must vary, its measure not be constant); its changes `(t, Δ)` as t
/// grows (Δ summed, not yet divided by the number of queries) are appended to `changes`.
///
/// Only documents with a non-zero weight (gain, relevance) can change the measure, so only their crossings are
/// swept: for each such document d, its crossings with every other document are sorted, and while sweeping them
/// it keeps how many documents of each weight class lie above it — which gives its position and the prefix state
/// (relevant count, ERR's not-stopped probability) exactly. A crossing of two adjacent documents changes only their
/// two terms. Cost O(n⁺ · n log n) for n⁺ documents of non-zero weight, not O(n² log n²): two documents of weight 0
/// never matter, however often they swap.
pub(super) fn query_line(
    m: &QueryMeasure,
    x: &[f32],
    s: &[f64],
    wj: f64,
    buffers: &mut QueryScratch,
    changes: &mut Vec<(u64, f64)>,
) -> f64 {
    let n = x.len();
    let QueryScratch {
        intercepts: b,
        order,
        rank0,
        member,
        members,
        keys,
        coarse,
        t_key,
        tied,
        counts,
        counted,
        layers,
    } = buffers;
    b.clear();
    b.extend((0..n).map(|d| s[d] - wj * x[d] as f64));
    // At t = −∞ the smallest x ranks first; equal x: the larger intercept; equal lines keep file order. One integer
    // per document (x, the intercept reversed, the index) sorts faster than a comparator that reads both arrays.
    keys.clear();
    keys.extend(
        (0..n).map(|d| {
            ((to_key32(x[d]) as u128) << 96) | ((!to_key(b[d]) as u128) << 32) | d as u128
        }),
    );
    keys.sort_unstable();
    order.clear();
    order.extend(keys.iter().map(|&k| k as u32));
    let base = m.value(order);
    let class_of = &m.class_of;
    rank0.clear();
    rank0.resize(n, 0);
    t_key.clear();
    t_key.resize(n, 0);
    for (p, &d) in order.iter().enumerate() {
        rank0[d as usize] = p as u32;
    }
    // A truncated measure only sees documents that reach the top `cut` somewhere on the line. Counting only
    // those keeps every position below the cut exact: whoever is above a document ranked within the cut is itself
    // within it, and a document ranked at or below the cut has the `cut` documents above it counted.
    member.clear();
    if m.cut < n {
        top_layers(x, b, order, m.cut, member, layers);
    } else {
        member.resize(n, true);
    }
    members.clear();
    members.extend((0..n as u32).filter(|&d| member[d as usize]));
    // counted[p·C + c]: members of class c among the first p documents at t = −∞ (what lies above a document
    // there), one pass instead of one per swept document.
    let n_classes = m.classes.len();
    counts.clear();
    counts.resize(n_classes, 0);
    counted.clear();
    counted.extend_from_slice(counts);
    for &e in order.iter() {
        if member[e as usize] {
            counts[class_of[e as usize] as usize] += 1;
        }
        counted.extend_from_slice(counts);
    }
    for &d in members.iter() {
        let d = d as usize;
        let wd = m.weight[d];
        if wd == 0.0 {
            continue;
        }
        let row = rank0[d] as usize * n_classes;
        counts.copy_from_slice(&counted[row..row + n_classes]);
        let mut above: u32 = counts.iter().sum();
        let (xd, bd) = (x[d], b[d]);
        coarse.clear();
        for &e in members.iter() {
            let e = e as usize;
            let xe = x[e];
            if xe == xd {
                continue;
            }
            // e overtakes d where the lines meet if x_e > x_d, else d overtakes e.
            let rising = xe > xd;
            let (b_lo, b_hi, x_lo, x_hi) = if rising {
                (bd, b[e], xd, xe)
            } else {
                (b[e], bd, xe, xd)
            };
            let t = (b_lo - b_hi) / (x_hi as f64 - x_lo as f64);
            let key = to_key(t);
            t_key[e] = key;
            coarse.push((key & !DOC_MASK) | e as u64);
        }
        // The crossings in order of t, sorted as 64-bit integers: t's order key cut to its high 32 bits (t to about
        // 1e-6 relative), the document below them. Only runs whose high bits tie are sorted again on the full key
        // and the tie rule below, so the order is exactly that of (t, tie).
        coarse.sort_unstable();
        let mut start = 0;
        for i in 1..=coarse.len() {
            if i < coarse.len() && (coarse[i] ^ coarse[start]) & !DOC_MASK == 0 {
                continue;
            }
            if i - start > 1 {
                tied.clear();
                tied.extend(coarse[start..i].iter().map(|&c| {
                    let e = (c & DOC_MASK) as usize;
                    let rising = x[e] > xd;
                    // Several lines through one point (identical lines always; distinct ones when they happen to
                    // meet there) cross d at the same t. They are taken in the one order of adjacent exchanges
                    // that every document's sweep agrees on: first those d overtakes, then those that overtake d,
                    // each by increasing x; among identical lines, the one next to d first. Rounding can still
                    // split a meeting of distinct lines; the step is checked on the real ranking before it is
                    // taken.
                    let next_to_d = if rising {
                        rank0[e] as u64
                    } else {
                        (n - 1 - rank0[e] as usize) as u64
                    };
                    let tie = ((rising as u64) << 63) | ((to_key32(x[e]) as u64) << 31) | next_to_d;
                    ((t_key[e] as u128) << 64) | tie as u128
                }));
                tied.sort_unstable();
                for (c, &packed) in coarse[start..i].iter_mut().zip(tied.iter()) {
                    let tie = packed as u64;
                    let rank = (tie & ((1 << 31) - 1)) as usize;
                    let e = order[if tie >> 63 == 1 { rank } else { n - 1 - rank }];
                    *c = (*c & !DOC_MASK) | e as u64;
                }
            }
            start = i;
        }
        for &c in coarse.iter() {
            let e = (c & DOC_MASK) as usize;
            let key = t_key[e];
            let rising = x[e] > xd;
            let we = m.weight[e];
            // 0-based position of the upper of the two: e was just below d when rising, else just above it.
            let upper = if rising { above } else { above - 1 } as usize;
            if !rising {
                counts[class_of[e] as usize] -= 1;
                above -= 1;
            }
            // Each pair of different weights once: in the sweep of its weight-0 member's partner, else of the
            // lower index.
            if we != wd && (we == 0.0 || d < e) && upper < m.cut {
                let prefix = m.prefix_of(counts);
                let (before_up, before_down) = if rising { (wd, we) } else { (we, wd) };
                let delta = m.pair_terms(upper, before_down, before_up, prefix)
                    - m.pair_terms(upper, before_up, before_down, prefix);
                if delta != 0.0 {
                    changes.push((key, delta));
                }
            }
            if rising {
                counts[class_of[e] as usize] += 1;
                above += 1;
            }
        }
    }
    base
}

/// The low bits of a crossing's sort key: the other document (a query's documents are numbered in 32 bits).
const DOC_MASK: u64 = u32::MAX as u64;

/// Buffers of [`top_layers`].
#[derive(Debug, Default)]
struct LayerScratch {
    left: Vec<usize>,
    /// A hull point, and the run of `left` it and the lines identical to it occupy.
    hull: Vec<(usize, usize, usize)>,
}

/// Marks in `member` the documents on the first `layers` upper convex layers of the points (x_d, b_d) — a superset
/// of those ranked within the top `layers` for some t. A document strictly below the upper hull of what is left
/// after removing layers 1..j has, at every t, one document of each of those layers strictly above it; so one on
/// no layer up to `layers` never ranks within them. Points on a hull edge, and any the rounding leaves in doubt,
/// are kept. `order`: the documents by increasing x, then decreasing b (the ranking at t = −∞).
fn top_layers(
    x: &[f32],
    b: &[f64],
    order: &[u32],
    layers: usize,
    member: &mut Vec<bool>,
    buffers: &mut LayerScratch,
) {
    let n = x.len();
    let LayerScratch { left, hull } = buffers;
    left.clear();
    left.extend(order.iter().map(|&d| d as usize));
    member.clear();
    member.resize(n, false);
    for _ in 0..layers {
        if left.is_empty() {
            break;
        }
        // One representative per x: the largest intercept (first in the sort). Lines identical to it follow it
        // in `left` and tie with it everywhere: they join the layer with it (`start..same` in `left`).
        hull.clear();
        let mut i = 0;
        while i < left.len() {
            let p = left[i];
            while hull.len() >= 2 {
                let (l, m) = (hull[hull.len() - 2].0, hull[hull.len() - 1].0);
                let (xl, xm, xp) = (x[l] as f64, x[m] as f64, x[p] as f64);
                let cross = (xp - xl) * (b[m] - b[l]) - (b[p] - b[l]) * (xm - xl);
                let scale = (xp - xl).abs() * (b[m].abs() + b[l].abs() + b[p].abs())
                    + (xm - xl).abs() * (b[p].abs() + b[l].abs());
                if cross < -1e-9 * scale {
                    hull.pop();
                } else {
                    break;
                }
            }
            let start = i;
            i += 1;
            let mut same = i;
            while i < left.len() && x[left[i]] == x[p] {
                if same == i && b[left[i]] == b[p] {
                    same += 1;
                }
                i += 1;
            }
            hull.push((p, start, same));
        }
        for &(_, start, same) in hull.iter() {
            for &p in &left[start..same] {
                member[p] = true;
            }
        }
        left.retain(|&p| !member[p]);
    }
}

/// An integer with the order of `f32::total_cmp`.
#[inline]
fn to_key32(v: f32) -> u32 {
    let bits = v.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | (1 << 31)
    }
}
