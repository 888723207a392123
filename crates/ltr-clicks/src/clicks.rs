//! Click logs: the documented TSV format (read strictly by `click_log_reader.rs`, written atomically) and click
//! simulation from judged data under the position-based and cascade models (Joachims, Swaminathan & Schnabel, WSDM
//! 2017; ULTRA's curve).
//!
//! ## Format
//!
//! Tab-separated, one displayed document per line, with the header line [`CLICK_LOG_HEADER`]: the columns
//! `session`, `qid`, `docid`, `rank`, `clicked`, `propensity`, `production_rank`, separated by tabs; the last two
//! are optional (a header may stop after `clicked` or after `propensity`).
//!
//! `session` is an unsigned integer; a session's lines are contiguous, its ranks are 1, 2, … n in order and its
//! qid is one. `clicked` is 0 or 1. `propensity` (the examination probability of the rank, in (0, 1]) is optional:
//! the column may be absent from the header, or a line may leave it empty. Lines starting with `#` are comments.
//! `production_rank` is the rank the production ranker gave the document before a randomised intervention (a swap)
//! moved it, empty when none did. Documents are joined to a feature file by (qid, docid).

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use ltr_data::{DataError, Dataset, Result};

/// One displayed document of one session.
#[derive(Debug, Clone, PartialEq)]
pub struct ClickRecord {
    /// Session number.
    pub session: u64,
    /// Query id.
    pub qid: String,
    /// Document id.
    pub docid: String,
    /// Displayed rank (1-based).
    pub rank: u32,
    /// Whether the document was clicked.
    pub clicked: bool,
    /// Examination probability of the rank, when known.
    pub propensity: Option<f64>,
    /// The production ranker's rank of the document when an intervention displayed it elsewhere (or in place).
    pub production_rank: Option<u32>,
}

/// The header line of the format.
pub const CLICK_LOG_HEADER: &str =
    "session\tqid\tdocid\trank\tclicked\tpropensity\tproduction_rank";

pub(crate) fn parse_err(
    path: &Path,
    line: usize,
    token: &str,
    problem: &str,
    expected: &str,
) -> DataError {
    DataError::Parse {
        path: path.to_path_buf(),
        line,
        token: token.chars().take(40).collect(),
        problem: problem.into(),
        expected: expected.into(),
    }
}

/// The numbered (1-based) lines of a TSV text that are neither blank nor `#` comments, without a trailing `\r`.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r')))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
}

/// Write a click log (with the propensity column), atomically.
pub fn write_click_log(path: &Path, records: &[ClickRecord]) -> Result<()> {
    ltr_data::write_atomic(path, |w| {
        writeln!(w, "{CLICK_LOG_HEADER}")?;
        for r in records {
            let p = r.propensity.map(|p| p.to_string()).unwrap_or_default();
            let o = r.production_rank.map(|o| o.to_string()).unwrap_or_default();
            writeln!(
                w,
                "{}\t{}\t{}\t{}\t{}\t{p}\t{o}",
                r.session, r.qid, r.docid, r.rank, r.clicked as u8
            )?;
        }
        Ok(())
    })
}

/// How examination falls with rank in the position-based model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Examination {
    /// (1/rank)^η (Joachims et al. 2017).
    Inverse,
    /// ULTRA's measured curve [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]^η (its last value below
    /// rank 10).
    Ultra,
}

/// ULTRA's examination probabilities for ranks 1–10.
pub const ULTRA_CURVE: [f64; 10] = [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06];

/// The user model of a simulation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ClickModel {
    /// Position-based: a document is examined with the probability of its rank, independently of the others,
    /// and clicked when examined with the probability of its grade.
    PositionBased(Examination),
    /// Cascade: the user reads from the top, clicks with the probability of the grade and stops after a click.
    Cascade,
    /// Dependent click model (Guo, Liu & Wang, WSDM 2009): a cascade that may go on after a click, with the
    /// probability λ_r = 1 − e(r)/2 after a click at rank r, e being the inverse curve (1/r)^η.
    Dependent,
    /// User browsing model (Dupret & Piwowarski, SIGIR 2008): rank r is examined with the probability
    /// e(r − r') of its distance to the last click above it at r' (r' = 0 when none), e being the inverse curve
    /// (1/d)^η, independently of the click draws.
    UserBrowsing,
    /// Dynamic Bayesian network (Chapelle & Zhang, WWW 2009): a cascade where a clicked document satisfies the
    /// user with the probability (2^g − 1)/(2^max − 1) of its grade (the session then ends), and an unsatisfied
    /// user goes on to the next rank with the probability [`ClickSimulation::persistence`] (γ).
    DynamicBayesian,
}

