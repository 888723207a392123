//! The training passes of a [`NeuralNet`]: a forward pass that keeps what the backward pass needs (and applies
//! dropout), and the backward pass to every parameter's gradient.
//!
//! Rows are processed in chunks of `CHUNK` rows, in parallel; each chunk's parameter gradient is its own, and the
//! chunks' gradients are added in chunk order. The chunking does not depend on the thread count, so neither does
//! any bit of the gradient. The arithmetic of the forward pass is `ltr_core::neural::kernels`', the scorer's.

use ltr_core::neural::kernels::{self, Packed};
use ltr_core::neural::{
    Activation, BatchNorm, Dense, HiddenLayer, LayerNorm, NeuralNet, BATCH_NORM_MOMENTUM,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::dense::{dense_backward, dense_dx, dense_gradient, transposed};
use crate::encoder::{self, EncoderTrace};

/// Rows per chunk of the forward and backward passes (a fixed number: the gradient's summation order).
pub(crate) const CHUNK: usize = 128;

/// Chunks per group of the backward pass: a group adds its chunks' gradients in order into its own sum (a fixed
/// number: the gradient's summation order).
pub(crate) const GROUP: usize = 8;

/// What a chunk's forward pass keeps for its backward pass.
struct Trace {
    rows: usize,
    /// The network's input after input normalisation (`rows × d`).
    input: Vec<f32>,
    /// Input normalisation's x̂ and 1/σ per row.
    input_norm: Option<(Vec<f32>, Vec<f32>)>,
    /// Per hidden layer: its output after activation and dropout, the dropout mask (scale or 0), the layer norm's
    /// x̂ and 1/σ.
    layers: Vec<LayerTrace>,
    /// The encoder's trace and output (the output layer's input), when the network has one.
    encoder: Option<(EncoderTrace, Vec<f32>)>,
}

struct LayerTrace {
    out: Vec<f32>,
    /// Activation outputs before dropout, for tanh's and sigmoid's derivatives (empty with ReLU and identity).
    act: Vec<f32>,
    /// A byte an entry ([`crate::dense::dropout_codes`]): dropout kept it (bit 0), ReLU's output was at most 0
    /// (bit 1); empty with neither dropout nor ReLU.
    codes: Vec<u8>,
    /// Dropout's mask of a kept entry, `1/(1 − p)`, when the layer had dropout.
    keep: Option<f32>,
    norm: Option<(Vec<f32>, Vec<f32>)>,
    /// Batch norm's x̂ (its statistics are the batch's, in [`Pass`]).
    batch_xhat: Option<Vec<f32>>,
}

/// Dropout during training: probability and the seed of this pass's masks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dropout {
    /// After each hidden layer.
    pub p: f32,
    /// In the encoder (allRank's transformer `dropout`).
    pub encoder: f32,
    pub seed: u64,
}

/// One chunk's state while the forward pass goes layer by layer over all chunks.
struct ChunkForward {
    trace: Trace,
    rng: Option<ChaCha8Rng>,
    /// The current layer's affine output, before normalisation.
    pending: Vec<f32>,
}

/// A batch-normalised layer's statistics over every row of the batch.
#[derive(Clone)]
// pub for the tests in tests/unit/step.rs; not API (so no `Debug`).
#[doc(hidden)]
#[allow(missing_debug_implementations)]
pub struct BatchStats {
    /// Rows of the batch.
    pub n: usize,
    /// Mean per component (f64, and as the forward pass subtracts it).
    pub mean: Vec<f64>,
    mean32: Vec<f32>,
    /// Biased variance per component (what training divides by).
    pub var: Vec<f64>,
    rstd: Vec<f32>,
}

/// Per component `Σ f(v, j)` over the `width`-wide rows spread over the chunks' `pending` outputs: each chunk sums
/// its rows in order (f64), and the chunks' sums are added in chunk order — no bit depends on threads.
fn chunk_sums(
    states: &[ChunkForward],
    width: usize,
    f: &(dyn Fn(f32, usize) -> f64 + Sync),
) -> Vec<f64> {
    let parts: Vec<Vec<f64>> = states
        .par_iter()
        .map(|s| {
            let mut acc = vec![0f64; width];
            for row in s.pending.chunks(width) {
                for (j, (a, &v)) in acc.iter_mut().zip(row).enumerate() {
                    *a += f(v, j);
                }
            }
            acc
        })
        .collect();
    let mut total = vec![0f64; width];
    for p in parts {
        total.iter_mut().zip(p).for_each(|(t, v)| *t += v);
    }
    total
}

impl BatchStats {
    /// The statistics of `n` rows from their sums `Σ v` and `Σ (v − mean)²` per component.
    fn from_sums(n: usize, sum: Vec<f64>, sq: impl FnOnce(&[f64]) -> Vec<f64>) -> Self {
        let inv_n = 1.0 / n.max(1) as f64;
        let mean: Vec<f64> = sum.into_iter().map(|v| v * inv_n).collect();
        let var: Vec<f64> = sq(&mean).into_iter().map(|v| v * inv_n).collect();
        BatchStats {
            n,
            mean32: mean.iter().map(|&m| m as f32).collect(),
            rstd: kernels::batch_norm_rstd(&var),
            mean,
            var,
        }
    }
}

