//! `cargo xtask reproduce`: each paper's protocol on the benchmarks we have, with checkpointed cells, Markdown /
//! CSV / JSON reports and SVG figures.

pub mod clicks;
pub mod clicks_trees;
pub mod committed;
pub mod committee;
pub mod letor;
pub mod mhr;
pub mod online;
pub mod rsvm_ir;
pub mod run;
pub mod sigmoid;
pub mod slice;

use ltr_testdata::shared_datasets_dir;

pub use ltr_experiment::{md_table, mean};

/// The experiment engine's checkpointed cell store, with anyhow errors for the reproduction code.
///
/// The slice ([`slice`](mod@slice)) computes most cells differently from the full protocol under the same key (a one-value C
/// grid, a fixed λ, fold 1 alone in a cell over every fold), so a slice's store keys its cells apart
/// (`slice-KEY`) and the slice `reproduce` writes after a full run shares the full run's store safely. Only
/// [`Cells::get_shared`] cells, whose key names everything they depend on, are common to both: the slice reuses
/// them instead of training the same model again.
pub struct Cells {
    /// The store and its key locks, shared by every paper of a run (papers run at once: see [`run::reproduce`]).
    shared: std::sync::Arc<SharedCells>,
    /// This paper's counts (each paper has its own [`Ctx`], [`Ctx::for_paper`]), for the run's summary.
    computed: std::sync::atomic::AtomicU64,
    reused: std::sync::atomic::AtomicU64,
}

/// What the papers of one run share of the cell store.
struct SharedCells {
    store: ltr_experiment::Cells,
    /// The run's places: a cell takes one while it is looked up and computed.
    places: Places,
    /// The slice's store: [`Cells::get`] keys are prefixed with `slice-`.
    slice: bool,
    /// One lock per key being computed: a cell two workers ask for at once (a RankSVM model several cells start
    /// from, in one paper or in two running at once) is computed by the first while the second waits and reads it
    /// back.
    busy: std::sync::Mutex<BTreeMap<String, std::sync::Arc<std::sync::Mutex<()>>>>,
}

impl Cells {
    /// A cell store in `dir` for the full protocol, or for the slice's when `slice`, with `jobs` places
    /// ([`Cells::places`]) for its cells.
    pub fn with_protocol(dir: PathBuf, slice: bool, jobs: usize) -> Self {
        Self {
            shared: std::sync::Arc::new(SharedCells {
                store: ltr_experiment::Cells::new(dir),
                places: Places::new(jobs),
                slice,
                busy: Default::default(),
            }),
            computed: Default::default(),
            reused: Default::default(),
        }
    }

    /// The same store with counts of its own (a paper's).
    fn fresh_counts(&self) -> Self {
        Self {
            shared: self.shared.clone(),
            computed: Default::default(),
            reused: Default::default(),
        }
    }

    /// The key a cell of this protocol is stored under.
    fn own(&self, key: &str) -> String {
        if self.shared.slice {
            format!("slice-{key}")
        } else {
            key.to_string()
        }
    }

    /// The value of `key` under this store's protocol (the full one or the slice's), computed by `f` only when not
    /// already stored.
    pub fn get<T: Serialize + serde::de::DeserializeOwned>(
        &self,
        key: &str,
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        self.get_shared(&self.own(key), f)
    }

    /// The value of `key`, the same under the full protocol and the slice's: only for a cell whose key names
    /// everything it depends on (benchmark, fold, every setting), and that never reads `ctx.slice`.
    pub fn get_shared<T: Serialize + serde::de::DeserializeOwned>(
        &self,
        key: &str,
        f: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        use std::sync::atomic::Ordering::Relaxed;
        // The place first, then the key: a thread waiting for a key's lock always holds a place, and the one
        // holding that lock holds one too and is computing, so the wait ends.
        let _place = self.shared.places.take();
        let lock = self
            .shared
            .busy
            .lock()
            .expect("no worker panics while holding the key table")
            .entry(key.to_string())
            .or_default()
            .clone();
        // A poisoned key lock only means another worker failed on this key: compute it again here.
        let _held = lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (v, origin) = self.shared.store.get_with_origin(key, f)?;
        match origin {
            ltr_experiment::CellOrigin::Computed => self.computed.fetch_add(1, Relaxed),
            ltr_experiment::CellOrigin::Stored => self.reused.fetch_add(1, Relaxed),
        };
        Ok(v)
    }

    /// The run's places, which every cell of this store takes while it computes.
    pub fn places(&self) -> &Places {
        &self.shared.places
    }

