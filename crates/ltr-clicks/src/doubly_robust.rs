//! The doubly robust click training set (Oosterhuis, *Doubly-Robust Estimation for Correcting Position-Bias in Click
//! Feedback for Unbiased Learning to Rank*, ACM TOIS 41(3), 2023, presented at SIGIR 2023): every document of each
//! logged query, labelled by an estimate of its relevance that is unbiased when either the examination
//! probabilities or a direct (regression) model of relevance is right.
//!
//! ## The estimate
//!
//! Under the position-based model an examined document `d` is clicked with probability `R(d)`, and rank `k` is
//! examined with probability `p(k)` (the log's propensity column, or a table by rank). For a query shown in `N`
//! sessions, `d`'s **expected treatment** is `ρ(d) = (1/N) Σ_s p(k_s(d))`, the mean examination probability of the
//! ranks the sessions showed it at, a session that did not show it counting 0; `c̄(d)` is its clicks over `N`.
//! The paper's per-document estimate is
//!
//! ```text
//! R̂_DR(d) = R̂(d) + (c̄(d) − ρ(d) · R̂(d)) / ρ(d)     when ρ(d) > 0,
//! R̂_DR(d) = R̂(d)                                    when no session showed d,
//! ```
//!
//! `R̂` the direct model. The paper takes `ρ` from the logging policy's distribution of displays; the mean over
//! the logged sessions used here is that expectation under a deterministic policy and its unbiased estimate under a
//! randomised one (a swap intervention, say), with which `R̂` cancels from a shown document's label: `c̄/ρ` is then
//! a ratio estimate per document, consistent, with the variance of which ranks the document happened to be shown
//! at taken out. The paper's DR estimate of a ranking policy's click utility is `Σ_d ω(d) · R̂_DR(d)`,
//! `ω(d)` the examination weight the policy gives `d`, summed over the queries with weight `N`: a ranking metric
//! of these labels. So a learner that optimises DCG with the labels as linear gains and each query weighted by its
//! sessions optimises the DR estimate (`lambdarank debias=dr`).
//!
//! Where the log showed a document, its label is `c̄/ρ`, the IPS estimate with the expected treatment, whatever
//! `R̂` is; the direct model decides the labels of the documents no session showed, which an IPS click set leaves
//! out (a production ranker that shows its top 10 never shows the other 140 documents of an OHSUMED query). That
//! is the selection bias DR removes when `R̂` is right ([`UnshownDocuments::Direct`]); under a stochastic logging
//! policy (displays that vary) the correction also lowers the variance of the shown documents' labels.
//!
//! When `R̂` is not right on the unshown documents — it is fitted on the shown ones, which a production ranker
//! chose, and extrapolates to the rest — their labels are biased and nothing corrects them. On ULTRA's protocol
//! (a deterministic production ranker showing its top 10) they cost 0.002–0.015 test NDCG@10 against leaving them
//! out on every MQ2008 fold and 0.019–0.116 on every OHSUMED fold (BENCHMARKS.md, "The doubly robust learner"),
//! so [`UnshownDocuments::LeaveOut`] is the default: the estimate restricted to the shown documents, which under a deterministic display is IPS with
//! each document's clicks pooled over its sessions.
//!
//! The paper's code also clips the expected treatment at a threshold `τ` (`alpha_clip`, `min(10/√N, 1)` for `N`
//! logged queries) and lets the direct model fill in what the clip takes away:
//! [`DoublyRobustSettings::clip`] (`auto` is the paper's choice), [`doubly_robust_label`]. `tests/dr_paper.rs`
//! checks the labels against that code's `compute_weights` on a small log, clipped and not, with and without a
//! direct model.
//!
//! ## The direct model
//!
//! `R̂` is a logistic regression on the documents' features (standardised over the shown documents), fitted to the
//! shown documents' clicks out of their expected examined impressions `N · ρ(d)` (clicks capped there): the
//! maximum-likelihood fit of `P(click) = p(k) · R(d)` with examination replaced by its expectation, the M-step of
//! regression EM ([`crate::estimate_propensities_em`]) with the propensities known. Its steps are
//! [`DoublyRobustSettings::direct_model_steps`].
//!
//! Propensities relative to rank 1 (`p(k)/p(1)`, as the estimates give them) scale every label by `p(1)`, which
//! no ranking metric sees.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use ltr_data::{DataError, Dataset, Result};

