//! # ltr-perceptron
//!
//! Pairwise ranking perceptrons (Elsas, Carvalho & Carbonell, *Fast Learning of Document Ranking Functions with the
//! Committee Perceptron*, WSDM 2008 — seed 000): the last, pocket, average and voted perceptrons and the
//! **committee perceptron**, with per-query balancing η_q = 1/|S_q| and the α-bound.
//!
//! ```
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//! use ltr_perceptron::{Output, PerceptronParams};
//!
//! let all = generate_letor_like(&SyntheticConfig { queries: 40, seed: 1, ..Default::default() }).unwrap();
//! let parts = ltr_data::split_by_queries(&all, &[0.75, 0.25], 7).unwrap();
//! let params = PerceptronParams { epochs: 5, output: Output::committee(20), ..Default::default() };
//! let fit = params.fit(&parts[0], Some(&parts[1])).unwrap();
//! assert!(fit.epochs_used >= 1 && fit.epochs_used <= 5);
//! ```
#![deny(missing_docs)]

pub mod engine;
pub mod outputs;
mod prefetch;

use ltr_core::{Aggregation, LinearModel, LtrError, Model, Params, RankAggregate, Result, Scorer};
use ltr_data::Dataset;
use ltr_metrics::{evaluate_mean, Convention, Metric};

pub use engine::{
    AlphaBound, EpochStats, LoopSettings, Observer, PairOrder, PerceptronLoop, StepSize,
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
    pub epochs: usize,
    /// Choose T ≤ T_max by the validation metric (needs validation data).
    pub select_epochs: bool,
    /// The loop.
    pub settings: LoopSettings,
    /// What to return.
    pub output: Output,
    /// Validation metric (member weights and epoch choice).
    pub metric: Metric,
    /// Its convention.
    pub convention: Convention,
}

impl Default for PerceptronParams {
    fn default() -> Self {
        Self {
            epochs: 50,
            select_epochs: true,
            settings: LoopSettings::default(),
            output: Output::Pocket,
            metric: Metric::Ndcg(Some(10)),
            convention: Convention::STANDARD,
        }
    }
}

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

/// The result of [`PerceptronParams::fit`].
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

