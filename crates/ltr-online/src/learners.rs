//! The online learners: the SLAM perceptron (Algorithm 1), the pure-online pairwise algorithm (Algorithm 2) and
//! online ListNet — all through one rank-then-update interface.

use ltr_data::QueryView;
use ltr_metrics::{evaluate_query, Convention, Metric, TiePolicy};

use crate::slam::{phi, phi_mean, weights, Margin, Measure, Violators};

/// Learning-rate schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Eta {
    /// A constant η.
    Constant(f64),
    /// η_t = c/√t, t counting every round (the authors' experiments with c = 1).
    InvSqrt(f64),
}

impl Eta {
    /// η at round t (1-based).
    pub fn at(self, t: usize) -> f64 {
        match self {
            Eta::Constant(e) => e,
            Eta::InvSqrt(c) => c / (t as f64).sqrt(),
        }
    }
}

/// Tie order of the prediction (w = 0 ties every document, so round 1 depends on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredictTies {
    /// Earlier document first.
    InputOrder,
    /// Later document first (what the authors' MATLAB `flip(sortrows(...))` does).
    ReverseInput,
}

/// Which ranking measure drives the mistake test and the loss (RML = 1 − measure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rml {
    /// 1 − NDCG@k (gain 2^r − 1, discount 1/log2(1+i)); a query without relevant documents has loss 0.
    Ndcg(usize),
    /// 1 − AP with relevance R > 0.
    Ap,
}

/// Ranking-measure loss of scores `s` for relevance `r` under a tie order, computed by `ltr-metrics` (gain 2^r − 1,
/// discount 1/log2(1 + i), documents with r > 0 relevant for AP). A query without a positive label has loss 0: the
/// online code counts it as ranked perfectly.
pub fn rml(s: &[f64], r: &[f32], measure: Rml, ties: PredictTies) -> f64 {
    if !r.iter().any(|&x| x > 0.0) {
        return 0.0;
    }
    let metric = match measure {
        Rml::Ndcg(k) => Metric::Ndcg(Some(k)),
        Rml::Ap => Metric::Ap(None),
    };
    let ties = match ties {
        PredictTies::InputOrder => TiePolicy::InputOrder,
        PredictTies::ReverseInput => TiePolicy::ReverseInput,
    };
    // Relevant means r > 0: the smallest positive f32 is the threshold.
    let convention = Convention::STANDARD
        .with_ties(ties)
        .with_relevance_threshold(f32::from_bits(1));
    let value =
        evaluate_query(metric, r, s, &convention).expect("NDCG@k and AP are always defined");
    (1.0 - value).max(0.0)
}

