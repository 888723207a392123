//! A per-query IR measure written as a sum of per-position terms with a running prefix state, so that exchanging
//! two documents costs O(distance between them) instead of a re-evaluation of the list. This is what makes the
//! exact line search of Coordinate Ascent affordable; the values agree with `ltr_metrics::query_metric` (tested).

use ltr_core::{LtrError, Result};
use ltr_metrics::{Convention, Gain, Metric, ShortList};

/// The measures a listwise learner can optimise, with their evaluator convention.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListMeasure {
    metric: Metric,
    convention: Convention,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// term = gain · discount(r)
    Dcg,
    /// term = rel (P@k)
    Precision,
    /// term = rel · (rel above + 1)/r
    AveragePrecision,
    /// term = rel/r for the first relevant document
    ReciprocalRank,
    /// term = P(not stopped above) · R/r
    ExpectedReciprocalRank,
}

impl ListMeasure {
    /// `metric` under `convention`. Supported: `NDCG[@k]`, `DCG[@k]`, `MAP[@k]`, `P@k`, `MRR[@k]`, `ERR[@k]` — the measures
    /// that are sums over positions; the others (bpref, AUC, …) are refused with the list.
    pub fn new(metric: Metric, convention: Convention) -> Result<Self> {
        let kind = match metric {
            Metric::Ndcg(_) | Metric::Dcg(_) => Kind::Dcg,
            Metric::P(_) => Kind::Precision,
            Metric::Ap(_) => Kind::AveragePrecision,
            Metric::Rr(_) => Kind::ReciprocalRank,
            Metric::Err(_) => Kind::ExpectedReciprocalRank,
            other => {
                return Err(LtrError::param(
                    "metric",
                    format!(
                        "cannot optimise {other} directly; choose NDCG[@k], DCG[@k], MAP[@k], P@k, MRR[@k] or ERR[@k]"
                    ),
                ))
            }
        };
        Ok(Self {
            metric,
            convention,
            kind,
        })
    }

    /// The metric.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// The convention.
    pub fn convention(&self) -> &Convention {
        &self.convention
    }

    /// The per-query form for a query with these labels.
    // pub for the tests in tests/unit/measure.rs; not API.
    #[doc(hidden)]
    pub fn query(&self, labels: &[f32]) -> Result<QueryMeasure> {
        let c = &self.convention;
        let n = labels.len();
        let judged = |l: f32| l.is_finite();
        let rel = |l: f32| judged(l) && c.is_relevant(l);
        let cut_of = |k: Option<usize>| k.unwrap_or(n).min(n);
        let short_zero = |k: Option<usize>| {
            matches!(c.short_list, ShortList::Letor3 | ShortList::Letor4)
                && k.is_some_and(|k| k > n)
        };
        let gain = |l: f32| if judged(l) { c.gain.of(l) } else { 0.0 };
        let (weight, scale, cut): (Vec<f64>, f64, usize) = match self.metric {
            Metric::Ndcg(k) | Metric::Dcg(k) => {
                if c.gain == Gain::Exponential {
                    if let Some(l) = labels.iter().find(|&&l| l > 1000.0) {
                        return Err(LtrError::Measure(
                            format!("grade {l} overflows the exponential gain 2^g − 1").into(),
                        ));
                    }
                }
                let w: Vec<f64> = labels.iter().map(|&l| gain(l)).collect();
                let cut = cut_of(k);
                let scale = if short_zero(k) {
                    0.0
                } else if matches!(self.metric, Metric::Dcg(_)) {
                    1.0
                } else {
                    let mut sorted = w.clone();
                    sorted.sort_by(|a, b| b.total_cmp(a));
                    let ideal: f64 = sorted
                        .iter()
                        .take(cut)
                        .enumerate()
                        .map(|(p, g)| g * c.discount.at(p + 1))
                        .sum();
                    if ideal > 0.0 {
                        1.0 / ideal
                    } else {
                        0.0
                    }
                };
                (w, scale, cut)
            }
            Metric::P(k) => {
                let denom = match c.short_list {
                    ShortList::Letor3 if k > n => 0,
                    ShortList::Present => k.min(n),
                    _ => k,
                };
                let w = labels.iter().map(|&l| rel(l) as u8 as f64).collect();
                let scale = if denom == 0 { 0.0 } else { 1.0 / denom as f64 };
                (w, scale, k.min(n))
            }
            Metric::Ap(k) => {
                let w: Vec<f64> = labels.iter().map(|&l| rel(l) as u8 as f64).collect();
                let r: f64 = w.iter().sum();
                (w, if r > 0.0 { 1.0 / r } else { 0.0 }, cut_of(k))
            }
            Metric::Rr(k) => (
                labels.iter().map(|&l| rel(l) as u8 as f64).collect(),
                1.0,
                cut_of(k),
            ),
            Metric::Err(k) => {
                if let Some(l) = labels.iter().find(|&&l| l as f64 > c.err_max_grade) {
                    return Err(LtrError::Measure(
                        format!(
                            "grade {l} is above the convention's largest ERR grade {}",
                            c.err_max_grade
                        )
                        .into(),
                    ));
                }
                let denom = c.err_max_grade.exp2();
                let w = labels
                    .iter()
                    .map(|&l| {
                        let l = if judged(l) { l.max(0.0) } else { 0.0 };
                        Gain::Exponential.of(l) / denom
                    })
                    .collect();
                (w, 1.0, cut_of(k))
            }
            _ => unreachable!("ListMeasure::new admits only the position-sum measures"),
        };
        // Every order of documents with equal weights has the same value: then nothing can change it.
        let constant = scale == 0.0 || cut == 0 || weight.windows(2).all(|p| p[0] == p[1]);
        let discount = if self.kind == Kind::Dcg {
            (0..cut).map(|r| c.discount.at(r + 1)).collect()
        } else {
            Vec::new()
        };
        let mut classes = weight.clone();
        classes.sort_by(f64::total_cmp);
        classes.dedup();
        let class_of = weight
            .iter()
            .map(|w| {
                classes
                    .binary_search_by(|c| c.total_cmp(w))
                    .expect("every weight has a class") as u32
            })
            .collect();
        let mut measure = QueryMeasure {
            kind: self.kind,
            weight,
            scale,
            cut,
            constant,
            discount,
            classes,
            class_of,
            constant_value: 0.0,
        };
        if constant {
            measure.constant_value = measure.value(&(0..n as u32).collect::<Vec<_>>());
        }
        Ok(measure)
    }
}