/// Per component mean and biased variance of `width`-wide rows spread over the chunks' `pending` outputs.
fn batch_stats(states: &[ChunkForward], width: usize) -> BatchStats {
    let n: usize = states.iter().map(|s| s.trace.rows).sum();
    let sum = chunk_sums(states, width, &|v, _| f64::from(v));
    BatchStats::from_sums(n, sum, |mean| {
        chunk_sums(states, width, &|v, j| (f64::from(v) - mean[j]).powi(2))
    })
}

fn start_chunk(net: &NeuralNet, x: &[f32], c: usize, dropout: Option<Dropout>) -> ChunkForward {
    let d = net.n_features;
    let mut input = x.to_vec();
    let input_norm = net.input_norm.as_ref().map(|n| {
        let (mut rstd, mut xhat) = (Vec::new(), Vec::new());
        kernels::layer_norm_rows(&mut input, d, n, Some((&mut rstd, &mut xhat)));
        (xhat, rstd)
    });
    // Each chunk's dropout masks from its own stream.
    let rng = dropout.map(|dr| {
        ChaCha8Rng::seed_from_u64(dr.seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    });
    ChunkForward {
        trace: Trace {
            rows: x.len() / d.max(1),
            input,
            input_norm,
            layers: Vec::with_capacity(net.hidden.len()),
            encoder: None,
        },
        rng,
        pending: Vec::new(),
    }
}

/// Hidden layer `h`'s normalisation (layer norm, or batch norm by the batch's `stats`), activation and dropout on
/// the chunk's pending affine output.
fn finish_layer(
    net: &NeuralNet,
    h: &HiddenLayer,
    s: &mut ChunkForward,
    stats: Option<&BatchStats>,
    dropout: Option<Dropout>,
) {
    let mut y = std::mem::take(&mut s.pending);
    let norm = h.norm.as_ref().map(|n| {
        let (mut rstd, mut xhat) = (Vec::new(), Vec::new());
        kernels::layer_norm_rows(&mut y, h.dense.outputs, n, Some((&mut rstd, &mut xhat)));
        (xhat, rstd)
    });
    let batch_xhat = match (&h.batch_norm, stats) {
        (Some(b), Some(st)) => {
            let mut xhat = Vec::new();
            kernels::batch_norm_apply(&mut y, &st.mean32, &st.rstd, b, Some(&mut xhat));
            Some(xhat)
        }
        _ => None,
    };
    kernels::activate(net.activation, &mut y);
    let act = match net.activation {
        Activation::Tanh | Activation::Sigmoid => y.clone(),
        Activation::Relu | Activation::Identity => Vec::new(),
    };
    let relu = matches!(net.activation, Activation::Relu);
    let drop = match (dropout, s.rng.as_mut()) {
        (Some(Dropout { p, .. }), Some(rng)) if p > 0.0 => Some((p, rng)),
        _ => None,
    };
    let keep = drop.as_ref().map(|(p, _)| 1.0 / (1.0 - p));
    let codes = if keep.is_some() || relu {
        crate::dense::dropout_codes(&mut y, drop, relu)
    } else {
        Vec::new()
    };
    s.trace.layers.push(LayerTrace {
        out: y,
        act,
        codes,
        keep,
        norm,
        batch_xhat,
    });
}

/// The encoder (when the network has one) and the output layer on a chunk whose hidden layers are done.
fn finish_chunk(net: &NeuralNet, s: &mut ChunkForward, dropout: Option<Dropout>) -> Vec<f32> {
    let t = &mut s.trace;
    let last = t.layers.last().map_or(&t.input, |l| &l.out);
    let encoder = net.encoder.as_ref().map(|e| {
        let mut z = last.clone();
        let drop = dropout.map(|dr| (dr.encoder, s.rng.as_mut().expect("seeded with the dropout")));
        let et = encoder::forward(e, &mut z, t.rows, drop);
        (et, z)
    });
    t.encoder = encoder;
    let last = t
        .encoder
        .as_ref()
        .map_or_else(|| t.layers.last().map_or(&t.input, |l| &l.out), |(_, z)| z);
    let mut scores = vec![0f32; t.rows];
    kernels::affine(last, &net.output, &mut scores);
    scores
}

/// A network of zeros shaped like `net`: the gradient's container.
pub(crate) fn zeros_like(net: &NeuralNet) -> NeuralNet {
    let zero_dense = |d: &Dense| Dense::zeros(d.inputs, d.outputs);
    let zero_norm = |n: &Option<LayerNorm>| {
        n.as_ref().map(|n| LayerNorm {
            gamma: vec![0.0; n.gamma.len()],
            beta: vec![0.0; n.beta.len()],
        })
    };
    NeuralNet {
        n_features: net.n_features,
        input_norm: zero_norm(&net.input_norm),
        hidden: net
            .hidden
            .iter()
            .map(|h| HiddenLayer {
                dense: zero_dense(&h.dense),
                norm: zero_norm(&h.norm),
                batch_norm: h.batch_norm.as_ref().map(|b| BatchNorm {
                    gamma: vec![0.0; b.gamma.len()],
                    beta: vec![0.0; b.beta.len()],
                    running_mean: vec![0.0; b.gamma.len()],
                    running_var: vec![0.0; b.gamma.len()],
                }),
            })
            .collect(),
        activation: net.activation,
        output: zero_dense(&net.output),
        encoder: net.encoder.as_ref().map(encoder::zeros_like),
    }
}

/// Every parameter array of `net`, in one fixed order (the optimiser's).
// pub for the tests in tests/unit/step.rs; not API.
#[doc(hidden)]
pub fn parameters_mut(net: &mut NeuralNet) -> Vec<&mut [f32]> {
    let mut out: Vec<&mut [f32]> = Vec::new();
    if let Some(n) = net.input_norm.as_mut() {
        out.push(&mut n.gamma);
        out.push(&mut n.beta);
    }
    for h in net.hidden.iter_mut() {
        out.push(&mut h.dense.weights);
        out.push(&mut h.dense.bias);
        if let Some(n) = h.norm.as_mut() {
            out.push(&mut n.gamma);
            out.push(&mut n.beta);
        }
        // γ and β only: the running statistics are not trained.
        if let Some(b) = h.batch_norm.as_mut() {
            out.push(&mut b.gamma);
            out.push(&mut b.beta);
        }
    }
    out.push(&mut net.output.weights);
    out.push(&mut net.output.bias);
    if let Some(e) = net.encoder.as_mut() {
        out.extend(encoder::parameters_mut(e));
    }
    out
}

/// Layer norm's backward: γ and β gradients added, the gradient with respect to its input returned.
fn layer_norm_backward(
    dout: &[f32],
    xhat: &[f32],
    rstd: &[f32],
    n: &LayerNorm,
    grad: &mut LayerNorm,
) -> Vec<f32> {
    let w = n.gamma.len();
    let mut dx = vec![0f32; dout.len()];
    for (r, ((dr, xr), dxr)) in dout
        .chunks(w)
        .zip(xhat.chunks(w))
        .zip(dx.chunks_mut(w))
        .enumerate()
    {
        let (mut m1, mut m2) = (0f64, 0f64);
        for j in 0..w {
            grad.gamma[j] += dr[j] * xr[j];
            grad.beta[j] += dr[j];
            let dh = f64::from(dr[j] * n.gamma[j]);
            m1 += dh;
            m2 += dh * f64::from(xr[j]);
        }
        let (m1, m2) = ((m1 / w as f64) as f32, (m2 / w as f64) as f32);
        for j in 0..w {
            let dh = dr[j] * n.gamma[j];
            dxr[j] = rstd[r] * (dh - m1 - xr[j] * m2);
        }
    }
    dx
}

/// Batch norm's backward, first half, on one chunk: γ and β gradients added, and the chunk's sums
/// `(Σ dx̂, Σ dx̂·x̂)` per component (f64, rows in order), with `dx̂ = dout · γ`.
fn batch_norm_sums(dout: &[f32], xhat: &[f32], b: &BatchNorm, grad: &mut BatchNorm) -> Vec<f64> {
    let w = b.gamma.len();
    let mut sums = vec![0f64; 2 * w];
    for (dr, xr) in dout.chunks(w).zip(xhat.chunks(w)) {
        for j in 0..w {
            grad.gamma[j] += dr[j] * xr[j];
            grad.beta[j] += dr[j];
            let dh = dr[j] * b.gamma[j];
            sums[j] += f64::from(dh);
            sums[w + j] += f64::from(dh * xr[j]);
        }
    }
    sums
}

/// Batch norm's backward, second half: `dx = rstd · (dx̂ − Σdx̂/N − x̂ · Σ(dx̂·x̂)/N)`, the sums over the whole batch.
fn batch_norm_dx(
    dout: &[f32],
    xhat: &[f32],
    b: &BatchNorm,
    st: &BatchStats,
    sums: &[f64],
) -> Vec<f32> {
    let w = b.gamma.len();
    let inv_n = 1.0 / st.n.max(1) as f64;
    let m1: Vec<f32> = sums[..w].iter().map(|&v| (v * inv_n) as f32).collect();
    let m2: Vec<f32> = sums[w..].iter().map(|&v| (v * inv_n) as f32).collect();
    let mut dx = vec![0f32; dout.len()];
    for ((dr, xr), dxr) in dout.chunks(w).zip(xhat.chunks(w)).zip(dx.chunks_mut(w)) {
        for j in 0..w {
            let dh = dr[j] * b.gamma[j];
            dxr[j] = st.rstd[j] * (dh - m1[j] - xr[j] * m2[j]);
        }
    }
    dx
}

/// One chunk's state while the backward pass goes layer by layer: its trace, its loss gradient and the gradient
/// with respect to the current layer's output.
struct ChunkBackward<'a> {
    trace: &'a Trace,
    dscores: &'a [f32],
    d: Vec<f32>,
    /// Batch norm's per-chunk sums of the current layer.
    sums: Vec<f64>,
}

