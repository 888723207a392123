//! Preprocessing fitted on the training data and stored with the model, so that a model is always applied to raw
//! data exactly as it was trained: feature selection, `log1p` of heavy-tailed columns, then a normalisation —
//! global z-score or min–max (fitted), or per query (RankLib's `-norm zscore|linear|sum`, computed on each query).
//!
//! Policies, the same at fit and apply time:
//! - a feature constant on the training data (standard deviation or range 0) maps to 0, never NaN;
//! - a feature the training data did not have (a wider file at apply time) is refused with a shape error;
//! - `log1p` is sign-preserving: sign(x)·ln(1 + |x|), defined for every finite value;
//! - a NaN is a missing value (data built in memory for the tree learners, which learn where it goes): it stays
//!   NaN, and every statistic (z-score, min–max, per query) is that of the present values.

use ndarray::Axis;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::dataset::{Dataset, FeatureMatrix};
use crate::error::{DataError, Result};
use crate::exact_sum::ExactVec;
use crate::transform::{select_features_padded, zscore_value, ZScore};

/// Which normalisation (the `--normalize` values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NormalizeKind {
    /// Leave the features as they are.
    None,
    /// z-score when some training feature lies outside [0, 1] (raw data), nothing otherwise (query-normalised
    /// LETOR data, whose results stay those of the papers).
    Auto,
    /// Global z-score fitted on the training documents.
    ZScore,
    /// Global min–max to [0, 1] fitted on the training documents.
    MinMax,
    /// Per query: (x − mean_q)/std_q (RankLib `-norm zscore`).
    QueryZScore,
    /// Per query: (x − min_q)/(max_q − min_q) (RankLib `-norm linear`, LETOR's QueryLevelNorm).
    QueryMinMax,
    /// Per query: x / Σ_q |x| (RankLib `-norm sum`).
    QuerySum,
}

impl std::str::FromStr for NormalizeKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "none" => Self::None,
            "auto" => Self::Auto,
            "zscore" | "z-score" => Self::ZScore,
            "minmax" | "min-max" => Self::MinMax,
            "query-zscore" => Self::QueryZScore,
            "query-minmax" | "query-linear" => Self::QueryMinMax,
            "query-sum" => Self::QuerySum,
            other => {
                return Err(format!(
                "unknown normalisation `{other}`; expected none, auto, zscore, minmax, query-zscore, query-minmax or query-sum"
            ))
            }
        })
    }
}

/// A fitted normalisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Normalization {
    /// Global z-score with the training means and deviations.
    ZScore(ZScore),
    /// Global min–max with the training minima and maxima.
    MinMax {
        /// Minimum of each feature on the training data.
        min: Vec<f64>,
        /// Maximum of each feature on the training data.
        max: Vec<f64>,
    },
    /// Per-query z-score.
    QueryZScore,
    /// Per-query min–max.
    QueryMinMax,
    /// Per-query division by the sum of absolute values.
    QuerySum,
}

/// What to fit (the CLI's `--normalize`, `--log1p`, `--features`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreprocessSpec {
    /// Keep only these features (1-based, as in the file), in this order.
    pub features: Option<Vec<usize>>,
    /// Apply sign-preserving `log1p` to these features (1-based, as in the file).
    pub log1p: Vec<usize>,
    /// The normalisation.
    pub normalize: Option<NormalizeKind>,
}

/// A preprocessing fitted on training data; part of the model file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preprocess {
    /// Features kept (1-based, file numbering), or all.
    pub features: Option<Vec<usize>>,
    /// Features given `log1p` (1-based, file numbering).
    pub log1p: Vec<usize>,
    /// The fitted normalisation, if any.
    pub normalization: Option<Normalization>,
    /// Width of the raw data the preprocessing was fitted on.
    pub raw_features: usize,
}

/// How the statistics of a global normalisation are combined over the ranks of data-parallel training, each rank
/// holding whole queries of the training data: `ltr_core`'s collectives implement it; [`Local`] is one process.
pub trait StatsReduce {
    /// Sum exact accumulators over the ranks, in place, the same on every rank.
    fn sum_exact(&self, acc: &mut ExactVec) -> Result<()>;
    /// The element-wise minimum of `lo` and maximum of `hi` over the ranks, in place.
    fn min_max(&self, lo: &mut [f64], hi: &mut [f64]) -> Result<()>;
}