impl ClickModel {
    /// The user model of a command-line name: `pbm`, `pbm-ultra`, `cascade`, `dcm`, `ubm` or `dbn`.
    pub fn parse(name: &str) -> Result<Self> {
        Ok(match name {
            "pbm" => Self::PositionBased(Examination::Inverse),
            "pbm-ultra" => Self::PositionBased(Examination::Ultra),
            "cascade" => Self::Cascade,
            "dcm" => Self::Dependent,
            "ubm" => Self::UserBrowsing,
            "dbn" => Self::DynamicBayesian,
            other => {
                return Err(DataError::Invalid(format!(
                "unknown user model `{other}` (expected pbm, pbm-ultra, cascade, dcm, ubm or dbn)"
            )))
            }
        })
    }
}

/// A click simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct ClickSimulation {
    /// The user model.
    pub model: ClickModel,
    /// Severity of position bias η (the examination curve is raised to it).
    pub eta: f64,
    /// Documents displayed per session (the production ranking's top).
    pub top: usize,
    /// Click probability of an examined non-relevant document (ε₋, noise).
    pub eps_minus: f64,
    /// Click probability of an examined document of the highest grade (ε₊); grades between get
    /// ε₋ + (ε₊ − ε₋)·(2^g − 1)/(2^max − 1), as ULTRA's.
    pub eps_plus: f64,
    /// Sessions to sample (queries drawn uniformly with replacement).
    pub sessions: u64,
    /// Seed.
    pub seed: u64,
    /// Randomised intervention for propensity estimation ([`Intervention::SwapWithTop`]), or none.
    pub intervention: Intervention,
    /// The probability γ that an unsatisfied user goes on to the next rank ([`ClickModel::DynamicBayesian`]).
    pub persistence: f64,
}

/// A randomised change of the production ranking that makes examination measurable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Intervention {
    /// Show the production ranking.
    #[default]
    None,
    /// Joachims et al.'s swap intervention: each session draws a rank k from 2 to the number displayed and, with
    /// probability ½, swaps the documents at ranks 1 and k; every line records its production rank.
    SwapWithTop,
}

impl Intervention {
    /// The intervention of a command-line name: `none` or `swap-top`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "none" => Ok(Self::None),
            "swap-top" => Ok(Self::SwapWithTop),
            other => Err(DataError::Invalid(format!(
                "unknown intervention `{other}` (expected none or swap-top)"
            ))),
        }
    }
}

impl Default for ClickSimulation {
    fn default() -> Self {
        Self {
            model: ClickModel::PositionBased(Examination::Inverse),
            eta: 1.0,
            top: 10,
            eps_minus: 0.1,
            eps_plus: 1.0,
            sessions: 10_000,
            seed: 1,
            intervention: Intervention::None,
            persistence: 0.9,
        }
    }
}

impl ClickSimulation {
    /// Examination probability of a (1-based) rank under the position-based model.
    pub fn examination(&self, rank: usize) -> f64 {
        let base = match self.model {
            ClickModel::PositionBased(Examination::Ultra) => {
                ULTRA_CURVE[(rank - 1).min(ULTRA_CURVE.len() - 1)]
            }
            _ => 1.0 / rank as f64,
        };
        base.powf(self.eta)
    }

    fn check(&self) -> Result<()> {
        let ok = self.eta.is_finite()
            && self.eta >= 0.0
            && self.top >= 1
            && (0.0..=1.0).contains(&self.eps_minus)
            && (0.0..=1.0).contains(&self.eps_plus)
            && self.eps_minus <= self.eps_plus
            && (0.0..=1.0).contains(&self.persistence);
        if ok {
            Ok(())
        } else {
            Err(DataError::Invalid(format!(
                "click simulation needs eta >= 0, top >= 1, 0 <= eps- <= eps+ <= 1 and a persistence in [0, 1] (eta {}, \
                 top {}, eps- {}, eps+ {}, persistence {})",
                self.eta, self.top, self.eps_minus, self.eps_plus, self.persistence
            )))
        }
    }