    /// Whether the [`Cells::get_shared`] cell `key` is stored.
    pub fn contains_shared(&self, key: &str) -> bool {
        self.shared.store.path(key).is_file()
    }

    /// Cells computed and cells read back so far by this paper (for the summary of `reproduce`).
    pub fn counts(&self) -> (u64, u64) {
        use std::sync::atomic::Ordering::Relaxed;
        (self.computed.load(Relaxed), self.reused.load(Relaxed))
    }
}

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use ltr_core::{LinearModel, ModelFile, Scorer};
use ltr_data::{generate_letor_like, kfold_queries, letor_folds, Dataset, SyntheticConfig};
use ltr_metrics::{evaluate, Convention, Metric};
use serde::{Deserialize, Serialize};

/// One fold: train, validation, test.
pub type Fold = ltr_data::LoadedFold;

/// A benchmark with its evaluation convention.
pub struct Bench {
    /// Name (OHSUMED, MQ2008, SYNTHETIC).
    pub name: String,
    /// The LETOR script convention of this benchmark.
    pub convention: Convention,
    /// Folds.
    pub folds: Vec<Fold>,
}

/// Shared state of a reproduction run.
pub struct Ctx {
    /// Benchmarks (loaded once, shared by the papers of a run).
    pub benches: std::sync::Arc<Vec<Bench>>,
    /// True when running on generated data.
    pub synthetic: bool,
    /// Output folder.
    pub out: PathBuf,
    /// Cell cache.
    pub cells: Cells,
    /// The slice's protocol ([`slice`](mod@slice)): fold 1 and the cheapest setting of each row (a one-value grid, the
    /// smallest budget), every row kept.
    pub slice: bool,
    /// Progress display.
    pub progress: indicatif::MultiProgress,
    /// Independent cells computed at once ([`in_parallel`]): `--jobs`, by default the cores this process may use.
    pub jobs: usize,
    /// Folders searched for the larger benchmarks some papers used (MSLR-WEB10K, Yahoo set 1), as installed by
    /// `cargo xtask download`: `NAME/...` under any of them.
    pub data_roots: Vec<PathBuf>,
}

impl Ctx {
    /// The context one paper runs in: this run's data, store, places and bars, with cell counts of its own.
    pub fn for_paper(&self) -> Ctx {
        Ctx {
            benches: self.benches.clone(),
            synthetic: self.synthetic,
            out: self.out.clone(),
            cells: self.cells.fresh_counts(),
            slice: self.slice,
            progress: self.progress.clone(),
            jobs: self.jobs,
            data_roots: self.data_roots.clone(),
        }
    }
}

/// The places of a run: a counting semaphore of `jobs`. Every cell takes one while it is looked up and computed
/// ([`Cells::get_shared`]), whichever paper or worker asks (a cell inside a cell uses its caller's), so that no more
/// than `jobs` cells compute at once however many papers run; [`Places::alone`] takes them all, for a measurement
/// of time.
#[derive(Debug)]
pub struct Places {
    total: usize,
    free: std::sync::Mutex<usize>,
    freed: std::sync::Condvar,
}

std::thread_local! {
    /// How many places this thread's guards are nested in (0: it holds none).
    static DEPTH: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Places {
    /// `n` places (at least one).
    pub fn new(n: usize) -> Self {
        let total = n.max(1);
        Self {
            total,
            free: std::sync::Mutex::new(total),
            freed: std::sync::Condvar::new(),
        }
    }

    /// Wait until `n` places are free and take them.
    fn wait_for(&self, n: usize) {
        let mut free = self
            .free
            .lock()
            .expect("no thread panics holding the count");
        while *free < n {
            free = self
                .freed
                .wait(free)
                .expect("no thread panics holding the count");
        }
        *free -= n;
    }

    /// A place for this thread (none more when it holds one already); given back when the guard drops.
    pub fn take(&self) -> Place<'_> {
        let held = DEPTH.get();
        let n = usize::from(held == 0);
        self.wait_for(n);
        DEPTH.set(held + 1);
        Place { places: self, n }
    }

    /// Every place (the one this thread holds included): nothing else computes until the guard drops. For a
    /// cell that measures time.
    pub fn alone(&self) -> Place<'_> {
        let held = DEPTH.get();
        let n = self.total - usize::from(held > 0);
        self.wait_for(n);
        DEPTH.set(held + 1);
        Place { places: self, n }
    }
}

