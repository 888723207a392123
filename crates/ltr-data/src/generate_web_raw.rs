//! Raw web data as public learning-to-rank sets hand it out (`ltr generate --profile web-raw`): what
//! [`generate_web`](crate::generate_web) leaves out and real raw sets have, and what binning raw features must
//! survive (issue 51).
//!
//! - **Exact zeros and heavy tails.** A query term is absent from most fields of most documents: its count, its
//!   BM25 score and its share of covered terms are then exactly 0 (half to 95 % of a column's documents). Where the
//!   term is present the count is a heavy-tailed integer and the BM25 score a continuous, heavy-tailed value with a
//!   distinct value per document; link scores are 0 for a sixth of the pages and reach the tens of thousands.
//! - **Most documents graded 0.** Grades come from one threshold set over every document of every query (not from
//!   each query's ranking, as in the web profile): 70 % of the documents are graded 0, then 18 / 8 / 3 / 1 % grades
//!   1 to 4.
//! - **Queries with no relevant document.** Each query has a level (how much relevant material exists for it); a
//!   query low on it may have no document above grade 0.
//! - **Queries of 5 to 1,000 documents**, log-uniform in between by default (median about 70, mean about 190).
//! - **Features constant within a query**: query-level statistics (an IDF-like score, the query's length), as
//!   MSLR-WEB's IDF columns are, plus a constant and a duplicate column.
//!
//! Every column is a monotone function of a latent signal `v` (in units of its standard deviation over all
//! documents): zero below the column's presence threshold, a heavy-tailed value above it. A ranking tree needs fine
//! bins among the non-zero values, where the relevant documents lie; a binner that spends its bins just above the
//! spike at 0 loses them. As in the web profile, [`WebRawConfig::nonlinearity`] moves a share of the relevance's
//! within-query variance into shapes no weighted sum of features can take, read off the written features (ids as in
//! the files, counting from 1): saturation in the body BM25 (feature 2; absent is worst), a threshold on the covered
//! term ratio (feature 5), the link score (feature 4) counting only where the title matches (feature 7), and a
//! demotion of pages of low quality (feature 14). Each query draws from its own seeded stream, so the data is the
//! same at any thread count.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

use crate::dataset::Dataset;
use crate::error::{DataError, Result};
use crate::web_world::{assemble, check_common, per_query, World, FACTORS};

/// Parameters of [`generate_web_raw`].
#[derive(Debug, Clone, PartialEq)]
pub struct WebRawConfig {
    /// Number of queries.
    pub queries: usize,
    /// Smallest query (default 5).
    pub min_docs: usize,
    /// Largest query (default 1,000); sizes are log-uniform between the two.
    pub max_docs: usize,
    /// Number of features (default 136); at least [`WebRawConfig::MIN_FEATURES`].
    pub features: usize,
    /// Noise of the hidden relevance (the within-query signal has unit scale).
    pub noise: f64,
    /// Seed.
    pub seed: u64,
    /// Share in [0, 1] of the within-query relevance's variance from the non-linear terms of the module docs.
    pub nonlinearity: f64,
}

impl WebRawConfig {
    /// Fewest features: two blocks of ten (the non-linear terms read up to feature 14), less the four constant and
    /// duplicate columns at the end, which overwrite the last block's tail.
    pub const MIN_FEATURES: usize = 20;
    /// Share of documents graded 0, 1, 2, 3 and 4, over all queries.
    pub const GRADE_SHARES: [f64; 5] = [0.70, 0.18, 0.08, 0.03, 0.01];
}

impl Default for WebRawConfig {
    fn default() -> Self {
        Self {
            queries: 100,
            min_docs: 5,
            max_docs: 1000,
            features: 136,
            noise: 0.6,
            seed: 7,
            nonlinearity: 0.25,
        }
    }
}

/// Columns repeat in blocks of this many (see [`family`]).
const BLOCK: usize = 10;

/// How a column is made from its standardised signal `v` (and, for a query-level column, the query's).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Family {
    /// A query term's count in a field: 0 unless `v` passes the threshold, else round(e^(1.2 (v − t))), at least 1.
    Count { threshold: f64 },
    /// BM25 of the field whose count is column `count`: 0 where that count is 0, else e^(1 + 0.7 v), continuous.
    Bm25 { count: usize },
    /// Document length in words: round(e^(5 + 0.8 v)), never 0.
    Length,
    /// A link score: 0 for pages below the threshold (a sixth), else e^(4 + 1.5 v).
    PageRank,
    /// Covered query terms as a share: 0 below the threshold, else a logistic of `v` in (0.5, 1).
    Ratio { threshold: f64 },
    /// A query-level IDF-like score, e^(2 + 0.5 w) for the query's own signal `w`: constant within a query.
    QueryIdf,
    /// The query's length in terms, 1 + round(e^(0.6 + 0.4 w)): constant within a query.
    QueryLength,
    /// A 0/1 flag.
    Flag,
    /// The same value for every document.
    Constant(f32),
    /// An exact copy of another column.
    Duplicate(usize),
}

