//! Metric names and their parsing: this crate's names (`NDCG@10`, `MAP`, `P@5`, `ERR@20`, `bpref`, ...) and
//! ir_measures' syntax (`nDCG@10`, `AP(rel=2)`, `P(judged_only=True)@10`, `RBP(p=0.8)`, `IPrec@0.5`, ...), both
//! case-insensitive. See [`MEASURES`] for every measure with its parameters, defaults and source.

use std::fmt;
use std::str::FromStr;

use crate::diversity::{DiversityKind, DiversityMeasure};
use crate::real::Real;

/// ir_measures' per-measure options that are not part of a measure's own identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Params {
    /// `rel=`: the smallest grade counted as relevant for this measure (replaces the convention's threshold, as
    /// trec_eval's `-l`; the convention's upper bound, if any, stays).
    pub rel: Option<i32>,
    /// `judged_only=True`: drop the unjudged retrieved documents from the ranking first (trec_eval's `-J`). Only
    /// TREC runs have unjudged documents; on LETOR data it changes nothing.
    pub judged_only: bool,
}

/// A per-query IR metric. Where a cut-off is optional, `None` means the whole list.
///
/// Measures that count relevant documents use the convention's relevance threshold (label ≥ 1 unless the
/// convention or `--relevance-level` says otherwise, or `rel=` for one measure). A retrieved document without a
/// judgment (TREC runs only) is never relevant; documents judged but not retrieved count in R (NumRel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// Normalised discounted cumulative gain at k.
    Ndcg(Option<usize>),
    /// Discounted cumulative gain at k.
    Dcg(Option<usize>),
    /// Average precision (mean over queries: MAP); with a cut-off, trec_eval's `map_cut` (still divided by R).
    Ap(Option<usize>),
    /// Precision at k.
    P(usize),
    /// Reciprocal rank of the first relevant document (mean: MRR), optionally within the top k.
    Rr(Option<usize>),
    /// Expected reciprocal rank at k (Chapelle et al. 2009).
    Err(Option<usize>),
    /// Precision at R, the number of relevant documents.
    RPrec,
    /// bpref (Buckley & Voorhees 2004, trec_eval's form).
    Bpref,
    /// RankEff (Ahlgren & Grönqvist 2006) = 1 − Q/(N·R) with binary relevance.
    RankEff,
    /// Pairwise AUC over all pairs of documents with different labels (score ties count one half).
    Auc,
    /// Order error rate (seed 001): misordered / all differently-labelled pairs, ties counted as misordered;
    /// restricted to the label pair (s, t) when given.
    Oer(Option<(u8, u8)>),
    /// Number of inversions Q (seed 000): (relevant, non-relevant) pairs with the relevant one ranked lower.
    Inversions,
    /// LETOR 4.0's MeanNDCG: the average of NDCG@1..n over the query's list.
    MeanNdcg,
    /// Recall at k (trec_eval `recall_k`, ir_measures `R@k`): relevant documents in the top k / R, where R counts
    /// the judged relevant documents, retrieved or not; 0 when R = 0. Without k, over the whole list.
    Recall(Option<usize>),
    /// Success at k (trec_eval `success_k`): 1 when a relevant document is in the top k, else 0 (under expected
    /// ties, the probability of that).
    Success(usize),
    /// Number of documents retrieved (trec_eval `num_ret`).
    NumRet,
    /// Number of relevant documents judged for the query, retrieved or not (trec_eval `num_rel`, R).
    NumRel,
    /// Number of relevant documents retrieved (trec_eval `num_rel_ret`).
    NumRelRet,
    /// Interpolated precision at recall level r ∈ [0, 1] (trec_eval `iprec_at_recall`): the largest precision at a
    /// rank whose recall reaches r, with trec_eval's rounding of r to ⌊r·R + 0.9⌋ relevant documents; 0 when no
    /// such rank (or R = 0). Needs a resolved tie order.
    IPrec(Real),
    /// Set precision (trec_eval `set_P`): NumRelRet / NumRet, 0 for an empty list.
    SetP,
    /// Set recall (trec_eval `set_recall`): NumRelRet / R, 0 when R = 0.
    SetR,
    /// Set F (trec_eval `set_F`, after van Rijsbergen 1979) with weight β: (1 + β)·SetP·SetR / (β·SetP + SetR), 0
    /// when both are 0. As in trec_eval (and so ir_measures) β enters unsquared; the two forms agree at β = 1.
    SetF(Real),
    /// Judged@k (MacAvaney et al.; ir_measures' `Judged`): the share of the top min(k, n) documents that have a
    /// judgment, whatever its grade. Without k, the whole list. Always 1 on LETOR data (every document judged).
    Judged(Option<usize>),
    /// Rank-biased precision with persistence p (Moffat & Zobel 2008): (1 − p) Σ_i r_i p^(i−1) over the ranked
    /// list, r_i = 1 for a relevant document (binary, by the relevance threshold), unjudged documents 0.
    Rbp(Real),
    /// RBP's residual (Moffat & Zobel 2008): (1 − p) Σ over unjudged ranks i of p^(i−1) + p^n, the most that RBP
    /// could still grow if every unjudged document and every document past the list's depth n were relevant.
    RbpResidual(Real),
    /// Inferred AP (Yilmaz & Aslam 2006), trec_eval's `infAP`: AP estimated from a judged sample of the pool. A
    /// retrieved document absent from the qrels is outside the pool and skipped; one with a negative qrels value is
    /// in the pool but unjudged (trec_eval's sampling mark); see `infap.rs`.
    InfAp,
    /// A novelty/diversity measure over subtopic qrels (α-nDCG, ERR-IA, NRBP, …; see [`DiversityMeasure`]). Only a
    /// TREC run evaluated against diversity qrels has subtopics.
    Diversity(DiversityMeasure),
    /// A measure with ir_measures' `rel=` / `judged_only=True` options.
    Tuned(Tunable, Params),
}

