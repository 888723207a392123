//! Counterfactual evaluation from a click log: the value of a new ranker's click metric estimated from sessions a
//! different (production) ranker displayed, by inverse propensity scoring (IPS) and its self-normalised form
//! (SNIPS), with an interval from the central limit theorem over sessions and a seeded bootstrap over sessions.
//!
//! ## What is estimated
//!
//! Under the position-based model a displayed document `d` of a session is clicked with probability
//! `p(k) · ρ(d)`: `p(k)` the examination probability of its logged rank `k`, `ρ(d)` the probability that an
//! examined `d` is clicked (its relevance to the user). The new ranker re-orders the documents each session
//! displayed (it cannot be judged on documents the log never showed); `r(d)` is `d`'s rank in that order, by
//! descending score, ties in logged order. With a gain curve `λ` (see [`ClickGain`]), the new ranker's **click
//! gain** of a session is `G = Σ_d ρ(d) · λ(r(d))` over the displayed documents, and:
//!
//! - **IPS** estimates `V = E[G]`, the mean click gain per session over the log's query distribution, by
//!   `V̂ = (1/N) Σ_s X_s` with `X_s = Σ_{d clicked in s} λ(r(d)) / p(k(d))`. It is unbiased whenever every logged
//!   rank has `p > 0` and the propensities are the true examination probabilities, because `E[c_d / p(k)] = ρ(d)`.
//!   With [`ClickGain::Examination`] (`λ = p` at the new rank) `V` is the expected number of clicks per session
//!   the new ranker would get from the same users. Propensities relative to rank 1 (`p(k)/p(1)`, as
//!   [`crate::estimate_propensities`] gives) multiply `V` by `p(1)` for the other gains, and leave the
//!   examination gain (expected clicks) exact.
//! - **SNIPS** estimates `V / T`, `T = E[Σ_d ρ(d)]` the expected relevance of the displayed documents, by
//!   `Σ_s X_s / Σ_s Y_s` with `Y_s = Σ_{d clicked in s} 1 / p(k(d))` (IPS with a gain of 1 everywhere): the share
//!   of the displayed relevance the new ranker puts under its gain curve, on the scale of a normalised metric
//!   (between 0 and 1 for the gains here). A ratio estimator (Swaminathan & Joachims 2015's self-normalisation,
//!   with the clicked documents' inverse propensities as the weights): consistent rather than unbiased, and with
//!   a smaller relative error than IPS because the same large weights sit above and below the line. With a
//!   deterministic production ranker no weight has a known mean, so SNIPS cannot estimate `V` itself; `V/T` does
//!   not depend on the scale of the propensities.
//!
//! - **DR** (doubly robust; Oosterhuis, *Doubly-Robust Estimation for Correcting Position-Bias in Click Feedback
//!   for Unbiased Learning to Rank*, ACM TOIS 41(3), 2023, presented at SIGIR 2023) estimates the same `V` as IPS
//!   from a direct model `R̂(d)` of each document's click probability when examined (a fitted click model's
//!   attractiveness, or any per-document prediction) corrected by the inverse-propensity-weighted residual of the
//!   clicks: `X_s = Σ_{d displayed in s} λ(r(d)) · (R̂(d) + (c_d − p(k(d)) · R̂(d)) / ρ(d))`, where `p(k(d))` is the
//!   examination probability of the rank the session showed `d` at (the paper's *expected treatment* of that rank:
//!   examination itself is never observed) and `ρ(d)` the logging policy's expected examination of `d`, the mean of
//!   `p` over the ranks it shows `d` at (see [`LoggingPolicy`]). Since `E[c_d | k] = p(k) · ρ-relevance`, the
//!   correction's mean is `λ · (relevance − R̂)`: with the examination curve `p` right, `E[X_s]` is the new ranker's
//!   click gain whatever `R̂` is when `ρ` is right, and whatever `ρ` is when `R̂` is right (the paper's conditions).
//!   When `R̂` is good the correction's terms are small, so its variance over the logging policy's displays is
//!   small: that is the gain over IPS. Under a deterministic logging policy `ρ(d) = p(k(d))` and the correction
//!   cancels the direct term exactly, so DR *is* IPS there (the paper's variance reduction comes from randomised
//!   displays, and its coverage gain from documents a display never shows, which this estimator does not rank:
//!   the new ranker re-orders the displayed documents); the estimator says so by giving
//!   the same number.
//!
//! The normal interval is `value ± z · se`, `se` the standard error over sessions (for SNIPS by the delta method
//! on the ratio; DR's as IPS's, the mean of its per-session terms). The bootstrap draws sessions with replacement (`bootstrap` replicates, replicate `b` from its own
//! random stream of the seed: the same at any thread count) and gives `value ± z · sd` of the replicates.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use ltr_data::{DataError, Dataset, Result};

