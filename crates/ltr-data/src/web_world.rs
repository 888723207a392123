//! What the two generated web profiles share (`generate_web` and
//! `generate_web_raw`): the checks of their common settings, the hidden world of latent
//! factors every feature loads on, the query sizes' offsets, the per-query loop over seeded streams (so the data is
//! the same at any thread count) and the assembly of the blocks into a [`Dataset`]. Each profile keeps its own
//! feature families, transforms and grading.

use ndarray::Array2;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;

use crate::dataset::{Dataset, FeatureMatrix, TextColumn};
use crate::error::{DataError, Result};

/// Latent factors behind every feature and the relevance.
pub(crate) const FACTORS: usize = 8;

/// Refuse settings outside what both profiles accept: at least one query, `1 <= min_docs <= max_docs`, finite
/// noise `>= 0`, and a nonlinearity in [0, 1]. `what` names the profile in the message.
pub(crate) fn check_common(
    what: &str,
    queries: usize,
    (min_docs, max_docs): (usize, usize),
    noise: f64,
    nonlinearity: f64,
) -> Result<()> {
    if queries == 0 || min_docs == 0 || max_docs < min_docs || !(noise >= 0.0 && noise.is_finite())
    {
        return Err(DataError::Invalid(format!(
            "{what} needs queries >= 1, 1 <= min_docs <= max_docs and noise >= 0"
        )));
    }
    if !(0.0..=1.0).contains(&nonlinearity) {
        return Err(DataError::Invalid(format!(
            "{what}: nonlinearity must lie in [0, 1], got {nonlinearity}"
        )));
    }
    Ok(())
}

/// The hidden world: each feature's loadings on the latent factors, the relevance's weights on them, and the
/// standard deviation of each column's signal over all documents.
pub(crate) struct World {
    pub loadings: Vec<[f64; FACTORS]>,
    pub beta: [f64; FACTORS],
    pub signal_sd: Vec<f64>,
}

impl World {
    /// Draw `d` features' loadings from `rng` (those for which `weak(j)` holds at a fifth of the strength: page
    /// statistics carry little signal). The relevance weighs the first five factors 1, 1/2, …, 1/5. Every factor
    /// has variance 2 over all documents (the query's shift and the document's own draw), each column's own noise
    /// 0.25.
    pub fn draw(rng: &mut ChaCha8Rng, d: usize, weak: impl Fn(usize) -> bool) -> Self {
        let loadings: Vec<[f64; FACTORS]> = (0..d)
            .map(|j| {
                let strength = if weak(j) { 0.2 } else { 1.0 };
                std::array::from_fn(|_| strength * rng.sample::<f64, _>(StandardNormal) / 2.0)
            })
            .collect();
        let beta = std::array::from_fn(|k| if k < 5 { 1.0 / (k + 1) as f64 } else { 0.0 });
        let signal_sd = loadings
            .iter()
            .map(|l| (2.0 * l.iter().map(|a| a * a).sum::<f64>() + 0.25).sqrt())
            .collect();
        World {
            loadings,
            beta,
            signal_sd,
        }
    }

    /// A document of a query shifted by `shift`: its factors, its within-query relevance signal, and its
    /// relevance noise, drawn in that order.
    pub fn document(
        &self,
        rng: &mut ChaCha8Rng,
        shift: &[f64; FACTORS],
    ) -> ([f64; FACTORS], f64, f64) {
        let z: [f64; FACTORS] =
            std::array::from_fn(|k| shift[k] + rng.sample::<f64, _>(StandardNormal));
        let signal: f64 = (0..FACTORS).map(|k| self.beta[k] * (z[k] - shift[k])).sum();
        let relevance_noise: f64 = rng.sample(StandardNormal);
        (z, signal, relevance_noise)
    }

    /// Column `j`'s signal for factors `z`: its loadings plus its own noise (one draw).
    pub fn column_signal(&self, rng: &mut ChaCha8Rng, j: usize, z: &[f64; FACTORS]) -> f64 {
        (0..FACTORS)
            .map(|k| self.loadings[j][k] * z[k])
            .sum::<f64>()
            + 0.5 * rng.sample::<f64, _>(StandardNormal)
    }
}

/// `f(rng, q, m)` for every query `q` of `m = sizes[q]` documents, in parallel, each on its own stream seeded by
/// `seed ^ (q + 1) · mix`; the results in query order.
pub(crate) fn per_query<T: Send>(
    sizes: &[usize],
    seed: u64,
    mix: u64,
    f: impl Fn(&mut ChaCha8Rng, usize, usize) -> T + Sync,
) -> Vec<T> {
    sizes
        .par_iter()
        .enumerate()
        .map(|(q, &m)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (q as u64 + 1).wrapping_mul(mix));
            f(&mut rng, q, m)
        })
        .collect()
}

/// The queries' blocks (row-major features `d` wide, and labels) as one dense [`Dataset`] with qids `1..` and
/// docids `{prefix}{query}-{index}`.
pub(crate) fn assemble(
    blocks: Vec<(Vec<f32>, Vec<f32>)>,
    d: usize,
    prefix: &str,
) -> Result<Dataset> {
    let mut offsets = Vec::with_capacity(blocks.len() + 1);
    offsets.push(0);
    for (_, labels) in &blocks {
        offsets.push(offsets.last().expect("non-empty") + labels.len());
    }
    let n = *offsets.last().expect("non-empty");
    let mut x = Vec::with_capacity(n * d);
    let mut labels = Vec::with_capacity(n);
    let mut docids = TextColumn::new();
    let queries = blocks.len();
    for (q, (bx, bl)) in blocks.into_iter().enumerate() {
        for i in 0..bl.len() {
            docids.push(&format!("{prefix}{}-{i}", q + 1));
        }
        x.extend(bx);
        labels.extend(bl);
    }
    let features = Array2::from_shape_vec((n, d), x)
        .map_err(|e| DataError::Invalid(format!("internal shape error: {e}")))?;
    let qids = (1..=queries).map(|q| q.to_string()).collect();
    Dataset::new(FeatureMatrix::Dense(features), labels, offsets, qids)?.with_docids(docids)
}
