//! `ltrkit._native`: the Rust side of the Python package. It only converts between numpy and the library's types
//! and calls the registry (`ltr::learn::train`), the model file and the metrics — no algorithm lives here. The GIL
//! is released while data is parsed, models are trained and scored, and metrics are computed.
// Unit tests live in tests/: `cargo test --all-targets` (CI's one build) compiles a unit-test harness of every
// library and binary even when it has no tests, so under `cfg(test)` this crate is empty and that harness is free.
#![cfg(not(test))]

use std::path::PathBuf;

use ltr::core::{LtrError, ModelFile, Precision, Scorer};
use ltr::data::{
    read_letor_with, DataError, Dataset, FeatureMatrix, ParseOptions, QueryFile, RepeatedQid,
    SparseMatrix, TextColumn,
};
use ltr::learn::{JobError, TrainData, TrainJob};
use ltr::metrics::{Alternative, Convention, Metric, Qrels, RunQuery, TestKind};
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// The message of an error with its causes, as the CLI prints it.
fn message(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// Bad input is a ValueError, a file that cannot be read an OSError, a failed training a RuntimeError.
fn py_err(e: LtrError) -> PyErr {
    let text = message(&e);
    match e {
        LtrError::Data(DataError::Io { .. }) => PyOSError::new_err(text),
        LtrError::Training(_) => PyRuntimeError::new_err(text),
        _ => PyValueError::new_err(text),
    }
}

/// A job's error: a refused input is a `ValueError` naming the argument; a failure maps as its cause does.
fn job_err(e: JobError) -> PyErr {
    match &e {
        JobError::Invalid { .. } => {
            PyValueError::new_err(e.message_with(|input| input.name().replace('-', "_")))
        }
        JobError::Failed { error, .. } => {
            let text = e.to_string();
            match error.as_ref() {
                LtrError::Data(DataError::Io { .. }) => PyOSError::new_err(text),
                LtrError::Training(_) => PyRuntimeError::new_err(text),
                _ => PyValueError::new_err(text),
            }
        }
    }
}

fn data_err(e: DataError) -> PyErr {
    py_err(LtrError::Data(e))
}

fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Query offsets from group sizes, refusing empty groups and sizes that do not add up to the rows.
fn offsets(group: &[usize], n_rows: usize) -> PyResult<Vec<usize>> {
    let mut out = Vec::with_capacity(group.len() + 1);
    out.push(0);
    for (i, &g) in group.iter().enumerate() {
        if g == 0 {
            return Err(PyValueError::new_err(format!("group {i} is empty")));
        }
        out.push(out[i] + g);
    }
    if out[group.len()] != n_rows {
        return Err(PyValueError::new_err(format!(
            "the group sizes add up to {} rows but X has {n_rows}",
            out[group.len()]
        )));
    }
    Ok(out)
}

/// A dataset built from numpy arrays: features, labels and the query structure (group sizes and one id per group).
/// Its features may hold NaN (a missing value to the tree learners; `train` and `predict` refuse it for the others)
/// but no infinity.
#[pyclass(frozen, name = "Data", module = "ltrkit._native")]
struct NativeData {
    ds: Dataset,
}

impl NativeData {
    /// Refuse a NaN in these features (`what`: `X`, `eval_set X`), naming where it is, unless `takes_missing`
    /// (the learner or model `refuser` takes missing values).
    fn refuse_nan(&self, what: &str, takes_missing: bool, refuser: &str) -> PyResult<()> {
        if takes_missing {
            return Ok(());
        }
        match self.ds.first_nan() {
            Some((row, column)) => Err(PyValueError::new_err(format!(
                "{what}[{row}, {column}] is NaN: {refuser} takes no missing values (NaN is a missing value to {} \
                 only)",
                ltr::learn::missing_value_names().join(", ")
            ))),
            None => Ok(()),
        }
    }

    fn assemble(
        features: FeatureMatrix,
        y: Option<PyReadonlyArray1<'_, f32>>,
        group: Vec<usize>,
        qids: Vec<String>,
        docids: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let n = match &features {
            FeatureMatrix::Dense(a) => a.nrows(),
            FeatureMatrix::Sparse(m) => m.rows(),
        };
        let labels = match y {
            Some(y) => {
                let y = y.as_array();
                if y.len() != n {
                    return Err(PyValueError::new_err(format!(
                        "y has {} values but X has {n} rows",
                        y.len()
                    )));
                }
                if let Some(i) = y.iter().position(|v| !v.is_finite()) {
                    return Err(PyValueError::new_err(format!("y[{i}] is not finite")));
                }
                y.to_vec()
            }
            None => vec![0.0; n],
        };
        let offsets = offsets(&group, n)?;
        let mut ds = Dataset::new(features, labels, offsets, qids).map_err(data_err)?;
        if let Some(ids) = docids {
            let mut col = TextColumn::new();
            for id in &ids {
                col.push(id);
            }
            ds = ds.with_docids(col).map_err(data_err)?;
        }
        Ok(Self { ds })
    }
}

#[pymethods]
impl NativeData {
    /// Dense rows (float32, C-contiguous); `group` holds the query sizes in row order, `qids` one id per query.
    #[staticmethod]
    #[pyo3(signature = (x, y, group, qids, docids=None))]
    fn dense(
        x: PyReadonlyArray2<'_, f32>,
        y: Option<PyReadonlyArray1<'_, f32>>,
        group: Vec<usize>,
        qids: Vec<String>,
        docids: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let a = x.as_array();
        if let Some(((r, c), v)) = a.indexed_iter().find(|(_, v)| v.is_infinite()) {
            return Err(PyValueError::new_err(format!(
                "X[{r}, {c}] is {v}: not a number a ranker can use"
            )));
        }
        // One copy into the dataset, which owns its rows (learners keep it across threads).
        let owned = a.as_standard_layout().into_owned();
        Self::assemble(FeatureMatrix::Dense(owned), y, group, qids, docids)
    }

    /// Compressed sparse rows (scipy's CSR parts, indices sorted within rows).
    #[staticmethod]
    #[pyo3(signature = (data, indices, indptr, n_cols, y, group, qids, docids=None))]
    fn sparse(
        data: PyReadonlyArray1<'_, f32>,
        indices: PyReadonlyArray1<'_, u32>,
        indptr: PyReadonlyArray1<'_, u64>,
        n_cols: usize,
        y: Option<PyReadonlyArray1<'_, f32>>,
        group: Vec<usize>,
        qids: Vec<String>,
        docids: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let values = data.as_array().to_vec();
        let indptr: Vec<usize> = indptr.as_array().iter().map(|&p| p as usize).collect();
        if let Some(k) = values.iter().position(|v| v.is_infinite()) {
            // Its row: the last one whose stored values start at or before it (the CSR parts are checked below; a
            // bad indptr still names the stored position).
            let row = indptr.partition_point(|&p| p <= k).saturating_sub(1);
            let at = match indices.as_array().get(k) {
                Some(c) => format!("X[{row}, {c}]"),
                None => format!("X.data[{k}]"),
            };
            return Err(PyValueError::new_err(format!(
                "{at} is {}: not a number a ranker can use",
                values[k]
            )));
        }
        let n_rows = indptr.len().saturating_sub(1);
        let m = SparseMatrix::try_new(
            (n_rows, n_cols),
            indptr,
            indices.as_array().to_vec(),
            values,
        )
        .map_err(|(_, _, _, e)| value_err(format!("invalid CSR matrix: {e}")))?;
        Self::assemble(FeatureMatrix::Sparse(m), y, group, qids, docids)
    }

    /// Number of rows.
    #[getter]
    fn n_rows(&self) -> usize {
        self.ds.n_docs()
    }

    /// Number of feature columns.
    #[getter]
    fn n_features(&self) -> usize {
        self.ds.n_features()
    }

    /// Number of queries.
    #[getter]
    fn n_queries(&self) -> usize {
        self.ds.n_queries()
    }

    /// A copy carrying per-query weights (click counts) and propensities: a click training set, one query per
    /// click with the clicked document labelled 1 (Propensity SVM-Rank, IPS-weighted LambdaRank and ListNet).
    #[pyo3(signature = (weights=None, propensities=None))]
    fn with_click_weights(
        &self,
        weights: Option<PyReadonlyArray1<'_, f64>>,
        propensities: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<Self> {
        let mut ds = self.ds.clone();
        if let Some(w) = weights {
            ds = ds
                .with_query_weights(w.as_array().to_vec())
                .map_err(data_err)?;
        }
        if let Some(p) = propensities {
            ds = ds
                .with_propensities(p.as_array().to_vec())
                .map_err(data_err)?;
        }
        Ok(Self { ds })
    }

    /// A copy carrying each row's display position (0 = the top; LightGBM's `position`): a click session set,
    /// labels being clicks, for the learners that debias by position (`lambdamart`'s `debias`).
    fn with_positions(&self, positions: PyReadonlyArray1<'_, u32>) -> PyResult<Self> {
        let ds = self
            .ds
            .clone()
            .with_positions(positions.as_array().to_vec())
            .map_err(data_err)?;
        Ok(Self { ds })
    }
}

/// Read a LETOR/SVMlight file (a LightGBM/XGBoost `FILE.query` group file, or `group_file`, for files without
/// qid). Returns a dict of numpy parts: dense `x` or sparse `data`/`indices`/`indptr`, `shape`, `y`, `group`
/// (query sizes), `qids` (one per query) and `docids` (one per row, or None).
#[pyfunction]
#[pyo3(signature = (path, group_file=None, regroup=false, dense=None))]
fn load_svmlight<'py>(
    py: Python<'py>,
    path: PathBuf,
    group_file: Option<PathBuf>,
    regroup: bool,
    dense: Option<bool>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = ParseOptions {
        repeated_qid: if regroup {
            RepeatedQid::Regroup
        } else {
            RepeatedQid::Error
        },
        query_file: group_file.map_or(QueryFile::Auto, QueryFile::Path),
        storage: match dense {
            Some(true) => ltr::data::Storage::Dense,
            Some(false) => ltr::data::Storage::Sparse,
            None => ltr::data::Storage::Auto,
        },
        ..Default::default()
    };
    let ds = py
        .detach(|| read_letor_with(&path, &opts))
        .map_err(data_err)?;
    let out = PyDict::new(py);
    let group: Vec<usize> = ds.query_offsets().windows(2).map(|w| w[1] - w[0]).collect();
    out.set_item("shape", (ds.n_docs(), ds.n_features()))?;
    out.set_item("y", ds.labels().to_vec().into_pyarray(py))?;
    out.set_item("group", group.into_pyarray(py))?;
    out.set_item("qids", ds.qids().to_vec())?;
    out.set_item(
        "docids",
        ds.docids()
            .map(|d| d.iter().map(str::to_string).collect::<Vec<_>>()),
    )?;
    match ds.features() {
        FeatureMatrix::Dense(a) => {
            out.set_item("x", a.clone().into_pyarray(py))?;
        }
        FeatureMatrix::Sparse(m) => {
            out.set_item("data", m.data().to_vec().into_pyarray(py))?;
            out.set_item("indices", m.indices().to_vec().into_pyarray(py))?;
            let indptr: Vec<u64> = m.indptr().raw_storage().iter().map(|&p| p as u64).collect();
            out.set_item("indptr", indptr.into_pyarray(py))?;
        }
    }
    Ok(out)
}

/// Write `data` as a LETOR/SVMlight file (atomically); a NaN is refused, as the LETOR reader would refuse it.
#[pyfunction]
fn save_svmlight(py: Python<'_>, data: &NativeData, path: PathBuf) -> PyResult<()> {
    if let Some((row, column)) = data.ds.first_nan() {
        return Err(PyValueError::new_err(format!(
            "X[{row}, {column}] is NaN: LETOR/SVMlight text has no missing values (its reader refuses NaN)"
        )));
    }
    py.detach(|| ltr::data::write_letor(&data.ds, &path))
        .map_err(data_err)
}

/// The registry: every algorithm with its parameters, defaults, allowed values and documentation (JSON text).
#[pyfunction]
fn algorithms_json() -> String {
    ltr::learn::algorithms_json().to_string()
}

/// Train `algo` by name through the registry (as `ltr train`): `params` are `name=value` strings, a comma list is
/// a grid chosen on `validation` by `metric` under `convention`.
#[pyfunction]
#[pyo3(signature = (algo, params, train, validation=None, metric="NDCG@10", convention="standard", seed=1,
    normalize="auto", log1p=None, features=None))]