use crate::click_log_reader::{by_distinct_session, Sessions};
use crate::click_training::{rows_by_document, PropensitySource};
use crate::clicks::ClickRecord;

/// The estimator of [`estimate_click_metric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// Inverse propensity scoring: the mean click gain per session, unbiased.
    Ips,
    /// Self-normalised IPS: the click gain over the displayed relevance, consistent.
    Snips,
    /// Doubly robust (Oosterhuis 2023): a direct relevance model corrected by the IPS-weighted residual of the
    /// clicks; the mean click gain per session, unbiased when the propensities or the model are right.
    Dr,
}

impl Estimator {
    /// The estimator of a command-line name (`ips`, `snips`).
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "ips" => Ok(Self::Ips),
            "snips" => Ok(Self::Snips),
            "dr" => Ok(Self::Dr),
            other => Err(DataError::Invalid(format!(
                "unknown estimator `{other}` (expected ips, snips or dr)"
            ))),
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ips => "ips",
            Self::Snips => "snips",
            Self::Dr => "dr",
        }
    }
}

/// The gain `λ(r)` of a clicked-when-examined document at the new ranker's rank `r` (1-based).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClickGain {
    /// 1 at ranks 1 to `k` (`clicks@k`: the relevant documents the new ranker puts in its top `k`).
    ClicksAt(usize),
    /// `1 / log2(r + 1)` at ranks 1 to `k` (`dcg@k` of click relevance).
    DcgAt(usize),
    /// The examination probability of rank `r` from the same propensities (`expected-clicks`: the clicks per
    /// session the new ranker would get from the logged users).
    Examination,
}

impl ClickGain {
    /// The gain of a command-line name: `clicks@K`, `dcg@K` or `expected-clicks`.
    pub fn parse(name: &str) -> Result<Self> {
        let bad = || {
            DataError::Invalid(format!(
                "unknown click metric `{name}` (expected clicks@K, dcg@K or expected-clicks)"
            ))
        };
        if name == "expected-clicks" {
            return Ok(Self::Examination);
        }
        let (family, k) = name.split_once('@').ok_or_else(bad)?;
        let k: usize = k.parse().ok().filter(|&k| k >= 1).ok_or_else(bad)?;
        match family {
            "clicks" => Ok(Self::ClicksAt(k)),
            "dcg" => Ok(Self::DcgAt(k)),
            _ => Err(bad()),
        }
    }

    /// The command-line name.
    pub fn name(&self) -> String {
        match self {
            Self::ClicksAt(k) => format!("clicks@{k}"),
            Self::DcgAt(k) => format!("dcg@{k}"),
            Self::Examination => "expected-clicks".into(),
        }
    }

    fn at(&self, rank: usize, propensity: &dyn Fn(usize) -> f64) -> f64 {
        match *self {
            Self::ClicksAt(k) => (rank <= k) as u8 as f64,
            Self::DcgAt(k) if rank <= k => 1.0 / ((rank + 1) as f64).log2(),
            Self::DcgAt(_) => 0.0,
            Self::Examination => propensity(rank),
        }
    }
}

