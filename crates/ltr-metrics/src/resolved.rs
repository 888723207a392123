//! The common measures of a resolved ranking (every tie group one document) — what `evaluate`
//! and `evaluate_run` meet under every tie policy but `Expected` — computed from the ranked
//! order: one pass gathers the positions of the relevant documents (and counts the labels for the ideal
//! DCG), then each measure reads those positions. Each value is the floating-point computation of
//! [`query_metric`](crate::query_metric) on the same ranking, term by term in the same order, so it has the same
//! bits: a group of one document makes every `… / m` a division by 1 and every one-term sum its term (see each arm;
//! `evaluate_matches_plain_per_query_path` checks them all against `query_metric`).

use crate::compute::{gain_fits_labels, gain_levels, ideal_dcg_of, short_zero, Unsupported};
use crate::convention::{Convention, ShortList};
use crate::metric::Metric;

/// Can [`values`] compute `m`?
pub(crate) fn supported(m: Metric) -> bool {
    matches!(
        m,
        Metric::Ndcg(_)
            | Metric::Dcg(_)
            | Metric::Ap(_)
            | Metric::P(_)
            | Metric::Rr(_)
            | Metric::Recall(_)
            | Metric::Rbp(_)
            | Metric::NumRet
            | Metric::NumRel
            | Metric::NumRelRet
    )
}

/// Per-thread tables and scratch, kept across the queries of one evaluation (one convention).
#[derive(Debug)]
pub(crate) struct Tables {
    /// `discount.at(p + 1)` for p = 0, 1, …
    discounts: Vec<f64>,
    /// RBP's `p.powi(i)` for i = 0, 1, …, per p (by its bits).
    powers: Vec<(u64, Vec<f64>)>,
    /// The order in which the ideal ranking visits the whole labels 0–15.
    levels: [usize; 16],
    /// Positions of the relevant documents, ascending.
    rel_pos: Vec<u32>,
    /// Which documents (in input order) are relevant.
    relevant: Vec<bool>,
}

impl Tables {
    pub(crate) fn new(c: &Convention) -> Self {
        Tables {
            discounts: Vec::new(),
            powers: Vec::new(),
            levels: gain_levels(c.gain),
            rel_pos: Vec::new(),
            relevant: Vec::new(),
        }
    }

    fn discounts(&mut self, c: &Convention, len: usize) -> &[f64] {
        while self.discounts.len() < len {
            let p = self.discounts.len();
            self.discounts.push(c.discount.at(p + 1));
        }
        &self.discounts[..len]
    }

    fn powers(&mut self, p: f64, len: usize) -> &[f64] {
        let at = match self.powers.iter().position(|(b, _)| *b == p.to_bits()) {
            Some(at) => at,
            None => {
                self.powers.push((p.to_bits(), Vec::new()));
                self.powers.len() - 1
            }
        };
        let t = &mut self.powers[at].1;
        while t.len() < len {
            t.push(p.powi(t.len() as i32));
        }
        &t[..len]
    }
}

