//! `xtask-lab`: dataset download, reproduction of the papers' tables, and the benchmark report — the automation
//! that links the ltr libraries. `cargo xtask download|reproduce|bench` runs it (the small `xtask` forwards its
//! arguments), so that `cargo xtask test` builds no learner before the test build does.
//!
//! ```text
//! cargo xtask download <dataset> [--dir DIR] [--from LOCAL_DIR_OR_ARCHIVE] [--url URL]
//! cargo xtask reproduce <committee|mhr|online|sigmoid|rsvm-ir|clicks|letor-baselines|all> [--data DIR] [--folds 1,2,3,4,5] [--out DIR]
//! cargo xtask compare-results [--results DIR] [--rev REV]
//! cargo xtask bench [--quick]
//! ```
//!
//! A library with a thin binary (`src/main.rs` calls [`main`]) so that `cargo test --all-targets` compiles these
//! sources once: the binary, which the integration tests run, and the integration tests themselves
//! (`tests/main.rs`, where the unit tests of these modules live) both link this library. A binary holding the modules
//! was compiled twice, as the binary and again under `cfg(test)` as its unit-test harness (CONTRIBUTING.md, "CI
//! time").
//!
//! `cargo test --all-targets` builds a library's unit-test harness even with `test = false` (an explicit target
//! selection ignores that flag), so the crate is empty under `cfg(test)`: that harness compiles nothing.
#![cfg(not(test))]

pub mod bench;
#[cfg(feature = "download")]
pub mod download;
// The reproduction's shared state (`Ctx`, `Cells`, `Bench`: progress bars, locks, loaded folds) is public for the
// tests in `tests/`, not as an API; it has no use for `Debug`.
#[allow(missing_debug_implementations)]
pub mod reproduce;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "xtask", about = "ltr automation: download, reproduce, bench")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Download (or import with --from), verify and install a benchmark into datasets/data/NAME.
    Download {
        /// mq2007, mq2008, ohsumed, td2003, td2004, mslr-web10k, mslr-web30k, yahoo, istella (or `list`).
        dataset: String,
        /// Install folder (default: datasets/data).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// A local copy: the extracted folder (e.g. ../shared/datasets/MQ2008) or the archive file.
        #[arg(long)]
        from: Option<PathBuf>,
        /// A direct archive address (replaces the manifest's sources).
        #[arg(long)]
        url: Option<String>,
    },
    /// Reproduce a paper's tables and figures (or `all`).
    Reproduce {
        /// committee, mhr, online, sigmoid, rsvm-ir, clicks (both click experiments), clicks-trees,
        /// letor-baselines or all.
        experiment: String,
        /// Folder holding MQ2008/ and OHSUMED/ (default: ../shared/datasets, then datasets/data; else synthetic).
        #[arg(long)]
        data: Option<PathBuf>,
        /// Folds to use.
        #[arg(long, default_value = "1,2,3,4,5")]
        folds: String,
        /// Output folder.
        #[arg(long, default_value = "results")]
        out: PathBuf,
        /// Independent cells computed at once (default: the cores this process may use). The numbers do not
        /// depend on it.
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Compute the slice of every experiment afresh (fold 1, the cheapest setting of each row) and compare it with
    /// results/slice/ exactly, timing columns aside: fails when results/ is stale.
    CheckResults {
        /// Folder holding MQ2008/ and OHSUMED/ (default: ../shared/datasets, then datasets/data).
        #[arg(long)]
        data: Option<PathBuf>,
        /// The results folder to check (default: results/ of this checkout).
        #[arg(long)]
        results: Option<PathBuf>,
        /// Independent cells computed at once (default: the cores this process may use).
        #[arg(long)]
        jobs: Option<usize>,
        /// Compute the slice in this new (or empty) folder and keep it (`DIR/X/cells.csv`, to see what moved); by
        /// default a temporary folder, removed.
        #[arg(long)]
        keep: Option<PathBuf>,
    },
    /// After `reproduce`: compare every `X/cells.csv` and `slice/X.csv` it wrote with the committed results/ file
    /// of the same name at a git revision, value by value, timing columns aside (the rule of check-results). Fails
    /// naming each difference.
    CompareResults {
        /// The folder a reproduction wrote (its `--out`; default: results/ of this checkout, rewritten in place).
        #[arg(long)]
        results: Option<PathBuf>,
        /// The git revision holding the tables to compare with.
        #[arg(long, default_value = "HEAD")]
        rev: String,
    },
    /// Run the benchmarks with the available peers and write BENCHMARKS.md.
    Bench {
        /// Smaller sizes (minutes instead of tens of minutes).
        #[arg(long)]
        quick: bool,
        /// Run only these sections (comma list of parse, eval, svm, learners) and update them in BENCHMARKS.md.
        #[arg(long)]
        only: Option<String>,
    },
}

fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `xtask-lab` command: parse the arguments, run the subcommand, and report an error on stderr.
pub fn main() -> ExitCode {
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
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Download {
            dataset,
            dir,
            from,
            url,
        } => download_command(&dataset, dir, from, url),
        Cmd::Reproduce {
            experiment,
            data,
            folds,
            out,
            jobs,
        } => {
            let folds: Vec<usize> = folds
                .split(',')
                .map(|f| {
                    f.trim()
                        .parse::<usize>()
                        .with_context(|| format!("--folds: `{f}`"))
                })
                .collect::<Result<_>>()?;
            let Some(which) = reproduce::experiments_named(&experiment) else {
                bail!(
                    "unknown experiment `{experiment}`; expected one of {} or all",
                    reproduce::EXPERIMENTS.join(", ")
                );
            };
            let options = reproduce::run::Options {
                which: which.iter().map(|w| w.to_string()).collect(),
                data,
                folds,
                out,
                jobs,
                slice: false,
                cells: None,
            };
            let synthetic = reproduce::run::reproduce(&options)?;
            reproduce::slice::write(&options, synthetic)
        }
        Cmd::CheckResults {
            data,
            results,
            jobs,
            keep,
        } => {
            if let Some(k) = &keep {
                let used = std::fs::read_dir(k).is_ok_and(|mut d| d.next().is_some());
                if used {
                    bail!("--keep {}: not empty; name a new folder", k.display());
                }
            }
            let scratch = keep.clone().unwrap_or_else(|| {
                std::env::temp_dir().join(format!("ltr-check-results-{}", std::process::id()))
            });
            let r = reproduce::slice::check(
                data.as_deref(),
                &results.unwrap_or_else(|| project_root().join("results")),
                &scratch,
                jobs,
            );
            if keep.is_none() {
                let _ = std::fs::remove_dir_all(&scratch);
            }
            r?;
            eprintln!("results/ agrees with a fresh slice of every experiment");
            Ok(())
        }
        Cmd::CompareResults { results, rev } => {
            let results = results.unwrap_or_else(|| project_root().join("results"));
            let results = std::fs::canonicalize(&results).unwrap_or(results);
            let n = reproduce::committed::compare_with_revision(&project_root(), &results, &rev)?;
            eprintln!(
                "{}: {n} tables equal to results/ at {rev}, timing columns aside",
                results.display()
            );
            Ok(())
        }
        Cmd::Bench { quick, only } => bench::run(quick, only.as_deref()),
    }
}

/// `download`: list the manifest, or fetch (or import), verify and install one benchmark.
#[cfg(feature = "download")]
fn download_command(
    dataset: &str,
    dir: Option<PathBuf>,
    from: Option<PathBuf>,
    url: Option<String>,
) -> Result<()> {
    let m = download::manifest()?;
    if dataset == "list" {
        for e in &m {
            let sources: Vec<&str> = e.sources.iter().map(|s| s.kind.as_str()).collect();
            println!(
                "{:<12} {} ({}; sources: {}; {} checked files; {})",
                e.name,
                e.title,
                e.archive,
                if sources.is_empty() {
                    "none, --from only".to_string()
                } else {
                    sources.join(", ")
                },
                e.sha256.len(),
                e.page
            );
        }
        return Ok(());
    }
    let e = m
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(dataset))
        .with_context(|| {
            format!(
                "unknown dataset `{dataset}`; known: {}",
                m.iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    if e.format == "license" && from.is_none() && url.is_none() {
        let known = e
            .sources
            .first()
            .map(|s| format!("\n  Once accepted, the archive is at {} — import it with `cargo xtask download {} --url {}` or `--from FILE`, which verifies it.", s.url, e.name, s.url))
            .unwrap_or_else(|| format!("\n  Then import the files with `cargo xtask download {} --from DIR`, which verifies them.", e.name));
        println!("{} needs a license agreement and is not downloaded without your say-so.\n  Get it from: {}\n  License: {}\n  Expected layout: {}{known}\n  Install folder: {}", e.title, e.page, e.license, e.required_files().join(", "), project_root().join("datasets/data").join(&e.name).display());
        return Ok(());
    }
    let dir = dir.unwrap_or_else(|| project_root().join("datasets/data"));
    download::install(e, &dir, from.as_deref(), url.as_deref())?;
    Ok(())
}

/// `download` in a build without the `download` feature (what `reproduce` and `check-results` need leaves out the
/// HTTP, TLS and archive code).
#[cfg(not(feature = "download"))]
fn download_command(
    _dataset: &str,
    _dir: Option<PathBuf>,
    _from: Option<PathBuf>,
    _url: Option<String>,
) -> Result<()> {
    bail!("this xtask-lab was built without the `download` feature: run `cargo xtask download ...` (or `cargo run -p xtask-lab --features download -- download ...`)")
}
