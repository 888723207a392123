//! # ltr-perceptron
//!
//! Pairwise ranking perceptrons (Elsas, Carvalho & Carbonell, *Fast Learning of Document Ranking Functions with the
//! Committee Perceptron*, WSDM 2008 — seed 000): the last, pocket, average and voted perceptrons and the
//! **committee perceptron**, with per-query balancing η_q = 1/|S_q| and the α-bound.
//!
//! ```
//! use ltr_core::{Fit, FitContext, ParamGuard, Scorer};
//! use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};
//! use ltr_perceptron::{Output, PerceptronParams};
//!
//! let all = generate_letor_like(&SyntheticConfig { queries: 40, seed: 1, ..Default::default() }).unwrap();
//! let parts = ltr_data::split_by_queries(&all, &[0.75, 0.25], 7).unwrap();
//! // Member weights and the epoch count are chosen by a validation measure; here, pairwise accuracy of query 0.
//! let measure = |d: &Dataset, s: &[f64]| {
//!     let q = d.query(0);
//!     let (l, s) = (q.labels(), &s[..q.len()]);
//!     let (mut good, mut all) = (0.0, 0.0);
//!     for i in 0..l.len() { for j in 0..l.len() { if l[i] > l[j] { all += 1.0; if s[i] > s[j] { good += 1.0 } } } }
//!     Ok(if all > 0.0 { good / all } else { 0.0 })
//! };
//! // Only checked parameters fit: `check` validates the combination once.
//! let params = PerceptronParams::default().epochs(5).output(Output::committee(20)).check().unwrap();
//! let fit = params.fit(&parts[0], &FitContext::new(1).with_validation(&parts[1], &measure)).unwrap();
//! let epochs: usize = fit.report.selected["epochs"].parse().unwrap();
//! assert!((1..=5).contains(&epochs));
//! assert_eq!(fit.model.score_dataset(&parts[1]).len(), parts[1].n_docs());
//! ```
// Unit tests live in tests/: `cargo test --all-targets` (CI's one build) compiles a unit-test harness of every
// library and binary even when it has no tests, so under `cfg(test)` this crate is empty and that harness is free.
#![cfg(not(test))]
#![deny(missing_docs)]

mod engine;
mod outputs;
mod prefetch;

use ltr_core::{
    Aggregation, BestSoFar, Fit, FitContext, FitDistributed, FitReport, Fitted, LinearModel,
    LtrError, Model, RankAggregate, Result, Scorer,
};
use ltr_data::Dataset;
use ltr_pairs::PairScheme;

pub use engine::{
    AlphaBound, EpochStats, LoopSettings, Observer, PairOrder, PerceptronLoop, StepSize,
    STREAM_PAIRS_ABOVE,
};
pub use outputs::{weighted_average, Average, Committee, Pocket, Recorder, Voted};

/// How committee members are weighted after training (seed 000 §6.2: "a function of its validation performance").
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemberWeight {
    /// The member's validation metric a_k, transformed.
    Validation(Transform),
    /// The member's success count c_k (no validation needed; with averaging this is the average perceptron).
    Success,
    /// Every member counts the same.
    Uniform,
}

/// Transform of a validation score into a member weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Transform {
    /// a_k itself (the default).
    Raw,
    /// a_k^p.
    Power(f64),
    /// exp(a_k / T) (softmax up to normalisation).
    Softmax(f64),
}

/// How committee members are merged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Combine {
    /// Weighted averaging ("A"): one linear model; optionally unit-normalise members first.
    Average {
        /// Divide each member by its norm before averaging (seed 000 does not).
        normalize_members: bool,
    },
    /// Weighted BordaFuse ("B"): every member ranks each query; points n − r + 1 weighted by a_k.
    Borda,
}

/// Committee settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommitteeParams {
    /// N_com.
    pub size: usize,
    /// Offer the final hypothesis to the committee at the end (otherwise the last survivor is never considered).
    pub offer_final: bool,
    /// Member weights.
    pub weight: MemberWeight,
    /// Combination.
    pub combine: Combine,
}

/// Which model the run returns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Output {
    /// The final hypothesis.
    Last,
    /// The longest survivor.
    Pocket,
    /// The success-weighted average.
    Average,
    /// Voting by every hypothesis with index ≥ `from` (from = 0: the voted perceptron; > 0: selective voting).
    Voted {
        /// First hypothesis allowed to vote.
        from: usize,
    },
    /// The committee perceptron.
    Committee(CommitteeParams),
}

