//! The crate's one error type.

use std::path::{Path, PathBuf};

/// Everything that can stop an experiment, each naming what to fix.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// The experiment description is wrong (an unknown algorithm, a bad metric, no data source …).
    #[error("{0}")]
    Spec(String),
    /// The experiment file could not be read or parsed.
    #[error("{path}: {message}")]
    SpecFile {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line when the parser knows it.
        message: String,
    },
    /// Reading or splitting the data failed.
    #[error(transparent)]
    Data(#[from] ltr_data::DataError),
    /// Training failed (the message names the algorithm, the fold and the setting).
    #[error("{context}: {source}")]
    Training {
        /// Which cell.
        context: String,
        /// Why.
        #[source]
        source: Box<ltr_core::LtrError>,
    },
    /// Evaluating a cell's scores failed.
    #[error("{context}: {source}")]
    Evaluation {
        /// Which cell.
        context: String,
        /// Why.
        #[source]
        source: Box<ltr_metrics::EvalError>,
    },
    /// Writing an output file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The cell store could not be written.
    #[error("cell store: {0}")]
    Store(#[from] std::io::Error),
    /// Drawing a plot failed.
    #[error("plot {path}: {message}")]
    Plot {
        /// The SVG file.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

impl ExperimentError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, ExperimentError>;
