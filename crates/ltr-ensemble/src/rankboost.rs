//! RankBoost (Freund, Iyer, Schapire, Singer, JMLR 2003) with binary threshold weak rankers h(x) = 1\[x_f > θ\], the
//! baseline of seeds 000 and 003. The distribution over the pairs (i preferred over j) of every query is kept
//! implicitly: starting uniform, D_t(i, j) ∝ exp(−H(x_i)) · exp(H(x_j)) with H the current ensemble score, so each
//! round needs one O(n·K) pass to get every document's potential π(d) = Σ_j D(d, j) − Σ_i D(i, d), and the best
//! weak ranker maximises |r| = |Σ_d π(d) h(x_d)| over features and candidate thresholds, in O(n·d): each document
//! adds its potential to one bucket per feature (its place among that feature's thresholds, one byte), and r of a
//! threshold is a sum of buckets. No pair is ever enumerated. The bucket sums are exact over queries, so the queries
//! can be spread over ranks ([`RankBoostParams::fit_distributed`]) and give the same model bit for bit.

use ltr_core::{
    Allreduce, BestSoFar, Fit, FitContext, FitDistributed, FitReport, Fitted, LtrError, Model,
    Result, Scorer, SingleProcess, Stump, StumpEnsemble,
};
use ltr_data::{exact_sum_over_queries, Dataset, ExactVec};
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

ltr_core::param_guard!(RankBoostParams => RankBoostValidParams);

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

/// Document potentials π(d) of the pair distribution, unnormalised, from the ensemble scores `h`, written into `pi`;
/// returns their normaliser Σ_pairs D over every rank's queries (each query's part in f64, summed exactly, so the
/// same whatever the split).
fn potentials(
    ds: &Dataset,
    levels: &Levels,
    h: &[f64],
    pi: &mut [f64],
    comm: &dyn Allreduce,
) -> Result<f64> {
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
    let mut total = ExactVec::new(1);
    for zq in z {
        total.add(0, zq);
    }
    comm.sum_exact(&mut total)?;
    Ok(total.value(0))
}

/// The weak rankers a round chooses from, and how it scores them.
enum Candidates {
    /// A few thresholds per feature (the default): every document's bucket among them.
    Buckets(Buckets),
    /// Every distinct value a threshold (`thresholds = 0`, one process): each feature presorted.
    Sorted(Vec<(Vec<u32>, Vec<f32>)>),
}

/// Each feature's candidate thresholds and every document's place among them. Bucket b of a value is the number
/// of thresholds ≥ it, so a document counts towards threshold j (x > θ_j, thresholds descending) exactly when its
/// bucket is ≤ j: r_j = Σ over buckets 0..=j of the bucket's potential sum. One byte per document and feature (two
/// above 255 thresholds) where presorted columns took eight.
struct Buckets {
    /// Per feature, its thresholds in descending order.
    thresholds: Vec<Vec<f32>>,
    /// Where feature f's T_f + 1 bucket sums start in the flat sums.
    offsets: Vec<usize>,
    /// The bucket of (document i, feature f) at i·d + f.
    cells: Cells,
}

enum Cells {
    Narrow(Vec<u8>),
    Wide(Vec<u16>),
}