/// One process: the statistics are already complete.
#[derive(Debug, Clone, Copy, Default)]
pub struct Local;

impl StatsReduce for Local {
    fn sum_exact(&self, _acc: &mut ExactVec) -> Result<()> {
        Ok(())
    }
    fn min_max(&self, _lo: &mut [f64], _hi: &mut [f64]) -> Result<()> {
        Ok(())
    }
}

impl PreprocessSpec {
    /// Whether fitting on `train` will change its features (and so store a preprocessing in the model): a
    /// selection, a `log1p`, or a normalisation (`auto` normalises only data with a feature outside [0, 1]).
    pub fn transforms(&self, train: &Dataset) -> bool {
        self.features.is_some()
            || !self.log1p.is_empty()
            || match self.normalize.unwrap_or(NormalizeKind::Auto) {
                NormalizeKind::None => false,
                NormalizeKind::Auto => !train.features_in_unit_interval(),
                _ => true,
            }
    }

    /// Whether preprocessing `train` in place ([`fit_transform_owned`](Self::fit_transform_owned)) holds a second
    /// copy of it for a while: a selection or `log1p` builds a (narrower) one, and a sparse file grows dense under
    /// a normalisation; a dense file is normalised where it lies.
    pub fn copies(&self, train: &Dataset) -> bool {
        self.transforms(train)
            && (self.features.is_some() || !self.log1p.is_empty() || !train.is_dense())
    }

    /// Fit on `train`; `None` when the result would change nothing.
    pub fn fit(&self, train: &Dataset) -> Result<Option<Preprocess>> {
        Ok(self.fit_staged(train, &Local)?.map(|(p, _)| p))
    }

    /// [`fit_transform`](Self::fit_transform) on one rank's shard of whole queries, the statistics (the `auto`
    /// decision, z-score sums, min–max ranges) combined over the ranks by `reduce`: every rank gets the
    /// preprocessing fitted on all the queries, bit for bit, and its own shard transformed.
    pub fn fit_transform_with(
        &self,
        train: &Dataset,
        reduce: &dyn StatsReduce,
    ) -> Result<Option<(Preprocess, Dataset)>> {
        let Some((p, staged)) = self.fit_staged(train, reduce)? else {
            return Ok(None);
        };
        let mut out = staged.into_owned();
        p.normalize(&mut out)?;
        Ok(Some((p, out)))
    }

    /// [`fit_transform_with`](Self::fit_transform_with) on data the caller gives up: the normalisation is applied
    /// in place (feature selection and `log1p` still build their narrower copy, and the original is dropped), so
    /// training on raw data holds it once, not twice. Returns the fitted preprocessing (`None`: nothing changes)
    /// and the data to train on.
    pub fn fit_transform_owned(
        &self,
        train: Dataset,
        reduce: &dyn StatsReduce,
    ) -> Result<(Option<Preprocess>, Dataset)> {
        let Some((p, staged)) = self.fit_staged(&train, reduce)? else {
            return Ok((None, train));
        };
        let staged = match staged {
            std::borrow::Cow::Owned(d) => Some(d),
            std::borrow::Cow::Borrowed(_) => None,
        };
        let mut out = match staged {
            Some(d) => {
                drop(train);
                d
            }
            None => train,
        };
        p.normalize(&mut out)?;
        Ok((Some(p), out))
    }

    /// Fit on `train` and return the transformed training data with it (one pass over the data, where
    /// [`fit`](Self::fit) then [`Preprocess::apply`] would transform it twice); `None` when nothing would change.
    pub fn fit_transform(&self, train: &Dataset) -> Result<Option<(Preprocess, Dataset)>> {
        self.fit_transform_with(train, &Local)
    }

