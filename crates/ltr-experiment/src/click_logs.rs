//! An experiment on clicks (`data.clicks`): each fold's click log, found by its fold number, checked before anything
//! is trained, and fingerprinted into the cell keys so that a changed log never reuses a stored cell.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ltr_learn::{ClickSource, ClickUse};

use crate::error::{ExperimentError, Result};
use crate::folds::{fingerprint, ExperimentFold};
use crate::spec::{DataSpec, MethodSpec};

/// What stands for the fold number in `data.clicks`.
const FOLD: &str = "{fold}";

/// The click logs of an experiment's folds.
#[derive(Debug)]
pub(crate) struct FoldClickLogs {
    /// Each fold's log, by fold number.
    logs: BTreeMap<usize, PathBuf>,
    /// The propensity table shared by every fold, if any.
    propensities: Option<PathBuf>,
    /// Path, size and modification time of every log and of the table.
    pub(crate) fingerprint: String,
}

impl FoldClickLogs {
    /// The logs `data.clicks` names for `folds` (`None` without it). A fold reads only the sessions of its own
    /// training queries ([`ltr_learn::SessionScope::FeatureQueries`]), so one log may cover a whole data file that the
    /// experiment splits into folds, and a fold whose validation queries were carved out of training. Refused: a
    /// path without `{fold}` for a fold folder of more than one fold (each fold's training file has its own log, and
    /// every fold would learn from one fold's), a log or table that cannot be read.
    pub(crate) fn find(data: &DataSpec, folds: &[ExperimentFold]) -> Result<Option<Self>> {
        let Some(pattern) = &data.clicks else {
            if data.propensities.is_some() {
                return Err(ExperimentError::Spec(
                    "a propensity table (data.propensities) is for click logs: give data.clicks too".into(),
                ));
            }
            return Ok(None);
        };
        let text = pattern.to_string_lossy();
        if !text.contains(FOLD) && folds.len() > 1 && data.fold_dir.is_some() {
            return Err(ExperimentError::Spec(format!(
                "click log `{text}` has no `{FOLD}`: {} folds would all learn from one log; write the fold number's \
                 place as {FOLD} (logs/fold{FOLD}.tsv)",
                folds.len()
            )));
        }
        let logs: BTreeMap<usize, PathBuf> = folds
            .iter()
            .map(|f| {
                (
                    f.number,
                    PathBuf::from(text.replace(FOLD, &f.number.to_string())),
                )
            })
            .collect();
        let mut files: Vec<PathBuf> = logs.values().cloned().collect();
        files.extend(data.propensities.clone());
        Ok(Some(Self {
            fingerprint: fingerprint(&files)?,
            logs,
            propensities: data.propensities.clone(),
        }))
    }

    /// The click source of fold `number` for a method (none for a judged one).
    pub(crate) fn source(&self, number: usize, method: &MethodSpec) -> Option<ClickSource> {
        (!method.judged).then(|| ClickSource {
            log: self.logs[&number].clone(),
            propensities: self.propensities.clone(),
            scope: ltr_learn::SessionScope::FeatureQueries,
        })
    }
}

/// An error for method `label` when it cannot take part as its spec says: `judged` without click logs, or an
/// algorithm that does not learn from clicks in an experiment on clicks without `judged = true`.
pub(crate) fn check_method(
    method: &MethodSpec,
    label: &str,
    algo: &ltr_learn::Algorithm,
    clicks: Option<&Path>,
) -> Result<()> {
    match (clicks, method.judged, algo.clicks) {
        (None, true, _) => Err(ExperimentError::Spec(format!(
            "{label}: `judged = true` keeps a method on the judgments in an experiment on clicks, but the data names \
             no click logs (data.clicks)"
        ))),
        (Some(log), false, ClickUse::Refused(why)) => Err(ExperimentError::Spec(format!(
            "{label}: `{}` does not learn from clicks ({why}), and the data names click logs ({}); give it \
             `judged = true` to train it on the judgments",
            algo.name,
            log.display()
        ))),
        _ => Ok(()),
    }
}
