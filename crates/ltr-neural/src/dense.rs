//! A dense layer's backward pass, shared by the feed-forward layers (`net.rs`) and the encoder (`encoder.rs`).

use ltr_core::neural::{kernels, Dense};

/// `Wᵀ` of a layer, row-major `[outputs][inputs]`.
pub(crate) fn transposed(d: &Dense) -> Vec<f32> {
    let mut t = vec![0f32; d.weights.len()];
    for k in 0..d.inputs {
        for j in 0..d.outputs {
            t[j * d.inputs + k] = d.weights[k * d.outputs + j];
        }
    }
    t
}

/// `dW += aᵀ dy` (each entry's nonzero terms with rows in order, [`kernels::weight_gradient`]), `db += Σ dy`
/// (rows in order); `dx = dy Wᵀ` when asked.
pub(crate) fn dense_backward(
    a: &[f32],
    dy: &[f32],
    wt: &[f32],
    layer: &Dense,
    grad: &mut Dense,
    want_dx: bool,
) -> Vec<f32> {
    let (k_dim, o_dim) = (layer.inputs, layer.outputs);
    kernels::weight_gradient(a, dy, &mut grad.weights, k_dim, o_dim);
    for dyr in dy.chunks(o_dim) {
        kernels::axpy(1.0, dyr, &mut grad.bias);
    }
    if !want_dx {
        return Vec::new();
    }
    let rows = dy.len() / o_dim;
    let mut dx = vec![0f32; rows * k_dim];
    kernels::matmul_rows(dy, wt, None, &mut dx, o_dim, k_dim);
    dx
}

/// Words of the random stream drawn at a time by [`dropout`].
const DRAW: usize = 256;

/// Inverted dropout on `x` in place: entry `i` is zeroed when the `i`-th uniform draw of `rng` is below `p`, else
/// scaled by `1/(1 − p)`; returns the mask (0 or `1/(1 − p)` per entry). The draws are `rng.random::<f32>()`'s,
/// bit for bit and in the same order — rand 0.9 makes that f32 from one 32-bit word, `(word >> 8) · 2⁻²⁴` — but
/// the words are taken [`DRAW`] at a time with `fill` (the same words in the same order: ChaCha's block buffer read
/// on), so the stream and every mask are the ones a draw per entry gives, at a fraction of the cost.
pub(crate) fn dropout(x: &mut [f32], p: f32, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<f32> {
    use rand::Rng;
    const SCALE: f32 = 1.0 / (1u32 << 24) as f32;
    let keep = 1.0 / (1.0 - p);
    let mut m = vec![0f32; x.len()];
    let mut words = [0u32; DRAW];
    for (xc, mc) in x.chunks_mut(DRAW).zip(m.chunks_mut(DRAW)) {
        let w = &mut words[..xc.len()];
        rng.fill(w);
        for ((v, mv), &u) in xc.iter_mut().zip(mc.iter_mut()).zip(w.iter()) {
            let draw = (u >> 8) as f32 * SCALE;
            *mv = if draw < p { 0.0 } else { keep };
            *v *= *mv;
        }
    }
    m
}
