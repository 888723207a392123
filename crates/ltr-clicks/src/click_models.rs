//! Classic click models fitted to a log and evaluated on held-out sessions: the position-based model (PBM), the
//! cascade model (Craswell et al., WSDM 2008), the dependent click model (DCM; Guo, Liu & Wang, WSDM 2009), the
//! user browsing model (UBM; Dupret & Piwowarski, SIGIR 2008) and the dynamic Bayesian network (DBN; Chapelle &
//! Zhang, WWW 2009), as Chuklin, Markov & de Rijke's *Click Models for Web Search* (2015) and its companion
//! PyClick define them.
//!
//! A [`SessionLog`] is a click log in compact form; [`fit_click_model`] estimates a [`FittedClickModel`] (the
//! cascade and DCM by maximum likelihood, the others by EM); [`FittedClickModel::evaluate`] reports held-out
//! log-likelihood and perplexity per rank.
//!
//! ## Agreement with PyClick
//!
//! The estimators are PyClick's (markovi/PyClick), so fits agree with it to rounding:
//! - every parameter starts at ½ and carries a prior of one success in two trials (PyClick's `_numerator = 1`,
//!   `_denominator = 2`); EM runs a fixed number of iterations (50 by default) from there;
//! - EM parameters are read capped at 1 − 10⁻⁶ (PyClick's `ParamEM.PROB_MIN`), maximum-likelihood ones are not;
//! - DCM counts a session's ranks down to its last click (all ranks when there is none) for attractiveness, and
//!   every click but the last as a continuation;
//! - UBM's examination γ(r, r') has its own value for "no click above" (PyClick stores it at r' = M − 1);
//! - a document the fit never saw is given ½, as PyClick's default parameter is.
//!
//! PyClick has five slips this crate does not share (the differential fixtures come from a PyClick with them
//! corrected; `tests/fixtures/pyclick/README.md` lists them): the cascade's P(C_r | C_<r) is the unconditional
//! probability there; the DBN's tail likelihood reads the parameters of the wrong ranks; a DBN session without
//! clicks is taken to end with a click below the list; the DBN attractiveness posterior uses the unconditional
//! examination probability instead of the one given the clicks above; and the persistence posterior multiplies the
//! unexamined case by 1 − attractiveness.
//!
//! The evaluation is PyClick's: the log-likelihood is the mean over sessions of the mean over ranks of
//! ln P(C_r | C_<r) (`LogLikelihood`); perplexity at rank r is 2^(−mean log₂ P(C_r)) with the unconditional click
//! probability (`Perplexity`), and the perplexity is the mean over ranks. PyClick divides each rank's sum by all
//! sessions and averages over ten ranks; here a rank's mean is over the sessions that display it and the ranks
//! are those of the longest session: the same numbers when every session shows ten documents. The cascade model
//! predicts nothing after the first click: like PyClick, its log-likelihood scores those ranks 10⁻⁶.

use std::collections::HashMap;

use ltr_data::{DataError, Result};

use crate::click_log_reader::{by_session, DocumentIndex, Sessions};
use crate::ClickRecord;

/// Probability floor of the estimators and the evaluation (PyClick's `PROB_MIN`).
pub const PROB_MIN: f64 = 1e-6;

/// A click model family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClickModelKind {
    /// Position-based model: P(C_r) = α(q, d) · γ(r).
    Pbm,
    /// Cascade model: examination stops at the first click.
    Cascade,
    /// Dependent click model: the cascade, going on after a click at rank r with λ(r).
    Dcm,
    /// User browsing model: examination γ(r, r') by rank and the rank of the last click above.
    Ubm,
    /// Dynamic Bayesian network: attractiveness α(q, d), satisfaction σ(q, d), persistence γ.
    Dbn,
}

impl ClickModelKind {
    /// Every family, in the order of the documentation.
    pub const ALL: [ClickModelKind; 5] =
        [Self::Pbm, Self::Cascade, Self::Dcm, Self::Ubm, Self::Dbn];

    /// The name the command line and the JSON use (`pbm`, `cascade`, `dcm`, `ubm`, `dbn`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Pbm => "pbm",
            Self::Cascade => "cascade",
            Self::Dcm => "dcm",
            Self::Ubm => "ubm",
            Self::Dbn => "dbn",
        }
    }

    /// The family of a name (see [`Self::name`]).
    pub fn parse(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                DataError::Invalid(format!(
                    "unknown click model `{name}` (expected one of pbm, cascade, dcm, ubm, dbn)"
                ))
            })
    }
}

