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
    // pub for the tests in tests/unit/objective_copies.rs; not API.
    #[doc(hidden)]
    pub fn run_one_top_hessian(
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
