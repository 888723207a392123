//! Position debiasing while LambdaMART trains ([`crate::Debias`]): LightGBM's position factors, Unbiased
//! LambdaMART's t⁺/t⁻ (Hu et al. 2019), known propensities (IPS) and DLA's propensities fitted to the ranker
//! (Ai et al. 2018). The boosting loop asks this state for the scores and pair biases of a round and updates it after.

use std::borrow::Cow;

use ltr_core::{Allreduce, FitContext, LtrError, Result};
use ltr_data::Dataset;

use crate::objective::BiasLoss;
use crate::{Debias, GbdtParams, PenaltyUnit};

/// The position biases a debiased LambdaMART learned alongside its trees, by position (0 = the top).
#[derive(Debug, Clone, PartialEq)]
pub enum PositionBias {
    /// [`Debias::PositionFactors`]: the additive factor of each position (its multiplicative factor is e^b).
    Factors(Vec<f64>),
    /// [`Debias::Pairwise`]: t⁺ and t⁻ of each position, relative to position 0.
    Pairwise {
        /// The bias of a click at each position.
        t_plus: Vec<f64>,
        /// The bias of a non-click at each position.
        t_minus: Vec<f64>,
    },
    /// [`Debias::Dla`]: the examination propensity of each position, relative to position 0 (and
    /// [`Debias::Ips`]'s known ones).
    Propensities(Vec<f64>),
}

/// The position biases of a debiased run while it trains.
pub(crate) enum DebiasState {
    None,
    Factors {
        factors: Vec<f64>,
        rate: f64,
        regularization: f64,
        unit: PenaltyUnit,
    },
    Pairwise {
        t_plus: Vec<f64>,
        t_minus: Vec<f64>,
        exponent: f64,
        /// The pair loss the sums add up.
        loss: BiasLoss,
        /// Per query: its L⁺ then L⁻ by position, summed in query order after each round.
        losses: Vec<f64>,
        /// Known propensities as t⁺ ([`Debias::Ips`]): never updated.
        fixed: bool,
    },
    Dla {
        /// θ_k / θ_0 by position.
        propensity: Vec<f64>,
        /// The most θ_k / θ_0 may be.
        max_propensity: f64,
    },
}

impl DebiasState {
    /// The state of `p.debias` on `train`, whose rows must carry positions (one process only).
    pub(crate) fn new(p: &GbdtParams, train: &Dataset, comm: &dyn Allreduce) -> Result<Self> {
        if p.debias == Debias::None {
            return Ok(DebiasState::None);
        }
        let Some(positions) = train.positions() else {
            return Err(LtrError::param(
                "debias",
                "position debiasing needs each document's display position: train on clicks (ltr train \
                 --clicks LOG, or a LightGBM `.position` file beside the training file)",
            ));
        };
        if comm.size() > 1 {
            return Err(LtrError::param(
                "debias",
                "position debiasing trains in one process",
            ));
        }
        let n = positions.iter().max().map_or(0, |&m| m as usize + 1);
        Ok(match p.debias {
            Debias::None => DebiasState::None,
            Debias::PositionFactors {
                rate,
                regularization,
                unit,
            } => DebiasState::Factors {
                factors: vec![0.0; n],
                rate,
                regularization,
                unit,
            },
            Debias::Pairwise {
                bias_norm, loss, ..
            } => DebiasState::Pairwise {
                t_plus: vec![1.0; n],
                t_minus: vec![1.0; n],
                exponent: 1.0 / (1.0 + bias_norm),
                loss,
                losses: Vec::new(),
                fixed: false,
            },
            Debias::Ips(table) => {
                let theta = table.values();
                if theta.len() < n {
                    return Err(LtrError::param(
                        "propensities",
                        format!(
                            "the table gives {} positions, but the sessions show {n}",
                            theta.len()
                        ),
                    ));
                }
                DebiasState::Pairwise {
                    t_plus: theta[..n].to_vec(),
                    t_minus: vec![1.0; n],
                    exponent: 1.0,
                    loss: BiasLoss::RankNet,
                    losses: Vec::new(),
                    fixed: true,
                }
            }
            Debias::Dla { max_propensity } => DebiasState::Dla {
                propensity: vec![1.0; n],
                max_propensity,
            },
        })
    }

