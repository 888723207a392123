//! Click sessions for learners that correct position bias themselves (`lambdamart` with `debias`): a log joined to
//! a feature file keeping every displayed document's position, and the inputs that carry positions — LightGBM's
//! `.position` sidecar and a per-document (qid, docid, position, click) table.
//!
//! A session is a query: its displayed documents in display order, each labelled 1 if clicked and 0 if not, with
//! its position (0 = the top). Identical sessions (the same query, the same documents in the same order, the same
//! clicks) are one query weighted by their count, which is the same LambdaRank objective summed session by session
//! because each session's gradients are multiplied by its weight. A production ranker that does not change shows
//! each query one way, so 10⁶ sessions stay a few hundred distinct click patterns a query. Sessions without a click
//! carry no pair and are dropped (counted in [`SessionSetStats`]).

use std::collections::HashMap;
use std::path::Path;

use ltr_data::{DataError, Dataset, Result};

use crate::click_log_reader::by_distinct_session;
use crate::click_training::rows_by_document;
use crate::clicks::{ClickRecord, SimulatedSession};

/// What [`click_session_set`] found in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SessionSetStats {
    /// Sessions read.
    pub sessions: usize,
    /// Sessions without a click (dropped: no pair).
    pub sessions_without_clicks: usize,
    /// Clicks in the sessions kept.
    pub clicks: usize,
    /// Training queries: distinct (query, display, clicks).
    pub queries: usize,
    /// Sessions of queries outside the feature file, skipped ([`crate::SessionScope::FeatureQueries`]; not in
    /// `sessions`).
    pub sessions_outside: usize,
}

/// One distinct session: its displayed rows in display order and which were clicked.
type Pattern = (Vec<u32>, Vec<bool>);

/// Join `log` (sessions contiguous, as [`crate::read_click_log`] reads them) to `features` by (qid, docid): one
/// query per distinct session with clicks, its documents in display order labelled by click, carrying
/// [`Dataset::positions`] (rank − 1) and [`Dataset::query_weights`] (how many sessions it stands for). Queries are
/// ordered by their displayed rows and clicks, so the set does not depend on the order of the sessions in the log.
///
/// Errors name the session: ranks that are not 1 to n (a position displayed twice or skipped), a document
/// displayed twice, a document missing from `features`, two queries in one session, a session split in two.
pub fn click_session_set(
    log: &[ClickRecord],
    features: &Dataset,
) -> Result<(Dataset, SessionSetStats)> {
    let mut counter = SessionCounter::new(features);
    by_distinct_session(log)(&mut |session| counter.add(session))?;
    finish(features, counter.counts, counter.stats)
}

/// [`click_session_set`] of the click log at `path` ([`crate::read_click_log`]'s format and checks), read a
/// session at a time ([`crate::for_each_click_session`]): the same set, without holding the log. 10⁷ sessions
/// (3.6 GB of log) need the memory of their distinct sessions and of the session numbers, not of the log. `scope`
/// says whether sessions of queries `features` lacks are errors or skipped.
pub fn click_session_set_from_log(
    path: &Path,
    features: &Dataset,
    scope: crate::SessionScope,
) -> Result<(Dataset, SessionSetStats)> {
    let mut counter = SessionCounter::new(features);
    let outside =
        crate::for_each_session_in_scope(path, features, scope, |session| counter.add(session))?;
    let (ds, mut stats) = finish(features, counter.counts, counter.stats)?;
    stats.sessions_outside = outside;
    Ok((ds, stats))
}

/// Distinct sessions counted one session at a time.
struct SessionCounter<'a> {
    features: &'a Dataset,
    rows: HashMap<(&'a str, String), u32>,
    counts: HashMap<Pattern, (usize, f64)>,
    stats: SessionSetStats,
}

impl<'a> SessionCounter<'a> {
    fn new(features: &'a Dataset) -> Self {
        Self {
            features,
            rows: rows_by_document(features),
            counts: HashMap::new(),
            stats: SessionSetStats::default(),
        }
    }

    /// Count one session (its records, all of one session number).
    fn add(&mut self, session: &[ClickRecord]) -> Result<()> {
        self.stats.sessions += 1;
        let (pattern, qid) =
            session_pattern(session[0].session, session, self.features, &self.rows)?;
        let clicks = pattern.1.iter().filter(|&&c| c).count();
        if clicks == 0 {
            self.stats.sessions_without_clicks += 1;
            return Ok(());
        }
        self.stats.clicks += clicks;
        self.counts.entry(pattern).or_insert((qid, 0.0)).1 += 1.0;
        Ok(())
    }
}