/// Settings of [`estimate_click_metric`].
#[derive(Debug, Clone, PartialEq)]
pub struct CounterfactualSettings {
    /// IPS or SNIPS.
    pub estimator: Estimator,
    /// The click metric's gain curve.
    pub gain: ClickGain,
    /// Where each click's examination probability comes from.
    pub propensities: PropensitySource,
    /// Interval half-width in standard errors (1.96: 95%).
    pub z: f64,
    /// Bootstrap replicates over sessions (0: none).
    pub bootstrap: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// DR's direct model: each feature-file row's click probability when examined (required by
    /// [`Estimator::Dr`], refused by the others).
    pub direct: Option<Vec<f64>>,
    /// How the log's displays were chosen (DR's expected examination).
    pub logging: LoggingPolicy,
    /// Which sessions of a log file to read ([`estimate_click_metric_from_log`]): all, a query the features lack
    /// being an error, or only those of the features' queries (a log over more queries than the evaluated set, a
    /// test split, say).
    pub scope: crate::SessionScope,
}

impl CounterfactualSettings {
    /// The settings of command-line names: the estimator (`ips`, `snips`), the metric ([`ClickGain::parse`]), a
    /// propensity table file ([`crate::read_propensity_table`]; `None`: the log's column), the bootstrap replicates
    /// and seed; 95% intervals.
    pub fn parse(
        estimator: &str,
        metric: &str,
        propensities: Option<&std::path::Path>,
        bootstrap: usize,
        seed: u64,
    ) -> Result<Self> {
        Ok(Self {
            estimator: Estimator::parse(estimator)?,
            gain: ClickGain::parse(metric)?,
            propensities: match propensities {
                Some(p) => PropensitySource::ByRank(crate::read_propensity_table(p)?),
                None => PropensitySource::Logged,
            },
            bootstrap,
            seed,
            ..Self::default()
        })
    }
}

impl Default for CounterfactualSettings {
    fn default() -> Self {
        Self {
            estimator: Estimator::Ips,
            gain: ClickGain::DcgAt(10),
            propensities: PropensitySource::Logged,
            z: 1.96,
            bootstrap: 200,
            seed: 1,
            direct: None,
            logging: LoggingPolicy::Deterministic,
            scope: crate::SessionScope::Every,
        }
    }
}

/// An interval `value ± z · se`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// The standard error.
    pub std_error: f64,
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// What [`estimate_click_metric`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct CounterfactualEstimate {
    /// The estimator.
    pub estimator: Estimator,
    /// The click metric.
    pub gain: ClickGain,
    /// The estimate.
    pub value: f64,
    /// The normal (central limit) interval over sessions.
    pub normal: Interval,
    /// The bootstrap interval over sessions, with its replicates (`None` without replicates).
    pub bootstrap: Option<(usize, Interval)>,
    /// Sessions in the log (those read).
    pub sessions: usize,
    /// Clicks in the log (in the sessions read).
    pub clicks: usize,
    /// Sessions of queries outside the features, skipped ([`crate::SessionScope::FeatureQueries`]).
    pub sessions_outside: usize,
}

impl CounterfactualEstimate {
    /// The estimate as JSON (what `ltr clicks estimate --json` prints).
    pub fn to_json(&self) -> serde_json::Value {
        let interval = |i: &Interval| serde_json::json!({ "std_error": i.std_error, "low": i.low, "high": i.high });
        let mut v = serde_json::json!({
            "estimator": self.estimator.name(),
            "metric": self.gain.name(),
            "value": self.value,
            "normal": interval(&self.normal),
            "sessions": self.sessions,
            "clicks": self.clicks,
            "sessions_outside": self.sessions_outside,
        });
        if let Some((replicates, b)) = &self.bootstrap {
            v["bootstrap"] = interval(b);
            v["bootstrap"]["replicates"] = (*replicates).into();
        }
        v
    }
}

impl std::fmt::Display for CounterfactualEstimate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} {}: {:.6} ({} sessions, {} clicks{})",
            self.estimator.name(),
            self.gain.name(),
            self.value,
            self.sessions,
            self.clicks,
            match self.sessions_outside {
                0 => String::new(),
                n => format!("; {n} sessions of other queries skipped"),
            }
        )?;
        let n = &self.normal;
        writeln!(
            f,
            "normal    se {:.6}  [{:.6}, {:.6}]",
            n.std_error, n.low, n.high
        )?;
        if let Some((b, i)) = &self.bootstrap {
            writeln!(
                f,
                "bootstrap se {:.6}  [{:.6}, {:.6}]  ({b} replicates)",
                i.std_error, i.low, i.high
            )?;
        }
        Ok(())
    }
}