use crate::click_em::{fit_logistic, sigmoid};
use crate::click_sessions::{session_pattern, simulated_pattern};
use crate::click_training::{rows_by_document, PropensitySource};
use crate::clicks::{ClickRecord, SimulatedSession};

/// What the doubly robust set does with the documents of a logged query that no session showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnshownDocuments {
    /// Leave them out: the set holds the shown documents, labelled `c̄/ρ` (the estimate restricted to the
    /// documents the log can say something about, as [`crate::estimate_click_metric`]'s DR is).
    LeaveOut,
    /// Keep them, labelled by the direct model (the paper's estimator; unbiased for them only when the direct
    /// model is right).
    Direct,
}

impl UnshownDocuments {
    /// The value of a parameter name: `leave-out` or `direct`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "leave-out" => Ok(Self::LeaveOut),
            "direct" => Ok(Self::Direct),
            other => Err(DataError::Invalid(format!(
                "unknown treatment of unshown documents `{other}` (expected leave-out or direct)"
            ))),
        }
    }
}

/// Settings of the doubly robust set ([`doubly_robust_set`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DoublyRobustSettings {
    /// The documents no session showed.
    pub unshown: UnshownDocuments,
    /// Gradient steps (Armijo step size) of the direct model's logistic regression (fitted only for
    /// [`UnshownDocuments::Direct`]).
    pub direct_model_steps: usize,
    /// The clipping threshold `τ` of the expected treatment. A shown document with `ρ(d) < τ` is labelled
    /// `(c̄(d) + (τ − ρ(d)) · R̂(d)) / τ` instead of `c̄/ρ`: its inverse weight capped at `1/τ`, and the bias of the
    /// cap filled in by the direct model (the paper's code, `compute_weights` with `alpha_clip`); under
    /// [`UnshownDocuments::LeaveOut`] there is no direct model and the label is `c̄/τ`, clipped IPS. See
    /// [`doubly_robust_label`].
    pub clip: ClipThreshold,
}

/// The clipping threshold `τ` of the doubly robust set's expected treatment ([`DoublyRobustSettings::clip`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClipThreshold {
    /// This `τ` in `[0, 1]` (0: no clipping).
    Fixed(f64),
    /// The paper's code's choice, `τ = min(10/√N, 1)` for the `N` sessions of the log.
    Auto,
}

impl ClipThreshold {
    /// `auto` or a number in `[0, 1]`.
    ///
    /// ```
    /// use ltr_clicks::ClipThreshold;
    /// assert_eq!(ClipThreshold::parse("auto"), Ok(ClipThreshold::Auto));
    /// assert_eq!(ClipThreshold::parse("0.25"), Ok(ClipThreshold::Fixed(0.25)));
    /// assert!(ClipThreshold::parse("1.5").is_err());
    /// // At 10⁴ sessions `auto` is 0.1; at 100 or fewer it is 1.
    /// assert_eq!(ClipThreshold::Auto.tau(10_000), 0.1);
    /// assert_eq!(ClipThreshold::Auto.tau(64), 1.0);
    /// ```
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        if s.trim().eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        let t = Self::Fixed(
            s.trim()
                .parse::<f64>()
                .map_err(|_| format!("`{s}` is neither `auto` nor a number in [0, 1]"))?,
        );
        t.check().map_err(|e| e.to_string())?;
        Ok(t)
    }

    /// `τ` for a log of `sessions` sessions.
    pub fn tau(&self, sessions: usize) -> f64 {
        match *self {
            Self::Fixed(t) => t,
            Self::Auto => (10.0 / (sessions.max(1) as f64).sqrt()).min(1.0),
        }
    }

    fn check(&self) -> Result<()> {
        match *self {
            Self::Fixed(t) if !(0.0..=1.0).contains(&t) => Err(DataError::Invalid(format!(
                "the clipping threshold of the expected treatment must be in [0, 1] or auto, not {t}"
            ))),
            _ => Ok(()),
        }
    }
}

impl DoublyRobustSettings {
    /// An error for a setting the set cannot be built with, checked before any session is read.
    fn check(&self) -> Result<()> {
        self.clip.check()
    }
}

