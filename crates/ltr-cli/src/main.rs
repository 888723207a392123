//! `ltr`: learn ranking functions and measure them the way IR researchers do.
//!
//! ```text
//! ltr train   --train F [--validate F] --algo NAME [--param k=v]... [--metric NDCG@10] [--seed N] --model OUT
//! ltr predict --model F --data F [--out F] [--format scores|trec]
//! ltr eval    --data F --scores F [--metric M]... [--convention C] [--per-query] [--json]
//! ltr compare (--run A --run B … --qrels Q | --data F --scores A --scores B …) [--test tukey-hsd|ttest|…] [--json]
//! ltr inspect F
//! ltr experiment (--data F --folds K | --fold-dir D | --config E.toml) --algo NAME[:k=v,...]... --out DIR
//! ltr algorithms [--json]
//! ltr train --distributed [--ranks P] …   # or: mpirun -n P ltr train --distributed … (the `mpi` feature)
//! ```

// Empty under `cfg(test)`: `cargo test --all-targets` builds the binary's unit-test harness, which would compile the
// whole CLI again; it has no unit tests (the CLI is tested as a user runs it, in tests/).
#![cfg(not(test))]

mod commands;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Learning to rank: train, predict, evaluate, compare and inspect.
#[derive(Debug, Parser)]
#[command(name = "ltr", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// Log level for stderr (error, warn, info, debug, trace); RUST_LOG overrides it.
    #[arg(long, global = true, default_value = "info")]
    log: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Train a model (a comma list in --param is a grid searched on --validate).
    Train(commands::train::TrainArgs),
    /// Score a data file with a model.
    Predict(commands::predict::PredictArgs),
    /// Evaluate a score file (or a TREC run against qrels).
    Eval(commands::eval::EvalArgs),
    /// Compare runs: two score files with a paired test, or many with Tukey HSD or corrected paired tests.
    Compare(commands::compare::CompareArgs),
    /// Summarise a dataset or a model file.
    Inspect(commands::inspect::InspectArgs),
    /// Write a seeded synthetic LETOR-like dataset (train/vali/test).
    Generate(commands::generate::GenerateArgs),
    /// Click logs: simulate sessions and clicks from judged data and a production ranker.
    #[command(subcommand)]
    Clicks(commands::clicks::ClicksCommand),
    /// Compare two rankers by team-draft, balanced or probabilistic interleaving against a simulated user.
    Interleave(commands::interleave::InterleaveArgs),
    /// Compare learners on your data: folds, grids on validation, significance tests, a report.
    Experiment(commands::experiment::ExperimentArgs),
    /// Fuse TREC runs into one (RRF, CombSUM/MNZ/MAX, Borda, weighted sum; weights tunable on qrels).
    Fuse(commands::fuse::FuseArgs),
    /// Split a data file into one file per rank (whole queries, balanced by pairs) for `train --distributed`.
    Shard(commands::shard::ShardArgs),
    /// Export a model to a search engine (es-ltr, opensearch-ltr, solr-ltr, vespa, ranklib) or to ONNX.
    Export(commands::export::ExportArgs),
    /// List the algorithms with their parameters, defaults and allowed values.
    Algorithms {
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    // A bug ends in one clear line, not a backtrace; a reader that closed stdout early (`| head`) ends it quietly.
    std::panic::set_hook(Box::new(|info| {
        if info.to_string().contains("printing to stdout: Broken pipe") {
            std::process::exit(0);
        }
        ltr_core::print_error_line(format_args!(
            "internal error ({info}); please report it with the command line that caused it"
        ));
    }));
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(&cli.log));
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
    let result = match cli.command {
        // An MPI rank must call MPI from its main thread; every other training runs on a pool worker.
        Command::Train(a) if a.distributed => commands::train::run(a),
        Command::Train(a) => on_pool_worker(|| commands::train::run(a)),
        Command::Predict(a) => commands::predict::run(a),
        Command::Eval(a) => commands::eval::run(a),
        Command::Compare(a) => commands::compare::run(a),
        Command::Inspect(a) => commands::inspect::run(a),
        Command::Generate(a) => commands::generate::run(a),
        Command::Export(a) => commands::export::run(a),
        Command::Shard(a) => commands::shard::run(a),
        Command::Fuse(a) => commands::fuse::run(a),
        Command::Experiment(a) => commands::experiment::run(a),
        Command::Clicks(c) => commands::clicks::run(c),
        Command::Interleave(a) => commands::interleave::run(a),
        Command::Algorithms { json } => {
            if json {
                println!("{:#}", ltr_learn::algorithms_json());
            } else {
                print!("{}", ltr_learn::algorithms_text());
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            ltr_core::print_error_line(error_chain(&e));
            ExitCode::FAILURE
        }
    }
}

/// Run `f` on a worker of rayon's global pool (8 MiB stacks, like the main thread's). The serial steps between
/// parallel sections — Newton's CG updates, line searches, epochs — then hand each parallel section to the other
/// worker by work stealing, instead of injecting it from outside the pool and sleeping on a latch until it ends:
/// 0.6 ms of 25 on the sparse sample's RankSVM, whose 47 CG steps are 55 parallel sections.
fn on_pool_worker<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    // Fails only when the pool already exists, which then serves as it is.
    let _ = rayon::ThreadPoolBuilder::new()
        .stack_size(8 << 20)
        .build_global();
    rayon::scope(|_| f())
}

/// The error and its causes joined by `: `, leaving out a cause whose text the message already holds (a
/// `path: reason` error whose source is the reason would otherwise print the reason twice).
fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
