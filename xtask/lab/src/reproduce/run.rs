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
    let jobs = jobs.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let ctx = super::Ctx {
        slice: *slice,
        benches: std::sync::Arc::new(benches),
        synthetic,
        out: out.clone(),
        cells: super::Cells::with_protocol(cells_dir, *slice, jobs),
        progress: indicatif::MultiProgress::new(),
        jobs,
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
    // Papers run at once, up to `jobs` of them, the costliest first, while their cells share the run's `jobs`
    // places: a paper that ends on one long cell leaves the other cores to the next paper instead of idle (the
    // slice's papers, each a few seconds ending on its longest cell, took 1.08 cores of 2 one after another).
    // Every cell is computed as it would be alone, and the reports and the summary keep `which`'s order; only
    // the timing columns, and which of two papers sharing a cell computes it and which reads it back, depend on
    // the schedule. `--jobs 1` runs them one after another, as before. Committee's Table 5, a table of training
    // times, is timed alone (`Places::alone`); the other timing columns (`train_s`, `seconds`, online's
    // `rounds_per_second`) are taken with other cells computing beside, as `in_parallel`'s cells always were.
    let mut order: Vec<usize> = (0..which.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(weight(&which[i])), i));
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Once a paper fails, no other starts (those running finish); the first error in `which` order is returned.
    let failed = std::sync::atomic::AtomicBool::new(false);
    type Done = (PathBuf, f64, (u64, u64));
    let slots: Vec<std::sync::Mutex<Option<Result<Done>>>> =
        which.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..ctx.jobs.clamp(1, which.len().max(1)) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else {
                    break;
                };
                let w = which[i].as_str();
                if failed.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                overall.set_message(w.to_string());
                let paper = ctx.for_paper();
                let t = std::time::Instant::now();
                let report = match w {
                    "committee" => super::committee::run(&paper),
                    "mhr" => super::mhr::run(&paper),
                    "online" => super::online::run(&paper),
                    "sigmoid" => super::sigmoid::run(&paper),
                    "rsvm-ir" => super::rsvm_ir::run(&paper),
                    "clicks" => super::clicks::run(&paper),
                    "clicks-trees" => super::clicks_trees::run(&paper),
                    _ => super::letor::run(&paper),
                };
                let seconds = t.elapsed().as_secs_f64();
                if let Ok(report) = &report {
                    tracing::info!("{w}: {} ({seconds:.1}s)", report.display());
                }
                overall.inc(weight(w));
                failed.fetch_or(report.is_err(), std::sync::atomic::Ordering::Relaxed);
                *slots[i].lock().expect("no paper panics holding its slot") =
                    Some(report.map(|r| (r, seconds, paper.cells.counts())));
            });
        }
    });
    let mut done: Vec<Option<Result<Done>>> = slots
        .into_iter()
        .map(|slot| slot.into_inner().expect("no paper panicked"))
        .collect();
    if let Some(k) = done.iter().position(|d| matches!(d, Some(Err(_)))) {
        if let Some(Err(e)) = done.swap_remove(k) {
            return Err(e);
        }
    }
    let mut reports = Vec::new();
    let mut summary = Vec::new();
    for (w, d) in which.iter().zip(done) {
        let (report, seconds, (computed, reused)) = d.context("a paper was not run")??;
        summary.push(format!(
            "{w:>16}: {seconds:8.1} s, {computed} cells computed, {reused} reused"
        ));
        reports.push((w.to_string(), report));
    }
    overall.finish_and_clear();
    eprintln!("{}", summary.join("\n"));
    super::write_index(&ctx, &reports, t0.elapsed().as_secs_f64())?;
    println!("{}", out.join("index.md").display());
    Ok(synthetic)
}
