//! Pairwise hinge and squared-hinge losses over **all** weighted pairs of every query, with their gradient and
//! (generalised) Hessian-vector product with respect to the scores, in O(n log n + n·K) per query for n documents
//! and K label levels — never enumerating the O(n²) pairs (Joachims 2006; Lee & Lin 2014).
//!
//! For a query with scores s, a pair (i, j) with level(i) > level(j) is active when its margin
//! m_ij = 1 − s_i + s_j is positive. Sorting the documents by score once, two sweeps keep, per label level, the
//! count, sum and sum of squares of the scores of the documents that can be active partners; the K levels let
//! every ordered level pair carry its own weight (τ of RSVM-IR, or a single grade pair for an MHR base ranker).
//! Query weights (μ of RSVM-IR) scale a whole query.
//!
//! Loss:  Σ_q μ_q Σ_{(i,j) active} τ(ℓ_i, ℓ_j) · h(m_ij),  with h(m) = m (hinge) or m² (squared hinge).

use ltr_data::Dataset;
use rayon::prelude::*;

use crate::levels::{LevelWeights, Levels};
use crate::shared_rows::{add_run_transpose_times, RunScratch, SharedRows};

mod copies;

/// `order` = the documents `0..scores.len()` by ascending score ([`f64::total_cmp`]), ties by index: the one
/// permutation that order defines. Sorted as (score key, index) records in a reused per-thread buffer instead of
/// by a comparator that reads the scores through the indices: the same permutation, about twice as fast (the
/// sort was a third of a RankSVM-IR solve).
// pub for the tests in tests/unit/objective.rs; not API.
#[doc(hidden)]
pub fn sort_by_score(order: &mut [u32], scores: &[f64]) {
    KEYED.with_borrow_mut(|keyed| {
        keyed.clear();
        keyed.extend(
            scores
                .iter()
                .enumerate()
                .map(|(i, s)| (total_order_key(*s), i as u32)),
        );
        keyed.sort_unstable();
        for (o, &(_, i)) in order.iter_mut().zip(keyed.iter()) {
            *o = i;
        }
    });
}

thread_local! {
    /// The (score key, index) records of the query being sorted, reused from query to query.
    static KEYED: std::cell::RefCell<Vec<(u64, u32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// [`sort_by_score`] starting from `order` as it stands (a permutation of `0..scores.len()`, such as the order of
/// the scores a moment ago): the same permutation, since the (score key, index) records are all different and any
/// sort of them gives the one sorted sequence. Nearly sorted records are put in place by insertion, in about one
/// comparison each; when that would take many moves the sort of [`sort_by_score`] finishes them.
// pub for the tests in tests/unit/objective.rs; not API.
#[doc(hidden)]
pub fn sort_by_score_from(order: &mut [u32], scores: &[f64]) {
    KEYED.with_borrow_mut(|keyed| {
        keyed.clear();
        keyed.extend(
            order
                .iter()
                .map(|&i| (total_order_key(scores[i as usize]), i)),
        );
        let moves = 2 * keyed.len() + 16;
        if !insertion_sort_within(keyed, moves) {
            keyed.sort_unstable();
        }
        for (o, &(_, i)) in order.iter_mut().zip(keyed.iter()) {
            *o = i;
        }
    });
}

/// Insertion sort of `v`, giving up (false, `v` still a permutation of what it held) once more than `moves` records
/// have been shifted.
fn insertion_sort_within<T: Ord + Copy>(v: &mut [T], moves: usize) -> bool {
    let mut left = moves;
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            if left == 0 {
                v[j] = x;
                return false;
            }
            left -= 1;
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
    true
}

/// An unsigned key whose order is [`f64::total_cmp`]'s: the sign-magnitude bits made two's complement (as
/// `total_cmp` does), then offset so that unsigned comparison agrees.
fn total_order_key(x: f64) -> u64 {
    let bits = x.to_bits() as i64;
    let twos = bits ^ ((((bits >> 63) as u64) >> 1) as i64);
    (twos as u64) ^ (1 << 63)
}

/// Which pairwise loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairLoss {
    /// max(0, 1 − (s_i − s_j)): RankSVM's L1 hinge.
    Hinge,
    /// max(0, 1 − (s_i − s_j))²: the L2 (squared) hinge, twice differentiable almost everywhere.
    SquaredHinge,
}

/// The loss over all pairs of a dataset, with optional level-pair and query weights.
#[derive(Debug, Clone)]
pub struct PairwiseObjective<'a> {
    ds: &'a Dataset,
    levels: Levels,
    level_weights: LevelWeights,
    query_weights: Option<Vec<f64>>,
    loss: PairLoss,
    /// Runs of queries with the same rows, found on first use.
    shared_rows: std::sync::OnceLock<SharedRows>,
}