/// Places taken from [`Places`], given back on drop.
#[derive(Debug)]
pub struct Place<'a> {
    places: &'a Places,
    n: usize,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        DEPTH.set(DEPTH.get().saturating_sub(1));
        if self.n > 0 {
            *self
                .places
                .free
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) += self.n;
            self.places.freed.notify_all();
        }
    }
}

/// `f` on every item, at most `jobs` at a time (a place of [`Cells::places`] each, shared with the papers running beside), the costliest first (longest-processing-time order keeps every
/// core busy to the end), with the results in the items' order: a report never depends on the schedule, and each
/// cell is computed exactly as it would be alone. The first error (in item order) is returned; items not yet
/// started are skipped once one fails. A bar under the overall one counts the cells of `what` as they finish.
pub fn in_parallel<I: Sync, T: Send>(
    ctx: &Ctx,
    what: &str,
    items: &[I],
    cost: impl Fn(&I) -> f64,
    f: impl Fn(&I) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    assert!(
        DEPTH.get() == 0,
        "in_parallel inside a cell: its workers would wait for the place their caller holds"
    );
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| cost(&items[b]).total_cmp(&cost(&items[a])).then(a.cmp(&b)));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<std::sync::Mutex<Option<Result<T>>>> =
        items.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let bar = ctx
        .progress
        .add(indicatif::ProgressBar::new(items.len() as u64));
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "  {what} {{bar:30}} {{pos}}/{{len}} cells, {} at once {{elapsed_precise}}",
            ctx.jobs
        ))
        .expect("template"),
    );
    std::thread::scope(|scope| {
        for _ in 0..ctx.jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= order.len() || failed.load(Ordering::Relaxed) {
                    break;
                }
                let i = order[k];
                let place = ctx.cells.places().take();
                let r = f(&items[i]);
                drop(place);
                failed.fetch_or(r.is_err(), Ordering::Relaxed);
                *slots[i]
                    .lock()
                    .expect("no worker panics while holding a slot") = Some(r);
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    let mut out = Vec::with_capacity(items.len());
    let mut first_error = None;
    for slot in slots {
        match slot.into_inner().expect("no worker panicked") {
            Some(Ok(v)) => out.push(v),
            Some(Err(e)) => {
                first_error.get_or_insert(e);
            }
            None => {}
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    anyhow::ensure!(
        out.len() == items.len(),
        "a cell was skipped without an error"
    );
    Ok(out)
}

/// Test-set results of one method on one fold.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FoldResult {
    /// Metric name → per-query values on the test set.
    pub per_query: BTreeMap<String, Vec<f64>>,
    /// Training seconds.
    pub seconds: f64,
    /// Method-specific notes (chosen C, epochs …).
    pub notes: BTreeMap<String, String>,
}

/// The metrics every table reports.
pub fn report_metrics() -> Vec<Metric> {
    ["MAP", "NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10"]
        .iter()
        .map(|m| m.parse().expect("valid"))
        .collect()
}

/// Evaluate a scorer on the test set of a fold.
pub fn test_result(
    model: &dyn Scorer,
    test: &Dataset,
    conv: &Convention,
    seconds: f64,
    notes: BTreeMap<String, String>,
) -> Result<FoldResult> {
    test_result_of_scores(test, &model.score_dataset(test), conv, seconds, notes)
}

/// [`test_result`] of scores already computed (one per test document, in file order).
pub fn test_result_of_scores(
    test: &Dataset,
    s: &[f64],
    conv: &Convention,
    seconds: f64,
    notes: BTreeMap<String, String>,
) -> Result<FoldResult> {
    let ev = evaluate(test, s, &report_metrics(), conv)?;
    let per_query = ev
        .results
        .into_iter()
        .map(|r| (r.metric.to_string(), r.per_query))
        .collect();
    Ok(FoldResult {
        per_query,
        seconds,
        notes,
    })
}

/// Mean of a metric over all test queries of all folds (= the fold mean weighted by queries) and the pooled
/// per-query values (for significance tests).
pub fn pooled(results: &[FoldResult], metric: &str) -> (f64, Vec<f64>) {
    let v: Vec<f64> = results
        .iter()
        .flat_map(|r| r.per_query.get(metric).cloned().unwrap_or_default())
        .collect();
    let fold_mean = results
        .iter()
        .map(|r| mean(r.per_query.get(metric).map_or(&[][..], |x| x)))
        .sum::<f64>()
        / results.len().max(1) as f64;
    (fold_mean, v)
}

/// Train `algo` by name through the registry on a fold (a [`ltr_learn::TrainJob`]): `params` may hold comma
/// grids, chosen on the fold's validation set by `metric` under `conv` (the registry's one model-selection loop).
pub fn train_by_name(
    algo: &str,
    params: &[&str],
    fold: &Fold,
    metric: Metric,
    conv: &Convention,
) -> Result<ModelFile> {
    train_fold(algo, params, &fold.train, Some(&fold.vali), metric, conv)
}

/// [`train_by_name`] on any training set, with or without validation data: the model file `ltr train` writes.
pub fn train_fold(
    algo: &str,
    params: &[&str],
    train: &Dataset,
    validation: Option<&Dataset>,
    metric: Metric,
    conv: &Convention,
) -> Result<ModelFile> {
    let in_memory = |data| ltr_learn::TrainData::Memory {
        data,
        name: "reproduction fold".into(),
    };
    let outcome = ltr_learn::TrainJob::builder(algo)
        .params(params)
        .metric(metric, *conv)
        .train(in_memory(train))
        .validation(validation.map(in_memory))
        .build()?
        .run()?;
    Ok(outcome.model.expect("a one-process job returns its model"))
}

/// The weights of a linear model trained by name.
pub fn linear(t: &ModelFile) -> Result<LinearModel> {
    match &t.model {
        ltr_core::Model::Linear(l) => Ok(l.clone()),
        _ => bail!("{} did not produce a linear model", t.algorithm),
    }
}

/// RankSVM's C grid under the LETOR protocol; the slice's one value (`ctx.slice`).
pub fn ranksvm_c_grid(ctx: &Ctx) -> &'static str {
    if ctx.slice {
        "c=0.01"
    } else {
        "c=0.001,0.01,0.1,1,10,100"
    }
}

/// RankSVM with C chosen from {1e-3 … 100} on validation MAP (the LETOR protocol; one C in the slice).
pub fn ranksvm_selected(
    ctx: &Ctx,
    fold: &Fold,
    conv: &Convention,
) -> Result<(LinearModel, f64, f64)> {
    let t0 = std::time::Instant::now();
    let t = train_by_name(
        "ranksvm",
        &[ranksvm_c_grid(ctx)],
        fold,
        Metric::Ap(None),
        conv,
    )?;
    let c = t.params["c"].parse()?;
    Ok((linear(&t)?, c, t0.elapsed().as_secs_f64()))
}

/// A RankSVM as [`ranksvm_stored`] keeps it in the cell store.
#[derive(Serialize, Deserialize)]
struct StoredRankSvm {
    weights: Vec<f64>,
    /// The C chosen on validation, as the registry wrote it.
    c: String,
    /// Training seconds (the whole grid).
    seconds: f64,
}

/// RankSVM on a fold with C chosen from `grid` (`c=...`) on validation MAP, trained once for every experiment that
/// starts from it and kept in the cell store (`BENCH-fN-ranksvm-GRID`): the LETOR baselines and Table 4 (a method),
/// the sigmoid meta-ranker (a seed) and the click experiment (the full-information skyline) use the same model of a
/// fold. The weights come back bit for bit (JSON with round-trip floats). Returns the model, C as the registry wrote
/// it, and the seconds its training took when it was computed.
pub fn ranksvm_stored(
    ctx: &Ctx,
    bench: &str,
    fold: &Fold,
    conv: &Convention,
    grid: &str,
) -> Result<(LinearModel, String, f64)> {
    let key = format!("{bench}-f{}-ranksvm-{grid}", fold.number);
    let m: StoredRankSvm = ctx.cells.get_shared(&key, || {
        let t0 = std::time::Instant::now();
        let t = train_by_name("ranksvm", &[grid], fold, Metric::Ap(None), conv)?;
        Ok(StoredRankSvm {
            weights: linear(&t)?.weights,
            c: t.params["c"].clone(),
            seconds: t0.elapsed().as_secs_f64(),
        })
    })?;
    Ok((LinearModel::new(m.weights), m.c, m.seconds))
}

fn find_bench(root: &Path, name: &str) -> Option<PathBuf> {
    let cands: &[&str] = match name {
        "OHSUMED" => &["OHSUMED/QueryLevelNorm", "OHSUMED"],
        _ => &["MQ2008"],
    };
    cands
        .iter()
        .map(|c| root.join(c))
        .find(|p| p.join("Fold1").is_dir())
}

/// Where the benchmarks are: `--data`, else ../shared/datasets, else datasets/data (what `xtask download` fills).
pub fn resolve_data(data: Option<&Path>) -> Option<PathBuf> {
    if let Some(d) = data {
        return Some(d.to_path_buf());
    }
    if let Some(d) = shared_datasets_dir() {
        return Some(d);
    }
    let local = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/data");
    local.is_dir().then_some(local)
}

/// Folder names MSLR-WEB10K is installed under (`cargo xtask download` uses the first).
pub const MSLR_NAMES: &[&str] = &["mslr-web10k", "MSLR-WEB10K"];
/// Folder names the Yahoo! LTR Challenge data is found under.
pub const YAHOO_NAMES: &[&str] = &["yahoo", "Yahoo", "ltrc_yahoo"];

/// Where installed benchmarks may be: `--data` alone when given, else ../shared/datasets and datasets/data.
pub fn data_roots(data: Option<&Path>) -> Vec<PathBuf> {
    if let Some(d) = data {
        return vec![d.to_path_buf()];
    }
    shared_datasets_dir()
        .into_iter()
        .chain(Some(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/data"),
        ))
        .filter(|p| p.is_dir())
        .collect()
}

/// The first `root/NAME/rel` (NAME in any of the given spellings) that is a file.
pub fn find_installed(roots: &[PathBuf], names: &[&str], rel: &str) -> Option<PathBuf> {
    roots
        .iter()
        .flat_map(|r| names.iter().map(move |n| r.join(n)))
        .find(|d| d.join(rel).is_file())
}

/// Load the benchmarks (or generate a synthetic 5-fold benchmark when none is available).
pub fn load(
    data: Option<&Path>,
    folds: &[usize],
    only: Option<&[&str]>,
) -> Result<(Vec<Bench>, bool)> {
    let mut benches = Vec::new();
    if let Some(root) = resolve_data(data) {
        for (name, conv) in [
            ("OHSUMED", Convention::LETOR3),
            ("MQ2008", Convention::LETOR4),
        ] {
            if only.is_some_and(|o| !o.contains(&name)) {
                continue;
            }
            let Some(dir) = find_bench(&root, name) else {
                continue;
            };
            let mut fs = Vec::new();
            for f in letor_folds(&dir)? {
                if !folds.contains(&f.number) {
                    continue;
                }
                fs.push(f.load()?);
            }
            if !fs.is_empty() {
                benches.push(Bench {
                    name: name.to_string(),
                    convention: conv,
                    folds: fs,
                });
            }
        }
        let roots = [root.clone()];
        let has_other = MSLR_NAMES
            .iter()
            .chain(YAHOO_NAMES)
            .any(|n| roots[0].join(n).is_dir());
        if data.is_some() && benches.is_empty() && !has_other {
            bail!(
                "no OHSUMED, MQ2008, MSLR-WEB10K or Yahoo data under {}",
                root.display()
            );
        }
    }
    if !benches.is_empty() {
        return Ok((benches, false));
    }
    // Synthetic stand-in with the LETOR fold rotation: test = part k, validation = part k+1, train = the rest.
    let ds = generate_letor_like(&SyntheticConfig {
        queries: 150,
        min_docs: 20,
        max_docs: 150,
        features: 40,
        grades: 3,
        noise: 0.8,
        outlier_fraction: 0.03,
        query_level_norm: true,
        seed: 2008,
    })?;
    let parts = kfold_queries(ds.n_queries(), 5, 7)?;
    let mut fs = Vec::new();
    for k in 0..5 {
        if !folds.contains(&(k + 1)) {
            continue;
        }
        let test = &parts[k].test;
        let vali = &parts[(k + 1) % 5].test;
        let train: Vec<usize> = (0..ds.n_queries())
            .filter(|q| !test.contains(q) && !vali.contains(q))
            .collect();
        fs.push(Fold {
            number: k + 1,
            train: ds.select_queries(&train),
            vali: ds.select_queries(vali),
            test: ds.select_queries(test),
        });
    }
    Ok((
        vec![Bench {
            name: "SYNTHETIC".into(),
            convention: Convention::LETOR4,
            folds: fs,
        }],
        true,
    ))
}

/// Write the report files of one experiment: `report.md`, `cells.csv`, `cells.json`.
pub fn write_report(
    ctx: &Ctx,
    exp: &str,
    markdown: &str,
    rows: &[BTreeMap<String, serde_json::Value>],
) -> Result<PathBuf> {
    let dir = ctx.out.join(exp);
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    let mut md = String::new();
    if ctx.synthetic {
        md.push_str(SYNTHETIC_BANNER);
    }
    md.push_str(markdown);
    ltr_data::write_atomic(&dir.join("report.md"), |w| w.write_all(md.as_bytes()))?;
    let json = serde_json::to_string_pretty(rows)?;
    ltr_data::write_atomic(&dir.join("cells.json"), |w| w.write_all(json.as_bytes()))?;
    let mut cols: Vec<String> = rows.iter().flat_map(|r| r.keys().cloned()).collect();
    cols.sort();
    cols.dedup();
    let mut csv = cols.join(",") + "\n";
    for r in rows {
        let line: Vec<String> = cols
            .iter()
            .map(|c| match r.get(c) {
                Some(serde_json::Value::String(s)) => format!("\"{}\"", s.replace('"', "'")),
                Some(v) => v.to_string(),
                None => String::new(),
            })
            .collect();
        csv.push_str(&(line.join(",") + "\n"));
    }
    ltr_data::write_atomic(&dir.join("cells.csv"), |w| w.write_all(csv.as_bytes()))?;
    Ok(dir.join("report.md"))
}

/// The warning at the top of every report made from generated data.
pub const SYNTHETIC_BANNER: &str = "> **SYNTHETIC DATA — NOT THE PAPERS' BENCHMARKS.** No LETOR folders were found (looked at `--data`, \
`../shared/datasets`, `datasets/data`), so every number below comes from the seeded synthetic LETOR-like generator. \
Run `cargo xtask download mq2008` / `ohsumed` (or pass `--data DIR`) to reproduce the real tables.\n\n";

/// Format a float for tables.
pub fn f4(x: f64) -> String {
    format!("{x:.4}")
}

/// The experiments of `cargo xtask reproduce`, in report order; each writes `NAME/report.md`.
pub const EXPERIMENTS: [&str; 8] = [
    "letor-baselines",
    "committee",
    "mhr",
    "rsvm-ir",
    "sigmoid",
    "online",
    "clicks",
    "clicks-trees",
];

/// What `cargo xtask reproduce NAME` runs: `clicks` is both click experiments (Joachims et al.'s linear
/// protocol and the debiased trees); any other name is itself, `all` every experiment.
pub fn experiments_named(name: &str) -> Option<Vec<&'static str>> {
    match name {
        "all" => Some(EXPERIMENTS.to_vec()),
        "clicks" => Some(vec!["clicks", "clicks-trees"]),
        other => EXPERIMENTS.iter().find(|e| **e == other).map(|e| vec![*e]),
    }
}