    /// Simulate sessions on `ds` ranked by the production `scores` (one per document; ties by input order): each
    /// session draws a query, shows its top documents and samples clicks. Session `s` uses its own random stream
    /// (the seed, stream `s`), so the log is the same bit for bit at any thread count. Documents without a
    /// `#docid` are named by their position in the query (`d0`, `d1`, …). The propensity column holds the true
    /// examination probability (position-based model) or is empty (cascade).
    pub fn simulate(&self, ds: &Dataset, scores: &[f64]) -> Result<Vec<ClickRecord>> {
        self.simulate_sessions(ds, scores, 0..self.sessions)
    }

    /// The sessions `range` of [`Self::simulate`] (which is `0..sessions`), the same records bit for bit: a long
    /// simulation can be consumed in pieces without holding the whole log.
    pub fn simulate_sessions(
        &self,
        ds: &Dataset,
        scores: &[f64],
        range: std::ops::Range<u64>,
    ) -> Result<Vec<ClickRecord>> {
        let sessions = self.simulate_compact(ds, scores, range)?;
        Ok(sessions.iter().flat_map(|s| s.records(ds)).collect())
    }

    /// The sessions `range` of [`Self::simulate_sessions`] by position instead of by name: the same random draws
    /// and the same clicks, without a string per displayed document. What a reproduction that joins its own
    /// simulation back to the same data reads ([`crate::ClickTrainingBuilder::add_simulated`]); 10⁶ clicks on
    /// OHSUMED display about 74 million documents.
    pub fn simulate_compact(
        &self,
        ds: &Dataset,
        scores: &[f64],
        range: std::ops::Range<u64>,
    ) -> Result<Vec<SimulatedSession>> {
        self.check()?;
        if scores.len() != ds.n_docs() {
            return Err(DataError::Shape(format!(
                "{} production scores for {} documents",
                scores.len(),
                ds.n_docs()
            )));
        }
        if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
            return Err(DataError::Invalid(format!(
                "production score {i} is not finite"
            )));
        }
        let max_grade = ds.labels().iter().fold(0.0f32, |a, &b| a.max(b)).max(1.0);
        let click_prob = |grade: f32| {
            let g = grade.max(0.0) as f64;
            self.eps_minus
                + (self.eps_plus - self.eps_minus) * (g.exp2() - 1.0)
                    / ((max_grade as f64).exp2() - 1.0)
        };
        // The production ranking of every query, computed once.
        let rankings: Vec<Vec<usize>> = ds
            .par_queries()
            .map(|q| {
                let r = q.rows();
                let mut order: Vec<usize> = (0..q.len()).collect();
                order.sort_by(|&a, &b| {
                    scores[r.start + b]
                        .total_cmp(&scores[r.start + a])
                        .then(a.cmp(&b))
                });
                order.truncate(self.top);
                order
            })
            .collect();
        // Each document's click probability, computed once per call instead of once per display (two `exp2`
        // each): the same function of the same grade.
        let click_of_doc: Vec<f64> = ds.labels().iter().map(|&g| click_prob(g)).collect();
        // The examination probability of each displayed rank, computed once (the same `powf` per rank).
        let longest = rankings.iter().map(Vec::len).max().unwrap_or(0);
        let examination: Vec<f64> = (1..=longest).map(|r| self.examination(r)).collect();
        // The dynamic Bayesian network's satisfaction probability of each document (its grade's gain share).
        let sat_of_doc: Vec<f64> = if self.model == ClickModel::DynamicBayesian {
            let top_gain = (max_grade as f64).exp2() - 1.0;
            ds.labels()
                .iter()
                .map(|&g| ((g.max(0.0) as f64).exp2() - 1.0) / top_gain)
                .collect()
        } else {
            Vec::new()
        };
        let n_queries = ds.n_queries();
        Ok(range
            .into_par_iter()
            .map(|s| {
                let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
                rng.set_stream(s);
                let query = rng.random_range(0..n_queries);
                let first = ds.query(query).rows().start;
                // (production position, document) in display order.
                let mut shown: Vec<(usize, usize)> =
                    rankings[query].iter().copied().enumerate().collect();
                let swapped = self.intervention == Intervention::SwapWithTop && shown.len() > 1;
                if swapped {
                    let k = rng.random_range(1..shown.len());
                    if rng.random::<bool>() {
                        shown.swap(0, k);
                    }
                }
                let mut stopped = false;
                // The 1-based rank of the last click so far (0: none), for the user browsing model.
                let mut last_click = 0usize;
                let shown = shown
                    .iter()
                    .enumerate()
                    .map(|(i, &(production, d))| {
                        let p_click = click_of_doc[first + d];
                        let (clicked, propensity) = match self.model {
                            ClickModel::PositionBased(_) => {
                                let e = examination[i];
                                let examined = rng.random::<f64>() < e;
                                let c = rng.random::<f64>() < p_click;
                                (examined && c, Some(e))
                            }
                            ClickModel::Cascade => {
                                let c = !stopped && rng.random::<f64>() < p_click;
                                stopped |= c;
                                (c, None)
                            }
                            ClickModel::Dependent => {
                                let c = !stopped && rng.random::<f64>() < p_click;
                                if c {
                                    // Go on with λ = 1 − e(r)/2.
                                    stopped = rng.random::<f64>() >= 1.0 - examination[i] / 2.0;
                                }
                                (c, None)
                            }
                            ClickModel::UserBrowsing => {
                                let e = examination[i - last_click];
                                let examined = rng.random::<f64>() < e;
                                let c = examined && rng.random::<f64>() < p_click;
                                if c {
                                    last_click = i + 1;
                                }
                                (c, None)
                            }
                            ClickModel::DynamicBayesian => {
                                let c = !stopped && rng.random::<f64>() < p_click;
                                if !stopped {
                                    let satisfied =
                                        c && rng.random::<f64>() < sat_of_doc[first + d];
                                    stopped = satisfied || rng.random::<f64>() >= self.persistence;
                                }
                                (c, None)
                            }
                        };
                        ShownDocument {
                            doc: d as u32,
                            production: production as u32,
                            clicked,
                            propensity,
                        }
                    })
                    .collect();
                SimulatedSession {
                    session: s,
                    query,
                    swapped,
                    shown,
                }
            })
            .collect())
    }
}