/// The loss at some scores and its gradient with respect to the scores, plus what a Hessian-vector product needs.
#[derive(Debug, Clone)]
pub struct ScoreGradient {
    /// The weighted loss.
    pub loss: f64,
    /// ∂loss/∂s_d for every document.
    pub coef: Vec<f64>,
    /// Per query, local document indices sorted by ascending score (concatenated in query order).
    // pub for the tests in tests/unit/objective.rs and objective_copies.rs; not API.
    #[doc(hidden)]
    pub order: Vec<u32>,
    /// Each query's weighted loss (their sum in query order is `loss`).
    query_losses: Vec<f64>,
    /// The scores the gradient was taken at.
    scores: Vec<f64>,
}

impl ScoreGradient {
    /// The gradient from its per-document parts and per-query losses (the loss is their sum in query order).
    fn new(coef: Vec<f64>, order: Vec<u32>, query_losses: Vec<f64>, scores: &[f64]) -> Self {
        Self {
            loss: query_losses.iter().sum(),
            coef,
            order,
            query_losses,
            scores: scores.to_vec(),
        }
    }

    /// Each query's weighted loss, in query order (a distributed learner sums them exactly across ranks).
    pub fn query_losses(&self) -> &[f64] {
        &self.query_losses
    }
}

/// Split `v` into consecutive mutable slices at `offsets` (which start at 0 and end at `v.len()`).
pub fn split_by_offsets<'v, T>(mut v: &'v mut [T], offsets: &[usize]) -> Vec<&'v mut [T]> {
    let mut out = Vec::with_capacity(offsets.len().saturating_sub(1));
    for w in offsets.windows(2) {
        let (a, b) = std::mem::take(&mut v).split_at_mut(w[1] - w[0]);
        out.push(a);
        v = b;
    }
    out
}

/// Reused buffers of [`PairwiseObjective::query_gradient_sorted`] (one set per thread): it runs once per query
/// per gradient, and allocating them each time was a tenth of a RankSVM-IR solve.
#[derive(Default)]
struct SweepBuffers {
    sorted: Vec<f64>,
    level: Vec<u16>,
    alpha: Vec<f64>,
    per_level: Vec<f64>,
}

thread_local! {
    static SWEEP: std::cell::RefCell<SweepBuffers> = std::cell::RefCell::new(SweepBuffers::default());
}

/// Grade levels whose per-level sums a Hessian sweep keeps on the stack.
const STACK_LEVELS: usize = 8;

