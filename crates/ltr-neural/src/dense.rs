//! A dense layer's backward pass, shared by the feed-forward layers (`net.rs`) and the encoder (`encoder.rs`).

use ltr_core::neural::kernels::{self, Packed};
use ltr_core::neural::Dense;

/// `Wᵀ` of a layer (row-major `[outputs][inputs]`), packed once for the backward pass's `dy Wᵀ` of every chunk.
pub fn transposed(d: &Dense) -> Packed {
    let mut t = vec![0f32; d.weights.len()];
    for k in 0..d.inputs {
        for j in 0..d.outputs {
            t[j * d.inputs + k] = d.weights[k * d.outputs + j];
        }
    }
    Packed::new(&t, d.outputs, d.inputs)
}

/// `dW += aᵀ dy` (each entry's nonzero terms with rows in order, [`kernels::weight_gradient`]), `db += Σ dy`
/// (rows in order); `dx = dy Wᵀ` when asked.
pub(crate) fn dense_backward(
    a: &[f32],
    dy: &[f32],
    wt: &Packed,
    layer: &Dense,
    grad: &mut Dense,
    want_dx: bool,
) -> Vec<f32> {
    dense_gradient(a, dy, layer, grad, &mut false, 1);
    if !want_dx {
        return Vec::new();
    }
    dense_dx(dy, wt, layer)
}

/// Inputs per run at least when [`dense_gradient`] splits `dW` across threads: a narrower run would cost more in
/// the copy of its inputs and the product's set-up than it spares.
const MIN_SPLIT_INPUTS: usize = 32;

/// `dW += aᵀ dy` and `db += Σ dy` of [`dense_backward`], told whether `grad`'s weights hold no −0
/// ([`kernels::weight_gradient_known`]'s flag: true after zeroing; updated), with `dW`'s rows (one an input `k`,
/// so a run of them is one slice of `dW`) split into up to `runs` runs computed in parallel, each from a copy of
/// its columns of `a`. An entry's chain is its own (its terms, rows ascending, whichever path the kernel takes for
/// its run), so the bits do not depend on `runs`; the flag is true after the call only where every run's is.
pub(crate) fn dense_gradient(
    a: &[f32],
    dy: &[f32],
    layer: &Dense,
    grad: &mut Dense,
    no_neg_zero: &mut bool,
    runs: usize,
) {
    use rayon::prelude::*;
    let (k_dim, o_dim) = (layer.inputs, layer.outputs);
    let runs = runs.min(k_dim / MIN_SPLIT_INPUTS).max(1);
    if runs == 1 {
        kernels::weight_gradient_known(a, dy, &mut grad.weights, k_dim, o_dim, no_neg_zero);
    } else {
        let rows = dy.len() / o_dim.max(1);
        let per = k_dim.div_ceil(runs);
        let clean = *no_neg_zero;
        *no_neg_zero = grad
            .weights
            .par_chunks_mut(per * o_dim)
            .enumerate()
            .map(|(i, dw)| {
                let (k0, width) = (i * per, dw.len() / o_dim);
                let mut cols = Vec::with_capacity(rows * width);
                for ar in a.chunks_exact(k_dim).take(rows) {
                    cols.extend_from_slice(&ar[k0..k0 + width]);
                }
                let mut known = clean;
                kernels::weight_gradient_known(&cols, dy, dw, width, o_dim, &mut known);
                known
            })
            .reduce(|| true, |x, y| x && y);
    }
    for dyr in dy.chunks(o_dim) {
        kernels::axpy(1.0, dyr, &mut grad.bias);
    }
}

/// `dx = dy Wᵀ` of [`dense_backward`].
pub fn dense_dx(dy: &[f32], wt: &Packed, layer: &Dense) -> Vec<f32> {
    let rows = dy.len() / layer.outputs;
    let mut dx = vec![0f32; rows * layer.inputs];
    kernels::matmul_packed_sparse(dy, wt, None, &mut dx);
    dx
}

