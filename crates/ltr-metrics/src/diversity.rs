//! Novelty and diversity measures over subtopic judgments, as the TREC Web track's `ndeval` computes them: α-nDCG
//! (Clarke et al. 2008), intent-aware ERR (Chapelle et al. 2011; Agrawal et al. 2009), NRBP (Clarke et al. 2009),
//! intent-aware precision and MAP (Agrawal et al. 2009) and subtopic recall (Zhai et al. 2003).
//!
//! ndeval's conventions, followed here:
//! - Judgments are binary per subtopic: a document is relevant to subtopic s when its grade for s is ≥ `rel`
//!   (default 1; ndeval caps grades at 1). N, the number of subtopics, counts only the subtopics with at least one
//!   relevant document; a query with N = 0 scores 0 on every measure (ndeval prints NaN for its nNRBP).
//! - A retrieved document missing from the qrels is relevant to nothing.
//! - The document at rank r gains Σ over its subtopics s of (1 − α)^c, c the number of documents above r relevant
//!   to s; the discount is 1/log2(r + 1).
//! - The ideal ranking is ndeval's greedy one: at each rank the judged document of largest gain, ties to the larger
//!   doc id (byte order).
//! - "Collection-independent" normalisation (α-DCG@k, ERR-IA@k, NRBP) divides by the value of a list whose every
//!   document is relevant to all N subtopics; "collection-dependent" (α-nDCG@k, nERR-IA@k, nNRBP) by the greedy
//!   ideal ranking's value. ndeval leaves α-DCG@1 and ERR-IA@1 unnormalised (its normalising loop starts at rank 2);
//!   here they are normalised like every other cut-off, so at k = 1 they are ndeval's values divided by N.
//! - P-IA@k divides by k even when fewer documents were retrieved; NRBP and MAP-IA run over the whole list.
//! - The ranking is the convention's: under `trec` score descending, ties by doc id descending, which is
//!   `ndeval -traditional` (plain ndeval sorts by the rank column, which ltr, like trec_eval, ignores).
//! - Queries evaluated: those in both the run and the qrels; the mean is over them (ndeval without `-c`).

use std::collections::HashMap;
use std::fmt;

use crate::real::Real;

/// Diversity qrels: qid → docid → `(subtopic, grade)` judgments, subtopics ascending. Read by
/// [`read_diversity_qrels`](crate::read_diversity_qrels) from ndeval's `qid subtopic docid rel` lines.
pub type DiversityQrels = HashMap<String, HashMap<String, Vec<(u64, i64)>>>;

/// Which diversity measure (see [`DiversityMeasure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiversityKind {
    /// α-nDCG@k (Clarke et al. 2008), normalised by the greedy ideal ranking (ndeval `alpha-nDCG`).
    AlphaNdcg,
    /// α-DCG@k with ndeval's collection-independent normalisation (ndeval `alpha-DCG`).
    AlphaDcg,
    /// ERR-IA@k (Chapelle et al. 2011; Agrawal et al. 2009), collection-independent (ndeval `ERR-IA`).
    ErrIa,
    /// nERR-IA@k: ERR-IA normalised by the greedy ideal ranking (ndeval `nERR-IA`).
    NErrIa,
    /// NRBP (Clarke et al. 2009), collection-independent (ndeval `NRBP`).
    Nrbp,
    /// nNRBP: NRBP normalised by the greedy ideal ranking (ndeval `nNRBP`).
    NNrbp,
    /// Intent-aware average precision (ndeval `MAP-IA`).
    ApIa,
    /// Intent-aware precision at k (ndeval `P-IA`).
    PIa,
    /// Subtopic recall at k (Zhai et al. 2003; ndeval `strec`).
    StRecall,
}

impl DiversityKind {
    /// ir_measures' name.
    pub fn name(self) -> &'static str {
        match self {
            DiversityKind::AlphaNdcg => "alpha_nDCG",
            DiversityKind::AlphaDcg => "alpha_DCG",
            DiversityKind::ErrIa => "ERR_IA",
            DiversityKind::NErrIa => "nERR_IA",
            DiversityKind::Nrbp => "NRBP",
            DiversityKind::NNrbp => "nNRBP",
            DiversityKind::ApIa => "AP_IA",
            DiversityKind::PIa => "P_IA",
            DiversityKind::StRecall => "StRecall",
        }
    }
    /// Whether the measure takes a cut-off (it then needs one).
    pub fn has_cutoff(self) -> bool {
        !matches!(
            self,
            DiversityKind::Nrbp | DiversityKind::NNrbp | DiversityKind::ApIa
        )
    }
    /// Whether α is a parameter (ir_measures' parameter sets: α-(n)DCG and (n)NRBP).
    pub fn takes_alpha(self) -> bool {
        matches!(
            self,
            DiversityKind::AlphaNdcg
                | DiversityKind::AlphaDcg
                | DiversityKind::Nrbp
                | DiversityKind::NNrbp
        )
    }
    /// Whether `judged_only=True` is accepted (as in ir_measures: not for NRBP and StRecall).
    pub fn takes_judged_only(self) -> bool {
        !matches!(
            self,
            DiversityKind::Nrbp | DiversityKind::NNrbp | DiversityKind::StRecall
        )
    }
}

