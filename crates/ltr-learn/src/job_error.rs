//! What can go wrong with a [`crate::TrainJob`]: an input refused before any data is read ([`JobError::Invalid`],
//! naming the [`JobInput`]), or a failure while it runs ([`JobError::Failed`], with what it was doing).

use ltr_core::LtrError;

/// Which input of a job an error is about; its [`name`](JobInput::name) is the `ltr train` flag without the
/// dashes (front ends print `--param: …` or `params: …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobInput {
    /// The algorithm's name.
    Algo,
    /// The parameters or grid.
    Param,
    /// The validation metric.
    Metric,
    /// The metric's convention.
    Convention,
    /// The normalisation.
    Normalize,
    /// The features given `log1p`.
    Log1p,
    /// The feature selection.
    Features,
    /// The feature-names file.
    FeatureNames,
    /// The training data.
    Train,
    /// The validation data.
    Validate,
    /// The click log or its propensities.
    Clicks,
    /// The ranks of a distributed run.
    Ranks,
}

impl JobInput {
    /// The name of the input: `ltr train`'s flag without its dashes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Algo => "algo",
            Self::Param => "param",
            Self::Metric => "metric",
            Self::Convention => "convention",
            Self::Normalize => "normalize",
            Self::Log1p => "log1p",
            Self::Features => "features",
            Self::FeatureNames => "feature-names",
            Self::Train => "train",
            Self::Validate => "validate",
            Self::Clicks => "clicks",
            Self::Ranks => "ranks",
        }
    }
}

/// Why a job could not be built or did not finish.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// An input was refused before any data was read.
    #[error("--{}: {problem}", .input.name())]
    Invalid {
        /// The input.
        input: JobInput,
        /// What is wrong with it.
        problem: String,
    },
    /// The run failed while reading, preprocessing or training.
    #[error("{context}: {error}")]
    Failed {
        /// What the run was doing.
        context: String,
        /// The failure.
        error: Box<LtrError>,
    },
}

impl JobError {
    pub(crate) fn invalid(input: JobInput, problem: impl std::fmt::Display) -> Self {
        Self::Invalid {
            input,
            problem: problem.to_string(),
        }
    }
    pub(crate) fn failed(context: impl Into<String>, error: impl Into<LtrError>) -> Self {
        Self::Failed {
            context: context.into(),
            error: Box::new(error.into()),
        }
    }
    /// The error with its input's name (`params: …` style, for front ends that do not use flags) or its context.
    pub fn message_with(&self, name: impl FnOnce(JobInput) -> String) -> String {
        match self {
            Self::Invalid { input, problem } => format!("{}: {problem}", name(*input)),
            Self::Failed { .. } => self.to_string(),
        }
    }
}
