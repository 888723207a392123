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
    /// The arithmetic of the scores: `full` (the model as trained and exported) or `bf16` (a neural model's
    /// hidden-layer products in bfloat16 with f32 sums: about twice the documents a second on AMD Zen 4, slower
    /// than `full` on the Intel Xeon measured; without AVX-512 BF16 the same scores in portable code, about 100
    /// times slower, with a warning; each score moves by about 1e-3 of the scores' scale).
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
            "--precision must be `full` or `bf16`, not `{}`",
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