/// The weights the passes multiply by, packed into the products' panels once per training step for all its
/// pieces and chunks ([`kernels::Packed`]): each hidden layer's `W` (the forward pass), and `Wᵀ` of each hidden
/// layer, the output layer and the encoder's layers (the backward pass).
pub(crate) struct Transposed {
    forward: Vec<Packed>,
    dense: Vec<Packed>,
    encoder: Option<encoder::Transposes>,
}

impl Transposed {
    /// `long_queries`: the step's queries hold a mean of at least [`encoder::UNPACKED_FROM`] documents, so the
    /// encoder keeps fewer transposes ([`encoder::Transposes`]).
    pub(crate) fn new(net: &NeuralNet, long_queries: bool) -> Self {
        let forward = net
            .hidden
            .iter()
            .map(|h| Packed::new(&h.dense.weights, h.dense.inputs, h.dense.outputs))
            .collect();
        let mut dense: Vec<Packed> = net.hidden.iter().map(|h| transposed(&h.dense)).collect();
        dense.push(transposed(&net.output));
        Self {
            forward,
            dense,
            encoder: net
                .encoder
                .as_ref()
                .map(|e| encoder::Transposes::new(e, long_queries)),
        }
    }
}

fn backward_output(
    net: &NeuralNet,
    tr: &Transposed,
    c: &mut ChunkBackward<'_>,
    grad: &mut NeuralNet,
) {
    let trace = c.trace;
    let before_out = trace.layers.last().map_or(&trace.input, |t| &t.out);
    let last = trace.encoder.as_ref().map_or(before_out, |(_, z)| z);
    let below = !net.hidden.is_empty() || net.input_norm.is_some();
    c.d = dense_backward(
        last,
        c.dscores,
        &tr.dense[net.hidden.len()],
        &net.output,
        &mut grad.output,
        below || net.encoder.is_some(),
    );
    if let (Some(e), Some((t, _)), Some(et), Some(ge)) = (
        &net.encoder,
        &trace.encoder,
        tr.encoder.as_ref(),
        grad.encoder.as_mut(),
    ) {
        c.d = encoder::backward(e, et, t, &c.d, ge);
    }
}

