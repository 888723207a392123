//! AdaRank (Xu & Li, SIGIR 2007, "AdaRank: A Boosting Algorithm for Information Retrieval"), as RankLib's
//! `-ranker 3` runs it: the weak rankers are single features (a query ranked by one feature's value), boosting
//! keeps a distribution P over queries that puts weight on the queries the current model ranks badly.
//!
//! Round t: pick the feature k maximising Σ_q P_t(q)·E(q, k), with E the measure of q ranked by feature k;
//! α_t = ½ ln(Σ_q P_t(q)(1 + E(q, k)) / Σ_q P_t(q)(1 − E(q, k))); the model f_t = f_{t−1} + α_t·x_k;
//! P_{t+1}(q) ∝ exp(−E(q, f_t)). A feature may win at most `max_consecutive` rounds in a row (RankLib's `-max`);
//! boosting stops when a round gains less than the tolerance on the training measure (that round is kept only if
//! it did not lower it). The round is chosen on validation data when given.

use ltr_core::{
    BestSoFar, Fit, FitContext, FitReport, Fitted, LinearModel, LtrError, Model, Result,
};
use ltr_data::Dataset;
use ltr_metrics::Metric;
use rayon::prelude::*;

use crate::coordinate_ascent::resolve_measure;
use crate::line_search::Problem;
use crate::measure::ListMeasure;

/// AdaRank settings (RankLib's names in parentheses).
#[derive(Debug, Clone, PartialEq)]
pub struct AdaRankParams {
    rounds: usize,
    tolerance: f64,
    max_consecutive: usize,
    measure: Option<ListMeasure>,
}

impl Default for AdaRankParams {
    fn default() -> Self {
        Self {
            rounds: 500,
            tolerance: 0.002,
            max_consecutive: 5,
            measure: None,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl AdaRankParams {
    /// Boosting rounds at most (`-round`, 500).
    pub fn rounds(mut self, rounds: usize) -> Self {
        self.rounds = rounds;
        self
    }
    /// Stop when a round gains less than this on the training measure (`-tolerance`, 0.002).
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }
    /// Rounds a feature may win in a row (`-max`, 5).
    pub fn max_consecutive(mut self, max_consecutive: usize) -> Self {
        self.max_consecutive = max_consecutive;
        self
    }
    /// The measure E (`-metric2t`): one in [0, 1] (NDCG, MAP, P@k, MRR, ERR); `None`: the context's.
    pub fn measure(mut self, measure: Option<ListMeasure>) -> Self {
        self.measure = measure;
        self
    }
}

impl AdaRankParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if self.rounds == 0 || self.max_consecutive == 0 {
            return Err(LtrError::param("rounds/max-consecutive", "need at least 1"));
        }
        if !(self.tolerance.is_finite()) {
            return Err(LtrError::param("tolerance", "need a finite number"));
        }
        Ok(())
    }
}

ltr_core::param_guard!(AdaRankParams => AdaRankValidParams);

/// Per-query measure of the ranking by `scores`.
fn per_query(p: &Problem<'_>, scores: &[f64]) -> Vec<f64> {
    p.per_query_values(scores)
}

impl Fit for AdaRankValidParams {
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let measure = resolve_measure(self.measure, ctx)?;
        if matches!(measure.metric(), Metric::Dcg(_)) {
            return Err(LtrError::param(
                "metric",
                "AdaRank needs a measure in [0, 1] (NDCG, MAP, P@k, MRR, ERR), not DCG",
            ));
        }
        let d = train.n_features();
        let nq = train.n_queries();
        if d == 0 || nq == 0 {
            return Err(LtrError::Training(
                "AdaRank needs at least one feature and one query".into(),
            ));
        }
        let problem = Problem::new(train, &measure)?;
        // E(q, k) for every feature: the weak rankers never change.
        let weak: Vec<Vec<f64>> = (0..d)
            .into_par_iter()
            .map(|k| {
                let col: Vec<f64> = problem.column(k).iter().map(|&v| v as f64).collect();
                per_query(&problem, &col)
            })
            .collect();
        let mut p = vec![1.0 / nq as f64; nq];
        let mut w = vec![0.0; d];
        let mut last = None;
        let mut run = 0;
        let mut train_measure = f64::NEG_INFINITY;
        let mut best = BestSoFar::new();
        let mut rounds = 0;
        ctx.progress().begin("rounds", Some(self.rounds as u64));
        for round in 1..=self.rounds {
            let mut pick: Option<(usize, f64)> = None;
            for (k, e) in weak.iter().enumerate() {
                if last == Some(k) && run >= self.max_consecutive {
                    continue;
                }
                let v: f64 = p.iter().zip(e).map(|(pq, eq)| pq * eq).sum();
                if pick.is_none_or(|(_, b)| v > b) {
                    pick = Some((k, v));
                }
            }
            let Some((k, _)) = pick else { break };
            let num: f64 = p.iter().zip(&weak[k]).map(|(pq, e)| pq * (1.0 + e)).sum();
            let den: f64 = p.iter().zip(&weak[k]).map(|(pq, e)| pq * (1.0 - e)).sum();
            // A feature perfect on every weighted query (den = 0) gets a large finite weight, not infinity.
            let alpha = 0.5 * (num / den.max(1e-12)).ln();
            let mut next = w.clone();
            next[k] += alpha;
            let e = per_query(&problem, &train.scores(&next));
            let m = e.iter().sum::<f64>() / nq as f64;
            let gain = m - train_measure;
            if gain < self.tolerance && round > 1 {
                if gain > 0.0 {
                    w = next;
                    rounds = round;
                    self.offer(ctx, &w, m, round, &mut best)?;
                }
                break;
            }
            w = next;
            train_measure = m;
            rounds = round;
            run = if last == Some(k) { run + 1 } else { 1 };
            last = Some(k);
            let z: f64 = e.iter().map(|v| (-v).exp()).sum();
            for (pq, v) in p.iter_mut().zip(&e) {
                *pq = (-v).exp() / z;
            }
            self.offer(ctx, &w, m, round, &mut best)?;
            ctx.progress().advance(
                round as u64,
                &format!("training {} {m:.4}", measure.metric()),
            );
        }
        ctx.progress().end();
        let kept = best
            .into_best()
            .ok_or_else(|| LtrError::Training("AdaRank ran no round".into()))?;
        let (round, weights, train_at) = kept.item;
        let report = FitReport {
            iterations: Some(rounds as u64),
            objective: Some(train_at),
            validation: ctx.validation().map(|_| kept.score),
            ..FitReport::default()
        }
        .select("rounds", round);
        Ok(Fitted::new(Model::Linear(LinearModel::new(weights))).with_report(report))
    }
}

impl AdaRankParams {
    /// Offer the model after `round` to the selection: by validation when given, else by the training measure.
    fn offer(
        &self,
        ctx: &FitContext<'_>,
        w: &[f64],
        train: f64,
        round: usize,
        best: &mut BestSoFar<(usize, Vec<f64>, f64)>,
    ) -> Result<()> {
        let judged = ctx
            .validate(&LinearModel::new(w.to_vec()))?
            .unwrap_or(train);
        best.offer(judged, (round, w.to_vec(), train));
        Ok(())
    }
}