impl Default for DoublyRobustSettings {
    fn default() -> Self {
        Self {
            unshown: UnshownDocuments::LeaveOut,
            direct_model_steps: 300,
            clip: ClipThreshold::Fixed(0.0),
        }
    }
}

/// One document's doubly robust label from its `clicks` and expected examined impressions `examined` (`N · ρ`)
/// over a query's `sessions` (`N`), the direct model's `r_hat` and the clipping threshold `clip` (`τ`; 0: none):
///
/// ```text
/// R̂ + (c̄ − ρ·R̂)/ρ        when ρ ≥ τ (c̄/ρ up to rounding: R̂ cancels)
/// (c̄ + (τ − ρ)·R̂)/τ      when 0 < ρ < τ
/// R̂                      when no session showed the document (ρ = 0; the paper's code gives it R̂ when τ > 0)
/// ```
///
/// ```
/// use ltr_clicks::doubly_robust_label;
/// // 30 clicks in 100 sessions at an expected examination of 0.5: 0.6 whatever the direct model says.
/// assert!((doubly_robust_label(30.0, 50.0, 100.0, 0.9, 0.0) - 0.6).abs() < 1e-12);
/// // Clipped at τ = 0.8: (0.3 + 0.3 · 0.9) / 0.8.
/// assert!((doubly_robust_label(30.0, 50.0, 100.0, 0.9, 0.8) - 0.7125).abs() < 1e-12);
/// ```
pub fn doubly_robust_label(
    clicks: f64,
    examined: f64,
    sessions: f64,
    r_hat: f64,
    clip: f64,
) -> f64 {
    if examined <= 0.0 {
        r_hat
    } else if examined >= clip * sessions {
        // R̂ + (c̄ − ρ·R̂)/ρ with c̄ = c/N and ρ = e/N: the N cancel.
        r_hat + (clicks - examined * r_hat) / examined
    } else {
        (clicks / sessions + (clip - examined / sessions) * r_hat) / clip
    }
}

/// What [`doubly_robust_set`] found in the log.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DoublyRobustStats {
    /// Sessions read.
    pub sessions: usize,
    /// Clicks read.
    pub clicks: usize,
    /// Training queries: the feature file's queries the log shows.
    pub queries: usize,
    /// Sessions of queries outside the feature file, skipped ([`crate::SessionScope::FeatureQueries`]; not in
    /// `sessions`).
    pub sessions_outside: usize,
    /// Documents some session showed (their labels carry the clicks).
    pub shown_documents: usize,
    /// Documents of those queries no session showed (labelled by the direct model alone, or left out).
    pub unshown_documents: usize,
    /// The direct model's mean log-loss per expected examined impression on the shown documents, when fitted.
    pub direct_model_log_loss: Option<f64>,
    /// The clipping threshold `τ` the labels used ([`ClipThreshold::tau`] of the sessions read).
    pub clip: f64,
}

/// Sessions counted a session at a time.
#[derive(Debug, Clone)]
struct Counter<'a> {
    features: &'a Dataset,
    rows: HashMap<(&'a str, String), u32>,
    propensities: PropensitySource,
    /// Sessions by query.
    sessions: BTreeMap<usize, u64>,
    /// Clicks by row.
    clicks: HashMap<u32, u64>,
    /// Impressions by (row, propensity bits): the expected treatment is summed from them in a fixed order.
    shown: BTreeMap<(u32, u64), u64>,
    stats: DoublyRobustStats,
}

impl<'a> Counter<'a> {
    fn new(features: &'a Dataset, propensities: PropensitySource) -> Result<Self> {
        propensities.check()?;
        Ok(Self {
            features,
            rows: rows_by_document(features),
            propensities,
            sessions: BTreeMap::new(),
            clicks: HashMap::new(),
            shown: BTreeMap::new(),
            stats: DoublyRobustStats::default(),
        })
    }

    /// The examination probability of a shown `rank` (1-based) under this set's source, `logged` the log's.
    fn propensity(&self, session: u64, rank: usize, logged: Option<f64>) -> Result<f64> {
        let p = match &self.propensities {
            PropensitySource::Logged => logged.ok_or_else(|| DataError::ClickSession {
                session,
                problem: format!(
                    "rank {rank} has no propensity in the log; give a propensity table (`ltr clicks propensity`)"
                ),
            })?,
            PropensitySource::ByRank(t) => t[(rank - 1).min(t.len() - 1)],
        };
        if !(p > 0.0 && p.is_finite()) {
            return Err(DataError::ClickSession {
                session,
                problem: format!("rank {rank} has propensity {p}, not a positive number"),
            });
        }
        Ok(p)
    }