fn train(
    py: Python<'_>,
    algo: &str,
    params: Vec<String>,
    train: &NativeData,
    validation: Option<&NativeData>,
    metric: &str,
    convention: &str,
    seed: u64,
    normalize: &str,
    log1p: Option<&str>,
    features: Option<&str>,
) -> PyResult<NativeModel> {
    let mut job = TrainJob::builder(algo)
        .params(&params)
        .metric_name(metric)
        .convention_name(convention)
        .seed(seed)
        .normalize_name(normalize);
    if let Some(list) = log1p {
        job = job.log1p_list(list);
    }
    if let Some(list) = features {
        job = job.features_list(list);
    }
    fn in_memory(data: &NativeData) -> TrainData<'_> {
        TrainData::Memory {
            data: &data.ds,
            name: "<python>".into(),
        }
    }
    let job = job
        .train(in_memory(train))
        .validation(validation.map(in_memory))
        .build()
        .map_err(job_err)?;
    // The registry row says whether a NaN is a missing value to this learner (the trees); the library refuses it
    // too, but only here are the caller's names and raw columns known.
    let a = ltr::learn::find_or_err(algo).map_err(py_err)?;
    train.refuse_nan("X", a.missing_values, a.name)?;
    if let Some(v) = validation {
        v.refuse_nan("eval_set X", a.missing_values, a.name)?;
    }
    let model = py
        .detach(|| job.run())
        .map_err(job_err)?
        .model
        .expect("a one-process job returns its model");
    Ok(NativeModel { mf: model })
}

