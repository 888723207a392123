//! Per-query metric values.
//!
//! Everything here works on one query: its labels, its scores and a [`Ranking`]. A label that is not finite marks an
//! unjudged document (only TREC runs have them): it gains nothing, is never relevant, and bpref skips it. NaN is a
//! document absent from the qrels; −∞ one whose qrels value is negative (trec_eval: in the pool but unjudged), which
//! only infAP and Judged@k tell apart.
//! Judged documents that the run did not retrieve (TREC runs only) are passed as `unretrieved` labels: they count in
//! the ideal DCG and in R and N, as in trec_eval.
//!
//! Under [`TiePolicy::Expected`](crate::TiePolicy::Expected) each group of tied documents is averaged over all its
//! internal orders; the formulas below are exact expectations (linearity of expectation per position), not samples.

use crate::convention::{Convention, Gain, ShortList};
use crate::metric::Metric;
use crate::ranking::Ranking;

/// A metric that cannot be computed as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{metric}: {reason}")]
pub struct Unsupported {
    /// The metric.
    pub metric: String,
    /// Why.
    pub reason: String,
}

/// One query's inputs.
#[derive(Debug, Clone, Copy)]
pub struct QueryInput<'a> {
    /// Labels of the retrieved documents (NaN = absent from the qrels, −∞ = pooled but unjudged).
    pub labels: &'a [f32],
    /// Their scores.
    pub scores: &'a [f64],
    /// The ranking of the retrieved documents.
    pub ranking: &'a Ranking,
    /// Labels of judged documents that were not retrieved.
    pub unretrieved: &'a [f32],
}

#[inline]
fn judged(l: f32) -> bool {
    l.is_finite()
}

impl QueryInput<'_> {
    fn rel(&self, c: &Convention, d: usize) -> bool {
        let l = self.labels[d];
        judged(l) && c.is_relevant(l)
    }
    /// Number of relevant judged documents, retrieved or not.
    fn total_rel(&self, c: &Convention) -> usize {
        (0..self.labels.len()).filter(|&d| self.rel(c, d)).count()
            + self
                .unretrieved
                .iter()
                .filter(|&&l| judged(l) && c.is_relevant(l))
                .count()
    }
    fn total_nonrel(&self, c: &Convention) -> usize {
        self.labels
            .iter()
            .chain(self.unretrieved)
            .filter(|&&l| judged(l) && !c.is_relevant(l))
            .count()
    }
    fn gain(&self, c: &Convention, d: usize) -> f64 {
        let l = self.labels[d];
        if judged(l) {
            c.gain.of(l)
        } else {
            0.0
        }
    }
}