/// How the log's displays were chosen, which fixes each document's expected examination `ρ(d)` for
/// [`Estimator::Dr`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LoggingPolicy {
    /// Each query is always shown the same way: `ρ(d)` is the examination probability of the rank shown.
    #[default]
    Deterministic,
    /// Joachims et al.'s swap intervention ([`crate::Intervention::SwapWithTop`]): the production ranker's top `n`
    /// shown, with the documents at ranks 1 and `k` swapped half the time, `k` uniform on 2..n. Every line must
    /// carry its production rank `j`; with `q = 1/(2(n − 1))`, `ρ = ½ p(1) + q Σ_{k=2..n} p(k)` for `j = 1` and
    /// `ρ = (1 − q) p(j) + q p(1)` for `j > 1`.
    SwapWithTop,
}

impl LoggingPolicy {
    /// The policy of a command-line name: `deterministic` or `swap-top` (the name `ltr clicks simulate
    /// --intervention` gives it).
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "deterministic" => Ok(Self::Deterministic),
            "swap-top" => Ok(Self::SwapWithTop),
            other => Err(DataError::Invalid(format!(
                "unknown logging policy `{other}` (expected deterministic or swap-top)"
            ))),
        }
    }
}

/// The direct model of [`Estimator::Dr`]: each row's click probability when examined, from a fitted click
/// model's attractiveness (α of its (qid, docid); PBM's α is exactly that probability, and so is every other
/// model's α of a document its user examines). Rows the model never saw get 0 (the correction alone then
/// estimates them); the second value counts them.
pub fn direct_model_from_click_model(
    model: &crate::FittedClickModel,
    features: &Dataset,
) -> (Vec<f64>, usize) {
    use crate::ClickModelParams as P;
    let attr = match &model.params {
        P::Pbm { attr, .. }
        | P::Cascade { attr }
        | P::Dcm { attr, .. }
        | P::Ubm { attr, .. }
        | P::Dbn { attr, .. } => attr,
    };
    let by_pair: HashMap<(&str, &str), f64> = model
        .pairs
        .iter()
        .zip(attr)
        .map(|((q, d), &a)| ((q.as_str(), d.as_str()), a))
        .collect();
    let mut values = vec![0.0; features.n_docs()];
    let mut missing = features.n_docs();
    for ((qid, docid), row) in rows_by_document(features) {
        if let Some(&a) = by_pair.get(&(qid, docid.as_str())) {
            values[row as usize] = a;
            missing -= 1;
        }
    }
    (values, missing)
}

/// DR's direct model read from a fitted click-model file (`ltr clicks fit --out`, [`crate::FittedClickModel`]) for
/// the rows of a feature file: [`direct_model_from_click_model`] of the file, with the rows it lacks counted. What
/// `ltr clicks estimate --relevance-model` reads.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectModel {
    /// Each row's click probability when examined (0 for a row whose (qid, docid) the model lacks).
    pub values: Vec<f64>,
    /// The rows whose (qid, docid) the model lacks.
    pub missing: usize,
    /// The file the model was read from.
    pub source: std::path::PathBuf,
}

impl DirectModel {
    /// Read the click model at `path` (errors name the file) and map it onto the rows of `features`.
    pub fn read(path: &std::path::Path, features: &Dataset) -> Result<Self> {
        let model = crate::FittedClickModel::read_json(path)?;
        let (values, missing) = direct_model_from_click_model(&model, features);
        Ok(Self {
            values,
            missing,
            source: path.to_path_buf(),
        })
    }

    /// What to tell the user when rows lack a value (`None` when none does).
    pub fn note(&self) -> Option<String> {
        (self.missing > 0).then(|| {
            format!(
                "{} of {} rows have no (qid, docid) in {}: their direct value is 0",
                self.missing,
                self.values.len(),
                self.source.display()
            )
        })
    }
}