/// Standard normal quantiles: the presence thresholds that leave 50, 75, 85 and 92 % of a field's counts at 0, and
/// 60, 80, 90 and 95 % of the title's.
const BODY_THRESHOLDS: [f64; 4] = [0.0, 0.674_49, 1.036_43, 1.405_07];
const TITLE_THRESHOLDS: [f64; 4] = [0.253_35, 0.841_62, 1.281_55, 1.644_85];
/// Link scores at 0: a sixth of the pages (Φ⁻¹(1/6)).
const PAGERANK_THRESHOLD: f64 = -0.967_42;

fn family(j: usize, d: usize) -> Family {
    let block = j / BLOCK;
    match j {
        _ if j == d - 1 => Family::Constant(0.0),
        _ if j == d - 2 => Family::Constant(1.0),
        _ if j == d - 3 => Family::Duplicate(1),
        _ if j == d - 4 => Family::Duplicate(3),
        _ => match j % BLOCK {
            0 => Family::Count {
                threshold: BODY_THRESHOLDS[block % 4],
            },
            1 => Family::Bm25 { count: j - 1 },
            2 => Family::Length,
            3 => Family::PageRank,
            4 => Family::Ratio {
                threshold: BODY_THRESHOLDS[block % 4] - 0.25,
            },
            5 => Family::Count {
                threshold: TITLE_THRESHOLDS[block % 4],
            },
            6 => Family::Bm25 { count: j - 1 },
            7 => Family::QueryIdf,
            8 => Family::QueryLength,
            _ => Family::Flag,
        },
    }
}

// The columns the non-linear terms read (0-based).
const BODY_BM25: usize = 1;
const LINK_SCORE: usize = 3;
const TERM_COVERAGE: usize = 4;
const TITLE_BM25: usize = 6;
const QUALITY: usize = 13;

/// Mean and within-query variance of [`nonlinear_relevance`] over generated documents (measured over seeds 0–3,
/// 400 queries of 100 documents each: the mean −0.57 to −0.28, the variance 0.68 to 1.01; each seed draws its own
/// loadings): centring and scaling by them gives the non-linear part about the linear part's mean and variance.
const NONLINEAR_MEAN: f64 = -0.42;
const NONLINEAR_VARIANCE: f64 = 0.85;

/// The non-linear part of the relevance from the written features' signals: `v(j)` the standardised signal of
/// column `j`, `present(j)` whether column `j` is non-zero.
fn nonlinear_relevance(v: impl Fn(usize) -> f64, present: impl Fn(usize) -> bool) -> f64 {
    let saturation = if present(BODY_BM25) {
        (1.5 * v(BODY_BM25)).tanh()
    } else {
        -1.0
    };
    let threshold = if present(TERM_COVERAGE) && v(TERM_COVERAGE) > 0.5 {
        1.0
    } else {
        0.0
    };
    let gated_link_score = if present(TITLE_BM25) && present(LINK_SCORE) {
        v(LINK_SCORE)
    } else {
        0.0
    };
    let demotion = if v(QUALITY) < -0.5 { -1.0 } else { 0.0 };
    saturation + threshold + gated_link_score + demotion
}

/// The column's value from its signal `v`, the query's signal `w` and whether its presence source passed.
fn transform(f: Family, v: f64, w: f64, present: bool) -> f32 {
    (match f {
        Family::Count { threshold } if present => {
            (1.2 * (v - threshold)).exp().round().clamp(1.0, 1e6)
        }
        Family::Bm25 { .. } if present => (1.0 + 0.7 * v).exp(),
        Family::Ratio { .. } if present => 0.5 + 0.5 / (1.0 + (-v).exp()),
        Family::PageRank if present => (4.0 + 1.5 * v).exp(),
        Family::Count { .. } | Family::Bm25 { .. } | Family::Ratio { .. } | Family::PageRank => 0.0,
        Family::Length => (5.0 + 0.8 * v).exp().round(),
        Family::QueryIdf => (2.0 + 0.5 * w).exp(),
        Family::QueryLength => 1.0 + (0.6 + 0.4 * w).exp().round(),
        Family::Flag => f64::from(v > 1.0),
        Family::Constant(c) => f64::from(c),
        Family::Duplicate(_) => unreachable!("copied after the other columns"),
    }) as f32
}

