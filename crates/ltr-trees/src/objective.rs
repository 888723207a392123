//! Gradients and hessians of the boosting objectives, per query.
//!
//! LambdaRank (Burges 2010): every pair of documents with different labels pulls the better one up and the other
//! down by the RankNet gradient of the pair, weighted by |Δ measure|, how much the query's measure would change if
//! the two documents swapped places in the current ranking. The measure is NDCG (under a label gain), ERR
//! (Chapelle et al. 2009) or AP. A swap's change is read from prefix sums over the ranking in O(1) — evaluating
//! the swapped list would cost O(n) per pair, O(n²k) per query.

use ltr_core::{LtrError, Result};
use ltr_metrics::{Convention, Discount, Gain};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Labels a gain list may cover at most (0 to 31; LightGBM's default `label_gain` covers 0 to 30). The list is
/// held inline so that the settings stay `Copy`.
pub const MAX_GAIN_LABELS: usize = 32;

/// The largest grade ERR's stopping probabilities `(2^g − 1)/2^gmax` take: beyond it `1 − R` of the top grade
/// (`2^−gmax`) is too small for the swap formula's division by it to keep its precision.
pub const MAX_ERR_GRADE: f64 = 30.0;

/// The largest label whose exponential gain `2^g − 1`, and sums of millions of them, stay finite.
const MAX_EXPONENTIAL_LABEL: f32 = 1000.0;

/// The measure whose |Δ| of swapping two documents weights their pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LambdaMetric {
    /// NDCG: `|gain_i − gain_j| · |discount(rank_i) − discount(rank_j)| / IdealDCG@k` (the gain is
    /// [`LambdaSettings::gain`], the discount `1/log2(rank + 1)`).
    Ndcg,
    /// Expected reciprocal rank over the whole list (Chapelle et al. 2009): a document of grade `g` stops the
    /// user with probability `(2^g − 1)/2^max_grade` (grades below 0 count as 0), as `ltr_metrics`' `ERR` does.
    Err {
        /// `gmax`: the grade that stops the user most often (at most [`MAX_ERR_GRADE`]). The registry sets the
        /// training data's largest label.
        max_grade: f64,
    },
    /// Average precision over the whole list with binary relevance: a label is relevant as MAP's `standard`
    /// convention says (label ≥ 1). Pairs of two relevant (or two non-relevant) documents do not change it.
    Map,
}

/// The gain of a label under NDCG.
// A gain list is held inline (256 bytes) so that the settings stay `Copy`; they are copied once per query and
// round, next to O(n·k) pair work, so the size costs nothing measurable.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LabelGain {
    /// `2^g − 1` (Burges; LightGBM's and XGBoost's default).
    Exponential,
    /// `g` (negative labels gain 0), as trec_eval's NDCG.
    Linear,
    /// One gain per integer label 0, 1, 2, … (LightGBM's `label_gain`).
    Table(GainTable),
}

impl LabelGain {
    /// The gain of `label`; `None` for a label a [`GainTable`] does not cover (not an integer, negative, or beyond
    /// the list).
    pub fn of(&self, label: f32) -> Option<f64> {
        match self {
            LabelGain::Exponential => Some(Gain::Exponential.of(label)),
            LabelGain::Linear => Some(Gain::Linear.of(label)),
            LabelGain::Table(t) => t.of(label),
        }
    }
}

/// Gains of the integer labels 0, 1, …: at least 2 and at most [`MAX_GAIN_LABELS`], finite, ≥ 0 and
/// non-decreasing (a higher grade never gains less, or a pair would pull the worse document up).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GainTable {
    gains: [f64; MAX_GAIN_LABELS],
    len: usize,
}