impl ClickSimulation {
    /// Simulate and write the log of [`Self::simulate`] to `path` (atomically), the same bytes as
    /// [`write_click_log`] of it, a block of sessions at a time: 10⁷ sessions never sit in memory at once.
    /// Returns the displayed documents and the clicks.
    pub fn write_log(&self, path: &Path, ds: &Dataset, scores: &[f64]) -> Result<(u64, u64)> {
        // Check the settings and scores before creating the file.
        self.simulate_compact(ds, scores, 0..0)?;
        let (mut shown, mut clicks) = (0u64, 0u64);
        const BLOCK: u64 = 1 << 16;
        ltr_data::write_atomic(path, |w| {
            writeln!(w, "{CLICK_LOG_HEADER}")?;
            let mut start = 0;
            while start < self.sessions {
                let end = (start + BLOCK).min(self.sessions);
                let block = self
                    .simulate_compact(ds, scores, start..end)
                    .map_err(std::io::Error::other)?;
                for session in &block {
                    let q = ds.query(session.query);
                    for (i, d) in session.shown.iter().enumerate() {
                        let p = d.propensity.map(|p| p.to_string()).unwrap_or_default();
                        write!(w, "{}\t{}\t", session.session, q.qid())?;
                        match q.docid(d.doc as usize) {
                            Some(id) => write!(w, "{id}")?,
                            None => write!(w, "d{}", d.doc)?,
                        }
                        write!(w, "\t{}\t{}\t{p}\t", i + 1, d.clicked as u8)?;
                        if session.swapped {
                            write!(w, "{}", d.production + 1)?;
                        }
                        writeln!(w)?;
                        clicks += d.clicked as u64;
                    }
                    shown += session.shown.len() as u64;
                }
                start = end;
            }
            Ok(())
        })?;
        Ok((shown, clicks))
    }
}