impl Output {
    /// The paper's committee: N_com members, validation-weighted, weighted averaging, final hypothesis offered.
    pub fn committee(size: usize) -> Self {
        Output::Committee(CommitteeParams {
            size,
            offer_final: true,
            weight: MemberWeight::Validation(Transform::Raw),
            combine: Combine::Average {
                normalize_members: false,
            },
        })
    }
}

/// Hyperparameters of a perceptron run.
#[derive(Debug, Clone, PartialEq)]
pub struct PerceptronParams {
    /// T_max: epochs to run.
    epochs: usize,
    /// Choose T ≤ T_max by the validation metric (needs validation data).
    select_epochs: bool,
    /// The loop.
    settings: LoopSettings,
    /// What to return.
    output: Output,
}

impl Default for PerceptronParams {
    fn default() -> Self {
        Self {
            epochs: 50,
            select_epochs: true,
            settings: LoopSettings::default(),
            output: Output::Pocket,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl PerceptronParams {
    /// Set `epochs`: t_max: epochs to run.
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.epochs = epochs;
        self
    }
    /// Set `select_epochs`: choose T ≤ T_max by the validation metric (needs validation data).
    pub fn select_epochs(mut self, select_epochs: bool) -> Self {
        self.select_epochs = select_epochs;
        self
    }
    /// Set `settings`: the loop.
    pub fn settings(mut self, settings: LoopSettings) -> Self {
        self.settings = settings;
        self
    }
    /// Set `output`: what to return.
    pub fn output(mut self, output: Output) -> Self {
        self.output = output;
        self
    }
}

ltr_core::param_guard!(PerceptronParams => PerceptronValidParams);

/// One epoch of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochRecord {
    /// Epoch number (1-based).
    pub epoch: usize,
    /// Loop statistics.
    pub stats: EpochStats,
    /// Validation metric of the output after this epoch (NaN without validation).
    pub validation: f64,
}

/// What a run produced besides the model (the [`Fit`] impl turns it into a [`Fitted`]).
#[derive(Debug, Clone)]
pub struct PerceptronFit {
    /// The model.
    pub model: Model,
    /// The epoch whose model was kept.
    pub epochs_used: usize,
    /// Per-epoch record.
    pub curve: Vec<EpochRecord>,
    /// Number of training pairs.
    pub pairs: usize,
}

/// Sees the run's output model after every epoch (e.g. to draw validation curves of several outputs).
pub type EpochObserver<'o> = dyn FnMut(&EpochRecord, &Model) -> Result<()> + 'o;

impl PerceptronParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if self.epochs == 0 {
            return Err(LtrError::param("epochs", "must be at least 1"));
        }
        if let StepSize::Global(r) = self.settings.step {
            if !(r > 0.0 && r.is_finite()) {
                return Err(LtrError::param("rate", "must be a positive number"));
            }
        }
        match self.settings.alpha_bound {
            AlphaBound::PerEpoch(a) | AlphaBound::Planned(a) if !(0.0..=1.0).contains(&a) => {
                return Err(LtrError::param("alpha-bound", "must be in [0, 1]"))
            }
            _ => {}
        }
        if matches!(self.settings.order, PairOrder::Streamed(_))
            && self.settings.pairs != PairScheme::AllDifferent
        {
            return Err(LtrError::param(
                "stream-pairs",
                "a streamed pair order numbers all different-label pairs; other pair schemes are stored",
            ));
        }
        if let Output::Committee(c) = self.output {
            if c.size == 0 {
                return Err(LtrError::param("committee", "must be at least 1"));
            }
        }
        Ok(())
    }

    /// The model the run would return if it stopped now.
    fn output_model(
        &self,
        rec: &Recorder,
        lp: &PerceptronLoop<'_>,
        ctx: &FitContext<'_>,
        cache: &mut std::collections::HashMap<usize, f64>,
    ) -> Result<Model> {
        let (w, c, index) = (&lp.w, lp.c, lp.index);
        Ok(match self.output {
            Output::Last => Model::Linear(LinearModel::new(w.clone())),
            Output::Pocket => Model::Linear(rec.pocket.as_ref().expect("recorded").snapshot(w, c)),
            Output::Average => {
                Model::Linear(rec.average.as_ref().expect("recorded").snapshot(w, c))
            }
            Output::Voted { .. } => rec.voted.as_ref().expect("recorded").snapshot(index, w, c),
            Output::Committee(cp) => {
                let members = rec.committee.as_ref().expect("recorded").snapshot_indexed(
                    index,
                    w,
                    c,
                    cp.offer_final,
                );
                committee_model(&cp, members, ctx, cache)?
            }
        })
    }

    /// Train on `train`; with validation data in `ctx`, member weights and (if `select_epochs`) T come from it.
    /// `observer` sees the output model after every epoch.
    pub fn run(
        &self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        observer: Option<&mut EpochObserver<'_>>,
    ) -> Result<PerceptronFit> {
        let mut fits = self.run_many(train, ctx, &[self.output], observer)?;
        Ok(fits.pop().expect("one output, one fit"))
    }

    /// Train once and return, for each of `outputs`, the fit that [`run`](Self::run) with that output returns, bit
    /// for bit (T chosen per output as `run` chooses it). The outputs only watch the loop's hypotheses, none feeds
    /// back into it, so one loop serves them all: comparing outputs costs one training instead of one per output.
    /// One loop records one committee size and one voting start, so outputs naming two are an error.
    pub fn run_outputs(
        &self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        outputs: &[Output],
    ) -> Result<Vec<PerceptronFit>> {
        self.run_many(train, ctx, outputs, None)
    }

    fn run_many(
        &self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        outputs: &[Output],
        mut observer: Option<&mut EpochObserver<'_>>,
    ) -> Result<Vec<PerceptronFit>> {
        if outputs.is_empty() {
            return Ok(Vec::new());
        }
        let variants: Vec<PerceptronParams> =
            outputs.iter().map(|&o| self.clone().output(o)).collect();
        for v in &variants {
            v.validate()?;
        }
        if let Some(init) = &self.settings.init {
            if init.len() != train.n_features() {
                return Err(LtrError::Shape(format!(
                    "initial weights have {} features, training data {}",
                    init.len(),
                    train.n_features()
                )));
            }
        }
        let mut rec = Recorder::default();
        let (mut size, mut voting) = (None, None);
        for output in outputs {
            let clash = match *output {
                Output::Last => false,
                Output::Pocket => {
                    rec.pocket = Some(Pocket::default());
                    false
                }
                Output::Average => {
                    rec.average = Some(Average::default());
                    false
                }
                Output::Voted { from } => {
                    rec.voted = Some(Voted::new(from));
                    voting.replace(from).is_some_and(|f| f != from)
                }
                Output::Committee(c) => {
                    rec.committee = Some(Committee::new(c.size));
                    size.replace(c.size).is_some_and(|s| s != c.size)
                }
            };
            if clash {
                return Err(LtrError::param(
                    "output",
                    "one run records one committee size and one voting start",
                ));
            }
        }
        let mut lp = PerceptronLoop::new(train, self.settings.clone(), self.epochs);
        let select = self.select_epochs && ctx.validation().is_some();
        let mut curves = vec![Vec::with_capacity(self.epochs); variants.len()];
        let mut best: Vec<BestSoFar<(usize, Model)>> =
            variants.iter().map(|_| BestSoFar::new()).collect();
        let mut caches = vec![std::collections::HashMap::new(); variants.len()];
        let progress = ctx.progress();
        progress.begin("epochs", Some(self.epochs as u64));
        for e in 1..=self.epochs {
            let stats = lp.epoch(&mut rec);
            for (i, v) in variants.iter().enumerate() {
                let mut record = EpochRecord {
                    epoch: e,
                    stats,
                    validation: f64::NAN,
                };
                if select || observer.is_some() {
                    let m = v.output_model(&rec, &lp, ctx, &mut caches[i])?;
                    if select {
                        let val = ctx.validation().expect("checked");
                        record.validation = ctx.measure(val, &m.score_dataset(val))?;
                    }
                    if let Some(obs) = observer.as_deref_mut() {
                        obs(&record, &m)?;
                    }
                    if select {
                        best[i].offer(record.validation, (e, m));
                    }
                }
                tracing::debug!(
                    "epoch {e}: {} mistakes over {} active pairs, validation {:.4}",
                    stats.mistakes,
                    stats.active_pairs,
                    record.validation
                );
                curves[i].push(record);
            }
            progress.advance(e as u64, &format!("{} mistakes", stats.mistakes));
            if stats.mistakes == 0 && !select {
                break; // separable: every later epoch is identical
            }
        }
        progress.end();
        let mut fits = Vec::with_capacity(variants.len());
        for (((v, best), curve), mut cache) in variants.iter().zip(best).zip(curves).zip(caches) {
            let (model, epochs_used) = match best.into_best() {
                Some(b) => (b.item.1, b.item.0),
                None => (v.output_model(&rec, &lp, ctx, &mut cache)?, curve.len()),
            };
            fits.push(PerceptronFit {
                model,
                epochs_used,
                curve,
                pairs: lp.n_pairs(),
            });
        }
        Ok(fits)
    }
}

