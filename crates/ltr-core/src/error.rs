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
}

/// Result alias.
pub type Result<T, E = LtrError> = std::result::Result<T, E>;

impl LtrError {
    /// A parameter error.
    pub fn param(name: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Param {
            name: name.into(),
            problem: problem.into(),
        }
    }
}