/// Each session's `X_s` (the new ranker's inverse-propensity click gain) and `Y_s` (its clicks' inverse
/// propensities), in log order, for the log joined to `features` (scored by the new ranker's `scores`, one per
/// row of `features`). Errors name the session: a document missing from `features`, a click without a propensity.
pub fn session_terms(
    log: &[ClickRecord],
    features: &Dataset,
    scores: &[f64],
    gain: ClickGain,
    propensities: &PropensitySource,
) -> Result<Vec<(f64, f64)>> {
    let (terms, _) = terms(
        &mut by_distinct_session(log),
        features,
        scores,
        gain,
        propensities,
        None,
    )?;
    Ok(terms)
}

/// The expected examination `ρ` of the document at production rank `j` of a session of `n` (see
/// [`LoggingPolicy::SwapWithTop`]), `p` the examination of a displayed rank.
fn swap_expected_examination(j: usize, n: usize, p: &dyn Fn(usize) -> f64) -> f64 {
    if n < 2 {
        return p(1);
    }
    let q = 1.0 / (2.0 * (n - 1) as f64);
    if j == 1 {
        0.5 * p(1) + q * (2..=n).map(p).sum::<f64>()
    } else {
        (1.0 - q) * p(j) + q * p(1)
    }
}

/// [`session_terms`], and with a direct model (one value per row) and a logging policy, DR's `X_s` in place of
/// IPS's.
/// Each session's `(X_s, Y_s)`, and the clicks of all sessions.
fn terms(
    sessions: &mut Sessions<'_>,
    features: &Dataset,
    scores: &[f64],
    gain: ClickGain,
    propensities: &PropensitySource,
    direct: Option<(&[f64], LoggingPolicy)>,
) -> Result<(Vec<(f64, f64)>, usize)> {
    if scores.len() != features.n_docs() {
        return Err(DataError::Shape(format!(
            "{} scores for the {} rows of the feature file",
            scores.len(),
            features.n_docs()
        )));
    }
    if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
        return Err(DataError::Invalid(format!(
            "the score of row {} is not finite",
            i + 1
        )));
    }
    if let Some((model, _)) = direct {
        if model.len() != features.n_docs() {
            return Err(DataError::Shape(format!(
                "{} direct-model values for the {} rows of the feature file",
                model.len(),
                features.n_docs()
            )));
        }
        if let Some(i) = model.iter().position(|s| !s.is_finite()) {
            return Err(DataError::Invalid(format!(
                "the direct-model value of row {} is not finite",
                i + 1
            )));
        }
    }
    if let PropensitySource::ByRank(table) = propensities {
        if table.is_empty() || table.iter().any(|p| !(*p > 0.0 && p.is_finite())) {
            return Err(DataError::Invalid(
                "a propensity table needs a positive propensity at every rank".into(),
            ));
        }
    }
    let rows = rows_by_document(features);
    let mut out = Vec::new();
    let mut clicks = 0;
    sessions(&mut |session| {
        let id = session[0].session;
        let err = |problem: String| DataError::ClickSession {
            session: id,
            problem,
        };
        // The logged propensity of each rank of this session, for the examination gain and the clicks.
        let logged: Vec<Option<f64>> = session.iter().map(|r| r.propensity).collect();
        let propensity = |rank: usize| -> Option<f64> {
            match propensities {
                PropensitySource::Logged => logged.get(rank - 1).copied().flatten(),
                PropensitySource::ByRank(t) => Some(t[(rank - 1).min(t.len() - 1)]),
            }
        };
        // The new ranker's order of the displayed documents: by score, ties in production order (the logged
        // order when the log has no production ranks), so that a randomised display does not move them.
        let mut order: Vec<(f64, u32, usize)> = Vec::with_capacity(session.len());
        let mut row_of = Vec::with_capacity(session.len());
        for (i, r) in session.iter().enumerate() {
            if r.rank as usize != i + 1 {
                return Err(err(format!(
                    "line {} of the session has rank {}: ranks must be 1 to {} in order",
                    i + 1,
                    r.rank,
                    session.len()
                )));
            }
            let Some(&row) = rows.get(&(r.qid.as_str(), r.docid.clone())) else {
                return Err(err(format!(
                    "displays document {} of query {}, which the feature file lacks",
                    r.docid, r.qid
                )));
            };
            order.push((scores[row as usize], r.production_rank.unwrap_or(r.rank), i));
            row_of.push(row as usize);
        }
        order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut new_rank = vec![0usize; session.len()];
        for (r, &(_, _, i)) in order.iter().enumerate() {
            new_rank[i] = r + 1;
        }
        let examination = |rank: usize| propensity(rank).unwrap_or(f64::NAN);
        let lambda = |i: usize| -> Result<f64> {
            let g = gain.at(new_rank[i], &examination);
            match g.is_finite() {
                true => Ok(g),
                false => Err(err(format!(
                    "has no propensity at rank {} for the expected-clicks gain",
                    new_rank[i]
                ))),
            }
        };
        let (mut x, mut y) = (0.0, 0.0);
        if let Some((model, policy)) = direct {
            let n = session.len();
            for (i, r) in session.iter().enumerate() {
                let Some(p) = propensity(i + 1) else {
                    return Err(err(format!(
                        "shows document {} at rank {} without a propensity (dr needs one at every rank; give a \
                         propensity table)",
                        r.docid, r.rank
                    )));
                };
                let rho = match policy {
                    LoggingPolicy::Deterministic => p,
                    LoggingPolicy::SwapWithTop => {
                        let j = match r.production_rank {
                            Some(j) if (j as usize) <= n => j as usize,
                            Some(j) => {
                                return Err(err(format!(
                                    "has production rank {j} in a session of {n}: a swap stays in the top shown"
                                )))
                            }
                            None => {
                                return Err(err(format!(
                                    "shows document {} without its production rank, which the swap-top logging \
                                     policy needs",
                                    r.docid
                                )))
                            }
                        };
                        if (1..=n).any(|k| propensity(k).is_none()) {
                            return Err(err(
                                "lacks a propensity at some rank (swap-top needs every rank's)"
                                    .into(),
                            ));
                        }
                        swap_expected_examination(j, n, &examination)
                    }
                };
                let g = lambda(i)?;
                let m = model[row_of[i]];
                x += g * (m + (r.clicked as u8 as f64 - p * m) / rho);
                if r.clicked {
                    y += 1.0 / p;
                }
            }
        } else {
            for (i, r) in session.iter().enumerate() {
                if !r.clicked {
                    continue;
                }
                let Some(p) = propensity(i + 1) else {
                    return Err(err(format!(
                        "clicks document {} at rank {} without a propensity (give a propensity table)",
                        r.docid, r.rank
                    )));
                };
                x += lambda(i)? / p;
                y += 1.0 / p;
            }
        }
        clicks += session.iter().filter(|r| r.clicked).count();
        out.push((x, y));
        Ok(())
    })?;
    if out.is_empty() {
        return Err(DataError::Invalid("the click log holds no session".into()));
    }
    Ok((out, clicks))
}