/// Hidden layer `l`'s backward down to its normalisation's output: dropout, activation, layer norm; batch norm's
/// first half.
fn backward_activation(net: &NeuralNet, l: usize, c: &mut ChunkBackward<'_>, grad: &mut NeuralNet) {
    let t = &c.trace.layers[l];
    let d = &mut c.d;
    // Dropout's mask, then ReLU's derivative, in one pass over the bytes the forward pass kept.
    let relu = matches!(net.activation, Activation::Relu);
    kernels::mask_backward(d, &t.codes, t.keep, relu);
    match net.activation {
        Activation::Tanh => d
            .iter_mut()
            .zip(&t.act)
            .for_each(|(g, y)| *g *= 1.0 - y * y),
        Activation::Sigmoid => d
            .iter_mut()
            .zip(&t.act)
            .for_each(|(g, y)| *g *= y * (1.0 - y)),
        Activation::Relu | Activation::Identity => {}
    }
    let h = &net.hidden[l];
    if let (Some(n), Some((xhat, rstd))) = (&h.norm, &t.norm) {
        let dn = layer_norm_backward(d, xhat, rstd, n, grad.hidden[l].norm.as_mut().unwrap());
        c.d = dn;
    }
    if let (Some(b), Some(xhat)) = (&h.batch_norm, &t.batch_xhat) {
        c.sums = batch_norm_sums(&c.d, xhat, b, grad.hidden[l].batch_norm.as_mut().unwrap());
    }
}

/// Hidden layer `l`'s backward from its normalisation's output down: batch norm's second half (`sums` over the
/// batch), the affine map.
fn backward_affine(
    net: &NeuralNet,
    tr: &Transposed,
    l: usize,
    stats: Option<(&BatchStats, &[f64])>,
    c: &mut ChunkBackward<'_>,
    grad: &mut NeuralNet,
    no_neg_zero: &mut bool,
) {
    affine_gradient(net, l, stats, c, grad, no_neg_zero, 1);
    affine_dx(net, tr, l, c);
}