impl GainTable {
    /// The table of `gains` (label 0 first), checked; errors name the parameter `label-gain`.
    pub fn new(gains: &[f64]) -> Result<Self> {
        let bad = |problem: String| Err(LtrError::param("label-gain", problem));
        if !(2..=MAX_GAIN_LABELS).contains(&gains.len()) {
            return bad(format!(
                "a gain list needs 2 to {MAX_GAIN_LABELS} gains (labels 0, 1, …), got {}",
                gains.len()
            ));
        }
        if let Some((l, g)) = gains
            .iter()
            .enumerate()
            .find(|(_, g)| !(g.is_finite() && **g >= 0.0))
        {
            return bad(format!(
                "the gain {g} of label {l} is not a finite number ≥ 0"
            ));
        }
        if let Some(l) = (1..gains.len()).find(|&l| gains[l] < gains[l - 1]) {
            return bad(format!(
                "the gain {} of label {l} is below the gain {} of label {}: gains must not decrease",
                gains[l],
                gains[l - 1],
                l - 1
            ));
        }
        let mut table = [0.0; MAX_GAIN_LABELS];
        table[..gains.len()].copy_from_slice(gains);
        Ok(Self {
            gains: table,
            len: gains.len(),
        })
    }
    /// The gains, label 0 first.
    pub fn gains(&self) -> &[f64] {
        &self.gains[..self.len]
    }
    /// The gain of `label`, if the list covers it.
    pub fn of(&self, label: f32) -> Option<f64> {
        let covered = label >= 0.0 && label.fract() == 0.0 && (label as usize) < self.len;
        covered.then(|| self.gains[label as usize])
    }
}

/// Which pairs of a query contribute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PairMethod {
    /// Every pair of different labels with at least one document in the current top `truncation` (LightGBM's
    /// `lambdarank_truncation_level`, XGBoost's `topk`).
    TopK {
        /// Ranks at the top whose documents are paired with all others (≥ 1).
        truncation: usize,
    },
    /// For each document, `pairs_per_doc` partners drawn at random, with replacement, among the documents of
    /// another label (XGBoost's `mean` with `lambdarank_num_pair_per_sample`), from the query's own random stream
    /// ([`LambdaQuery::seed`]).
    Mean {
        /// Partners drawn per document (≥ 1).
        pairs_per_doc: usize,
    },
}

/// How documents of equal score are ordered in the ranking that LambdaRank reads each pair's |Δ| from. Every
/// document of a query has the same score in the first round, and trees of few leaves keep many equal, so the
/// order of ties decides which positions (and discounts) the gradients see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TieBreak {
    /// In document (file) order, as LightGBM's stable sort: when the order of a query's documents in the file
    /// correlates with their relevance, so does the rank a tie gives them.
    #[default]
    FileOrder,
    /// In an order drawn afresh for every query and round from the query's seed ([`LambdaQuery::seed`]): the
    /// same for the same `--seed` at any thread count, independent of the file's order.
    SeededShuffle,
}

/// LambdaRank's pair weighting for `lambdamart`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LambdaSettings {
    /// The measure whose |Δ| weights each pair.
    pub metric: LambdaMetric,
    /// The gain of a label (NDCG only).
    pub gain: LabelGain,
    /// `k` of the ideal DCG@k that normalises |ΔNDCG| (a query whose top `k` gains are all 0 has no gradient);
    /// 0: the truncation level under [`PairMethod::TopK`] (as LightGBM), the whole list under
    /// [`PairMethod::Mean`]. NDCG only.
    pub ndcg_at: usize,
    /// Which pairs contribute.
    pub pairs: PairMethod,
    /// σ of the pair sigmoid.
    pub sigma: f64,
    /// Scale each query's gradients and hessians by `log2(1 + Σλ) / Σλ` (Σλ over its pairs, each pair counted
    /// for both documents), so that queries with many pairs do not dominate.
    pub norm: bool,
    /// Divide each pair's |Δ| by `0.01 + |s_i − s_j|` unless every document of the query has the same score
    /// (LightGBM's `lambdarank_norm` does this too): pairs already far apart pull less.
    pub score_gap: bool,
    /// The order of documents with equal scores in the current ranking.
    pub ties: TieBreak,
}

impl Default for LambdaSettings {
    fn default() -> Self {
        Self {
            metric: LambdaMetric::Ndcg,
            gain: LabelGain::Exponential,
            // Normalised at the truncation level, as LightGBM: on MQ2008's five folds 0.0030 NDCG@10 and 0.0047
            // MAP above normalising at 10 (BENCHMARKS.md, "LambdaMART's pair weights").
            ndcg_at: 0,
            pairs: PairMethod::TopK { truncation: 30 },
            sigma: 1.0,
            norm: true,
            score_gap: true,
            ties: TieBreak::FileOrder,
        }
    }
}

