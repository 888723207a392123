//! Raw web-style data (`ltr generate --profile web`): features that look like MSLR-WEB's as users have them —
//! term counts and BM25-like scores of the query in several fields, URL and page statistics with heavy tails,
//! PageRank-like link scores in the thousands, ratios in [0, 1], binary flags — plus constant and duplicate columns,
//! and five grades with MSLR-WEB30K's label skew (51.4 % / 32.5 % / 13.4 % / 1.9 % / 0.8 %). Nothing is normalised.
//! Each query draws from its own seeded stream, so any size is generated in parallel and the same config gives the
//! same data at any thread count.
//!
//! Grades rank each query's documents by a hidden relevance. At [`WebConfig::nonlinearity`] 0 that relevance is a
//! weighted sum of the latent factors behind every feature, so a linear ranker comes within about 0.01 NDCG@10 of
//! boosted trees — unlike real web data, where LambdaMART leads linear models by 0.05 or more. Above 0, part of its
//! variance comes from shapes no weighted sum of features can take, read off five features (ids as in the written
//! files, which count from 1):
//!
//! - saturation: `tanh(1.5 v)` of a body-match score (feature 2, BM25-like) — each further match helps less;
//! - a threshold: +1 once the share of covered query terms (feature 5, a ratio) passes its level (v > 0.5);
//! - an interaction of a query-dependent and a static feature: the link score (feature 4, PageRank-like) counts only
//!   for documents whose title matches (feature 8, BM25-like, v > 0.5);
//! - a demotion: −1 for pages whose static quality score (feature 10, PageRank-like) is low (v < −1), whatever they
//!   match.
//!
//! v is the column's signal before its transform, in units of its standard deviation over all documents; the
//! transforms of these columns are monotone and invertible, so a tree can place every threshold exactly. The
//! features are the same at every nonlinearity (no extra random draws): only the grades change. BENCHMARKS.md
//! ("Generated web data: calibration of the non-linear profile") measures the tree–linear gap per value.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::dataset::Dataset;
use crate::error::{DataError, Result};
use crate::web_world::{assemble, check_common, per_query, World, FACTORS};

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
    /// Share of the hidden relevance's variance that comes from the non-linear terms of the module docs, in
    /// [0, 1]. 0 (the `Default`) is the original, nearly linear profile, byte for byte; above 0 the signal is
    /// `sqrt(1 − s)·linear + sqrt(s)·non-linear`, both scaled to the same variance, so the noise keeps its weight.
    /// Values above 0 need at least [`WebConfig::MIN_NONLINEAR_FEATURES`] features.
    pub nonlinearity: f64,
}

impl WebConfig {
    /// The nonlinearity `ltr generate --profile web` uses unless told otherwise: on 195 k generated training
    /// documents it puts LightGBM's LambdaMART about as far ahead of RankSVM as published results on MSLR-WEB30K
    /// put trees ahead of linear models (BENCHMARKS.md, "Generated web data: calibration of the non-linear
    /// profile").
    pub const CALIBRATED_NONLINEARITY: f64 = 0.25;
    /// Fewest features a nonlinearity above 0 accepts: the features its terms read (up to feature 10), plus
    /// the four constant and duplicate columns at the end.
    pub const MIN_NONLINEAR_FEATURES: usize = 14;
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
            nonlinearity: 0.0,
        }
    }
}

/// MSLR-WEB30K's grade shares, best grade first: 4, 3, 2, 1 (the rest is 0).
const TOP_SHARES: [f64; 4] = [0.008, 0.019, 0.134, 0.325];

// The columns the non-linear terms read (0-based: feature ids minus 1; see the module docs). Each is BM25-like,
// PageRank-like or a ratio, whose transforms are invertible, so the terms are exact functions of the written
// features.
const BODY_MATCH: usize = 1;
// pub for the tests in tests/unit/generate_web.rs; not API.
#[doc(hidden)]
pub const LINK_SCORE: usize = 3;
const TERM_COVERAGE: usize = 4;
// pub for the tests in tests/unit/generate_web.rs; not API.
#[doc(hidden)]
pub const TITLE_MATCH: usize = 7;
const STATIC_QUALITY: usize = 9;

