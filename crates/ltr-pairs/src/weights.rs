//! Pair weights: per-query balancing η_q (seed 000), query weights μ_q and rank-pair weights τ (seed 004).

use ltr_data::{Dataset, ExactVec};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::levels::{LevelWeights, Levels};
use crate::pairset::count_pairs_per_query;

/// η_q = 1/|S_q|: the committee perceptron's per-query step (0 for a query without pairs).
pub fn perceptron_query_steps(ds: &Dataset) -> Vec<f64> {
    count_pairs_per_query(ds)
        .into_iter()
        .map(|c| if c == 0 { 0.0 } else { 1.0 / c as f64 })
        .collect()
}

/// μ_q = max_q' |P_q'| / |P_q| (seed 004 §5.3): the query with most pairs gets 1 (0 for a query without pairs).
pub fn query_weights_mu(ds: &Dataset) -> Vec<f64> {
    let most = count_pairs_per_query(ds).into_iter().max().unwrap_or(0);
    query_weights_mu_of(ds, most)
}

/// μ_q of the queries of `ds` when the query with most pairs, perhaps on another rank of a distributed run, has
/// `most_pairs` pairs.
pub fn query_weights_mu_of(ds: &Dataset, most_pairs: u64) -> Vec<f64> {
    count_pairs_per_query(ds)
        .into_iter()
        .map(|n| {
            if n == 0 {
                0.0
            } else {
                most_pairs as f64 / n as f64
            }
        })
        .collect()
}

/// What to do with queries that lack one of the two grades of a rank pair in the τ average.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingGrade {
    /// Count the query with a drop of 0 (the paper averages "over all the queries").
    #[default]
    CountZero,
    /// Leave the query out of that rank pair's average.
    Skip,
}

fn gain(l: f32) -> f64 {
    ltr_metrics::Gain::Exponential.of(l)
}

/// τ_(s,t) in closed form (algorithms.md §5.2): the expected NDCG@1 drop when one document of label s and one of
/// label t are swapped in a query's perfect ranking is 1[s = the query's top label] · (1/n_{q,s}) · (1 − G(t)/G(s)),
/// averaged over queries. Returned as level weights over the levels of `ds`.
pub fn tau_closed_form(ds: &Dataset, missing: MissingGrade) -> LevelWeights {
    let levels = Levels::new(ds);
    tau_from_sums(levels.count(), &tau_closed_form_sums(&levels, ds, missing))
}

/// The sums behind [`tau_closed_form`] over `levels` (which may hold labels `ds` lacks, such as every rank's labels
/// in a distributed run): for each level pair (a, b), a > b, the sum of the queries' drops (entry a·K + b) and the
/// number of queries averaged (entry K² + a·K + b). Exact sums, so those of several shards of the queries, added
/// (`ltr_core::Allreduce::sum_exact`), are the sums of all the queries, whatever the split.
pub fn tau_closed_form_sums(levels: &Levels, ds: &Dataset, missing: MissingGrade) -> ExactVec {
    let k = levels.count();
    let mut sums = ExactVec::new(2 * k * k);
    let mut hist = vec![0usize; k];
    for q in ds.queries() {
        hist.iter_mut().for_each(|h| *h = 0);
        for i in q.rows() {
            hist[levels.of_doc[i] as usize] += 1;
        }
        let top = (0..k)
            .rev()
            .find(|&a| hist[a] > 0)
            .expect("non-empty query");
        for a in 0..k {
            for b in 0..a {
                let present = hist[a] > 0 && hist[b] > 0;
                if !present && missing == MissingGrade::Skip {
                    continue;
                }
                sums.add(k * k + a * k + b, 1.0);
                if present && a == top {
                    let (gs, gt) = (gain(levels.values[a]), gain(levels.values[b]));
                    if gs > 0.0 {
                        sums.add(a * k + b, (1.0 - gt / gs) / hist[a] as f64);
                    }
                }
            }
        }
    }
    sums
}

/// τ over K levels from [`tau_closed_form_sums`]: each level pair's drop sum over its query count (0 when no query
/// counts).
pub fn tau_from_sums(k: usize, sums: &ExactVec) -> LevelWeights {
    assert_eq!(sums.len(), 2 * k * k, "two sums per level pair");
    let mut w = LevelWeights::zeros(k);
    for a in 0..k {
        for b in 0..a {
            let count = sums.value(k * k + a * k + b);
            if count > 0.0 {
                w.set(a, b, sums.value(a * k + b) / count);
            }
        }
    }
    w
}

/// τ_(s,t) by the paper's simulation: for every query, `repeats` times swap a random document of label s with a
/// random one of label t in the perfect ranking and record 1 − NDCG@1; average over queries and repeats.
pub fn tau_monte_carlo(
    ds: &Dataset,
    repeats: usize,
    seed: u64,
    missing: MissingGrade,
) -> LevelWeights {
    let levels = Levels::new(ds);
    let k = levels.count();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sum = vec![0.0f64; k * k];
    let mut cnt = vec![0usize; k * k];
    for q in ds.queries() {
        // Perfect ranking: label descending, ties by row.
        let mut perfect: Vec<usize> = q.rows().collect();
        perfect.sort_by(|&x, &y| levels.of_doc[y].cmp(&levels.of_doc[x]).then(x.cmp(&y)));
        let top_gain = gain(levels.values[levels.of_doc[perfect[0]] as usize]);
        for a in 0..k {
            for b in 0..a {
                let pos_a: Vec<usize> = (0..perfect.len())
                    .filter(|&p| levels.of_doc[perfect[p]] as usize == a)
                    .collect();
                let pos_b: Vec<usize> = (0..perfect.len())
                    .filter(|&p| levels.of_doc[perfect[p]] as usize == b)
                    .collect();
                if pos_a.is_empty() || pos_b.is_empty() {
                    if missing == MissingGrade::CountZero {
                        cnt[a * k + b] += 1;
                    }
                    continue;
                }
                let mut drop = 0.0;
                for _ in 0..repeats {
                    let pa = pos_a[rng.random_range(0..pos_a.len())];
                    let pb = pos_b[rng.random_range(0..pos_b.len())];
                    // After the swap, position 0 holds label b if pa was 0; pb is never 0 (b < a ≤ top).
                    let first = if pa == 0 {
                        b
                    } else {
                        levels.of_doc[perfect[0]] as usize
                    };
                    let ndcg1 = if top_gain > 0.0 {
                        gain(levels.values[first]) / top_gain
                    } else {
                        0.0
                    };
                    drop += 1.0 - ndcg1;
                    let _ = pb;
                }
                sum[a * k + b] += drop / repeats as f64;
                cnt[a * k + b] += 1;
            }
        }
    }
    let mut w = LevelWeights::zeros(k);
    for a in 0..k {
        for b in 0..a {
            if cnt[a * k + b] > 0 {
                w.set(a, b, sum[a * k + b] / cnt[a * k + b] as f64);
            }
        }
    }
    w
}