/// A diversity measure with its parameters (ir_measures' syntax: `alpha_nDCG(alpha=0.5)@20`, `NRBP(beta=0.8)`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DiversityMeasure {
    /// The measure.
    pub kind: DiversityKind,
    /// Cut-off (the measures with one need it).
    pub k: Option<usize>,
    /// Redundancy intolerance α ∈ [0, 1] (default 0.5; fixed at 0.5 for the measures that do not take it).
    pub alpha: Real,
    /// NRBP's patience β ∈ [0, 1] (default 0.5).
    pub beta: Real,
    /// `rel=`: the smallest grade relevant to a subtopic (default: the convention's threshold, 1 under `trec`).
    pub rel: Option<i32>,
    /// `judged_only=True`: drop retrieved documents absent from the qrels first.
    pub judged_only: bool,
}

impl fmt::Display for DiversityMeasure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut opts = Vec::new();
        if self.alpha.get() != 0.5 {
            opts.push(format!("alpha={}", self.alpha));
        }
        if self.beta.get() != 0.5 {
            opts.push(format!("beta={}", self.beta));
        }
        if self.judged_only {
            opts.push("judged_only=True".to_string());
        }
        if let Some(r) = self.rel {
            opts.push(format!("rel={r}"));
        }
        write!(f, "{}", self.kind.name())?;
        if !opts.is_empty() {
            write!(f, "({})", opts.join(","))?;
        }
        match self.k {
            Some(k) => write!(f, "@{k}"),
            None => Ok(()),
        }
    }
}

/// One query's subtopic judgments, indexed: documents → the subtopics (0..n_subtopics) they are relevant to.
struct QueryJudgments<'a> {
    relevant: HashMap<&'a str, Vec<usize>>,
    /// N: subtopics with at least one relevant document.
    n_subtopics: usize,
    /// Relevant documents per subtopic.
    per_subtopic: Vec<usize>,
}

impl<'a> QueryJudgments<'a> {
    fn new(docs: &'a HashMap<String, Vec<(u64, i64)>>, rel: i64) -> Self {
        let mut subtopics: Vec<u64> = docs
            .values()
            .flatten()
            .filter(|(_, g)| *g >= rel)
            .map(|(s, _)| *s)
            .collect();
        subtopics.sort_unstable();
        subtopics.dedup();
        let index = |s: u64| subtopics.binary_search(&s).ok();
        let mut per_subtopic = vec![0usize; subtopics.len()];
        let mut relevant = HashMap::new();
        for (d, js) in docs {
            let mut rs: Vec<usize> = js
                .iter()
                .filter(|(_, g)| *g >= rel)
                .filter_map(|(s, _)| index(*s))
                .collect();
            rs.sort_unstable();
            rs.dedup();
            for &s in &rs {
                per_subtopic[s] += 1;
            }
            if !rs.is_empty() {
                relevant.insert(d.as_str(), rs);
            }
        }
        QueryJudgments {
            relevant,
            n_subtopics: subtopics.len(),
            per_subtopic,
        }
    }

    /// ndeval's greedy ideal ranking of the relevant documents (documents relevant to nothing add nothing, so they
    /// are left out): each rank takes the largest gain, ties to the larger doc id.
    fn ideal(&self, alpha: f64) -> Vec<&[usize]> {
        let mut left: Vec<(&str, &[usize])> = self
            .relevant
            .iter()
            .map(|(d, s)| (*d, s.as_slice()))
            .collect();
        let mut gain = vec![1.0f64; self.n_subtopics];
        let mut out = Vec::with_capacity(left.len());
        while !left.is_empty() {
            let mut best = 0;
            let mut best_score = f64::NEG_INFINITY;
            for (i, (d, subs)) in left.iter().enumerate() {
                let score: f64 = subs.iter().map(|&s| gain[s]).sum();
                if score > best_score || (score == best_score && *d > left[best].0) {
                    best = i;
                    best_score = score;
                }
            }
            let (_, subs) = left.swap_remove(best);
            for &s in subs {
                gain[s] *= 1.0 - alpha;
            }
            out.push(subs);
        }
        out
    }
}

