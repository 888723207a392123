//! Seeded synthetic data: a LETOR-like generator for offline runs and benchmarks at any scale, and the separable
//! simulated stream of Chaudhuri & Tewari (seed 002, `PerceptronSimulation.m`; algorithms.md §3.8).

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal, StandardNormal};

use crate::dataset::{Dataset, FeatureMatrix, TextColumn};
use crate::error::{DataError, Result};

/// Parameters of [`generate_letor_like`].
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticConfig {
    /// Number of queries.
    pub queries: usize,
    /// Smallest number of documents of a query.
    pub min_docs: usize,
    /// Largest number of documents of a query.
    pub max_docs: usize,
    /// Number of features.
    pub features: usize,
    /// Number of relevance grades (labels 0..grades-1).
    pub grades: u32,
    /// Standard deviation of the noise added to the latent relevance (the hidden score has unit scale).
    pub noise: f64,
    /// Fraction of documents whose label is replaced by a uniformly random grade (outliers).
    pub outlier_fraction: f64,
    /// Apply LETOR query-level min–max normalisation, as the LETOR "QueryLevelNorm" files are.
    pub query_level_norm: bool,
    /// Random seed.
    pub seed: u64,
}

impl Default for SyntheticConfig {
    fn default() -> Self {
        Self {
            queries: 200,
            min_docs: 20,
            max_docs: 120,
            features: 40,
            grades: 3,
            noise: 0.6,
            outlier_fraction: 0.02,
            query_level_norm: true,
            seed: 42,
        }
    }
}

impl SyntheticConfig {
    /// The parse benchmark's data (`examples/parse_speed.rs --generate`, `cargo xtask bench`): MSLR-WEB's 136
    /// features, 50–150 documents a query, five grades, seed 1. 5,400 queries write about 1 GB of LETOR text (its
    /// parse fingerprint, `79f0831c448143cb` in BENCHMARKS.md, depends on every field), 540 about 0.1 GB.
    pub fn parse_benchmark(queries: usize) -> Self {
        Self {
            queries,
            min_docs: 50,
            max_docs: 150,
            features: 136,
            grades: 5,
            seed: 1,
            ..Default::default()
        }
    }
}