/// The session set of the distinct sessions counted in `counts`: sorted by pattern, so that the set does not
/// depend on the order the sessions came in.
fn finish(
    features: &Dataset,
    counts: HashMap<Pattern, (usize, f64)>,
    mut stats: SessionSetStats,
) -> Result<(Dataset, SessionSetStats)> {
    if counts.is_empty() {
        return Err(DataError::Invalid(format!(
            "the click log's {} sessions hold no click: nothing to learn from",
            stats.sessions
        )));
    }
    let mut patterns: Vec<(Pattern, (usize, f64))> = counts.into_iter().collect();
    patterns.sort_by(|a, b| a.0.cmp(&b.0));
    stats.queries = patterns.len();
    let built = build(features, &patterns)?;
    Ok((built, stats))
}

/// [`click_session_set`] built up from a simulation that ran on the same feature set
/// ([`crate::ClickSimulation::simulate_compact`]), a piece at a time: 10⁶ sessions of ten documents are never held
/// as log records, and a set can be taken after each piece ([`finish`](Self::finish)) while sessions are still
/// being added, so that the sets of several budgets are prefixes of one simulation. Documents are joined by their
/// position in the query, so on a feature set whose docids are unique within each query the set is
/// [`click_session_set`]'s of the same sessions written as a log, bit for bit.
#[derive(Debug, Clone)]
pub struct ClickSessionBuilder<'a> {
    features: &'a Dataset,
    counts: HashMap<Pattern, (usize, f64)>,
    stats: SessionSetStats,
}

impl<'a> ClickSessionBuilder<'a> {
    /// An empty set over `features`, the dataset the sessions are simulated on.
    pub fn new(features: &'a Dataset) -> Self {
        Self {
            features,
            counts: HashMap::new(),
            stats: SessionSetStats::default(),
        }
    }

    /// Add sessions simulated on this builder's own feature set; sessions of another dataset are refused, and so
    /// is a session naming a query or document the feature set lacks.
    pub fn add_simulated(
        &mut self,
        simulated_on: &Dataset,
        sessions: &[SimulatedSession],
    ) -> Result<()> {
        if !std::ptr::eq(simulated_on, self.features) {
            return Err(DataError::Invalid(
                "ClickSessionBuilder::add_simulated needs sessions simulated on the builder's own feature set"
                    .into(),
            ));
        }
        for s in sessions {
            self.add_one(s)?;
        }
        Ok(())
    }

    fn add_one(&mut self, session: &SimulatedSession) -> Result<()> {
        let (display, clicks) = simulated_pattern(session, self.features)?;
        self.stats.sessions += 1;
        let n_clicks = clicks.iter().filter(|&&c| c).count();
        if n_clicks == 0 {
            self.stats.sessions_without_clicks += 1;
            return Ok(());
        }
        self.stats.clicks += n_clicks;
        self.counts
            .entry((display, clicks))
            .or_insert((session.query, 0.0))
            .1 += 1.0;
        Ok(())
    }

    /// What has been added so far (`queries` counts the distinct sessions with a click).
    pub fn stats(&self) -> SessionSetStats {
        SessionSetStats {
            queries: self.counts.len(),
            ..self.stats
        }
    }

    /// The session set of the sessions added so far (the builder keeps them, to go on adding); an error when
    /// none holds a click.
    pub fn finish(&self) -> Result<(Dataset, SessionSetStats)> {
        finish(self.features, self.counts.clone(), self.stats)
    }
}

/// The displayed rows (in rank order) and clicks of a session simulated on `features` (the query is
/// `session.query`); an error names a query or document the feature set lacks.
pub(crate) fn simulated_pattern(session: &SimulatedSession, features: &Dataset) -> Result<Pattern> {
    if session.query >= features.n_queries() {
        return Err(session_error(
            session.session,
            format!(
                "names query {} of a feature set of {}",
                session.query,
                features.n_queries()
            ),
        ));
    }
    let rows = features.query_range(session.query);
    let mut display = Vec::with_capacity(session.shown.len());
    let mut clicks = Vec::with_capacity(session.shown.len());
    for d in &session.shown {
        let row = rows.start + d.doc as usize;
        if row >= rows.end {
            return Err(session_error(
                session.session,
                format!("displays document {} of a query of {}", d.doc, rows.len()),
            ));
        }
        display.push(row as u32);
        clicks.push(d.clicked);
    }
    Ok((display, clicks))
}

