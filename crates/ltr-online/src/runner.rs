//! Replaying a dataset as a stream of queries: rank with the current weights, record NDCG@k, then update.
//! Produces the average cumulative NDCG@k curve that seed 002 plots.

use ltr_data::Dataset;
use rand::{Rng, SeedableRng};

use crate::learners::{rml, OnlineRanker, PredictTies, Rml};

/// How to replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StreamConfig {
    /// Passes over the data.
    pub passes: usize,
    /// Each query is kept in a pass with this probability (the Yahoo/Yandex protocol uses 0.8).
    pub keep_probability: f64,
    /// Seed of the subsampling.
    pub seed: u64,
    /// k of the recorded NDCG@k.
    pub k: usize,
    /// Tie order of the recorded ranking.
    pub ties: PredictTies,
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            passes: 1,
            keep_probability: 1.0,
            seed: 1,
            k: 10,
            ties: PredictTies::ReverseInput,
        }
    }
}

/// What a replay produced.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamResult {
    /// NDCG@k of every round, before the update (a query without relevant documents scores 1, as in the code).
    pub per_round: Vec<f64>,
    /// (1/t) Σ_{τ ≤ t} NDCG@k.
    pub average_cumulative: Vec<f64>,
    /// Σ_t (1 − NDCG@k): the cumulative loss.
    pub cumulative_loss: Vec<f64>,
    /// Wall time.
    pub seconds: f64,
}

/// Replay `data` (each dataset in turn, e.g. the five training folds) through `learner`.
pub fn replay(
    learner: &mut dyn OnlineRanker,
    data: &[&Dataset],
    cfg: &StreamConfig,
) -> StreamResult {
    let t0 = std::time::Instant::now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut per_round = Vec::new();
    let mut avg = Vec::new();
    let mut cum = Vec::new();
    let (mut sum, mut loss_sum) = (0.0, 0.0);
    let mut t = 0usize;
    for _ in 0..cfg.passes {
        for ds in data {
            for q in ds.queries() {
                if cfg.keep_probability < 1.0 && rng.random::<f64>() >= cfg.keep_probability {
                    continue;
                }
                t += 1;
                let s = learner.score(&q);
                let loss = rml(&s, q.labels(), Rml::Ndcg(cfg.k), cfg.ties);
                let ndcg = 1.0 - loss;
                sum += ndcg;
                loss_sum += loss;
                per_round.push(ndcg);
                avg.push(sum / t as f64);
                cum.push(loss_sum);
                learner.update(t, &q, &s);
            }
        }
    }
    StreamResult {
        per_round,
        average_cumulative: avg,
        cumulative_loss: cum,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

/// Mean over the queries of `ds` of 1 − RML for fixed weights `w` (e.g. NDCG@10 with `Rml::Ndcg(10)`), the online
/// code's measure: a query without relevant documents counts 1.
pub fn mean_measure(ds: &Dataset, w: &[f64], measure: Rml, ties: PredictTies) -> f64 {
    let total: f64 = ds
        .queries()
        .map(|q| {
            let mut s = vec![0.0; q.len()];
            q.scores_into(w, &mut s);
            1.0 - rml(&s, q.labels(), measure, ties)
        })
        .sum();
    total / ds.n_queries().max(1) as f64
}