/// An online ranker: score a query, then learn from its labels.
pub trait OnlineRanker {
    /// The current weights.
    fn weights(&self) -> &[f64];
    /// Learn from round `t` (1-based) whose documents were scored `s` (by the current weights).
    fn update(&mut self, t: usize, q: &QueryView<'_>, s: &[f64]);
    /// Scores of the query's documents under the current weights.
    fn score(&self, q: &QueryView<'_>) -> Vec<f64> {
        let mut s = vec![0.0; q.len()];
        q.scores_into(self.weights(), &mut s);
        s
    }
}

/// Algorithm 1: the SLAM perceptron. On a round whose RML is positive, w ← w − η_t Σ_i v_i (x_{k_i} − x_i).
#[derive(Debug, Clone)]
pub struct SlamPerceptron {
    /// Weights.
    pub w: Vec<f64>,
    /// Measure of the mistake test.
    pub rml: Rml,
    /// Surrogate weights (v^NDCG, v^{NDCG_k} or v^AP).
    pub surrogate: Measure,
    /// Tie-averaged v.
    pub tie_average: bool,
    /// Margin.
    pub margin: Margin,
    /// Step schedule.
    pub eta: Eta,
    /// Prediction tie order.
    pub ties: PredictTies,
    /// Worst violator (the paper) or the mean over all violators (an extension).
    pub violators: Violators,
    /// Updates made.
    pub updates: usize,
}

impl SlamPerceptron {
    /// The paper's settings for NDCG (code: mistake on 1 − NDCG@10, full-list tie-averaged v^NDCG,
    /// relevance-scaled margin 1, η_t = 1/√t) over `d` features.
    pub fn ndcg(d: usize) -> Self {
        Self {
            w: vec![0.0; d],
            rml: Rml::Ndcg(10),
            surrogate: Measure::Ndcg,
            tie_average: true,
            margin: Margin::RelevanceScaled(1.0),
            eta: Eta::InvSqrt(1.0),
            ties: PredictTies::ReverseInput,
            violators: Violators::Worst,
            updates: 0,
        }
    }
    /// The AP variant (binary relevance R > 0).
    pub fn ap(d: usize) -> Self {
        Self {
            rml: Rml::Ap,
            surrogate: Measure::Ap,
            ..Self::ndcg(d)
        }
    }
}

impl OnlineRanker for SlamPerceptron {
    fn weights(&self) -> &[f64] {
        &self.w
    }
    fn update(&mut self, t: usize, q: &QueryView<'_>, s: &[f64]) {
        let r = q.labels();
        if rml(s, r, self.rml, self.ties) <= 0.0 {
            return;
        }
        let v = weights(r, self.surrogate, self.tie_average);
        let mut g = vec![0.0; s.len()];
        match self.violators {
            Violators::Worst => phi(s, r, &v, self.margin, Some(&mut g)),
            Violators::Mean => phi_mean(s, r, &v, self.margin, Some(&mut g)),
        };
        let eta = self.eta.at(t);
        for (i, gi) in g.iter().enumerate() {
            if *gi != 0.0 {
                q.row(i).axpy(-eta * gi, &mut self.w);
            }
        }
        self.updates += 1;
    }
}

/// Algorithm 2 (the code's "OA"): on a round with positive RML L_t, take the most violated pair
/// (i*, j*) = argmax_{R_i > R_j} (1 + s_j − s_i) and set w ← w + η_t L_t (x_{i*} − x_{j*}).
#[derive(Debug, Clone)]
pub struct PureOnline {
    /// Weights.
    pub w: Vec<f64>,
    /// Measure.
    pub rml: Rml,
    /// Step factor (the real-data scripts use a constant 1; the simulation 1/√t).
    pub eta: Eta,
    /// Prediction tie order.
    pub ties: PredictTies,
}

impl PureOnline {
    /// The real-data setting: NDCG@10, constant step 1.
    pub fn new(d: usize) -> Self {
        Self {
            w: vec![0.0; d],
            rml: Rml::Ndcg(10),
            eta: Eta::Constant(1.0),
            ties: PredictTies::ReverseInput,
        }
    }
}

impl OnlineRanker for PureOnline {
    fn weights(&self) -> &[f64] {
        &self.w
    }
    fn update(&mut self, t: usize, q: &QueryView<'_>, s: &[f64]) {
        let r = q.labels();
        let loss = rml(s, r, self.rml, self.ties);
        if loss <= 0.0 {
            return;
        }
        // Most violated pair: for each i, the highest-scoring document of a strictly lower grade.
        let (levels, lev) = crate::slam::grade_levels(r);
        let mut best = vec![(f64::NEG_INFINITY, usize::MAX); levels.len()];
        for (i, &l) in lev.iter().enumerate() {
            if s[i] > best[l].0 {
                best[l] = (s[i], i);
            }
        }
        let mut prefix = vec![(f64::NEG_INFINITY, usize::MAX); levels.len()];
        for l in 1..levels.len() {
            prefix[l] = if best[l - 1].0 > prefix[l - 1].0 {
                best[l - 1]
            } else {
                prefix[l - 1]
            };
        }
        let mut top = (f64::NEG_INFINITY, usize::MAX, usize::MAX);
        for (i, &l) in lev.iter().enumerate() {
            if l == 0 {
                continue;
            }
            let (sj, j) = prefix[l];
            let v = 1.0 + sj - s[i];
            if v > top.0 {
                top = (v, i, j);
            }
        }
        if top.1 == usize::MAX {
            return;
        }
        let step = self.eta.at(t) * loss;
        q.row(top.1).axpy(step, &mut self.w);
        q.row(top.2).axpy(-step, &mut self.w);
    }
}

/// Top-one ListNet gradient for one query: Σ_j (P_s(j) − P_y(j)) x_j with P_y ∝ exp(R), P_s = softmax(s),
/// computed with log-sum-exp. Added to `g` scaled by `scale`.
pub fn listnet_gradient(q: &QueryView<'_>, s: &[f64], scale: f64, g: &mut [f64]) {
    let r = q.labels();
    let mr = r
        .iter()
        .map(|&x| x as f64)
        .fold(f64::NEG_INFINITY, f64::max);
    let zr: f64 = r.iter().map(|&x| (x as f64 - mr).exp()).sum();
    top_one_gradient(q, s, scale, g, |i| (r[i] as f64 - mr).exp() / zr);
}

/// One query's gradient of the top-one cross-entropy against the target `target(j)` (a distribution over its
/// documents): Σ_j (P_s(j) − target(j)) x_j, P_s = softmax(s) computed with log-sum-exp, added to `g` scaled by
/// `scale`. ListNet's target is [`listnet_gradient`]'s; the doubly robust set's is linear in the labels.
pub(crate) fn top_one_gradient(
    q: &QueryView<'_>,
    s: &[f64],
    scale: f64,
    g: &mut [f64],
    target: impl Fn(usize) -> f64,
) {
    let ms = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let zs: f64 = s.iter().map(|x| (x - ms).exp()).sum();
    for i in 0..s.len() {
        let c = (s[i] - ms).exp() / zs - target(i);
        if c != 0.0 {
            q.row(i).axpy(scale * c, g);
        }
    }
}

/// Online top-one ListNet: w ← w − η_t Σ_j (P_s(j) − P_y(j)) x_j on every round.
#[derive(Debug, Clone)]
pub struct OnlineListNet {
    /// Weights.
    pub w: Vec<f64>,
    /// Step schedule (the code: 1/√t).
    pub eta: Eta,
}

impl OnlineListNet {
    /// η_t = 1/√t over `d` features.
    pub fn new(d: usize) -> Self {
        Self {
            w: vec![0.0; d],
            eta: Eta::InvSqrt(1.0),
        }
    }
}

impl OnlineRanker for OnlineListNet {
    fn weights(&self) -> &[f64] {
        &self.w
    }
    fn update(&mut self, t: usize, q: &QueryView<'_>, s: &[f64]) {
        let eta = self.eta.at(t);
        let mut g = vec![0.0; self.w.len()];
        listnet_gradient(q, s, 1.0, &mut g);
        for (w, gj) in self.w.iter_mut().zip(g) {
            *w -= eta * gj;
        }
    }
}
