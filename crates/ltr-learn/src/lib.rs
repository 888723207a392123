//! # ltr-learn
//!
//! The algorithm registry of `ltr`: every learner by name, with its source paper and its parameters
//! ([`ParamSpec`]: name, default, allowed values, doc — one definition that drives parsing, `ltr algorithms`, the
//! Python classes and the docs), and training by name with model selection ([`train`] over a [`Grid`], kept by
//! [`best_by_validation`]). The `ltr` binary, `cargo xtask` and the Python package are thin users of this crate.
//!
//! ```
//! use ltr_data::{generate_letor_like, split_by_queries, SyntheticConfig};
//! use ltr_learn::{train, Grid, TrainRequest};
//!
//! let all = generate_letor_like(&SyntheticConfig { queries: 30, seed: 2, ..Default::default() }).unwrap();
//! let parts = split_by_queries(&all, &[0.7, 0.3], 1).unwrap();
//! let grid = Grid::parse(&["c=0.01,0.1,1"]).unwrap();
//! let trained = train("ranksvm", &grid, &TrainRequest::new(&parts[0]).validation(&parts[1])).unwrap();
//! assert!(["0.01", "0.1", "1"].contains(&trained.params["c"].as_str()));
//! assert_eq!(trained.grid_scores.len(), 3);
//!
//! // A misspelt parameter is an error that names the known ones.
//! let e = train("ranksvm", &Grid::parse(&["cc=1"]).unwrap(), &TrainRequest::new(&parts[0])).unwrap_err();
//! assert!(e.to_string().contains("known: c, solver, pairs"));
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness, which would compile
// every module again; the unit tests live in the integration binary instead (`tests/unit/`).
#![cfg(not(test))]
#![deny(missing_docs)]

// pub for the tests in tests/unit/algorithms_*.rs and memory.rs; not API.
#[doc(hidden)]
pub mod algorithms;
mod click_join;
mod inspect;
// pub for the tests in tests/unit/job.rs; not API.
#[doc(hidden)]
pub mod job;
mod job_error;
// pub for the tests in tests/unit/memory.rs; not API.
#[doc(hidden)]
pub mod memory;
mod select;
mod shards;
mod spec;

pub use algorithms::{
    click_names, distributed_names, find, find_or_err, missing_value_names, online_params,
    refine_sigmoid, Algorithm, ClickUse, ALGORITHMS, SIGMOID_LAMBDA_GRID,
};
pub use ltr_core::{
    best_by_validation, Best, BestSoFar, Fit, FitContext, FitReport, FitWith, Fitted, Measure,
    ParamGuard, Params, Progress, Silent,
};
pub use memory::{
    human_bytes, memory_estimate, memory_estimates, Memory, MemoryEstimate, SizedBy, SizedFn,
    Switch, WideValues,
};
pub use select::{
    describe, prepare, train, train_distributed, Grid, Handover, MetricMeasure, Prepared,
    TrainRequest, TrainSet, Trained,
};

pub use click_join::ClickSource;
pub use inspect::describe_dataset;
pub use job::{Ranks, TrainData, TrainJob, TrainJobBuilder, TrainOutcome};
pub use job_error::{JobError, JobInput};
pub use ltr_clicks::SessionScope;
pub use shards::{balanced_ranges, shard_output_problem, shard_path, write_shards};
pub use spec::{Allowed, ParamSpec, SpecReader};

/// The online form of the registry's online algorithms (a row's `online` part, built by [`online_params`]) and
/// the stream protocol of seed 002 that replays data through it: what stream experiments (`cargo xtask reproduce
/// online`) use, so that they too reach the learners only through the registry.
pub mod online {
    pub use ltr_online::{
        mean_measure, replay, OnlineParams, OnlineRanker, OnlineValidParams, StreamConfig,
        StreamResult,
    };
}

/// Train one setting of `algorithm` by name: `train` with a single-setting grid.
pub fn train_one(
    algorithm: &str,
    params: &[(&str, &str)],
    req: &TrainRequest<'_>,
) -> ltr_core::Result<Trained> {
    train(algorithm, &Grid::single(params.iter().copied()), req)
}

/// `ltr algorithms` as text: each algorithm, its paper and every parameter with default, allowed values and doc.
pub fn algorithms_text() -> String {
    let mut out = String::new();
    for a in ALGORITHMS {
        out.push_str(&format!(
            "{}\n  paper: {}\n  code:  {}\n",
            a.name, a.paper, a.code
        ));
        if a.missing_values {
            out.push_str(
                "  input: a NaN feature value is a missing value (data built in memory)\n",
            );
        }
        for p in a.param_specs() {
            let default = if p.default.is_empty() {
                "unset".to_string()
            } else {
                p.default.to_string()
            };
            out.push_str(&format!(
                "  --param {}  [{}; default {}]{}\n      {}\n",
                p.name,
                p.allowed,
                default,
                p.when.map(|w| format!(" (with {w})")).unwrap_or_default(),
                p.doc
            ));
        }
        out.push('\n');
    }
    out
}

/// `ltr algorithms --json`: every algorithm with its parameters, defaults and allowed values.
pub fn algorithms_json() -> serde_json::Value {
    serde_json::to_value(ALGORITHMS).expect("the registry serialises")
}