fn score(model: &dyn Scorer, ds: &Dataset, metric: Metric, conv: &Convention) -> Result<f64> {
    evaluate_mean(ds, &model.score_dataset(ds), metric, conv)
        .map_err(|e| LtrError::Training(e.to_string()))
}

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
        validation: Option<&Dataset>,
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
                let weights: Vec<f64> = match (cp.weight, validation) {
                    (MemberWeight::Success, _) | (MemberWeight::Validation(_), None) => {
                        members.iter().map(|m| m.2 as f64).collect()
                    }
                    (MemberWeight::Uniform, _) => vec![1.0; members.len()],
                    (MemberWeight::Validation(t), Some(v)) => {
                        let mut ws = Vec::with_capacity(members.len());
                        for (i, mw, _) in &members {
                            // Validation scores are cached by hypothesis index across epochs.
                            let a = match cache.get(i) {
                                Some(&a) => a,
                                None => {
                                    let a = score(
                                        &LinearModel::new(mw.clone()),
                                        v,
                                        self.metric,
                                        &self.convention,
                                    )?;
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
                match cp.combine {
                    Combine::Average { normalize_members } => {
                        Model::Linear(weighted_average(&ws, &weights, normalize_members))
                    }
                    Combine::Borda => Model::Aggregate(RankAggregate {
                        members: ws.into_iter().map(LinearModel::new).collect(),
                        weights,
                        method: Aggregation::BordaFuse,
                    }),
                }
            }
        })
    }

    /// Train on `train`; with `validation`, member weights and (if `select_epochs`) T come from it.
    pub fn fit(&self, train: &Dataset, validation: Option<&Dataset>) -> Result<PerceptronFit> {
        self.validate()?;
        if let Some(init) = &self.settings.init {
            if init.len() != train.n_features() {
                return Err(LtrError::Shape(format!(
                    "initial weights have {} features, training data {}",
                    init.len(),
                    train.n_features()
                )));
            }
        }
        let mut lp = PerceptronLoop::new(train, self.settings.clone(), self.epochs);
        let mut rec = Recorder::default();
        match self.output {
            Output::Pocket => rec.pocket = Some(Pocket::default()),
            Output::Average => rec.average = Some(Average::default()),
            Output::Voted { from } => rec.voted = Some(Voted::new(from)),
            Output::Committee(c) => rec.committee = Some(Committee::new(c.size)),
            Output::Last => {}
        }
        let select = self.select_epochs && validation.is_some();
        let mut curve = Vec::with_capacity(self.epochs);
        let mut best: Option<(f64, usize, Model)> = None;
        let mut cache = std::collections::HashMap::new();
        for e in 1..=self.epochs {
            let stats = lp.epoch(&mut rec);
            let mut val = f64::NAN;
            if select {
                let v = validation.expect("checked");
                let m = self.output_model(&rec, &lp, validation, &mut cache)?;
                val = score(&m, v, self.metric, &self.convention)?;
                if best.as_ref().is_none_or(|(b, _, _)| val > *b) {
                    best = Some((val, e, m));
                }
            }
            tracing::debug!(
                "epoch {e}: {} mistakes over {} active pairs, validation {val:.4}",
                stats.mistakes,
                stats.active_pairs
            );
            curve.push(EpochRecord {
                epoch: e,
                stats,
                validation: val,
            });
            if stats.mistakes == 0 && !select {
                break; // separable: every later epoch is identical
            }
        }
        let (model, epochs_used) = match best {
            Some((_, e, m)) => (m, e),
            None => (
                self.output_model(&rec, &lp, validation, &mut cache)?,
                curve.len(),
            ),
        };
        Ok(PerceptronFit {
            model,
            epochs_used,
            curve,
            pairs: lp.n_pairs(),
        })
    }

    /// From `--param` values. `perceptron`: `output=last|pocket|average|voted`, `vote-from`; `committee-perceptron`:
    /// `committee=30`, `combine=average|borda`, `member-metric=validation|success|uniform`,
    /// `member-transform=raw|power|softmax`, `member-power`, `member-temperature`, `normalize-members`,
    /// `offer-final`. Both: `epochs`, `select-epochs`, `alpha-bound` (0 = off), `alpha-rule=epoch|planned`,
    /// `step=query|global`, `rate`, `shuffle`.
    pub fn from_params(
        p: &Params,
        committee: bool,
        seed: u64,
        metric: Metric,
        convention: Convention,
    ) -> Result<Self> {
        let epochs = p.int_in("epochs", 50, 1, 1_000_000)?;
        let alpha = p.float_in("alpha-bound", 0.85, 0.0, 1.0)?;
        let rule = p.choice("alpha-rule", "epoch", &["epoch", "planned"])?;
        let alpha_bound = match (alpha, rule.as_str()) {
            (0.0, _) => AlphaBound::Off,
            (a, "planned") => AlphaBound::Planned(a),
            (a, _) => AlphaBound::PerEpoch(a),
        };
        let step = match p.choice("step", "query", &["query", "global"])?.as_str() {
            "global" => StepSize::Global(p.float_in("rate", 1.0, 1e-300, 1e300)?),
            _ => StepSize::PerQuery,
        };
        let order = if p.flag("shuffle", true)? {
            PairOrder::Shuffled(seed)
        } else {
            PairOrder::File
        };
        let output = if committee {
            let weight = match p
                .choice(
                    "member-metric",
                    "validation",
                    &["validation", "success", "uniform"],
                )?
                .as_str()
            {
                "success" => MemberWeight::Success,
                "uniform" => MemberWeight::Uniform,
                _ => MemberWeight::Validation(
                    match p
                        .choice("member-transform", "raw", &["raw", "power", "softmax"])?
                        .as_str()
                    {
                        "power" => Transform::Power(p.float_in("member-power", 2.0, -1e6, 1e6)?),
                        "softmax" => Transform::Softmax(p.float_in(
                            "member-temperature",
                            0.01,
                            1e-12,
                            1e12,
                        )?),
                        _ => Transform::Raw,
                    },
                ),
            };
            let combine = match p
                .choice("combine", "average", &["average", "borda"])?
                .as_str()
            {
                "borda" => Combine::Borda,
                _ => Combine::Average {
                    normalize_members: p.flag("normalize-members", false)?,
                },
            };
            Output::Committee(CommitteeParams {
                size: p.int_in("committee", 30, 1, 1_000_000)?,
                offer_final: p.flag("offer-final", true)?,
                weight,
                combine,
            })
        } else {
            match p
                .choice("output", "pocket", &["last", "pocket", "average", "voted"])?
                .as_str()
            {
                "last" => Output::Last,
                "average" => Output::Average,
                "voted" => Output::Voted {
                    from: p.int_in("vote-from", 0, 0, usize::MAX)?,
                },
                _ => Output::Pocket,
            }
        };
        let s = Self {
            epochs,
            select_epochs: p.flag("select-epochs", true)?,
            settings: LoopSettings {
                step,
                order,
                alpha_bound,
                init: None,
                pairs: ltr_pairs::PairScheme::AllDifferent,
            },
            output,
            metric,
            convention,
        };
        s.validate()?;
        Ok(s)
    }
}