/// One query's measure: a weight per document (gain, relevance or stopping probability), the positions that
/// count and the normaliser.
#[derive(Debug, Clone)]
// pub for the tests in tests/unit/measure.rs; not API.
#[doc(hidden)]
pub struct QueryMeasure {
    kind: Kind,
    pub(crate) weight: Vec<f64>,
    scale: f64,
    pub(crate) cut: usize,
    /// No order changes the value (no relevant document, all labels equal, a LETOR short list…).
    pub constant: bool,
    discount: Vec<f64>,
    /// The distinct document weights, increasing (the classes a line-search sweep counts).
    pub(crate) classes: Vec<f64>,
    /// Each document's index in `classes`.
    pub(crate) class_of: Vec<u32>,
    /// The value of every ranking when `constant`.
    pub constant_value: f64,
}

impl QueryMeasure {
    fn initial_prefix(&self) -> f64 {
        match self.kind {
            Kind::ExpectedReciprocalRank => 1.0,
            _ => 0.0,
        }
    }

    /// Term of the document with weight `w` at 0-based position `r`, with `prefix` the state above it.
    #[inline]
    fn term(&self, r: usize, w: f64, prefix: f64) -> f64 {
        match self.kind {
            Kind::Dcg => w * self.discount[r],
            Kind::Precision => w,
            Kind::AveragePrecision => w * (prefix + w) / (r + 1) as f64,
            Kind::ReciprocalRank => {
                if prefix == 0.0 {
                    w / (r + 1) as f64
                } else {
                    0.0
                }
            }
            Kind::ExpectedReciprocalRank => prefix * w / (r + 1) as f64,
        }
    }

    #[inline]
    fn next_prefix(&self, prefix: f64, w: f64) -> f64 {
        match self.kind {
            Kind::ExpectedReciprocalRank => prefix * (1.0 - w),
            _ => prefix + w,
        }
    }

    /// The prefix state above a position with `counts[c]` documents of class `c` above it.
    pub(crate) fn prefix_of(&self, counts: &[u32]) -> f64 {
        let classes = &self.classes;
        match self.kind {
            Kind::Dcg | Kind::Precision => 0.0,
            Kind::AveragePrecision | Kind::ReciprocalRank => {
                classes.iter().zip(counts).map(|(w, &c)| w * c as f64).sum()
            }
            Kind::ExpectedReciprocalRank => classes
                .iter()
                .zip(counts)
                .map(|(w, &c)| (1.0 - w).powi(c as i32))
                .product(),
        }
    }

