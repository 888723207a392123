//! Score files, TREC run files and qrels: reading, writing, and evaluating a run against qrels.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use ltr_data::Dataset;

use crate::compute::{query_metric, QueryInput, Unsupported};
use crate::convention::{Convention, TiePolicy};
use crate::diversity::{query_diversity, DiversityMeasure, DiversityQrels};
use crate::evaluate::{assemble, fast_ranking, Evaluation};
use crate::metric::Metric;
use crate::ranking::Ranking;

/// Errors reading or writing score, run and qrels files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileError {
    /// I/O failure.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A malformed line.
    #[error("{}:{line}: {problem}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        problem: String,
    },
    /// A metric cannot be computed as configured.
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
}

fn io(path: &Path, e: std::io::Error) -> FileError {
    FileError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

fn read_text(path: &Path) -> Result<String, FileError> {
    if path.is_dir() {
        return Err(io(path, std::io::Error::other("is a directory")));
    }
    std::fs::read_to_string(path).map_err(|e| io(path, e))
}

/// Read a score file: one finite number per line, in the data file's line order (blank lines are errors, since they
/// would shift every later score onto the wrong document).
pub fn read_scores(path: &Path) -> Result<Vec<f64>, FileError> {
    let text = read_text(path)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        let err = |problem: String| FileError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            problem,
        };
        if t.is_empty() {
            return Err(err(
                "empty line; a score file has exactly one number per line".into(),
            ));
        }
        let v: f64 = t
            .parse()
            .map_err(|_| err(format!("`{t}` is not a number")))?;
        if !v.is_finite() {
            return Err(err(format!("score `{t}` is not finite")));
        }
        out.push(v);
    }
    Ok(out)
}

/// Check that a score list fits a dataset, naming both files in the error.
pub fn check_scores_fit(
    scores: &[f64],
    ds: &Dataset,
    scores_path: &Path,
    data_path: &Path,
) -> Result<(), FileError> {
    if scores.len() != ds.n_docs() {
        return Err(FileError::Parse {
            path: scores_path.to_path_buf(),
            line: scores.len().min(ds.n_docs()) + 1,
            problem: format!(
                "{} scores but {} has {} documents; the score file needs one line per data line",
                scores.len(),
                data_path.display(),
                ds.n_docs()
            ),
        });
    }
    Ok(())
}

/// Call `each` with the whitespace-separated fields of every non-blank line of `path` and a maker of errors that name
/// the file and that line.
fn for_each_record(
    path: &Path,
    mut each: impl FnMut(&[&str], &dyn Fn(String) -> FileError) -> Result<(), FileError>,
) -> Result<(), FileError> {
    let text = read_text(path)?;
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        let err = |problem: String| FileError::Parse {
            path: path.to_path_buf(),
            line: i + 1,
            problem,
        };
        each(&fields, &err)?;
    }
    Ok(())
}

/// One query of a TREC run: `(docid, score)` in file order.
pub type RunQuery = (String, Vec<(String, f64)>);

/// Read a TREC run (`qid Q0 docid rank score tag`), grouped by qid in order of first appearance. The rank column is
/// ignored (trec_eval re-sorts by score).
pub fn read_run(path: &Path) -> Result<Vec<RunQuery>, FileError> {
    let mut out: Vec<RunQuery> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for_each_record(path, |f, err| {
        if f.len() < 5 {
            return Err(err(format!(
                "{} fields; a run line is `qid Q0 docid rank score [tag]`",
                f.len()
            )));
        }
        let score: f64 = f[4]
            .parse()
            .map_err(|_| err(format!("score `{}` is not a number", f[4])))?;
        if !score.is_finite() {
            return Err(err(format!("score `{}` is not finite", f[4])));
        }
        let q = *index.entry(f[0].to_string()).or_insert_with(|| {
            out.push((f[0].to_string(), Vec::new()));
            out.len() - 1
        });
        out[q].1.push((f[2].to_string(), score));
        Ok(())
    })?;
    Ok(out)
}

/// qid → docid → relevance.
pub type Qrels = HashMap<String, HashMap<String, f32>>;

/// Read qrels (`qid iter docid rel`).
pub fn read_qrels(path: &Path) -> Result<Qrels, FileError> {
    let mut out: Qrels = HashMap::new();
    for_each_record(path, |f, err| {
        if f.len() != 4 {
            return Err(err(format!(
                "{} fields; a qrels line is `qid iter docid rel`",
                f.len()
            )));
        }
        let rel: f32 = f[3]
            .parse()
            .map_err(|_| err(format!("relevance `{}` is not a number", f[3])))?;
        if !rel.is_finite() {
            return Err(err("relevance is not finite".into()));
        }
        out.entry(f[0].to_string())
            .or_default()
            .insert(f[2].to_string(), rel);
        Ok(())
    })?;
    Ok(out)
}

/// Write a TREC run for `ds` and `scores` (ranked by score, ties by input order), atomically. Documents without a
/// doc id are named `D<line>`.
pub fn write_run(path: &Path, ds: &Dataset, scores: &[f64], tag: &str) -> Result<(), FileError> {
    ltr_data::write_atomic(path, |w| write_run_to(w, ds, scores, tag))
        .map_err(|e| io(path, std::io::Error::other(e.to_string())))
}