/// Value of `metric` for one query under convention `c`.
pub fn query_metric(
    metric: Metric,
    q: &QueryInput<'_>,
    c: &Convention,
) -> Result<f64, Unsupported> {
    let n = q.labels.len();
    if uses_gain(metric) {
        gain_fits(q, c, metric)?;
    }
    Ok(match metric {
        Metric::Ndcg(k) => ndcg(q, c, k),
        Metric::Dcg(k) => {
            if short_zero(c, k, n) {
                0.0
            } else {
                dcg(q, c, k.unwrap_or(n).min(n))
            }
        }
        Metric::MeanNdcg => {
            if n == 0 {
                0.0
            } else {
                (1..=n).map(|k| ndcg(q, c, Some(k))).sum::<f64>() / n as f64
            }
        }
        Metric::Ap(k) => average_precision(q, c, k.unwrap_or(usize::MAX)),
        Metric::P(k) => precision(q, c, k),
        Metric::Rr(k) => reciprocal_rank(q, c, k.unwrap_or(usize::MAX)),
        Metric::RPrec => {
            let r = q.total_rel(c);
            if r == 0 {
                0.0
            } else {
                rel_in_top(q, c, r) / r as f64
            }
        }
        Metric::Err(k) => {
            resolved(q, metric)?;
            err(q, c, k.unwrap_or(n))
        }
        Metric::Bpref => {
            resolved(q, metric)?;
            bpref(q, c)
        }
        Metric::Inversions => inversions(q, c),
        Metric::RankEff => {
            let (r, nn) = (q.total_rel(c), q.total_nonrel(c));
            if r == 0 || nn == 0 {
                0.0
            } else {
                1.0 - inversions(q, c) / (r as f64 * nn as f64)
            }
        }
        Metric::Auc => {
            let p = pair_counts(q.labels, q.scores, None);
            if p.total == 0.0 {
                0.0
            } else {
                (p.correct + 0.5 * p.tied) / p.total
            }
        }
        Metric::Oer(st) => {
            let p = pair_counts(q.labels, q.scores, st);
            if p.total == 0.0 {
                0.0
            } else {
                (p.wrong + p.tied) / p.total
            }
        }
        Metric::Recall(k) => ratio(rel_in_top(q, c, k.unwrap_or(n)), q.total_rel(c) as f64),
        Metric::Success(k) => success(q, c, k),
        Metric::NumRet => n as f64,
        Metric::NumRel => q.total_rel(c) as f64,
        Metric::NumRelRet => rel_in_top(q, c, n),
        Metric::IPrec(level) => {
            resolved(q, metric)?;
            interpolated_precision(q, c, level.get())
        }
        Metric::SetP => ratio(rel_in_top(q, c, n), n as f64),
        Metric::SetR => ratio(rel_in_top(q, c, n), q.total_rel(c) as f64),
        Metric::SetF(beta) => {
            let found = rel_in_top(q, c, n);
            let (p, r) = (ratio(found, n as f64), ratio(found, q.total_rel(c) as f64));
            // trec_eval's weight: β itself, not van Rijsbergen's β² (the two agree at β = 1).
            let b = beta.get();
            ratio((1.0 + b) * p * r, b * p + r)
        }
        Metric::Judged(k) => {
            let k = k.unwrap_or(n).min(n);
            // In the qrels at all: a negative value (pooled, unjudged: −∞ here) counts, as in ir_measures.
            ratio(count_in_top(q, k, |d| !q.labels[d].is_nan()), k as f64)
        }
        Metric::InfAp => {
            resolved(q, metric)?;
            let relevant = |l: f32| c.is_relevant(l);
            crate::infap::inf_ap(q.labels, &q.ranking.order, q.total_rel(c), relevant)
        }
        Metric::Diversity(_) => {
            return Err(Unsupported {
                metric: metric.to_string(),
                reason: "needs diversity qrels (`qid subtopic docid rel`): evaluate a TREC run against them (`ltr eval --run R --qrels Q`)".into(),
            })
        }
        Metric::Rbp(p) => rbp(q, c, p.get()).0,
        Metric::RbpResidual(p) => rbp(q, c, p.get()).1,
        Metric::Tuned(base, params) => {
            let c = match params.rel {
                Some(r) => c.with_relevance_threshold(r as f32),
                None => *c,
            };
            if params.judged_only {
                let (labels, scores, ranking) = judged_part(q);
                let part = QueryInput {
                    labels: &labels,
                    scores: &scores,
                    ranking: &ranking,
                    unretrieved: q.unretrieved,
                };
                query_metric(base.metric(), &part, &c)?
            } else {
                query_metric(base.metric(), q, &c)?
            }
        }
    })
}

/// a / b, or 0 when b is 0.
fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// The judged retrieved documents only, in their ranked order (trec_eval's `-J`): labels, scores and a ranking of
/// the compacted list. Tie groups are rebuilt from the scores when the ranking has any.
fn judged_part(q: &QueryInput<'_>) -> (Vec<f32>, Vec<f64>, Ranking) {
    let keep: Vec<usize> = q
        .ranking
        .order
        .iter()
        .copied()
        .filter(|&d| judged(q.labels[d]))
        .collect();
    let labels: Vec<f32> = keep.iter().map(|&d| q.labels[d]).collect();
    let scores: Vec<f64> = keep.iter().map(|&d| q.scores[d]).collect();
    let m = keep.len();
    let groups = if q.ranking.is_resolved() {
        (0..m).map(|p| (p, 1)).collect()
    } else {
        let mut g = Vec::new();
        let mut start = 0;
        for p in 1..=m {
            if p == m || scores[p] != scores[start] {
                g.push((start, p - start));
                start = p;
            }
        }
        g
    };
    let ranking = Ranking {
        order: (0..m).collect(),
        groups,
    };
    (labels, scores, ranking)
}