/// A click log in compact form: each displayed document is a (qid, docid) pair index, sessions are contiguous.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionLog {
    pairs: Vec<(String, String)>,
    docs: Vec<u32>,
    clicks: Vec<bool>,
    offsets: Vec<usize>,
}

impl SessionLog {
    /// The sessions of a log read by [`crate::read_click_log`] (whose reader has checked them: one query per
    /// session, ranks 1, 2, … n in order).
    pub fn from_records(records: &[ClickRecord]) -> Self {
        Self::from_sessions(&mut by_session(records))
            .expect("counting records held in memory returns no error")
    }

    /// The sessions of the click log at `path`, read a session at a time ([`crate::for_each_click_session`]): the
    /// same log as [`SessionLog::from_records`] of [`crate::read_click_log`], without holding the records (five
    /// bytes a displayed document instead of a record with two strings).
    pub fn read(path: &std::path::Path) -> Result<Self> {
        Self::from_sessions(&mut |each| crate::for_each_click_session(path, each))
    }

    /// The log of `sessions`, its (qid, docid) pairs numbered in order of first display.
    fn from_sessions(sessions: &mut Sessions<'_>) -> Result<Self> {
        let mut index = DocumentIndex::default();
        let mut log = SessionLog {
            offsets: vec![0],
            ..Default::default()
        };
        sessions(&mut |session| {
            for r in session {
                let (id, first) = index.id(&r.qid, &r.docid);
                if first {
                    log.pairs.push((r.qid.clone(), r.docid.clone()));
                }
                log.docs.push(id as u32);
                log.clicks.push(r.clicked);
            }
            log.offsets.push(log.docs.len());
            Ok(())
        })?;
        Ok(log)
    }

    /// Number of sessions.
    pub fn n_sessions(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of distinct (qid, docid) pairs.
    pub fn n_pairs(&self) -> usize {
        self.pairs.len()
    }

    /// The (qid, docid) of a pair index.
    pub fn pair(&self, i: usize) -> (&str, &str) {
        (&self.pairs[i].0, &self.pairs[i].1)
    }

    /// Session `s`: its documents' pair indices and clicks, rank 1 first.
    pub fn session(&self, s: usize) -> (&[u32], &[bool]) {
        let r = self.offsets[s]..self.offsets[s + 1];
        (&self.docs[r.clone()], &self.clicks[r])
    }

    /// The longest session's length.
    pub fn max_len(&self) -> usize {
        self.offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }
}

/// The parameters of a fitted click model (probabilities; per-pair vectors are indexed like
/// [`FittedClickModel::pairs`], per-rank ones from rank 1).
#[derive(Debug, Clone, PartialEq)]
pub enum ClickModelParams {
    /// Position-based model.
    Pbm {
        /// Attractiveness α per pair.
        attr: Vec<f64>,
        /// Examination γ per rank.
        exam: Vec<f64>,
    },
    /// Cascade model.
    Cascade {
        /// Attractiveness α per pair.
        attr: Vec<f64>,
    },
    /// Dependent click model.
    Dcm {
        /// Attractiveness α per pair.
        attr: Vec<f64>,
        /// Continuation λ after a click, per rank.
        cont: Vec<f64>,
    },
    /// User browsing model.
    Ubm {
        /// Attractiveness α per pair.
        attr: Vec<f64>,
        /// Examination: `exam[r][0]` at rank r + 1 with no click above, `exam[r][k]` with the last click above at
        /// rank k (1 ≤ k ≤ r).
        exam: Vec<Vec<f64>>,
    },
    /// Dynamic Bayesian network.
    Dbn {
        /// Attractiveness α per pair.
        attr: Vec<f64>,
        /// Satisfaction σ per pair.
        sat: Vec<f64>,
        /// Persistence γ.
        gamma: f64,
    },
}

/// A click model fitted to a log: its parameters and the (qid, docid) pairs they name.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedClickModel {
    /// The pairs, in the order of the per-pair parameters.
    pub pairs: Vec<(String, String)>,
    /// The parameters.
    pub params: ClickModelParams,
    /// EM iterations run (0 for maximum likelihood).
    pub iterations: usize,
}

/// Held-out quality of a click model, as PyClick reports it (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub struct ClickModelEvaluation {
    /// Sessions evaluated.
    pub sessions: usize,
    /// Mean over sessions of the mean over ranks of ln P(C_r | C_<r).
    pub log_likelihood: f64,
    /// Mean over ranks of the perplexity at each rank.
    pub perplexity: f64,
    /// Perplexity at ranks 1, 2, …: 2^(−mean over sessions of log₂ P(C_r)), unconditional click probabilities.
    pub perplexity_at_rank: Vec<f64>,
}