impl<'a> PairwiseObjective<'a> {
    /// All different-label pairs of `ds`, weight 1.
    pub fn new(ds: &'a Dataset, loss: PairLoss) -> Self {
        let levels = Levels::new(ds);
        let level_weights = LevelWeights::uniform(levels.count());
        Self {
            ds,
            levels,
            level_weights,
            query_weights: None,
            loss,
            shared_rows: std::sync::OnceLock::new(),
        }
    }
    /// Weight each ordered level pair (zero weights drop those pairs, e.g. to keep one grade pair for MHR).
    pub fn with_level_weights(mut self, w: LevelWeights) -> Self {
        assert_eq!(
            w.k(),
            self.levels.count(),
            "level weights must cover the dataset's levels"
        );
        self.level_weights = w;
        self
    }
    /// Weight each query (one weight per query).
    pub fn with_query_weights(mut self, w: Vec<f64>) -> Self {
        assert_eq!(w.len(), self.ds.n_queries(), "one weight per query");
        self.query_weights = Some(w);
        self
    }
    /// The dataset.
    pub fn dataset(&self) -> &'a Dataset {
        self.ds
    }
    /// The levels of the dataset.
    pub fn levels(&self) -> &Levels {
        &self.levels
    }
    /// The loss kind.
    pub fn loss_kind(&self) -> PairLoss {
        self.loss
    }
    fn qw(&self, q: usize) -> f64 {
        self.query_weights.as_ref().map_or(1.0, |w| w[q])
    }

    /// Loss and score gradient at `scores` (one per document), in parallel over queries; the total is summed in
    /// query order, so the result is the same at any thread count.
    pub fn gradient(&self, scores: &[f64]) -> ScoreGradient {
        let ds = self.ds;
        let n = ds.n_docs();
        let mut coef = vec![0.0; n];
        let mut order = vec![0u32; n];
        let offsets = ds.query_offsets();
        let losses: Vec<f64> = split_by_offsets(&mut coef, offsets)
            .into_par_iter()
            .zip(split_by_offsets(&mut order, offsets))
            .enumerate()
            .map(|(q, (c, o))| self.query_gradient(q, scores, c, o))
            .collect();
        ScoreGradient::new(coef, order, losses, scores)
    }

    /// The runs of queries with the same rows ([`SharedRows`]), found on first use.
    pub fn shared_rows(&self) -> &SharedRows {
        self.shared_rows.get_or_init(|| SharedRows::of(self.ds))
    }

    /// The scores ⟨x, w⟩ of every document, bit for bit [`Dataset::scores`], with each list of queries with the same
    /// rows ([`SharedRows`]) scored once.
    pub fn scores(&self, w: &[f64]) -> Vec<f64> {
        let ds = self.ds;
        let runs = self.shared_rows();
        let mut out = vec![0.0; ds.n_docs()];
        // By lists: each list of rows scored once, whatever the number of its runs.
        let list_rows: Vec<usize> = (0..=runs.n_lists())
            .map(|l| {
                let r = if l < runs.n_lists() {
                    runs.list(l).start
                } else {
                    runs.len()
                };
                runs.row_offsets()[r]
            })
            .collect();
        split_by_offsets(&mut out, &list_rows)
            .into_par_iter()
            .enumerate()
            .for_each(|(l, out)| {
                let first = runs.run(runs.list(l).start).start;
                let m = ds.query_range(first).len();
                if m == 0 {
                    return;
                }
                let (head, rest) = out.split_at_mut(m);
                ds.query(first).scores_into(w, head);
                for copy in rest.chunks_mut(m) {
                    copy.copy_from_slice(head);
                }
            });
        out
    }

    /// [`gradient`](Self::gradient) at `scores`, and in the same pass over the queries, summed exactly (see
    /// [`ltr_data::exact_sum_over_queries`]): sums `0..d` hold Xᵀ∂loss/∂s and sum `d` the loss. Each query's
    /// gradient is turned into its part of Xᵀ(·) while its rows and coefficients are in cache: the sums are those of
    /// `exact_transpose_times(ds, &g.coef, &[g.query_losses()])` on the returned gradient `g`, in one parallel pass
    /// instead of two. A run of queries with the same rows ([`SharedRows`]) is sorted once and its rows are read
    /// once for all its queries' parts; each part is still its own query's, in row order, so the sums do not change.
    pub fn gradient_sums(&self, scores: &[f64]) -> (ScoreGradient, ltr_data::ExactVec) {
        let ds = self.ds;
        let (n, d) = (ds.n_docs(), ds.n_features());
        let runs = self.shared_rows();
        let mut coef = vec![0.0; n];
        let mut order = vec![0u32; n];
        let mut losses = vec![0.0; ds.n_queries()];
        let items = split_by_offsets(&mut coef, runs.row_offsets())
            .into_par_iter()
            .zip(split_by_offsets(&mut order, runs.row_offsets()))
            .zip(split_by_offsets(&mut losses, runs.query_offsets()))
            .enumerate();
        let sums = ltr_data::exact_sum_over(
            items,
            d + 1,
            || RunScratch::new(ds),
            |(r, ((c, o), l)), acc, scratch| {
                let queries = runs.run(r);
                let m = ds.query_range(queries.start).len();
                if m > 0 {
                    let (head, rest) = o.split_at_mut(m);
                    sort_by_score(head, &scores[ds.query_range(queries.start)]);
                    for copy in rest.chunks_mut(m) {
                        copy.copy_from_slice(head);
                    }
                }
                for (k, q) in queries.clone().enumerate() {
                    let part = k * m..(k + 1) * m;
                    l[k] = self.query_gradient_sorted(q, scores, &mut c[part.clone()], &o[part]);
                    acc.add(d, l[k]);
                }
                add_run_transpose_times(ds, queries, c, acc, scratch);
            },
        );
        (ScoreGradient::new(coef, order, losses, scores), sums)
    }

    /// Xᵀ (∇²_s loss) X v as exact sums, for the squared hinge at the state's scores: each query's scores along `v`,
    /// its pairwise Hessian product ([`query_hessian_times`](Self::query_hessian_times)) and its part of Xᵀ(·)
    /// are computed while its rows are in cache, the rows of a run of queries with the same rows ([`SharedRows`])
    /// read once for them all. The arithmetic is that of `scores`, `hessian_times` and `exact_transpose_times` in
    /// turn, so the sums are the same bit for bit.
    pub fn hessian_product_sums(&self, state: &ScoreGradient, v: &[f64]) -> ltr_data::ExactVec {
        let ds = self.ds;
        let runs = self.shared_rows();
        // X v of each list of several runs, once for all its runs (the same rows and v: the same bits); a list of
        // one run takes its X v in its run's pass, while the rows are in cache.
        let long: Vec<usize> = (0..runs.n_lists())
            .filter(|&l| runs.list(l).len() > 1)
            .collect();
        let mut slot_of_list = vec![usize::MAX; runs.n_lists()];
        let mut xv_offsets = vec![0];
        for (k, &l) in long.iter().enumerate() {
            slot_of_list[l] = k;
            let first = runs.run(runs.list(l).start).start;
            xv_offsets.push(xv_offsets[k] + ds.query_range(first).len());
        }
        let mut list_xv = vec![0.0; *xv_offsets.last().expect("starts with 0")];
        split_by_offsets(&mut list_xv, &xv_offsets)
            .into_par_iter()
            .zip(&long)
            .for_each(|(out, &l)| {
                ds.query(runs.run(runs.list(l).start).start)
                    .scores_into(v, out)
            });
        ltr_data::exact_sum_over_queries(
            runs.len(),
            ds.n_features(),
            || RunScratch::new(ds),
            |r, acc, scratch| {
                let queries = runs.run(r);
                let m = ds.query_range(queries.start).len();
                let mut xv = std::mem::take(&mut scratch.xv);
                let mut hs = std::mem::take(&mut scratch.hs);
                let slot = slot_of_list[runs.list_of_run(r)];
                let xv_run: &[f64] = if slot == usize::MAX {
                    xv.resize(m, 0.0);
                    ds.query(queries.start).scores_into(v, &mut xv);
                    &xv
                } else {
                    &list_xv[xv_offsets[slot]..xv_offsets[slot + 1]]
                };
                hs.resize(m * queries.len(), 0.0);
                if !self.run_one_top_hessian(state, queries.clone(), xv_run, &mut hs) {
                    for (k, q) in queries.clone().enumerate() {
                        self.query_hessian_times(state, q, xv_run, &mut hs[k * m..(k + 1) * m]);
                    }
                }
                add_run_transpose_times(ds, queries, &hs, acc, scratch);
                scratch.xv = xv;
                scratch.hs = hs;
            },
        )
    }

    /// The loss at `scores` and its slope along the score direction `dir` (Σ_d ∂loss/∂s_d · dir_d), as exact sums
    /// over queries (sum 0 the loss, sum 1 the slope): each query's loss and slope are those of
    /// [`gradient`](Self::gradient) at `scores` (`Σ coef · dir` over the query's documents in row order), added
    /// exactly. `order` carries each query's documents by score from one call to the next (empty, or of another
    /// length, on the first call): a line search's probes move the scores a little each time, and starting each
    /// query's sort from its last order makes it nearly free. The sort's result is the one permutation of
    /// [`sort_by_score`] whatever it starts from, so the sums are the same bit for bit as from `gradient`.
    pub fn loss_and_slope_sums(
        &self,
        scores: &[f64],
        dir: &[f64],
        order: &mut Vec<u32>,
    ) -> ltr_data::ExactVec {
        let ds = self.ds;
        let offsets = ds.query_offsets();
        if order.len() != ds.n_docs() {
            order.clear();
            for q in 0..ds.n_queries() {
                order.extend(0..ds.query_range(q).len() as u32);
            }
        }
        let items = split_by_offsets(order, offsets).into_par_iter().enumerate();
        ltr_data::exact_sum_over(items, 2, Vec::new, |(q, o), acc, coef: &mut Vec<f64>| {
            let rows = ds.query_range(q);
            sort_by_score_from(o, &scores[rows.clone()]);
            coef.clear();
            coef.resize(rows.len(), 0.0);
            let loss = self.query_gradient_sorted(q, scores, coef, o);
            let slope: f64 = coef.iter().zip(&dir[rows]).map(|(c, v)| c * v).sum();
            acc.add(0, loss);
            acc.add(1, slope);
        })
    }

    /// The loss alone.
    pub fn loss(&self, scores: &[f64]) -> f64 {
        self.gradient(scores).loss
    }

    fn query_gradient(&self, q: usize, scores: &[f64], coef: &mut [f64], order: &mut [u32]) -> f64 {
        sort_by_score(order, &scores[self.ds.query_range(q)]);
        self.query_gradient_sorted(q, scores, coef, order)
    }

    /// [`query_gradient`](Self::query_gradient) with `order` already the query's documents by ascending score.
    fn query_gradient_sorted(
        &self,
        q: usize,
        scores: &[f64],
        coef: &mut [f64],
        order: &[u32],
    ) -> f64 {
        let rows = self.ds.query_range(q);
        let n = rows.len();
        let wq = self.qw(q);
        let k = self.levels.count();
        let lev = &self.levels.of_doc[rows.clone()];
        let s_raw = &scores[rows.clone()];
        if wq == 0.0 || n < 2 {
            coef.iter_mut().for_each(|c| *c = 0.0);
            return 0.0;
        }
        // Centre the scores: margins are unchanged and sums of squares lose less precision.
        let centre = s_raw[order[n / 2] as usize];
        let s = |d: usize| s_raw[d] - centre;
        let tw = &self.level_weights;
        let squared = self.loss == PairLoss::SquaredHinge;
        SWEEP.with_borrow_mut(|buf| {
            let SweepBuffers {
                sorted,
                level,
                alpha,
                per_level,
            } = buf;
            // The centred scores and levels in the order of the sweeps (read there by position instead of through
            // `order`: the same values), and per-level count, sum and sum of squares.
            sorted.clear();
            sorted.extend(order.iter().map(|&d| s(d as usize)));
            level.clear();
            level.extend(order.iter().map(|&d| lev[d as usize]));
            alpha.clear();
            alpha.resize(n, 0.0);
            per_level.clear();
            per_level.resize(3 * k, 0.0);
            let (cnt, rest) = per_level.split_at_mut(k);
            let (sum, sq) = rest.split_at_mut(k);
            let mut loss = 0.0;
            // Sweep 1: each document as the preferred one; partners j with 1 − s_i + s_j > 0 of lower levels.
            for d in 0..n {
                let l = lev[d] as usize;
                cnt[l] += 1.0;
                sum[l] += s(d);
                sq[l] += s(d) * s(d);
            }
            let mut lo = 0;
            for p in 0..n {
                let si = sorted[p];
                while lo < n {
                    let sj = sorted[lo];
                    if 1.0 - si + sj > 0.0 {
                        break;
                    }
                    let l = level[lo] as usize;
                    cnt[l] -= 1.0;
                    sum[l] -= sj;
                    sq[l] -= sj * sj;
                    lo += 1;
                }
                let li = level[p] as usize;
                let a = 1.0 - si;
                let mut acc = 0.0;
                for b in 0..li {
                    let w = tw.get(li, b);
                    if w == 0.0 || cnt[b] == 0.0 {
                        continue;
                    }
                    if squared {
                        loss += w * (cnt[b] * a * a + 2.0 * a * sum[b] + sq[b]);
                        acc += w * (cnt[b] * a + sum[b]);
                    } else {
                        loss += w * (cnt[b] * a + sum[b]);
                        acc += w * cnt[b];
                    }
                }
                alpha[p] = acc;
            }
            // Sweep 2: each document as the less relevant one; partners i with 1 − s_i + s_j > 0 of higher levels.
            cnt.iter_mut().for_each(|x| *x = 0.0);
            sum.iter_mut().for_each(|x| *x = 0.0);
            let mut hi = 0;
            for p in 0..n {
                let sj = sorted[p];
                while hi < n {
                    let si = sorted[hi];
                    if 1.0 - si + sj <= 0.0 {
                        break;
                    }
                    let l = level[hi] as usize;
                    cnt[l] += 1.0;
                    sum[l] += si;
                    hi += 1;
                }
                let lj = level[p] as usize;
                let mut acc = 0.0;
                for a in lj + 1..k {
                    let w = tw.get(a, lj);
                    if w == 0.0 || cnt[a] == 0.0 {
                        continue;
                    }
                    acc += if squared {
                        w * (cnt[a] * (1.0 + sj) - sum[a])
                    } else {
                        w * cnt[a]
                    };
                }
                let g = acc - alpha[p];
                coef[order[p] as usize] = if squared { 2.0 * wq * g } else { wq * g };
            }
            wq * loss
        })
    }

    /// (∇²_s loss) · p for the squared hinge at the state's scores, where `p` has one value per document
    /// (typically X v). The active set is the one of the state (generalised Hessian of Mangasarian).
    pub fn hessian_times(&self, state: &ScoreGradient, p: &[f64]) -> Vec<f64> {
        assert_eq!(
            self.loss,
            PairLoss::SquaredHinge,
            "the hinge loss has no Hessian"
        );
        let ds = self.ds;
        let mut out = vec![0.0; ds.n_docs()];
        let offsets = ds.query_offsets();
        let orders: Vec<&[u32]> = offsets
            .windows(2)
            .map(|w| &state.order[w[0]..w[1]])
            .collect();
        split_by_offsets(&mut out, offsets)
            .into_par_iter()
            .zip(orders)
            .enumerate()
            .for_each(|(q, (o, order))| {
                self.query_hessian(q, &state.scores, order, &p[ds.query_range(q)], o)
            });
        out
    }

    /// Query `q`'s part of [`hessian_times`](Self::hessian_times): `p` and `out` hold one value per document of the
    /// query, in its order. The same arithmetic as the whole product, so a learner that computes Xv, this and Xᵀ(·)
    /// query by query (reading each query's rows once, while they are in cache) gets the same numbers.
    pub fn query_hessian_times(&self, state: &ScoreGradient, q: usize, p: &[f64], out: &mut [f64]) {
        assert_eq!(
            self.loss,
            PairLoss::SquaredHinge,
            "the hinge loss has no Hessian"
        );
        let rows = self.ds.query_range(q);
        assert_eq!(
            p.len(),
            rows.len(),
            "one direction value per document of the query"
        );
        self.query_hessian(q, &state.scores, &state.order[rows], p, out);
    }

    /// `pl` and `out` are local to the query; `scores` is global. A query of two levels with one document on the
    /// upper one takes [`one_top_hessian`], the sweeps' arithmetic for that case alone.
    // pub for the tests in tests/unit/objective.rs and objective_copies.rs; not API.
    #[doc(hidden)]
    pub fn query_hessian(
        &self,
        q: usize,
        scores: &[f64],
        order: &[u32],
        pl: &[f64],
        out: &mut [f64],
    ) {
        let rows = self.ds.query_range(q);
        let n = rows.len();
        let wq = self.qw(q);
        if self.levels.count() == 2 && wq != 0.0 && n >= 2 {
            let lev = &self.levels.of_doc[rows.clone()];
            let mut tops = lev.iter().enumerate().filter(|(_, &l)| l == 1);
            if let (Some((c, _)), None) = (tops.next(), tops.next()) {
                let s_raw = &scores[rows];
                let centre = s_raw[order[n / 2] as usize];
                let s = |d: usize| s_raw[d] - centre;
                let w = self.level_weights.get(1, 0);
                return one_top_hessian(c, w, wq, s, order, lev, pl, out);
            }
        }
        self.query_hessian_sweeps(q, scores, order, pl, out);
    }

    /// [`query_hessian`](Self::query_hessian) by the general sweeps.
    // pub for the tests in tests/unit/objective.rs and objective_copies.rs; not API.
    #[doc(hidden)]
    pub fn query_hessian_sweeps(
        &self,
        q: usize,
        scores: &[f64],
        order: &[u32],
        pl: &[f64],
        out: &mut [f64],
    ) {
        let rows = self.ds.query_range(q);
        let n = rows.len();
        let wq = self.qw(q);
        if wq == 0.0 || n < 2 {
            out.iter_mut().for_each(|x| *x = 0.0);
            return;
        }
        let k = self.levels.count();
        let lev = &self.levels.of_doc[rows.clone()];
        let s_raw = &scores[rows.clone()];
        let centre = s_raw[order[n / 2] as usize];
        let s = |d: usize| s_raw[d] - centre;
        let tw = &self.level_weights;
        // Per-level counts and sums: on the stack for the usual few grades (this runs once per query per CG step).
        let mut on_stack = [0.0f64; 2 * STACK_LEVELS];
        let mut on_heap = Vec::new();
        let (cnt, sum) = if k <= STACK_LEVELS {
            let (cnt, sum) = on_stack.split_at_mut(STACK_LEVELS);
            (&mut cnt[..k], &mut sum[..k])
        } else {
            on_heap.resize(2 * k, 0.0);
            on_heap.split_at_mut(k)
        };
        for d in 0..n {
            cnt[lev[d] as usize] += 1.0;
            sum[lev[d] as usize] += pl[d];
        }
        let mut lo = 0;
        // The first sweep's terms go to `out`, which the second sweep completes.
        for &iu in order {
            let i = iu as usize;
            let si = s(i);
            while lo < n {
                let j = order[lo] as usize;
                if 1.0 - si + s(j) > 0.0 {
                    break;
                }
                cnt[lev[j] as usize] -= 1.0;
                sum[lev[j] as usize] -= pl[j];
                lo += 1;
            }
            let li = lev[i] as usize;
            let mut acc = 0.0;
            for b in 0..li {
                let w = tw.get(li, b);
                if w != 0.0 && cnt[b] != 0.0 {
                    acc += w * (cnt[b] * pl[i] - sum[b]);
                }
            }
            out[i] = acc;
        }
        cnt.iter_mut().for_each(|x| *x = 0.0);
        sum.iter_mut().for_each(|x| *x = 0.0);
        let mut hi = 0;
        for &ju in order {
            let j = ju as usize;
            let sj = s(j);
            while hi < n {
                let i = order[hi] as usize;
                if 1.0 - s(i) + sj <= 0.0 {
                    break;
                }
                cnt[lev[i] as usize] += 1.0;
                sum[lev[i] as usize] += pl[i];
                hi += 1;
            }
            let lj = lev[j] as usize;
            let mut acc = 0.0;
            for a in lj + 1..k {
                let w = tw.get(a, lj);
                if w != 0.0 && cnt[a] != 0.0 {
                    acc += w * (cnt[a] * pl[j] - sum[a]);
                }
            }
            out[j] = 2.0 * wq * (out[j] + acc);
        }
    }

    /// The same loss and score gradient by the explicit O(n²) sum over pairs (for tests and tiny data).
    pub fn gradient_explicit(&self, scores: &[f64]) -> (f64, Vec<f64>) {
        let mut coef = vec![0.0; self.ds.n_docs()];
        let mut loss = 0.0;
        for q in 0..self.ds.n_queries() {
            let wq = self.qw(q);
            for i in self.ds.query_range(q) {
                for j in self.ds.query_range(q) {
                    let (li, lj) = (
                        self.levels.of_doc[i] as usize,
                        self.levels.of_doc[j] as usize,
                    );
                    if li <= lj {
                        continue;
                    }
                    let w = self.level_weights.get(li, lj) * wq;
                    let m = 1.0 - scores[i] + scores[j];
                    if m <= 0.0 || w == 0.0 {
                        continue;
                    }
                    match self.loss {
                        PairLoss::Hinge => {
                            loss += w * m;
                            coef[i] -= w;
                            coef[j] += w;
                        }
                        PairLoss::SquaredHinge => {
                            loss += w * m * m;
                            coef[i] -= 2.0 * w * m;
                            coef[j] += 2.0 * w * m;
                        }
                    }
                }
            }
        }
        (loss, coef)
    }

    /// The Hessian-vector product by the explicit O(n²) sum (for tests).
    pub fn hessian_times_explicit(&self, scores: &[f64], p: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.ds.n_docs()];
        for q in 0..self.ds.n_queries() {
            let wq = self.qw(q);
            for i in self.ds.query_range(q) {
                for j in self.ds.query_range(q) {
                    let (li, lj) = (
                        self.levels.of_doc[i] as usize,
                        self.levels.of_doc[j] as usize,
                    );
                    if li <= lj || 1.0 - scores[i] + scores[j] <= 0.0 {
                        continue;
                    }
                    let w = 2.0 * self.level_weights.get(li, lj) * wq;
                    out[i] += w * (p[i] - p[j]);
                    out[j] += w * (p[j] - p[i]);
                }
            }
        }
        out
    }
}

