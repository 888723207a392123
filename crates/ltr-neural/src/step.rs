//! One training step in pieces: the documents of a batch go through the forward and backward passes a piece of
//! whole queries at a time, so that the activations held at once are a piece's, not the batch's.
//!
//! A piece is a run of consecutive queries of the batch holding at most `piece-rows` documents (a longer query
//! alone; `auto` takes `PIECE_ROWS` or, where the memory bound asks for it, fewer: `memory.rs`); its features are
//! gathered from the training data when it starts and dropped with its activations when it is done. The loss
//! normaliser (`Σ norm`, [`Loss::query_norm`]) depends on the labels only, so it is known before any score and each
//! piece's gradient is scaled before the next piece starts. The order of every sum is fixed by the data, never by
//! the thread count: within a piece the rows go in chunks of `net::CHUNK` (one query a chunk with an encoder),
//! groups of 8 chunks add their gradients in chunk order, and the groups' gradients are added into the step's
//! gradient in order, piece after piece; with pieces of at most one group's rows, a feed-forward piece's group adds
//! straight into the step's sum (no gradient of its own to zero and add). A group of a piece with fewer groups than
//! threads shares its products among them, with the same bits (`net::affine_in_parallel`). A batch of one piece —
//! every batch of at most `PIECE_ROWS` documents at that piece — is summed as before pieces existed. Batch
//! normalisation needs the statistics of the whole batch between layers: a batch-normalised network on a batch of
//! several pieces first sums each such layer's statistics over the pieces (two passes a layer, bottom up), then its
//! backward sums (a pass a layer, top down), recomputing the forward pass each time, and only then runs the step's
//! pass with all of them (`batch_norm_passes`); a batch of one piece is summed as before.

use std::ops::Range;
use std::sync::{Condvar, Mutex};

use ltr_core::neural::NeuralNet;
use rayon::prelude::*;

use crate::losses::Loss;
use crate::net::{
    add_groups, backward_part, chunk_backward, chunk_forward, forward, forward_given, layer_sums,
    mean_of, stats_from_sums, update_running_stats, zeroed_gradient, BatchStats, Dropout, Pass,
    Share, Transposed, CHUNK, GROUP,
};

/// Documents per piece at most (a query longer than this is a piece of its own) unless `piece-rows` or `auto`
/// (`memory.rs`, `piece_rows_for`) says fewer. A fixed number: with the batch's query lengths it fixes the order of
/// the gradient's sums.
pub(crate) const PIECE_ROWS: usize = 4096;

/// The documents of one training step: query `q` holds `rows[offsets[q]..offsets[q + 1]]` (rows of the training
/// data), with `labels` per entry of `rows`, and `tie_seeds` and the `weights` of a click training set (`None`:
/// each 1) per query.
pub(crate) struct Batch<'a> {
    pub rows: &'a [usize],
    pub offsets: &'a [usize],
    pub labels: &'a [f64],
    pub tie_seeds: &'a [u64],
    pub weights: Option<&'a [f64]>,
}

impl Batch<'_> {
    /// Query `q`'s weight: its click weight, or 1 (which changes no bit).
    fn weight(&self, q: usize) -> f64 {
        self.weights.map_or(1.0, |w| w[q])
    }
}

/// A query's score gradient as the backward pass takes it: times the query's weight `w` and the batch's `scale`.
fn scaled(grad: &[f64], w: f64, scale: f64) -> impl Iterator<Item = f32> + '_ {
    grad.iter().map(move |&v| (w * v * scale) as f32)
}

/// What a training step computes.
// pub for the tests in tests/unit/step.rs; not API (so no `Debug`).
#[doc(hidden)]
#[allow(missing_debug_implementations)]
pub struct Step {
    /// The batch loss.
    pub value: f64,
    /// Every parameter's gradient.
    pub grad: NeuralNet,
    /// The scores, when asked for.
    pub scores: Vec<f32>,
    /// Per hidden layer, the batch statistics of a batch-normalised one.
    pub batch: Vec<Option<BatchStats>>,
}

/// The pieces of a batch as ranges of its queries: consecutive queries while they hold at most `limit` documents.
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
pub fn pieces(offsets: &[usize], limit: usize) -> Vec<Range<usize>> {
    let nq = offsets.len().saturating_sub(1);
    let mut out = Vec::new();
    let mut start = 0;
    for q in 0..nq {
        if q > start && offsets[q + 1] - offsets[start] > limit {
            out.push(start..q);
            start = q;
        }
    }
    if start < nq {
        out.push(start..nq);
    }
    out
}

