//! Score files, TREC run files and qrels: reading, writing, and evaluating a run against qrels.
//!
//! `read.rs` reads runs and qrels in parallel blocks, `join.rs` evaluates a run against qrels (the join by doc id
//! and the measures), `judgments.rs` chooses ad hoc or diversity qrels for the measures asked; score files, writing
//! and the errors are here.

mod join;
mod judgments;
// pub for the tests in tests/unit/trec_number.rs; not API.
#[doc(hidden)]
pub mod number;
// pub for the tests in tests/unit/trec_read.rs and trec_stream.rs; not API.
#[doc(hidden)]
pub mod read;
// pub for the tests in tests/unit/trec_stream.rs; not API.
#[doc(hidden)]
pub mod stream;

use std::io::Write;
use std::path::{Path, PathBuf};

use ltr_data::Dataset;

use crate::compute::Unsupported;
use crate::convention::{Convention, TiePolicy};
use crate::evaluate::Evaluation;
use crate::metric::Metric;
use crate::rank::fast_ranking;

pub use join::evaluate_run;
pub use judgments::{
    evaluate_diversity_run, evaluate_run_against_qrels, read_diversity_qrels, read_judgments,
    Judgments,
};
pub use read::{read_qrels, read_run};
pub use stream::evaluate_run_file;

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
    /// A run or qrels file that holds no line: every measure would be 0 over no query.
    #[error("{}: {problem}", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
        /// Which file it is and the line it lacks.
        problem: &'static str,
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
    /// A run lists a judged document twice for one query: trec_eval refuses such a run ("duplicate docs"), and so
    /// does [`evaluate_run`] (a duplicate unjudged document is caught by `ltr eval --format trec_eval` only).
    #[error("query {qid} of the run lists judged document {docid} twice (trec_eval refuses a run with duplicate documents)")]
    DuplicateDocument {
        /// The query.
        qid: String,
        /// The document.
        docid: String,
    },
}

pub(super) fn io(path: &Path, e: std::io::Error) -> FileError {
    FileError::Io {
        path: path.to_path_buf(),
        source: e,
    }
}

pub(super) fn read_text(path: &Path) -> Result<String, FileError> {
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