/// The parameters of one session, looked up once.
pub(crate) struct SessionView<'a> {
    pub attr: Vec<f64>,
    pub sat: Vec<f64>,
    pub clicks: &'a [bool],
}

impl FittedClickModel {
    /// The family.
    pub fn kind(&self) -> ClickModelKind {
        match self.params {
            ClickModelParams::Pbm { .. } => ClickModelKind::Pbm,
            ClickModelParams::Cascade { .. } => ClickModelKind::Cascade,
            ClickModelParams::Dcm { .. } => ClickModelKind::Dcm,
            ClickModelParams::Ubm { .. } => ClickModelKind::Ubm,
            ClickModelParams::Dbn { .. } => ClickModelKind::Dbn,
        }
    }

    /// Unconditional click probabilities P(C_r = 1) of a session's ranks (`attr`, `sat`: its documents'
    /// parameters).
    pub(crate) fn full_click_probs(&self, v: &SessionView<'_>) -> Vec<f64> {
        let n = v.attr.len();
        match &self.params {
            ClickModelParams::Pbm { exam, .. } => {
                (0..n).map(|r| v.attr[r] * rank_param(exam, r)).collect()
            }
            ClickModelParams::Cascade { .. } => {
                let mut e = 1.0;
                v.attr
                    .iter()
                    .map(|&a| {
                        let p = a * e;
                        e *= 1.0 - a;
                        p
                    })
                    .collect()
            }
            ClickModelParams::Dcm { cont, .. } => {
                let mut e = 1.0;
                (0..n)
                    .map(|r| {
                        let a = v.attr[r];
                        let p = a * e;
                        e *= rank_param(cont, r) * a + (1.0 - a);
                        p
                    })
                    .collect()
            }
            ClickModelParams::Ubm { exam, .. } => {
                // P(C_r) = Σ_{r' < r} P(C_r') · P(no click strictly between | last click r') · α_r γ(r, r').
                let mut probs: Vec<f64> = Vec::with_capacity(n);
                for r in 0..n {
                    let mut p = 0.0;
                    for prev in 0..=r {
                        // prev = 0: no click above; prev = k: the last click at (0-based) rank k − 1.
                        let mut none_between = 1.0;
                        for b in prev..r {
                            none_between *= 1.0 - v.attr[b] * ubm_exam(exam, b, prev);
                        }
                        let before = if prev == 0 { 1.0 } else { probs[prev - 1] };
                        p += before * none_between * v.attr[r] * ubm_exam(exam, r, prev);
                    }
                    probs.push(p);
                }
                probs
            }
            ClickModelParams::Dbn { gamma, .. } => {
                let mut e = 1.0;
                (0..n)
                    .map(|r| {
                        let (a, s) = (v.attr[r], v.sat[r]);
                        let p = a * e;
                        e *= gamma * ((1.0 - s) * a + (1.0 - a));
                        p
                    })
                    .collect()
            }
        }
    }

    /// P(C_r = c_r | C_<r) for each rank of a session.
    pub(crate) fn conditional_click_probs(&self, v: &SessionView<'_>) -> Vec<f64> {
        let n = v.attr.len();
        let pick = |p: f64, c: bool| if c { p } else { 1.0 - p };
        match &self.params {
            ClickModelParams::Pbm { exam, .. } => (0..n)
                .map(|r| pick(v.attr[r] * rank_param(exam, r), v.clicks[r]))
                .collect(),
            ClickModelParams::Cascade { .. } => {
                // Every rank down to the first click is examined: P(C_r = 1 | C_<r = 0) = α_r.
                let first = v.clicks.iter().position(|&c| c).unwrap_or(n);
                (0..n)
                    .map(|r| {
                        if r <= first {
                            pick(v.attr[r], v.clicks[r])
                        } else {
                            PROB_MIN
                        }
                    })
                    .collect()
            }
            ClickModelParams::Dcm { cont, .. } => {
                let mut e = 1.0;
                (0..n)
                    .map(|r| {
                        let a = v.attr[r];
                        if v.clicks[r] {
                            let p = a * e;
                            e = rank_param(cont, r);
                            p
                        } else {
                            let p = 1.0 - a * e;
                            e *= (1.0 - a) / p;
                            p
                        }
                    })
                    .collect()
            }
            ClickModelParams::Ubm { exam, .. } => {
                let mut prev = 0;
                (0..n)
                    .map(|r| {
                        let p = pick(v.attr[r] * ubm_exam(exam, r, prev), v.clicks[r]);
                        if v.clicks[r] {
                            prev = r + 1;
                        }
                        p
                    })
                    .collect()
            }
            ClickModelParams::Dbn { gamma, .. } => dbn_forward(v, *gamma).0,
        }
    }

