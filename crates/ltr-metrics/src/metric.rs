//! Metric names and their parsing (`NDCG@10`, `MAP`, `P@5`, `ERR@20`, `bpref`, ...).

use std::fmt;
use std::str::FromStr;

/// A per-query IR metric. Where a cut-off is optional, `None` means the whole list.
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
}

impl Metric {
    /// True when larger values are better (false for OER and Q).
    pub fn higher_is_better(&self) -> bool {
        !matches!(self, Metric::Oer(_) | Metric::Inversions)
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
        }
    }
}

/// An unknown or malformed metric name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric `{0}`; expected one of NDCG[@k], DCG[@k], MAP[@k], AP, P@k, MRR[@k], RR, ERR[@k], R-prec, bpref, RankEff, AUC, OER, OER(s,t), Q, MeanNDCG")]
pub struct MetricParseError(pub String);

impl FromStr for Metric {
    type Err = MetricParseError;
    fn from_str(s: &str) -> Result<Self, MetricParseError> {
        let bad = || MetricParseError(s.to_string());
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        let (name, k) = match lower.split_once('@') {
            Some((n, k)) => {
                let k: usize = k.trim().parse().map_err(|_| bad())?;
                if k == 0 {
                    return Err(bad());
                }
                (n.trim().to_string(), Some(k))
            }
            None => (lower.clone(), None),
        };
        if let Some(inner) = name.strip_prefix("oer(").and_then(|r| r.strip_suffix(')')) {
            let (a, b) = inner.split_once(',').ok_or_else(bad)?;
            let a: u8 = a.trim().parse().map_err(|_| bad())?;
            let b: u8 = b.trim().parse().map_err(|_| bad())?;
            if a == b || k.is_some() {
                return Err(bad());
            }
            return Ok(Metric::Oer(Some((a.max(b), a.min(b)))));
        }
        let m = match name.as_str() {
            "ndcg" => Metric::Ndcg(k),
            "dcg" => Metric::Dcg(k),
            "map" | "ap" => Metric::Ap(k),
            "p" | "prec" | "precision" => Metric::P(k.ok_or_else(bad)?),
            "mrr" | "rr" | "recip_rank" => Metric::Rr(k),
            "err" => Metric::Err(k),
            "r-prec" | "rprec" | "r-precision" if k.is_none() => Metric::RPrec,
            "bpref" if k.is_none() => Metric::Bpref,
            "rankeff" if k.is_none() => Metric::RankEff,
            "auc" if k.is_none() => Metric::Auc,
            "oer" if k.is_none() => Metric::Oer(None),
            "q" | "inversions" if k.is_none() => Metric::Inversions,
            "meanndcg" if k.is_none() => Metric::MeanNdcg,
            _ => return Err(bad()),
        };
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip() {
        for s in [
            "NDCG@10", "NDCG", "DCG@5", "MAP", "MAP@10", "P@5", "MRR", "MRR@10", "ERR@20",
            "R-prec", "bpref", "RankEff", "AUC", "OER", "OER(2,1)", "Q", "MeanNDCG",
        ] {
            let m: Metric = s.parse().unwrap();
            assert_eq!(m.to_string(), s);
        }
        assert_eq!("ndcg@3".parse::<Metric>().unwrap(), Metric::Ndcg(Some(3)));
        assert_eq!(
            "OER(1,2)".parse::<Metric>().unwrap(),
            Metric::Oer(Some((2, 1)))
        );
        for bad in ["NDCG@0", "P", "foo", "MAP@x", "bpref@3", "OER(1,1)"] {
            assert!(bad.parse::<Metric>().is_err(), "{bad}");
        }
    }
}
