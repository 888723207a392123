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
const LINK_SCORE: usize = 3;
const TERM_COVERAGE: usize = 4;
const TITLE_MATCH: usize = 7;
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

    /// xxh3 of the LETOR text `write_letor_to` gives for a generated set: the bytes a user's file would hold.
    fn letor_hash(cfg: &WebConfig) -> u64 {
        let mut bytes = Vec::new();
        crate::write::write_letor_to(&generate_web(cfg).unwrap(), &mut bytes).unwrap();
        xxhash_rust::xxh3::xxh3_64(&bytes)
    }

    #[test]
    fn nonlinearity_zero_is_the_original_profile_byte_for_byte() {
        // Hashes of the generator before `nonlinearity` existed (b791418), on a 20-feature set and on a
        // 136-feature one.
        let small = WebConfig {
            queries: 12,
            min_docs: 5,
            max_docs: 30,
            features: 20,
            noise: 0.6,
            seed: 11,
            nonlinearity: 0.0,
        };
        assert_eq!(letor_hash(&small), 0xf6b183d1_2f2e61a3);
        let wide = WebConfig {
            queries: 3,
            seed: 42,
            ..Default::default()
        };
        assert_eq!(
            wide.nonlinearity, 0.0,
            "the library default stays the original profile"
        );
        assert_eq!(letor_hash(&wide), 0x6c800ef2_b04c9102);
    }

    #[test]
    fn nonlinear_profile_is_reproducible_and_changes_only_the_grades() {
        let linear = WebConfig {
            queries: 16,
            features: 40,
            noise: 0.6,
            seed: 5,
            ..Default::default()
        };
        let cfg = WebConfig {
            nonlinearity: WebConfig::CALIBRATED_NONLINEARITY,
            ..linear.clone()
        };
        let a = generate_web(&cfg).unwrap();
        let one_thread = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let mut bytes_a = Vec::new();
        crate::write::write_letor_to(&a, &mut bytes_a).unwrap();
        let mut bytes_b = Vec::new();
        crate::write::write_letor_to(
            &one_thread.install(|| generate_web(&cfg).unwrap()),
            &mut bytes_b,
        )
        .unwrap();
        assert!(
            bytes_a == bytes_b,
            "same seed, 1 thread against the pool: different bytes"
        );
        let old = generate_web(&linear).unwrap();
        assert_eq!(a.query_offsets(), old.query_offsets());
        assert!((0..a.n_docs())
            .all(|i| (0..a.n_features()).all(|j| a.row(i).get(j) == old.row(i).get(j))));
        let moved = (0..a.n_docs())
            .filter(|&i| a.labels()[i] != old.labels()[i])
            .count();
        // Measured: 363 of 1,835 grades move at the calibrated nonlinearity.
        assert!(
            moved * 10 > a.n_docs(),
            "only {moved} of {} grades moved",
            a.n_docs()
        );
        // Grades still follow MSLR's shares: they come from each query's ranking, whatever the relevance.
        let share = |ds: &Dataset, g: f32| ds.labels().iter().filter(|&&l| l == g).count();
        for g in 0..5 {
            assert_eq!(share(&a, g as f32), share(&old, g as f32), "grade {g}");
        }
    }

    /// The link score's effect on the grade, split by whether the title matches: the mean grade of documents
    /// whose link score (column 3) is above its median minus that of those below, among documents whose title
    /// match (column 7) is in its top third, minus the same difference among the rest. A grade additive in the
    /// features (what a linear ranker can express) has the same link effect in both groups.
    fn title_gates_link_score(ds: &Dataset) -> f64 {
        let column = |j: usize| {
            (0..ds.n_docs())
                .map(|i| ds.row(i).get(j))
                .collect::<Vec<f32>>()
        };
        let quantile = |v: &[f32], q: f64| {
            let mut s = v.to_vec();
            s.sort_by(f32::total_cmp);
            s[((s.len() - 1) as f64 * q) as usize]
        };
        let (title, link) = (column(TITLE_MATCH), column(LINK_SCORE));
        let (title_level, link_median) = (quantile(&title, 2.0 / 3.0), quantile(&link, 0.5));
        let mut sums = [[0.0f64; 2]; 2];
        let mut counts = [[0usize; 2]; 2];
        for i in 0..ds.n_docs() {
            let (t, l) = (
                usize::from(title[i] > title_level),
                usize::from(link[i] > link_median),
            );
            sums[t][l] += f64::from(ds.labels()[i]);
            counts[t][l] += 1;
        }
        let mean = |t: usize, l: usize| sums[t][l] / counts[t][l] as f64;
        (mean(1, 1) - mean(1, 0)) - (mean(0, 1) - mean(0, 0))
    }

    #[test]
    fn a_title_match_gates_the_link_score_only_when_nonlinear() {
        let cfg = |nonlinearity| WebConfig {
            queries: 40,
            noise: 0.6,
            seed: 3,
            nonlinearity,
            ..Default::default()
        };
        let linear = title_gates_link_score(&generate_web(&cfg(0.0)).unwrap());
        let calibrated = title_gates_link_score(
            &generate_web(&cfg(WebConfig::CALIBRATED_NONLINEARITY)).unwrap(),
        );
        let full = title_gates_link_score(&generate_web(&cfg(1.0)).unwrap());
        // Measured: 0.015, 0.246 and 0.575 grades.
        assert!(linear.abs() < 0.08, "linear profile: {linear}");
        assert!(calibrated > 0.15, "calibrated profile: {calibrated}");
        assert!(
            full > 0.4 && full > 2.0 * calibrated,
            "fully non-linear profile: {full}"
        );
    }

    #[test]
    fn nonlinearity_outside_zero_to_one_or_with_too_few_features_is_refused() {
        for bad in [-0.1, 1.5, f64::NAN, f64::INFINITY] {
            let err = generate_web(&WebConfig {
                queries: 2,
                nonlinearity: bad,
                ..Default::default()
            })
            .unwrap_err()
            .to_string();
            assert!(
                err.contains("nonlinearity must lie in [0, 1]")
                    && err.contains(&format!("got {bad}")),
                "{bad}: {err}"
            );
        }
        let few = WebConfig {
            queries: 2,
            features: WebConfig::MIN_NONLINEAR_FEATURES - 1,
            nonlinearity: 0.5,
            ..Default::default()
        };
        let err = generate_web(&few).unwrap_err().to_string();
        assert!(
            err.contains("needs features >= 14") && err.contains("got 13"),
            "{err}"
        );
        // The original profile keeps its own floor of 8 features, and both ends of the range are accepted.
        assert!(generate_web(&WebConfig {
            nonlinearity: 0.0,
            ..few.clone()
        })
        .is_ok());
        for edge in [0.0, 1.0] {
            assert!(generate_web(&WebConfig {
                queries: 2,
                nonlinearity: edge,
                ..Default::default()
            })
            .is_ok());
        }
    }
}