    /// The scores the gradients see: each document's score plus its position's factor (a zero factor leaves the
    /// score as it is, bit for bit).
    pub(crate) fn scores<'s>(&self, train: &Dataset, scores: &'s [f64]) -> Cow<'s, [f64]> {
        match self {
            DebiasState::Factors { factors, .. } if factors.iter().any(|&b| b != 0.0) => {
                let positions = train.positions().expect("checked");
                Cow::Owned(
                    scores
                        .iter()
                        .zip(positions)
                        .map(|(&s, &k)| match factors[k as usize] {
                            0.0 => s,
                            b => s + b,
                        })
                        .collect(),
                )
            }
            _ => Cow::Borrowed(scores),
        }
    }

    /// For unbiased LambdaMART: the current t⁺ and t⁻, the pair loss, and one zeroed buffer of L⁺ then L⁻ per
    /// query; nothing otherwise.
    #[allow(clippy::type_complexity)]
    pub(crate) fn pair_biases(
        &mut self,
        queries: usize,
    ) -> (Option<(&[f64], &[f64], BiasLoss)>, Vec<Option<&mut [f64]>>) {
        match self {
            DebiasState::Pairwise {
                t_plus,
                t_minus,
                loss,
                losses,
                ..
            } if !t_plus.is_empty() => {
                let width = 2 * t_plus.len();
                losses.clear();
                losses.resize(queries * width, 0.0);
                (
                    Some((t_plus, t_minus, *loss)),
                    losses.chunks_mut(width).map(Some).collect(),
                )
            }
            _ => (None, (0..queries).map(|_| None).collect()),
        }
    }

    /// DLA's propensities by position, when it is on.
    pub(crate) fn dla(&self) -> Option<&[f64]> {
        match self {
            DebiasState::Dla { propensity, .. } => Some(propensity),
            _ => None,
        }
    }

    /// After a round's gradients `g`, `h` at `scores`: a Newton step for each position's factor, the next t⁺ and
    /// t⁻ from the round's pair losses, or DLA's propensities fitted to the ranker's scores. Sums run in document
    /// and query order: the same at any thread count.
    pub(crate) fn update(
        &mut self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        scores: &[f64],
        g: &[f64],
        h: &[f64],
    ) {
        match self {
            DebiasState::None => {}
            DebiasState::Dla {
                propensity,
                max_propensity,
            } => dla_propensities(train, ctx, scores, propensity, *max_propensity),
            DebiasState::Factors {
                factors,
                rate,
                regularization,
                unit,
            } => {
                let n = factors.len();
                let (mut gs, mut hs, mut weight) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                let positions = train.positions().expect("checked");
                for q in 0..train.n_queries() {
                    let w = match unit {
                        PenaltyUnit::Row => 1.0,
                        PenaltyUnit::Session => ctx.query_weight(q),
                    };
                    for i in train.query_range(q) {
                        let k = positions[i] as usize;
                        gs[k] += g[i];
                        hs[k] += h[i];
                        weight[k] += w;
                    }
                }
                for k in 0..n {
                    let reg = *regularization * weight[k];
                    let step = (gs[k] + reg * factors[k]) / ((hs[k] + reg).abs() + 0.001);
                    factors[k] -= *rate * step;
                }
            }
            DebiasState::Pairwise {
                t_plus,
                t_minus,
                exponent,
                losses,
                fixed,
                ..
            } => {
                let n = t_plus.len();
                if n == 0 || *fixed {
                    return;
                }
                let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
                for chunk in losses.chunks(2 * n) {
                    for k in 0..n {
                        plus[k] += chunk[k];
                        minus[k] += chunk[n + k];
                    }
                }
                for (t, l) in [(t_plus, &plus), (t_minus, &minus)] {
                    if l[0] > 0.0 {
                        for k in 0..n {
                            // A position no pair touched this round keeps its bias.
                            if l[k] > 0.0 {
                                t[k] = (l[k] / l[0]).powf(*exponent);
                            }
                        }
                    }
                }
            }
        }
    }

    /// What it learned, for the report.
    pub(crate) fn learned(self) -> Option<PositionBias> {
        match self {
            DebiasState::None => None,
            DebiasState::Factors { factors, .. } => Some(PositionBias::Factors(factors)),
            DebiasState::Pairwise { t_plus, fixed, .. } if fixed => {
                Some(PositionBias::Propensities(t_plus))
            }
            DebiasState::Pairwise {
                t_plus, t_minus, ..
            } => Some(PositionBias::Pairwise { t_plus, t_minus }),
            DebiasState::Dla { propensity, .. } => Some(PositionBias::Propensities(propensity)),
        }
    }
}