/// One session of [`ClickSimulation::simulate_compact`].
#[derive(Debug, Clone, PartialEq)]
pub struct SimulatedSession {
    /// Session number.
    pub session: u64,
    /// The query's index in the simulated dataset.
    pub query: usize,
    /// Whether a swap intervention changed the display (the log then records production ranks).
    pub swapped: bool,
    /// The displayed documents, rank 1 first.
    pub shown: Vec<ShownDocument>,
}

impl SimulatedSession {
    /// The session as log records ([`ClickSimulation::simulate_sessions`]' form), `ds` being the simulated
    /// dataset: documents named by their docid, or `d0`, `d1`, … by position.
    pub fn records(&self, ds: &Dataset) -> Vec<ClickRecord> {
        let q = ds.query(self.query);
        self.shown
            .iter()
            .enumerate()
            .map(|(i, shown)| ClickRecord {
                session: self.session,
                qid: q.qid().to_string(),
                docid: q
                    .docid(shown.doc as usize)
                    .map_or_else(|| format!("d{}", shown.doc), str::to_string),
                rank: i as u32 + 1,
                clicked: shown.clicked,
                propensity: shown.propensity,
                production_rank: self.swapped.then_some(shown.production + 1),
            })
            .collect()
    }
}

/// One displayed document of a [`SimulatedSession`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShownDocument {
    /// The document's position within its query in the simulated dataset.
    pub doc: u32,
    /// The production ranker's 0-based position of the document.
    pub production: u32,
    /// Whether it was clicked.
    pub clicked: bool,
    /// The examination probability of its displayed rank (position-based model), or none (cascade).
    pub propensity: Option<f64>,
}

/// The examination probability of one rank relative to rank 1, estimated from swap interventions.
#[derive(Debug, Clone, PartialEq)]
pub struct PropensityEstimate {
    /// Displayed rank.
    pub rank: u32,
    /// Estimated p_rank / p_1 (1 at rank 1).
    pub value: f64,
    /// Lower end of the interval.
    pub low: f64,
    /// Upper end of the interval.
    pub high: f64,
    /// Sessions behind the estimate (swapped to this rank; at rank 1, the sessions left unswapped).
    pub sessions: usize,
}

/// Relative propensities from a log with swap interventions ([`Intervention::SwapWithTop`]): the click rate of the
/// production ranker's top document when swapped to rank k, over its click rate when left at rank 1, estimates
/// p_k / p_1 under the position-based model whatever its relevance (Joachims, Swaminathan & Schnabel 2017, §5).
/// The interval is the delta method's on the log ratio, ±`z` standard errors (1.96 for 95%).
pub fn estimate_propensities(log: &[ClickRecord], z: f64) -> Result<Vec<PropensityEstimate>> {
    let mut counts = SwapCounts::default();
    for session in log.chunk_by(|a, b| a.session == b.session) {
        counts.add(session);
    }
    counts.estimate(z)
}

/// [`estimate_propensities`] of the click log at `path` ([`crate::read_click_log`]'s format and checks), read a
/// session at a time: the same estimate without holding the log.
pub fn estimate_propensities_from_log(path: &Path, z: f64) -> Result<Vec<PropensityEstimate>> {
    let mut counts = SwapCounts::default();
    crate::for_each_click_session(path, |session| {
        counts.add(session);
        Ok(())
    })?;
    counts.estimate(z)
}

/// Per displayed rank of the production-top document: its sessions and clicks.
#[derive(Default)]
struct SwapCounts {
    shown: Vec<(usize, usize)>,
    any: bool,
}

impl SwapCounts {
    fn add(&mut self, session: &[ClickRecord]) {
        let Some(top) = session.iter().find(|r| r.production_rank == Some(1)) else {
            return;
        };
        self.any = true;
        let k = top.rank as usize;
        if self.shown.len() < k {
            self.shown.resize(k, (0, 0));
        }
        self.shown[k - 1].0 += 1;
        self.shown[k - 1].1 += top.clicked as usize;
    }

    fn estimate(self, z: f64) -> Result<Vec<PropensityEstimate>> {
        swap_estimate(self.shown, self.any, z)
    }
}