    /// The fitted preprocessing and the training data after selection and `log1p` (borrowed when neither
    /// applies, so that the common case — LETOR data under `auto` — copies nothing).
    fn fit_staged<'d>(
        &self,
        train: &'d Dataset,
        reduce: &dyn StatsReduce,
    ) -> Result<Option<(Preprocess, std::borrow::Cow<'d, Dataset>)>> {
        let d = train.n_features();
        for &f in self.log1p.iter().chain(self.features.iter().flatten()) {
            if f == 0 || f > d {
                return Err(DataError::Invalid(format!(
                    "feature {f} is outside 1..={d} of the training data"
                )));
            }
        }
        let mut p = Preprocess {
            features: self.features.clone(),
            log1p: self.log1p.clone(),
            normalization: None,
            raw_features: d,
        };
        let staged = if p.features.is_none() && p.log1p.is_empty() {
            std::borrow::Cow::Borrowed(train)
        } else {
            std::borrow::Cow::Owned(p.stage(train)?)
        };
        let kind = match self.normalize.unwrap_or(NormalizeKind::Auto) {
            NormalizeKind::Auto => {
                // Raw on any rank is raw for all of them.
                let mut outside = ExactVec::new(1);
                outside.add(
                    0,
                    if staged.features_in_unit_interval() {
                        0.0
                    } else {
                        1.0
                    },
                );
                reduce.sum_exact(&mut outside)?;
                if outside.value(0) > 0.0 {
                    NormalizeKind::ZScore
                } else {
                    NormalizeKind::None
                }
            }
            k => k,
        };
        p.normalization = match kind {
            NormalizeKind::None | NormalizeKind::Auto => None,
            NormalizeKind::ZScore => {
                let mut sums = ZScore::sums(&staged);
                reduce.sum_exact(&mut sums)?;
                Some(Normalization::ZScore(ZScore::from_sums(&sums)))
            }
            NormalizeKind::MinMax => {
                let (mut min, mut max) = column_ranges(&staged);
                reduce.min_max(&mut min, &mut max)?;
                // A feature with no value on any rank (all NaN) is constant: it maps to 0, its NaN stay NaN.
                for (lo, hi) in min.iter_mut().zip(&mut max) {
                    if lo > hi {
                        (*lo, *hi) = (0.0, 0.0);
                    }
                }
                Some(Normalization::MinMax { min, max })
            }
            NormalizeKind::QueryZScore => Some(Normalization::QueryZScore),
            NormalizeKind::QueryMinMax => Some(Normalization::QueryMinMax),
            NormalizeKind::QuerySum => Some(Normalization::QuerySum),
        };
        let identity = p.features.is_none() && p.log1p.is_empty() && p.normalization.is_none();
        Ok((!identity).then_some((p, staged)))
    }
}

/// Each feature's minimum and maximum (`f64::min` and `max` pass over a NaN: those of the present values).
fn column_ranges(ds: &Dataset) -> (Vec<f64>, Vec<f64>) {
    let d = ds.n_features();
    let (mut lo, mut hi) = (vec![f64::INFINITY; d], vec![f64::NEG_INFINITY; d]);
    for i in 0..ds.n_docs() {
        let r = ds.row(i);
        for j in 0..d {
            let v = r.get(j) as f64;
            lo[j] = lo[j].min(v);
            hi[j] = hi[j].max(v);
        }
    }
    (lo, hi)
}

impl Preprocess {
    /// A transformed copy of `ds` (raw data as in the training file's numbering).
    pub fn apply(&self, ds: &Dataset) -> Result<Dataset> {
        let mut out = self.stage(ds)?;
        self.normalize(&mut out)?;
        Ok(out)
    }

    /// A copy of `ds` with the features selected (or widened to the training width) and `log1p` applied. Selection
    /// comes first, so the copy is only as wide as the model's input, whatever the raw width.
    fn stage(&self, ds: &Dataset) -> Result<Dataset> {
        if ds.n_features() > self.raw_features {
            return Err(DataError::Shape(format!(
                "the data has {} features but the model's preprocessing was fitted on {}",
                ds.n_features(),
                self.raw_features
            )));
        }
        let (mut out, log_columns): (Dataset, Vec<usize>) = match &self.features {
            Some(f) => (
                select_features_padded(ds, f)?,
                f.iter()
                    .enumerate()
                    .filter(|(_, raw)| self.log1p.contains(raw))
                    .map(|(j, _)| j)
                    .collect(),
            ),
            None => {
                let mut out = ds.clone();
                out.set_n_features(self.raw_features)?;
                (out, self.log1p.iter().map(|f| f - 1).collect())
            }
        };
        if !log_columns.is_empty() {
            out.to_dense();
            let FeatureMatrix::Dense(a) = out.features_mut() else {
                unreachable!("made dense above")
            };
            a.axis_iter_mut(Axis(0))
                .into_par_iter()
                .for_each(|mut row| {
                    for &j in &log_columns {
                        row[j] = log1p_value(row[j]);
                    }
                });
        }
        Ok(out)
    }