/// The displayed rows (in rank order) and clicks of one session, and its query's index in `features`.
pub(crate) fn session_pattern(
    id: u64,
    session: &[ClickRecord],
    features: &Dataset,
    rows: &HashMap<(&str, String), u32>,
) -> Result<(Pattern, usize)> {
    let qid = &session[0].qid;
    if let Some(r) = session.iter().find(|r| &r.qid != qid) {
        return Err(session_error(
            id,
            format!("shows two queries, {qid} and {}", r.qid),
        ));
    }
    let n = session.len();
    let mut shown: Vec<Option<(u32, bool)>> = vec![None; n];
    for r in session {
        let at = r.rank as usize;
        if at == 0 || at > n {
            return Err(session_error(
                id,
                format!(
                    "displays document {} at rank {} but shows {n} documents: ranks must be 1 to {n}",
                    r.docid, r.rank
                ),
            ));
        }
        let Some(&row) = rows.get(&(qid.as_str(), r.docid.clone())) else {
            return Err(session_error(
                id,
                format!(
                    "displays document {} of query {qid}, which the feature file lacks",
                    r.docid
                ),
            ));
        };
        if shown[at - 1].is_some() {
            return Err(session_error(
                id,
                format!("displays two documents at rank {}", r.rank),
            ));
        }
        shown[at - 1] = Some((row, r.clicked));
    }
    let (display, clicks): (Vec<u32>, Vec<bool>) =
        shown.into_iter().map(|s| s.expect("ranks 1 to n")).unzip();
    let mut sorted = display.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        let doc = session
            .iter()
            .find(|r| rows.get(&(qid.as_str(), r.docid.clone())) == Some(&w[0]))
            .map_or("?", |r| r.docid.as_str());
        return Err(session_error(id, format!("displays document {doc} twice")));
    }
    let q = query_of_row(features, display[0]);
    Ok(((display, clicks), q))
}

fn query_of_row(features: &Dataset, row: u32) -> usize {
    features
        .query_offsets()
        .partition_point(|&o| o <= row as usize)
        - 1
}

fn session_error(session: u64, problem: String) -> DataError {
    DataError::ClickSession { session, problem }
}

/// The dataset of the distinct sessions `patterns` (each with its query and count) over `features`' rows.
fn build(features: &Dataset, patterns: &[(Pattern, (usize, f64))]) -> Result<Dataset> {
    let total: usize = patterns.iter().map(|((d, _), _)| d.len()).sum();
    let mut rows = Vec::with_capacity(total);
    let mut labels = Vec::with_capacity(total);
    let mut positions = Vec::with_capacity(total);
    let mut offsets = vec![0];
    let mut qids = Vec::with_capacity(patterns.len());
    let mut weights = Vec::with_capacity(patterns.len());
    for ((display, clicks), (q, count)) in patterns {
        for (k, (&row, &clicked)) in display.iter().zip(clicks).enumerate() {
            rows.push(row as usize);
            labels.push(if clicked { 1.0 } else { 0.0 });
            positions.push(k as u32);
        }
        offsets.push(rows.len());
        qids.push(features.qids()[*q].clone());
        weights.push(*count);
    }
    let mut ds = Dataset::new(features.select_rows_matrix(&rows), labels, offsets, qids)?;
    if let Some(d) = features.docids() {
        ds = ds.with_docids(d.select(&rows))?;
    }
    ds.with_query_weights(weights)?.with_positions(positions)
}

/// Read LightGBM's `.position` sidecar of `data` (read from `path`'s data file): one integer position per line,
/// one line per row of the data file, in its order (LightGBM's `position` of `Dataset`). Positions are ≥ 0 and a
/// query shows at most one document at each. Errors name the file and line.
pub fn read_position_file(path: &Path, data: &Dataset) -> Result<Vec<u32>> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let bad = |line: usize, token: &str, problem: &str| DataError::Parse {
        path: path.to_path_buf(),
        line,
        token: token.chars().take(40).collect(),
        problem: problem.to_string(),
        expected: "one position (an integer ≥ 0) per row of the data file".into(),
    };
    let mut positions = Vec::with_capacity(data.n_docs());
    for (i, line) in text.lines().enumerate() {
        let token = line.trim();
        let p = token
            .parse::<i64>()
            .map_err(|_| bad(i + 1, token, "not an integer"))?;
        if p < 0 {
            return Err(bad(i + 1, token, "a negative position"));
        }
        let p = u32::try_from(p).map_err(|_| bad(i + 1, token, "a position beyond 4294967295"))?;
        positions.push(p);
    }
    if positions.len() != data.n_docs() {
        return Err(bad(
            positions.len() + 1,
            "",
            &format!(
                "{} positions for the {} rows of the data file",
                positions.len(),
                data.n_docs()
            ),
        ));
    }
    for q in 0..data.n_queries() {
        let range = data.query_range(q);
        let mut seen: HashMap<u32, usize> = HashMap::new();
        for i in range {
            if let Some(first) = seen.insert(positions[i], i) {
                return Err(bad(
                    i + 1,
                    &positions[i].to_string(),
                    &format!(
                        "query {} shows two documents at this position (the other on line {})",
                        data.qids()[q],
                        first + 1
                    ),
                ));
            }
        }
    }
    Ok(positions)
}