/// How a step takes an encoder network without batch norm through its passes: both give the same bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
pub enum Passes {
    /// Query by query ([`query_by_query`]), holding a query's activations a thread: what training does by
    /// default where the memory bound is out of reach (`memory=speed`).
    Fewest,
    /// As [`Passes::Fewest`], lean (`memory=lean`): a step of long queries keeps fewer transposes
    /// (`encoder::Transposes`), and no worker parks a group's gradient (it waits for its turn instead).
    Lean,
    /// Layer by layer over a piece's queries, holding the piece's activations: every other network's way, kept
    /// for the tests that show both give the same bits.
    LayerByLayer,
}

/// One step's loss and gradient on `batch`; `features(r, out)` writes training row `r`'s features into `out`
/// (`net.n_features` wide). `limit` is the documents per piece ([`PIECE_ROWS`] in training). `spare` holds
/// gradients shaped like `net` whose memory the step may reuse (any values: they are zeroed before use); the step
/// leaves there those it no longer needs. An encoder network's passes are taken as `passes` says (training:
/// [`Passes::Fewest`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn step(
    net: &NeuralNet,
    features: &(dyn Fn(usize, &mut [f32]) + Sync),
    batch: &Batch<'_>,
    loss: Loss,
    dropout: Option<Dropout>,
    limit: usize,
    keep_scores: bool,
    spare: &mut Vec<NeuralNet>,
    passes: Passes,
) -> Step {
    let d = net.n_features;
    let offsets = batch.offsets;
    let nq = offsets.len() - 1;
    let mut norm = 0.0;
    for q in 0..nq {
        norm += loss.query_norm(&batch.labels[offsets[q]..offsets[q + 1]]);
    }
    let scale = loss.scale(norm);
    let rows = offsets[nq] - offsets[0];
    let long = rows >= crate::encoder::UNPACKED_FROM * nq.max(1);
    let tr = Transposed::new(net, passes == Passes::Lean && long);
    let all = pieces(offsets, limit);
    // A piece's features (gathered from the training data) and its query offsets from 0.
    let gather = |piece: &Range<usize>| {
        let (a, b) = (offsets[piece.start], offsets[piece.end]);
        let mut x = vec![0f32; (b - a) * d];
        x.par_chunks_mut(d.max(1))
            .zip(&batch.rows[a..b])
            .for_each(|(out, &r)| features(r, out));
        let local: Vec<usize> = offsets[piece.start..=piece.end]
            .iter()
            .map(|o| o - a)
            .collect();
        (x, local)
    };
    // A piece's loss, normaliser and scaled score gradient; a weighted query's loss and gradient times its weight
    // (the normaliser depends on the labels only). Without weights each is 1, which changes no bit.
    let piece_loss = |piece: &Range<usize>, pass: &Pass, local: &[usize]| {
        let (a, b) = (offsets[piece.start], offsets[piece.end]);
        let s64: Vec<f64> = pass.scores.iter().map(|&v| f64::from(v)).collect();
        let parts = loss.queries(
            &s64,
            &batch.labels[a..b],
            local,
            &batch.tie_seeds[piece.clone()],
        );
        let (mut value, mut seen) = (0.0, 0.0);
        let mut dscores = Vec::with_capacity(b - a);
        for (q, (ql, g)) in piece.clone().zip(parts) {
            let w = batch.weight(q);
            value += w * ql.value;
            seen += ql.norm;
            dscores.extend(scaled(&g, w, scale));
        }
        (value, seen, dscores)
    };
    // A batch-normalised network over several pieces: the whole batch's statistics and backward sums first.
    let split_norm = all.len() > 1 && net.hidden.iter().any(|h| h.batch_norm.is_some());
    let given = split_norm.then(|| {
        batch_norm_passes(
            net,
            &tr,
            &all,
            &gather,
            &piece_loss,
            dropout,
            offsets[nq] - offsets[0],
            spare,
        )
    });
    let (mut value, mut norm_seen) = (0.0, 0.0);
    let mut total = None;
    // Pieces of at most a group's rows (a feed-forward network): each piece's first group adds its terms straight
    // into the step's sum, chunk after chunk, instead of into a gradient of its own zeroed and then added — which
    // would cost a small piece about 5% more (BENCHMARKS.md, "The MLP's piece at the default"). The flags say
    // which of the sum's weight gradients hold no −0 (`kernels::weight_gradient_known`).
    let mut chained =
        (limit <= GROUP * CHUNK && net.encoder.is_none()).then(|| vec![true; net.hidden.len()]);
    let mut first_chunk = 0;
    let mut scores = Vec::new();
    let mut stats = Vec::new();
    // An encoder network without batch norm: each query goes forward, through the loss and back on its own.
    let by_query = passes != Passes::LayerByLayer
        && net.encoder.is_some()
        && net.hidden.iter().all(|h| h.batch_norm.is_none());
    for piece in &all {
        if by_query {
            // Each query's features are gathered when its worker takes it, not the piece's at once.
            let part = Piece {
                queries: piece.clone(),
                features,
                first_chunk,
            };
            let parked = if passes == Passes::Lean { 0 } else { PARKED };
            let (v, seen, s) = query_by_query(
                net, &tr, batch, loss, scale, dropout, &part, &mut total, spare, parked,
            );
            value += v;
            norm_seen += seen;
            first_chunk += piece.len();
            if keep_scores {
                scores.extend(s);
            }
            if all.len() == 1 {
                stats = vec![None; net.hidden.len()];
            }
            continue;
        }
        let (x, local) = gather(piece);
        let pass = match &given {
            Some((st, _)) => forward_given(net, &tr, &x, &local, dropout, first_chunk, st),
            None => forward(net, &tr, &x, &local, dropout, first_chunk),
        };
        drop(x);
        first_chunk += pass.chunks();
        let (v, seen, dscores) = piece_loss(piece, &pass, &local);
        value += v;
        norm_seen += seen;
        let sums = given.as_ref().map(|(_, s)| &s[..]);
        backward_part(
            net,
            &tr,
            &pass,
            &dscores,
            &mut total,
            spare,
            sums,
            None,
            chained.as_mut(),
        );
        if keep_scores {
            scores.extend_from_slice(&pass.scores);
        }
        if given.is_none() && all.len() == 1 {
            stats = pass.batch;
        }
    }
    if let Some((st, _)) = given {
        stats = st;
    }
    debug_assert_eq!(norm.to_bits(), norm_seen.to_bits(), "query_norm");
    Step {
        value: value * scale,
        grad: total.unwrap_or_else(|| crate::net::zeros_like(net)),
        scores,
        batch: stats,
    }
}