/// Minorise–maximise steps of DLA's propensity fit a round (each never lowers the likelihood).
const DLA_STEPS: usize = 50;
/// The least propensity DLA learns (a click there weighs at most 10⁶ times one at the top).
const DLA_MIN_PROPENSITY: f64 = 1e-6;

/// DLA's propensity step: with the ranker's scores fixed, the θ by position that minimise
/// `Σ_sessions Σ_clicks −v_i log(θ_{k_i} / Σ_{k ∈ session} θ_k)`, each click weighted by `v_i = e^{s_top − s_i}`
/// (the ranker's softmax relevance of the session's top-position document over the clicked one's) and the
/// session by its weight, then normalised to θ_0 = 1 (and held at least [`DLA_MIN_PROPENSITY`] and at most `max`,
/// [`Debias::Dla`]'s bound: the minimiser projected, not a minimiser under the bound). The minimiser is
/// the fixed point of
/// `θ_k ← A_k / Σ_{sessions showing k} V_q / Σ_{k' ∈ q} θ_k'` (`A_k` the weighted clicks at `k`, `V_q` a
/// session's): the Bradley–Terry/Plackett–Luce update (Hunter 2004). A position without a click gets the least θ
/// and is never weighted by (no click sits there).
fn dla_propensities(
    train: &Dataset,
    ctx: &FitContext<'_>,
    scores: &[f64],
    theta: &mut [f64],
    max: f64,
) {
    let positions = train.positions().expect("checked");
    let labels = train.labels();
    let n = theta.len();
    let mut clicked = vec![0.0; n];
    // Each session with a click: its rows and its total click weight.
    let mut sessions: Vec<(std::ops::Range<usize>, f64)> = Vec::new();
    for q in 0..train.n_queries() {
        let r = train.query_range(q);
        let Some(top) = r.clone().min_by_key(|&i| positions[i]) else {
            continue;
        };
        let u = ctx.query_weight(q);
        let mut total = 0.0;
        for i in r.clone() {
            if labels[i] > 0.0 {
                let v = u * labels[i] as f64 * (scores[top] - scores[i]).exp();
                clicked[positions[i] as usize] += v;
                total += v;
            }
        }
        if total > 0.0 && total.is_finite() {
            sessions.push((r, total));
        }
    }
    if sessions.is_empty() || clicked.iter().any(|v| !v.is_finite()) {
        return;
    }
    let mut pi = clicked.clone();
    let mut denominator = vec![0.0; n];
    for _ in 0..DLA_STEPS {
        denominator.fill(0.0);
        for (r, total) in &sessions {
            let z: f64 = r.clone().map(|i| pi[positions[i] as usize]).sum();
            for i in r.clone() {
                denominator[positions[i] as usize] += total / z;
            }
        }
        for k in 0..n {
            if denominator[k] > 0.0 {
                pi[k] = clicked[k] / denominator[k];
            }
        }
    }
    if pi[0] > 0.0 {
        for k in 0..n {
            // A position whose clicks all carry a vanishing weight (e^{s_top − s_k} underflows) would get θ = 0
            // and infinite weights: its θ stays at least DLA_MIN_PROPENSITY.
            theta[k] = (pi[k] / pi[0]).clamp(DLA_MIN_PROPENSITY, max);
        }
    }
}
