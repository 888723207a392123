//! The training passes of a [`NeuralNet`]: a forward pass that keeps what the backward pass needs (and applies
//! dropout), and the backward pass to every parameter's gradient.
//!
//! Rows are processed in chunks of [`CHUNK`] rows, in parallel; each chunk's parameter gradient is its own, and the
//! chunks' gradients are added in chunk order. The chunking does not depend on the thread count, so neither does
//! any bit of the gradient. The arithmetic of the forward pass is `ltr_core::neural::kernels`', the scorer's.

use ltr_core::neural::{kernels, Activation, Dense, LayerNorm, NeuralNet};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::dense::{dense_backward, transposed};
use crate::encoder::{self, EncoderTrace};

/// Rows per chunk of the forward and backward passes (a fixed number: the gradient's summation order).
pub(crate) const CHUNK: usize = 128;

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
    /// Activation outputs before dropout (what the activation's derivative reads).
    act: Vec<f32>,
    mask: Option<Vec<f32>>,
    norm: Option<(Vec<f32>, Vec<f32>)>,
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

fn forward_chunk(
    net: &NeuralNet,
    x: &[f32],
    rows: usize,
    dropout: Option<Dropout>,
) -> (Trace, Vec<f32>) {
    let d = net.n_features;
    let mut input = x.to_vec();
    let input_norm = net.input_norm.as_ref().map(|n| {
        let (mut rstd, mut xhat) = (Vec::new(), Vec::new());
        kernels::layer_norm_rows(&mut input, d, n, Some((&mut rstd, &mut xhat)));
        (xhat, rstd)
    });
    let mut rng = dropout.map(|dr| ChaCha8Rng::seed_from_u64(dr.seed));
    let mut layers: Vec<LayerTrace> = Vec::with_capacity(net.hidden.len());
    for h in &net.hidden {
        let prev = layers.last().map_or(&input, |t| &t.out);
        let mut y = vec![0f32; rows * h.dense.outputs];
        kernels::affine(prev, &h.dense, &mut y);
        let norm = h.norm.as_ref().map(|n| {
            let (mut rstd, mut xhat) = (Vec::new(), Vec::new());
            kernels::layer_norm_rows(&mut y, h.dense.outputs, n, Some((&mut rstd, &mut xhat)));
            (xhat, rstd)
        });
        kernels::activate(net.activation, &mut y);
        let act = y.clone();
        let mask = match (dropout, rng.as_mut()) {
            (Some(Dropout { p, .. }), Some(rng)) if p > 0.0 => {
                let keep = 1.0 / (1.0 - p);
                let m: Vec<f32> = (0..y.len())
                    .map(|_| if rng.random::<f32>() < p { 0.0 } else { keep })
                    .collect();
                y.iter_mut().zip(&m).for_each(|(v, m)| *v *= m);
                Some(m)
            }
            _ => None,
        };
        layers.push(LayerTrace {
            out: y,
            act,
            mask,
            norm,
        });
    }
    let last = layers.last().map_or(&input, |t| &t.out);
    let encoder = net.encoder.as_ref().map(|e| {
        let mut z = last.clone();
        let drop = dropout.map(|dr| (dr.encoder, rng.as_mut().expect("seeded with the dropout")));
        let t = encoder::forward(e, &mut z, rows, drop);
        (t, z)
    });
    let last = encoder.as_ref().map_or(last, |(_, z)| z);
    let mut scores = vec![0f32; rows];
    kernels::affine(last, &net.output, &mut scores);
    (
        Trace {
            rows,
            input,
            input_norm,
            layers,
            encoder,
        },
        scores,
    )
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
            .map(|h| ltr_core::neural::HiddenLayer {
                dense: zero_dense(&h.dense),
                norm: zero_norm(&h.norm),
            })
            .collect(),
        activation: net.activation,
        output: zero_dense(&net.output),
        encoder: net.encoder.as_ref().map(encoder::zeros_like),
    }
}