/// Success@k: the probability that a relevant document is in the top k (1 or 0 without ties). Only the group that
/// straddles position k is uncertain: with m members, g relevant and t of its positions inside the top k, no
/// relevant member lands inside with probability C(m − g, t) / C(m, t).
fn success(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    for &(a, m) in &q.ranking.groups {
        if a >= k {
            break;
        }
        let g = rel_in_group(q, c, a, m);
        if g == 0 {
            continue;
        }
        let t = (a + m).min(k) - a;
        let mut none = 1.0;
        for i in 0..t {
            if m - g <= i {
                none = 0.0;
                break;
            }
            none *= (m - g - i) as f64 / (m - i) as f64;
        }
        return 1.0 - none;
    }
    0.0
}

/// Interpolated precision at recall `level` (trec_eval's `iprec_at_recall`): the largest precision at or below the
/// rank of the j-th relevant document, where trec_eval turns the level into a count j = ⌊level · R + 0.9⌋ (so that
/// the 11 standard levels keep the historical cut-offs: 0.7 of R = 3 is j = 2, not 3). Precision only rises at
/// relevant documents, so their ranks suffice; 0 when fewer than j are retrieved or R = 0.
fn interpolated_precision(q: &QueryInput<'_>, c: &Convention, level: f64) -> f64 {
    let r = q.total_rel(c);
    if r == 0 {
        return 0.0;
    }
    let need = (level * r as f64 + 0.9).floor() as usize;
    let (mut found, mut best) = (0usize, 0.0f64);
    for (i, &d) in q.ranking.order.iter().enumerate() {
        if q.rel(c, d) {
            found += 1;
            if found >= need {
                best = best.max(found as f64 / (i + 1) as f64);
            }
        }
    }
    best
}

/// RBP and its residual (Moffat & Zobel 2008), in expectation over tie groups: a group's relevant (unjudged) share
/// spreads evenly over its positions' weights p^(i−1).
fn rbp(q: &QueryInput<'_>, c: &Convention, p: f64) -> (f64, f64) {
    POWERS.with_borrow_mut(|t| rbp_with(q, c, p, t))
}

thread_local! {
    /// `p.powi(i)` for the last `p` seen by this thread, i = 0, 1, …: RBP's weights, computed once per thread
    /// instead of once per relevant document (the same calls, so the same bits).
    static POWERS: std::cell::RefCell<(u64, Vec<f64>)> = const { std::cell::RefCell::new((0, Vec::new())) };
}

fn rbp_with(q: &QueryInput<'_>, c: &Convention, p: f64, table: &mut (u64, Vec<f64>)) -> (f64, f64) {
    let depth = q.ranking.order.len();
    if table.0 != p.to_bits() {
        *table = (p.to_bits(), Vec::new());
    }
    let powers = &mut table.1;
    while powers.len() < depth.min(i32::MAX as usize) {
        powers.push(p.powi(powers.len() as i32));
    }
    let pow = |i: usize| powers.get(i).copied().unwrap_or_else(|| p.powi(i as i32));
    let (mut value, mut unjudged) = (0.0, 0.0);
    if q.ranking.is_resolved() {
        // Groups of one: the weight is p^i itself (a sum of one term divided by 1), added once.
        for (i, &d) in q.ranking.order.iter().enumerate() {
            let l = q.labels[d];
            if !judged(l) {
                unjudged += pow(i);
            } else if c.is_relevant(l) {
                value += pow(i);
            }
        }
        return (
            (1.0 - p) * value,
            (1.0 - p) * unjudged + p.powi(depth as i32),
        );
    }
    for &(a, m) in &q.ranking.groups {
        let docs = &q.ranking.order[a..a + m];
        let rel = docs.iter().filter(|&&d| q.rel(c, d)).count();
        let unj = docs.iter().filter(|&&d| !judged(q.labels[d])).count();
        if rel + unj == 0 {
            continue;
        }
        let w: f64 = (a..a + m).map(pow).sum::<f64>() / m as f64;
        value += rel as f64 * w;
        unjudged += unj as f64 * w;
    }
    (
        (1.0 - p) * value,
        (1.0 - p) * unjudged + p.powi(depth as i32),
    )
}

