//! Running an experiment: every (fold × method) cell trained through the registry, scored on the fold's test set,
//! checkpointed as it finishes; cells run in parallel.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use ltr_core::{LtrError, Progress};
use ltr_data::{NormalizeKind, PreprocessSpec};
use ltr_learn::{Grid, JobError, TrainData, TrainJob, TrainJobBuilder};
use ltr_metrics::{Convention, Metric, TestKind};
use rayon::prelude::*;

use crate::cells::{CellOrigin, Cells};
use crate::error::{ExperimentError, Result};
use crate::experiment::{CellRecord, Experiment, FixedModel, GridPoint, Outcome};
use crate::folds::{load_folds, ExperimentFold};
use crate::spec::{ExperimentSpec, MethodSpec};

fn spec_err(what: &str, e: impl std::fmt::Display) -> ExperimentError {
    ExperimentError::Spec(format!("{what}: {e}"))
}

impl Experiment {
    /// Check `spec` (algorithms, parameters, metrics, tests, baseline) and load its folds. Nothing is trained.
    pub fn prepare(spec: ExperimentSpec) -> Result<Self> {
        if spec.algorithms.is_empty() {
            return Err(ExperimentError::Spec(
                "no methods: give --algo NAME[:k=v,...] at least once".into(),
            ));
        }
        let labels = spec.labels()?;
        let metric: Metric = spec.metric.parse().map_err(|e| spec_err("metric", e))?;
        let convention: Convention = spec
            .convention
            .parse()
            .map_err(|e| spec_err("convention", e))?;
        let mut names: Vec<String> = vec![spec.metric.clone()];
        if spec.report_metrics.is_empty() {
            names.extend(["NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP"].map(String::from));
        } else {
            names.extend(spec.report_metrics.iter().cloned());
        }
        let mut report_metrics: Vec<Metric> = Vec::new();
        for n in &names {
            let m: Metric = n.parse().map_err(|e| spec_err("report metric", e))?;
            if !report_metrics.contains(&m) {
                report_metrics.push(m);
            }
        }
        let tests = spec
            .tests
            .iter()
            .map(|t| t.parse::<TestKind>().map_err(|e| spec_err("test", e)))
            .collect::<Result<Vec<_>>>()?;
        let baseline = match &spec.baseline {
            None => 0,
            Some(b) => labels
                .iter()
                .position(|l| l == b)
                .or_else(|| spec.algorithms.iter().position(|m| &m.algo == b))
                .ok_or_else(|| {
                    ExperimentError::Spec(format!(
                        "baseline `{b}` is none of the methods ({})",
                        labels.join(", ")
                    ))
                })?,
        };
        let mut grids = Vec::new();
        let mut fixed = Vec::new();
        for (m, label) in spec.algorithms.iter().zip(&labels) {
            if let Some(file) = m.model_file() {
                if !m.params.is_empty() {
                    let params = m.params.join(", ");
                    return Err(model_refusal(
                        m,
                        label,
                        format!(
                            "a model file is scored as it is and takes no parameters ({params})"
                        ),
                    ));
                }
                fixed.push(Some(load_fixed(m, file, label)?));
                grids.push(Grid::default());
                continue;
            }
            fixed.push(None);
            let algo = ltr_learn::find(&m.algo).ok_or_else(|| {
                let known: Vec<&str> = ltr_learn::ALGORITHMS.iter().map(|a| a.name).collect();
                ExperimentError::Spec(format!(
                    "unknown algorithm `{}`; known: {}",
                    m.algo,
                    known.join(", ")
                ))
            })?;
            let grid = Grid::parse(&m.params).map_err(|e| spec_err(label, e))?;
            // Every method's names are checked before the folds are read and the first cell runs.
            grid.check_names(algo).map_err(|e| spec_err(label, e))?;
            crate::click_logs::check_method(m, label, algo, spec.data.clicks.as_deref())?;
            grids.push(grid);
        }
        let preprocess = PreprocessSpec {
            features: None,
            log1p: spec
                .log1p
                .as_deref()
                .map(ltr_data::parse_feature_list)
                .transpose()
                .map_err(|e| spec_err("log1p", e))?
                .unwrap_or_default(),
            normalize: Some(
                spec.normalize
                    .parse::<NormalizeKind>()
                    .map_err(|e| spec_err("normalize", e))?,
            ),
        };
        let (folds, fingerprint) = load_folds(&spec.data, spec.seed)?;
        let click_logs = crate::click_logs::FoldClickLogs::find(&spec.data, &folds)?;
        // A setting the click join refuses (a grid over `debias` values that read different sets, …) is refused
        // now, before any cell trains: the job checks it without reading the log.
        if let (Some(c), Some(first)) = (&click_logs, folds.first()) {
            for ((m, label), grid) in spec.algorithms.iter().zip(&labels).zip(&grids) {
                let Some(source) = c
                    .source(first.number, m)
                    .filter(|_| m.model_file().is_none())
                else {
                    continue;
                };
                fold_job(&m.algo, grid, first)
                    .clicks(Some(source))
                    .build()
                    .map_err(|e| spec_err(label, e))?;
            }
        }
        for ((f, m), label) in fixed.iter().zip(&spec.algorithms).zip(&labels) {
            if let Some(f) = f {
                check_width(&f.model, &folds)
                    .map_err(|problem| model_refusal(m, label, problem))?;
            }
        }
        if folds.iter().any(|f| f.validation.is_none()) {
            if let Some((label, g)) = labels.iter().zip(&grids).find(|(_, g)| g.len() > 1) {
                return Err(ExperimentError::Spec(format!(
                    "{label} lists a grid of {} settings but a fold has no validation data; \
                     give a validation share above 0 or vali.txt files",
                    g.len()
                )));
            }
        }
        Ok(Self {
            spec,
            labels,
            grids,
            fixed,
            folds,
            metric,
            convention,
            report_metrics,
            tests,
            baseline,
            preprocess,
            fingerprint,
            click_logs,
        })
    }