/// [`backward_affine`] for every chunk of a group, with the work shared by the threads: each chunk's weight
/// gradient is added in chunk order as before, its rows of `dW` split into up to `runs` runs computed in parallel
/// ([`dense_gradient`]), and then the chunks' `dx = dy Wᵀ` are computed in parallel (each a chunk's own). Every
/// value is the one [`backward_affine`] computes, chunk after chunk.
#[allow(clippy::too_many_arguments)]
fn affine_in_parallel(
    net: &NeuralNet,
    tr: &Transposed,
    l: usize,
    stats: Option<(&BatchStats, &[f64])>,
    cs: &mut [ChunkBackward<'_>],
    grad: &mut NeuralNet,
    no_neg_zero: &mut bool,
    runs: usize,
) {
    for c in cs.iter_mut() {
        affine_gradient(net, l, stats, c, grad, no_neg_zero, runs);
    }
    cs.par_iter_mut().for_each(|c| affine_dx(net, tr, l, c));
}

/// Hidden layer `l`'s backward to its parameters: batch norm's second half, then `dW += aᵀ dy` and `db` added into
/// `grad` (`dW`'s rows in up to `runs` runs in parallel, [`dense_gradient`]).
#[allow(clippy::too_many_arguments)]
fn affine_gradient(
    net: &NeuralNet,
    l: usize,
    stats: Option<(&BatchStats, &[f64])>,
    c: &mut ChunkBackward<'_>,
    grad: &mut NeuralNet,
    no_neg_zero: &mut bool,
    runs: usize,
) {
    let h = &net.hidden[l];
    if let (Some(b), Some(xhat), Some((st, sums))) =
        (&h.batch_norm, &c.trace.layers[l].batch_xhat, stats)
    {
        c.d = batch_norm_dx(&c.d, xhat, b, st, sums);
    }
    let a = if l == 0 {
        &c.trace.input
    } else {
        &c.trace.layers[l - 1].out
    };
    dense_gradient(
        a,
        &c.d,
        &h.dense,
        &mut grad.hidden[l].dense,
        no_neg_zero,
        runs,
    );
}

/// Hidden layer `l`'s `dx = dy Wᵀ` in place of `dy` (empty for the first layer without input normalisation, where
/// nothing below needs it).
fn affine_dx(net: &NeuralNet, tr: &Transposed, l: usize, c: &mut ChunkBackward<'_>) {
    let want_dx = l > 0 || net.input_norm.is_some();
    c.d = if want_dx {
        dense_dx(&c.d, &tr.dense[l], &net.hidden[l].dense)
    } else {
        Vec::new()
    };
}

fn backward_input(net: &NeuralNet, c: &ChunkBackward<'_>, grad: &mut NeuralNet) {
    if let (Some(n), Some((xhat, rstd))) = (&net.input_norm, &c.trace.input_norm) {
        layer_norm_backward(&c.d, xhat, rstd, n, grad.input_norm.as_mut().unwrap());
    }
}

/// Values a task of [`Share::Threads`] zeroes or adds at a time.
const SHARED_SPAN: usize = 1 << 16;

/// Whether a gradient's zeroing and additions may use rayon's threads. Each entry's value is its own either way;
/// what differs is who may run it: a worker of `step.rs`'s query-by-query pass waits for its turn while holding its
/// thread, so nothing it runs may hand work to rayon (a waiting join could take up another worker's task).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Share {
    /// On the calling thread.
    Caller,
    /// Split into spans of [`SHARED_SPAN`] values run by rayon's threads.
    Threads,
}

/// Add `b` into `a`, array by array in the optimiser's order (each entry `a + 1 · b`, whoever adds it).
fn add_into(a: &mut NeuralNet, b: &mut NeuralNet, share: Share) {
    for (x, y) in parameters_mut(a).into_iter().zip(parameters_mut(b)) {
        match share {
            Share::Caller => kernels::axpy(1.0, y, x),
            Share::Threads => x
                .par_chunks_mut(SHARED_SPAN)
                .zip(y.par_chunks(SHARED_SPAN))
                .for_each(|(x, y)| kernels::axpy(1.0, y, x)),
        }
    }
}

/// The scores of the rows of `x` (row-major, `n_features` wide) in training mode (dropout, batch statistics), and
/// what the backward pass needs.
pub(crate) struct Pass {
    traces: Vec<Trace>,
    pub scores: Vec<f32>,
    /// Per hidden layer, its batch statistics when it is batch-normalised.
    pub batch: Vec<Option<BatchStats>>,
}

impl Pass {
    /// Chunks of rows this pass went in (the next piece's first chunk number).
    pub(crate) fn chunks(&self) -> usize {
        self.traces.len()
    }
}