/// Within-query variance of [`nonlinear_relevance`] on generated documents (measured 0.79–0.84 over seeds 0–2,
/// 300 queries of 100 documents each): dividing by its root gives the non-linear part the linear part's variance.
const NONLINEAR_VARIANCE: f64 = 0.82;

/// The non-linear part of the hidden relevance, given each column's standardised signal `v(j)` (module docs).
fn nonlinear_relevance(v: impl Fn(usize) -> f64) -> f64 {
    let saturation = (1.5 * v(BODY_MATCH)).tanh();
    let threshold = if v(TERM_COVERAGE) > 0.5 { 1.0 } else { 0.0 };
    let gated_link_score = if v(TITLE_MATCH) > 0.5 {
        v(LINK_SCORE)
    } else {
        0.0
    };
    let demotion = if v(STATIC_QUALITY) < -1.0 { -1.0 } else { 0.0 };
    saturation + threshold + gated_link_score + demotion
}

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
    check_common(
        "web data",
        cfg.queries,
        (cfg.min_docs, cfg.max_docs),
        cfg.noise,
        cfg.nonlinearity,
    )?;
    if cfg.features < 8 {
        return Err(DataError::Invalid(format!(
            "web data needs features >= 8, got {}",
            cfg.features
        )));
    }
    if cfg.nonlinearity > 0.0 && cfg.features < WebConfig::MIN_NONLINEAR_FEATURES {
        return Err(DataError::Invalid(format!(
            "web data: nonlinearity {} needs features >= {} (its terms read features 2, 4, 5, 8 and 10), got {}",
            cfg.nonlinearity,
            WebConfig::MIN_NONLINEAR_FEATURES,
            cfg.features
        )));
    }
    let d = cfg.features;
    // The hidden world: each feature loads on the latent factors; relevance is a fixed function of them.
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let world = World::draw(&mut rng, d, |j| family(j, d) == Family::Length);
    // Within a query the linear signal has variance sum(beta²); the non-linear part is scaled to match it.
    let linear_weight = (1.0 - cfg.nonlinearity).sqrt();
    let nonlinear_weight = (cfg.nonlinearity * world.beta.iter().map(|b| b * b).sum::<f64>()
        / NONLINEAR_VARIANCE)
        .sqrt();
    let sizes: Vec<usize> = (0..cfg.queries)
        .map(|_| rng.random_range(cfg.min_docs..=cfg.max_docs))
        .collect();
    let blocks = per_query(&sizes, cfg.seed, 0x9E37_79B9_7F4A_7C15, |rng, _, m| {
        let shift: [f64; FACTORS] = std::array::from_fn(|_| rng.sample::<f64, _>(StandardNormal));
        let mut x = vec![0f32; m * d];
        let mut latent = Vec::with_capacity(m);
        let mut u_row = vec![0f64; d];
        for i in 0..m {
            // The relevance noise is drawn before the features, as the original profile did, so that its stream
            // is unchanged.
            let (z, signal, relevance_noise) = world.document(rng, &shift);
            for j in 0..d {
                let f = family(j, d);
                if let Family::Duplicate(_) = f {
                    continue;
                }
                let u = world.column_signal(rng, j, &z);
                u_row[j] = u;
                x[i * d + j] = transform(f, u);
            }
            latent.push(if cfg.nonlinearity == 0.0 {
                // The original profile's expression, for its exact bits.
                signal + cfg.noise * relevance_noise
            } else {
                let nonlinear = nonlinear_relevance(|j| u_row[j] / world.signal_sd[j]);
                linear_weight * signal + nonlinear_weight * nonlinear + cfg.noise * relevance_noise
            });
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
    });
    assemble(blocks, d, "w")
}