/// Every parameter array of `net`, in one fixed order (the optimiser's).
pub(crate) fn parameters_mut(net: &mut NeuralNet) -> Vec<&mut [f32]> {
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

fn backward_chunk(
    net: &NeuralNet,
    transposes: &[Vec<f32>],
    enc_t: Option<&encoder::Transposes>,
    trace: &Trace,
    dscores: &[f32],
    grad: &mut NeuralNet,
) {
    let before_out = trace.layers.last().map_or(&trace.input, |t| &t.out);
    let last = trace.encoder.as_ref().map_or(before_out, |(_, z)| z);
    let out_t = &transposes[net.hidden.len()];
    let below = !net.hidden.is_empty() || net.input_norm.is_some();
    let mut d = dense_backward(
        last,
        dscores,
        out_t,
        &net.output,
        &mut grad.output,
        below || net.encoder.is_some(),
    );
    if let (Some(e), Some((t, _)), Some(et), Some(ge)) =
        (&net.encoder, &trace.encoder, enc_t, grad.encoder.as_mut())
    {
        d = encoder::backward(e, et, t, &d, ge);
    }
    for l in (0..net.hidden.len()).rev() {
        let t = &trace.layers[l];
        if let Some(m) = &t.mask {
            d.iter_mut().zip(m).for_each(|(g, m)| *g *= m);
        }
        match net.activation {
            Activation::Relu => d.iter_mut().zip(&t.act).for_each(|(g, y)| {
                if *y <= 0.0 {
                    *g = 0.0
                }
            }),
            Activation::Tanh => d
                .iter_mut()
                .zip(&t.act)
                .for_each(|(g, y)| *g *= 1.0 - y * y),
            Activation::Sigmoid => d
                .iter_mut()
                .zip(&t.act)
                .for_each(|(g, y)| *g *= y * (1.0 - y)),
            Activation::Identity => {}
        }
        let h = &net.hidden[l];
        if let (Some(n), Some((xhat, rstd))) = (&h.norm, &t.norm) {
            d = layer_norm_backward(&d, xhat, rstd, n, grad.hidden[l].norm.as_mut().unwrap());
        }
        let a = if l == 0 {
            &trace.input
        } else {
            &trace.layers[l - 1].out
        };
        let want_dx = l > 0 || net.input_norm.is_some();
        d = dense_backward(
            a,
            &d,
            &transposes[l],
            &h.dense,
            &mut grad.hidden[l].dense,
            want_dx,
        );
    }
    if let (Some(n), Some((xhat, rstd))) = (&net.input_norm, &trace.input_norm) {
        layer_norm_backward(&d, xhat, rstd, n, grad.input_norm.as_mut().unwrap());
    }
}

/// Add `b` into `a`, array by array in the optimiser's order.
fn add_into(a: &mut NeuralNet, b: &mut NeuralNet) {
    for (x, y) in parameters_mut(a).into_iter().zip(parameters_mut(b)) {
        kernels::axpy(1.0, y, x);
    }
}

/// The scores of the rows of `x` (row-major, `n_features` wide) under training-mode dropout, and a closure-free
/// handle on what the backward pass needs.
pub(crate) struct Pass {
    traces: Vec<Trace>,
    pub scores: Vec<f32>,
}

/// Forward over all rows of `x`, chunk by chunk in parallel (dropout masks seeded per chunk). The rows of query
/// `q` are `offsets[q]..offsets[q + 1]`: with an encoder each query is a chunk (its documents attend to each other),
/// without one the chunks are [`CHUNK`] rows.
pub(crate) fn forward(
    net: &NeuralNet,
    x: &[f32],
    offsets: &[usize],
    dropout: Option<Dropout>,
) -> Pass {
    let d = net.n_features;
    let rows = x.len() / d.max(1);
    let chunks: Vec<&[f32]> = if net.encoder.is_some() {
        offsets.windows(2).map(|w| &x[w[0] * d..w[1] * d]).collect()
    } else {
        x.chunks(CHUNK * d).collect()
    };
    let parts: Vec<(Trace, Vec<f32>)> = chunks
        .into_par_iter()
        .enumerate()
        .map(|(c, xc)| {
            let dr = dropout.map(|dr| Dropout {
                seed: dr.seed ^ (c as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                ..dr
            });
            forward_chunk(net, xc, xc.len() / d, dr)
        })
        .collect();
    let mut scores = Vec::with_capacity(rows);
    let mut traces = Vec::with_capacity(parts.len());
    for (t, s) in parts {
        scores.extend_from_slice(&s);
        traces.push(t);
    }
    Pass { traces, scores }
}

/// The gradient of every parameter, given the loss's gradient with respect to each row's score.
pub(crate) fn backward(net: &NeuralNet, pass: &Pass, dscores: &[f32]) -> NeuralNet {
    let mut transposes: Vec<Vec<f32>> = net.hidden.iter().map(|h| transposed(&h.dense)).collect();
    transposes.push(transposed(&net.output));
    // Groups of GROUP chunks: each group adds its chunks' gradients in order into its own sum, and the groups'
    // sums are added in order — the same bits at any thread count, and one gradient a group in memory.
    const GROUP: usize = 8;
    let enc_t = net.encoder.as_ref().map(encoder::Transposes::new);
    let mut at = 0;
    let traces: Vec<(&Trace, &[f32])> = pass
        .traces
        .iter()
        .map(|t| {
            at += t.rows;
            (t, &dscores[at - t.rows..at])
        })
        .collect();
    let mut parts: Vec<NeuralNet> = traces
        .par_chunks(GROUP)
        .map(|group| {
            let mut g = zeros_like(net);
            for (t, ds) in group {
                backward_chunk(net, &transposes, enc_t.as_ref(), t, ds, &mut g);
            }
            g
        })
        .collect();
    if parts.is_empty() {
        return zeros_like(net);
    }
    let mut total = parts.remove(0);
    for p in parts.iter_mut() {
        add_into(&mut total, p);
    }
    total
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
    loss: crate::Loss,
) -> (f64, Vec<f32>, NeuralNet) {
    let pass = forward(net, x, offsets, None);
    let scores: Vec<f64> = pass.scores.iter().map(|&v| f64::from(v)).collect();
    let ties = vec![0; offsets.len().saturating_sub(1)];
    let (value, grad) = loss.batch(&scores, labels, offsets, &ties);
    let dscores: Vec<f32> = grad.iter().map(|&g| g as f32).collect();
    let g = backward(net, &pass, &dscores);
    (value, pass.scores, g)
}