/// Forward over all rows of `x`, chunk by chunk in parallel (dropout masks seeded per chunk), one hidden layer at a
/// time over all chunks: a batch-normalised layer's statistics are over every row of the batch (the documents of
/// its queries; slates are never padded, so no padding is counted). The rows of query `q` are
/// `offsets[q]..offsets[q + 1]`: with an encoder each query is a chunk (its documents attend to each other),
/// without one the chunks are [`CHUNK`] rows. Chunk `c` of this pass draws its dropout masks from the stream of
/// chunk number `first_chunk + c` of the training step.
pub(crate) fn forward(
    net: &NeuralNet,
    tr: &Transposed,
    x: &[f32],
    offsets: &[usize],
    dropout: Option<Dropout>,
    first_chunk: usize,
) -> Pass {
    match run_forward(net, tr, x, offsets, dropout, first_chunk, None, None) {
        Forward::Done(p) => p,
        Forward::Stopped(_) => unreachable!("no stop asked"),
    }
}

/// [`forward`] with every batch-normalised layer normalised by the given statistics (the whole batch's, summed
/// over its pieces) instead of this piece's.
pub(crate) fn forward_given(
    net: &NeuralNet,
    tr: &Transposed,
    x: &[f32],
    offsets: &[usize],
    dropout: Option<Dropout>,
    first_chunk: usize,
    given: &[Option<BatchStats>],
) -> Pass {
    match run_forward(net, tr, x, offsets, dropout, first_chunk, Some(given), None) {
        Forward::Done(p) => p,
        Forward::Stopped(_) => unreachable!("no stop asked"),
    }
}

/// One piece's part of batch-normalised layer `l`'s statistics: its rows' `Σ v` (no `mean`) or `Σ (v − mean)²`
/// per component of the layer's affine output, the layers below normalised by `given`; and the piece's chunks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn layer_sums(
    net: &NeuralNet,
    tr: &Transposed,
    x: &[f32],
    offsets: &[usize],
    dropout: Option<Dropout>,
    first_chunk: usize,
    given: &[Option<BatchStats>],
    l: usize,
    mean: Option<&[f64]>,
) -> (Vec<f64>, usize) {
    let Forward::Stopped(states) = run_forward(
        net,
        tr,
        x,
        offsets,
        dropout,
        first_chunk,
        Some(given),
        Some(l),
    ) else {
        unreachable!("stopped at layer {l}")
    };
    let w = net.hidden[l].dense.outputs;
    let sums = match mean {
        None => chunk_sums(&states, w, &|v, _| f64::from(v)),
        Some(m) => chunk_sums(&states, w, &|v, j| (f64::from(v) - m[j]).powi(2)),
    };
    (sums, states.len())
}

/// The per component mean of `n` rows from their sum, as [`BatchStats`] computes it.
pub(crate) fn mean_of(n: usize, sum: &[f64]) -> Vec<f64> {
    let inv_n = 1.0 / n.max(1) as f64;
    sum.iter().map(|v| v * inv_n).collect()
}

/// The statistics of `n` rows from their summed `Σ v` and `Σ (v − mean)²`.
pub(crate) fn stats_from_sums(n: usize, sum: Vec<f64>, sq: Vec<f64>) -> BatchStats {
    BatchStats::from_sums(n, sum, |_| sq)
}

enum Forward {
    Done(Pass),
    /// The chunks' states with `pending` holding the stop layer's affine output.
    Stopped(Vec<ChunkForward>),
}

#[allow(clippy::too_many_arguments)]
fn run_forward(
    net: &NeuralNet,
    tr: &Transposed,
    x: &[f32],
    offsets: &[usize],
    dropout: Option<Dropout>,
    first_chunk: usize,
    given: Option<&[Option<BatchStats>]>,
    stop: Option<usize>,
) -> Forward {
    let d = net.n_features;
    let rows = x.len() / d.max(1);
    let chunks: Vec<&[f32]> = if net.encoder.is_some() {
        offsets.windows(2).map(|w| &x[w[0] * d..w[1] * d]).collect()
    } else {
        x.chunks(CHUNK * d).collect()
    };
    let mut states: Vec<ChunkForward> = chunks
        .into_par_iter()
        .enumerate()
        .map(|(c, xc)| start_chunk(net, xc, first_chunk + c, dropout))
        .collect();
    let mut batch = Vec::with_capacity(net.hidden.len());
    for (l, h) in net.hidden.iter().enumerate() {
        states.par_iter_mut().for_each(|s| {
            let prev = s.trace.layers.last().map_or(&s.trace.input, |t| &t.out);
            let mut y = vec![0f32; s.trace.rows * h.dense.outputs];
            kernels::matmul_packed_sparse(prev, &tr.forward[l], Some(&h.dense.bias), &mut y);
            s.pending = y;
        });
        if stop == Some(l) {
            return Forward::Stopped(states);
        }
        let stats = h
            .batch_norm
            .as_ref()
            .map(|_| match given.and_then(|g| g[l].clone()) {
                Some(st) => st,
                None => batch_stats(&states, h.dense.outputs),
            });
        states
            .par_iter_mut()
            .for_each(|s| finish_layer(net, &net.hidden[l], s, stats.as_ref(), dropout));
        batch.push(stats);
    }
    let parts: Vec<Vec<f32>> = states
        .par_iter_mut()
        .map(|s| finish_chunk(net, s, dropout))
        .collect();
    let mut scores = Vec::with_capacity(rows);
    for s in &parts {
        scores.extend_from_slice(s);
    }
    Forward::Done(Pass {
        traces: states.into_iter().map(|s| s.trace).collect(),
        scores,
        batch,
    })
}

