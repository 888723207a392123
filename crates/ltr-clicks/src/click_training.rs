//! Click training sets: a click log joined to a feature file by (qid, docid), in the form of Joachims,
//! Swaminathan & Schnabel's Propensity SVM-Rank (WSDM 2017): each click is one training "query" whose clicked
//! document is relevant (label 1) and whose other displayed documents are not (label 0), carrying the propensity
//! of the rank the click happened at.
//!
//! Identical clicks — the same displayed set, the same clicked document, the same propensity — are one query with
//! a weight that counts them ([`Dataset::query_weights`]). Every loss of the click-aware learners is linear in the
//! query weights, so this is the same objective as one query per click, at a size bounded by the distinct
//! (displayed set, click, propensity) triples instead of the number of clicks: 10⁶ simulated clicks on MQ2008 are
//! a few thousand queries.

use std::collections::{BTreeMap, HashMap};

use ltr_data::{DataError, Dataset, Result};

use crate::clicks::{ClickRecord, SimulatedSession};

/// (clicked row, propensity bits) → clicks, within one displayed set.
type ClicksByDocument = BTreeMap<(u32, u64), f64>;

/// Where the propensity of a click comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum PropensitySource {
    /// The log's `propensity` column (a simulation's true examination probabilities, or a production system's
    /// own estimates); a click without one is an error.
    Logged,
    /// A table by displayed rank (element 0 is rank 1), such as [`crate::estimate_propensities`]' relative
    /// values ([`crate::read_propensity_table`]); a click below the table's last rank takes the last value (a
    /// larger propensity than the truth at deeper ranks: clipping).
    ByRank(Vec<f64>),
}

impl PropensitySource {
    /// An error for a table that is empty or holds a propensity that is not a finite positive number.
    pub(crate) fn check(&self) -> Result<()> {
        if let PropensitySource::ByRank(t) = self {
            if t.is_empty() {
                return Err(DataError::Invalid("an empty propensity table".into()));
            }
            if let Some(i) = t.iter().position(|p| !(*p > 0.0 && p.is_finite())) {
                return Err(DataError::Invalid(format!(
                    "propensity {} of rank {} is not a positive number",
                    t[i],
                    i + 1
                )));
            }
        }
        Ok(())
    }
}

/// Every row of `features` by (qid, docid); documents without a `#docid` are `d0`, `d1`, … by their position in
/// their query, as [`crate::ClickSimulation`] names them. The one join of click logs to feature files.
pub(crate) fn rows_by_document(features: &Dataset) -> HashMap<(&str, String), u32> {
    let mut rows = HashMap::with_capacity(features.n_docs());
    for q in 0..features.n_queries() {
        let view = features.query(q);
        let start = view.rows().start;
        for i in 0..view.len() {
            let id = view
                .docid(i)
                .map_or_else(|| format!("d{i}"), str::to_string);
            rows.insert((features.qids()[q].as_str(), id), (start + i) as u32);
        }
    }
    rows
}

/// What [`click_training_set`] found in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClickTrainingStats {
    /// Sessions read.
    pub sessions: usize,
    /// Sessions without a click (they add nothing).
    pub sessions_without_clicks: usize,
    /// Clicks used.
    pub clicks: usize,
    /// Clicks in sessions that displayed a single document (no pair: dropped).
    pub clicks_dropped: usize,
    /// Training queries after merging identical clicks.
    pub queries: usize,
    /// Sessions of queries outside the feature file, skipped ([`crate::SessionScope::FeatureQueries`]; not in
    /// `sessions`).
    pub sessions_outside: usize,
}