impl Buckets {
    /// `count` thresholds per feature evenly spaced between its smallest and largest value over every rank.
    fn new(ds: &Dataset, count: usize, comm: &dyn Allreduce) -> Result<Self> {
        let (n, d) = (ds.n_docs(), ds.n_features());
        let local: Vec<(f32, f32)> = (0..d)
            .into_par_iter()
            .map(|f| {
                (0..n).fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), i| {
                    let x = ds.row(i).get(f);
                    (lo.min(x), hi.max(x))
                })
            })
            .collect();
        let mine: Vec<f64> = local
            .iter()
            .flat_map(|&(lo, hi)| [f64::from(lo), f64::from(hi)])
            .collect();
        let all = comm.gather_f64(&mine)?;
        let thresholds: Vec<Vec<f32>> = (0..d)
            .map(|f| {
                let (lo, hi) = all
                    .chunks_exact(2 * d)
                    .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), rank| {
                        (lo.min(rank[2 * f] as f32), hi.max(rank[2 * f + 1] as f32))
                    });
                let mut th: Vec<f32> = (0..count)
                    .map(|t| lo + (hi - lo) * t as f32 / count as f32)
                    .collect();
                th.sort_by(|a, b| b.total_cmp(a));
                th.dedup();
                th
            })
            .collect();
        let mut offsets = Vec::with_capacity(d + 1);
        offsets.push(0);
        for th in &thresholds {
            offsets.push(offsets.last().expect("starts at 0") + th.len() + 1);
        }
        let bucket = |i: usize, f: usize| -> usize {
            let x = ds.row(i).get(f);
            thresholds[f].partition_point(|&t| t >= x)
        };
        let cells = if thresholds.iter().all(|th| th.len() <= u8::MAX as usize) {
            let mut c = vec![0u8; n * d];
            c.par_chunks_mut(d.max(1)).enumerate().for_each(|(i, row)| {
                for (f, b) in row.iter_mut().enumerate() {
                    *b = bucket(i, f) as u8;
                }
            });
            Cells::Narrow(c)
        } else {
            let mut c = vec![0u16; n * d];
            c.par_chunks_mut(d.max(1)).enumerate().for_each(|(i, row)| {
                for (f, b) in row.iter_mut().enumerate() {
                    *b = bucket(i, f) as u16;
                }
            });
            Cells::Wide(c)
        };
        Ok(Self {
            thresholds,
            offsets,
            cells,
        })
    }

    /// Every bucket's potential sum over every rank's documents: per query in f64, exactly over queries.
    fn sums(&self, ds: &Dataset, pi: &[f64], comm: &dyn Allreduce) -> Result<Vec<f64>> {
        fn add<B: Copy + Into<usize>>(
            cells: &[B],
            offsets: &[usize],
            d: usize,
            i: usize,
            p: f64,
            part: &mut [f64],
        ) {
            for (&b, &start) in cells[i * d..(i + 1) * d].iter().zip(offsets) {
                part[start + b.into()] += p;
            }
        }
        let d = ds.n_features();
        let len = *self
            .offsets
            .last()
            .expect("one offset per feature and the end");
        let mut sums = exact_sum_over_queries(
            ds.n_queries(),
            len,
            || vec![0.0f64; len],
            |q, acc, part| {
                for i in ds.query_range(q) {
                    let p = pi[i];
                    if p == 0.0 {
                        continue;
                    }
                    match &self.cells {
                        Cells::Narrow(c) => add(c, &self.offsets, d, i, p, part),
                        Cells::Wide(c) => add(c, &self.offsets, d, i, p, part),
                    }
                }
                for (k, v) in part.iter_mut().enumerate() {
                    if *v != 0.0 {
                        acc.add(k, *v);
                        *v = 0.0;
                    }
                }
            },
        );
        comm.sum_exact(&mut sums)?;
        Ok(sums.values())
    }
}

impl Candidates {
    /// The weak ranker of largest |r| (r = Σ_d π(d) h(x_d) / z), as (feature, r, threshold); ties: the lower
    /// feature, then the higher threshold.
    fn best(
        &self,
        ds: &Dataset,
        pi: &[f64],
        z: f64,
        comm: &dyn Allreduce,
    ) -> Result<(usize, f64, f32)> {
        let scale = if z > 0.0 { 1.0 / z } else { 1.0 };
        let per_feature: Vec<(f64, f32)> = match self {
            Candidates::Buckets(b) => {
                let sums = b.sums(ds, pi, comm)?;
                b.thresholds
                    .iter()
                    .enumerate()
                    .map(|(f, th)| {
                        let mut acc = 0.0;
                        let mut best = (0.0f64, f32::NAN);
                        for (j, &t) in th.iter().enumerate() {
                            acc += sums[b.offsets[f] + j];
                            if (acc * scale).abs() > best.0.abs() {
                                best = (acc * scale, t);
                            }
                        }
                        best
                    })
                    .collect()
            }
            Candidates::Sorted(columns) => columns
                .par_iter()
                .enumerate()
                .map(|(f, (idx, th))| {
                    let mut acc = 0.0;
                    let mut p = 0;
                    let mut best = (0.0f64, f32::NAN);
                    for &t in th {
                        while p < idx.len() && ds.row(idx[p] as usize).get(f) > t {
                            acc += pi[idx[p] as usize];
                            p += 1;
                        }
                        if (acc * scale).abs() > best.0.abs() {
                            best = (acc * scale, t);
                        }
                    }
                    best
                })
                .collect(),
        };
        let (f, &(r, t)) =
            per_feature
                .iter()
                .enumerate()
                .fold((0, &(0.0f64, f32::NAN)), |b, (f, x)| {
                    if x.0.abs() > b.1 .0.abs() {
                        (f, x)
                    } else {
                        b
                    }
                });
        Ok((f, r, t))
    }
}

