//! A click log joined to the features of the training data: the click training set a [`crate::TrainJob`] with
//! [`crate::ClickSource`] trains on (each click a query: the clicked document over the others displayed, with its
//! propensity).

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
}

/// The click set every setting of `grid` reads ([`ClickUse::under`] its `debias`); an error when the settings
/// read different sets (a grid over `debias=none,dla`: one query per click and sessions cannot be joined at once).
pub(crate) fn click_set(
    algorithm: &crate::Algorithm,
    grid: &crate::Grid,
) -> Result<ClickUse, String> {
    let mut sets = grid.settings().into_iter().map(|setting| {
        let debias = setting
            .iter()
            .find(|(k, _)| k == "debias")
            .map(|(_, v)| v.as_str());
        algorithm.clicks.under(debias)
    });
    let first = sets.next().unwrap_or(algorithm.clicks);
    if sets.any(|s| s != first) {
        return Err(format!(
            "`{}`'s settings read different click sets (one query per click without debias, sessions with it): \
             give one debias value a run",
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
    reads: ClickUse,
) -> Result<Dataset, JobError> {
    if reads == ClickUse::Sessions {
        return session_training(&clicks.log, features, train_label);
    }
    let log_path = &clicks.log;
    let source = match &clicks.propensities {
        Some(p) => ltr_clicks::PropensitySource::ByRank(
            ltr_clicks::read_propensity_table(p)
                .map_err(|e| JobError::failed(joining(log_path, train_label), e))?,
        ),
        None => ltr_clicks::PropensitySource::Logged,
    };
    let (ds, stats) = ltr_clicks::click_training_set_from_log(log_path, features, &source)
        .map_err(|e| join_error(log_path, train_label, e))?;
    tracing::info!(
        "{}: {} sessions ({} without clicks), {} clicks -> {} training queries",
        log_path.display(),
        stats.sessions,
        stats.sessions_without_clicks,
        stats.clicks,
        stats.queries
    );
    Ok(ds)
}

/// The click session set of the log at `log_path` on `features` (`ltr_clicks::click_session_set`): for learners that
/// debias by position themselves.
fn session_training(
    log_path: &std::path::Path,
    features: &Dataset,
    train_label: &str,
) -> Result<Dataset, JobError> {
    let (ds, stats) = ltr_clicks::click_session_set_from_log(log_path, features)
        .map_err(|e| join_error(log_path, train_label, e))?;
    tracing::info!(
        "{}: {} sessions ({} without clicks), {} clicks -> {} distinct sessions with positions",
        log_path.display(),
        stats.sessions,
        stats.sessions_without_clicks,
        stats.clicks,
        stats.queries
    );
    Ok(ds)
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