/// A trained model: the same model file as `ltr train` writes.
#[pyclass(frozen, name = "Model", module = "ltrkit._native")]
struct NativeModel {
    mf: ModelFile,
}

#[pymethods]
impl NativeModel {
    /// Scores of `data` (raw features: the stored preprocessing is applied), one per row, in the arithmetic
    /// `precision` names (`full`, or `bf16` or `int8` for a neural model: `ltr predict --precision`).
    #[pyo3(signature = (data, precision = "full"))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        data: &NativeData,
        precision: &str,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let precision = Precision::parse(precision).ok_or_else(|| {
            PyValueError::new_err(format!(
                "precision must be 'full', 'bf16' or 'int8', not {precision:?}"
            ))
        })?;
        // A RankLib file names only the features its model uses: it reads data of any larger width, as in
        // `ltr predict` (`widen_to` leaves every other model as it is, for `check_data` to refuse).
        let widened;
        let mf = if self.mf.n_features < data.ds.n_features() {
            let mut m = self.mf.clone();
            ltr::export::widen_to(&mut m, data.ds.n_features());
            widened = m;
            &widened
        } else {
            &self.mf
        };
        mf.check_data(&data.ds, "X").map_err(py_err)?;
        // The model itself says whether a NaN is a missing value to it: trees trained here or read from LightGBM
        // or XGBoost send it the learned way; a lambdamart model boosted from a linear start does not.
        data.refuse_nan(
            "X",
            mf.model.takes_missing_values(),
            &format!("this {} model", mf.algorithm),
        )?;
        if let Some(warning) = mf.precision_warning(precision) {
            // As `ltr predict` warns: the same scores, in slower portable code.
            PyErr::warn(
                py,
                &py.get_type::<pyo3::exceptions::PyRuntimeWarning>(),
                &std::ffi::CString::new(warning).expect("no NUL in the warning"),
                1,
            )?;
        }
        let scores = py
            .detach(|| mf.score_raw_with(&data.ds, precision))
            .map_err(py_err)?;
        Ok(scores.into_pyarray(py))
    }

    /// True when scores depend on the other documents of the query (rank aggregates, per-query normalisation).
    #[getter]
    fn needs_queries(&self) -> bool {
        let per_query = matches!(
            self.mf
                .preprocess
                .as_ref()
                .and_then(|p| p.normalization.as_ref()),
            Some(
                ltr::data::Normalization::QueryZScore
                    | ltr::data::Normalization::QueryMinMax
                    | ltr::data::Normalization::QuerySum
            )
        );
        per_query || matches!(self.mf.model, ltr::core::Model::Aggregate(_))
    }

    /// The model file's bytes: compact binary, or pretty JSON when `json`.
    #[pyo3(signature = (json=false))]
    fn to_bytes<'py>(&self, py: Python<'py>, json: bool) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.mf.to_bytes(json).map_err(py_err)?;
        Ok(PyBytes::new(py, &b))
    }

    /// A model from the bytes of a model file (either form), checked as `ltr predict` checks a file.
    #[staticmethod]
    fn from_bytes(bytes: &[u8]) -> PyResult<Self> {
        Ok(Self {
            mf: ModelFile::from_bytes(bytes, "<bytes>").map_err(py_err)?,
        })
    }

    /// Save atomically (`.json`: JSON, anything else: binary) — a file `ltr predict` reads.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.mf.save(&path)).map_err(py_err)
    }

    /// Load a model file written by `ltr train` or `save`, by RankLib (Coordinate Ascent, AdaRank, MART,
    /// LambdaMART), LightGBM (model text or JSON dump) or XGBoost (JSON): what `ltr predict` reads.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let mf = py
            .detach(|| ltr::export::load_model(&path))
            .map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
        Ok(Self { mf })
    }

    /// The model in a search engine's format (`ltr export --to TARGET`): `(model, side files, notes)`, the model as
    /// text (bytes for ONNX), the side files as `(suffix, contents)`: text (Solr's feature store, Vespa's XGBoost
    /// JSON), or bytes where they are not UTF-8 (Vespa's ONNX graph of a neural network).
    #[pyo3(signature = (target, name = "ltr_model".to_string(), feature_set = "ltr_features".to_string(), missing = "note".to_string()))]
    fn export(
        &self,
        py: Python<'_>,
        target: &str,
        name: String,
        feature_set: String,
        missing: String,
    ) -> PyResult<ExportedText> {
        let target: ltr::export::Target = target.parse().map_err(value_err)?;
        let opts = ltr::export::ExportOptions {
            name,
            feature_set,
            missing: missing.parse().map_err(value_err)?,
            ..Default::default()
        };
        let out = ltr::export::export(&self.mf, target, &opts).map_err(value_err)?;
        let mut side: Vec<(String, Py<PyAny>)> = Vec::with_capacity(out.side_files.len() + 1);
        if let Some(store) = out.feature_store {
            side.push((
                ".feature-store.json".to_string(),
                store.into_pyobject(py)?.into_any().unbind(),
            ));
        }
        for (suffix, bytes) in out.side_files {
            let contents = match String::from_utf8(bytes) {
                Ok(text) => text.into_pyobject(py)?.into_any().unbind(),
                Err(e) => PyBytes::new(py, e.as_bytes()).into_any().unbind(),
            };
            side.push((suffix, contents));
        }
        let model = match &out.binary {
            Some(b) => PyBytes::new(py, b).into_any().unbind(),
            None => out.model.into_pyobject(py)?.into_any().unbind(),
        };
        Ok((model, side, out.notes))
    }

    /// Registry name of the algorithm.
    #[getter]
    fn algorithm(&self) -> String {
        self.mf.algorithm.clone()
    }

    /// The setting kept (chosen on validation when a grid was given), `name -> value`.
    #[getter]
    fn params(&self) -> std::collections::BTreeMap<String, String> {
        self.mf.params.clone()
    }

    /// Raw feature count the model accepts.
    #[getter]
    fn n_features(&self) -> usize {
        ltr::export::model_width(&self.mf)
    }

    /// Weights of a linear model over its input columns (after the stored preprocessing), else None.
    fn linear_weights<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        match &self.mf.model {
            ltr::core::Model::Linear(l) => Some(l.weights.clone().into_pyarray(py)),
            _ => None,
        }
    }

    /// Per raw feature, the model's absolute weight on it, normalised to sum 1: |w| for linear models, the
    /// member-weighted mean |w| for aggregates, the summed |α| of the weak rankers for boosted stumps. None for
    /// trees read from RankLib.
    fn feature_importances<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray1<f64>>> {
        let width = self.mf.model.n_features();
        let mut imp = vec![0.0; width];
        match &self.mf.model {
            ltr::core::Model::Linear(l) => {
                for (i, w) in l.weights.iter().enumerate() {
                    imp[i] = w.abs();
                }
            }
            ltr::core::Model::Aggregate(a) => {
                let total: f64 = a.weights.iter().sum();
                for (m, &aw) in a.members.iter().zip(&a.weights) {
                    for (i, w) in m.weights.iter().enumerate() {
                        imp[i] += aw * w.abs() / total.max(f64::MIN_POSITIVE);
                    }
                }
            }
            ltr::core::Model::Stumps(e) => {
                for s in &e.stumps {
                    imp[s.feature] += s.alpha.abs();
                }
            }
            // Tree ensembles trained here: the summed training gain of each feature's splits (a boosted model's
            // start model adds none).
            ltr::core::Model::Forest(f)
            | ltr::core::Model::Boosted(ltr::core::Boosted { forest: f, .. }) => {
                let (_, gains) = f.importance();
                for (i, g) in gains.into_iter().enumerate().take(width) {
                    imp[i] = g;
                }
            }
            _ => return None,
        }
        // Back to raw feature numbers through the stored feature selection.
        let mut raw = vec![0.0; self.n_features().max(width)];
        for (j, (feature, _)) in self.mf.input_features().into_iter().enumerate() {
            raw[feature - 1] += imp[j];
        }
        let sum: f64 = raw.iter().sum();
        if sum > 0.0 {
            raw.iter_mut().for_each(|v| *v /= sum);
        }
        Some(raw.into_pyarray(py))
    }

    /// Everything the model file says (algorithm, parameters, fit report, preprocessing) as JSON text.
    fn describe(&self) -> PyResult<String> {
        let mut v = serde_json::to_value(&self.mf).map_err(value_err)?;
        if let Some(o) = v.as_object_mut() {
            o.remove("model");
        }
        Ok(v.to_string())
    }
}

