//! The one error type of `ltr-data`.

use std::path::PathBuf;

/// Everything that can go wrong while reading, writing, caching or transforming a dataset.
///
/// Every variant names the file involved; parse errors also name the 1-based line, the offending token and
/// what was expected there, so that a user can fix the input without guessing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataError {
    /// The operating system refused a read or write.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of a LETOR/SVMlight file is malformed.
    #[error("{}:{line}: {problem} (token `{token}`; expected {expected})", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending token (truncated to 40 characters).
        token: String,
        /// What was wrong.
        problem: String,
        /// What the parser expected at that place.
        expected: String,
    },
    /// A query id reappears after other queries (queries must be contiguous runs of one qid).
    #[error("{}:{line}: qid `{qid}` reappears after other queries (its run started at line {first_line}); queries must be contiguous — sort the file by qid, or pass the regroup option (`--regroup` / `RepeatedQid::Regroup`)", path.display())]
    RepeatedQid {
        /// The file.
        path: PathBuf,
        /// The repeated qid.
        qid: String,
        /// Where its first run began.
        first_line: usize,
        /// Where it reappears.
        line: usize,
    },
    /// The same docid appears twice within one query.
    #[error("{}:{line}: docid `{docid}` appears again in query `{qid}` (first at line {first_line}); trec_eval and the LETOR scripts key documents by docid, so remove the duplicate or pass the allow option (`--allow-duplicate-docids`)", path.display())]
    DuplicateDocid {
        /// The file.
        path: PathBuf,
        /// The query.
        qid: String,
        /// The repeated docid.
        docid: String,
        /// Its first line.
        first_line: usize,
        /// The repeating line.
        line: usize,
    },
    /// Some lines carry `qid:` and others do not.
    #[error("{}:{line}: this line {has} a `qid:` token but line {other_line} {other_has}; either every line carries a qid or none does (then give a `.query` group file)", path.display())]
    MixedQid {
        /// The file.
        path: PathBuf,
        /// The first line whose qid status differs from the file's first data line.
        line: usize,
        /// "has" or "lacks".
        has: &'static str,
        /// The first data line.
        other_line: usize,
        /// "has" or "lacks".
        other_has: &'static str,
    },
    /// The file has no data line at all.
    #[error("{}: the file has no data lines (expected `label qid:Q idx:val ...` lines)", path.display())]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A `.query` group sidecar does not match the data file.
    #[error("{}: {problem}", path.display())]
    QueryFile {
        /// The sidecar.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A binary cache file is stale, corrupt or from another format version.
    #[error("{}: cache rejected: {problem}; delete it (it is rebuilt from the text file)", path.display())]
    Cache {
        /// The cache file.
        path: PathBuf,
        /// Why it was rejected.
        problem: String,
    },
    /// Two datasets (or a dataset and a model) disagree in shape.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// An argument is out of its valid range.
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// A session of a click log cannot be joined to the feature file (`ltr_clicks::click_training_set`; the session
    /// id lets a caller that read the log point at its lines).
    #[error("session {session}: {problem}")]
    ClickSession {
        /// The session id of the log.
        session: u64,
        /// What is wrong.
        problem: String,
    },
}

/// Result alias for this crate.
pub type Result<T, E = DataError> = std::result::Result<T, E>;

impl DataError {
    /// A [`DataError::Io`] naming `path`: how readers of other file formats built on this crate (click logs,
    /// propensity tables in `ltr-clicks`) report a failed read with the same message.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}