/// The measures that take ir_measures' `rel=` or `judged_only=` options (see [`Metric::Tuned`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)] // each variant is the `Metric` variant of the same name
pub enum Tunable {
    Ndcg(Option<usize>),
    P(usize),
    Ap(Option<usize>),
    Rr(Option<usize>),
    RPrec,
    Bpref,
    Recall(Option<usize>),
    Success(usize),
    NumRel,
    NumRelRet,
    IPrec(Real),
    SetP,
    SetR,
    SetF(Real),
    Rbp(Real),
    RbpResidual(Real),
    InfAp,
}

impl Tunable {
    /// The plain metric (without options).
    pub fn metric(self) -> Metric {
        match self {
            Tunable::Ndcg(k) => Metric::Ndcg(k),
            Tunable::P(k) => Metric::P(k),
            Tunable::Ap(k) => Metric::Ap(k),
            Tunable::Rr(k) => Metric::Rr(k),
            Tunable::RPrec => Metric::RPrec,
            Tunable::Bpref => Metric::Bpref,
            Tunable::Recall(k) => Metric::Recall(k),
            Tunable::Success(k) => Metric::Success(k),
            Tunable::NumRel => Metric::NumRel,
            Tunable::NumRelRet => Metric::NumRelRet,
            Tunable::IPrec(r) => Metric::IPrec(r),
            Tunable::SetP => Metric::SetP,
            Tunable::SetR => Metric::SetR,
            Tunable::SetF(b) => Metric::SetF(b),
            Tunable::Rbp(p) => Metric::Rbp(p),
            Tunable::RbpResidual(p) => Metric::RbpResidual(p),
            Tunable::InfAp => Metric::InfAp,
        }
    }
}