    fn add(&mut self, session: &[ClickRecord]) -> Result<()> {
        let id = session[0].session;
        let ((display, clicked), q) = session_pattern(id, session, self.features, &self.rows)?;
        // The propensity of every shown rank: DR weighs the unclicked impressions too.
        let mut by_rank = vec![0.0; display.len()];
        for r in session {
            by_rank[r.rank as usize - 1] = self.propensity(id, r.rank as usize, r.propensity)?;
        }
        self.count(q, &display, &clicked, &by_rank);
        Ok(())
    }

    /// Add a session simulated on this set's own features ([`crate::ClickSimulation::simulate_compact`]).
    fn add_simulated(&mut self, session: &SimulatedSession) -> Result<()> {
        let (display, clicked) = simulated_pattern(session, self.features)?;
        let by_rank = (1..)
            .zip(&session.shown)
            .map(|(rank, d)| self.propensity(session.session, rank, d.propensity))
            .collect::<Result<Vec<f64>>>()?;
        self.count(session.query, &display, &clicked, &by_rank);
        Ok(())
    }

    /// Count one checked session of query `q`: its shown rows in rank order, their clicks and propensities.
    fn count(&mut self, q: usize, display: &[u32], clicked: &[bool], by_rank: &[f64]) {
        self.stats.sessions += 1;
        *self.sessions.entry(q).or_insert(0) += 1;
        for ((&row, &c), &p) in display.iter().zip(clicked).zip(by_rank) {
            *self.shown.entry((row, p.to_bits())).or_insert(0) += 1;
            if c {
                self.stats.clicks += 1;
                *self.clicks.entry(row).or_insert(0) += 1;
            }
        }
    }

    fn finish(&self, settings: &DoublyRobustSettings) -> Result<(Dataset, DoublyRobustStats)> {
        let mut stats = self.stats;
        if self.sessions.is_empty() {
            return Err(DataError::Invalid("the click log holds no session".into()));
        }
        if stats.clicks == 0 {
            return Err(DataError::Invalid(format!(
                "the click log's {} sessions hold no click: nothing to learn from",
                stats.sessions
            )));
        }
        // Expected examined impressions N·ρ(d) by row, summed in (row, propensity) order.
        let mut examined: HashMap<u32, f64> = HashMap::new();
        for (&(row, bits), &n) in &self.shown {
            *examined.entry(row).or_insert(0.0) += n as f64 * f64::from_bits(bits);
        }
        let features = self.features;
        let mut rows = Vec::new();
        let mut offsets = vec![0];
        let mut qids = Vec::with_capacity(self.sessions.len());
        let mut weights = Vec::with_capacity(self.sessions.len());
        // Each row's query's sessions, N.
        let mut row_sessions = Vec::new();
        let leave_out = settings.unshown == UnshownDocuments::LeaveOut;
        for (&q, &n) in &self.sessions {
            if leave_out {
                rows.extend(
                    features
                        .query_range(q)
                        .filter(|&r| examined.contains_key(&(r as u32))),
                );
            } else {
                rows.extend(features.query_range(q));
            }
            row_sessions.resize(rows.len(), n as f64);
            offsets.push(rows.len());
            qids.push(features.qids()[q].clone());
            weights.push(n as f64);
        }
        stats.queries = qids.len();
        let shown_rows: Vec<usize> = rows
            .iter()
            .copied()
            .filter(|&r| examined.contains_key(&(r as u32)))
            .collect();
        stats.shown_documents = shown_rows.len();
        stats.unshown_documents = self
            .sessions
            .keys()
            .map(|&q| features.query_range(q).len())
            .sum::<usize>()
            - shown_rows.len();
        // Left out, the unshown documents need no direct model: a shown one's label does not depend on it.
        let direct = (!leave_out)
            .then(|| DirectModel::fit(features, &shown_rows, &examined, &self.clicks, settings));
        stats.direct_model_log_loss = direct.as_ref().map(|m| m.log_loss);
        let tau = settings.clip.tau(stats.sessions);
        stats.clip = tau;
        let labels: Vec<f32> = rows
            .iter()
            .zip(&row_sessions)
            .map(|(&r, &n)| {
                let r_hat = direct.as_ref().map_or(0.0, |m| m.predict(features, r));
                let e = examined.get(&(r as u32)).copied().unwrap_or(0.0);
                let c = self.clicks.get(&(r as u32)).copied().unwrap_or(0) as f64;
                doubly_robust_label(c, e, n, r_hat, tau) as f32
            })
            .collect();
        let mut ds = Dataset::new(features.select_rows_matrix(&rows), labels, offsets, qids)?;
        if let Some(d) = features.docids() {
            ds = ds.with_docids(d.select(&rows))?;
        }
        Ok((ds.with_query_weights(weights)?, stats))
    }
}