/// One chunk's trace, kept by [`chunk_forward`] for [`chunk_backward`].
pub(crate) struct ChunkTrace(Trace);

/// One chunk's forward pass on its own: the rows of `x`, chunk number `c` of the training step (its dropout
/// stream). Only for a network without batch norm, whose chunks never meet before the loss: each chunk's values
/// are then those of [`forward`]'s pass over all chunks, bit for bit.
pub(crate) fn chunk_forward(
    net: &NeuralNet,
    tr: &Transposed,
    x: &[f32],
    c: usize,
    dropout: Option<Dropout>,
) -> (ChunkTrace, Vec<f32>) {
    debug_assert!(net.hidden.iter().all(|h| h.batch_norm.is_none()));
    let mut s = start_chunk(net, x, c, dropout);
    for (l, h) in net.hidden.iter().enumerate() {
        let prev = s.trace.layers.last().map_or(&s.trace.input, |t| &t.out);
        let mut y = vec![0f32; s.trace.rows * h.dense.outputs];
        kernels::matmul_packed_sparse(prev, &tr.forward[l], Some(&h.dense.bias), &mut y);
        s.pending = y;
        finish_layer(net, h, &mut s, None, dropout);
    }
    let scores = finish_chunk(net, &mut s, dropout);
    (ChunkTrace(s.trace), scores)
}

/// One chunk's backward pass on its own, its gradient added into `grad` (a group's, the chunks added in order);
/// `known[l]` as [`backward_part`] keeps it per group and hidden layer. The same additions, in the same order per
/// parameter, as [`backward_part`] makes for this chunk.
pub(crate) fn chunk_backward(
    net: &NeuralNet,
    tr: &Transposed,
    trace: &ChunkTrace,
    dscores: &[f32],
    grad: &mut NeuralNet,
    known: &mut [bool],
) {
    let mut c = ChunkBackward {
        trace: &trace.0,
        dscores,
        d: Vec::new(),
        sums: Vec::new(),
    };
    backward_output(net, tr, &mut c, grad);
    for l in (0..net.hidden.len()).rev() {
        backward_activation(net, l, &mut c, grad);
        backward_affine(net, tr, l, None, &mut c, grad, &mut known[l]);
    }
    backward_input(net, &c, grad);
}

/// A gradient of zeros for a group: `reuse` (a spare one) zeroed again, its memory already mapped, else a new one.
pub(crate) fn zeroed_gradient(
    net: &NeuralNet,
    reuse: Option<NeuralNet>,
    share: Share,
) -> NeuralNet {
    match reuse {
        Some(mut g) => {
            for p in parameters_mut(&mut g) {
                match share {
                    Share::Caller => p.fill(0.0),
                    Share::Threads => p.par_chunks_mut(SHARED_SPAN).for_each(|p| p.fill(0.0)),
                }
            }
            g
        }
        None => zeros_like(net),
    }
}

/// Add the groups' gradients into `total` in order (the first becomes `total` when it is `None`), giving the
/// added ones back to `spare`.
pub(crate) fn add_groups(
    groups: impl IntoIterator<Item = NeuralNet>,
    total: &mut Option<NeuralNet>,
    spare: &mut Vec<NeuralNet>,
    share: Share,
) {
    for mut g in groups {
        match total {
            Some(t) => {
                add_into(t, &mut g, share);
                spare.push(g);
            }
            None => *total = Some(g),
        }
    }
}

/// Move every batch-normalised layer's running statistics towards this pass's batch statistics (PyTorch's
/// update: the mean, and the unbiased variance, with weight [`BATCH_NORM_MOMENTUM`]).
pub(crate) fn update_running_stats(net: &mut NeuralNet, batch: &[Option<BatchStats>]) {
    let m = BATCH_NORM_MOMENTUM;
    for (h, st) in net.hidden.iter_mut().zip(batch) {
        let (Some(b), Some(st)) = (h.batch_norm.as_mut(), st) else {
            continue;
        };
        for (r, &v) in b.running_mean.iter_mut().zip(&st.mean) {
            *r = ((1.0 - m) * f64::from(*r) + m * v) as f32;
        }
        if st.n > 1 {
            let unbiased = st.n as f64 / (st.n - 1) as f64;
            for (r, &v) in b.running_var.iter_mut().zip(&st.var) {
                *r = ((1.0 - m) * f64::from(*r) + m * v * unbiased) as f32;
            }
        }
    }
}