/// Every feature presorted (descending value), every distinct value but the largest a threshold.
fn sorted_columns(ds: &Dataset) -> Vec<(Vec<u32>, Vec<f32>)> {
    let n = ds.n_docs();
    (0..ds.n_features())
        .into_par_iter()
        .map(|f| {
            let vals: Vec<f32> = (0..n).map(|i| ds.row(i).get(f)).collect();
            let mut idx: Vec<u32> = (0..n as u32).collect();
            idx.sort_by(|&a, &b| {
                vals[b as usize]
                    .total_cmp(&vals[a as usize])
                    .then(a.cmp(&b))
            });
            let mut th: Vec<f32> = idx.iter().map(|&i| vals[i as usize]).collect();
            th.dedup();
            if !th.is_empty() {
                th.remove(0); // x > v for every distinct v except the max
            }
            (idx, th)
        })
        .collect()
}

impl RankBoostParams {
    /// Boost on `train`, measuring every round on the context's validation data (the [`Fit`] impl wraps this).
    pub fn train(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<RankBoostFit> {
        self.train_on(train, ctx, &SingleProcess)
    }

    fn train_on(
        &self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<RankBoostFit> {
        let validation = ctx.validation();
        if self.rounds == 0 {
            return Err(LtrError::param("rounds", "must be at least 1"));
        }
        let n = train.n_docs();
        let d = train.n_features();
        // Only each query's order of grades matters to the potentials, so a rank's own levels serve.
        let levels = Levels::new(train);
        let candidates = if self.thresholds == 0 {
            Candidates::Sorted(sorted_columns(train))
        } else {
            Candidates::Buckets(Buckets::new(train, self.thresholds, comm)?)
        };
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
            let z = potentials(train, &levels, &h, &mut pi, comm)?;
            let (f, r, t) = candidates.best(train, &pi, z, comm)?;
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

impl FitDistributed for RankBoostValidParams {
    /// [`Fit::fit`] on this rank's `shard` of the queries: every round's potential sums per candidate threshold
    /// are summed exactly over the ranks, so every rank picks the same weak ranker and returns the model `fit`
    /// gives on all the queries, bit for bit. Candidate thresholds are spaced between each feature's extremes over
    /// all ranks; `thresholds = 0` (every distinct value) and validation data are single-process only.
    fn fit_distributed(
        &self,
        shard: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn Allreduce,
    ) -> Result<Fitted> {
        if self.thresholds == 0 && comm.size() > 1 {
            return Err(LtrError::param(
                "thresholds",
                "distributed RankBoost spaces a fixed number of thresholds between each feature's extremes \
                 (thresholds=10, the default); every distinct value of every rank is a single-process setting",
            ));
        }
        if ctx.validation().is_some() && comm.size() > 1 {
            return Err(LtrError::param(
                "select-rounds",
                "distributed RankBoost keeps every round: validation data is single-process",
            ));
        }
        Ok(fitted(self.train_on(shard, ctx, comm)?))
    }
}

/// A run as the learner contract's result: the rounds kept (`rounds`) in the report, the validation curve as
/// diagnostics.
fn fitted(fit: RankBoostFit) -> Fitted {
    let report = FitReport {
        iterations: Some(fit.validation_curve.len().max(fit.rounds_used) as u64),
        validation: fit
            .validation_curve
            .get(fit.rounds_used.wrapping_sub(1))
            .copied(),
        ..Default::default()
    }
    .select("rounds", fit.rounds_used);
    Fitted::new(Model::Stumps(fit.model))
        .with_report(report)
        .with_diagnostics(serde_json::json!({"validation_curve": fit.validation_curve}))
}

impl Fit for RankBoostValidParams {
    /// [`RankBoostParams::train`]; the report holds the rounds kept (`rounds`), the diagnostics the validation
    /// curve.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        Ok(fitted(self.train(train, ctx)?))
    }
}

impl RankBoostFit {
    /// Scores of the kept ensemble.
    pub fn scores(&self, ds: &Dataset) -> Vec<f64> {
        self.model.score_dataset(ds)
    }
}