impl Metric {
    /// True when larger values are better (false for OER, Q and RBP's residual).
    pub fn higher_is_better(&self) -> bool {
        !matches!(
            self,
            Metric::Oer(_)
                | Metric::Inversions
                | Metric::RbpResidual(_)
                | Metric::Tuned(Tunable::RbpResidual(_), _)
        )
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |f: &mut fmt::Formatter<'_>, name: &str, k: &Option<usize>| match k {
            Some(k) => write!(f, "{name}@{k}"),
            None => write!(f, "{name}"),
        };
        match self {
            Metric::Ndcg(k) => at(f, "NDCG", k),
            Metric::Dcg(k) => at(f, "DCG", k),
            Metric::Ap(k) => at(f, "MAP", k),
            Metric::P(k) => write!(f, "P@{k}"),
            Metric::Rr(k) => at(f, "MRR", k),
            Metric::Err(k) => at(f, "ERR", k),
            Metric::RPrec => write!(f, "R-prec"),
            Metric::Bpref => write!(f, "bpref"),
            Metric::RankEff => write!(f, "RankEff"),
            Metric::Auc => write!(f, "AUC"),
            Metric::Oer(None) => write!(f, "OER"),
            Metric::Oer(Some((s, t))) => write!(f, "OER({s},{t})"),
            Metric::Inversions => write!(f, "Q"),
            Metric::MeanNdcg => write!(f, "MeanNDCG"),
            Metric::Recall(k) => at(f, "R", k),
            Metric::Success(k) => write!(f, "Success@{k}"),
            Metric::NumRet => write!(f, "NumRet"),
            Metric::NumRel => write!(f, "NumRel"),
            Metric::NumRelRet => write!(f, "NumRelRet"),
            Metric::IPrec(r) => write!(f, "IPrec@{r}"),
            Metric::SetP => write!(f, "SetP"),
            Metric::SetR => write!(f, "SetR"),
            Metric::SetF(b) if b.get() == 1.0 => write!(f, "SetF"),
            Metric::SetF(b) => write!(f, "SetF(beta={b})"),
            Metric::Judged(k) => at(f, "Judged", k),
            Metric::Rbp(p) => write!(f, "RBP(p={p})"),
            Metric::RbpResidual(p) => write!(f, "RBPResidual(p={p})"),
            Metric::InfAp => write!(f, "infAP"),
            Metric::Diversity(d) => write!(f, "{d}"),
            Metric::Tuned(base, params) => {
                // Options go between the name (and its own parameters) and the cut-off, as in ir_measures.
                let plain = base.metric().to_string();
                let (head, cut) = match plain.split_once('@') {
                    Some((h, c)) => (h.to_string(), format!("@{c}")),
                    None => (plain, String::new()),
                };
                let mut opts = Vec::new();
                if params.judged_only {
                    opts.push("judged_only=True".to_string());
                }
                if let Some(r) = params.rel {
                    opts.push(format!("rel={r}"));
                }
                let opts = opts.join(",");
                match head.strip_suffix(')') {
                    Some(h) => write!(f, "{h},{opts}){cut}"),
                    None => write!(f, "{head}({opts}){cut}"),
                }
            }
        }
    }
}

/// An unknown or malformed metric name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric `{0}` (or malformed options); expected one of NDCG[@k], DCG[@k], MAP[@k], AP, P@k, MRR[@k], RR, ERR[@k], R-prec, bpref, RankEff, AUC, OER, OER(s,t), Q, MeanNDCG, R[@k], Success@k, NumRet, NumRel, NumRelRet, IPrec@r, SetP, SetR, SetF, Judged[@k], RBP(p=0.8), RBPResidual(p=0.8), infAP, alpha_nDCG@k, alpha_DCG@k, ERR_IA@k, nERR_IA@k, NRBP, nNRBP, AP_IA, P_IA@k, StRecall@k, with ir_measures' options such as P(rel=2)@5 or nDCG(judged_only=True)@10 (`ltr eval --list-measures` lists them)")]
pub struct MetricParseError(pub String);