    /// Read an experiment file and prepare it (`ltr experiment --config FILE`). Every refusal names the file: its
    /// syntax ([`ExperimentSpec::load`]) and what it describes (an unknown algorithm or metric, a bad grid, data that
    /// cannot be read), so a user with several experiment files knows which one to fix.
    pub fn from_file(path: &Path) -> Result<Self> {
        let spec = ExperimentSpec::load(path)?;
        Self::prepare(spec).map_err(|e| match e {
            e @ ExperimentError::SpecFile { .. } => e,
            other => ExperimentError::SpecFile {
                path: path.to_path_buf(),
                message: other.to_string(),
            },
        })
    }

    /// The description being run.
    pub fn spec(&self) -> &ExperimentSpec {
        &self.spec
    }

    /// The folds.
    pub fn folds(&self) -> &[ExperimentFold] {
        &self.folds
    }

    /// Method labels in report order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The metrics of the report, the validation metric first.
    pub fn report_metrics(&self) -> &[Metric] {
        &self.report_metrics
    }

    /// The store key of a cell: fold, label and a hash of everything its result depends on (the input files'
    /// paths, sizes and times, the split, the method and its parameters, metric, convention, preprocessing, seed,
    /// and this crate's version), so a changed setting never reuses a stale cell.
    fn cell_key(&self, fold: &ExperimentFold, m: usize) -> String {
        let method = &self.spec.algorithms[m];
        let d = &self.spec.data;
        let mut identity = serde_json::json!({
            "data": self.fingerprint,
            "folds": d.folds,
            "validation_share": d.validation_share,
            "regroup": d.regroup,
            "fold": fold.number,
            "algo": method.algo,
            "params": method.params,
            "metric": self.metric.to_string(),
            "convention": self.spec.convention,
            "normalize": self.spec.normalize,
            "log1p": self.spec.log1p,
            "seed": self.spec.seed,
            "version": env!("CARGO_PKG_VERSION"),
        });
        // Only an experiment on clicks has these, so that every other cell keeps the key it had.
        if let Some(c) = &self.click_logs {
            identity["clicks"] = c.fingerprint.clone().into();
            identity["judged"] = method.judged.into();
        }
        if let Some(f) = &self.fixed[m] {
            // The file's content, not its path, so the same model named by another path reuses its cells.
            identity["algo"] = "model".into();
            identity["model"] = f.hash.clone().into();
        }
        let hash = xxhash_rust::xxh3::xxh3_64(identity.to_string().as_bytes());
        format!("fold{}-{}-{hash:016x}", fold.number, self.labels[m])
    }