/// The direct model: a logistic regression on standardised features.
struct DirectModel {
    mean: Vec<f64>,
    scale: Vec<f64>,
    /// Weights, then the intercept.
    w: Vec<f64>,
    log_loss: f64,
}

impl DirectModel {
    fn fit(
        features: &Dataset,
        shown: &[usize],
        examined: &HashMap<u32, f64>,
        clicks: &HashMap<u32, u64>,
        settings: &DoublyRobustSettings,
    ) -> Self {
        let d = features.n_features();
        let raw = |r: usize| {
            let row = features.row(r);
            (0..d).map(move |j| f64::from(row.get(j)))
        };
        // Mean and standard deviation of each feature over the shown documents, summed in row order.
        let mut mean = vec![0.0; d];
        for &r in shown {
            mean.iter_mut().zip(raw(r)).for_each(|(m, x)| *m += x);
        }
        let n = shown.len().max(1) as f64;
        mean.iter_mut().for_each(|m| *m /= n);
        let mut var = vec![0.0; d];
        for &r in shown {
            var.iter_mut()
                .zip(raw(r).zip(&mean))
                .for_each(|(v, (x, m))| *v += (x - m) * (x - m));
        }
        // A constant feature stays 0 after standardising.
        let scale: Vec<f64> = var
            .iter()
            .map(|v| {
                let sd = (v / n).sqrt();
                if sd > 0.0 && sd.is_finite() {
                    1.0 / sd
                } else {
                    0.0
                }
            })
            .collect();
        let mut model = Self {
            mean,
            scale,
            w: vec![0.0; d + 1],
            log_loss: 0.0,
        };
        let x: Vec<Vec<f32>> = shown
            .iter()
            .map(|&r| model.standardised(features, r))
            .collect();
        let e: Vec<f64> = shown.iter().map(|&r| examined[&(r as u32)]).collect();
        // Clicks beyond the expected examined impressions (an estimate's propensities too high) would make the
        // likelihood unbounded: they count as all examined impressions clicked.
        let c: Vec<f64> = shown
            .iter()
            .zip(&e)
            .map(|(&r, &e)| (clicks.get(&(r as u32)).copied().unwrap_or(0) as f64).min(e))
            .collect();
        fit_logistic(&x, &c, &e, &mut model.w, settings.direct_model_steps);
        let total: f64 = e.iter().sum();
        let loss: f64 = x
            .iter()
            .zip(c.iter().zip(&e))
            .map(|(xi, (&ci, &ei))| {
                let p = model.logit(xi).clamp(1e-12, 1.0 - 1e-12);
                -(ci * p.ln() + (ei - ci) * (1.0 - p).ln())
            })
            .sum();
        model.log_loss = if total > 0.0 { loss / total } else { 0.0 };
        model
    }

    fn standardised(&self, features: &Dataset, r: usize) -> Vec<f32> {
        let row = features.row(r);
        (0..self.mean.len())
            .map(|j| ((f64::from(row.get(j)) - self.mean[j]) * self.scale[j]) as f32)
            .collect()
    }

    fn logit(&self, x: &[f32]) -> f64 {
        let d = self.mean.len();
        sigmoid(
            self.w[d]
                + x.iter()
                    .zip(&self.w)
                    .map(|(a, b)| f64::from(*a) * b)
                    .sum::<f64>(),
        )
    }

    fn predict(&self, features: &Dataset, r: usize) -> f64 {
        self.logit(&self.standardised(features, r))
    }
}