fn uses_gain(m: Metric) -> bool {
    matches!(
        m,
        Metric::Ndcg(_) | Metric::Dcg(_) | Metric::MeanNdcg | Metric::Err(_)
    )
}

/// The largest grade whose exponential gain 2^g − 1 (and a sum of a few million of them) stays finite in f64.
const MAX_EXPONENTIAL_GRADE: f32 = 1000.0;

/// An exponential gain overflows to infinity above [`MAX_EXPONENTIAL_GRADE`], which would make the metric NaN.
/// ERR's stopping probability (2^g − 1)/2^g_max is a probability only for grades up to `err_max_grade`.
fn gain_fits(q: &QueryInput<'_>, c: &Convention, m: Metric) -> Result<(), Unsupported> {
    gain_fits_labels(q.labels, c, m)
}

/// [`gain_fits`] on the labels alone.
pub(crate) fn gain_fits_labels(
    labels: &[f32],
    c: &Convention,
    m: Metric,
) -> Result<(), Unsupported> {
    if let Metric::Err(_) = m {
        return match labels.iter().find(|l| **l as f64 > c.err_max_grade) {
            None => Ok(()),
            Some(l) => Err(Unsupported {
                metric: m.to_string(),
                reason: format!(
                    "grade {l} is above the convention's largest ERR grade {}",
                    c.err_max_grade
                ),
            }),
        };
    }
    if c.gain != Gain::Exponential {
        return Ok(());
    }
    match labels.iter().find(|l| **l > MAX_EXPONENTIAL_GRADE) {
        None => Ok(()),
        Some(l) => Err(Unsupported {
            metric: m.to_string(),
            reason: format!(
                "grade {l} overflows the exponential gain 2^g − 1 (grades up to {MAX_EXPONENTIAL_GRADE}); use a linear-gain convention such as trec"
            ),
        }),
    }
}

fn resolved(q: &QueryInput<'_>, m: Metric) -> Result<(), Unsupported> {
    if q.ranking.is_resolved() {
        Ok(())
    } else {
        Err(Unsupported {
            metric: m.to_string(),
            reason: "has no exact tie-aware form here; use --ties input or docid".into(),
        })
    }
}

/// LETOR scripts: a cut-off metric is 0 for lists shorter than k.
pub(crate) fn short_zero(c: &Convention, k: Option<usize>, n: usize) -> bool {
    matches!(c.short_list, ShortList::Letor3 | ShortList::Letor4) && k.is_some_and(|k| k > n)
}

/// Expected DCG over the first `k` positions.
fn dcg(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    let mut s = 0.0;
    for &(start, len) in &q.ranking.groups {
        if start >= k {
            break;
        }
        let gsum: f64 = q.ranking.order[start..start + len]
            .iter()
            .map(|&d| q.gain(c, d))
            .sum();
        if gsum == 0.0 {
            continue;
        }
        let end = (start + len).min(k);
        let dsum: f64 = (start..end).map(|p| c.discount.at(p + 1)).sum();
        s += gsum * dsum / len as f64;
    }
    s
}

fn ideal_dcg(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    ideal_dcg_of(q.labels, q.unretrieved, c, k)
}

/// The ideal DCG at `k` of a query's retrieved and unretrieved labels.
pub(crate) fn ideal_dcg_of(labels: &[f32], unretrieved: &[f32], c: &Convention, k: usize) -> f64 {
    // Common case: whole labels 0..=15, judged, all retrieved: a counting pass instead of a sort.
    if unretrieved.is_empty()
        && labels
            .iter()
            .all(|&l| (0.0..=15.0).contains(&l) && l.fract() == 0.0)
    {
        let mut count = [0usize; 16];
        for &l in labels {
            count[l as usize] += 1;
        }
        let (mut p, mut total) = (0usize, 0.0);
        for level in gain_levels(c.gain) {
            let g = c.gain.of(level as f32);
            for _ in 0..count[level] {
                if p >= k {
                    return total;
                }
                total += g * c.discount.at(p + 1);
                p += 1;
            }
        }
        return total;
    }
    let gain = |l: f32| if judged(l) { c.gain.of(l) } else { 0.0 };
    let mut gains: Vec<f64> = labels.iter().map(|&l| gain(l)).collect();
    gains.extend(
        unretrieved
            .iter()
            .map(|&l| if judged(l) { c.gain.of(l) } else { 0.0 }),
    );
    gains.sort_by(|a, b| b.total_cmp(a));
    gains
        .iter()
        .take(k)
        .enumerate()
        .map(|(p, g)| g * c.discount.at(p + 1))
        .sum()
}