/// Write a TREC run to any writer (see [`write_run`]).
pub fn write_run_to(
    w: &mut dyn Write,
    ds: &Dataset,
    scores: &[f64],
    tag: &str,
) -> std::io::Result<()> {
    for q in ds.queries() {
        let rows = q.rows();
        let ranking = fast_ranking(&scores[rows.clone()], TiePolicy::InputOrder);
        for (rank, &d) in ranking.order.iter().enumerate() {
            let id = q
                .docid(d)
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("D{}", rows.start + d + 1), str::to_string);
            writeln!(
                w,
                "{} Q0 {} {} {} {}",
                q.qid(),
                id,
                rank + 1,
                scores[rows.start + d],
                tag
            )?;
        }
    }
    Ok(())
}

/// Write qrels for `ds` (`qid 0 docid label`).
pub fn write_qrels_to(w: &mut dyn Write, ds: &Dataset) -> std::io::Result<()> {
    for q in ds.queries() {
        for d in 0..q.len() {
            let id = q
                .docid(d)
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("D{}", q.rows().start + d + 1), str::to_string);
            writeln!(w, "{} 0 {} {}", q.qid(), id, q.labels()[d])?;
        }
    }
    Ok(())
}

/// Evaluate a run against qrels as trec_eval does: only queries present in both are evaluated; retrieved documents
/// missing from the qrels are unjudged; judged documents the run missed count in R, N and the ideal DCG.
pub fn evaluate_run(
    run: &[RunQuery],
    qrels: &Qrels,
    metrics: &[Metric],
    conv: &Convention,
) -> Result<Evaluation, FileError> {
    let mut qids = Vec::new();
    let mut table = Vec::new();
    for (qid, docs) in run {
        let Some(judgments) = qrels.get(qid) else {
            continue;
        };
        // A negative qrels value: in the pool but unjudged (trec_eval), −∞ for the metrics.
        let pooled = |l: f32| if l < 0.0 { f32::NEG_INFINITY } else { l };
        let labels: Vec<f32> = docs
            .iter()
            .map(|(d, _)| judgments.get(d).copied().map_or(f32::NAN, pooled))
            .collect();
        let scores: Vec<f64> = docs.iter().map(|(_, s)| *s).collect();
        let retrieved: std::collections::HashSet<&str> =
            docs.iter().map(|(d, _)| d.as_str()).collect();
        let unretrieved: Vec<f32> = judgments
            .iter()
            .filter(|(d, _)| !retrieved.contains(d.as_str()))
            .map(|(_, &l)| pooled(l))
            .collect();
        let ranking = run_ranking(docs, &scores, conv);
        let input = QueryInput {
            labels: &labels,
            scores: &scores,
            ranking: &ranking,
            unretrieved: &unretrieved,
        };
        let row: Result<Vec<f64>, Unsupported> = metrics
            .iter()
            .map(|&m| query_metric(m, &input, conv))
            .collect();
        table.push(row?);
        qids.push(qid.clone());
    }
    Ok(assemble(qids, metrics, conv, table))
}

/// Evaluate TREC runs against one qrels file on `metric`, as `ltr eval --run` does for each.
pub fn evaluate_run_files(
    runs: &[PathBuf],
    qrels: &Path,
    metric: Metric,
    conv: &Convention,
) -> Result<Vec<Evaluation>, FileError> {
    let q = read_qrels(qrels)?;
    runs.iter()
        .map(|p| evaluate_run(&read_run(p)?, &q, &[metric], conv))
        .collect()
}

/// Evaluate score files of `ds` (read from `data`) on `metric`, as `ltr eval --data --scores` does for each.
pub fn evaluate_score_files(
    ds: &Dataset,
    data: &Path,
    files: &[PathBuf],
    metric: Metric,
    conv: &Convention,
) -> Result<Vec<Evaluation>, FileError> {
    files
        .iter()
        .map(|p| {
            let s = read_scores(p)?;
            check_scores_fit(&s, ds, p, data)?;
            crate::evaluate::evaluate(ds, &s, &[metric], conv).map_err(|e| match e {
                crate::evaluate::EvalError::Unsupported(u) => FileError::Unsupported(u),
                e => io(p, std::io::Error::other(e.to_string())),
            })
        })
        .collect()
}

/// The ranking of one run query under the convention's tie policy (doc ids for `docid`).
fn run_ranking(docs: &[(String, f64)], scores: &[f64], conv: &Convention) -> Ranking {
    if conv.ties == TiePolicy::DocIdDescending {
        let f = |i: usize| docs[i].0.as_str();
        Ranking::new(scores, conv.ties, Some(&f))
    } else {
        fast_ranking(scores, conv.ties)
    }
}

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
    for (qid, docs) in run {
        let Some(judgments) = qrels.get(qid) else {
            continue;
        };
        let scores: Vec<f64> = docs.iter().map(|(_, s)| *s).collect();
        let ranking = run_ranking(docs, &scores, conv);
        let ranked: Vec<&str> = ranking.order.iter().map(|&i| docs[i].0.as_str()).collect();
        table.push(
            measures
                .iter()
                .map(|m| query_diversity(m, &ranked, judgments, conv.relevance_threshold))
                .collect(),
        );
        qids.push(qid.clone());
    }
    Ok(assemble(qids, metrics, conv, table))
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