/// ndeval's rank discount: ln 2 / ln(r + 1) for the 1-based rank r.
fn discount(r: usize) -> f64 {
    std::f64::consts::LN_2 / ((r + 1) as f64).ln()
}

/// The novelty-discounted gains of a ranked list: Σ over the document's subtopics of (1 − α)^(earlier documents
/// relevant to the subtopic).
fn gains(list: &[&[usize]], n_subtopics: usize, alpha: f64) -> Vec<f64> {
    let mut left = vec![1.0f64; n_subtopics];
    list.iter()
        .map(|subs| {
            let mut g = 0.0;
            for &s in subs.iter() {
                g += left[s];
                left[s] *= 1.0 - alpha;
            }
            g
        })
        .collect()
}

/// Σ over the first k ranks of gain · weight(rank).
fn weighted(gains: &[f64], k: usize, weight: impl Fn(usize) -> f64) -> f64 {
    gains
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g * weight(i + 1))
        .sum()
}

/// The value of a list whose every document is relevant to all N subtopics, under `weight` (ndeval's "ideal ideal").
fn ideal_ideal(n: usize, k: usize, alpha: f64, weight: impl Fn(usize) -> f64) -> f64 {
    let mut g = n as f64;
    let mut s = 0.0;
    for r in 1..=k {
        s += g * weight(r);
        g *= 1.0 - alpha;
    }
    s
}

fn ratio(a: f64, b: f64) -> f64 {
    if a == 0.0 {
        0.0
    } else {
        a / b
    }
}

/// One query's value: `ranked` are the retrieved doc ids in ranked order (unjudged ones included unless the
/// measure is `judged_only`), `docs` the query's subtopic judgments, `default_rel` the convention's threshold.
pub(crate) fn query_diversity(
    m: &DiversityMeasure,
    ranked: &[&str],
    docs: &HashMap<String, Vec<(u64, i64)>>,
    default_rel: f32,
) -> f64 {
    let rel = m.rel.map_or_else(|| default_rel.ceil() as i64, i64::from);
    let j = QueryJudgments::new(docs, rel);
    let n = j.n_subtopics;
    if n == 0 {
        return 0.0;
    }
    let none: &[usize] = &[];
    let list: Vec<&[usize]> = ranked
        .iter()
        .filter(|d| !m.judged_only || docs.contains_key(**d))
        .map(|d| j.relevant.get(d).map_or(none, Vec::as_slice))
        .collect();
    let (alpha, beta) = (m.alpha.get(), m.beta.get());
    let k = m.k.unwrap_or(list.len());
    let run = gains(&list, n, alpha);
    let ideal = || gains(&j.ideal(alpha), n, alpha);
    let rr = |r: usize| 1.0 / r as f64;
    let rbp = |r: usize| beta.powi(r as i32 - 1);
    match m.kind {
        DiversityKind::AlphaDcg => weighted(&run, k, discount) / ideal_ideal(n, k, alpha, discount),
        DiversityKind::AlphaNdcg => {
            ratio(weighted(&run, k, discount), weighted(&ideal(), k, discount))
        }
        DiversityKind::ErrIa => weighted(&run, k, rr) / ideal_ideal(n, k, alpha, rr),
        DiversityKind::NErrIa => ratio(weighted(&run, k, rr), weighted(&ideal(), k, rr)),
        DiversityKind::Nrbp => {
            (1.0 - (1.0 - alpha) * beta) / n as f64 * weighted(&run, usize::MAX, rbp)
        }
        DiversityKind::NNrbp => ratio(
            weighted(&run, usize::MAX, rbp),
            weighted(&ideal(), usize::MAX, rbp),
        ),
        DiversityKind::ApIa => {
            let mut seen = vec![0usize; n];
            let mut total = vec![0.0f64; n];
            for (i, subs) in list.iter().enumerate() {
                for &s in subs.iter() {
                    seen[s] += 1;
                    total[s] += seen[s] as f64 / (i + 1) as f64;
                }
            }
            (0..n)
                .map(|s| total[s] / j.per_subtopic[s] as f64)
                .sum::<f64>()
                / n as f64
        }
        DiversityKind::PIa => {
            let hits: usize = list.iter().take(k).map(|s| s.len()).sum();
            hits as f64 / (k as f64 * n as f64)
        }
        DiversityKind::StRecall => {
            let mut covered = vec![false; n];
            for subs in list.iter().take(k) {
                for &s in subs.iter() {
                    covered[s] = true;
                }
            }
            covered.iter().filter(|&&c| c).count() as f64 / n as f64
        }
    }
}