impl LambdaSettings {
    /// Check every setting that needs no data, naming the parameter.
    pub fn validate(&self) -> Result<()> {
        match self.pairs {
            PairMethod::TopK { truncation: 0 } => {
                return Err(LtrError::param("truncation", "must be at least 1"))
            }
            PairMethod::Mean { pairs_per_doc: 0 } => {
                return Err(LtrError::param("pairs-per-doc", "must be at least 1"))
            }
            _ => {}
        }
        if !(self.sigma > 0.0 && self.sigma.is_finite()) {
            return Err(LtrError::param(
                "sigma",
                format!("must be finite and > 0, got {}", self.sigma),
            ));
        }
        if let LambdaMetric::Err { max_grade } = self.metric {
            if !(0.0..=MAX_ERR_GRADE).contains(&max_grade) {
                return Err(LtrError::param(
                    "lambda-metric",
                    format!("ERR's largest grade must be in [0, {MAX_ERR_GRADE}], got {max_grade}"),
                ));
            }
        }
        Ok(())
    }

    /// Check that every training label has a weight under these settings: a gain list covers it, its
    /// exponential gain is finite, ERR's largest grade is not below it. Errors name the parameter and the label.
    /// The registry calls it before training; [`lambda_gradients`] gives an uncovered label gain 0.
    pub fn check_labels(&self, labels: &[f32]) -> Result<()> {
        match (self.metric, self.gain) {
            (LambdaMetric::Ndcg, LabelGain::Exponential) => {
                if let Some(l) = labels.iter().find(|&&l| l > MAX_EXPONENTIAL_LABEL) {
                    return Err(LtrError::param(
                        "label-gain",
                        format!(
                            "label {l} overflows the exponential gain 2^g − 1 (labels up to \
                             {MAX_EXPONENTIAL_LABEL}); use label-gain=linear or a gain list"
                        ),
                    ));
                }
            }
            (LambdaMetric::Ndcg, LabelGain::Table(t)) => {
                if let Some(l) = labels.iter().find(|&&l| t.of(l).is_none()) {
                    let why = if l.fract() != 0.0 || *l < 0.0 {
                        "is not an integer ≥ 0, and a gain list only has gains of labels 0, 1, 2, …"
                            .to_string()
                    } else {
                        format!("is beyond the gain list (labels 0 to {})", t.len - 1)
                    };
                    return Err(LtrError::param(
                        "label-gain",
                        format!("label {l} of the training data {why}"),
                    ));
                }
            }
            (LambdaMetric::Err { max_grade }, _) => {
                if let Some(l) = labels.iter().find(|&&l| l as f64 > max_grade) {
                    return Err(LtrError::param(
                        "lambda-metric",
                        format!("label {l} is above ERR's largest grade {max_grade}"),
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// What the gradients of one query need besides its labels and scores: its random stream and its weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LambdaQuery {
    /// The seed of the query's random stream ([`PairMethod::Mean`] draws its partners from it).
    pub seed: u64,
    /// Its gradients and hessians are multiplied by this (finite, ≥ 0; 1 unweighted).
    pub weight: f64,
}

impl LambdaQuery {
    /// Query `query` (its index in the training data) in boosting round `round` of a run seeded `run_seed`. The
    /// seed depends on nothing else — not on the thread that computes the query nor on which queries others
    /// compute — so sampled pairs are the same at any thread count.
    pub fn new(run_seed: u64, round: usize, query: usize, weight: f64) -> Self {
        let round_seed = split_mix(run_seed ^ split_mix(round as u64 + 1));
        Self {
            seed: split_mix(round_seed ^ split_mix((query as u64).wrapping_add(1) << 1)),
            weight,
        }
    }
}

/// SplitMix64's finaliser: neighbouring inputs (rounds, query numbers) give unrelated outputs.
fn split_mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The gain `2^label − 1`.
#[inline]
pub fn gain(label: f32) -> f64 {
    Gain::Exponential.of(label)
}

/// The discount `1 / log2(rank + 2)` of 0-based `rank`.
#[inline]
pub fn discount(rank: usize) -> f64 {
    Discount::Log2.at(rank + 1)
}

/// |Δ measure| of swapping the documents at two ranks, from per-rank prefix sums of the current ranking.
enum SwapDelta {
    /// Gains and discounts by rank, the ideal DCG@k.
    Ndcg {
        gains: Vec<f64>,
        discounts: Vec<f64>,
        max_dcg: f64,
    },
    /// By rank r: `stop[r]` = R of the document there, `not_stopped[r]` = Π_{s<r} (1 − R_s),
    /// `err_before[r]` = Σ_{s<r} not_stopped[s] · R_s / (s + 1) (ERR of the first r ranks).
    Err {
        stop: Vec<f64>,
        not_stopped: Vec<f64>,
        err_before: Vec<f64>,
    },
    /// By rank r: `relevant[r]`, `relevant_before[r]` = relevant documents at ranks < r, `inverse_ranks_before[r]`
    /// = Σ 1/(s + 1) over relevant ranks s < r; `total` relevant documents.
    Ap {
        relevant: Vec<bool>,
        relevant_before: Vec<u32>,
        inverse_ranks_before: Vec<f64>,
        total: f64,
    },
}

impl SwapDelta {
    /// The deltas of a query whose documents rank in `order` (best first); `None` when no swap changes the
    /// measure.
    fn new(s: &LambdaSettings, labels: &[f32], order: &[usize]) -> Option<Self> {
        let n = labels.len();
        match s.metric {
            LambdaMetric::Ndcg => {
                let gains: Vec<f64> = order
                    .iter()
                    .map(|&d| s.gain.of(labels[d]).unwrap_or(0.0))
                    .collect();
                let k = match (s.ndcg_at, s.pairs) {
                    (0, PairMethod::TopK { truncation }) => truncation,
                    (0, PairMethod::Mean { .. }) => n,
                    (k, _) => k,
                };
                let mut ideal = gains.clone();
                ideal.sort_unstable_by(|a, b| b.total_cmp(a));
                let max_dcg: f64 = ideal
                    .iter()
                    .take(k)
                    .enumerate()
                    .map(|(r, &g)| g * discount(r))
                    .sum();
                (max_dcg > 0.0).then(|| SwapDelta::Ndcg {
                    gains,
                    discounts: (0..n).map(discount).collect(),
                    max_dcg,
                })
            }
            LambdaMetric::Err { max_grade } => {
                let scale = max_grade.exp2();
                let stop: Vec<f64> = order
                    .iter()
                    .map(|&d| Gain::Exponential.of(labels[d].max(0.0)) / scale)
                    .collect();
                if stop.iter().all(|&r| r == stop[0]) {
                    return None;
                }
                let mut not_stopped = Vec::with_capacity(n + 1);
                let mut err_before = Vec::with_capacity(n + 1);
                let (mut p, mut e) = (1.0, 0.0);
                for (r, &stop_r) in stop.iter().enumerate() {
                    not_stopped.push(p);
                    err_before.push(e);
                    e += p * stop_r / (r + 1) as f64;
                    p *= 1.0 - stop_r;
                }
                not_stopped.push(p);
                err_before.push(e);
                Some(SwapDelta::Err {
                    stop,
                    not_stopped,
                    err_before,
                })
            }
            LambdaMetric::Map => {
                let convention = Convention::STANDARD;
                let relevant: Vec<bool> = order
                    .iter()
                    .map(|&d| convention.is_relevant(labels[d]))
                    .collect();
                let mut relevant_before = Vec::with_capacity(n + 1);
                let mut inverse_ranks_before = Vec::with_capacity(n + 1);
                let (mut c, mut h) = (0u32, 0.0);
                for (r, &rel) in relevant.iter().enumerate() {
                    relevant_before.push(c);
                    inverse_ranks_before.push(h);
                    if rel {
                        c += 1;
                        h += 1.0 / (r + 1) as f64;
                    }
                }
                relevant_before.push(c);
                inverse_ranks_before.push(h);
                // No relevant document, or only relevant ones: every order has the same AP.
                (c > 0 && (c as usize) < n).then_some(SwapDelta::Ap {
                    relevant,
                    relevant_before,
                    inverse_ranks_before,
                    total: c as f64,
                })
            }
        }
    }

    /// |Δ| of swapping the document at rank `rank_hi` (the higher label) with the one at rank `rank_lo`.
    #[inline]
    fn delta(&self, rank_hi: usize, rank_lo: usize) -> f64 {
        match self {
            SwapDelta::Ndcg {
                gains,
                discounts,
                max_dcg,
            } => {
                (gains[rank_hi] - gains[rank_lo]) * (discounts[rank_hi] - discounts[rank_lo]).abs()
                    / max_dcg
            }
            SwapDelta::Err {
                stop,
                not_stopped,
                err_before,
            } => {
                let (a, b) = (rank_hi.min(rank_lo), rank_hi.max(rank_lo));
                let (ra, rb) = (stop[a], stop[b]);
                // Ranks before a and after b keep their terms (the product over a..=b is the same either way);
                // the term at a changes its R; the terms strictly between a and b, and the one at b, change their
                // not-stopped probability by the factor (1 − R_b)/(1 − R_a). With P = not_stopped and
                // E = err_before, Δ = (R_a − R_b) · [(E[b] − E[a+1] + P[b]/(b+1)) / (1 − R_a) − P[a]/(a+1)].
                let after_a = (err_before[b] - err_before[a + 1] + not_stopped[b] / (b + 1) as f64)
                    / (1.0 - ra);
                ((ra - rb) * (after_a - not_stopped[a] / (a + 1) as f64)).abs()
            }
            SwapDelta::Ap {
                relevant,
                relevant_before,
                inverse_ranks_before,
                total,
            } => {
                let (a, b) = (rank_hi.min(rank_lo), rank_hi.max(rank_lo));
                if relevant[a] == relevant[b] {
                    return 0.0;
                }
                // Moving the relevant one of the pair from b up to a: it gains precision at a, each relevant
                // document strictly between gains one relevant document above it, and its term at b goes. The
                // reverse swap is the negative of the same sum.
                let above = relevant_before[a] as f64;
                let between = (relevant_before[b] - relevant_before[a + 1]) as f64;
                let change = (above + 1.0) / (a + 1) as f64
                    + (inverse_ranks_before[b] - inverse_ranks_before[a + 1])
                    - (above + between + 1.0) / (b + 1) as f64;
                change.abs() / total
            }
        }
    }
}

/// LambdaRank gradients `g` and hessians `h` of one query's documents (`labels`, current `scores`).
///
/// Documents are ranked by score, ties broken as [`LambdaSettings::ties`] says. For every pair `(i, j)` with `label_i >
/// label_j` that [`LambdaSettings::pairs`] selects: `ρ = 1 / (1 + e^{σ(s_i − s_j)})`, `Δ` = |Δ measure| of
/// swapping them ([`LambdaMetric`]), `λ = σ ρ Δ`; `g_i −= λ`, `g_j += λ` and both hessians grow by
/// `σ² ρ (1 − ρ) Δ`. With `score_gap`, Δ is first divided by `0.01 + |s_i − s_j|` (unless all scores are equal).
/// Then `norm` scales the query, and last its [`LambdaQuery::weight`]. Pairs are visited in a fixed order (and
/// drawn from the query's own seed), so the sums are deterministic.
pub fn lambda_gradients(
    labels: &[f32],
    scores: &[f64],
    s: &LambdaSettings,
    query: LambdaQuery,
    g: &mut [f64],
    h: &mut [f64],
) {
    lambda_pairs(labels, scores, s, query, None, g, h);
}

/// Unbiased LambdaMART's view of one query (Hu et al., WWW 2019): each document's display position, the current
/// position biases of a click (`t_plus`) and of a non-click (`t_minus`) by position, and the sums by position that
/// the next biases are computed from.
#[derive(Debug)]
pub struct PairBias<'a> {
    /// Each document's display position (an index into the bias vectors).
    pub positions: &'a [u32],
    /// t⁺ by position.
    pub t_plus: &'a [f64],
    /// t⁻ by position.
    pub t_minus: &'a [f64],
    /// By position of the higher-labelled (clicked) document: the sum of its pairs' losses over t⁻ of the other's
    /// position (added to).
    pub loss_plus: &'a mut [f64],
    /// By position of the lower-labelled document: the sum of its pairs' losses over t⁺ of the other's position
    /// (added to).
    pub loss_minus: &'a mut [f64],
    /// Which pair loss the sums add up.
    pub loss: BiasLoss,
}

/// The pair loss Unbiased LambdaMART estimates its position biases from (each pair's |Δ| after the score gap
/// times it, for the clicked document `i` and the other `j`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BiasLoss {
    /// The pair's RankNet loss `log(1 + e^{−σ(s_i − s_j)})`, the loss the paper's estimator is derived from (Hu et
    /// al., WWW 2019, eq. 30–31, and the authors' code): large while the model orders the pair wrongly.
    RankNet,
    /// `log(1 + e^{σ(s_i − s_j)})`, the loss of the pair reversed: what XGBoost's `lambdarank_unbiased` sums (its
    /// cost is `log(1/(1 − sigmoid(s_i − s_j)))`), large while the model orders the pair rightly. Both are `log 2`
    /// at equal scores, so the first round's biases agree.
    Reversed,
}

/// [`lambda_gradients`] of Unbiased LambdaMART: each pair's |Δ| (after the score gap) is divided by `t⁺` of the
/// higher-labelled document's position times `t⁻` of the other's, and the pair's loss `Δ · log(1 + e^{∓σ(s_i −
/// s_j)})` ([`BiasLoss`]), times the query's weight, is added to `bias.loss_plus` (over `t⁻`) and
/// `bias.loss_minus` (over `t⁺`).
pub fn lambda_gradients_unbiased(
    labels: &[f32],
    scores: &[f64],
    s: &LambdaSettings,
    query: LambdaQuery,
    bias: &mut PairBias<'_>,
    g: &mut [f64],
    h: &mut [f64],
) {
    lambda_pairs(labels, scores, s, query, Some(bias), g, h);
}

/// The documents of a query by descending score, ties by document order: `scores` sorted as (key, index) records
/// whose key is the score's place in f64's total order reversed (one integer comparison instead of two lookups
/// through the indices; the keys and indices are unique, so the permutation is `total_cmp`'s). With
/// [`TieBreak::SeededShuffle`] a key drawn from `seed` and the document's index sits between the score and the
/// index, so equal scores fall in that drawn order (the index still breaks the astronomically rare equal draws).
fn rank_order(scores: &[f64], ties: TieBreak, seed: u64) -> Vec<usize> {
    let descending = |s: f64| {
        let b = s.to_bits();
        let ascending = if b >> 63 == 1 { !b } else { b | (1 << 63) };
        !ascending
    };
    match ties {
        TieBreak::FileOrder => {
            let mut records: Vec<(u64, usize)> = scores
                .iter()
                .enumerate()
                .map(|(i, &s)| (descending(s), i))
                .collect();
            records.sort_unstable();
            records.into_iter().map(|(_, i)| i).collect()
        }
        TieBreak::SeededShuffle => {
            // Salted so that the tie order is not the stream `PairMethod::Mean` draws its partners from.
            let salt = split_mix(seed ^ 0x7469_6573_5F73_6875);
            let mut records: Vec<(u64, u64, usize)> = scores
                .iter()
                .enumerate()
                .map(|(i, &s)| (descending(s), split_mix(salt ^ i as u64), i))
                .collect();
            records.sort_unstable();
            records.into_iter().map(|(_, _, i)| i).collect()
        }
    }
}

fn lambda_pairs(
    labels: &[f32],
    scores: &[f64],
    s: &LambdaSettings,
    query: LambdaQuery,
    bias: Option<&mut PairBias<'_>>,
    g: &mut [f64],
    h: &mut [f64],
) {
    g.fill(0.0);
    h.fill(0.0);
    let n = labels.len();
    if n < 2 || query.weight == 0.0 {
        return;
    }
    let order = rank_order(scores, s.ties, query.seed);
    let Some(swap) = SwapDelta::new(s, labels, &order) else {
        return;
    };
    // Everything by rank: the pairs read neighbouring entries instead of gathering through `order`, and each
    // document's gradient and hessian are added to in the same sequence as by document, so the sums are the same.
    let mut by_rank = RankedQuery {
        labels: order.iter().map(|&d| labels[d]).collect(),
        scores: order.iter().map(|&d| scores[d]).collect(),
        g: vec![0.0; n],
        h: vec![0.0; n],
    };
    let sum_lambda = match (&swap, s.pairs, bias) {
        // The common case (LambdaMART's defaults, LightGBM's lambdarank) in one loop the compiler sees whole.
        (
            SwapDelta::Ndcg {
                gains,
                discounts,
                max_dcg,
            },
            PairMethod::TopK { truncation },
            None,
        ) => by_rank.top_k_ndcg(s, truncation, gains, discounts, *max_dcg),
        (
            SwapDelta::Ndcg {
                gains,
                discounts,
                max_dcg,
            },
            _,
            bias,
        ) => by_rank.pairs(s, query, bias, &order, |hi: usize, lo: usize| {
            (gains[hi] - gains[lo]) * (discounts[hi] - discounts[lo]).abs() / max_dcg
        }),
        (_, _, bias) => by_rank.pairs(s, query, bias, &order, |hi, lo| swap.delta(hi, lo)),
    };
    for (r, &d) in order.iter().enumerate() {
        g[d] = by_rank.g[r];
        h[d] = by_rank.h[r];
    }
    if s.norm && sum_lambda > 0.0 {
        let f = (1.0 + sum_lambda).log2() / sum_lambda;
        for x in g.iter_mut().chain(h.iter_mut()) {
            *x *= f;
        }
    }
    if query.weight != 1.0 {
        for x in g.iter_mut().chain(h.iter_mut()) {
            *x *= query.weight;
        }
    }
}

/// The Dual Learning Algorithm's ranker step for one session (Ai et al., SIGIR 2018): the softmax cross-entropy of
/// the session's scores against its clicks, each click at position `k` weighted by `1/θ_k` (`propensity`, by
/// position, relative to the top), and the session by `weight`. With `w_i = click_i / θ_{k_i}`, `W = Σ w` and `p`
/// the softmax of `scores`: `g_i = weight · (W p_i − w_i)` and `h_i = weight · W p_i (1 − p_i)`. A session without
/// a click has no gradient.
pub fn dla_gradients(
    labels: &[f32],
    scores: &[f64],
    positions: &[u32],
    propensity: &[f64],
    weight: f64,
    g: &mut [f64],
    h: &mut [f64],
) {
    // `g` holds each click's weight `w_i` and `h` its `e^{s_i − max s}` until the last pass: no allocation a session.
    for ((w, &c), &k) in g.iter_mut().zip(labels).zip(positions) {
        *w = match c > 0.0 {
            true => c as f64 / propensity[k as usize],
            false => 0.0,
        };
    }
    let total: f64 = g.iter().sum();
    if total == 0.0 || weight == 0.0 {
        g.fill(0.0);
        h.fill(0.0);
        return;
    }
    let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for (e, &s) in h.iter_mut().zip(scores) {
        *e = (s - top).exp();
    }
    let z: f64 = h.iter().sum();
    for (gi, hi) in g.iter_mut().zip(h.iter_mut()) {
        let p = *hi / z;
        *gi = weight * (total * p - *gi);
        *hi = weight * total * p * (1.0 - p);
    }
}

/// One query's labels and scores by rank, and its gradients and hessians by rank while the pairs add to them.
struct RankedQuery {
    labels: Vec<f32>,
    scores: Vec<f64>,
    g: Vec<f64>,
    h: Vec<f64>,
}

impl RankedQuery {
    /// [`RankedQuery::pairs`] for NDCG's Δ, pairs truncated at `truncation` ranks and no position bias: the same
    /// operations in the same order on the same values, so the same bits, without a call or a bounds check a pair.
    /// The pair at ranks `(a, b)`, `a < b`, is taken higher label first; swapping the operands of a subtraction
    /// only flips its sign, so the differences are computed once as `a − b` and negated when `b` is the higher.
    fn top_k_ndcg(
        &mut self,
        s: &LambdaSettings,
        truncation: usize,
        gains: &[f64],
        discounts: &[f64],
        max_dcg: f64,
    ) -> f64 {
        let n = self.labels.len();
        let (labels, scores) = (&self.labels[..n], &self.scores[..n]);
        let (gains, discounts) = (&gains[..n], &discounts[..n]);
        let (g, h) = (&mut self.g[..n], &mut self.h[..n]);
        let gap = s.score_gap && scores[0] != scores[n - 1];
        let sigma = s.sigma;
        let sigma2 = sigma * sigma;
        let mut sum_lambda = 0.0;
        for a in 0..n.min(truncation) {
            let (la, sa, ga, da) = (labels[a], scores[a], gains[a], discounts[a]);
            let (mut g_a, mut h_a) = (g[a], h[a]);
            for b in a + 1..n {
                let lb = labels[b];
                if la == lb {
                    continue;
                }
                let a_higher = la > lb;
                // (higher − lower) of the gains and of the scores.
                let (dg, ds) = match a_higher {
                    true => (ga - gains[b], sa - scores[b]),
                    false => (gains[b] - ga, scores[b] - sa),
                };
                let mut delta = dg * (da - discounts[b]).abs() / max_dcg;
                if delta == 0.0 {
                    continue;
                }
                if gap {
                    delta /= 0.01 + ds.abs();
                }
                let rho = 1.0 / (1.0 + (sigma * ds).exp());
                let lambda = sigma * rho * delta;
                let hess = sigma2 * rho * (1.0 - rho) * delta;
                if a_higher {
                    g_a -= lambda;
                    g[b] += lambda;
                } else {
                    g[b] -= lambda;
                    g_a += lambda;
                }
                h_a += hess;
                h[b] += hess;
                sum_lambda += 2.0 * lambda;
            }
            g[a] = g_a;
            h[a] = h_a;
        }
        sum_lambda
    }

    /// Add every selected pair's λ and hessian (`delta` of two ranks: |Δ measure| of swapping them, the higher
    /// label first); returns Σλ over the pairs, each counted for both documents. `order` maps ranks to documents.
    fn pairs(
        &mut self,
        s: &LambdaSettings,
        query: LambdaQuery,
        mut bias: Option<&mut PairBias<'_>>,
        order: &[usize],
        delta: impl Fn(usize, usize) -> f64,
    ) -> f64 {
        let n = self.labels.len();
        let RankedQuery {
            labels,
            scores,
            g,
            h,
        } = self;
        let gap = s.score_gap && scores[0] != scores[n - 1];
        let mut sum_lambda = 0.0;
        let mut add_pair = |hi: usize, lo: usize| {
            let mut delta = delta(hi, lo);
            if delta == 0.0 {
                return;
            }
            if gap {
                delta /= 0.01 + (scores[hi] - scores[lo]).abs();
            }
            if let Some(b) = bias.as_deref_mut() {
                let (k, l) = (
                    b.positions[order[hi]] as usize,
                    b.positions[order[lo]] as usize,
                );
                // The pair's loss log(1 + e^z), z = ∓σ(s_i − s_j) (`BiasLoss`), computed without overflow.
                let z = match b.loss {
                    BiasLoss::RankNet => -s.sigma * (scores[hi] - scores[lo]),
                    BiasLoss::Reversed => s.sigma * (scores[hi] - scores[lo]),
                };
                let loss = delta * (z.max(0.0) + (-z.abs()).exp().ln_1p()) * query.weight;
                b.loss_plus[k] += loss / b.t_minus[l];
                b.loss_minus[l] += loss / b.t_plus[k];
                delta /= b.t_plus[k] * b.t_minus[l];
            }
            let rho = 1.0 / (1.0 + (s.sigma * (scores[hi] - scores[lo])).exp());
            let lambda = s.sigma * rho * delta;
            let hess = s.sigma * s.sigma * rho * (1.0 - rho) * delta;
            g[hi] -= lambda;
            g[lo] += lambda;
            h[hi] += hess;
            h[lo] += hess;
            sum_lambda += 2.0 * lambda;
        };
        match s.pairs {
            PairMethod::TopK { truncation } => {
                for a in 0..n.min(truncation) {
                    let la = labels[a];
                    for b in a + 1..n {
                        let lb = labels[b];
                        if la == lb {
                            continue;
                        }
                        if la > lb {
                            add_pair(a, b);
                        } else {
                            add_pair(b, a);
                        }
                    }
                }
            }
            PairMethod::Mean { pairs_per_doc } => {
                // By document, as the partners are drawn: `rank` of each document, labels by document.
                let mut rank = vec![0; n];
                let mut doc_labels = vec![0.0f32; n];
                for (r, &d) in order.iter().enumerate() {
                    rank[d] = r;
                    doc_labels[d] = labels[r];
                }
                let labels = &doc_labels;
                // Documents sorted by label: those of another label than a document's are everything outside its
                // run, so a partner is one uniform draw over the positions outside the run.
                let mut by_label: Vec<usize> = (0..n).collect();
                by_label.sort_by(|&a, &b| labels[a].total_cmp(&labels[b]).then(a.cmp(&b)));
                let mut run_of = vec![(0, 0); n];
                let mut start = 0;
                while start < n {
                    let l = labels[by_label[start]];
                    let end = start + by_label[start..].partition_point(|&d| labels[d] == l);
                    for &d in &by_label[start..end] {
                        run_of[d] = (start, end);
                    }
                    start = end;
                }
                let mut rng = ChaCha8Rng::seed_from_u64(query.seed);
                for i in 0..n {
                    let (start, end) = run_of[i];
                    let others = n - (end - start);
                    if others == 0 {
                        continue;
                    }
                    for _ in 0..pairs_per_doc {
                        let u = rng.random_range(0..others);
                        let j = by_label[if u < start { u } else { u + (end - start) }];
                        if labels[i] > labels[j] {
                            add_pair(rank[i], rank[j]);
                        } else {
                            add_pair(rank[j], rank[i]);
                        }
                    }
                }
            }
        }
        sum_lambda
    }
}

/// Squared-error gradients (`score − label`) and unit hessians.
pub fn squared_error_gradients(labels: &[f32], scores: &[f64], g: &mut [f64], h: &mut [f64]) {
    for i in 0..labels.len() {
        g[i] = scores[i] - labels[i] as f64;
        h[i] = 1.0;
    }
}