    /// Scaled terms of documents with weights `upper` at 0-based position `r` and `lower` at `r + 1`, below a
    /// prefix state `prefix`.
    #[inline]
    pub(crate) fn pair_terms(&self, r: usize, upper: f64, lower: f64, prefix: f64) -> f64 {
        let mut s = 0.0;
        if r < self.cut {
            s += self.term(r, upper, prefix);
            if r + 1 < self.cut {
                s += self.term(r + 1, lower, self.next_prefix(prefix, upper));
            }
        }
        s * self.scale
    }

    /// |change of the measure| when documents of weights `wi` at 0-based position `ri` and `wj` at `rj` trade
    /// places (NDCG/DCG: |(g_i − g_j)(D(r_i) − D(r_j))| / IDCG, D = 0 past the cut-off) — LambdaRank's weight.
    pub(crate) fn swap_gain(&self, ri: usize, rj: usize, wi: f64, wj: f64) -> f64 {
        debug_assert_eq!(self.kind, Kind::Dcg);
        let d = |r: usize| self.discount.get(r).copied().unwrap_or(0.0);
        ((wi - wj) * (d(ri) - d(rj))).abs() * self.scale
    }

    /// The value of the ranking `order` (documents by position, best first).
    // pub for the tests in tests/unit/measure.rs; not API.
    #[doc(hidden)]
    pub fn value(&self, order: &[u32]) -> f64 {
        self.value_of(order.iter().copied())
    }

    /// [`QueryMeasure::value`] of the ranking whose documents `order` yields, best first.
    #[inline]
    pub(crate) fn value_of(&self, order: impl IntoIterator<Item = u32>) -> f64 {
        let mut prefix = self.initial_prefix();
        let mut s = 0.0;
        for (r, d) in order.into_iter().take(self.cut).enumerate() {
            let w = self.weight[d as usize];
            s += self.term(r, w, prefix);
            prefix = self.next_prefix(prefix, w);
        }
        s * self.scale
    }

    /// A ranking that can exchange documents and report the change of the measure (the tests' oracle).
    // pub for the tests in tests/unit/measure.rs; not API.
    #[doc(hidden)]
    pub fn state(&self, order: Vec<u32>) -> RankingState<'_> {
        let mut pos = vec![0u32; order.len()];
        for (p, &d) in order.iter().enumerate() {
            pos[d as usize] = p as u32;
        }
        let mut prefix = vec![0.0; self.cut + 1];
        prefix[0] = self.initial_prefix();
        for r in 0..self.cut {
            prefix[r + 1] = self.next_prefix(prefix[r], self.weight[order[r] as usize]);
        }
        RankingState {
            m: self,
            order,
            pos,
            prefix,
        }
    }
}

/// A ranking of one query under a [`QueryMeasure`], updated by exchanges.
// pub for the tests in tests/unit/measure.rs; not API.
#[doc(hidden)]
pub struct RankingState<'a> {
    m: &'a QueryMeasure,
    order: Vec<u32>,
    pos: Vec<u32>,
    /// prefix[r]: the state above position r (relevant count, or the probability of not having stopped).
    prefix: Vec<f64>,
}

impl RankingState<'_> {
    /// Position of document `d`.
    #[inline]
    pub fn pos(&self, d: u32) -> usize {
        self.pos[d as usize] as usize
    }

    /// Exchange the documents at positions `p < q`; returns the change of the measure.
    pub fn exchange(&mut self, p: usize, q: usize) -> f64 {
        let (a, b) = (self.order[p], self.order[q]);
        self.order.swap(p, q);
        self.pos[a as usize] = q as u32;
        self.pos[b as usize] = p as u32;
        let m = self.m;
        if p >= m.cut || m.weight[a as usize] == m.weight[b as usize] {
            return 0.0;
        }
        let hi = q.min(m.cut - 1);
        let mut old = 0.0;
        for r in p..=hi {
            // The old list had `a` at p and `b` at q; every other position is unchanged.
            let old_doc = if r == p {
                a
            } else if r == q {
                b
            } else {
                self.order[r]
            };
            old += m.term(r, m.weight[old_doc as usize], self.prefix[r]);
        }
        let mut new = 0.0;
        let mut prefix = self.prefix[p];
        for r in p..=hi {
            let w = m.weight[self.order[r] as usize];
            new += m.term(r, w, prefix);
            prefix = m.next_prefix(prefix, w);
            self.prefix[r + 1] = prefix;
        }
        (new - old) * m.scale
    }
}