/// A piece of a batch: its queries, their features (row-major) and offsets from 0, and its first chunk number.
struct Piece<'a> {
    queries: Range<usize>,
    /// Writes a training row's features (as [`step`]'s `features`).
    features: &'a (dyn Fn(usize, &mut [f32]) + Sync),
    first_chunk: usize,
}

/// A piece of an encoder network without batch norm, query by query: each query (one chunk) goes forward, through
/// the loss and back before its thread starts the next, so that a piece holds one query's activations a thread,
/// not all of its queries'. Groups of [`GROUP`] queries run in parallel, a group a thread at a time, each adding
/// its queries' gradients in order into its own sum, and the groups' sums are added into `total` in order: every
/// sum in the order of the layer-by-layer pass ([`forward`], [`backward_part`]), so the same bits. Returns the
/// piece's weighted loss, its normaliser and its scores.
#[allow(clippy::too_many_arguments)]
fn query_by_query(
    net: &NeuralNet,
    tr: &Transposed,
    batch: &Batch<'_>,
    loss: Loss,
    scale: f64,
    dropout: Option<Dropout>,
    piece: &Piece<'_>,
    total: &mut Option<NeuralNet>,
    spare: &mut Vec<NeuralNet>,
    parked: usize,
) -> (f64, f64, Vec<f32>) {
    let d = net.n_features;
    let nq = piece.queries.len();
    let groups: Vec<Range<usize>> = (0..nq)
        .step_by(GROUP)
        .map(|a| a..(a + GROUP).min(nq))
        .collect();
    let run = |g: &mut NeuralNet, members: Range<usize>| -> GroupResults {
        let mut known = vec![true; net.hidden.len()];
        members
            .map(|i| {
                let q = piece.queries.start + i;
                let rows = &batch.rows[batch.offsets[q]..batch.offsets[q + 1]];
                let mut x = vec![0f32; rows.len() * d];
                for (out, &r) in x.chunks_mut(d.max(1)).zip(rows) {
                    (piece.features)(r, out);
                }
                let (trace, scores) = chunk_forward(net, tr, &x, piece.first_chunk + i, dropout);
                drop(x);
                let s64: Vec<f64> = scores.iter().map(|&v| f64::from(v)).collect();
                let labels = &batch.labels[batch.offsets[q]..batch.offsets[q + 1]];
                let mut grad = vec![0.0; s64.len()];
                let ql = loss.query_loss(&s64, labels, batch.tie_seeds[q], &mut grad);
                let w = batch.weight(q);
                let dscores: Vec<f32> = scaled(&grad, w, scale).collect();
                chunk_backward(net, tr, &trace, &dscores, g, &mut known);
                (w * ql.value, ql.norm, scores)
            })
            .collect()
    };
    // One worker a thread takes the next group, computes its gradient and adds it when its turn comes (parking it
    // meanwhile if there is room, else waiting), so that a piece holds a gradient a thread (and `parked` more:
    // [`PARKED`], none when lean)
    // rather than one a group. The group with the lowest number not yet added is never parked (the worker that
    // adds the group before it adds the parked ones that follow) and is held by a worker that waits for nothing,
    // so the workers cannot deadlock; no kernel here uses rayon, so no worker steals another's task while it
    // waits. A worker that panics marks the order failed on its way out, so that none waits for its turn for
    // ever, and rayon passes the panic on.
    let order = Mutex::new(Order {
        next: 0,
        added: 0,
        failed: false,
        parked: Vec::new(),
        total,
        spare,
        parts: vec![Vec::new(); groups.len()],
    });
    let turn = Condvar::new();
    let workers = rayon::current_num_threads().clamp(1, groups.len().max(1));
    (0..workers).into_par_iter().for_each(|_| loop {
        let _failing = Failing(&order, &turn);
        let (k, reuse) = {
            let mut o = order.lock().expect("no worker panics holding the order");
            if o.next == groups.len() || o.failed {
                return;
            }
            o.next += 1;
            (o.next - 1, o.spare.pop())
        };
        // Zeroed outside the lock.
        let mut g = zeroed_gradient(net, reuse, Share::Caller);
        let part = run(&mut g, groups[k].clone());
        let mut o = order.lock().expect("no worker panics holding the order");
        // Not its turn: park the group if there is room and take the next, else wait.
        while o.added != k && !o.failed && o.parked.len() >= parked {
            o = turn.wait(o).expect("no worker panics holding the order");
        }
        if o.failed {
            return;
        }
        let o = &mut *o;
        if o.added != k {
            o.parked.push((k, g, part));
            continue;
        }
        add_groups([g], o.total, o.spare, Share::Caller);
        o.parts[k] = part;
        o.added += 1;
        // The parked groups whose turn has come.
        while let Some(i) = o.parked.iter().position(|(j, _, _)| *j == o.added) {
            let (j, g, part) = o.parked.swap_remove(i);
            add_groups([g], o.total, o.spare, Share::Caller);
            o.parts[j] = part;
            o.added += 1;
        }
        turn.notify_all();
    });
    let parts = order.into_inner().expect("no worker panicked").parts;
    let (mut value, mut seen, mut scores) = (0.0, 0.0, Vec::new());
    for (v, n, s) in parts.into_iter().flatten() {
        value += v;
        seen += n;
        scores.extend(s);
    }
    (value, seen, scores)
}

