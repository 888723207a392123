//! Evaluator conventions: the choices on which trec_eval, the LETOR scripts, the MSLR script, LightGBM and
//! RankLib disagree, gathered under one name each.

use std::fmt;
use std::str::FromStr;

/// Gain of a document with a given label, used by NDCG/DCG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gain {
    /// The LETOR 3.0/4.0 scripts' table: 0→0, 1→1, 2→3; any other label gains 0 (undefined in the Perl hash).
    LetorTable,
    /// The MSLR script's table: 0→0, 1→1, 2→3, 3→7, 4→15; any other label gains 0.
    MslrTable,
    /// `2^label − 1` for any label (Burges et al.; RankLib, LightGBM, gdeval).
    Exponential,
    /// The label itself (trec_eval's `ndcg_cut`); negative labels gain 0.
    Linear,
}

impl Gain {
    /// Gain of `label`.
    #[inline]
    pub fn of(self, label: f32) -> f64 {
        let l = label as f64;
        match self {
            Gain::LetorTable => {
                if label == 1.0 {
                    1.0
                } else if label == 2.0 {
                    3.0
                } else {
                    0.0
                }
            }
            Gain::MslrTable => {
                if (0.0..=4.0).contains(&l) && l.fract() == 0.0 {
                    2f64.powi(l as i32) - 1.0
                } else {
                    0.0
                }
            }
            Gain::Exponential => l.exp2() - 1.0,
            Gain::Linear => l.max(0.0),
        }
    }
}

/// Position discount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discount {
    /// Järvelin–Kekäläinen with base 2 (the LETOR scripts): 1 at ranks 1 and 2, then 1/log2(r).
    Letor,
    /// 1/log2(r + 1) at every rank (Burges; trec_eval; RankLib ≥ 2; LightGBM).
    Log2,
}

impl Discount {
    /// Discount at 1-based rank `r`.
    #[inline]
    pub fn at(self, r: usize) -> f64 {
        match self {
            Discount::Letor => {
                if r <= 2 {
                    1.0
                } else {
                    1.0 / (r as f64).log2()
                }
            }
            Discount::Log2 => 1.0 / ((r + 1) as f64).log2(),
        }
    }
}

/// What a cut-off metric does when the list has fewer than k documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShortList {
    /// Eval-Score-3.0.pl: NDCG@k, DCG@k and P@k are 0 when n < k.
    Letor3,
    /// Eval-Score-4.0.pl and the MSLR script: NDCG@k and DCG@k are 0 when n < k; P@k counts the missing positions
    /// as irrelevant (divides by k).
    Letor4,
    /// trec_eval: computed over the documents present; P@k divides by k.
    Trec,
    /// Computed over the documents present; P@k divides by min(k, n) (RankLib, LightGBM).
    Present,
}

/// How documents with equal scores are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TiePolicy {
    /// Earlier line first (the LETOR scripts: a stable sort).
    InputOrder,
    /// Later line first (the SLAM authors' MATLAB `flip(sortrows(...))`, seed 002's online protocol).
    ReverseInput,
    /// Larger doc id first by byte comparison (trec_eval's `strcmp(docno2, docno1)`); input order without doc ids.
    DocIdDescending,
    /// The expected value over all orders of the tied documents (McSherry & Najork 2008), computed exactly.
    Expected,
}

/// A named set of evaluator choices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Convention {
    /// Name as given to `--convention`.
    pub name: &'static str,
    /// Gain of NDCG/DCG.
    pub gain: Gain,
    /// Discount of NDCG/DCG.
    pub discount: Discount,
    /// Short-list rule.
    pub short_list: ShortList,
    /// Labels at or above this are relevant for the binary metrics (MAP, P@k, RR, R-prec, bpref, RankEff, Q).
    pub relevance_threshold: f32,
    /// Labels above this are not relevant either: the LETOR scripts look relevance up in a table that only knows
    /// 0–2 (MSLR: 0–4), so a label outside it counts as irrelevant. `None`: no upper bound.
    pub relevance_max: Option<f32>,
    /// Tie order.
    pub ties: TiePolicy,
    /// ERR's maximum grade l_max in R = (2^l − 1)/2^l_max (gdeval uses 4).
    pub err_max_grade: f64,
}