    /// The fitted normalisation, in place on staged data.
    fn normalize(&self, out: &mut Dataset) -> Result<()> {
        match &self.normalization {
            None => {}
            Some(Normalization::ZScore(z)) => z.apply(out)?,
            Some(Normalization::MinMax { min, max }) => {
                out.to_dense();
                let FeatureMatrix::Dense(a) = out.features_mut() else {
                    unreachable!("made dense above")
                };
                a.axis_iter_mut(Axis(0))
                    .into_par_iter()
                    .for_each(|mut row| {
                        for (j, v) in row.iter_mut().enumerate() {
                            *v = minmax_value(*v, min[j], max[j]);
                        }
                    });
            }
            Some(q) => per_query(out, q),
        }
        Ok(())
    }

    /// Why this preprocessing cannot be applied, if it is inconsistent (a hand-edited or corrupt model file):
    /// feature numbers outside `1..=raw_features`, or fitted statistics that are not finite or not one per
    /// selected feature.
    pub fn inconsistency(&self) -> Option<String> {
        let in_range = |f: &usize| (1..=self.raw_features).contains(f);
        if let Some(f) = &self.features {
            if let Some(bad) = f.iter().find(|f| !in_range(f)) {
                return Some(format!(
                    "selected feature {bad} is outside 1..={}",
                    self.raw_features
                ));
            }
        }
        if let Some(bad) = self.log1p.iter().find(|f| !in_range(f)) {
            return Some(format!(
                "log1p feature {bad} is outside 1..={}",
                self.raw_features
            ));
        }
        let width = self.features.as_ref().map_or(self.raw_features, Vec::len);
        let columns = |name: &str, v: &[f64]| -> Option<String> {
            if v.len() != width {
                Some(format!(
                    "{name} has {} values for {width} features",
                    v.len()
                ))
            } else if v.iter().any(|x| !x.is_finite()) {
                Some(format!("{name} holds a value that is not finite"))
            } else {
                None
            }
        };
        match &self.normalization {
            Some(Normalization::ZScore(z)) => columns("the z-score mean", &z.mean)
                .or_else(|| columns("the z-score deviation", &z.std))
                .or_else(|| {
                    z.std
                        .iter()
                        .any(|s| *s < 0.0)
                        .then(|| "a negative deviation".into())
                }),
            Some(Normalization::MinMax { min, max }) => {
                columns("the min-max minimum", min).or_else(|| columns("the min-max maximum", max))
            }
            _ => None,
        }
    }

    /// The value model input `column` (0-based, after selection) takes for raw value `raw` of its feature, computed
    /// exactly as [`apply`](Self::apply) computes it; `None` for per-query normalisations, which need the whole
    /// query. Export uses it to carry thresholds back to raw values.
    pub fn transform_value(&self, column: usize, raw: f32) -> Option<f32> {
        let feature = self.features.as_ref().map_or(column + 1, |f| f[column]);
        let v = if self.log1p.contains(&feature) {
            log1p_value(raw)
        } else {
            raw
        };
        match &self.normalization {
            None => Some(v),
            Some(Normalization::ZScore(z)) => Some(zscore_value(v, z.mean[column], z.std[column])),
            Some(Normalization::MinMax { min, max }) => {
                Some(minmax_value(v, min[column], max[column]))
            }
            Some(_) => None,
        }
    }