/// The estimate of `terms` (one `(X_s, Y_s)` per session): IPS `mean X`, SNIPS `Σ X / Σ Y`.
fn point(estimator: Estimator, terms: &[(f64, f64)]) -> f64 {
    let (x, y) = terms
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    match estimator {
        Estimator::Ips | Estimator::Dr => x / terms.len() as f64,
        Estimator::Snips if y > 0.0 => x / y,
        Estimator::Snips => 0.0,
    }
}

/// The standard error over sessions: of the mean (IPS), of the ratio by the delta method (SNIPS).
fn standard_error(estimator: Estimator, terms: &[(f64, f64)], value: f64) -> f64 {
    let n = terms.len() as f64;
    if terms.len() < 2 {
        return f64::NAN;
    }
    match estimator {
        Estimator::Ips | Estimator::Dr => {
            let ss: f64 = terms.iter().map(|&(x, _)| (x - value) * (x - value)).sum();
            (ss / (n - 1.0) / n).sqrt()
        }
        Estimator::Snips => {
            let mean_y = terms.iter().map(|t| t.1).sum::<f64>() / n;
            if mean_y <= 0.0 {
                return 0.0;
            }
            // Residuals of the linearised ratio: (X − R·Y) / mean Y.
            let ss: f64 = terms
                .iter()
                .map(|&(x, y)| {
                    let e = (x - value * y) / mean_y;
                    e * e
                })
                .sum();
            (ss / (n - 1.0) / n).sqrt()
        }
    }
}

