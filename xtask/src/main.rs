//! `cargo xtask`: every test, and (through `xtask-lab`) dataset download, reproduction of the papers' tables and
//! the benchmark report.
//!
//! ```text
//! cargo xtask test [--no-rust] [--no-python] [--no-mpi] [--clippy]
//! cargo xtask download <dataset> [--dir DIR] [--from LOCAL_DIR_OR_ARCHIVE] [--url URL]
//! cargo xtask reproduce <committee|mhr|online|sigmoid|rsvm-ir|clicks|clicks-trees|letor-baselines|all> [--data DIR] [--folds 1,2,3,4,5] [--out DIR]
//! cargo xtask compare-results [--results DIR] [--rev REV]
//! cargo xtask bench [--quick]
//! ```
//!
//! This binary links no ltr library, so that `cargo xtask test` compiles the workspace once, in the test build
//! (with the `mpi` feature, after Open MPI is installed). `download`, `reproduce`, `compare-results` and `bench` run
//! `cargo run -p xtask-lab -- ARGS...` (xtask/lab), which links the learners.
// Unit tests live in tests/: `cargo test --all-targets` (CI's one build) compiles a unit-test harness of every
// library and binary even when it has no tests, so under `cfg(test)` this crate is empty and that harness is free.
#![cfg(not(test))]

mod test;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "xtask",
    about = "ltr automation: test, download, reproduce, bench"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run every test: the Rust workspace with the MPI backend (installing Open MPI with scripts/setup-mpi.sh),
    /// the staleness check of results/ among them, and the Python package (built into target/python-venv) with
    /// pytest, which runs beside the Rust tests once they are built.
    Test {
        /// Skip `cargo test --workspace`.
        #[arg(long)]
        no_rust: bool,
        /// Skip the Python package.
        #[arg(long)]
        no_python: bool,
        /// Build the workspace without the `mpi` feature and skip the MPI tests (no Open MPI needed).
        #[arg(long)]
        no_mpi: bool,
        /// Also lint as CI does (`cargo clippy --workspace --all-targets -- -D warnings`, same features): the
        /// test build itself runs through clippy's driver, so the workspace is compiled once, not checked again
        /// (`.ci/run` passes it).
        #[arg(long)]
        clippy: bool,
    },
    /// Download (or import with --from), verify and install a benchmark into datasets/data/NAME (xtask-lab;
    /// `cargo xtask download --help` for its options).
    #[command(disable_help_flag = true)]
    Download {
        /// Passed to `xtask-lab download`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Reproduce a paper's tables and figures, or `all` (xtask-lab; `cargo xtask reproduce --help`).
    #[command(disable_help_flag = true)]
    Reproduce {
        /// Passed to `xtask-lab reproduce`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// After `reproduce` rewrote results/: compare every table there with git's HEAD, timing columns aside
    /// (xtask-lab; `cargo xtask compare-results --help`).
    #[command(disable_help_flag = true)]
    CompareResults {
        /// Passed to `xtask-lab compare-results`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run the benchmarks with the available peers and write BENCHMARKS.md (xtask-lab; `cargo xtask bench --help`).
    #[command(disable_help_flag = true)]
    Bench {
        /// Passed to `xtask-lab bench`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| eprintln!("error: internal error ({info})")));
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `cargo run -p xtask-lab -- SUBCOMMAND ARGS...` from the caller's folder (so that relative paths such as
/// `--out results` mean what they say), with its exit status.
fn lab(subcommand: &str, args: &[String]) -> Result<ExitCode> {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["run", "-q", "-p", "xtask-lab", "--manifest-path"])
        .arg(project_root().join("Cargo.toml"));
    if subcommand != "download" {
        // Only `download` needs the download stack (TLS, archives, rarlab's C++): `reproduce` and `bench` build
        // without it, which takes a minute of CPU out of a fresh clone's `reproduce all`.
        cmd.arg("--no-default-features");
    }
    cmd.arg("--").arg(subcommand).args(args);
    let s = cmd
        .status()
        .with_context(|| format!("cannot start {cmd:?}"))?;
    Ok(match s.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.cmd {
        Cmd::Test {
            no_rust,
            no_python,
            no_mpi,
            clippy,
        } => test::run(
            &project_root(),
            test::Parts {
                rust: !no_rust,
                python: !no_python,
                mpi: !no_mpi,
                clippy,
            },
        )
        .map(|()| ExitCode::SUCCESS),
        Cmd::Download { args } => lab("download", &args),
        Cmd::Reproduce { args } => lab("reproduce", &args),
        Cmd::CompareResults { args } => lab("compare-results", &args),
        Cmd::Bench { args } => lab("bench", &args),
    }
}