/// An export as Python receives it: the model's text (bytes for a binary format), its side files as (suffix, text),
/// the notes.
type ExportedText = (Py<PyAny>, Vec<(String, Py<PyAny>)>, Vec<String>);

/// Metrics of `scores` on `data` (its labels and queries) under `convention`: `{metric: (mean, per_query)}` and
/// the qids, exactly as `ltr eval` computes them.
#[pyfunction]
fn evaluate<'py>(
    py: Python<'py>,
    data: &NativeData,
    scores: PyReadonlyArray1<'_, f64>,
    metrics: Vec<String>,
    convention: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let (metrics, convention) = measures_and_convention(&metrics, convention)?;
    let s = scores.as_array().to_vec();
    let ev = py
        .detach(|| ltr::metrics::evaluate(&data.ds, &s, &metrics, &convention))
        .map_err(|e| value_err(message(&e)))?;
    results_dict(py, ev.results)
}

/// Measure names and a convention name, parsed (a bad one is a `ValueError` with the parser's message).
fn measures_and_convention(
    metrics: &[String],
    convention: &str,
) -> PyResult<(Vec<Metric>, Convention)> {
    let metrics: Vec<Metric> = metrics
        .iter()
        .map(|m| m.parse::<Metric>().map_err(value_err))
        .collect::<PyResult<_>>()?;
    Ok((metrics, convention.parse().map_err(value_err)?))
}

