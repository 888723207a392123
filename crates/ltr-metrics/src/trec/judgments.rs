//! Judgments as the measures need them: ad hoc qrels, or ndeval's diversity qrels when every measure is a
//! diversity measure; a run evaluated against either.

use std::path::Path;

use super::read::for_each_record;
use super::{evaluate_run, read_qrels, FileError};
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
    let diversity = |m: &Metric| matches!(m, Metric::Diversity(_));
    match metrics.iter().find(|m| !diversity(m)) {
        None if !metrics.is_empty() => Ok(Judgments::Diversity(read_diversity_qrels(path)?)),
        Some(m) if metrics.iter().any(diversity) => Err(mixed(*m)),
        _ => Ok(Judgments::AdHoc(read_qrels(path)?)),
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
}