/// Generate a LETOR-like dataset: each document's features are Gaussian around a per-query offset; a hidden
/// linear function (half the features informative) plus noise gives a latent relevance; within a query the
/// documents are graded by latent rank so that grade g holds a share ∝ 2^-g of them (most documents irrelevant,
/// as in LETOR); then a fraction of labels is flipped at random. The same config gives the same data on any machine.
pub fn generate_letor_like(cfg: &SyntheticConfig) -> Result<Dataset> {
    if cfg.queries == 0
        || cfg.features == 0
        || cfg.min_docs == 0
        || cfg.max_docs < cfg.min_docs
        || cfg.grades < 2
    {
        return Err(DataError::Invalid(
            "synthetic data needs queries, features, min_docs >= 1, max_docs >= min_docs and grades >= 2".into(),
        ));
    }
    if !(0.0..=1.0).contains(&cfg.outlier_fraction) || cfg.noise < 0.0 || !cfg.noise.is_finite() {
        return Err(DataError::Invalid(
            "outlier_fraction must be in [0,1] and noise >= 0".into(),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let d = cfg.features;
    let informative = d.div_ceil(2);
    let mut w_true: Vec<f64> = (0..d)
        .map(|j| {
            if j < informative {
                rng.sample::<f64, _>(StandardNormal)
            } else {
                0.0
            }
        })
        .collect();
    let norm = w_true.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-12);
    w_true.iter_mut().for_each(|v| *v /= norm);
    let sizes: Vec<usize> = (0..cfg.queries)
        .map(|_| rng.random_range(cfg.min_docs..=cfg.max_docs))
        .collect();
    let n: usize = sizes.iter().sum();
    let mut x = Array2::<f32>::zeros((n, d));
    let mut labels = vec![0f32; n];
    let mut offsets = vec![0usize];
    let mut qids = Vec::with_capacity(cfg.queries);
    let mut docids = TextColumn::new();
    let noise = Normal::new(0.0, cfg.noise.max(1e-12)).expect("valid normal");
    // Grade shares ∝ 2^-g.
    let shares: Vec<f64> = (0..cfg.grades).map(|g| 0.5f64.powi(g as i32)).collect();
    let total_share: f64 = shares.iter().sum();
    let mut row = 0;
    for (q, &m) in sizes.iter().enumerate() {
        let shift: Vec<f64> = (0..d)
            .map(|_| rng.sample::<f64, _>(StandardNormal))
            .collect();
        let mut latent = Vec::with_capacity(m);
        for i in 0..m {
            let mut s = 0.0;
            for j in 0..d {
                let v = shift[j] + rng.sample::<f64, _>(StandardNormal);
                x[[row + i, j]] = v as f32;
                s += w_true[j] * (v - shift[j]);
            }
            latent.push(
                s + if cfg.noise > 0.0 {
                    noise.sample(&mut rng)
                } else {
                    0.0
                },
            );
        }
        let mut order: Vec<usize> = (0..m).collect();
        order.sort_by(|&a, &b| latent[b].total_cmp(&latent[a]).then(a.cmp(&b)));
        // Assign grades from the top: highest grade first.
        let mut pos = 0;
        for g in (1..cfg.grades).rev() {
            let cnt = ((m as f64) * shares[g as usize] / total_share).round() as usize;
            for &i in order.iter().skip(pos).take(cnt) {
                labels[row + i] = g as f32;
            }
            pos += cnt;
        }
        for i in 0..m {
            if rng.random::<f64>() < cfg.outlier_fraction {
                labels[row + i] = rng.random_range(0..cfg.grades) as f32;
            }
            docids.push(&format!("D{}-{}", q + 1, i + 1));
        }
        row += m;
        offsets.push(row);
        qids.push((q + 1).to_string());
    }
    let mut ds =
        Dataset::new(FeatureMatrix::Dense(x), labels, offsets, qids)?.with_docids(docids)?;
    if cfg.query_level_norm {
        crate::transform::normalize_query_minmax(&mut ds);
    }
    Ok(ds)
}

/// The relevance vector of every simulated round (algorithms.md §3.8): 3 fours, 3 threes, 4 twos, 5 ones, 5 zeros.
pub const SLAM_SIM_RELEVANCE: [u8; 20] =
    [4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0];

/// The separable stream of Chaudhuri & Tewari's simulation: `rounds` queries of 20 documents with 10 features.
/// Level 4 documents are N(7,1)^10; each lower level ℓ (means 5, 3, 1, −1) is rejection-sampled until its
/// oracle score ⟨1, x⟩ is more than 1 below the minimum oracle score of level ℓ+1. Rows are in label order (4s first).
pub fn generate_slam_stream(rounds: usize, seed: u64) -> Result<Dataset> {
    if rounds == 0 {
        return Err(DataError::Invalid(
            "the simulated stream needs at least one round".into(),
        ));
    }
    const D: usize = 10;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let m = SLAM_SIM_RELEVANCE.len();
    let mut x = Array2::<f32>::zeros((rounds * m, D));
    let mut labels = Vec::with_capacity(rounds * m);
    let mut offsets = vec![0usize];
    let mut qids = Vec::with_capacity(rounds);
    let levels: [(u8, usize, f64); 5] = [
        (4, 3, 7.0),
        (3, 3, 5.0),
        (2, 4, 3.0),
        (1, 5, 1.0),
        (0, 5, -1.0),
    ];
    let mut row = 0;
    for t in 0..rounds {
        let mut prev_min = f64::INFINITY;
        for &(label, count, mean) in &levels {
            let mut level_min = f64::INFINITY;
            for _ in 0..count {
                let v = loop {
                    let v: Vec<f64> = (0..D)
                        .map(|_| mean + rng.sample::<f64, _>(StandardNormal))
                        .collect();
                    let s: f64 = v.iter().sum();
                    if prev_min - s > 1.0 {
                        break v;
                    }
                };
                let s: f64 = v.iter().sum();
                level_min = level_min.min(s);
                for j in 0..D {
                    x[[row, j]] = v[j] as f32;
                }
                labels.push(label as f32);
                row += 1;
            }
            prev_min = level_min;
        }
        offsets.push(row);
        qids.push((t + 1).to_string());
    }
    Dataset::new(FeatureMatrix::Dense(x), labels, offsets, qids)
}

/// A judged run for timing evaluators: `queries` × `docs` documents (qids `1…`, no features, docids `d0…` when
/// `with_docids`, which TREC files need), graded 0–4 with about three in four judged 0, and pseudo-random scores
/// in [0, 1.000000007) — the same bytes on every call (xorshift64 from a fixed state), so evaluator benchmarks and
/// their peers see identical input.
pub fn generate_judged_run(
    queries: usize,
    docs: usize,
    with_docids: bool,
) -> Result<(Dataset, Vec<f64>)> {
    let n = queries * docs;
    let mut state = 12345u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut labels, mut scores) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        labels.push((next() % 5) as f32 * if next() % 4 == 0 { 1.0 } else { 0.0 });
        scores.push((next() % 1_000_000_007) as f64 / 1e9);
    }
    let mut ds = Dataset::new(
        FeatureMatrix::Dense(Array2::zeros((n, 0))),
        labels,
        (0..=queries).map(|q| q * docs).collect(),
        (1..=queries).map(|q| q.to_string()).collect(),
    )?;
    if with_docids {
        let mut ids = TextColumn::new();
        for i in 0..n {
            ids.push(&format!("d{}", i % docs.max(1)));
        }
        ds = ds.with_docids(ids)?;
    }
    Ok((ds, scores))
}