/// The whole labels 0–15 by gain, largest first (ties by label, larger first): the order in which the ideal
/// ranking visits them. By gain, not by label: the LETOR and MSLR tables give 0 to labels outside them.
pub(crate) fn gain_levels(gain: Gain) -> [usize; 16] {
    let mut levels: [usize; 16] = std::array::from_fn(|i| 15 - i);
    levels.sort_by(|&a, &b| gain.of(b as f32).total_cmp(&gain.of(a as f32)));
    levels
}

fn ndcg(q: &QueryInput<'_>, c: &Convention, k: Option<usize>) -> f64 {
    let n = q.labels.len();
    if short_zero(c, k, n) {
        return 0.0;
    }
    let kk = k.unwrap_or(n + q.unretrieved.len());
    let ideal = ideal_dcg(q, c, kk);
    if ideal <= 0.0 {
        return 0.0;
    }
    dcg(q, c, kk.min(n)) / ideal
}

/// Number of relevant documents in the tie group at positions `start..start + len`.
fn rel_in_group(q: &QueryInput<'_>, c: &Convention, start: usize, len: usize) -> usize {
    q.ranking.order[start..start + len]
        .iter()
        .filter(|&&d| q.rel(c, d))
        .count()
}

/// Expected number of relevant documents in the first `k` positions.
fn rel_in_top(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    count_in_top(q, k, |d| q.rel(c, d))
}

/// Expected number of documents satisfying `keep` in the first `k` positions.
fn count_in_top(q: &QueryInput<'_>, k: usize, keep: impl Fn(usize) -> bool) -> f64 {
    let mut s = 0.0;
    for &(start, len) in &q.ranking.groups {
        if start >= k {
            break;
        }
        let g = q.ranking.order[start..start + len]
            .iter()
            .filter(|&&d| keep(d))
            .count();
        let inside = (start + len).min(k) - start;
        s += g as f64 * inside as f64 / len as f64;
    }
    s
}

fn precision(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    let n = q.labels.len();
    let denom = match c.short_list {
        ShortList::Letor3 if k > n => return 0.0,
        ShortList::Present => k.min(n),
        _ => k,
    };
    if denom == 0 {
        return 0.0;
    }
    rel_in_top(q, c, k) / denom as f64
}

/// AP = (1/R) Σ over relevant documents within the cut-off of precision at their rank, in expectation over ties:
/// a relevant document of a group starting after position `a`, of size m with g relevant, sits at offset j with
/// probability 1/m and then has (j−1)(g−1)/(m−1) relevant group-mates above it in expectation.
fn average_precision(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    let r = q.total_rel(c);
    if r == 0 {
        return 0.0;
    }
    let mut sum = 0.0;
    let mut rel_before = 0usize;
    for &(a, m) in &q.ranking.groups {
        if a >= k {
            break;
        }
        let g = rel_in_group(q, c, a, m);
        if g > 0 {
            let mut acc = 0.0;
            for j in 1..=m {
                if a + j > k {
                    break;
                }
                let mates = if m > 1 {
                    (j - 1) as f64 * (g - 1) as f64 / (m - 1) as f64
                } else {
                    0.0
                };
                acc += (rel_before as f64 + 1.0 + mates) / (a + j) as f64;
            }
            sum += g as f64 * acc / m as f64;
        }
        rel_before += g;
    }
    sum / r as f64
}

fn reciprocal_rank(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    for &(a, m) in &q.ranking.groups {
        if a >= k {
            break;
        }
        let g = rel_in_group(q, c, a, m);
        if g == 0 {
            continue;
        }
        // P(first relevant of the group at offset j) = C(m−j, g−1)/C(m, g).
        let mut p = g as f64 / m as f64;
        let mut e = 0.0;
        for j in 1..=(m - g + 1) {
            if a + j > k {
                break;
            }
            e += p / (a + j) as f64;
            if m > j {
                p *= (m + 1 - j - g) as f64 / (m - j) as f64;
            }
        }
        return e;
    }
    0.0
}

