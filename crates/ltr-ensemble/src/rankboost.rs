//! RankBoost (Freund, Iyer, Schapire, Singer, JMLR 2003) with binary threshold weak rankers h(x) = 1\[x_f > θ\], the
//! baseline of seeds 000 and 003. The distribution over the pairs (i preferred over j) of every query is kept
//! implicitly: starting uniform, D_t(i, j) ∝ exp(−H(x_i)) · exp(H(x_j)) with H the current ensemble score, so each
//! round needs one O(n·K) pass to get every document's potential π(d) = Σ_j D(d, j) − Σ_i D(i, d), and the best
//! weak ranker maximises |r| = |Σ_d π(d) h(x_d)| over features and candidate thresholds, in O(n·d) on presorted
//! features. No pair is ever enumerated.

use ltr_core::{
    BestSoFar, Fit, FitContext, FitReport, Fitted, LtrError, Model, Result, Scorer, Stump,
    StumpEnsemble,
};
use ltr_data::Dataset;
use ltr_pairs::{split_by_offsets, Levels};
use rayon::prelude::*;

/// RankBoost settings.
#[derive(Debug, Clone, PartialEq)]
pub struct RankBoostParams {
    /// Rounds T_max (RankLib: 300).
    rounds: usize,
    /// Candidate thresholds per feature, evenly spaced between its minimum and maximum (RankLib: 10); 0 = every
    /// distinct value.
    thresholds: usize,
    /// Choose T ≤ T_max on validation data (by the fit context's measure).
    select_rounds: bool,
}