/// Generate raw web data (see the module docs).
pub fn generate_web_raw(cfg: &WebRawConfig) -> Result<Dataset> {
    check_common(
        "raw web data",
        cfg.queries,
        (cfg.min_docs, cfg.max_docs),
        cfg.noise,
        cfg.nonlinearity,
    )?;
    if cfg.features < WebRawConfig::MIN_FEATURES {
        return Err(DataError::Invalid(format!(
            "raw web data needs features >= {} (its non-linear terms read features 2 to 14), got {}",
            WebRawConfig::MIN_FEATURES,
            cfg.features
        )));
    }
    let d = cfg.features;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5257_4157_5745_4221);
    let world = World::draw(&mut rng, d, |j| family(j, d) == Family::Length);
    let beta_sq: f64 = world.beta.iter().map(|b| b * b).sum();
    let linear_weight = (1.0 - cfg.nonlinearity).sqrt();
    let nonlinear_weight = (cfg.nonlinearity * beta_sq / NONLINEAR_VARIANCE).sqrt();
    // The query's level: how much relevant material it has, on the scale of the within-query signal.
    let level_sd = 0.9 * beta_sq.sqrt();
    let (lo, hi) = ((cfg.min_docs as f64).ln(), (cfg.max_docs as f64 + 1.0).ln());
    let sizes: Vec<usize> = (0..cfg.queries)
        .map(|_| {
            let m = rng.random_range(lo..hi).exp().floor() as usize;
            m.clamp(cfg.min_docs, cfg.max_docs)
        })
        .collect();
    let families: Vec<Family> = (0..d).map(|j| family(j, d)).collect();
    let blocks = per_query(&sizes, cfg.seed, 0xD1B5_4A32_D192_ED03, |rng, _, m| {
        let shift: [f64; FACTORS] = std::array::from_fn(|_| rng.sample::<f64, _>(StandardNormal));
        let level = level_sd * rng.sample::<f64, _>(StandardNormal);
        // The query's own signal for its query-level columns, one per column.
        let query_signal: Vec<f64> = (0..d)
            .map(|j| {
                (0..FACTORS)
                    .map(|k| world.loadings[j][k] * shift[k])
                    .sum::<f64>()
                    + 0.5 * rng.sample::<f64, _>(StandardNormal)
            })
            .collect();
        let mut x = vec![0f32; m * d];
        let mut latent = Vec::with_capacity(m);
        let mut v = vec![0f64; d];
        let mut present = vec![false; d];
        for i in 0..m {
            let (z, signal, relevance_noise) = world.document(rng, &shift);
            for j in 0..d {
                v[j] = world.column_signal(rng, j, &z) / world.signal_sd[j];
            }
            for j in 0..d {
                present[j] = match families[j] {
                    Family::Count { threshold } | Family::Ratio { threshold } => v[j] > threshold,
                    Family::Bm25 { count } => present[count],
                    Family::PageRank => v[j] > PAGERANK_THRESHOLD,
                    _ => true,
                };
            }
            for j in 0..d {
                x[i * d + j] = match families[j] {
                    Family::Duplicate(_) => continue,
                    f => transform(f, v[j], query_signal[j] / world.signal_sd[j], present[j]),
                };
            }
            for j in 0..d {
                if let Family::Duplicate(src) = families[j] {
                    x[i * d + j] = x[i * d + src];
                }
            }
            let nonlinear = nonlinear_relevance(|j| v[j], |j| present[j]) - NONLINEAR_MEAN;
            latent.push(
                level
                    + linear_weight * signal
                    + nonlinear_weight * nonlinear
                    + cfg.noise * relevance_noise,
            );
        }
        (x, latent)
    });
    // One threshold set over every document: the grade shares hold over the data, not in each query.
    let mut sorted: Vec<f64> = blocks.iter().flat_map(|b| b.1.iter().copied()).collect();
    sorted.sort_unstable_by(f64::total_cmp);
    let n = sorted.len();
    let mut cum = 0.0;
    let thresholds: Vec<f64> = WebRawConfig::GRADE_SHARES[..4]
        .iter()
        .map(|s| {
            cum += s;
            sorted[((cum * n as f64) as usize).min(n - 1)]
        })
        .collect();
    let graded = blocks
        .into_iter()
        .map(|(x, latent)| {
            let labels = latent
                .iter()
                .map(|l| thresholds.iter().filter(|&&t| *l >= t).count() as f32)
                .collect();
            (x, labels)
        })
        .collect();
    assemble(graded, d, "r")
}
