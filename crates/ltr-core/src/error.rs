//! Errors shared by the learners.

use std::path::PathBuf;

/// Errors of model files, parameters and training.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LtrError {
    /// A dataset error (parse, shape, I/O).
    #[error(transparent)]
    Data(#[from] ltr_data::DataError),
    /// A model file cannot be used.
    #[error("{}: {problem}", path.display())]
    Model {
        /// The model file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A hyperparameter is unknown or has an invalid value.
    #[error("parameter `{name}`: {problem}")]
    Param {
        /// Parameter name.
        name: String,
        /// What is wrong and what is accepted.
        problem: String,
    },
    /// Model and data disagree in shape.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// Training could not proceed.
    #[error("training failed: {0}")]
    Training(String),
    /// The measure that judges rankings (a metric) failed; the metric's own error is the source.
    #[error("measure failed: {0}")]
    Measure(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Result alias.
pub type Result<T, E = LtrError> = std::result::Result<T, E>;

impl LtrError {
    /// A measure error, keeping the metric's error as the source.
    pub fn measure(e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Measure(Box::new(e))
    }
    /// A parameter error.
    pub fn param(name: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Param {
            name: name.into(),
            problem: problem.into(),
        }
    }
}

/// Write `error: {message}` and a newline to standard error in one write. `eprintln!` writes each piece of its
/// format on its own, so output of other processes sharing the stream (mpirun's ranks and its abort banner, a
/// pipeline) can land inside the line; a front end's error lines go through here instead.
pub fn print_error_line(message: impl std::fmt::Display) {
    let line = format!("error: {message}\n");
    eprint!("{line}");
}
