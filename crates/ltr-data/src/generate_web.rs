//! Raw web-style data (`ltr generate --profile web`): features that look like MSLR-WEB's as users have them —
//! term counts and BM25-like scores of the query in several fields, URL and page statistics with heavy tails,
//! PageRank-like link scores in the thousands, ratios in [0, 1], binary flags — plus constant and duplicate columns,
//! and five grades with MSLR-WEB30K's label skew (51.4 % / 32.5 % / 13.4 % / 1.9 % / 0.8 %). Nothing is normalised.
//! Each query draws from its own seeded stream, so any size is generated in parallel and the same config gives the
//! same data at any thread count.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;

use crate::dataset::{Dataset, FeatureMatrix, TextColumn};
use crate::error::{DataError, Result};

/// Parameters of [`generate_web`].
#[derive(Debug, Clone, PartialEq)]
pub struct WebConfig {
    /// Number of queries (MSLR-WEB30K: 31,531).
    pub queries: usize,
    /// Smallest query.
    pub min_docs: usize,
    /// Largest query (the mean is their midpoint; MSLR-WEB30K averages 120 documents per query).
    pub max_docs: usize,
    /// Number of features (MSLR-WEB: 136); at least 8.
    pub features: usize,
    /// Noise of the hidden relevance (unit-scale signal).
    pub noise: f64,
    /// Seed.
    pub seed: u64,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            queries: 100,
            min_docs: 40,
            max_docs: 200,
            features: 136,
            noise: 1.0,
            seed: 7,
        }
    }
}

/// MSLR-WEB30K's grade shares, best grade first: 4, 3, 2, 1 (the rest is 0).
const TOP_SHARES: [f64; 4] = [0.008, 0.019, 0.134, 0.325];
const FACTORS: usize = 8;

/// How a feature column is made from its unit-scale signal u.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    /// Term counts: round(e^(1.5 + 1.2u)), heavy-tailed integers.
    Count,
    /// BM25-like: 8·softplus(u), in the tens.
    Bm25,
    /// URL / page length: round(e^(5 + 0.8u)), hundreds to thousands.
    Length,
    /// PageRank-like link score: e^(4 + 1.5u), up to the tens of thousands.
    PageRank,
    /// A ratio in (0, 1).
    Ratio,
    /// A 0/1 flag.
    Flag,
    /// The same value for every document.
    Constant(f32),
    /// An exact copy of another column.
    Duplicate(usize),
}

fn family(j: usize, d: usize) -> Family {
    match j {
        _ if j == d - 1 => Family::Constant(0.0),
        _ if j == d - 2 => Family::Constant(1.0),
        _ if j == d - 3 => Family::Duplicate(1),
        _ if j == d - 4 => Family::Duplicate(3),
        _ => [
            Family::Count,
            Family::Bm25,
            Family::Length,
            Family::PageRank,
            Family::Ratio,
            Family::Flag,
        ][j % 6],
    }
}

fn transform(f: Family, u: f64) -> f32 {
    (match f {
        Family::Count => (1.5 + 1.2 * u).exp().round().min(1e6),
        Family::Bm25 => 8.0 * u.exp().ln_1p(),
        Family::Length => (5.0 + 0.8 * u).exp().round(),
        Family::PageRank => (4.0 + 1.5 * u).exp(),
        Family::Ratio => 1.0 / (1.0 + (-u).exp()),
        Family::Flag => f64::from(u > 1.0),
        Family::Constant(c) => f64::from(c),
        Family::Duplicate(_) => unreachable!("copied after the other columns"),
    }) as f32
}