impl Convention {
    /// Eval-Score-3.0.pl (LETOR 3.0).
    pub const LETOR3: Convention = Convention {
        name: "letor3",
        gain: Gain::LetorTable,
        discount: Discount::Letor,
        short_list: ShortList::Letor3,
        relevance_threshold: 1.0,
        relevance_max: Some(2.0),
        ties: TiePolicy::InputOrder,
        err_max_grade: 2.0,
    };
    /// Eval-Score-4.0.pl (LETOR 4.0).
    pub const LETOR4: Convention = Convention {
        name: "letor4",
        short_list: ShortList::Letor4,
        ..Self::LETOR3
    };
    /// mslr-eval-score-mslr.pl (MSLR-WEB10K/30K): labels ≥ 2 relevant, gain table up to 15.
    pub const MSLR: Convention = Convention {
        name: "mslr",
        gain: Gain::MslrTable,
        discount: Discount::Letor,
        short_list: ShortList::Letor4,
        relevance_threshold: 2.0,
        relevance_max: Some(4.0),
        ties: TiePolicy::InputOrder,
        err_max_grade: 4.0,
    };
    /// trec_eval (`ndcg_cut`, `map`, `P`, `recip_rank`, `Rprec`, `bpref`) with `-l 1`.
    pub const TREC: Convention = Convention {
        name: "trec",
        gain: Gain::Linear,
        discount: Discount::Log2,
        short_list: ShortList::Trec,
        relevance_threshold: 1.0,
        relevance_max: None,
        ties: TiePolicy::DocIdDescending,
        err_max_grade: 4.0,
    };
    /// Gain 2^r − 1, discount 1/log2(r + 1), short lists over the documents present, no-relevant queries 0
    /// (what LightGBM's and RankLib's NDCG report, except that LightGBM scores no-relevant queries 1).
    pub const STANDARD: Convention = Convention {
        name: "standard",
        gain: Gain::Exponential,
        discount: Discount::Log2,
        short_list: ShortList::Present,
        relevance_threshold: 1.0,
        relevance_max: None,
        ties: TiePolicy::InputOrder,
        err_max_grade: 4.0,
    };

    /// All named conventions.
    pub const ALL: [Convention; 5] = [
        Self::LETOR3,
        Self::LETOR4,
        Self::MSLR,
        Self::TREC,
        Self::STANDARD,
    ];

    /// This convention with another tie policy.
    pub fn with_ties(self, ties: TiePolicy) -> Self {
        Self { ties, ..self }
    }
    /// This convention with another relevance threshold (trec_eval's `-l`).
    pub fn with_relevance_threshold(self, t: f32) -> Self {
        Self {
            relevance_threshold: t,
            ..self
        }
    }
    /// Is a judged label relevant under this convention?
    #[inline]
    pub fn is_relevant(&self, label: f32) -> bool {
        label >= self.relevance_threshold && self.relevance_max.is_none_or(|m| label <= m)
    }
}

impl Default for Convention {
    fn default() -> Self {
        Self::STANDARD
    }
}

impl fmt::Display for Convention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl FromStr for Convention {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(s.trim()))
            .copied()
            .ok_or_else(|| {
                format!("unknown convention `{s}`; expected letor3, letor4, mslr, trec or standard")
            })
    }
}

impl FromStr for TiePolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "input" | "input-order" | "file" => Ok(TiePolicy::InputOrder),
            "reverse" | "reverse-input" => Ok(TiePolicy::ReverseInput),
            "docid" | "docid-desc" => Ok(TiePolicy::DocIdDescending),
            "expected" | "average" => Ok(TiePolicy::Expected),
            _ => Err(format!(
                "unknown tie policy `{s}`; expected input, reverse, docid or expected"
            )),
        }
    }
}