    /// Train method `m` on `fold` through the registry and score the fold's test set with the resulting model file
    /// — exactly `ltr train` then `ltr predict`.
    /// A `model:FILE` method is not trained: its model scores the test set as `ltr predict` would.
    pub fn compute_cell(&self, fold: &ExperimentFold, m: usize) -> Result<CellRecord> {
        let method = &self.spec.algorithms[m];
        let context = format!("{} on fold {}", self.labels[m], fold.number);
        if let Some(f) = &self.fixed[m] {
            return self.score_fixed(f, fold, m, context);
        }
        let failed = |source: LtrError| ExperimentError::Training {
            context: context.clone(),
            source: Box::new(source),
        };
        let t0 = Instant::now();
        let job = fold_job(&method.algo, &self.grids[m], fold)
            .metric(self.metric, self.convention)
            .seed(self.spec.seed)
            .preprocess(self.preprocess.clone())
            .clicks(
                self.click_logs
                    .as_ref()
                    .and_then(|c| c.source(fold.number, method)),
            )
            .build()
            .map_err(|e| failed(LtrError::Training(e.to_string())))?;
        let outcome = job.run().map_err(|e| match e {
            JobError::Failed { error, .. } => failed(*error),
            invalid => failed(LtrError::Training(invalid.to_string())),
        })?;
        let train_seconds = t0.elapsed().as_secs_f64();
        let mut model = outcome.model.expect("a one-process job returns its model");
        // The provenance the cell's model always had: the fold's validation source, named even without a set.
        model.training.validation_file = Some(fold.validation_source.clone());
        model.training.seconds = train_seconds;
        let params = model.params.clone();
        let grid = outcome
            .grid_scores
            .iter()
            .map(|(s, v)| GridPoint {
                setting: ltr_learn::describe(s),
                validation: v.is_finite().then_some(*v),
            })
            .collect();
        let validation = model.fit.validation.filter(|v| v.is_finite());
        let t1 = Instant::now();
        let test_scores =
            model
                .score_raw(&fold.test)
                .map_err(|source| ExperimentError::Training {
                    context,
                    source: Box::new(source),
                })?;
        Ok(CellRecord {
            fold: fold.number,
            label: self.labels[m].clone(),
            algo: method.algo.clone(),
            params,
            grid,
            validation,
            train_seconds,
            predict_seconds: t1.elapsed().as_secs_f64(),
            test_scores,
        })
    }

    /// The cell of a `model:FILE` method: the fold's test set scored by the model as it is.
    fn score_fixed(
        &self,
        f: &FixedModel,
        fold: &ExperimentFold,
        m: usize,
        context: String,
    ) -> Result<CellRecord> {
        let t0 = Instant::now();
        let mut model = f.model.clone();
        let test_scores = ltr_export::score_loaded(&mut model, &fold.test, &test_name(fold))
            .map_err(|e| ExperimentError::Training {
                context,
                source: Box::new(LtrError::Shape(e.to_string())),
            })?;
        Ok(CellRecord {
            fold: fold.number,
            label: self.labels[m].clone(),
            algo: "model".into(),
            params: [("model".to_string(), f.model.algorithm.clone())].into(),
            grid: Vec::new(),
            validation: None,
            train_seconds: 0.0,
            predict_seconds: t0.elapsed().as_secs_f64(),
            test_scores,
        })
    }

    /// Run every cell not already stored under `out/cells` (in parallel), then write the report into `out`.
    pub fn run(&self, out: &Path, progress: &dyn Progress) -> Result<Outcome> {
        std::fs::create_dir_all(out).map_err(|e| ExperimentError::io(out, e))?;
        let toml = self.spec_with_absolute_paths().to_toml()?;
        let spec_path = out.join("experiment.toml");
        ltr_data::write_atomic(&spec_path, |w| w.write_all(toml.as_bytes()))?;
        let cells = Cells::new(out.join("cells"));
        let jobs: Vec<(usize, usize)> = (0..self.folds.len())
            .flat_map(|f| (0..self.labels.len()).map(move |m| (f, m)))
            .collect();
        progress.begin("cells", Some(jobs.len() as u64));
        let finished = AtomicU64::new(0);
        let results: Vec<Result<(CellRecord, CellOrigin)>> = jobs
            .par_iter()
            .map(|&(f, m)| {
                let fold = &self.folds[f];
                let r =
                    cells.get_with_origin(&self.cell_key(fold, m), || self.compute_cell(fold, m));
                if let Ok((c, CellOrigin::Computed)) = &r {
                    tracing::info!(
                        "{} fold {}: trained in {:.2} s ({})",
                        c.label,
                        c.fold,
                        c.train_seconds,
                        ltr_learn::describe(&c.params)
                    );
                }
                let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                progress.advance(n, &format!("{} fold {}", self.labels[m], fold.number));
                r
            })
            .collect();
        progress.end();
        let mut records = Vec::with_capacity(results.len());
        let (mut computed, mut reused) = (0, 0);
        for r in results {
            let (c, origin) = r?;
            match origin {
                CellOrigin::Computed => computed += 1,
                CellOrigin::Stored => reused += 1,
            }
            records.push(c);
        }
        let report = crate::report::write_report(self, &records, out)?;
        Ok(Outcome {
            cells: records,
            computed,
            reused,
            report,
        })
    }