/// `dx = dy Wᵀ` of [`dense_backward`] with no `Wᵀ` kept: computed as `dxᵀ = W dyᵀ` and transposed back. Each entry is
/// the same chain as [`dense_dx`]'s dense product — `fma` of the same two factors (in the other order, which an
/// `fma` does not see), over the layer's outputs ascending from +0 — and its sparse product has the dense bits
/// wherever it runs, so the result is the same bit for bit. What it spares is a packed `Wᵀ` of every layer held
/// for the whole step (a parameter-sized copy); what it costs is two transposes of a query's rows, and the
/// skipping of zero rows of `dy`, so it suits layers whose `dy` is dense. The product's panels span the rows (64
/// of them with AVX-512), so rows past the last whole 64 that would fill at most half a panel go in a product of
/// their own, whose panels are 32 wide: a row's entries are its own chains, so splitting the rows moves no bit.
pub fn dense_dx_unpacked(dy: &[f32], layer: &Dense) -> Vec<f32> {
    let (inputs, outputs) = (layer.inputs, layer.outputs);
    let rows = dy.len().checked_div(outputs).unwrap_or(0);
    let mut dx = vec![0f32; rows * inputs];
    if rows == 0 || inputs == 0 {
        return dx;
    }
    let whole = rows / 64 * 64;
    let split = if rows - whole <= 32 { whole } else { rows };
    for (r0, r1) in [(0, split), (split, rows)] {
        let n = r1 - r0;
        if n == 0 {
            continue;
        }
        let dyt = kernels::transpose(&dy[r0 * outputs..r1 * outputs], n, outputs);
        let mut dxt = vec![0f32; inputs * n];
        kernels::matmul_rows(&layer.weights, &dyt, None, &mut dxt, outputs, n);
        drop(dyt);
        dx[r0 * inputs..r1 * inputs].copy_from_slice(&kernels::transpose(&dxt, inputs, n));
    }
    dx
}

/// Words of the random stream drawn at a time by [`dropout_codes`].
const DRAW: usize = 256;

/// Inverted dropout on `x` in place: entry `i` is zeroed when the `i`-th uniform draw of `rng` is below `p`, else
/// scaled by `1/(1 − p)`. The draws are `rng.random::<f32>()`'s, bit for bit and in the same order — rand 0.9 makes
/// that f32 from one 32-bit word, `(word >> 8) · 2⁻²⁴` — but the words are taken [`DRAW`] at a time with `fill`
/// (the same words in the same order: ChaCha's block buffer read on), so the stream and every mask are the ones a
/// draw per entry gives, at a fraction of the cost. The mask is kept as one byte an entry: bit 0 set where the
/// entry is kept (mask `1/(1 − p)`, else 0). With `relu`, bit 1 is set where `x` was at most 0 before dropout
/// (ReLU's derivative is 0 there). Without dropout (`p` 0 or no `rng`) only bit 1 is set, and `x` is left as it is.
pub(crate) fn dropout_codes(
    x: &mut [f32],
    drop: Option<(f32, &mut rand_chacha::ChaCha8Rng)>,
    relu: bool,
) -> Vec<u8> {
    use rand::Rng;
    const SCALE: f32 = 1.0 / (1u32 << 24) as f32;
    let dead = |v: f32| if relu && v <= 0.0 { 2u8 } else { 0 };
    let mut codes = vec![0u8; x.len()];
    let Some((p, rng)) = drop.filter(|(p, _)| *p > 0.0) else {
        codes
            .iter_mut()
            .zip(x.iter())
            .for_each(|(c, &v)| *c = dead(v));
        return codes;
    };
    let keep = 1.0 / (1.0 - p);
    let mut words = [0u32; DRAW];
    for (xc, cc) in x.chunks_mut(DRAW).zip(codes.chunks_mut(DRAW)) {
        let w = &mut words[..xc.len()];
        rng.fill(w);
        for ((v, c), &u) in xc.iter_mut().zip(cc.iter_mut()).zip(w.iter()) {
            let draw = (u >> 8) as f32 * SCALE;
            let dropped = draw < p;
            *c = u8::from(!dropped) | dead(*v);
            *v *= if dropped { 0.0 } else { keep };
        }
    }
    codes
}