/// Join `log` to `features` by (qid, docid) and build the click training set: one query per distinct (displayed
/// documents, clicked document, propensity), weighted by its number of clicks, with the propensity attached
/// ([`Dataset::propensities`]). Documents of `features` without a `#docid` are named `d0`, `d1`, … by their
/// position in their query, as [`crate::ClickSimulation`] names them.
///
/// Errors name the session: a displayed document missing from `features`, a document displayed twice in one
/// session, a click without a propensity, a log without a single usable click.
pub fn click_training_set(
    log: &[ClickRecord],
    features: &Dataset,
    propensities: &PropensitySource,
) -> Result<(Dataset, ClickTrainingStats)> {
    let mut b = ClickTrainingBuilder::new(features, propensities.clone())?;
    b.add(log)?;
    b.finish()
}

/// [`click_training_set`] of the click log at `path` ([`crate::read_click_log`]'s format and checks), read a
/// session at a time ([`crate::for_each_click_session`]): the same set, without holding the log. `scope` says
/// whether sessions of queries `features` lacks are errors or skipped.
pub fn click_training_set_from_log(
    path: &std::path::Path,
    features: &Dataset,
    propensities: &PropensitySource,
    scope: crate::SessionScope,
) -> Result<(Dataset, ClickTrainingStats)> {
    let mut b = ClickTrainingBuilder::new(features, propensities.clone())?;
    let outside =
        crate::for_each_session_in_scope(path, features, scope, |session| b.add(session))?;
    let (ds, mut stats) = b.finish()?;
    stats.sessions_outside = outside;
    Ok((ds, stats))
}

/// [`click_training_set`] a piece at a time: a long log (or a long simulation,
/// [`crate::ClickSimulation::simulate_sessions`]) is aggregated without being held whole. A session must not be
/// split between two [`add`](Self::add) calls. Cloning a builder snapshots it (the reproduction's nested click
/// budgets are prefixes of one log).
#[derive(Debug, Clone)]
pub struct ClickTrainingBuilder<'a> {
    features: &'a Dataset,
    propensities: PropensitySource,
    qids: std::collections::HashSet<&'a str>,
    rows: HashMap<(&'a str, String), u32>,
    stats: ClickTrainingStats,
    // Displayed rows (sorted) → their group in `groups`; looked up by slice, so a click clones no set.
    group_of_set: HashMap<Vec<u32>, usize>,
    // Per group: its displayed rows and (clicked row, propensity bits) → clicks. `finish` sorts the groups by
    // their rows, so the output order is the feature file's, whatever the log's.
    groups: Vec<(Vec<u32>, ClicksByDocument)>,
    // Per query of a simulation joined by position: the documents its last session displayed, in display order,
    // and their group (a session showing the same documents in the same order needs no sort and no lookup).
    last_display: HashMap<usize, (Vec<u32>, usize)>,
    // Each feature row's own (qid, docid) row, for simulations joined by position ([`Self::add_simulated`]).
    row_of_position: Option<Vec<u32>>,
}

impl<'a> ClickTrainingBuilder<'a> {
    /// A builder joining to `features`, taking propensities from `propensities`.
    pub fn new(features: &'a Dataset, propensities: PropensitySource) -> Result<Self> {
        propensities.check()?;
        let qids = features.qids().iter().map(String::as_str).collect();
        let rows = rows_by_document(features);
        Ok(Self {
            features,
            propensities,
            qids,
            rows,
            stats: ClickTrainingStats::default(),
            group_of_set: HashMap::new(),
            groups: Vec::new(),
            last_display: HashMap::new(),
            row_of_position: None,
        })
    }

    /// What has been added so far (`queries` is set by [`finish`](Self::finish)).
    pub fn stats(&self) -> ClickTrainingStats {
        self.stats
    }

    /// Add whole sessions.
    pub fn add(&mut self, log: &[ClickRecord]) -> Result<()> {
        for session in log.chunk_by(|a, b| a.session == b.session) {
            self.add_session(session)?;
        }
        Ok(())
    }