/// `{metric: (mean, per_query)}`.
fn results_dict(
    py: Python<'_>,
    results: Vec<ltr::metrics::MetricResult>,
) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for r in results {
        out.set_item(r.metric.to_string(), (r.mean, r.per_query.into_pyarray(py)))?;
    }
    Ok(out)
}

/// Metrics of a TREC-style run against qrels held in memory (as `ltr eval --run --qrels` computes them):
/// `run` is `[(qid, [(docno, score), …]), …]`, `qrels` `{qid: {docno: relevance}}`. Returns the qids evaluated
/// (those of the run that have judgments, in run order) and `{metric: (mean, per_query)}`.
#[pyfunction]
fn evaluate_run<'py>(
    py: Python<'py>,
    run: Vec<(String, Vec<(String, f64)>)>,
    qrels: std::collections::HashMap<String, std::collections::HashMap<String, f32>>,
    metrics: Vec<String>,
    convention: &str,
) -> PyResult<(Vec<String>, Bound<'py, PyDict>)> {
    let (metrics, convention) = measures_and_convention(&metrics, convention)?;
    for (qid, docs) in &run {
        if let Some((doc, score)) = docs.iter().find(|(_, s)| !s.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "run: query {qid}, document {doc}: score {score} is not finite"
            )));
        }
    }
    for (qid, docs) in &qrels {
        if let Some((doc, rel)) = docs.iter().find(|(_, r)| !r.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "qrels: query {qid}, document {doc}: relevance {rel} is not finite"
            )));
        }
    }
    let (run, qrels) = (run_queries(&run), qrels_of(&qrels));
    let ev = py
        .detach(|| ltr::metrics::evaluate_run(&run, &qrels, &metrics, &convention))
        .map_err(value_err)?;
    Ok((ev.qids, results_dict(py, ev.results)?))
}

