//! Judgments as the measures need them: ad hoc qrels, or ndeval's diversity qrels when every measure is a
//! diversity measure; a run evaluated against either.

use std::path::Path;

use super::read::{for_each_record, read_qrels_unchecked};
use super::{evaluate_run, evaluate_run_file, read_qrels, read_run, FileError};
use crate::compute::Unsupported;
use crate::convention::{Convention, TiePolicy};
use crate::diversity::{query_diversity, DiversityMeasure, DiversityQrels};
use crate::evaluate::{assemble, Evaluation};
use crate::metric::Metric;
use crate::rank::{rank_order, DocIds, RankBuffers};
use crate::runs::{Qrels, RunQuery};

/// Read diversity qrels in ndeval's format, `qid subtopic docid rel`: the subtopic a non-negative integer, the grade
/// an integer (relevant to the subtopic from `rel=`, default 1, as ndeval's binary judgments). A (qid, subtopic,
/// docid) given twice is an error.
pub fn read_diversity_qrels(path: &Path) -> Result<DiversityQrels, FileError> {
    let mut out = DiversityQrels::new();
    for_each_record(path, |f, err| {
        if f.len() != 4 {
            return Err(err(format!(
                "{} fields; a diversity qrels line is `qid subtopic docid rel`",
                f.len()
            )));
        }
        let subtopic: u64 = f[1].parse().map_err(|_| {
            err(format!(
                "subtopic `{}` is not a non-negative integer (ndeval's format: `qid subtopic docid rel`)",
                f[1]
            ))
        })?;
        let grade: i64 = f[3]
            .parse()
            .map_err(|_| err(format!("relevance `{}` is not an integer", f[3])))?;
        let js = out
            .entry(f[0].to_string())
            .or_default()
            .entry(f[2].to_string())
            .or_default();
        match js.binary_search_by_key(&subtopic, |(s, _)| *s) {
            Ok(_) => {
                return Err(err(format!(
                    "document `{}` is judged twice for query `{}`, subtopic {subtopic}",
                    f[2], f[0]
                )))
            }
            Err(at) => js.insert(at, (subtopic, grade)),
        }
        Ok(())
    })?;
    Ok(out)
}

/// Evaluate a run against diversity qrels as ndeval does (see the diversity measures' conventions): only queries in
/// both are evaluated; every metric must be a [`Metric::Diversity`] measure.
pub fn evaluate_diversity_run(
    run: &[RunQuery],
    qrels: &DiversityQrels,
    metrics: &[Metric],
    conv: &Convention,
) -> Result<Evaluation, FileError> {
    let measures: Vec<DiversityMeasure> = metrics
        .iter()
        .map(|m| match m {
            Metric::Diversity(d) => Ok(*d),
            _ => Err(mixed(*m)),
        })
        .collect::<Result<_, _>>()?;
    if conv.ties == TiePolicy::Expected {
        return Err(FileError::Unsupported(Unsupported {
            metric: metrics[0].to_string(),
            reason: "has no exact tie-aware form here; use --ties input or docid".into(),
        }));
    }
    let mut qids = Vec::new();
    let mut table = Vec::new();
    let (mut buf, mut order) = (RankBuffers::default(), Vec::new());
    for q in run {
        let Some(judgments) = qrels.get(q.qid()) else {
            continue;
        };
        let ids = Some(DocIds::Run(q));
        rank_order(q.scores(), conv.ties, ids, &mut buf, &mut order);
        let ranked: Vec<&str> = order.iter().map(|&i| q.docid(i as usize)).collect();
        table.extend(
            measures
                .iter()
                .map(|m| query_diversity(m, &ranked, judgments, conv.relevance_threshold)),
        );
        qids.push(q.qid().to_string());
    }
    Ok(assemble(qids, metrics, conv, &table))
}

fn mixed(m: Metric) -> FileError {
    FileError::Unsupported(Unsupported {
        metric: m.to_string(),
        reason: "diversity measures read diversity qrels (`qid subtopic docid rel`) and the others ad hoc qrels \
                 (`qid iter docid rel`): evaluate the two kinds in separate calls"
            .into(),
    })
}