    /// Add whole sessions of a simulation that ran on this builder's own feature set
    /// ([`crate::ClickSimulation::simulate_compact`] on the `features` given to [`new`](Self::new)): the same
    /// training set as [`add`](Self::add) of the same sessions as records, joined by position instead of by
    /// (qid, docid) strings. Sessions simulated on another dataset are refused.
    pub fn add_simulated(
        &mut self,
        simulated_on: &Dataset,
        sessions: &[SimulatedSession],
    ) -> Result<()> {
        if !std::ptr::eq(simulated_on, self.features) {
            return Err(DataError::Invalid(
                "add_simulated needs sessions simulated on the builder's own feature set; join others by name \
                 with `add`"
                    .into(),
            ));
        }
        for s in sessions {
            self.add_simulated_session(s)?;
        }
        Ok(())
    }

    /// [`add_session`](Self::add_session) of one simulated session: each displayed document's row is the one
    /// its (qid, docid) names, so duplicate docids behave exactly as in a log.
    fn add_simulated_session(&mut self, session: &SimulatedSession) -> Result<()> {
        if !session.shown.iter().any(|d| d.clicked) {
            self.stats.sessions += 1;
            self.stats.sessions_without_clicks += 1;
            return Ok(());
        }
        let start = self.features.query(session.query).rows().start;
        let same_as_last = self
            .last_display
            .get(&session.query)
            .is_some_and(|(docs, _)| {
                docs.len() == session.shown.len()
                    && docs.iter().zip(&session.shown).all(|(&d, s)| d == s.doc)
            });
        if !same_as_last {
            let row_of = self.row_of_position.get_or_insert_with(|| {
                let features = self.features;
                (0..features.n_queries())
                    .flat_map(|q| {
                        let view = features.query(q);
                        (0..view.len()).map(move |i| (q, i))
                    })
                    .map(|(q, i)| {
                        let view = features.query(q);
                        let id = view
                            .docid(i)
                            .map_or_else(|| format!("d{i}"), str::to_string);
                        self.rows[&(features.qids()[q].as_str(), id)]
                    })
                    .collect()
            });
            let mut set: Vec<u32> = session
                .shown
                .iter()
                .map(|d| row_of[start + d.doc as usize])
                .collect();
            set.sort_unstable();
            if set.windows(2).any(|w| w[0] == w[1]) {
                // The rare case (duplicate docids): the record path words the error.
                let records = session.records(self.features);
                return self.add_session(&records);
            }
            let group = if set.len() < 2 {
                usize::MAX
            } else {
                self.group(&set)
            };
            let docs = session.shown.iter().map(|d| d.doc).collect();
            self.last_display.insert(session.query, (docs, group));
        }
        let group = self.last_display[&session.query].1;
        self.stats.sessions += 1;
        for (rank0, d) in session.shown.iter().enumerate() {
            if !d.clicked {
                continue;
            }
            if group == usize::MAX {
                self.stats.clicks_dropped += 1;
                continue;
            }
            let p = self.click_propensity(session.session, rank0 as u32 + 1, d.propensity)?;
            let row =
                self.row_of_position.as_ref().expect("made with the group")[start + d.doc as usize];
            self.count_click(group, row, p);
        }
        Ok(())
    }

    /// The propensity of a click at `rank` under this builder's source.
    fn click_propensity(&self, session: u64, rank: u32, logged: Option<f64>) -> Result<f64> {
        match &self.propensities {
            PropensitySource::Logged => logged.ok_or_else(|| DataError::ClickSession {
                session,
                problem: format!(
                    "the click at rank {rank} has no propensity in the log; give a propensity table (`ltr clicks \
                     propensity`)"
                ),
            }),
            PropensitySource::ByRank(t) => Ok(t[(rank as usize - 1).min(t.len() - 1)]),
        }
    }

    /// The group of the displayed rows `set` (sorted), made when new.
    fn group(&mut self, set: &[u32]) -> usize {
        if let Some(&g) = self.group_of_set.get(set) {
            return g;
        }
        self.groups.push((set.to_vec(), BTreeMap::new()));
        self.group_of_set
            .insert(set.to_vec(), self.groups.len() - 1);
        self.groups.len() - 1
    }