/// The gradient of every parameter over the pass's rows, given the loss's gradient with respect to each row's
/// score, added into `total` group by group in order (the first group's gradient becomes `total` when it is
/// `None`). `tr` holds `net`'s transposed weights. Batch norm's backward sums `(Σ dx̂, Σ dx̂·x̂)` are the pass's own
/// unless `given` has a layer's (the whole batch's, summed over its pieces); with `stop = Some(l)`, the pass goes
/// only down to batch-normalised layer `l`, returns its sums over this pass and adds nothing into `total`. The
/// groups' gradients are taken from `spare` (zeroed) while it has any, and given back to it once added.
#[allow(clippy::too_many_arguments)]
pub(crate) fn backward_part(
    net: &NeuralNet,
    tr: &Transposed,
    pass: &Pass,
    dscores: &[f32],
    total: &mut Option<NeuralNet>,
    spare: &mut Vec<NeuralNet>,
    given: Option<&[Option<Vec<f64>>]>,
    stop: Option<usize>,
    chain: Option<&mut Vec<bool>>,
) -> Option<Vec<f64>> {
    // Groups of GROUP chunks: each group adds its chunks' gradients in order into its own sum, and the groups'
    // sums are added in order — the same bits at any thread count, and one gradient a group in memory. The pass
    // goes one layer at a time over all groups, so that batch norm can sum over the whole batch in between.
    let mut at = 0;
    let chunks: Vec<ChunkBackward<'_>> = pass
        .traces
        .iter()
        .map(|t| {
            at += t.rows;
            ChunkBackward {
                trace: t,
                dscores: &dscores[at - t.rows..at],
                d: Vec::new(),
                sums: Vec::new(),
            }
        })
        .collect();
    if chunks.is_empty() {
        if let Some(l) = stop {
            return Some(vec![0f64; 2 * net.hidden[l].dense.outputs]);
        }
        total.get_or_insert_with(|| zeros_like(net));
        return None;
    }
    // Per group, per hidden layer: whether the group's weight gradient holds no −0 yet (true once zeroed, kept by
    // products that make none: `kernels::weight_gradient_known`), which spares scanning it before each product.
    let mut clean: Vec<Vec<bool>> = Vec::new();
    let mut groups: Vec<(NeuralNet, Vec<ChunkBackward<'_>>)> = Vec::new();
    let mut chunks = chunks.into_iter().peekable();
    // Chained: the first group adds its chunks' terms straight into the step's sum (`total`, with its flags), so
    // that a piece of one group needs no gradient of its own, zeroed and added.
    let chain = chain.filter(|_| stop.is_none());
    if let Some(known) = chain.as_deref() {
        if let Some(t) = total.take() {
            clean.push(known.clone());
            groups.push((t, chunks.by_ref().take(GROUP).collect()));
        }
    }
    while chunks.peek().is_some() {
        clean.push(vec![true; net.hidden.len()]);
        let g = zeroed_gradient(net, spare.pop(), Share::Threads);
        groups.push((g, chunks.by_ref().take(GROUP).collect()));
    }
    let each = |groups: &mut Vec<(NeuralNet, Vec<ChunkBackward<'_>>)>,
                f: &(dyn Fn(&mut ChunkBackward<'_>, &mut NeuralNet) + Sync)| {
        groups.par_iter_mut().for_each(|(g, cs)| {
            for c in cs.iter_mut() {
                f(c, g);
            }
        });
    };
    // Fewer groups than threads (a piece of at most a few groups): each group's affine maps share the threads
    // instead ([`affine_in_parallel`], the same bits), so that a small piece keeps both cores busy.
    let threads = rayon::current_num_threads();
    let runs = if groups.len() < threads {
        threads.div_ceil(groups.len())
    } else {
        1
    };
    each(&mut groups, &|c, g| backward_output(net, tr, c, g));
    for l in (0..net.hidden.len()).rev() {
        each(&mut groups, &|c, g| backward_activation(net, l, c, g));
        let sums = pass.batch[l].as_ref().map(|_| {
            let mut total = vec![0f64; 2 * net.hidden[l].dense.outputs];
            for c in groups.iter().flat_map(|(_, cs)| cs) {
                total.iter_mut().zip(&c.sums).for_each(|(t, v)| *t += v);
            }
            total
        });
        if stop == Some(l) {
            spare.extend(groups.into_iter().map(|(g, _)| g));
            return sums;
        }
        let sums = given.and_then(|g| g[l].clone()).or(sums);
        let stats = pass.batch[l].as_ref().zip(sums.as_deref());
        groups
            .par_iter_mut()
            .zip(&mut clean)
            .for_each(|((g, cs), known)| {
                if runs > 1 {
                    affine_in_parallel(net, tr, l, stats, cs, g, &mut known[l], runs);
                    return;
                }
                for c in cs.iter_mut() {
                    backward_affine(net, tr, l, stats, c, g, &mut known[l]);
                }
            });
    }
    each(&mut groups, &|c, g| backward_input(net, c, g));
    if let Some(known) = chain {
        known.clone_from(&clean[0]);
    }
    add_groups(
        groups.into_iter().map(|(g, _)| g),
        total,
        spare,
        Share::Threads,
    );
    None
}