/// Groups [`query_by_query`] may hold done before their turn, beside one a worker: a worker that finishes early
/// takes the next group instead of waiting, for one more gradient in memory.
pub(crate) const PARKED: usize = 1;

/// The groups of [`query_by_query`]: the next to take, the next to add and where they go.
struct Order<'a> {
    next: usize,
    added: usize,
    /// A worker panicked: the others stop instead of waiting for its turn.
    failed: bool,
    /// Groups done before their turn: their number, gradient and queries' results.
    parked: Vec<(usize, NeuralNet, GroupResults)>,
    total: &'a mut Option<NeuralNet>,
    spare: &'a mut Vec<NeuralNet>,
    parts: Vec<GroupResults>,
}

/// Per query of a group: its weighted loss, its share of the normaliser and its scores.
type GroupResults = Vec<(f64, f64, Vec<f32>)>;

/// Marks the order failed and wakes the waiting workers when dropped by a panicking worker.
struct Failing<'a, 'b>(&'a Mutex<Order<'b>>, &'a Condvar);

impl Drop for Failing<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut o = self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            o.failed = true;
            self.1.notify_all();
        }
    }
}

/// A piece's features and query offsets from 0.
type Gather<'a> = dyn Fn(&Range<usize>) -> (Vec<f32>, Vec<usize>) + 'a;

