//! `cargo xtask`: dataset download, reproduction of the papers' tables, and the benchmark report.
//!
//! ```text
//! cargo xtask download <dataset> [--dir DIR] [--from LOCAL_DIR_OR_ARCHIVE] [--url URL]
//! cargo xtask reproduce <committee|mhr|online|sigmoid|rsvm-ir|clicks|letor-baselines|all> [--data DIR] [--folds 1,2,3,4,5] [--out DIR]
//! cargo xtask bench [--quick]
//! cargo xtask test [--no-rust] [--no-python] [--no-mpi]
//! ```

mod bench;
mod download;
mod reproduce;
mod test;

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
        /// committee, mhr, online, sigmoid, rsvm-ir, clicks, letor-baselines or all.
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
    /// Run every test: the Rust workspace with the MPI backend (installing Open MPI with scripts/setup-mpi.sh),
    /// then the Python package (built into target/python-venv) and pytest.
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
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Test {
            no_rust,
            no_python,
            no_mpi,
        } => test::run(
            &project_root(),
            test::Parts {
                rust: !no_rust,
                python: !no_python,
                mpi: !no_mpi,
            },
        ),
        Cmd::Download {
            dataset,
            dir,
            from,
            url,
        } => {
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
                .find(|e| e.name.eq_ignore_ascii_case(&dataset))
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
            let all = reproduce::EXPERIMENTS;
            let which: Vec<&str> = if experiment == "all" {
                all.to_vec()
            } else if all.contains(&experiment.as_str()) {
                vec![experiment.as_str()]
            } else {
                bail!(
                    "unknown experiment `{experiment}`; expected one of {} or all",
                    all.join(", ")
                );
            };
            let t0 = std::time::Instant::now();
            let (benches, synthetic) = reproduce::load(data.as_deref(), &folds, None)?;
            if synthetic {
                eprintln!("\n{}", "=".repeat(100));
                eprintln!("WARNING: no LETOR data found — running every experiment on SYNTHETIC data. The reports say so at the top.");
                eprintln!("Get the real benchmarks with `cargo xtask download mq2008 --from ...` or pass --data DIR.");
                eprintln!("{}\n", "=".repeat(100));
            } else {
                eprintln!(
                    "data: {}",
                    benches
                        .iter()
                        .map(|b| format!("{} ({} folds)", b.name, b.folds.len()))
                        .collect::<Vec<_>>()
                        .join(", ")
                );
            }
            let cells_dir = out.join("cells");
            std::fs::create_dir_all(&cells_dir).with_context(|| cells_dir.display().to_string())?;
            let ctx = reproduce::Ctx {
                benches,
                synthetic,
                out: out.clone(),
                cells: reproduce::Cells::new(cells_dir),
                progress: indicatif::MultiProgress::new(),
                jobs: jobs.unwrap_or_else(|| {
                    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
                }),
                data_roots: reproduce::data_roots(data.as_deref()),
            };
            // One bar over every paper, advanced by each paper's share of the work (its CPU seconds in a fresh
            // run), so that the ETA is not that of seven equal steps.
            let weight = |w: &str| {
                reproduce::EXPERIMENT_CPU_SECONDS
                    .iter()
                    .find(|e| e.0 == w)
                    .map_or(1, |e| e.1)
            };
            let overall = ctx.progress.add(indicatif::ProgressBar::new(
                which.iter().map(|w| weight(w)).sum(),
            ));
            overall.set_style(
                indicatif::ProgressStyle::with_template(
                    "papers {bar:30} {percent}% {elapsed_precise} eta {eta} {msg}",
                )
                .expect("template"),
            );
            let mut reports = Vec::new();
            let mut summary = Vec::new();
            for w in &which {
                overall.set_message(w.to_string());
                let t = std::time::Instant::now();
                let before = ctx.cells.counts();
                let report = match *w {
                    "committee" => reproduce::committee::run(&ctx)?,
                    "mhr" => reproduce::mhr::run(&ctx)?,
                    "online" => reproduce::online::run(&ctx)?,
                    "sigmoid" => reproduce::sigmoid::run(&ctx)?,
                    "rsvm-ir" => reproduce::rsvm_ir::run(&ctx)?,
                    "clicks" => reproduce::clicks::run(&ctx)?,
                    _ => reproduce::letor::run(&ctx)?,
                };
                tracing::info!(
                    "{w}: {} ({:.1}s)",
                    report.display(),
                    t.elapsed().as_secs_f64()
                );
                let after = ctx.cells.counts();
                summary.push(format!(
                    "{w:>16}: {:8.1} s, {} cells computed, {} reused",
                    t.elapsed().as_secs_f64(),
                    after.0 - before.0,
                    after.1 - before.1
                ));
                reports.push((w.to_string(), report));
                overall.inc(weight(w));
            }
            overall.finish_and_clear();
            eprintln!("{}", summary.join("\n"));
            reproduce::write_index(&ctx, &reports, t0.elapsed().as_secs_f64())?;
            println!("{}", out.join("index.md").display());
            Ok(())
        }
        Cmd::Bench { quick, only } => bench::run(quick, only.as_deref()),
    }
}