/// Estimate a new ranker's click metric from `log` (see the module documentation for what is estimated):
/// `features` is the file the log's (qid, docid) join to, `scores` the new ranker's score of each of its rows.
pub fn estimate_click_metric(
    log: &[ClickRecord],
    features: &Dataset,
    scores: &[f64],
    settings: &CounterfactualSettings,
) -> Result<CounterfactualEstimate> {
    estimate_from_sessions(&mut by_distinct_session(log), features, scores, settings)
}

/// [`estimate_click_metric`] of the click log at `path` ([`crate::read_click_log`]'s format and checks), read a
/// session at a time: the same estimate, holding two numbers a session instead of the log. `settings.scope` says
/// whether a session of a query `features` lacks is an error or skipped.
pub fn estimate_click_metric_from_log(
    path: &std::path::Path,
    features: &Dataset,
    scores: &[f64],
    settings: &CounterfactualSettings,
) -> Result<CounterfactualEstimate> {
    let mut outside = 0;
    let mut estimate = estimate_from_sessions(
        &mut |each| {
            outside = crate::for_each_session_in_scope(path, features, settings.scope, each)?;
            Ok(())
        },
        features,
        scores,
        settings,
    )?;
    estimate.sessions_outside = outside;
    Ok(estimate)
}

fn estimate_from_sessions(
    sessions: &mut Sessions<'_>,
    features: &Dataset,
    scores: &[f64],
    settings: &CounterfactualSettings,
) -> Result<CounterfactualEstimate> {
    if !(settings.z.is_finite() && settings.z > 0.0) {
        return Err(DataError::Invalid(format!(
            "the interval needs a positive number of standard errors, not {}",
            settings.z
        )));
    }
    let direct =
        match (settings.estimator, &settings.direct) {
            (Estimator::Dr, Some(model)) => Some((model.as_slice(), settings.logging)),
            (Estimator::Dr, None) => return Err(DataError::Invalid(
                "the dr estimator needs a direct model (a fitted click model or a value per row)"
                    .into(),
            )),
            (_, Some(_)) => {
                return Err(DataError::Invalid(format!(
                    "a direct model is read only by the dr estimator, not {}",
                    settings.estimator.name()
                )))
            }
            (_, None) => None,
        };
    let (terms, clicks) = terms(
        sessions,
        features,
        scores,
        settings.gain,
        &settings.propensities,
        direct,
    )?;
    Ok(estimate_from_terms(&terms, settings, clicks))
}

/// [`estimate_click_metric`] on precomputed session terms ([`session_terms`]); `clicks` is reported as given.
pub fn estimate_from_terms(
    terms: &[(f64, f64)],
    settings: &CounterfactualSettings,
    clicks: usize,
) -> CounterfactualEstimate {
    let estimator = settings.estimator;
    let value = point(estimator, terms);
    let se = standard_error(estimator, terms, value);
    let interval = |se: f64| Interval {
        std_error: se,
        low: value - settings.z * se,
        high: value + settings.z * se,
    };
    let bootstrap = (settings.bootstrap > 0).then(|| {
        let n = terms.len();
        let replicates: Vec<f64> = (0..settings.bootstrap as u64)
            .into_par_iter()
            .map(|b| {
                let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
                rng.set_stream(b);
                let (mut x, mut y) = (0.0, 0.0);
                for _ in 0..n {
                    let t = terms[rng.random_range(0..n)];
                    x += t.0;
                    y += t.1;
                }
                match estimator {
                    Estimator::Ips | Estimator::Dr => x / n as f64,
                    Estimator::Snips if y > 0.0 => x / y,
                    Estimator::Snips => 0.0,
                }
            })
            .collect();
        let m = replicates.iter().sum::<f64>() / replicates.len() as f64;
        let var = replicates.iter().map(|r| (r - m) * (r - m)).sum::<f64>()
            / (replicates.len().max(2) - 1) as f64;
        (settings.bootstrap, interval(var.sqrt()))
    });
    CounterfactualEstimate {
        estimator,
        gain: settings.gain,
        value,
        normal: interval(se),
        bootstrap,
        sessions: terms.len(),
        clicks,
        sessions_outside: 0,
    }
}
