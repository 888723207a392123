//! Explicit pair sets: index pairs (never difference vectors) with optional weights, grouped by query.

use ltr_data::Dataset;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rayon::prelude::*;

use crate::levels::{LevelWeights, Levels};

/// Which document pairs of a query to use.
#[derive(Debug, Clone, PartialEq)]
pub enum PairScheme {
    /// Every pair of documents with different labels (the papers' default).
    AllDifferent,
    /// Only pairs whose labels are adjacent levels of the dataset (e.g. 2–1 and 1–0, not 2–0).
    Adjacent,
    /// Only pairs with these two labels (preferred, other): one MHR base ranker.
    Grades(f32, f32),
    /// At most this many pairs per query drawn uniformly (without replacement) from all different-label pairs.
    Sampled {
        /// Pairs per query.
        per_query: usize,
        /// Seed.
        seed: u64,
    },
}

/// One training pair: row `hi` is preferred over row `lo` (global row indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair {
    /// Preferred document.
    pub hi: u32,
    /// Less relevant document.
    pub lo: u32,
}

/// Pairs grouped by query: query `q` owns `pairs[offsets[q]..offsets[q + 1]]`. Within a query, pairs come in row
/// order of the preferred document, then of the other (deterministic).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PairSet {
    /// The pairs.
    pub pairs: Vec<Pair>,
    /// Query boundaries into `pairs`.
    pub offsets: Vec<usize>,
}

impl PairSet {
    /// Build the pairs of `ds` under `scheme`, in parallel over queries.
    pub fn build(ds: &Dataset, scheme: &PairScheme) -> Self {
        let levels = Levels::new(ds);
        let k = levels.count();
        let mask = match scheme {
            PairScheme::Adjacent => Some(LevelWeights::adjacent(k)),
            PairScheme::Grades(a, b) => match (levels.index_of(*a), levels.index_of(*b)) {
                (Some(ia), Some(ib)) if ia > ib => Some(LevelWeights::single(k, ia, ib)),
                _ => Some(LevelWeights::zeros(k)),
            },
            _ => None,
        };
        let per_query: Vec<Vec<Pair>> = ds
            .par_queries()
            .map(|q| {
                let r = q.rows();
                let mut out = Vec::new();
                for i in r.clone() {
                    let li = levels.of_doc[i] as usize;
                    for j in r.clone() {
                        let lj = levels.of_doc[j] as usize;
                        if li > lj && mask.as_ref().is_none_or(|m| m.get(li, lj) != 0.0) {
                            out.push(Pair {
                                hi: i as u32,
                                lo: j as u32,
                            });
                        }
                    }
                }
                if let PairScheme::Sampled { per_query, seed } = scheme {
                    if out.len() > *per_query {
                        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(
                            seed ^ (q.index() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                        );
                        out.shuffle(&mut rng);
                        out.truncate(*per_query);
                        out.sort_by_key(|p| (p.hi, p.lo));
                    }
                }
                out
            })
            .collect();
        let mut offsets = Vec::with_capacity(per_query.len() + 1);
        offsets.push(0);
        let total: usize = per_query.iter().map(Vec::len).sum();
        let mut pairs = Vec::with_capacity(total);
        for p in per_query {
            pairs.extend(p);
            offsets.push(pairs.len());
        }
        Self { pairs, offsets }
    }
    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }
    /// True when there are no pairs.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
    /// Number of queries.
    pub fn n_queries(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    /// The pairs of query `q`.
    pub fn query(&self, q: usize) -> &[Pair] {
        &self.pairs[self.offsets[q]..self.offsets[q + 1]]
    }
    /// The query of every pair (for per-query weights).
    pub fn query_of_pairs(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len());
        for q in 0..self.n_queries() {
            out.extend(std::iter::repeat_n(
                q as u32,
                self.offsets[q + 1] - self.offsets[q],
            ));
        }
        out
    }
}

/// Number of different-label pairs of every query, counted from label histograms (no enumeration).
pub fn count_pairs_per_query(ds: &Dataset) -> Vec<u64> {
    let levels = Levels::new(ds);
    let k = levels.count();
    ds.queries()
        .map(|q| {
            let mut hist = vec![0u64; k];
            for i in q.rows() {
                hist[levels.of_doc[i] as usize] += 1;
            }
            let mut below = 0u64;
            let mut total = 0u64;
            for h in hist {
                total += h * below;
                below += h;
            }
            total
        })
        .collect()
}

