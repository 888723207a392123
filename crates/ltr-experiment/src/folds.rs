//! An experiment's folds: a LETOR fold folder (validation file optional), or one file split by query into k parts,
//! seeded and stratified by the number of relevant documents; a validation share is carved out of training when a
//! fold has no validation file.

use std::path::{Path, PathBuf};

use ltr_data::{read_letor_with, Dataset, ParseOptions, RepeatedQid};
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::error::{ExperimentError, Result};
use crate::spec::DataSpec;

/// One fold, loaded.
#[derive(Debug, Clone)]
pub struct ExperimentFold {
    /// Fold number (1-based).
    pub number: usize,
    /// Training data.
    pub train: Dataset,
    /// Validation data (from the fold's file, or carved from training), if any.
    pub validation: Option<Dataset>,
    /// Test data.
    pub test: Dataset,
    /// Where the validation data came from (a file, `carved from train`, or `none`).
    pub validation_source: String,
    /// The test file when the fold has one (`None` when split from one file).
    pub test_file: Option<PathBuf>,
}

/// The folds of `data`, and a fingerprint of the files they were read from (path, size, modification time), so a
/// changed input never reuses a stored cell.
pub fn load_folds(data: &DataSpec, seed: u64) -> Result<(Vec<ExperimentFold>, String)> {
    let opts = ParseOptions {
        repeated_qid: if data.regroup {
            RepeatedQid::Regroup
        } else {
            RepeatedQid::Error
        },
        ..Default::default()
    };
    if !(0.0..1.0).contains(&data.validation_share) {
        return Err(ExperimentError::Spec(format!(
            "validation share {} must be in [0, 1)",
            data.validation_share
        )));
    }
    match (&data.file, &data.fold_dir) {
        (Some(file), None) => {
            let ds = read_letor_with(file, &opts)?;
            let folds = split_file(&ds, data.folds, data.validation_share, seed)?;
            Ok((folds, fingerprint(std::slice::from_ref(file))?))
        }
        (None, Some(dir)) => {
            let files = fold_files(dir)?;
            let mut all = Vec::new();
            let mut folds = Vec::new();
            for f in files {
                let mut train = read_letor_with(&f.train, &opts)?;
                let mut test = read_letor_with(&f.test, &opts)?;
                let (mut validation, validation_source) = match &f.vali {
                    Some(v) => (Some(read_letor_with(v, &opts)?), v.display().to_string()),
                    None => {
                        let (t, v) =
                            carve_validation(&train, data.validation_share, seed + f.number as u64);
                        train = t;
                        let src = if v.is_some() {
                            format!(
                                "{:.0}% of the training queries (seeded)",
                                data.validation_share * 100.0
                            )
                        } else {
                            "none".to_string()
                        };
                        (v, src)
                    }
                };
                same_width(&mut train, &mut validation, &mut test)?;
                all.push(f.train.clone());
                all.extend(f.vali.clone());
                all.push(f.test.clone());
                folds.push(ExperimentFold {
                    number: f.number,
                    train,
                    validation,
                    test,
                    validation_source,
                    test_file: Some(f.test),
                });
            }
            Ok((folds, fingerprint(&all)?))
        }
        (Some(_), Some(_)) => Err(ExperimentError::Spec(
            "give either a data file (--data) or a fold folder (--fold-dir), not both".into(),
        )),
        (None, None) => Err(ExperimentError::Spec(
            "no data: give --data FILE (split into --folds parts) or --fold-dir DIR (Fold1..FoldN)"
                .into(),
        )),
    }
}

struct FoldFiles {
    number: usize,
    train: PathBuf,
    vali: Option<PathBuf>,
    test: PathBuf,
}

/// `FoldN` folders under `dir` in numeric order, each with `train.txt` and `test.txt` (`vali.txt` optional).
fn fold_files(dir: &Path) -> Result<Vec<FoldFiles>> {
    let entries = std::fs::read_dir(dir).map_err(|e| ExperimentError::io(dir, e))?;
    let mut numbers: Vec<usize> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("Fold"))
                .and_then(|n| n.parse().ok())
        })
        .collect();
    numbers.sort_unstable();
    if numbers.is_empty() {
        return Err(ExperimentError::Spec(format!(
            "{}: no Fold1..FoldN folders (each with train.txt and test.txt) here",
            dir.display()
        )));
    }
    numbers
        .into_iter()
        .map(|n| {
            let f = dir.join(format!("Fold{n}"));
            let files = FoldFiles {
                number: n,
                train: f.join("train.txt"),
                vali: Some(f.join("vali.txt")).filter(|p| p.is_file()),
                test: f.join("test.txt"),
            };
            for p in [&files.train, &files.test] {
                if !p.is_file() {
                    return Err(ExperimentError::Spec(format!(
                        "{}: missing (a fold needs train.txt and test.txt; vali.txt is optional)",
                        p.display()
                    )));
                }
            }
            Ok(files)
        })
        .collect()
}