impl FitDistributed for PerceptronValidParams {
    /// Data-parallel training by iterative parameter mixing (McDonald, Hall & Mann, NAACL 2010): every rank runs
    /// each epoch over the pairs of its own queries from the shared weights, then the ranks' weights are mixed —
    /// averaged with each rank's share of the pairs as its weight, summed in rank order — and every rank starts the
    /// next epoch from the mixture. Output `last` is the final mixture (with one rank: the single-process `last`
    /// perceptron, bit for bit); `average` is the mean of the mixtures after each epoch; the committee perceptron's
    /// members are the mixtures with the largest success counts — the pairs of all ranks each orders correctly
    /// (one sort per query, summed across ranks) — weighted and combined as in one process. Rank r shuffles its pairs
    /// with the seed plus r. Deterministic for a given number of ranks; across rank counts the model differs (each
    /// epoch is a different mixture), within the perceptron's own run-to-run spread in quality (test).
    fn fit_distributed(
        &self,
        shard: &Dataset,
        ctx: &FitContext<'_>,
        comm: &dyn ltr_core::Allreduce,
    ) -> Result<Fitted> {
        if !matches!(
            self.output,
            Output::Last | Output::Average | Output::Committee(_)
        ) {
            return Err(LtrError::param(
                "output",
                "distributed perceptrons (iterative parameter mixing) return output=last, output=average or the \
                 committee of the mixtures; pocket and voted outputs follow the hypotheses of one process",
            ));
        }
        let mut settings = self.settings.clone();
        // With every different-label pair the ranks' pair count is known before the loop is built: one sum decides
        // `auto` and each rank's mixing share.
        let mut all_pairs = match settings.pairs {
            PairScheme::AllDifferent => {
                let mut all = [ltr_pairs::count_pairs_per_query(shard).iter().sum::<u64>() as f64];
                comm.sum_ordered(&mut all)?;
                Some(all[0])
            }
            _ => None,
        };
        if let (PairOrder::Auto(_), Some(all)) = (settings.order, all_pairs) {
            settings.order = settings.order.resolve_for(all as u64);
        }
        settings.order = settings
            .order
            .reseeded(|seed| seed.wrapping_add(comm.rank() as u64));
        let mut lp = PerceptronLoop::new(shard, settings, self.epochs);
        let d = shard.n_features();
        let total = match all_pairs.take() {
            Some(all) => all,
            None => {
                let mut pairs = [lp.n_pairs() as f64];
                comm.sum_ordered(&mut pairs)?;
                pairs[0]
            }
        };
        let share = if total > 0.0 {
            lp.n_pairs() as f64 / total
        } else {
            0.0
        };
        struct Nop;
        impl Observer for Nop {
            fn retire(&mut self, _: usize, _: &[f64], _: u64) {}
        }
        let mut average = vec![0.0; d];
        let mut committee = match self.output {
            Output::Committee(cp) => Some(Committee::new(cp.size)),
            _ => None,
        };
        let levels = committee.as_ref().map(|_| ltr_pairs::Levels::new(shard));
        let mut curve = Vec::with_capacity(self.epochs);
        let progress = ctx.progress();
        progress.begin("epochs", Some(self.epochs as u64));
        for epoch in 1..=self.epochs {
            let stats = lp.epoch(&mut Nop);
            let mut mixed: Vec<f64> = lp.w.iter().map(|w| share * w).collect();
            let mut counts = [stats.mistakes as f64, stats.active_pairs as f64];
            comm.sum_ordered(&mut mixed)?;
            comm.sum_ordered(&mut counts)?;
            lp.w.copy_from_slice(&mixed);
            for (a, m) in average.iter_mut().zip(&mixed) {
                *a += m;
            }
            // A mixture's success count is the pairs of all ranks it orders correctly.
            let mut success = [0i64];
            if let (Some(k), Some(levels)) = (committee.as_mut(), levels.as_ref()) {
                success[0] =
                    ltr_pairs::count_ordered_pairs_with(levels, shard, &shard.scores(&mixed))
                        as i64;
                comm.sum_i64(&mut success)?;
                k.offer(&mixed, success[0] as u64, epoch);
            }
            curve.push(serde_json::json!({"epoch": epoch, "mistakes": counts[0], "active_pairs": counts[1], "success": success[0]}));
            progress.advance(epoch as u64, &format!("{} mistakes", counts[0]));
        }
        progress.end();
        let model = match (self.output, committee) {
            (Output::Average, _) => Model::Linear(LinearModel::new(
                average
                    .iter()
                    .map(|a| a / self.epochs.max(1) as f64)
                    .collect(),
            )),
            (Output::Committee(cp), Some(k)) => {
                // Every mixture was offered when it was made, the last one too.
                let members = k.snapshot_indexed(self.epochs, &lp.w, 0, false);
                committee_model(&cp, members, ctx, &mut Default::default())?
            }
            _ => Model::Linear(LinearModel::new(lp.w.clone())),
        };
        let report = FitReport {
            iterations: Some(self.epochs as u64),
            ..Default::default()
        }
        .select("epochs", self.epochs);
        Ok(Fitted::new(model).with_report(report).with_diagnostics(
            serde_json::json!({"mixing": "iterative parameter mixing", "curve": curve}),
        ))
    }
}