/// CPU seconds each experiment took in a fresh run on the developers' 2-core machine (weights of the overall
/// progress bar; the order of [`EXPERIMENTS`]).
pub const EXPERIMENT_CPU_SECONDS: [(&str, u64); 8] = [
    ("letor-baselines", 40),
    ("committee", 50),
    ("mhr", 25),
    ("rsvm-ir", 450),
    ("sigmoid", 300),
    ("online", 1),
    ("clicks", 900),
    ("clicks-trees", 3000),
];

/// Write `index.md` linking every report.
pub fn write_index(ctx: &Ctx, reports: &[(String, PathBuf)], seconds: f64) -> Result<()> {
    let mut md = String::from("# ltr — reproduction of the seed papers\n\n");
    if ctx.synthetic {
        md.push_str(SYNTHETIC_BANNER);
    }
    md.push_str(&format!(
        "Data: {}. Wall time of this run: {seconds:.1} s, up to {} cells at once (cells already computed in an earlier run are reused from `cells/`; the tables' training times are per cell, measured while other cells ran beside it).\n\n",
        ctx.benches.iter().map(|b| format!("{} ({} folds, {} convention)", b.name, b.folds.len(), b.convention.name)).collect::<Vec<_>>().join(", "),
        ctx.jobs
    ));
    // Every report present under the output folder, not only this run's, so that reproducing one experiment
    // never hides the others.
    for name in EXPERIMENTS {
        let path = ctx.out.join(name).join("report.md");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let title = text
            .lines()
            .find_map(|l| l.strip_prefix("# "))
            .unwrap_or(name);
        let fresh = if reports.iter().any(|(n, _)| n == name) {
            "this run"
        } else {
            "an earlier run"
        };
        md.push_str(&format!(
            "- [{title}]({name}/report.md) — written by {fresh}\n"
        ));
    }
    ltr_data::write_atomic(&ctx.out.join("index.md"), |w| w.write_all(md.as_bytes()))?;
    Ok(())
}