/// Generate raw web-style data (see the module docs).
pub fn generate_web(cfg: &WebConfig) -> Result<Dataset> {
    if cfg.queries == 0
        || cfg.features < 8
        || cfg.min_docs == 0
        || cfg.max_docs < cfg.min_docs
        || !(cfg.noise >= 0.0 && cfg.noise.is_finite())
    {
        return Err(DataError::Invalid(
            "web data needs queries >= 1, features >= 8, 1 <= min_docs <= max_docs and noise >= 0"
                .into(),
        ));
    }
    let d = cfg.features;
    // The hidden world: each feature loads on the latent factors; relevance is a fixed function of them.
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let loadings: Vec<[f64; FACTORS]> = (0..d)
        .map(|j| {
            let strength = match family(j, d) {
                Family::Length => 0.2, // page statistics carry little signal
                _ => 1.0,
            };
            std::array::from_fn(|_| strength * rng.sample::<f64, _>(StandardNormal) / 2.0)
        })
        .collect();
    let beta: [f64; FACTORS] =
        std::array::from_fn(|k| if k < 5 { 1.0 / (k + 1) as f64 } else { 0.0 });
    let sizes: Vec<usize> = (0..cfg.queries)
        .map(|_| rng.random_range(cfg.min_docs..=cfg.max_docs))
        .collect();
    let mut offsets = Vec::with_capacity(cfg.queries + 1);
    offsets.push(0);
    for s in &sizes {
        offsets.push(offsets.last().expect("non-empty") + s);
    }
    let n = *offsets.last().expect("non-empty");
    let query_seed = |q: usize| cfg.seed ^ (q as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let blocks: Vec<(Vec<f32>, Vec<f32>)> = sizes
        .par_iter()
        .enumerate()
        .map(|(q, &m)| {
            let mut rng = ChaCha8Rng::seed_from_u64(query_seed(q));
            let shift: [f64; FACTORS] =
                std::array::from_fn(|_| rng.sample::<f64, _>(StandardNormal));
            let mut x = vec![0f32; m * d];
            let mut latent = Vec::with_capacity(m);
            for i in 0..m {
                let z: [f64; FACTORS] =
                    std::array::from_fn(|k| shift[k] + rng.sample::<f64, _>(StandardNormal));
                let signal: f64 = (0..FACTORS).map(|k| beta[k] * (z[k] - shift[k])).sum();
                latent.push(signal + cfg.noise * rng.sample::<f64, _>(StandardNormal));
                for j in 0..d {
                    let f = family(j, d);
                    if let Family::Duplicate(_) = f {
                        continue;
                    }
                    let u: f64 = (0..FACTORS).map(|k| loadings[j][k] * z[k]).sum::<f64>()
                        + 0.5 * rng.sample::<f64, _>(StandardNormal);
                    x[i * d + j] = transform(f, u);
                }
                for j in 0..d {
                    if let Family::Duplicate(src) = family(j, d) {
                        x[i * d + j] = x[i * d + src];
                    }
                }
            }
            // Grades by latent rank with MSLR's shares, best first.
            let mut order: Vec<usize> = (0..m).collect();
            order.sort_by(|&a, &b| latent[b].total_cmp(&latent[a]).then(a.cmp(&b)));
            let mut labels = vec![0f32; m];
            for (rank, &i) in order.iter().enumerate() {
                let pos = (rank as f64 + 0.5) / m as f64;
                let mut cum = 0.0;
                for (g, share) in TOP_SHARES.iter().enumerate() {
                    cum += share;
                    if pos < cum {
                        labels[i] = (4 - g) as f32;
                        break;
                    }
                }
            }
            (x, labels)
        })
        .collect();
    let mut x = Vec::with_capacity(n * d);
    let mut labels = Vec::with_capacity(n);
    let mut docids = TextColumn::new();
    for (q, (bx, bl)) in blocks.into_iter().enumerate() {
        for i in 0..bl.len() {
            docids.push(&format!("w{}-{i}", q + 1));
        }
        x.extend(bx);
        labels.extend(bl);
    }
    let features = Array2::from_shape_vec((n, d), x)
        .map_err(|e| DataError::Invalid(format!("internal shape error: {e}")))?;
    let qids = (1..=cfg.queries).map(|q| q.to_string()).collect();
    Dataset::new(FeatureMatrix::Dense(features), labels, offsets, qids)?.with_docids(docids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_heavy_tailed_skewed_and_reproducible_at_any_thread_count() {
        let cfg = WebConfig {
            queries: 60,
            ..Default::default()
        };
        let a = generate_web(&cfg).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| generate_web(&cfg).unwrap());
        assert_eq!(a.labels(), b.labels());
        assert!((0..a.n_docs()).all(|i| (0..136).all(|j| a.row(i).get(j) == b.row(i).get(j))));
        let d = a.n_features();
        let col = |j: usize| {
            (0..a.n_docs())
                .map(|i| a.row(i).get(j))
                .collect::<Vec<f32>>()
        };
        let max = |j: usize| col(j).into_iter().fold(f32::MIN, f32::max);
        assert!(
            max(3) > 1000.0 && max(0) > 50.0,
            "raw scales: {} {}",
            max(3),
            max(0)
        );
        assert!(col(d - 1).iter().all(|&v| v == 0.0) && col(d - 2).iter().all(|&v| v == 1.0));
        assert_eq!(col(d - 3), col(1));
        let share =
            |g: f32| a.labels().iter().filter(|&&l| l == g).count() as f64 / a.n_docs() as f64;
        assert!((share(0.0) - 0.514).abs() < 0.02 && (share(1.0) - 0.325).abs() < 0.02);
        assert!(share(4.0) > 0.0 && share(4.0) < 0.02, "{}", share(4.0));
        // Too few features to hold the constant and duplicate columns are refused.
        assert!(generate_web(&WebConfig { features: 7, ..cfg }).is_err());
    }
}