    /// The description with its data paths made absolute, so the written `experiment.toml` reruns from anywhere.
    fn spec_with_absolute_paths(&self) -> ExperimentSpec {
        let mut s = self.spec.clone();
        for p in [
            &mut s.data.file,
            &mut s.data.fold_dir,
            &mut s.data.propensities,
        ]
        .into_iter()
        .flatten()
        {
            if let Ok(abs) = std::fs::canonicalize(&*p) {
                *p = abs;
            }
        }
        // A path with `{fold}` names no file to canonicalise: made absolute as it is.
        if let Some(p) = &mut s.data.clicks {
            if let Ok(abs) = std::path::absolute(&*p) {
                *p = abs;
            }
        }
        for m in &mut s.algorithms {
            if let Some(abs) = m.model_file().and_then(|f| std::fs::canonicalize(f).ok()) {
                m.set_model_file(&abs);
            }
        }
        s
    }
}

/// The job of `algo` with `grid` on `fold`'s training and validation data, in memory; the caller adds the rest.
fn fold_job<'a>(algo: &str, grid: &Grid, fold: &'a ExperimentFold) -> TrainJobBuilder<'a> {
    TrainJob::builder(algo)
        .grid(grid.clone())
        .train(TrainData::Memory {
            data: &fold.train,
            name: format!("fold {} training set", fold.number),
        })
        .validation(fold.validation.as_ref().map(|v| TrainData::Memory {
            data: v,
            name: fold.validation_source.clone(),
        }))
}

/// Why the model of method `m` (labelled `label`) is refused: `model:FILE: problem`, the label first when it is
/// another name. `problem` may start with the file's name (the loaders' messages do); it is said once.
fn model_refusal(m: &MethodSpec, label: &str, problem: impl std::fmt::Display) -> ExperimentError {
    let problem = problem.to_string();
    let file = m.model_file().map(|f| format!("{}: ", f.display()));
    let problem = file
        .and_then(|f| problem.strip_prefix(&f).map(str::to_string))
        .unwrap_or(problem);
    let who = if label == m.algo {
        m.algo.clone()
    } else {
        format!("{label} ({})", m.algo)
    };
    ExperimentError::Spec(format!("{who}: {problem}"))
}

/// Load the model of a `model:FILE` method; a refusal names the method and the file.
fn load_fixed(m: &MethodSpec, file: &Path, label: &str) -> Result<FixedModel> {
    let bytes =
        std::fs::read(file).map_err(|e| model_refusal(m, label, format!("cannot read: {e}")))?;
    let model = ltr_export::load_model(file).map_err(|e| model_refusal(m, label, e))?;
    let hash = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes));
    Ok(FixedModel { model, hash })
}

/// How a fold's test set is named in messages: its file, or its place in the split.
fn test_name(fold: &ExperimentFold) -> String {
    match &fold.test_file {
        Some(p) => p.display().to_string(),
        None => format!("the test set of fold {}", fold.number),
    }
}

/// A model file must read no feature beyond the data (scoring it would see zeros there: the wrong model, silently)
/// and the data no feature beyond the model (what `ltr predict` refuses). The problem, if any.
fn check_width(
    model: &ltr_core::ModelFile,
    folds: &[ExperimentFold],
) -> std::result::Result<(), String> {
    for fold in folds {
        let (width, data) = (ltr_export::model_width(model), fold.test.n_features());
        if width > data {
            return Err(format!(
                "the model reads {width} features but {} has {data}; use a model trained on data of this width",
                test_name(fold)
            ));
        }
        let mut widened = model.clone();
        ltr_export::widen_to(&mut widened, data);
        widened
            .check_data(&fold.test, &test_name(fold))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}