/// Options allowed per measure name, as in ir_measures' registry.
const REL: u8 = 1;
const JUDGED: u8 = 2;
const P: u8 = 4;
const BETA: u8 = 8;
const ALPHA: u8 = 16;

impl FromStr for Metric {
    type Err = MetricParseError;
    fn from_str(s: &str) -> Result<Self, MetricParseError> {
        let bad = || MetricParseError(s.to_string());
        let lower = s.trim().to_ascii_lowercase();
        // NAME [ '(' options ')' ] [ '@' cut-off ]
        let (head, cut) = match lower.rsplit_once('@') {
            Some((h, c)) if !c.contains(')') => (h.trim(), Some(c.trim())),
            _ => (lower.as_str(), None),
        };
        let (name, opts) = match head.split_once('(') {
            Some((n, rest)) => (n.trim(), Some(rest.strip_suffix(')').ok_or_else(bad)?)),
            None => (head, None),
        };
        let k: Option<usize> = match cut {
            Some(_) if name == "iprec" => None,
            Some(c) => match c.parse() {
                Ok(k) if k > 0 => Some(k),
                _ => return Err(bad()),
            },
            None => None,
        };
        if name == "oer" {
            return match opts {
                None if cut.is_none() => Ok(Metric::Oer(None)),
                Some(inner) if cut.is_none() => {
                    let (a, b) = inner.split_once(',').ok_or_else(bad)?;
                    let a: u8 = a.trim().parse().map_err(|_| bad())?;
                    let b: u8 = b.trim().parse().map_err(|_| bad())?;
                    if a == b {
                        return Err(bad());
                    }
                    Ok(Metric::Oer(Some((a.max(b), a.min(b)))))
                }
                _ => Err(bad()),
            };
        }
        // Options: key=value, comma separated.
        let (mut rel, mut judged_only, mut p, mut beta, mut alpha) =
            (None, false, None, None, None);
        let mut given = 0u8;
        for kv in opts.into_iter().flat_map(|o| o.split(',')) {
            let kv = kv.trim();
            if kv.is_empty() {
                continue;
            }
            let (key, v) = kv.split_once('=').ok_or_else(bad)?;
            let (key, v) = (key.trim(), v.trim());
            let real = || match v.parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(bad()),
            };
            match key {
                "rel" => {
                    rel = Some(v.parse::<i32>().map_err(|_| bad())?);
                    given |= REL;
                }
                "judged_only" => {
                    judged_only = match v {
                        "true" => true,
                        "false" => false,
                        _ => return Err(bad()),
                    };
                    given |= JUDGED;
                }
                "p" => {
                    p = Some(real()?);
                    given |= P;
                }
                "beta" => {
                    beta = Some(real()?);
                    given |= BETA;
                }
                "alpha" => {
                    alpha = Some(real()?);
                    given |= ALPHA;
                }
                _ => return Err(bad()),
            }
        }
        let none = k.is_none() && cut.is_none();
        let need_k = || k.ok_or_else(bad);
        let (tunable, allowed): (Result<Tunable, Metric>, u8) = match name {
            "ndcg" => (Ok(Tunable::Ndcg(k)), JUDGED),
            "dcg" => (Err(Metric::Dcg(k)), 0),
            "map" | "ap" => (Ok(Tunable::Ap(k)), REL | JUDGED),
            "p" | "prec" | "precision" => (Ok(Tunable::P(need_k()?)), REL | JUDGED),
            "mrr" | "rr" | "recip_rank" => (Ok(Tunable::Rr(k)), REL | JUDGED),
            "err" => (Err(Metric::Err(k)), 0),
            "r-prec" | "rprec" | "r-precision" if none => (Ok(Tunable::RPrec), REL | JUDGED),
            "bpref" if none => (Ok(Tunable::Bpref), REL),
            "rankeff" if none => (Err(Metric::RankEff), 0),
            "auc" if none => (Err(Metric::Auc), 0),
            "q" | "inversions" if none => (Err(Metric::Inversions), 0),
            "meanndcg" if none => (Err(Metric::MeanNdcg), 0),
            "r" | "recall" => (Ok(Tunable::Recall(k)), REL | JUDGED),
            "success" => (Ok(Tunable::Success(need_k()?)), REL | JUDGED),
            // ir_measures: NumRet(rel=r) counts the retrieved documents of grade ≥ r, i.e. NumRelRet(rel=r).
            "numret" if none && rel.is_some() => (Ok(Tunable::NumRelRet), REL),
            "numret" if none => (Err(Metric::NumRet), REL),
            "numrel" if none => (Ok(Tunable::NumRel), REL),
            "numrelret" if none => (Ok(Tunable::NumRelRet), REL),
            "iprec" => {
                let r: f64 = cut.ok_or_else(bad)?.parse().map_err(|_| bad())?;
                if !(0.0..=1.0).contains(&r) {
                    return Err(bad());
                }
                (Ok(Tunable::IPrec(Real::new(r))), REL | JUDGED)
            }
            "setp" if none => (Ok(Tunable::SetP), REL | JUDGED),
            "setr" if none => (Ok(Tunable::SetR), REL),
            "setf" if none => {
                let b = beta.unwrap_or(1.0);
                if b < 0.0 {
                    return Err(bad());
                }
                (Ok(Tunable::SetF(Real::new(b))), REL | JUDGED | BETA)
            }
            "judged" => (Err(Metric::Judged(k)), 0),
            "rbp" | "rbpresidual" | "rbp_residual" if none => {
                let p = Real::new(p.unwrap_or(0.8));
                if !(p.get() > 0.0 && p.get() < 1.0) {
                    return Err(bad());
                }
                let t = if name == "rbp" {
                    Tunable::Rbp(p)
                } else {
                    Tunable::RbpResidual(p)
                };
                (Ok(t), REL | P)
            }
            "infap" if none => (Ok(Tunable::InfAp), REL),
            _ => {
                let kind = diversity_kind(name).ok_or_else(bad)?;
                if kind.has_cutoff() != k.is_some() {
                    return Err(bad());
                }
                let mut allowed = REL;
                if kind.takes_alpha() {
                    allowed |= ALPHA;
                }
                if matches!(kind, DiversityKind::Nrbp | DiversityKind::NNrbp) {
                    allowed |= BETA;
                }
                if kind.takes_judged_only() {
                    allowed |= JUDGED;
                }
                let unit = |v: Option<f64>| match v.unwrap_or(0.5) {
                    x if (0.0..=1.0).contains(&x) => Ok(Real::new(x)),
                    _ => Err(bad()),
                };
                if given & !allowed != 0 {
                    return Err(bad());
                }
                return Ok(Metric::Diversity(DiversityMeasure {
                    kind,
                    k,
                    alpha: unit(alpha)?,
                    beta: unit(beta)?,
                    rel,
                    judged_only,
                }));
            }
        };
        if given & !allowed != 0 {
            return Err(bad());
        }
        let params = Params { rel, judged_only };
        Ok(match tunable {
            Err(m) => m,
            Ok(t) if params == Params::default() => t.metric(),
            Ok(t) => Metric::Tuned(t, params),
        })
    }
}