/// [`PairwiseObjective::query_hessian`] of a query with two levels and one document `c` on the upper one (a click of a
/// click training set: the clicked document over the others), weight `w` for the pair of levels: the general sweeps
/// with what they compute for such a query only, operation for operation, so the same bits. The first sweep's
/// output is c's alone (the others have no lower partner), and it needs the lower level's count and sum as they
/// stand when c is reached; the second gives every other document its term with c once c is an active partner.
#[allow(clippy::too_many_arguments)]
fn one_top_hessian(
    c: usize,
    w: f64,
    wq: f64,
    s: impl Fn(usize) -> f64,
    order: &[u32],
    lev: &[u16],
    pl: &[f64],
    out: &mut [f64],
) {
    let n = pl.len();
    let (mut cnt0, mut sum0) = (0.0f64, 0.0f64);
    for d in 0..n {
        if lev[d] == 0 {
            cnt0 += 1.0;
            sum0 += pl[d];
        }
    }
    let mut lo = 0;
    let mut top = 0.0;
    for &iu in order {
        let i = iu as usize;
        let si = s(i);
        while lo < n {
            let j = order[lo] as usize;
            if 1.0 - si + s(j) > 0.0 {
                break;
            }
            if lev[j] == 0 {
                cnt0 -= 1.0;
                sum0 -= pl[j];
            }
            lo += 1;
        }
        if i == c {
            let mut acc = 0.0;
            if w != 0.0 && cnt0 != 0.0 {
                acc += w * (cnt0 * pl[c] - sum0);
            }
            top = acc;
            break;
        }
    }
    let sum1 = 0.0 + pl[c];
    let mut cnt1 = 0.0;
    let mut hi = 0;
    for &ju in order {
        let j = ju as usize;
        let sj = s(j);
        while hi < n {
            let i = order[hi] as usize;
            if 1.0 - s(i) + sj <= 0.0 {
                break;
            }
            if i == c {
                cnt1 = 1.0;
            }
            hi += 1;
        }
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
