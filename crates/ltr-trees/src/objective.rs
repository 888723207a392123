//! Gradients and hessians of the boosting objectives, per query.

/// LambdaRank's pair weighting for `lambdamart`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LambdaSettings {
    /// `k` of the ideal DCG@k that normalises |ΔNDCG| (a query whose top `k` labels are all 0 has no gradient).
    pub ndcg_at: usize,
    /// Only pairs with at least one document in the current top `truncation` are used.
    pub truncation: usize,
    /// σ of the pair sigmoid.
    pub sigma: f64,
    /// Scale each query's gradients and hessians by `log2(1 + Σλ) / Σλ` (Σλ over its pairs, each pair counted
    /// for both documents), so that queries with many pairs do not dominate.
    pub norm: bool,
    /// Divide each pair's |ΔNDCG| by `0.01 + |s_i − s_j|` unless every document of the query has the same score
    /// (LightGBM's `lambdarank_norm` does this too): pairs already far apart pull less.
    pub score_gap: bool,
}

impl Default for LambdaSettings {
    fn default() -> Self {
        Self {
            ndcg_at: 10,
            truncation: 30,
            sigma: 1.0,
            norm: true,
            score_gap: true,
        }
    }
}

/// The gain `2^label − 1`.
#[inline]
pub fn gain(label: f32) -> f64 {
    (label as f64).exp2() - 1.0
}

/// The discount `1 / log2(rank + 2)` of 0-based `rank`.
#[inline]
pub fn discount(rank: usize) -> f64 {
    1.0 / (rank as f64 + 2.0).log2()
}

/// LambdaRank gradients `g` and hessians `h` of one query's documents (`labels`, current `scores`).
///
/// Documents are ranked by score, ties broken by document order. For every pair `(i, j)` with `label_i >
/// label_j` and one of them in the top `truncation`: `ρ = 1 / (1 + e^{σ(s_i − s_j)})`, `Δ = |gain_i − gain_j| ·
/// |discount(rank_i) − discount(rank_j)| / IdealDCG@ndcg_at`, `λ = σ ρ Δ`; `g_i −= λ`, `g_j += λ` and both
/// hessians grow by `σ² ρ (1 − ρ) Δ`. With `score_gap`, Δ is first divided by `0.01 + |s_i − s_j|` (unless all
/// scores are equal). Pairs are visited in a fixed order, so the sums are deterministic.
pub fn lambda_gradients(
    labels: &[f32],
    scores: &[f64],
    s: &LambdaSettings,
    g: &mut [f64],
    h: &mut [f64],
) {
    g.fill(0.0);
    h.fill(0.0);
    let n = labels.len();
    if n < 2 {
        return;
    }
    let mut ideal: Vec<f32> = labels.to_vec();
    ideal.sort_unstable_by(|a, b| b.total_cmp(a));
    let max_dcg: f64 = ideal
        .iter()
        .take(s.ndcg_at)
        .enumerate()
        .map(|(r, &l)| gain(l) * discount(r))
        .sum();
    if max_dcg <= 0.0 {
        return;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    let gains: Vec<f64> = labels.iter().map(|&l| gain(l)).collect();
    let discounts: Vec<f64> = (0..n).map(discount).collect();
    let gap = s.score_gap && scores[order[0]] != scores[order[n - 1]];
    let mut sum_lambda = 0.0;
    for ra in 0..n.min(s.truncation) {
        let a = order[ra];
        for rb in ra + 1..n {
            let b = order[rb];
            if labels[a] == labels[b] {
                continue;
            }
            let (hi, lo, rhi, rlo) = if labels[a] > labels[b] {
                (a, b, ra, rb)
            } else {
                (b, a, rb, ra)
            };
            let mut delta =
                (gains[hi] - gains[lo]) * (discounts[rhi] - discounts[rlo]).abs() / max_dcg;
            if gap {
                delta /= 0.01 + (scores[hi] - scores[lo]).abs();
            }
            let rho = 1.0 / (1.0 + (s.sigma * (scores[hi] - scores[lo])).exp());
            let lambda = s.sigma * rho * delta;
            let hess = s.sigma * s.sigma * rho * (1.0 - rho) * delta;
            g[hi] -= lambda;
            g[lo] += lambda;
            h[hi] += hess;
            h[lo] += hess;
            sum_lambda += 2.0 * lambda;
        }
    }
    if s.norm && sum_lambda > 0.0 {
        let f = (1.0 + sum_lambda).log2() / sum_lambda;
        for x in g.iter_mut().chain(h.iter_mut()) {
            *x *= f;
        }
    }
}

/// Squared-error gradients (`score − label`) and unit hessians.
pub fn squared_error_gradients(labels: &[f32], scores: &[f64], g: &mut [f64], h: &mut [f64]) {
    for i in 0..labels.len() {
        g[i] = scores[i] - labels[i] as f64;
        h[i] = 1.0;
    }
}
