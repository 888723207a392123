//! `ltr predict`: score a data file with a model.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

/// Arguments of `ltr predict`.
#[derive(Debug, Args)]
pub struct PredictArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    /// The data file to score.
    #[arg(long)]
    pub data: PathBuf,
    /// Output file (written atomically); stdout when absent.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// `scores` (one per line, data order) or `trec` (a TREC run).
    #[arg(long, default_value = "scores")]
    pub format: String,
    /// Run tag for the TREC format.
    #[arg(long, default_value = "ltr")]
    pub tag: String,
    /// The arithmetic of the scores: `full` (as trained and exported), or for a neural model `bf16` (hidden-layer
    /// products in bfloat16: twice `full`'s speed on AMD Zen 4's AVX-512 BF16, slower on the Intel Xeon measured,
    /// 100 times slower without it; scores move by 1e-3) or `int8` (in 8-bit integers: 1.8 times `full`'s speed
    /// with AVX2; scores move by 1e-2). Portable code gives the same scores, with a warning.
    #[arg(long, default_value = "full")]
    pub precision: String,
    /// How the data file is read.
    #[command(flatten)]
    pub read: super::DataOpts,
}

/// Run the command.
pub fn run(a: PredictArgs) -> Result<()> {
    if a.format != "scores" && a.format != "trec" {
        bail!("--format must be `scores` or `trec`, not `{}`", a.format);
    }
    let Some(precision) = ltr_core::Precision::parse(&a.precision) else {
        bail!(
            "--precision must be `full`, `bf16` or `int8`, not `{}`",
            a.precision
        );
    };
    // An ltr model, or a RankLib Coordinate Ascent / MART / LambdaMART file (evaluate models trained there).
    let mut m = ltr_export::load_model(&a.model)?;
    let bar = crate::progress::Bar::for_terminal();
    let ds = bar.stage(&format!("reading {}", a.data.display()), || {
        super::load_dataset(&a.data, &a.read)
    })?;
    let scores = bar.stage("scoring", || {
        ltr_export::score_loaded_with(&mut m, &ds, &a.data.display().to_string(), precision)
    })?;
    let write = |w: &mut dyn Write| -> std::io::Result<()> {
        if a.format == "trec" {
            ltr_metrics::write_run_to(w, &ds, &scores, &a.tag)
        } else {
            for s in &scores {
                writeln!(w, "{s}")?;
            }
            Ok(())
        }
    };
    match &a.out {
        Some(p) => ltr_data::write_atomic(p, write)?,
        None => {
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            write(&mut lock)?;
            lock.flush()?;
        }
    }
    Ok(())
}