    /// Log-likelihood and perplexity of held-out sessions (see the module documentation). Documents the fit did
    /// not see get ½ for every per-document parameter; ranks beyond the fitted ones, ½ too.
    pub fn evaluate(&self, log: &SessionLog) -> Result<ClickModelEvaluation> {
        if log.n_sessions() == 0 {
            return Err(DataError::Invalid(
                "no sessions to evaluate a click model on".into(),
            ));
        }
        let index: HashMap<(&str, &str), usize> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(i, (q, d))| ((q.as_str(), d.as_str()), i))
            .collect();
        let lookup: Vec<Option<usize>> = (0..log.n_pairs())
            .map(|i| index.get(&log.pair(i)).copied())
            .collect();
        let ranks = log.max_len();
        let mut ll = 0.0;
        let mut log2_at = vec![0.0; ranks];
        let mut shown_at = vec![0usize; ranks];
        for s in 0..log.n_sessions() {
            let (docs, clicks) = log.session(s);
            let v = self.view(docs.iter().map(|&d| lookup[d as usize]), clicks);
            let cond = self.conditional_click_probs(&v);
            ll += cond.iter().map(|p| p.ln()).sum::<f64>() / cond.len().max(1) as f64;
            for (r, p) in self.full_click_probs(&v).into_iter().enumerate() {
                let p = if clicks[r] { p } else { 1.0 - p };
                shown_at[r] += 1;
                if p > 0.0 {
                    log2_at[r] += p.log2();
                }
            }
        }
        let perplexity_at_rank: Vec<f64> = log2_at
            .iter()
            .zip(&shown_at)
            .map(|(&l, &n)| (-l / n as f64).exp2())
            .collect();
        Ok(ClickModelEvaluation {
            sessions: log.n_sessions(),
            log_likelihood: ll / log.n_sessions() as f64,
            perplexity: perplexity_at_rank.iter().sum::<f64>() / ranks.max(1) as f64,
            perplexity_at_rank,
        })
    }

    /// A session's parameters from the indices of its documents in [`Self::pairs`] (`None`: unseen, ½).
    pub(crate) fn view<'a>(
        &self,
        docs: impl Iterator<Item = Option<usize>>,
        clicks: &'a [bool],
    ) -> SessionView<'a> {
        let (attr_of, sat_of) = match &self.params {
            ClickModelParams::Pbm { attr, .. }
            | ClickModelParams::Cascade { attr }
            | ClickModelParams::Dcm { attr, .. }
            | ClickModelParams::Ubm { attr, .. } => (attr, None),
            ClickModelParams::Dbn { attr, sat, .. } => (attr, Some(sat)),
        };
        let mut v = SessionView {
            attr: Vec::with_capacity(clicks.len()),
            sat: Vec::new(),
            clicks,
        };
        for d in docs {
            v.attr.push(d.map_or(0.5, |i| attr_of[i]));
            if let Some(sat) = sat_of {
                v.sat.push(d.map_or(0.5, |i| sat[i]));
            }
        }
        v
    }
}

/// A per-rank parameter, ½ beyond the fitted ranks.
pub(crate) fn rank_param(values: &[f64], r: usize) -> f64 {
    values.get(r).copied().unwrap_or(0.5)
}

/// UBM's γ at (0-based) rank r with `prev` (0: no click above; k: last click at 0-based rank k − 1).
pub(crate) fn ubm_exam(exam: &[Vec<f64>], r: usize, prev: usize) -> f64 {
    exam.get(r)
        .and_then(|row| row.get(prev))
        .copied()
        .unwrap_or(0.5)
}

/// The DBN forward pass: P(C_r = c_r | C_<r) and ε_r = P(E_r = 1 | C_<r) for r = 0..=n.
pub(crate) fn dbn_forward(v: &SessionView<'_>, gamma: f64) -> (Vec<f64>, Vec<f64>) {
    let n = v.attr.len();
    let mut e = 1.0;
    let mut probs = Vec::with_capacity(n);
    let mut exam = Vec::with_capacity(n + 1);
    exam.push(e);
    for r in 0..n {
        let (a, s) = (v.attr[r], v.sat[r]);
        if v.clicks[r] {
            probs.push(a * e);
            e = gamma * (1.0 - s);
        } else {
            let p = 1.0 - a * e;
            probs.push(p);
            e *= gamma * (1.0 - a) / p;
        }
        exam.push(e);
    }
    (probs, exam)
}