/// The propensity of each rank relative to rank 1 from the swap counts, with its interval.
fn swap_estimate(shown: Vec<(usize, usize)>, any: bool, z: f64) -> Result<Vec<PropensityEstimate>> {
    if !(z.is_finite() && z > 0.0) {
        return Err(DataError::Invalid(format!(
            "the interval needs a positive number of standard errors, not {z}"
        )));
    }
    if !any {
        return Err(DataError::Invalid(
            "the log records no swap interventions (its production_rank column is empty): simulate with a swap \
             intervention (`ltr clicks simulate --intervention swap-top`) or log production ranks"
                .into(),
        ));
    }
    let (n1, c1) = shown[0];
    if c1 == 0 {
        return Err(DataError::Invalid(
            "the production ranker's top document is never clicked at rank 1: no propensity can be estimated".into(),
        ));
    }
    let var = |n: usize, c: usize| {
        let q = c as f64 / n as f64;
        (1.0 - q) / (n as f64 * q)
    };
    let mut out = vec![PropensityEstimate {
        rank: 1,
        value: 1.0,
        low: 1.0,
        high: 1.0,
        sessions: n1,
    }];
    for (i, &(n, c)) in shown.iter().enumerate().skip(1) {
        if n == 0 || c == 0 {
            continue;
        }
        let ratio = (c as f64 / n as f64) / (c1 as f64 / n1 as f64);
        let half = z * (var(n, c) + var(n1, c1)).sqrt();
        out.push(PropensityEstimate {
            rank: i as u32 + 1,
            value: ratio,
            low: ratio * (-half).exp(),
            high: ratio * half.exp(),
            sessions: n,
        });
    }
    Ok(out)
}

/// The header of a propensity table file.
pub const PROPENSITY_TABLE_HEADER: &str = "rank\tpropensity\tlow\thigh\tsessions";

/// Write a propensity table (tab-separated, [`PROPENSITY_TABLE_HEADER`]), atomically: the form `ltr train
/// --propensities` reads.
pub fn write_propensity_table(path: &Path, table: &[PropensityEstimate]) -> Result<()> {
    ltr_data::write_atomic(path, |w| {
        writeln!(w, "{PROPENSITY_TABLE_HEADER}")?;
        for e in table {
            writeln!(
                w,
                "{}\t{}\t{}\t{}\t{}",
                e.rank, e.value, e.low, e.high, e.sessions
            )?;
        }
        Ok(())
    })
}

/// Read a propensity table: a header line, then one line per rank, starting at rank 1 and increasing, whose first
/// two tab-separated fields are the rank and a positive propensity (the other fields are ignored; `#` lines are
/// comments). Returns the propensities by rank (element 0 is rank 1). A rank the table skips — an estimate from
/// swaps has none where the swapped document was never clicked — takes the value of the rank above it: a larger
/// propensity than the truth, so a smaller weight, as clipping would give.
pub fn read_propensity_table(path: &Path) -> Result<Vec<f64>> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::io(path, e))?;
    let mut lines = data_lines(&text);
    match lines.next() {
        Some((_, h)) if h.split('\t').next() == Some("rank") => {}
        Some((n, h)) => {
            return Err(parse_err(
                path,
                n,
                h,
                "not a propensity table header",
                PROPENSITY_TABLE_HEADER,
            ))
        }
        None => {
            return Err(parse_err(
                path,
                1,
                "",
                "empty propensity table",
                PROPENSITY_TABLE_HEADER,
            ))
        }
    }
    let mut out = Vec::new();
    for (n, line) in lines {
        let mut f = line.split('\t');
        let (rank, value) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
        let want = out.len() + 1;
        let got = rank
            .parse::<usize>()
            .ok()
            .filter(|&r| r >= want && (r == 1 || want > 1));
        let Some(got) = got else {
            let expected = if want == 1 {
                "rank 1".to_string()
            } else {
                format!("a rank of {want} or more")
            };
            return Err(parse_err(path, n, rank, "bad rank", &expected));
        };
        let p = value
            .parse::<f64>()
            .ok()
            .filter(|p| *p > 0.0 && p.is_finite())
            .ok_or_else(|| parse_err(path, n, value, "bad propensity", "a positive number"))?;
        let above = out.last().copied().unwrap_or(p);
        out.resize(got - 1, above);
        out.push(p);
    }
    if out.is_empty() {
        return Err(parse_err(
            path,
            1,
            "",
            "a propensity table without ranks",
            "rank 1",
        ));
    }
    Ok(out)
}
