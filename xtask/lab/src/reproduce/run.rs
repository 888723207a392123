//! One `cargo xtask reproduce` run: load the folds, run each experiment (its cells checkpointed under `OUT/cells`),
//! write `OUT/index.md`. The slice module runs it with `slice` set.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// What to reproduce, and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// Experiments, in [`super::EXPERIMENTS`] order.
    pub which: Vec<String>,
    /// `--data`.
    pub data: Option<PathBuf>,
    /// `--folds`.
    pub folds: Vec<usize>,
    /// `--out`.
    pub out: PathBuf,
    /// `--jobs`.
    pub jobs: Option<usize>,
    /// The slice's reduced protocol (fold 1, the cheapest setting of each row): set only by the slice itself.
    pub slice: bool,
    /// The cell store (default `OUT/cells`): the slice after a full run shares the full run's, where its
    /// [`super::Cells::get_shared`] cells (the same model on fold 1) are already computed.
    pub cells: Option<PathBuf>,
}

/// Run the experiments of `o`; true when the data were generated (no LETOR folds found).
pub fn reproduce(o: &Options) -> Result<bool> {
    let Options {
        which,
        data,
        folds,
        out,
        jobs,
        slice,
        cells,
    } = o;
    let t0 = std::time::Instant::now();
    let (benches, synthetic) = super::load(data.as_deref(), folds, None)?;
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
    let cells_dir = cells.clone().unwrap_or_else(|| out.join("cells"));
    std::fs::create_dir_all(&cells_dir).with_context(|| cells_dir.display().to_string())?;
    let ctx = super::Ctx {
        slice: *slice,
        benches,
        synthetic,
        out: out.clone(),
        cells: super::Cells::with_protocol(cells_dir, *slice),
        progress: indicatif::MultiProgress::new(),
        jobs: jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
        // The slice reads only the LETOR folds, so that it is the same on every machine whatever else is installed.
        data_roots: if *slice {
            Vec::new()
        } else {
            super::data_roots(data.as_deref())
        },
    };
    // One bar over every paper, advanced by each paper's share of the work (its CPU seconds in a fresh
    // run), so that the ETA is not that of seven equal steps.
    let weight = |w: &str| {
        super::EXPERIMENT_CPU_SECONDS
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
    for w in which.iter() {
        overall.set_message(w.to_string());
        let t = std::time::Instant::now();
        let before = ctx.cells.counts();
        let report = match w.as_str() {
            "committee" => super::committee::run(&ctx)?,
            "mhr" => super::mhr::run(&ctx)?,
            "online" => super::online::run(&ctx)?,
            "sigmoid" => super::sigmoid::run(&ctx)?,
            "rsvm-ir" => super::rsvm_ir::run(&ctx)?,
            "clicks" => super::clicks::run(&ctx)?,
            _ => super::letor::run(&ctx)?,
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
    super::write_index(&ctx, &reports, t0.elapsed().as_secs_f64())?;
    println!("{}", out.join("index.md").display());
    Ok(synthetic)
}
