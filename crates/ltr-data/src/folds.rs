//! LETOR fold folders and seeded k-fold splits by query.

use std::path::{Path, PathBuf};

use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::error::{DataError, Result};
use crate::{read_letor, Dataset};

/// The three files of one LETOR fold (`FoldN/{train,vali,test}.txt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LetorFold {
    /// Fold number (1-based).
    pub number: usize,
    /// Training file.
    pub train: PathBuf,
    /// Validation file.
    pub vali: PathBuf,
    /// Test file.
    pub test: PathBuf,
}

/// Find `Fold1..FoldN` under `dir` (each with train/vali/test), in order. Fails if none is complete.
pub fn letor_folds(dir: &Path) -> Result<Vec<LetorFold>> {
    let mut out = Vec::new();
    for n in 1..=10 {
        let f = dir.join(format!("Fold{n}"));
        if !f.is_dir() {
            continue;
        }
        let fold = LetorFold {
            number: n,
            train: f.join("train.txt"),
            vali: f.join("vali.txt"),
            test: f.join("test.txt"),
        };
        for p in [&fold.train, &fold.vali, &fold.test] {
            if !p.is_file() {
                return Err(DataError::io(
                    p,
                    std::io::Error::other("missing file of a LETOR fold"),
                ));
            }
        }
        out.push(fold);
    }
    if out.is_empty() {
        return Err(DataError::io(
            dir,
            std::io::Error::other("no Fold1..Fold5 folders with train/vali/test.txt here"),
        ));
    }
    Ok(out)
}

/// A LETOR fold with its three files parsed.
#[derive(Debug, Clone)]
pub struct LoadedFold {
    /// Fold number (1-based).
    pub number: usize,
    /// Training data.
    pub train: Dataset,
    /// Validation data.
    pub vali: Dataset,
    /// Test data.
    pub test: Dataset,
}

impl LetorFold {
    /// Parse the fold's train, validation and test files.
    pub fn load(&self) -> Result<LoadedFold> {
        Ok(LoadedFold {
            number: self.number,
            train: read_letor(&self.train)?,
            vali: read_letor(&self.vali)?,
            test: read_letor(&self.test)?,
        })
    }
}

/// Every fold under `dir` ([`letor_folds`]), parsed.
pub fn load_letor_folds(dir: &Path) -> Result<Vec<LoadedFold>> {
    letor_folds(dir)?.iter().map(LetorFold::load).collect()
}

/// One split of a k-fold partition: query indices for training and for testing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuerySplit {
    /// Query indices (sorted) used for training.
    pub train: Vec<usize>,
    /// Query indices (sorted) held out.
    pub test: Vec<usize>,
}

/// Partition `n_queries` queries into `k` folds after a seeded shuffle; fold sizes differ by at most one.
pub fn kfold_queries(n_queries: usize, k: usize, seed: u64) -> Result<Vec<QuerySplit>> {
    if k < 2 || k > n_queries {
        return Err(DataError::Invalid(format!(
            "k-fold needs 2 <= k <= number of queries ({n_queries}), got {k}"
        )));
    }
    let mut order: Vec<usize> = (0..n_queries).collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    order.shuffle(&mut rng);
    let mut splits = Vec::with_capacity(k);
    for f in 0..k {
        let lo = f * n_queries / k;
        let hi = (f + 1) * n_queries / k;
        let mut test: Vec<usize> = order[lo..hi].to_vec();
        let mut train: Vec<usize> = order[..lo].iter().chain(&order[hi..]).copied().collect();
        test.sort_unstable();
        train.sort_unstable();
        splits.push(QuerySplit { train, test });
    }
    Ok(splits)
}

/// Split a dataset's queries at random (seeded) into consecutive parts with the given fractions (e.g.
/// `[0.6, 0.2, 0.2]` for train/validation/test). Every part gets at least one query.
pub fn split_by_queries(
    ds: &crate::Dataset,
    fractions: &[f64],
    seed: u64,
) -> Result<Vec<crate::Dataset>> {
    let n = ds.n_queries();
    if fractions.is_empty()
        || fractions.iter().any(|f| !f.is_finite() || *f <= 0.0)
        || n < fractions.len()
    {
        return Err(DataError::Invalid(format!(
            "cannot split {n} queries into parts {fractions:?}"
        )));
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let total: f64 = fractions.iter().sum();
    let mut out = Vec::with_capacity(fractions.len());
    let mut start = 0usize;
    let mut acc = 0.0;
    for (i, f) in fractions.iter().enumerate() {
        acc += f;
        let remaining_parts = fractions.len() - i - 1;
        let end = if remaining_parts == 0 {
            n
        } else {
            ((acc / total * n as f64).round() as usize).clamp(start + 1, n - remaining_parts)
        };
        let mut part: Vec<usize> = order[start..end].to_vec();
        part.sort_unstable();
        out.push(ds.select_queries(&part));
        start = end;
    }
    Ok(out)
}