/// ir_measures' diversity measure names (lower case), with ndeval's spellings as aliases.
fn diversity_kind(name: &str) -> Option<DiversityKind> {
    Some(match name {
        "alpha_ndcg" | "alpha-ndcg" => DiversityKind::AlphaNdcg,
        "alpha_dcg" | "alpha-dcg" => DiversityKind::AlphaDcg,
        "err_ia" | "err-ia" => DiversityKind::ErrIa,
        "nerr_ia" | "nerr-ia" => DiversityKind::NErrIa,
        "nrbp" => DiversityKind::Nrbp,
        "nnrbp" => DiversityKind::NNrbp,
        "ap_ia" | "map_ia" | "map-ia" => DiversityKind::ApIa,
        "p_ia" | "p-ia" => DiversityKind::PIa,
        "strecall" | "strec" => DiversityKind::StRecall,
        _ => return None,
    })
}

/// One measure of the catalogue printed by `ltr eval --list-measures`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeasureInfo {
    /// Syntax, ir_measures' form first where it has one (names are case-insensitive).
    pub syntax: &'static str,
    /// Options with their defaults (`-` when none).
    pub params: &'static str,
    /// One-line definition.
    pub definition: &'static str,
    /// Where the definition comes from.
    pub source: &'static str,
}

const fn info(
    syntax: &'static str,
    params: &'static str,
    definition: &'static str,
    source: &'static str,
) -> MeasureInfo {
    MeasureInfo {
        syntax,
        params,
        definition,
        source,
    }
}