/// How many different-label pairs `scores` order correctly (the more relevant document strictly higher), over all
/// queries of `ds`: per query one sort and a sweep with per-level counts, O(n log n + nK), never the pairs.
pub fn count_ordered_pairs(ds: &Dataset, scores: &[f64]) -> u64 {
    count_ordered_pairs_with(&Levels::new(ds), ds, scores)
}

/// [`count_ordered_pairs`] with the grade levels of `ds` already built (a caller counting every epoch sorts the
/// labels once).
pub fn count_ordered_pairs_with(levels: &Levels, ds: &Dataset, scores: &[f64]) -> u64 {
    assert_eq!(scores.len(), ds.n_docs(), "one score per document");
    assert_eq!(
        levels.of_doc.len(),
        ds.n_docs(),
        "the levels of this dataset"
    );
    let k = levels.count();
    (0..ds.n_queries())
        .into_par_iter()
        .map_init(
            || (Vec::new(), vec![0u64; k]),
            |(order, below), q| {
                let rows = ds.query_range(q);
                order.clear();
                order.extend(rows);
                order.sort_by(|&a: &usize, &b: &usize| scores[a].total_cmp(&scores[b]));
                below.iter_mut().for_each(|c| *c = 0);
                let mut correct = 0u64;
                let mut group = 0;
                while group < order.len() {
                    // Documents of equal score order no pair between them: count them against the strictly lower
                    // ones first, then add them.
                    let end = group
                        + order[group..]
                            .iter()
                            .take_while(|&&i| scores[i] == scores[order[group]])
                            .count();
                    for &i in &order[group..end] {
                        let l = levels.of_doc[i] as usize;
                        correct += below[..l].iter().sum::<u64>();
                    }
                    for &i in &order[group..end] {
                        below[levels.of_doc[i] as usize] += 1;
                    }
                    group = end;
                }
                correct
            },
        )
        .sum()
}

/// Split the queries of `ds` into `parts` contiguous runs of whole queries with about equal work, for
/// data-parallel training: a query weighs its different-label pairs plus its documents (pairs drive the
/// perceptrons and the cutting plane; every document is scored and sorted, even in a query without pairs).
/// Every run holds at least one query; an error when there are fewer queries than parts.
pub fn balanced_query_ranges(
    ds: &Dataset,
    parts: usize,
) -> Result<Vec<std::ops::Range<usize>>, String> {
    let nq = ds.n_queries();
    if parts == 0 || nq < parts {
        return Err(format!(
            "{nq} queries cannot be split into {parts} parts of whole queries (every rank needs at least one)"
        ));
    }
    let weights: Vec<u64> = count_pairs_per_query(ds)
        .iter()
        .zip(ds.queries())
        .map(|(&p, q)| p + q.len() as u64)
        .collect();
    let total: u128 = weights.iter().map(|&w| w as u128).sum();
    let mut cuts = vec![0usize];
    let mut prefix: u128 = 0;
    let mut q = 0;
    for r in 1..parts {
        let target = total * r as u128 / parts as u128;
        // Leave at least one query for each later part and take at least one for this one.
        let last_allowed = nq - (parts - r);
        while q < last_allowed
            && (q < cuts[r - 1] + 1 || prefix + (weights[q] as u128) / 2 < target)
        {
            prefix += weights[q] as u128;
            q += 1;
        }
        cuts.push(q);
    }
    cuts.push(nq);
    Ok(cuts.windows(2).map(|w| w[0]..w[1]).collect())
}

/// Number of pairs per label pair (preferred label, other label), summed over queries, without enumeration.
pub fn count_pairs_per_grade(ds: &Dataset) -> Vec<((f32, f32), u64)> {
    let levels = Levels::new(ds);
    let k = levels.count();
    let mut counts = vec![0u64; k * k];
    for q in ds.queries() {
        let mut hist = vec![0u64; k];
        for i in q.rows() {
            hist[levels.of_doc[i] as usize] += 1;
        }
        for a in 0..k {
            for b in 0..a {
                counts[a * k + b] += hist[a] * hist[b];
            }
        }
    }
    let mut out = Vec::new();
    for a in (0..k).rev() {
        for b in (0..a).rev() {
            if counts[a * k + b] > 0 {
                out.push(((levels.values[a], levels.values[b]), counts[a * k + b]));
            }
        }
    }
    out
}