/// The committee's model from its members (hypothesis index, weights, success count): member weights by success,
/// equally, or by the validation measure (cached by hypothesis index; success without validation data), combined
/// by weighted averaging or BordaFuse.
fn committee_model(
    cp: &CommitteeParams,
    members: Vec<(usize, Vec<f64>, u64)>,
    ctx: &FitContext<'_>,
    cache: &mut std::collections::HashMap<usize, f64>,
) -> Result<Model> {
    let weights: Vec<f64> = match (cp.weight, ctx.validation()) {
        (MemberWeight::Success, _) | (MemberWeight::Validation(_), None) => {
            members.iter().map(|m| m.2 as f64).collect()
        }
        (MemberWeight::Uniform, _) => vec![1.0; members.len()],
        (MemberWeight::Validation(t), Some(v)) => {
            let mut ws = Vec::with_capacity(members.len());
            for (i, mw, _) in &members {
                let a = match cache.get(i) {
                    Some(&a) => a,
                    None => {
                        let a = ctx.measure(v, &LinearModel::new(mw.clone()).score_dataset(v))?;
                        cache.insert(*i, a);
                        a
                    }
                };
                ws.push(match t {
                    Transform::Raw => a,
                    Transform::Power(p) => a.powf(p),
                    Transform::Softmax(temp) => (a / temp).exp(),
                });
            }
            ws
        }
    };
    let ws: Vec<Vec<f64>> = members.into_iter().map(|m| m.1).collect();
    Ok(match cp.combine {
        Combine::Average { normalize_members } => {
            Model::Linear(weighted_average(&ws, &weights, normalize_members))
        }
        Combine::Borda => Model::Aggregate(RankAggregate {
            members: ws.into_iter().map(LinearModel::new).collect(),
            weights,
            method: Aggregation::BordaFuse,
        }),
    })
}

