//! A run of click copies' Hessian products at once ([`PairwiseObjective::run_one_top_hessian`]).

use super::{PairwiseObjective, ScoreGradient};

/// Copies of a run whose one-top Hessian sums [`PairwiseObjective::run_one_top_hessian`] keeps on the stack (at
/// least a run's most, 32).
const RUN_COPIES: usize = 32;

impl PairwiseObjective<'_> {
    /// [`query_hessian_times`](Self::query_hessian_times) of every query of a run of copies (queries with the
    /// same rows, [`SharedRows`]) at once, when each is a one-top query ([`one_top_hessian`](super::one_top_hessian): two levels, one
    /// document on the upper one, a nonzero weight) and all have the leader's scores and order: `pl` is the run's
    /// X v (one value per row of a copy), `out` the copies' products one after another. False (nothing written)
    /// when the run does not qualify.
    ///
    /// The copies differ only in their top document and weight, so what depends on the scores alone is found once
    /// for the run: where each sweep's pointer stands at every position of the order. Each copy then does the
    /// sums and products of [`one_top_hessian`](super::one_top_hessian) in the same order on the same values, so the same bits; the
    /// copies' running sums are advanced side by side, so that the additions of one copy do not wait on each
    /// other's results.
    pub(super) fn run_one_top_hessian(
        &self,
        state: &ScoreGradient,
        queries: std::ops::Range<usize>,
        pl: &[f64],
        out: &mut [f64],
    ) -> bool {
        let ds = self.ds;
        let count = queries.len();
        let lead = ds.query_range(queries.start);
        let n = lead.len();
        if !(2..=RUN_COPIES).contains(&count) || n < 2 || self.levels.count() != 2 {
            return false;
        }
        let order = &state.order[lead.clone()];
        let s_raw = &state.scores[lead.clone()];
        let mut tops = [0usize; RUN_COPIES];
        let mut wqs = [0.0f64; RUN_COPIES];
        for (k, q) in queries.clone().enumerate() {
            let rows = ds.query_range(q);
            let wq = self.qw(q);
            if wq == 0.0
                || state.order[rows.clone()] != *order
                || !state.scores[rows.clone()]
                    .iter()
                    .zip(s_raw)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            {
                return false;
            }
            let lev = &self.levels.of_doc[rows];
            let mut up = lev.iter().enumerate().filter(|(_, &l)| l == 1);
            match (up.next(), up.next()) {
                (Some((c, _)), None) => tops[k] = c,
                _ => return false,
            }
            wqs[k] = wq;
        }
        let (tops, wqs) = (&tops[..count], &wqs[..count]);
        let centre = s_raw[order[n / 2] as usize];
        let s = |d: usize| s_raw[d] - centre;
        let w = self.level_weights.get(1, 0);
        // Each sweep's pointer after its advance at every position of the order (it does not depend on the top).
        let (mut lo_at, mut hi_at) = (vec![0usize; n], vec![0usize; n]);
        let (mut lo, mut hi) = (0, 0);
        for (p, &u) in order.iter().enumerate() {
            let si = s(u as usize);
            // The sweeps' own tests, as they stop (a NaN margin moves the first pointer on, not the second).
            while lo < n {
                if 1.0 - si + s(order[lo] as usize) > 0.0 {
                    break;
                }
                lo += 1;
            }
            lo_at[p] = lo;
            while hi < n {
                if 1.0 - s(order[hi] as usize) + si <= 0.0 {
                    break;
                }
                hi += 1;
            }
            hi_at[p] = hi;
        }
        let mut position = vec![0usize; n];
        for (p, &u) in order.iter().enumerate() {
            position[u as usize] = p;
        }
        // The first sweep's count and sum of the lower level, every copy at once: over all documents, then less
        // those its pointer passed before the top was reached (the top is on the upper level: never counted).
        let (mut cnt0, mut sum0) = ([0.0f64; RUN_COPIES], [0.0f64; RUN_COPIES]);
        for (d, &x) in pl.iter().enumerate() {
            for k in 0..count {
                if d != tops[k] {
                    cnt0[k] += 1.0;
                    sum0[k] += x;
                }
            }
        }
        let mut passed = [0usize; RUN_COPIES];
        for k in 0..count {
            passed[k] = lo_at[position[tops[k]]];
        }
        let most = passed[..count].iter().copied().max().unwrap_or(0);
        for (t, &u) in order[..most].iter().enumerate() {
            let j = u as usize;
            for k in 0..count {
                if t < passed[k] && j != tops[k] {
                    cnt0[k] -= 1.0;
                    sum0[k] -= pl[j];
                }
            }
        }
        for (k, out) in out.chunks_exact_mut(n).enumerate() {
            let (c, wq) = (tops[k], wqs[k]);
            let mut top = 0.0;
            if w != 0.0 && cnt0[k] != 0.0 {
                top += w * (cnt0[k] * pl[c] - sum0[k]);
            }
            let sum1 = 0.0 + pl[c];
            let pc = position[c];
            for (t, &u) in order.iter().enumerate() {
                let j = u as usize;
                let cnt1: f64 = if hi_at[t] > pc { 1.0 } else { 0.0 };
                let mut acc = 0.0;
                let before = if j == c {
                    top
                } else {
                    if w != 0.0 && cnt1 != 0.0 {
                        acc += w * (cnt1 * pl[j] - sum1);
                    }
                    0.0
                };
                out[j] = 2.0 * wq * (before + acc);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    /// A run of click copies takes its one-top Hessian products all at once, each copy's bit for bit the general
    /// sweeps': lists of more and fewer than 32 copies, ties, margins of exactly 1, scores beyond 2⁵³, infinities
    /// and NaNs, zero and negative zero directions, zero pair weights; zero query weights leave the run to the
    /// query-by-query path.
    #[test]
    fn a_run_of_one_top_copies_is_each_copy_bit_for_bit() {
        use ltr_data::{generate_letor_like, SyntheticConfig};
        use rand::{Rng, SeedableRng};
        let base = generate_letor_like(&SyntheticConfig {
            queries: 5,
            min_docs: 2,
            max_docs: 40,
            features: 3,
            seed: 8,
            ..Default::default()
        })
        .unwrap();
        let (ds, rows) = super::super::tests::one_click_copies(&base);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let mut taken = 0;
        for round in 0..40 {
            let scale = [0.5, 1.0, 1e17, 3e300][round % 4];
            let on_base: Vec<f64> = (0..base.n_docs())
                .map(|_| match (round % 7, rng.random_range(0..12)) {
                    (3, 0) => f64::NAN,
                    (3, 1) => f64::INFINITY,
                    (3, 2) => f64::NEG_INFINITY,
                    _ => rng.random_range(-6..6) as f64 * scale,
                })
                .collect();
            let p_base: Vec<f64> = (0..base.n_docs())
                .map(|_| match rng.random_range(0..5) {
                    0 => 0.0,
                    1 => -0.0,
                    2 => rng.random_range(-3..3) as f64,
                    _ => rng.random::<f64>() - 0.5,
                })
                .collect();
            let scores: Vec<f64> = rows.iter().map(|&r| on_base[r]).collect();
            let p: Vec<f64> = rows.iter().map(|&r| p_base[r]).collect();
            let mut obj = PairwiseObjective::new(&ds, PairLoss::SquaredHinge)
                .with_level_weights(LevelWeights::uniform(2).scaled([1.0, 0.0, 0.3][round % 3]));
            match round % 5 {
                1 => {
                    obj = obj
                        .with_query_weights((0..ds.n_queries()).map(|q| (q % 3) as f64).collect())
                }
                2 => {
                    obj = obj.with_query_weights(
                        (0..ds.n_queries())
                            .map(|_| rng.random::<f64>() * 3.0)
                            .collect(),
                    )
                }
                _ => {}
            }
            let g = obj.gradient(&scores);
            let runs = obj.shared_rows();
            assert!(runs.len() < ds.n_queries() / 4);
            for r in 0..runs.len() {
                let queries = runs.run(r);
                let lead = ds.query_range(queries.start);
                let m = lead.len();
                let mut fast = vec![9.0; m * queries.len()];
                let ran = obj.run_one_top_hessian(&g, queries.clone(), &p[lead], &mut fast);
                if round % 5 != 1 {
                    assert_eq!(ran, queries.len() > 1, "round {round}");
                }
                if !ran {
                    continue;
                }
                taken += 1;
                for (k, q) in queries.enumerate() {
                    let rq = ds.query_range(q);
                    let mut sweeps = vec![7.0; m];
                    obj.query_hessian_sweeps(q, &scores, &g.order[rq.clone()], &p[rq], &mut sweeps);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        bits(&fast[k * m..(k + 1) * m]),
                        bits(&sweeps),
                        "round {round} query {q}"
                    );
                }
            }
        }
        assert!(taken > 100, "{taken} runs taken at once");
    }
}