/// The doubly robust training set of `log` (sessions contiguous, as [`crate::read_click_log`] reads them) on
/// `features`: one query per feature-file query the log shows, holding all of its documents labelled by
/// `R̂_DR` (see the module documentation), weighted by its sessions ([`Dataset::query_weights`]). Queries keep the
/// feature file's order, so the set does not depend on the order of the sessions in the log.
///
/// Errors name the session, as [`crate::click_session_set`]'s do, and a shown rank without a propensity.
pub fn doubly_robust_set(
    log: &[ClickRecord],
    features: &Dataset,
    propensities: &PropensitySource,
    settings: &DoublyRobustSettings,
) -> Result<(Dataset, DoublyRobustStats)> {
    counted(features, propensities, settings, |counter| {
        crate::click_log_reader::by_distinct_session(log)(&mut |s| counter.add(s))
    })
}

/// [`doubly_robust_set`] of the click log at `path`, read a session at a time ([`crate::for_each_click_session`]).
/// `scope` says whether sessions of queries `features` lacks are errors or skipped; skipped sessions are not among
/// the N of [`ClipThreshold::Auto`].
pub fn doubly_robust_set_from_log(
    path: &Path,
    features: &Dataset,
    propensities: &PropensitySource,
    settings: &DoublyRobustSettings,
    scope: crate::SessionScope,
) -> Result<(Dataset, DoublyRobustStats)> {
    let mut outside = 0;
    let (ds, mut stats) = counted(features, propensities, settings, |counter| {
        outside = crate::for_each_session_in_scope(path, features, scope, |s| counter.add(s))?;
        Ok(())
    })?;
    stats.sessions_outside = outside;
    Ok((ds, stats))
}

/// The set of the sessions `feed` gives a counter, the settings checked before the first is read.
fn counted<'a>(
    features: &'a Dataset,
    propensities: &PropensitySource,
    settings: &DoublyRobustSettings,
    feed: impl FnOnce(&mut Counter<'a>) -> Result<()>,
) -> Result<(Dataset, DoublyRobustStats)> {
    settings.check()?;
    let mut counter = Counter::new(features, propensities.clone())?;
    feed(&mut counter)?;
    counter.finish(settings)
}

/// [`doubly_robust_set`] built up from a simulation that ran on the same feature set
/// ([`crate::ClickSimulation::simulate_compact`]), a piece at a time, as [`crate::ClickSessionBuilder`] builds the
/// session set: a set can be taken after each piece ([`finish`](Self::finish)) while sessions are still being
/// added. Documents are joined by their position in the query, so on a feature set whose docids are unique within
/// each query the set is [`doubly_robust_set`]'s of the same sessions written as a log, bit for bit.
#[derive(Debug, Clone)]
pub struct DoublyRobustBuilder<'a> {
    counter: Counter<'a>,
    settings: DoublyRobustSettings,
}

impl<'a> DoublyRobustBuilder<'a> {
    /// An empty set over `features`, the dataset the sessions are simulated on; propensities from `propensities`
    /// (the simulation's own under [`PropensitySource::Logged`]).
    pub fn new(
        features: &'a Dataset,
        propensities: PropensitySource,
        settings: DoublyRobustSettings,
    ) -> Result<Self> {
        settings.check()?;
        Ok(Self {
            counter: Counter::new(features, propensities)?,
            settings,
        })
    }

    /// Add sessions simulated on this builder's own feature set; sessions of another dataset are refused, and so
    /// is a session naming a query or document the feature set lacks, or a rank without a propensity.
    pub fn add_simulated(
        &mut self,
        simulated_on: &Dataset,
        sessions: &[SimulatedSession],
    ) -> Result<()> {
        if !std::ptr::eq(simulated_on, self.counter.features) {
            return Err(DataError::Invalid(
                "DoublyRobustBuilder::add_simulated needs sessions simulated on the builder's own feature set"
                    .into(),
            ));
        }
        sessions
            .iter()
            .try_for_each(|s| self.counter.add_simulated(s))
    }

    /// The set of the sessions added so far (the builder keeps them, to go on adding).
    pub fn finish(&self) -> Result<(Dataset, DoublyRobustStats)> {
        self.counter.finish(&self.settings)
    }
}