/// A piece's loss, normaliser and scaled score gradient.
type PieceLoss<'a> = dyn Fn(&Range<usize>, &Pass, &[usize]) -> (f64, f64, Vec<f32>) + 'a;

/// Batch normalisation over a batch of several pieces: per batch-normalised layer from the bottom, two passes over
/// the pieces (`Σ v`, then `Σ (v − mean)²`, each piece's chunks summed in order and the pieces in order) give the
/// batch's statistics, the layers below normalised by theirs; then per batch-normalised layer from the top, a pass
/// of forward and backward down to it gives the batch's `(Σ dx̂, Σ dx̂·x̂)`, the layers above using theirs. The
/// step's last pass then runs each piece once more with all of them. Memory stays a piece's; the price is
/// recomputing the forward pass (about three passes a batch-normalised layer).
#[allow(clippy::too_many_arguments)]
fn batch_norm_passes(
    net: &NeuralNet,
    tr: &Transposed,
    all: &[Range<usize>],
    gather: &Gather<'_>,
    piece_loss: &PieceLoss<'_>,
    dropout: Option<Dropout>,
    rows: usize,
    spare: &mut Vec<NeuralNet>,
) -> (Vec<Option<BatchStats>>, Vec<Option<Vec<f64>>>) {
    let layers = net.hidden.len();
    let mut stats: Vec<Option<BatchStats>> = vec![None; layers];
    for l in 0..layers {
        if net.hidden[l].batch_norm.is_none() {
            continue;
        }
        let over = |mean: Option<&[f64]>| {
            let mut total = vec![0f64; net.hidden[l].dense.outputs];
            let mut first = 0;
            for piece in all {
                let (x, local) = gather(piece);
                let (s, c) = layer_sums(net, tr, &x, &local, dropout, first, &stats, l, mean);
                first += c;
                total.iter_mut().zip(s).for_each(|(t, v)| *t += v);
            }
            total
        };
        let sum = over(None);
        let mean = mean_of(rows, &sum);
        let sq = over(Some(&mean));
        stats[l] = Some(stats_from_sums(rows, sum, sq));
    }
    let mut sums: Vec<Option<Vec<f64>>> = vec![None; layers];
    for l in (0..layers).rev() {
        if net.hidden[l].batch_norm.is_none() {
            continue;
        }
        let mut total = vec![0f64; 2 * net.hidden[l].dense.outputs];
        let mut first = 0;
        for piece in all {
            let (x, local) = gather(piece);
            let pass = forward_given(net, tr, &x, &local, dropout, first, &stats);
            first += pass.chunks();
            let (_, _, dscores) = piece_loss(piece, &pass, &local);
            let s = backward_part(
                net,
                tr,
                &pass,
                &dscores,
                &mut None,
                spare,
                Some(&sums),
                Some(l),
                None,
            )
            .expect("stopped at a batch-normalised layer");
            total.iter_mut().zip(s).for_each(|(t, v)| *t += v);
        }
        sums[l] = Some(total);
    }
    (stats, sums)
}

/// The loss of `net` on one batch of queries and its gradient with respect to every parameter, as one training
/// step computes them without dropout: `x` holds the documents' features (row-major, `net.n_features` wide), query
/// `q` the rows `offsets[q]..offsets[q + 1]`. Returns the loss, the scores and the gradient (a network of the same
/// shape). For checks of the backward pass (finite differences, allRank's autograd) and tools.
pub fn loss_and_gradient(
    net: &NeuralNet,
    x: &[f32],
    labels: &[f64],
    offsets: &[usize],
    loss: Loss,
) -> (f64, Vec<f32>, NeuralNet) {
    loss_and_gradient_in_pieces(net, x, labels, offsets, loss, PIECE_ROWS)
}

/// [`loss_and_gradient`] with the batch's queries taken in pieces of at most `piece_rows` documents (a longer query
/// alone), as training takes them in pieces of 4,096: the loss and scores are the same, the gradient the same to
/// rounding, and a batch-normalised network still normalises by the whole batch's statistics. For checks.
pub fn loss_and_gradient_in_pieces(
    net: &NeuralNet,
    x: &[f32],
    labels: &[f64],
    offsets: &[usize],
    loss: Loss,
    piece_rows: usize,
) -> (f64, Vec<f32>, NeuralNet) {
    let s = step_on(net, x, labels, offsets, loss, piece_rows);
    (s.value, s.scores, s.grad)
}