/// Give the three sets of a fold one width (the widest): a feature absent from training gets no weight.
fn same_width(
    train: &mut Dataset,
    validation: &mut Option<Dataset>,
    test: &mut Dataset,
) -> Result<()> {
    let d = train
        .n_features()
        .max(test.n_features())
        .max(validation.as_ref().map_or(0, Dataset::n_features));
    train.set_n_features(d)?;
    test.set_n_features(d)?;
    if let Some(v) = validation {
        v.set_n_features(d)?;
    }
    Ok(())
}

/// Queries in a seeded order that is stratified by the number of relevant documents (label > 0): shuffled, then
/// stably sorted by that count, so dealing them out in turn gives every part the same mix of easy and hard queries.
fn stratified_order(ds: &Dataset, queries: &[usize], seed: u64) -> Vec<usize> {
    let mut order = queries.to_vec();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    order.sort_by_key(|&q| ds.query(q).labels().iter().filter(|&&l| l > 0.0).count());
    order
}

/// The test queries of each of `k` parts: a seeded split by query, stratified by relevant documents; every query is
/// in exactly one part, and each part's queries stay in file order.
pub fn stratified_kfold(ds: &Dataset, k: usize, seed: u64) -> Result<Vec<Vec<usize>>> {
    let n = ds.n_queries();
    if k < 2 || k > n {
        return Err(ExperimentError::Spec(format!(
            "--folds {k}: need 2 <= folds <= the number of queries ({n})"
        )));
    }
    let all: Vec<usize> = (0..n).collect();
    let mut parts = vec![Vec::new(); k];
    for (i, q) in stratified_order(ds, &all, seed).into_iter().enumerate() {
        parts[i % k].push(q);
    }
    for p in &mut parts {
        p.sort_unstable();
    }
    Ok(parts)
}

/// Split `ds` into training and validation: `share` of the queries (rounded down, at least one when the share is
/// positive and there are two queries or more), spread over the strata of relevant documents. `None` when no
/// validation is wanted.
pub fn carve_validation(ds: &Dataset, share: f64, seed: u64) -> (Dataset, Option<Dataset>) {
    let n = ds.n_queries();
    if share <= 0.0 || n < 2 {
        return (ds.clone(), None);
    }
    let all: Vec<usize> = (0..n).collect();
    let order = stratified_order(ds, &all, seed);
    let mut held = vec![false; n];
    let mut taken = 0;
    for (i, &q) in order.iter().enumerate() {
        // Every 1/share-th query of the stratified order: floor((i+1)·share) steps up exactly there.
        if ((i + 1) as f64 * share).floor() > (i as f64 * share).floor() {
            held[q] = true;
            taken += 1;
        }
    }
    if taken == 0 {
        held[order[n / 2]] = true;
    }
    let (v, t): (Vec<usize>, Vec<usize>) = all.into_iter().partition(|&q| held[q]);
    (ds.select_queries(&t), Some(ds.select_queries(&v)))
}

fn split_file(ds: &Dataset, k: usize, share: f64, seed: u64) -> Result<Vec<ExperimentFold>> {
    let parts = stratified_kfold(ds, k, seed)?;
    Ok(parts
        .iter()
        .enumerate()
        .map(|(i, test_q)| {
            let mut in_test = vec![false; ds.n_queries()];
            for &q in test_q {
                in_test[q] = true;
            }
            let train_q: Vec<usize> = (0..ds.n_queries()).filter(|&q| !in_test[q]).collect();
            let number = i + 1;
            let (train, validation) =
                carve_validation(&ds.select_queries(&train_q), share, seed + number as u64);
            ExperimentFold {
                number,
                validation_source: if validation.is_some() {
                    format!("{:.0}% of the training queries (seeded)", share * 100.0)
                } else {
                    "none".into()
                },
                train,
                validation,
                test: ds.select_queries(test_q),
                test_file: None,
            }
        })
        .collect())
}

pub(crate) fn fingerprint(files: &[PathBuf]) -> Result<String> {
    let mut parts = Vec::new();
    for f in files {
        let meta = std::fs::metadata(f).map_err(|e| ExperimentError::io(f, e))?;
        let mtime = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        let path = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        parts.push(format!("{}:{}:{}", path.display(), meta.len(), mtime));
    }
    Ok(parts.join(";"))
}