/// A run as Python gives it, `[(qid, [(docno, score), …]), …]`, as the metrics take it.
fn run_queries(run: &[(String, Vec<(String, f64)>)]) -> Vec<RunQuery> {
    run.iter()
        .map(|(qid, docs)| RunQuery::with_docs(qid.as_str(), docs.iter().map(|(d, s)| (d, *s))))
        .collect()
}

/// Qrels as Python gives them, `{qid: {docno: relevance}}`, as the metrics take them.
fn qrels_of(
    qrels: &std::collections::HashMap<String, std::collections::HashMap<String, f32>>,
) -> Qrels {
    let mut out = Qrels::new();
    for (qid, docs) in qrels {
        let judged = out.query_mut(qid);
        for (doc, &rel) in docs {
            judged.insert(doc, rel);
        }
    }
    out
}

/// Diversity measures of a run against subtopic qrels held in memory (as `ltr eval --run --qrels` computes them
/// from ndeval's file): `qrels` is `{qid: {docno: [(subtopic, relevance), …]}}`; the rest as [`evaluate_run`].
#[pyfunction]
fn evaluate_diversity_run<'py>(
    py: Python<'py>,
    run: Vec<(String, Vec<(String, f64)>)>,
    qrels: ltr::metrics::DiversityQrels,
    metrics: Vec<String>,
    convention: &str,
) -> PyResult<(Vec<String>, Bound<'py, PyDict>)> {
    let (metrics, convention) = measures_and_convention(&metrics, convention)?;
    let mut qrels = qrels;
    for (qid, docs) in qrels.iter_mut() {
        for (doc, js) in docs.iter_mut() {
            js.sort_unstable();
            if let Some(w) = js.windows(2).find(|w| w[0].0 == w[1].0) {
                return Err(PyValueError::new_err(format!(
                    "qrels: query {qid}, document {doc}: subtopic {} judged twice",
                    w[0].0
                )));
            }
        }
    }
    if let Some((qid, doc, score)) = run
        .iter()
        .flat_map(|(q, docs)| docs.iter().map(move |(d, s)| (q, d, s)))
        .find(|(_, _, s)| !s.is_finite())
    {
        return Err(PyValueError::new_err(format!(
            "run: query {qid}, document {doc}: score {score} is not finite"
        )));
    }
    let run = run_queries(&run);
    let ev = py
        .detach(|| ltr::metrics::evaluate_diversity_run(&run, &qrels, &metrics, &convention))
        .map_err(value_err)?;
    Ok((ev.qids, results_dict(py, ev.results)?))
}