/// [`loss_and_gradient`] with dropout as a training step draws it: probability `p` after each hidden layer and
/// `encoder` inside the encoder, the masks from `seed`'s streams (so calls with the same seed drop the same
/// entries, whatever the parameters). For checks of the backward pass through the masks.
// pub for the tests in tests/attention.rs; not API.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn loss_and_gradient_with_dropout(
    net: &NeuralNet,
    x: &[f32],
    labels: &[f64],
    offsets: &[usize],
    loss: Loss,
    p: f32,
    encoder: f32,
    seed: u64,
) -> (f64, Vec<f32>, NeuralNet) {
    let dropout = Some(Dropout { p, encoder, seed });
    let s = step_on_rows(
        net,
        x,
        labels,
        offsets,
        loss,
        PIECE_ROWS,
        dropout,
        None,
        Passes::Fewest,
    );
    (s.value, s.scores, s.grad)
}

/// [`loss_and_gradient`] with each query's loss and gradient multiplied by `weights[q]`, as a training step on a
/// click training set weighs them. For checks.
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
pub fn loss_and_gradient_weighted(
    net: &NeuralNet,
    x: &[f32],
    labels: &[f64],
    offsets: &[usize],
    loss: Loss,
    weights: &[f64],
) -> (f64, Vec<f32>, NeuralNet) {
    let s = step_on_rows(
        net,
        x,
        labels,
        offsets,
        loss,
        PIECE_ROWS,
        None,
        Some(weights),
        Passes::Fewest,
    );
    (s.value, s.scores, s.grad)
}

/// [`loss_and_gradient`] with `limit` documents per piece.
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
pub fn step_on(
    net: &NeuralNet,
    x: &[f32],
    labels: &[f64],
    offsets: &[usize],
    loss: Loss,
    limit: usize,
) -> Step {
    step_on_rows(
        net,
        x,
        labels,
        offsets,
        loss,
        limit,
        None,
        None,
        Passes::Fewest,
    )
}

/// One step on the rows `x` (row-major, `net.n_features` wide), query `q` the rows `offsets[q]..offsets[q + 1]`
/// weighted by `weights` when given, with no tie seeds, keeping the scores, its passes taken as `passes` says.
#[allow(clippy::too_many_arguments)]
fn step_on_rows(
    net: &NeuralNet,
    x: &[f32],
    labels: &[f64],
    offsets: &[usize],
    loss: Loss,
    limit: usize,
    dropout: Option<Dropout>,
    weights: Option<&[f64]>,
    passes: Passes,
) -> Step {
    let d = net.n_features;
    let rows: Vec<usize> = (0..labels.len()).collect();
    let ties = vec![0; offsets.len().saturating_sub(1)];
    let batch = Batch {
        rows: &rows,
        offsets,
        labels,
        tie_seeds: &ties,
        weights,
    };
    let features = |r: usize, out: &mut [f32]| out.copy_from_slice(&x[r * d..(r + 1) * d]);
    step(
        net,
        &features,
        &batch,
        loss,
        dropout,
        limit,
        true,
        &mut Vec::new(),
        passes,
    )
}

/// One step on the rows `x` with query `weights` when given and dropout `(p, encoder, seed)` when given, its passes
/// taken as `passes` says.
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn step_taking(
    net: &NeuralNet,
    x: &[f32],
    labels: &[f64],
    offsets: &[usize],
    loss: Loss,
    limit: usize,
    dropout: Option<(f32, f32, u64)>,
    weights: Option<&[f64]>,
    passes: Passes,
) -> Step {
    let dropout = dropout.map(|(p, encoder, seed)| Dropout { p, encoder, seed });
    step_on_rows(
        net, x, labels, offsets, loss, limit, dropout, weights, passes,
    )
}

/// Move the running statistics of `net`'s batch-normalised layers as one training step on the batch `x` (query
/// `q` the rows `offsets[q]..offsets[q + 1]`) moves them, without dropout and without changing any parameter. For
/// checks against PyTorch's running statistics and tools.
pub fn update_batch_norm_statistics(net: &mut NeuralNet, x: &[f32], offsets: &[usize]) {
    let labels = vec![0.0; offsets.last().copied().unwrap_or(0)];
    let s = step_on(net, x, &labels, offsets, Loss::Mse, PIECE_ROWS);
    update_running_stats(net, &s.batch);
}
