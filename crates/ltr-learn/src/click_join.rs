//! A click log joined to the features of the training data: the click training set a [`crate::TrainJob`] with
//! [`crate::ClickSource`] trains on (each click a query: the clicked document over the others displayed, with its
//! propensity), the session set (positions kept) or the doubly robust set (every document of a logged query).

use std::path::PathBuf;

use ltr_data::{DataError, Dataset};

use crate::job_error::JobError;
use crate::{ClickUse, TrainData};

/// A click log to train on instead of the training data's labels.
#[derive(Debug, Clone)]
pub struct ClickSource {
    /// The log (`ltr clicks simulate`'s TSV), joined to the training data's features by (qid, docid).
    pub log: PathBuf,
    /// Propensities by rank (`ltr clicks propensity --out`) for a log without a propensity column.
    pub propensities: Option<PathBuf>,
    /// Whether a session of a query the training data lacks is an error (`ltr train --clicks`) or skipped (an
    /// experiment's fold, which holds some of the log's queries).
    pub scope: ltr_clicks::SessionScope,
}

/// The click set a run's settings read, with the doubly robust set's own settings (`dr-unshown`,
/// `dr-direct-steps`, `dr-clip`; the defaults when it reads another set).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ClickSet {
    pub(crate) reads: ClickUse,
    pub(crate) doubly_robust: ltr_clicks::DoublyRobustSettings,
}