/// Runs fused into one (as `ltr fuse`): each run `[(qid, [(docno, score), …]), …]`; with `qrels` the weights are
/// tuned on them by `measure` (trec convention). Returns the fused run and the weights used.
#[pyfunction]
#[pyo3(signature = (runs, method="rrf", norm="minmax", k=60.0, weights=None, qrels=None, measure="nDCG@10"))]
#[allow(clippy::type_complexity)]
fn fuse_runs(
    py: Python<'_>,
    runs: Vec<Vec<(String, Vec<(String, f64)>)>>,
    method: &str,
    norm: &str,
    k: f64,
    weights: Option<Vec<f64>>,
    qrels: Option<std::collections::HashMap<String, std::collections::HashMap<String, f32>>>,
    measure: &str,
) -> PyResult<(Vec<(String, Vec<(String, f64)>)>, Vec<f64>)> {
    use ltr::metrics::{FusionMethod, FusionNorm};
    let method = method
        .parse::<FusionMethod>()
        .map_err(value_err)?
        .with_rrf_k(k);
    let norm: FusionNorm = norm.parse().map_err(value_err)?;
    let mut w = ltr::metrics::fusion_weights(runs.len(), weights.as_deref().unwrap_or(&[]))
        .map_err(value_err)?;
    if runs
        .iter()
        .flatten()
        .flat_map(|(_, d)| d)
        .any(|(_, s)| !s.is_finite())
    {
        return Err(PyValueError::new_err(
            "a run holds a score that is not finite",
        ));
    }
    let runs: Vec<Vec<RunQuery>> = runs.iter().map(|r| run_queries(r)).collect();
    if let Some(q) = &qrels {
        let m: Metric = measure.parse().map_err(value_err)?;
        let q = qrels_of(q);
        w = py
            .detach(|| ltr::metrics::tune_weights(&runs, method, norm, &q, m, &Convention::TREC))
            .map_err(value_err)?
            .0;
    }
    let fused = py.detach(|| ltr::metrics::fuse(&runs, method, norm, &w));
    let fused = fused
        .iter()
        .map(|q| {
            let docs = q.docs().map(|(d, s)| (d.to_string(), s)).collect();
            (q.qid().to_string(), docs)
        })
        .collect();
    Ok((fused, w))
}