/// The values of `metrics` (each [`supported`]) for one query whose documents have `labels` and are ranked in
/// `order` (a permutation, at most `u32::MAX` long, every group one document), and whose judged documents that were
/// not retrieved have `unretrieved` labels, into `out`.
pub(crate) fn values(
    metrics: &[Metric],
    labels: &[f32],
    unretrieved: &[f32],
    order: &[u32],
    c: &Convention,
    t: &mut Tables,
    out: &mut [f64],
) -> Result<(), Unsupported> {
    let n = labels.len();
    debug_assert_eq!(order.len(), n);
    // In input order (which also brings the labels into the cache for the ranked pass): which documents are
    // relevant, and whether every label is a whole 0–15 (then the ideal DCG counts them instead of sorting gains).
    let (thr, max) = (
        c.relevance_threshold,
        c.relevance_max.unwrap_or(f32::INFINITY),
    );
    let mut relevant = std::mem::take(&mut t.relevant);
    relevant.clear();
    relevant.extend(
        labels
            .iter()
            .map(|&l| l.is_finite() & (l >= thr) & (l <= max)),
    );
    // The relevant positions in ranked order, gathered without a branch.
    let mut rel_pos = std::mem::take(&mut t.rel_pos);
    rel_pos.clear();
    rel_pos.resize(n, 0);
    let mut found = 0usize;
    for (p, &d) in order.iter().enumerate() {
        rel_pos[found] = p as u32;
        found += relevant[d as usize] as usize;
    }
    rel_pos.truncate(found);
    // R counts the relevant documents the run missed too (compute's total_rel).
    let r = found
        + unretrieved
            .iter()
            .filter(|&&l| l.is_finite() & (l >= thr) & (l <= max))
            .count();
    let ranked_label = |p: usize| labels[order[p] as usize];
    for (slot, &m) in out.iter_mut().zip(metrics) {
        *slot = match m {
            Metric::Ndcg(k) => {
                gain_fits_labels(labels, c, m)?;
                // compute::ndcg.
                if short_zero(c, k, n) {
                    0.0
                } else {
                    let kk = k.unwrap_or(n + unretrieved.len());
                    let whole = unretrieved
                        .is_empty()
                        .then(|| whole_labels(labels))
                        .flatten();
                    let ideal = match whole {
                        Some(top) => ideal_from_counts(labels, top, c, kk, t),
                        None => ideal_dcg_of(labels, unretrieved, c, kk),
                    };
                    if ideal <= 0.0 {
                        0.0
                    } else {
                        dcg(ranked_label, c, kk.min(n), t) / ideal
                    }
                }
            }
            Metric::Dcg(k) => {
                gain_fits_labels(labels, c, m)?;
                if short_zero(c, k, n) {
                    0.0
                } else {
                    dcg(ranked_label, c, k.unwrap_or(n).min(n), t)
                }
            }
            Metric::Ap(k) => {
                // compute::average_precision: a relevant document at position a adds
                // 1·(0 + (before + 1 + 0)/(a + 1))/1.
                let k = k.unwrap_or(usize::MAX);
                if r == 0 {
                    0.0
                } else {
                    let mut sum = 0.0;
                    for (before, &a) in rel_pos.iter().enumerate() {
                        if a as usize >= k {
                            break;
                        }
                        sum += (before as f64 + 1.0) / (a as usize + 1) as f64;
                    }
                    sum / r as f64
                }
            }
            Metric::P(k) => {
                let denom = match c.short_list {
                    ShortList::Letor3 if k > n => 0,
                    ShortList::Present => k.min(n),
                    _ => k,
                };
                if denom == 0 {
                    0.0
                } else {
                    rel_in_top(&rel_pos, k) / denom as f64
                }
            }
            Metric::Rr(k) => match rel_pos.first() {
                // compute::reciprocal_rank: (0 + (1/1)/(a + 1)) for the first relevant position a < k.
                Some(&a) if (a as usize) < k.unwrap_or(usize::MAX) => 1.0 / (a as usize + 1) as f64,
                _ => 0.0,
            },
            Metric::Recall(k) => {
                let top = rel_in_top(&rel_pos, k.unwrap_or(n));
                if r == 0 {
                    0.0
                } else {
                    top / r as f64
                }
            }
            Metric::NumRet => n as f64,
            Metric::NumRel => r as f64,
            Metric::NumRelRet => rel_in_top(&rel_pos, n),
            Metric::Rbp(p) => {
                // compute::rbp_with on a resolved ranking: p^i added at each relevant position, in order.
                let p = p.get();
                let powers = t.powers(p, n.min(i32::MAX as usize));
                let pow = |i: usize| powers.get(i).copied().unwrap_or_else(|| p.powi(i as i32));
                let mut value = 0.0;
                for &a in &rel_pos {
                    value += pow(a as usize);
                }
                (1.0 - p) * value
            }
            _ => unreachable!("{m} is not computed from a resolved ranking here"),
        };
    }
    t.rel_pos = rel_pos;
    t.relevant = relevant;
    Ok(())
}

/// The largest label when every label is a whole 0–15 (compute::ideal_dcg_of's test). A label in [0, 15] is
/// whole when adding and subtracting 2^23 (which rounds it to an integer) leaves it as it is; over eight lanes,
/// so that the compiler can use vector instructions.
fn whole_labels(labels: &[f32]) -> Option<f32> {
    const ROUND: f32 = 8_388_608.0;
    let (mut ok, mut top) = ([1u32; 8], [0.0f32; 8]);
    let mut lane = |j: usize, l: f32| {
        ok[j] &= ((0.0..=15.0).contains(&l) & (l + ROUND - ROUND == l)) as u32;
        top[j] = if l > top[j] { l } else { top[j] };
    };
    let mut chunks = labels.chunks_exact(8);
    for c in &mut chunks {
        for (j, &l) in c.iter().enumerate() {
            lane(j, l);
        }
    }
    for &l in chunks.remainder() {
        lane(0, l);
    }
    let top = top.iter().fold(0.0f32, |a, &b| if b > a { b } else { a });
    (ok.iter().fold(1, |a, &w| a & w) == 1).then_some(top)
}

/// compute::count_in_top on a resolved ranking: 1·1/1 (or 0·1/1) a position, so the count itself.
fn rel_in_top(rel_pos: &[u32], k: usize) -> f64 {
    rel_pos.partition_point(|&a| (a as usize) < k) as f64
}

/// compute::dcg on a resolved ranking: gain·discount/1 at each position with a non-zero gain.
fn dcg(ranked_label: impl Fn(usize) -> f32, c: &Convention, k: usize, t: &mut Tables) -> f64 {
    let disc = t.discounts(c, k);
    let mut s = 0.0;
    for (p, &d) in disc.iter().enumerate() {
        let l = ranked_label(p);
        let g = if l.is_finite() { c.gain.of(l) } else { 0.0 };
        if g == 0.0 {
            continue;
        }
        s += g * d;
    }
    s
}

/// compute::ideal_dcg_of's counting path on whole labels 0–15 (the largest `top`). Every gain of such a label is
/// at least 0, so the levels of gain 0 come last and add +0 to a sum that is at least +0: they are skipped, as are
/// the levels above `top`; each other level's documents are counted when the ideal list reaches it.
fn ideal_from_counts(labels: &[f32], top: f32, c: &Convention, k: usize, t: &mut Tables) -> f64 {
    let levels = t.levels;
    let disc = t.discounts(c, k.min(labels.len()));
    let (mut p, mut total) = (0usize, 0.0);
    for level in levels {
        let g = c.gain.of(level as f32);
        if g == 0.0 || level as f32 > top {
            continue;
        }
        let count = labels.iter().filter(|&&l| l == level as f32).count();
        for _ in 0..count {
            if p >= k {
                return total;
            }
            total += g * disc[p];
            p += 1;
        }
    }
    total
}
