//! The Dual Learning Algorithm (Ai, Bi, Luo, Guo & Croft, SIGIR 2018) for a neural ranker: the network and a
//! propensity per position learned together from click sessions with positions (`ltr train --clicks LOG`: each
//! distinct session a query of its shown documents labelled by click, weighted by its count).
//!
//! The paper's two towers, as `ltr_listwise::dla` builds them for a linear ranker, with the network as the ranker:
//! - the network's epoch: DLA's softmax loss `Σ_sessions Σ_{clicked i} ω_{k_i} · (−log softmax(s)_i)`, each click
//!   weighted by the inverse propensity `ω_k = P(o_0)/P(o_k)` of its position, held fixed for the epoch. That is
//!   `listnet-binary` (cross-entropy of the softmax against the session's weighted clicks over their sum `A`) with
//!   each session weighted by `A` — the query weights of [`crate::step::Batch`], scaled to a mean of 1 over the
//!   sessions with a click (a session without one adds nothing and is left out of the epoch);
//! - then the propensity tower's steps (`ltr_listwise::dla::propensity_tower_steps`): the clicks weighted by the
//!   network's inverse relevance `e^{s_top − s_i}` at the epoch's end, the network fixed.
//!
//! The first epoch's propensities are all 1, so it trains the naive model. Every sum runs in session order, so the
//! model and the propensities do not depend on the thread count.

use ltr_core::{FitContext, Result, Scorer};
use ltr_data::Dataset;
pub(crate) use ltr_listwise::dla::propensities_of_logits;
use ltr_listwise::dla::{inverse_propensities, propensity_tower_steps, Sessions};

/// The Dual Learning Algorithm's settings for a neural ranker ([`crate::NeuralParams::dla`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NeuralDla {
    /// Cap of every inverse-propensity and inverse-relevance weight (ULTRA's `max_propensity_weight`; 0: none).
    pub max_weight: f64,
    /// Armijo steps of the propensity tower after each epoch.
    pub propensity_steps: usize,
}

/// DLA's state across epochs: the sessions, the tower's logits and its step size.
pub(crate) struct DlaState<'a> {
    sessions: Sessions<'a>,
    settings: NeuralDla,
    phi: Vec<f64>,
    step: f64,
}

impl<'a> DlaState<'a> {
    pub(crate) fn new(
        train: &'a Dataset,
        ctx: &FitContext<'_>,
        settings: NeuralDla,
    ) -> Result<Self> {
        let sessions = Sessions::new(train, ctx)?;
        let width = sessions.width();
        Ok(Self {
            sessions,
            settings,
            phi: vec![0.0; width],
            step: 1.0,
        })
    }

    /// The epoch's targets: each row's clicks times ω of its position written to `labels`, and per session the
    /// sum of its row's (scaled to a mean of 1 over the sessions with a click) with the sessions that have one.
    pub(crate) fn epoch_targets(
        &self,
        data: &Dataset,
        labels: &mut [f64],
    ) -> (Vec<f64>, Vec<usize>) {
        let omega = inverse_propensities(&self.phi, self.settings.max_weight);
        let s = &self.sessions;
        let mut sums = vec![0.0; data.n_queries()];
        for (q, sum) in sums.iter_mut().enumerate() {
            for r in data.query_range(q) {
                let a = if s.clicks[r] > 0.0 {
                    s.clicks[r] * omega[s.positions[r] as usize]
                } else {
                    0.0
                };
                labels[r] = a;
                *sum += a;
            }
        }
        let clicked: Vec<usize> = (0..sums.len()).filter(|&q| sums[q] > 0.0).collect();
        let total: f64 = clicked.iter().map(|&q| sums[q]).sum();
        let scale = clicked.len() as f64 / total;
        (sums.into_iter().map(|a| a * scale).collect(), clicked)
    }

    /// The tower's steps at the network's scores of the training rows.
    pub(crate) fn after_epoch(&mut self, net: &dyn Scorer, data: &Dataset) -> Result<()> {
        let scores = net.score_dataset(data);
        propensity_tower_steps(
            &self.sessions,
            &scores,
            self.settings.max_weight,
            self.settings.propensity_steps,
            &mut self.phi,
            &mut self.step,
        )?;
        Ok(())
    }

    /// The tower's logits now.
    pub(crate) fn logits(&self) -> Vec<f64> {
        self.phi.clone()
    }
}