/// A paired test of per-query values `a` against `b` (as `ltr compare`): the test's statistic, p-value, method and
/// pairs used, the mean difference, wins and losses, and a 95% bootstrap interval.
#[pyfunction]
#[pyo3(signature = (a, b, test="ttest", alternative="two-sided", seed=1))]
fn paired_test<'py>(
    py: Python<'py>,
    a: Vec<f64>,
    b: Vec<f64>,
    test: &str,
    alternative: &str,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    if a.len() != b.len() || a.is_empty() {
        return Err(PyValueError::new_err(format!(
            "paired values need equal, non-zero lengths (got {} and {})",
            a.len(),
            b.len()
        )));
    }
    let kind: TestKind = test.parse().map_err(value_err)?;
    let alt: Alternative = alternative.parse().map_err(value_err)?;
    let (t, (lo, hi)) = py.detach(|| {
        (
            ltr::metrics::run_test(kind, &a, &b, alt, seed),
            ltr::metrics::bootstrap_ci(&a, &b, 0.95, 10_000, seed),
        )
    });
    let out = PyDict::new(py);
    out.set_item("test", t.test)?;
    out.set_item("statistic", t.statistic)?;
    out.set_item("p_value", t.p_value)?;
    out.set_item("n", t.n)?;
    out.set_item("method", t.method)?;
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    out.set_item("difference", mean(&a) - mean(&b))?;
    out.set_item("wins", a.iter().zip(&b).filter(|(x, y)| x > y).count())?;
    out.set_item("losses", a.iter().zip(&b).filter(|(x, y)| x < y).count())?;
    out.set_item("bootstrap_ci95", (lo, hi))?;
    Ok(out)
}

/// Many runs' per-query values compared (as `ltr compare` with many runs): the JSON of `--format json`, as text.
#[pyfunction]
#[pyo3(signature = (names, values, measure, convention, test="tukey-hsd", correction="holm", baseline="first", alpha=0.05,
                    resamples=10_000, trials=10_000, seed=1, format="json"))]
#[allow(clippy::too_many_arguments)]
fn compare_many(
    py: Python<'_>,
    names: Vec<String>,
    values: Vec<Vec<f64>>,
    measure: &str,
    convention: &str,
    test: &str,
    correction: &str,
    baseline: &str,
    alpha: f64,
    resamples: usize,
    trials: usize,
    seed: u64,
    format: &str,
) -> PyResult<String> {
    let metric: Metric = measure.parse().map_err(value_err)?;
    let format: ltr::metrics::ReportFormat = format.parse().map_err(value_err)?;
    let opts = ltr::metrics::ManyOptions {
        test: test.parse().map_err(value_err)?,
        correction: correction.parse().map_err(value_err)?,
        alpha,
        resamples,
        trials,
        seed,
        higher_is_better: metric.higher_is_better(),
    };
    let base = ltr::metrics::resolve_baseline(&names, baseline).map_err(value_err)?;
    let label = format!("{metric} ({convention})");
    let cmp = py
        .detach(|| ltr::metrics::compare_runs(&names, &values, base, &label, &opts))
        .map_err(value_err)?;
    Ok(cmp.render(format))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeData>()?;
    m.add_class::<NativeModel>()?;
    m.add_function(wrap_pyfunction!(load_svmlight, m)?)?;
    m.add_function(wrap_pyfunction!(save_svmlight, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms_json, m)?)?;
    m.add_function(wrap_pyfunction!(train, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_run, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_diversity_run, m)?)?;
    m.add_function(wrap_pyfunction!(fuse_runs, m)?)?;
    m.add_function(wrap_pyfunction!(paired_test, m)?)?;
    m.add_function(wrap_pyfunction!(compare_many, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