/// Every measure, with its syntax, options and defaults, definition and source. Values equal ir_measures' and
/// trec_eval's under `--convention trec` (linear gain, label ≥ 1 relevant, ties by docid descending); other
/// conventions change the gain, discount, relevance threshold and tie order as their table says.
pub const MEASURES: &[MeasureInfo] = &[
    info("nDCG[@k] | NDCG[@k]", "judged_only=False", "DCG of the ranking / DCG of the ideal ranking of all judged documents, over the top k", "Järvelin & Kekäläinen 2002; trec_eval ndcg, ndcg_cut"),
    info("DCG[@k]", "-", "sum over the top k of gain(label) · discount(rank)", "Järvelin & Kekäläinen 2002"),
    info("AP[@k] | MAP[@k]", "rel=1, judged_only=False", "sum of the precision at each relevant document's rank (within k) / R", "trec_eval map, map_cut"),
    info("P@k", "rel=1, judged_only=False", "relevant documents in the top k / k", "trec_eval P"),
    info("R[@k] | Recall[@k]", "rel=1, judged_only=False", "relevant documents in the top k / R (R: judged relevant, retrieved or not)", "trec_eval recall"),
    info("RR[@k] | MRR[@k]", "rel=1, judged_only=False", "1 / rank of the first relevant document (within k), else 0", "Kantor & Voorhees 2000; trec_eval recip_rank"),
    info("Rprec | R-prec", "rel=1, judged_only=False", "precision at rank R", "Buckley & Voorhees 2005; trec_eval Rprec"),
    info("Bpref", "rel=1", "(1/R) sum over retrieved relevant d of 1 − min(#judged non-relevant above d, R) / min(N, R)", "Buckley & Voorhees 2004; trec_eval bpref"),
    info("ERR[@k]", "-", "sum over ranks of P(stop at r)/r with stop probability (2^g − 1)/2^g_max (g_max 4; 2 under letor)", "Chapelle et al. 2009; gdeval"),
    info("Success@k", "rel=1, judged_only=False", "1 if a relevant document is in the top k, else 0", "trec_eval success"),
    info("NumRet", "rel=(none)", "documents retrieved; with rel=r, retrieved documents of grade ≥ r (= NumRelRet(rel=r))", "trec_eval num_ret"),
    info("NumRel", "rel=1", "relevant documents judged for the query (R), retrieved or not", "trec_eval num_rel"),
    info("NumRelRet", "rel=1", "relevant documents retrieved", "trec_eval num_rel_ret"),
    info("IPrec@r", "rel=1, judged_only=False", "interpolated precision at recall r ∈ [0, 1]: max precision at ranks from the ⌊r·R + 0.9⌋-th relevant document on", "trec_eval iprec_at_recall"),
    info("SetP", "rel=1, judged_only=False", "NumRelRet / NumRet", "trec_eval set_P"),
    info("SetR", "rel=1", "NumRelRet / R", "trec_eval set_recall"),
    info("SetF", "rel=1, beta=1, judged_only=False", "(1 + β) SetP SetR / (β SetP + SetR) (trec_eval's unsquared β)", "van Rijsbergen 1979; trec_eval set_F"),
    info("Judged[@k]", "-", "share of the top min(k, n) documents that have a judgment (trec convention: needs qrels; 1 on LETOR data)", "MacAvaney et al.; ir_measures Judged"),
    info("RBP", "p=0.8, rel=1", "(1 − p) sum over ranks i of r_i p^(i−1), binary r_i, unjudged 0", "Moffat & Zobel 2008"),
    info("RBPResidual", "p=0.8, rel=1", "(1 − p) sum over unjudged ranks i of p^(i−1) + p^depth: how much RBP could still grow", "Moffat & Zobel 2008"),
    info("infAP", "rel=1", "AP estimated from a judged sample of the pool: at each relevant document, 1/r + ((r−1)/r)·(share of the r−1 documents above in the pool)·(rel + ε)/(rel + nonrel + 2ε) over the judged ones above (ε = 1e-5); / R. Documents outside the qrels are skipped, negative qrels values are pooled but unjudged", "Yilmaz & Aslam 2006; trec_eval infAP"),
    info("alpha_nDCG@k", "alpha=0.5, rel=1, judged_only=False", "diversity qrels: Σ_r gain_r / log2(r + 1), gain_r = Σ over the subtopics of document r of (1 − α)^(earlier documents relevant to it), / the same for ndeval's greedy ideal ranking", "Clarke et al. 2008; ndeval alpha-nDCG"),
    info("alpha_DCG@k", "alpha=0.5, rel=1, judged_only=False", "diversity qrels: α-nDCG's sum / that of a list relevant to all N subtopics at every rank (collection-independent)", "Clarke et al. 2008; ndeval alpha-DCG"),
    info("ERR_IA@k", "rel=1, judged_only=False", "diversity qrels: Σ_r gain_r / r (α = 0.5) / that of a list relevant to all N subtopics at every rank (collection-independent)", "Chapelle et al. 2011; Agrawal et al. 2009; ndeval ERR-IA"),
    info("nERR_IA@k", "rel=1, judged_only=False", "diversity qrels: Σ_r gain_r / r (α = 0.5) / the same for the greedy ideal ranking", "Chapelle et al. 2011; ndeval nERR-IA"),
    info("NRBP", "alpha=0.5, beta=0.5, rel=1", "diversity qrels: (1 − (1 − α)β) / N · Σ_r gain_r β^(r−1) over the whole list", "Clarke et al. 2009; ndeval NRBP"),
    info("nNRBP", "alpha=0.5, beta=0.5, rel=1", "diversity qrels: Σ_r gain_r β^(r−1) / the same for the greedy ideal ranking", "Clarke et al. 2009; ndeval nNRBP"),
    info("AP_IA | MAP_IA", "rel=1, judged_only=False", "diversity qrels: mean over the N subtopics of AP with the subtopic's relevant documents", "Agrawal et al. 2009; ndeval MAP-IA"),
    info("P_IA@k", "rel=1, judged_only=False", "diversity qrels: (subtopic, document) hits in the top k / (k·N)", "Agrawal et al. 2009; ndeval P-IA"),
    info("StRecall@k", "rel=1", "diversity qrels: subtopics covered by the top k / N", "Zhai et al. 2003; ndeval strec"),
    info("bpref", "-", "alias of Bpref", "trec_eval bpref"),
    info("RankEff", "-", "1 − Q / (N·R): share of (relevant, non-relevant) pairs in order, binary relevance", "Ahlgren & Grönqvist 2006"),
    info("AUC", "-", "share of differently-labelled pairs scored in order, score ties one half", "Hanley & McNeil 1982"),
    info("OER | OER(s,t)", "-", "share of differently-labelled pairs (only labels s, t) misordered or tied", "order error rate"),
    info("Q", "-", "(relevant, non-relevant) pairs with the relevant one ranked lower, ties one half", "inversion count"),
    info("MeanNDCG", "-", "average of NDCG@1..n", "LETOR 4.0 Eval-Score-4.0.pl"),
];