/// The click set every setting of `grid` reads ([`ClickUse::under`] its `debias`); an error when the settings
/// read different sets (a grid over `debias=none,dla`: one query per click and sessions cannot be joined at once,
/// nor two doubly robust sets).
pub(crate) fn click_set(
    algorithm: &crate::Algorithm,
    grid: &crate::Grid,
) -> Result<ClickSet, String> {
    let mut sets = Vec::new();
    for setting in grid.settings() {
        let params = ltr_core::Params::new(setting.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        // The setting read as the learner reads it, so that a value it does not have (a `debias` that would
        // join the wrong set) is refused here, before the log is read, in the learner's own words.
        let reader = crate::spec::SpecReader::new(&params, algorithm.params);
        let debias = match algorithm.param_specs().any(|s| s.name == "debias") {
            true => Some(reader.choice("debias").map_err(|e| e.to_string())?),
            false => None,
        };
        let reads = algorithm.clicks.under(debias.as_deref());
        let mut doubly_robust = ltr_clicks::DoublyRobustSettings::default();
        if reads == ClickUse::DoublyRobust {
            if let Some((_, v)) = setting.iter().find(|(k, _)| k == "dr-unshown") {
                doubly_robust.unshown = ltr_clicks::UnshownDocuments::parse(v)
                    .map_err(|e| format!("parameter `dr-unshown`: {e}"))?;
            }
            doubly_robust.direct_model_steps =
                reader.int("dr-direct-steps").map_err(|e| e.to_string())?;
            doubly_robust.clip =
                crate::algorithms::clicks::dr_clip(&reader).map_err(|e| e.to_string())?;
        }
        sets.push(ClickSet {
            reads,
            doubly_robust,
        });
    }
    let first = sets.first().cloned().unwrap_or(ClickSet {
        reads: algorithm.clicks,
        doubly_robust: ltr_clicks::DoublyRobustSettings::default(),
    });
    if sets.iter().any(|s| *s != first) {
        return Err(format!(
            "`{}`'s settings read different click sets (one query per click without debias, sessions or the doubly \
             robust set with it): give one debias value (and one dr-unshown, dr-direct-steps and dr-clip) a run",
            algorithm.name
        ));
    }
    Ok(first)
}

/// Why a learner that reads sessions takes no propensity table (`--propensities`).
pub(crate) fn no_propensity_table(name: &str) -> String {
    let known = if name == "lambdamart" {
        "; give known propensities as --param debias=ips --param propensities=FILE"
    } else {
        "; the table is for debias=none (the default), which weighs one query per click by it"
    };
    format!(
        "`{name}` learns the position bias from the sessions (its `debias` parameter) and reads no propensity table \
         from --propensities{known}"
    )
}

/// The click training set of `clicks` on `features` (read from `train_label`); a session that cannot be joined is
/// reported at its first line of the log.
pub(crate) fn click_training(
    clicks: &ClickSource,
    features: &Dataset,
    train_label: &str,
    set: &ClickSet,
) -> Result<Dataset, JobError> {
    let reads = set.reads;
    if reads == ClickUse::Sessions {
        return session_training(clicks, features, train_label);
    }
    let log_path = &clicks.log;
    let source = match &clicks.propensities {
        Some(p) => ltr_clicks::PropensitySource::ByRank(
            ltr_clicks::read_propensity_table(p)
                .map_err(|e| JobError::failed(joining(log_path, train_label), e))?,
        ),
        None => ltr_clicks::PropensitySource::Logged,
    };
    if reads == ClickUse::DoublyRobust {
        let (ds, stats) = ltr_clicks::doubly_robust_set_from_log(
            log_path,
            features,
            &source,
            &set.doubly_robust,
            clicks.scope,
        )
        .map_err(|e| join_error(log_path, train_label, e))?;
        let unshown = match stats.direct_model_log_loss {
            Some(loss) => format!(
                "{} unshown labelled by the direct model (log-loss {loss:.4} per expected examination)",
                stats.unshown_documents
            ),
            None => format!("{} unshown left out", stats.unshown_documents),
        };
        tracing::info!(
            "{}: {} sessions{}, {} clicks -> {} training queries of {} shown documents, {unshown}, clipped at τ = {}",
            log_path.display(),
            stats.sessions,
            outside(stats.sessions_outside),
            stats.clicks,
            stats.queries,
            stats.shown_documents,
            stats.clip,
        );
        return Ok(ds);
    }
    let (ds, stats) =
        ltr_clicks::click_training_set_from_log(log_path, features, &source, clicks.scope)
            .map_err(|e| join_error(log_path, train_label, e))?;
    tracing::info!(
        "{}: {} sessions{} ({} without clicks), {} clicks -> {} training queries",
        log_path.display(),
        stats.sessions,
        outside(stats.sessions_outside),
        stats.sessions_without_clicks,
        stats.clicks,
        stats.queries
    );
    Ok(ds)
}

/// The click session set of the log at `log_path` on `features` (`ltr_clicks::click_session_set`): for learners that
/// debias by position themselves.
fn session_training(
    clicks: &ClickSource,
    features: &Dataset,
    train_label: &str,
) -> Result<Dataset, JobError> {
    let log_path = &clicks.log;
    let (ds, stats) = ltr_clicks::click_session_set_from_log(log_path, features, clicks.scope)
        .map_err(|e| join_error(log_path, train_label, e))?;
    tracing::info!(
        "{}: {} sessions{} ({} without clicks), {} clicks -> {} distinct sessions with positions",
        log_path.display(),
        stats.sessions,
        outside(stats.sessions_outside),
        stats.sessions_without_clicks,
        stats.clicks,
        stats.queries
    );
    Ok(ds)
}

/// The log line's note of the sessions skipped as outside the training data (none: nothing).
fn outside(skipped: usize) -> String {
    match skipped {
        0 => String::new(),
        n => format!(" (and {n} of queries outside the training data, skipped)"),
    }
}

/// What the log at `log_path` was being joined to, for an error's context.
fn joining(log_path: &std::path::Path, train_label: &str) -> String {
    format!("joining {} to {train_label}", log_path.display())
}

/// An error of reading the log at `log_path` and joining it to `train_label`: the reader's own (they name the file
/// and line already) in the join's context, a session that cannot be joined at the session's first line, any other
/// at the log.
fn join_error(log_path: &std::path::Path, train_label: &str, e: DataError) -> JobError {
    let line = match &e {
        DataError::Parse { .. } | DataError::Io { .. } => {
            return JobError::failed(joining(log_path, train_label), e)
        }
        DataError::ClickSession { session, .. } => {
            first_line_of_session(log_path, &session.to_string())
        }
        _ => None,
    };
    match line {
        Some(n) => JobError::failed(format!("{}:{n}", log_path.display()), e),
        None => JobError::failed(log_path.display().to_string(), e),
    }
}

/// The training file's rows with the positions of LightGBM's `.position` sidecar (`FILE.position` beside
/// `FILE`), when there is one: its labels are then clicks, for a learner that debiases by position.
pub(crate) fn with_position_file(
    source: &TrainData<'_>,
    data: Dataset,
) -> Result<Dataset, JobError> {
    let TrainData::File(path) = source else {
        return Ok(data);
    };
    let mut sidecar = path.clone().into_os_string();
    sidecar.push(".position");
    let sidecar = std::path::PathBuf::from(sidecar);
    if !sidecar.is_file() {
        return Ok(data);
    }
    let failed = |e: DataError| JobError::failed(format!("reading {}", sidecar.display()), e);
    let positions = ltr_clicks::read_position_file(&sidecar, &data).map_err(failed)?;
    tracing::info!(
        "{}: the positions of {} rows (their labels are clicks)",
        sidecar.display(),
        positions.len()
    );
    data.with_positions(positions).map_err(failed)
}

/// The first line of `session` in the log: the log keeps no line numbers, and this is read only on an error.
fn first_line_of_session(path: &std::path::Path, session: &str) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    let prefix = format!("{session}\t");
    text.lines()
        .position(|l| l.starts_with(&prefix))
        .map(|i| i + 1)
}