impl Default for RankBoostParams {
    fn default() -> Self {
        Self {
            rounds: 300,
            thresholds: 10,
            select_rounds: true,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl RankBoostParams {
    /// Set `rounds`: rounds T_max (RankLib: 300).
    pub fn rounds(mut self, rounds: usize) -> Self {
        self.rounds = rounds;
        self
    }
    /// Set `thresholds`: candidate thresholds per feature, evenly spaced between its minimum and maximum (RankLib: 10); 0 = every
    pub fn thresholds(mut self, thresholds: usize) -> Self {
        self.thresholds = thresholds;
        self
    }
    /// Set `select_rounds`: choose T ≤ T_max on validation data (by the fit context's measure).
    pub fn select_rounds(mut self, select_rounds: bool) -> Self {
        self.select_rounds = select_rounds;
        self
    }
}

impl RankBoostParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if self.rounds == 0 {
            return Err(LtrError::param("rounds", "must be at least 1"));
        }
        Ok(())
    }
}

ltr_core::param_guard!(RankBoostParams);

/// A trained RankBoost.
#[derive(Debug, Clone)]
pub struct RankBoostFit {
    /// The ensemble (truncated to the chosen round).
    pub model: StumpEnsemble,
    /// Rounds kept.
    pub rounds_used: usize,
    /// Validation metric per round (empty without validation).
    pub validation_curve: Vec<f64>,
}

/// Document potentials π(d) (normalised so that Σ_pairs D = 1), from the ensemble scores `h`.
fn potentials(ds: &Dataset, levels: &Levels, h: &[f64], pi: &mut [f64]) {
    let k = levels.count();
    let z: Vec<f64> = split_by_offsets(pi, ds.query_offsets())
        .into_par_iter()
        .enumerate()
        .map(|(q, p)| {
            let r = ds.query_range(q);
            let lev = &levels.of_doc[r.clone()];
            let hq = &h[r];
            let c = hq.iter().sum::<f64>() / hq.len() as f64;
            // v_i = exp(−(H_i − c)) (preferred side), u_j = exp(H_j − c) (other side).
            let (mut v_by, mut u_by) = (vec![0.0f64; k], vec![0.0f64; k]);
            for (i, &l) in lev.iter().enumerate() {
                v_by[l as usize] += (-(hq[i] - c)).exp();
                u_by[l as usize] += (hq[i] - c).exp();
            }
            // below[l] = Σ u over levels < l; above[l] = Σ v over levels > l.
            let mut below = vec![0.0; k];
            for l in 1..k {
                below[l] = below[l - 1] + u_by[l - 1];
            }
            let mut above = vec![0.0; k];
            for l in (0..k.saturating_sub(1)).rev() {
                above[l] = above[l + 1] + v_by[l + 1];
            }
            let mut zq = 0.0;
            for (i, &l) in lev.iter().enumerate() {
                let (v, u) = ((-(hq[i] - c)).exp(), (hq[i] - c).exp());
                p[i] = v * below[l as usize] - u * above[l as usize];
                zq += v * below[l as usize];
            }
            zq
        })
        .collect();
    let total: f64 = z.iter().sum();
    if total > 0.0 {
        pi.iter_mut().for_each(|x| *x /= total);
    }
}

impl RankBoostParams {
    /// Boost on `train`, measuring every round on the context's validation data (the [`Fit`] impl wraps this).
    pub fn train(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<RankBoostFit> {
        let validation = ctx.validation();
        if self.rounds == 0 {
            return Err(LtrError::param("rounds", "must be at least 1"));
        }
        let n = train.n_docs();
        let d = train.n_features();
        let levels = Levels::new(train);
        // Presort every feature once (descending value), and pick candidate thresholds.
        let columns: Vec<(Vec<u32>, Vec<f32>)> = (0..d)
            .into_par_iter()
            .map(|f| {
                let vals: Vec<f32> = (0..n).map(|i| train.row(i).get(f)).collect();
                let mut idx: Vec<u32> = (0..n as u32).collect();
                idx.sort_by(|&a, &b| {
                    vals[b as usize]
                        .total_cmp(&vals[a as usize])
                        .then(a.cmp(&b))
                });
                let (lo, hi) = (vals[idx[n - 1] as usize], vals[idx[0] as usize]);
                let mut th: Vec<f32> = if self.thresholds == 0 {
                    let mut u: Vec<f32> = idx.iter().map(|&i| vals[i as usize]).collect();
                    u.dedup();
                    u.into_iter().skip(1).collect() // x > v for every distinct v except the max
                } else {
                    (0..self.thresholds)
                        .map(|t| lo + (hi - lo) * t as f32 / self.thresholds as f32)
                        .collect()
                };
                th.sort_by(|a, b| b.total_cmp(a));
                th.dedup();
                (idx, th)
            })
            .collect();
        let mut h = vec![0.0f64; n];
        let mut pi = vec![0.0f64; n];
        let mut model = StumpEnsemble {
            stumps: Vec::new(),
            n_features: d,
        };
        let mut vscores = validation.map(|v| vec![0.0f64; v.n_docs()]);
        let mut curve = Vec::new();
        let mut best = BestSoFar::new();
        ctx.progress().begin("rounds", Some(self.rounds as u64));
        for round in 0..self.rounds {
            potentials(train, &levels, &h, &mut pi);
            // Best (feature, threshold) by |r|; ties: lower feature, higher threshold.
            let best_per_feature: Vec<(f64, f32)> = columns
                .par_iter()
                .enumerate()
                .map(|(f, (idx, th))| {
                    let mut acc = 0.0;
                    let mut p = 0;
                    let mut best = (0.0f64, f32::NAN);
                    for &t in th {
                        while p < idx.len() && train.row(idx[p] as usize).get(f) > t {
                            acc += pi[idx[p] as usize];
                            p += 1;
                        }
                        if acc.abs() > best.0.abs() {
                            best = (acc, t);
                        }
                    }
                    best
                })
                .collect();
            let (f, &(r, t)) =
                best_per_feature
                    .iter()
                    .enumerate()
                    .fold((0, &(0.0f64, f32::NAN)), |b, (f, x)| {
                        if x.0.abs() > b.1 .0.abs() {
                            (f, x)
                        } else {
                            b
                        }
                    });
            if r.abs() < 1e-12 || t.is_nan() {
                break; // no weak ranker helps any more
            }
            let r = r.clamp(-1.0 + 1e-12, 1.0 - 1e-12);
            let alpha = 0.5 * ((1.0 + r) / (1.0 - r)).ln();
            let stump = Stump {
                feature: f,
                threshold: t,
                alpha,
            };
            model.stumps.push(stump);
            h.par_iter_mut().enumerate().for_each(|(i, hi)| {
                if train.row(i).get(f) > t {
                    *hi += alpha;
                }
            });
            if let (Some(v), Some(vs)) = (validation, vscores.as_mut()) {
                for (i, s) in vs.iter_mut().enumerate() {
                    if v.row(i).get(f) > t {
                        *s += alpha;
                    }
                }
                let m = ctx.measure(v, vs)?;
                curve.push(m);
                best.offer(m, round + 1);
            }
            ctx.progress().advance(round as u64 + 1, "");
        }
        ctx.progress().end();
        let rounds_used = match best.into_best() {
            Some(b) if self.select_rounds => b.item,
            _ => model.stumps.len(),
        };
        Ok(RankBoostFit {
            model: model.truncated(rounds_used),
            rounds_used,
            validation_curve: curve,
        })
    }
}

impl Fit for RankBoostParams {
    /// [`RankBoostParams::train`]; the report holds the rounds kept (`rounds`), the diagnostics the validation
    /// curve.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let fit = self.train(train, ctx)?;
        let report = FitReport {
            iterations: Some(fit.validation_curve.len().max(fit.rounds_used) as u64),
            validation: fit
                .validation_curve
                .get(fit.rounds_used.wrapping_sub(1))
                .copied(),
            ..Default::default()
        }
        .select("rounds", fit.rounds_used);
        Ok(Fitted::new(Model::Stumps(fit.model))
            .with_report(report)
            .with_diagnostics(serde_json::json!({"validation_curve": fit.validation_curve})))
    }
}

impl RankBoostFit {
    /// Scores of the kept ensemble.
    pub fn scores(&self, ds: &Dataset) -> Vec<f64> {
        self.model.score_dataset(ds)
    }
}
