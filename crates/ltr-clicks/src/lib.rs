//! # ltr-clicks
//!
//! Learning to rank from clicks, on top of [`ltr_data`]: click logs in a documented TSV format ([`read_click_log`],
//! [`write_click_log`]), click simulation from judged data and a production ranking under the position-based and
//! cascade models with a swap intervention ([`ClickSimulation`]), position bias from swaps
//! ([`estimate_propensities`]) or by expectation-maximisation ([`estimate_propensities_em`]), and click training
//! sets ([`click_training_set`], [`ClickTrainingBuilder`]): a log joined to a feature file by (qid, docid), one
//! weighted query per distinct click.
//!
//! The classic click models — PBM, cascade, DCM, UBM and DBN, as PyClick defines them — are fitted to a log by
//! [`fit_click_model`] and evaluated on held-out sessions by [`FittedClickModel::evaluate`] (log-likelihood and
//! perplexity per rank); [`ClickModel`] simulates the same five users.
//!
//! Every document of each logged query labelled by its doubly robust relevance estimate (Oosterhuis 2023) is
//! [`doubly_robust_set`]: the set `lambdarank debias=dr` learns from.
//!
//! A new ranker's click metric is estimated from a log another ranker displayed by [`estimate_click_metric`]
//! (IPS, SNIPS and the doubly robust DR under position-based propensities, with normal and bootstrap intervals).
//!
//! Logs in other layouts — a per-document (qid, docid, position, click) table and Baidu-ULTR's sessions — are
//! read into the same records by [`read_document_table`] and [`read_baidu_sessions`].
//!
//! A click training set is an ordinary [`ltr_data::Dataset`] carrying per-query weights and propensities; the
//! click-aware learners read it through [`ltr_data::Dataset::click_weights`] and need not depend on this crate.
//!
//! ```
//! use ltr_clicks::{click_training_set, ClickSimulation, PropensitySource};
//! use ltr_data::{generate_letor_like, ClickWeighting, SyntheticConfig};
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 20, seed: 3, ..Default::default() }).unwrap();
//! // The first feature as the production ranker; 500 sessions under (1/rank)^1, the whole list displayed.
//! let production: Vec<f64> = (0..ds.n_docs()).map(|i| ds.row(i).get(0) as f64).collect();
//! let sim = ClickSimulation { sessions: 500, seed: 1, ..Default::default() };
//! let log = sim.simulate(&ds, &production).unwrap();
//! let (clicks, stats) = click_training_set(&log, &ds, &PropensitySource::Logged).unwrap();
//! assert_eq!(clicks.n_queries(), stats.queries);
//! // What propensity-ranksvm, lambdarank and listnet multiply each query's loss by.
//! assert!(clicks.click_weights(ClickWeighting::Ips { clip: 0.0 }).is_some());
//! ```
//!
//! Errors are [`ltr_data::DataError`] (for now this crate has no error type of its own): a malformed log line is
//! [`DataError::Parse`](ltr_data::DataError::Parse) naming the file and line, a session that cannot be joined to
//! the feature file is [`DataError::ClickSession`](ltr_data::DataError::ClickSession) naming the session.
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness (an explicit target
// selection ignores `test = false`), which would compile every module a second time. The unit tests are modules
// of the integration binary instead (`tests/unit/`), which links the library (CONTRIBUTING.md, "CI time").
#![cfg(not(test))]
#![deny(missing_docs)]

mod click_em;
mod click_log_reader;
mod click_model_fit;
mod click_model_io;
mod click_models;
mod click_sessions;
mod click_training;
mod clicks;
mod doubly_robust;
mod estimate;
mod interleaving;
mod readers;

pub use click_em::{
    estimate_propensities_em, estimate_propensities_em_from_log, EmEstimate, EmSettings,
    RelevanceModel,
};
pub use click_log_reader::{
    for_each_click_session, for_each_session_in_scope, read_click_log, SessionScope,
};
pub use click_model_fit::{fit_click_model, ClickModelFit};
pub use click_model_io::{learned_propensities, propensity_json, propensity_text};
pub use click_models::{
    ClickModelEvaluation, ClickModelKind, ClickModelParams, FittedClickModel, SessionLog, PROB_MIN,
};
pub use click_sessions::{
    click_session_set, click_session_set_from_log, read_position_file, ClickSessionBuilder,
    SessionSetStats,
};
pub use click_training::{
    click_training_set, click_training_set_from_log, ClickTrainingBuilder, ClickTrainingStats,
    PropensitySource,
};
pub use clicks::{
    estimate_propensities, estimate_propensities_from_log, read_propensity_table, write_click_log,
    write_propensity_table, ClickModel, ClickRecord, ClickSimulation, Examination, Intervention,
    PropensityEstimate, ShownDocument, SimulatedSession, CLICK_LOG_HEADER, PROPENSITY_TABLE_HEADER,
    ULTRA_CURVE,
};
pub use doubly_robust::{
    doubly_robust_label, doubly_robust_set, doubly_robust_set_from_log, ClipThreshold,
    DoublyRobustBuilder, DoublyRobustSettings, DoublyRobustStats, UnshownDocuments,
};
pub use estimate::{
    direct_model_from_click_model, estimate_click_metric, estimate_click_metric_from_log,
    estimate_from_terms, session_terms, ClickGain, CounterfactualEstimate, CounterfactualSettings,
    DirectModel, Estimator, Interval, LoggingPolicy,
};
pub use interleaving::{
    interleave, interleave_judged, interleave_session, Interleaving, InterleavingUser, Outcome,
};
pub use readers::{read_baidu_sessions, read_document_table, read_log_layout};