    /// One line per step, for `ltr inspect` and logs.
    pub fn describe(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(f) = &self.features {
            v.push(format!(
                "keep {} of {} features",
                f.len(),
                self.raw_features
            ));
        }
        if !self.log1p.is_empty() {
            v.push(format!("log1p on features {:?}", self.log1p));
        }
        v.push(match &self.normalization {
            None => "no normalisation".into(),
            Some(Normalization::ZScore(z)) => format!(
                "global z-score ({} features; {} constant on training map to 0)",
                z.mean.len(),
                z.std.iter().filter(|s| **s == 0.0).count()
            ),
            Some(Normalization::MinMax { min, max }) => format!(
                "global min-max ({} features; {} constant on training map to 0)",
                min.len(),
                min.iter().zip(max).filter(|(a, b)| a >= b).count()
            ),
            Some(Normalization::QueryZScore) => "per-query z-score".into(),
            Some(Normalization::QueryMinMax) => "per-query min-max".into(),
            Some(Normalization::QuerySum) => "per-query sum".into(),
        });
        v
    }
}

/// Sign-preserving log1p, as `--log1p` applies it.
fn log1p_value(v: f32) -> f32 {
    let v = v as f64;
    (v.signum() * v.abs().ln_1p()) as f32
}

/// (v − min) / (max − min); 0 for a feature constant on the training data; a NaN stays NaN.
fn minmax_value(v: f32, min: f64, max: f64) -> f32 {
    let range = max - min;
    if range > 0.0 {
        ((v as f64 - min) / range) as f32
    } else if v.is_nan() {
        v
    } else {
        0.0
    }
}

fn per_query(ds: &mut Dataset, kind: &Normalization) {
    if *kind == Normalization::QueryMinMax {
        crate::transform::normalize_query_minmax(ds);
        return;
    }
    let (blocks, d) = crate::transform::query_blocks_mut(ds);
    let sum_norm = *kind == Normalization::QuerySum;
    blocks.into_par_iter().for_each(|block| {
        let n = block.len() / d.max(1);
        for j in 0..d {
            // The query's present values: a NaN is left out of the statistics and stays NaN.
            let col = (0..n)
                .map(|i| block[i * d + j] as f64)
                .filter(|x| !x.is_nan());
            let present = col.clone().count();
            if sum_norm {
                let s: f64 = col.map(f64::abs).sum();
                for i in 0..n {
                    let v = &mut block[i * d + j];
                    if !v.is_nan() {
                        *v = if s > 0.0 { (*v as f64 / s) as f32 } else { 0.0 };
                    }
                }
            } else {
                let mean = col.clone().sum::<f64>() / present as f64;
                let var = col.map(|x| (x - mean) * (x - mean)).sum::<f64>() / present as f64;
                let sd = var.sqrt();
                for i in 0..n {
                    let v = &mut block[i * d + j];
                    if !v.is_nan() {
                        *v = if sd > 0.0 {
                            ((*v as f64 - mean) / sd) as f32
                        } else {
                            0.0
                        };
                    }
                }
            }
        }
    });
}

/// Read a feature-name file: one name per line (line k names feature k), or `id name` pairs (ids 1-based, any
/// order). Blank lines and `#` comments are skipped in the pair form. Errors name the file and line.
pub fn read_feature_names(path: &std::path::Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| DataError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let err = |line: usize, problem: String| {
        DataError::Invalid(format!("{}:{line}: {problem}", path.display()))
    };
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let paired = lines.iter().all(|(_, l)| {
        l.split_once(char::is_whitespace)
            .is_some_and(|(id, _)| id.parse::<usize>().is_ok())
    });
    if !paired {
        return Ok(text.lines().map(|l| l.trim().to_string()).collect());
    }
    let mut names: Vec<Option<String>> = Vec::new();
    for (line, l) in lines {
        let (id, name) = l.split_once(char::is_whitespace).expect("checked above");
        let id: usize = id.parse().expect("checked above");
        if id == 0 {
            return Err(err(line, "feature ids start at 1".into()));
        }
        if names.len() < id {
            names.resize(id, None);
        }
        if let Some(old) = &names[id - 1] {
            return Err(err(
                line,
                format!("feature {id} is named twice (`{old}` before)"),
            ));
        }
        names[id - 1] = Some(name.trim().to_string());
    }
    Ok(names
        .into_iter()
        .enumerate()
        .map(|(i, n)| n.unwrap_or_else(|| format!("f{}", i + 1)))
        .collect())
}