fn err(q: &QueryInput<'_>, c: &Convention, k: usize) -> f64 {
    let denom = c.err_max_grade.exp2();
    let mut not_stopped = 1.0;
    let mut s = 0.0;
    for (p, &d) in q.ranking.order.iter().take(k).enumerate() {
        let l = q.labels[d];
        let l = if judged(l) { (l as f64).max(0.0) } else { 0.0 };
        let r = Gain::Exponential.of(l as f32) / denom;
        s += not_stopped * r / (p + 1) as f64;
        not_stopped *= 1.0 - r;
    }
    s
}

fn bpref(q: &QueryInput<'_>, c: &Convention) -> f64 {
    let r = q.total_rel(c);
    if r == 0 {
        return 0.0;
    }
    let n = q.total_nonrel(c);
    let mut nonrel_so_far = 0usize;
    let mut s = 0.0;
    for &d in &q.ranking.order {
        let l = q.labels[d];
        if !judged(l) {
            continue;
        }
        if c.is_relevant(l) {
            if nonrel_so_far > 0 {
                s += 1.0 - nonrel_so_far.min(r) as f64 / n.min(r) as f64;
            } else {
                s += 1.0;
            }
        } else {
            nonrel_so_far += 1;
        }
    }
    s / r as f64
}

/// Q: (relevant, non-relevant) pairs with the relevant document ranked lower; tied pairs count one half.
fn inversions(q: &QueryInput<'_>, c: &Convention) -> f64 {
    let mut nonrel_before = 0usize;
    let mut s = 0.0;
    for &(a, m) in &q.ranking.groups {
        let docs = &q.ranking.order[a..a + m];
        let g = rel_in_group(q, c, a, m);
        let nr = docs
            .iter()
            .filter(|&&d| judged(q.labels[d]) && !q.rel(c, d))
            .count();
        s += g as f64 * nonrel_before as f64 + 0.5 * g as f64 * nr as f64;
        nonrel_before += nr;
    }
    s
}

/// Counts over pairs of judged documents with different labels (optionally only labels `s` > `t`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairCounts {
    /// Higher label scored strictly higher.
    pub correct: f64,
    /// Equal scores.
    pub tied: f64,
    /// Higher label scored strictly lower.
    pub wrong: f64,
    /// All pairs counted.
    pub total: f64,
}

/// Pair counts in O(n log n + n·K) (K distinct labels): sort by score, sweep tie groups keeping per-label counts.
pub fn pair_counts(labels: &[f32], scores: &[f64], only: Option<(u8, u8)>) -> PairCounts {
    let keep = |l: f32| judged(l) && only.is_none_or(|(s, t)| l == s as f32 || l == t as f32);
    let mut levels: Vec<f32> = labels.iter().copied().filter(|&l| keep(l)).collect();
    levels.sort_by(f32::total_cmp);
    levels.dedup();
    let k = levels.len();
    let mut docs: Vec<usize> = (0..labels.len()).filter(|&d| keep(labels[d])).collect();
    docs.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    let level = |l: f32| {
        levels
            .binary_search_by(|x| x.total_cmp(&l))
            .expect("present")
    };
    let mut below = vec![0usize; k]; // documents with strictly lower score, per level
    let mut out = PairCounts::default();
    let mut i = 0;
    while i < docs.len() {
        let mut j = i;
        while j < docs.len() && scores[docs[j]] == scores[docs[i]] {
            j += 1;
        }
        let mut group = vec![0usize; k];
        for &d in &docs[i..j] {
            let li = level(labels[d]);
            // Against lower-scored documents: lower label → correct, higher label → wrong.
            out.correct += below[..li].iter().sum::<usize>() as f64;
            out.wrong += below[li + 1..].iter().sum::<usize>() as f64;
            group[li] += 1;
        }
        let gsum: usize = group.iter().sum();
        let same: usize = group.iter().map(|g| g * g).sum();
        out.tied += ((gsum * gsum - same) / 2) as f64;
        for (b, g) in below.iter_mut().zip(&group) {
            *b += g;
        }
        i = j;
    }
    out.total = out.correct + out.wrong + out.tied;
    out
}