    /// Count one click on `row` in group `group` with propensity `p`.
    fn count_click(&mut self, group: usize, row: u32, p: f64) {
        self.stats.clicks += 1;
        *self.groups[group]
            .1
            .entry((row, p.to_bits()))
            .or_insert(0.0) += 1.0;
    }

    fn add_session(&mut self, session: &[ClickRecord]) -> Result<()> {
        self.stats.sessions += 1;
        let id = session[0].session;
        if !session.iter().any(|r| r.clicked) {
            self.stats.sessions_without_clicks += 1;
            return Ok(());
        }
        let q = session[0].qid.as_str();
        if !self.qids.contains(q) {
            return Err(DataError::ClickSession {
                session: id,
                problem: format!("qid `{q}` is not in the feature file"),
            });
        }
        let mut shown = Vec::with_capacity(session.len());
        for r in session {
            let row = *self
                .rows
                .get(&(r.qid.as_str(), r.docid.clone()))
                .ok_or_else(|| DataError::ClickSession {
                    session: id,
                    problem: format!(
                        "document `{}` of qid `{}` is not in the feature file",
                        r.docid, r.qid
                    ),
                })?;
            shown.push(row);
        }
        let mut set = shown.clone();
        set.sort_unstable();
        if let Some(w) = set.windows(2).find(|w| w[0] == w[1]) {
            let doc = &session[shown.iter().position(|&r| r == w[0]).unwrap_or(0)].docid;
            return Err(DataError::ClickSession {
                session: id,
                problem: format!("document `{doc}` is displayed twice"),
            });
        }
        for (r, &row) in session.iter().zip(&shown).filter(|(r, _)| r.clicked) {
            if set.len() < 2 {
                self.stats.clicks_dropped += 1;
                continue;
            }
            let p = self.click_propensity(id, r.rank, r.propensity)?;
            let group = self.group(&set);
            self.count_click(group, row, p);
        }
        Ok(())
    }

    /// The click training set of everything added.
    pub fn finish(self) -> Result<(Dataset, ClickTrainingStats)> {
        let mut stats = self.stats;
        if self.groups.is_empty() {
            return Err(DataError::Invalid(format!(
                "the click log has no usable click ({} sessions, {} without clicks, {} clicks on single-document \
                 sessions)",
                stats.sessions, stats.sessions_without_clicks, stats.clicks_dropped
            )));
        }
        let mut groups = self.groups;
        groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        stats.queries = groups.iter().map(|g| g.1.len()).sum();
        let features = self.features;
        let mut all_rows = Vec::new();
        let mut labels = Vec::new();
        let mut offsets = vec![0];
        let mut qids = Vec::with_capacity(stats.queries);
        let mut weights = Vec::with_capacity(stats.queries);
        let mut props = Vec::with_capacity(stats.queries);
        let mut per_query: HashMap<usize, usize> = HashMap::new();
        let offsets_in = features.query_offsets();
        let flat = groups.iter().flat_map(|(set, by_click)| {
            by_click
                .iter()
                .map(move |(&(clicked, p), &n)| (set, clicked, p, n))
        });
        for (set, clicked, p, n) in flat {
            let q = offsets_in.partition_point(|&o| o <= set[0] as usize) - 1;
            let k = per_query.entry(q).or_insert(0);
            qids.push(format!("{}/c{k}", features.qids()[q]));
            *k += 1;
            for &r in set {
                all_rows.push(r as usize);
                labels.push(if r == clicked { 1.0 } else { 0.0 });
            }
            offsets.push(all_rows.len());
            weights.push(n);
            props.push(f64::from_bits(p));
        }
        let mut ds = Dataset::new(
            features.select_rows_matrix(&all_rows),
            labels,
            offsets,
            qids,
        )?;
        if let Some(d) = features.docids() {
            ds = ds.with_docids(d.select(&all_rows))?;
        }
        let ds = ds.with_query_weights(weights)?.with_propensities(props)?;
        Ok((ds, stats))
    }
}