impl Fit for PerceptronValidParams {
    /// [`PerceptronParams::run`], showing each epoch to the context's epoch observer; the report holds the epochs kept (`epochs`), the run's
    /// length and the per-epoch curve as diagnostics.
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        let fit = match ctx.epoch_observer() {
            Some(observe) => self.run(train, ctx, Some(&mut |r, m| observe(r.epoch, m)))?,
            None => self.run(train, ctx, None)?,
        };
        let validation = fit
            .curve
            .get(fit.epochs_used.wrapping_sub(1))
            .map(|r| r.validation)
            .filter(|v| v.is_finite());
        let curve: Vec<serde_json::Value> = fit
            .curve
            .iter()
            .map(|r| serde_json::json!({"epoch": r.epoch, "mistakes": r.stats.mistakes, "active_pairs": r.stats.active_pairs, "validation": if r.validation.is_finite() { serde_json::json!(r.validation) } else { serde_json::Value::Null }}))
            .collect();
        let report = FitReport {
            iterations: Some(fit.curve.len() as u64),
            validation,
            ..Default::default()
        }
        .select("epochs", fit.epochs_used);
        Ok(Fitted::new(fit.model)
            .with_report(report)
            .with_diagnostics(serde_json::json!({"pairs": fit.pairs, "curve": curve})))
    }
}