/// Judgments read for a set of measures: ad hoc qrels, or diversity qrels when every measure is a diversity measure.
#[derive(Debug, Clone)]
pub enum Judgments {
    /// `qid iter docid rel`.
    AdHoc(Qrels),
    /// `qid subtopic docid rel` (ndeval).
    Diversity(DiversityQrels),
}

/// Read `path` as the measures need it: as diversity qrels when every measure is a diversity measure (`alpha_nDCG@20`,
/// `ERR_IA@20`, …), as ad hoc qrels when none is; a mix is an error (the two files have the same four columns, and
/// the measures decide how the second is read).
pub fn read_judgments(path: &Path, metrics: &[Metric]) -> Result<Judgments, FileError> {
    read_judgments_with(path, metrics, read_qrels)
}

/// [`read_judgments`], ad hoc qrels read by `adhoc`.
fn read_judgments_with(
    path: &Path,
    metrics: &[Metric],
    adhoc: fn(&Path) -> Result<Qrels, FileError>,
) -> Result<Judgments, FileError> {
    let diversity = |m: &Metric| matches!(m, Metric::Diversity(_));
    match metrics.iter().find(|m| !diversity(m)) {
        None if !metrics.is_empty() => Ok(Judgments::Diversity(read_diversity_qrels(path)?)),
        Some(m) if metrics.iter().any(diversity) => Err(mixed(*m)),
        _ => Ok(Judgments::AdHoc(adhoc(path)?)),
    }
}

impl Judgments {
    /// True when the file held no judgment.
    pub fn is_empty(&self) -> bool {
        match self {
            Judgments::AdHoc(q) => q.is_empty(),
            Judgments::Diversity(q) => q.is_empty(),
        }
    }

    /// Evaluate `run` ([`evaluate_run`] or [`evaluate_diversity_run`]).
    pub fn evaluate(
        &self,
        run: &[RunQuery],
        metrics: &[Metric],
        conv: &Convention,
    ) -> Result<Evaluation, FileError> {
        match self {
            Judgments::AdHoc(q) => evaluate_run(run, q, metrics, conv),
            Judgments::Diversity(q) => evaluate_diversity_run(run, q, metrics, conv),
        }
    }

    /// Evaluate the run file `path`: against ad hoc judgments while it is read ([`evaluate_run_file`]: most queries
    /// are never stored), against diversity judgments once it is read whole. `None` when the file holds no line.
    pub fn evaluate_file(
        &self,
        path: &Path,
        metrics: &[Metric],
        conv: &Convention,
    ) -> Result<Option<Evaluation>, FileError> {
        match self {
            Judgments::AdHoc(q) => evaluate_run_file(path, q, metrics, conv),
            Judgments::Diversity(q) => {
                let run = read_run(path)?;
                if run.is_empty() {
                    return Ok(None);
                }
                evaluate_diversity_run(&run, q, metrics, conv).map(Some)
            }
        }
    }
}

/// `ltr eval --run R --qrels Q`: the judgments of `qrels` as the measures need them ([`read_judgments`]) and `run`
/// evaluated against them ([`Judgments::evaluate_file`]). An empty run or qrels file is [`FileError::Empty`]. The
/// qrels are read first, so that the run can be evaluated as it is read; the run's own errors and emptiness still
/// come before the qrels', as if it had been read first.
pub fn evaluate_run_against_qrels(
    run: &Path,
    qrels: &Path,
    metrics: &[Metric],
    conv: &Convention,
) -> Result<Evaluation, FileError> {
    let empty_run = || FileError::Empty {
        path: run.to_path_buf(),
        problem: "the run is empty (no `qid iter docno rank score tag` line)",
    };
    // Ad hoc qrels unchecked for documents judged twice: the evaluation finds them (and they never leave here).
    let judgments = match read_judgments_with(qrels, metrics, read_qrels_unchecked) {
        Ok(j) if !j.is_empty() => j,
        other => {
            if read_run(run)?.is_empty() {
                return Err(empty_run());
            }
            other?;
            return Err(FileError::Empty {
                path: qrels.to_path_buf(),
                problem: "the qrels are empty (no `qid iter docno rel` line)",
            });
        }
    };
    judgments
        .evaluate_file(run, metrics, conv)?
        .ok_or_else(empty_run)
}
