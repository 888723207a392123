//! The slice: every experiment on fold 1 with the cheapest setting of each of its rows, every method row included
//! (`ctx.slice` tells an experiment to shrink its costly dimension: a one-value C grid, the smallest click budget,
//! ...), run through the same code as the full protocol. A full `cargo xtask reproduce X` writes X's slice to
//! `OUT/slice/X.csv` beside `OUT/X/`, so that both come from one command; `xtask-lab check-results` (run by the
//! test `results_slice` in `cargo xtask test`) computes the slice afresh and compares it with the committed
//! `results/slice/*.csv`, exactly, timing columns aside. A change that moves a model moves its slice row and fails
//! the check until `results/` is regenerated (`rm -rf results/cells && cargo xtask reproduce all`).

use std::path::Path;

use anyhow::{bail, Context, Result};

use super::run::{reproduce, Options};

/// The one fold the slice runs.
pub const FOLD: usize = 1;

/// Columns holding times (or rates of them), which no check compares.
const TIMING: &[&str] = &["seconds", "train_s", "rounds_per_second"];

/// Run the slice of `which` into the folder `scratch` (emptied first): `scratch/X/cells.csv` per experiment. Its
/// cells are stored in `cells` when given (a full run's store, whose shared cells it reuses), else in
/// `scratch/cells`.
fn run_into(
    data: Option<&Path>,
    which: &[String],
    jobs: Option<usize>,
    scratch: &Path,
    cells: Option<&Path>,
) -> Result<()> {
    if scratch.exists() {
        std::fs::remove_dir_all(scratch).with_context(|| scratch.display().to_string())?;
    }
    reproduce(&Options {
        which: which.to_vec(),
        data: data.map(Path::to_path_buf),
        folds: vec![FOLD],
        out: scratch.to_path_buf(),
        jobs,
        slice: true,
        cells: cells.map(Path::to_path_buf),
    })
    .map(|_| ())
}

/// After a full run: the slice of the same experiments, into `OUT/slice/X.csv` (nothing from generated data), so
/// that `results/` and the slice `cargo xtask test` compares with it always come from one command.
pub fn write(o: &Options, synthetic: bool) -> Result<()> {
    if synthetic {
        eprintln!("slice: not written (synthetic data)");
        return Ok(());
    }
    // The full run's store: the slice's own cells are keyed apart, and the cells both protocols compute alike
    // (fold 1 of the LETOR methods, MHR, the smallest click budget) are read back instead of trained again.
    let cells = o.cells.clone().unwrap_or_else(|| o.out.join("cells"));
    let scratch = cells.join("slice-run");
    run_into(o.data.as_deref(), &o.which, o.jobs, &scratch, Some(&cells))?;
    let dest = o.out.join("slice");
    std::fs::create_dir_all(&dest).with_context(|| dest.display().to_string())?;
    for w in &o.which {
        let from = scratch.join(w).join("cells.csv");
        let text = std::fs::read(&from).with_context(|| from.display().to_string())?;
        ltr_data::write_atomic(&dest.join(format!("{w}.csv")), |f| f.write_all(&text))?;
    }
    std::fs::remove_dir_all(&scratch).with_context(|| scratch.display().to_string())?;
    eprintln!("slice: {}", dest.display());
    Ok(())
}

/// Compute every experiment's slice in `scratch` and compare it with `results/slice/X.csv`: an error listing every
/// difference (or a missing file) when any.
pub fn check(
    data: Option<&Path>,
    results: &Path,
    scratch: &Path,
    jobs: Option<usize>,
) -> Result<()> {
    let which: Vec<String> = super::EXPERIMENTS.iter().map(|s| s.to_string()).collect();
    let (_, synthetic) = super::load(data, &[FOLD], None)?;
    if synthetic {
        bail!("check-results needs the LETOR folds (MQ2008, OHSUMED): none found");
    }
    // A fresh store: the check computes every cell afresh.
    run_into(data, &which, jobs, scratch, None)?;
    let mut differences = Vec::new();
    for w in &which {
        let committed_path = results.join("slice").join(format!("{w}.csv"));
        let Ok(committed) = std::fs::read_to_string(&committed_path) else {
            differences.push(format!("{}: missing", committed_path.display()));
            continue;
        };
        let fresh_path = scratch.join(w).join("cells.csv");
        let fresh = std::fs::read_to_string(&fresh_path)
            .with_context(|| fresh_path.display().to_string())?;
        differences.extend(
            compare(&committed, &fresh)
                .into_iter()
                .map(|d| format!("{}: {d}", committed_path.display())),
        );
    }
    if !differences.is_empty() {
        bail!(
            "results/ is stale: the slice reproduced now differs from the committed one in {} place(s):\n{}\n\
             A change moved these models. If it was meant to, regenerate every table and its slice with\n  \
             rm -rf results/cells && cargo xtask reproduce all\nand commit results/.",
            differences.len(),
            differences.join("\n")
        );
    }
    Ok(())
}

/// The fields of one line of a `cells.csv` (strings are quoted and hold no quote).
pub fn fields(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                out.push(&line[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&line[start..]);
    out
}

/// Every difference between two `cells.csv` texts, line by line and column by column, as text: exact equality of
/// each value, `TIMING` columns aside.
pub fn compare(committed: &str, fresh: &str) -> Vec<String> {
    let (a, b): (Vec<&str>, Vec<&str>) = (committed.lines().collect(), fresh.lines().collect());
    let (Some(ha), Some(hb)) = (a.first(), b.first()) else {
        return vec!["empty file".into()];
    };
    if ha != hb {
        return vec![format!(
            "columns differ: committed `{ha}`, reproduced `{hb}`"
        )];
    }
    let cols = fields(ha);
    let mut out = Vec::new();
    if a.len() != b.len() {
        out.push(format!(
            "{} rows committed, {} reproduced",
            a.len() - 1,
            b.len() - 1
        ));
    }
    for (n, (la, lb)) in a.iter().zip(&b).enumerate().skip(1) {
        let (fa, fb) = (fields(la), fields(lb));
        for (k, col) in cols.iter().enumerate() {
            if TIMING.contains(col) {
                continue;
            }
            let (va, vb) = (fa.get(k), fb.get(k));
            if va != vb {
                out.push(format!(
                    "line {}, column {col}: committed {}, reproduced {} (row {la})",
                    n + 1,
                    va.unwrap_or(&"nothing"),
                    vb.unwrap_or(&"nothing"),
                ));
            }
        }
    }
    out
}
