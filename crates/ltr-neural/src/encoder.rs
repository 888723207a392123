//! The training passes of allRank's self-attention [`Encoder`] over one slate (the documents of one query): a
//! forward pass that keeps what the backward pass needs and draws the dropout masks (allRank's four sites a block:
//! the attention weights, both residual branches, and inside the feed-forward layer), and the backward pass.
//!
//! The forward pass calls the scorer's kernels in the scorer's order (`Encoder::forward`), so without dropout it
//! gives the scores `ltr predict` gives, bit for bit. Every sum of the backward pass runs in one fixed order.

use ltr_core::neural::{kernels, Activation, Dense, Encoder, EncoderBlock, LayerNorm};
use rand_chacha::ChaCha8Rng;

use crate::dense::{dense_backward, dense_dx, dense_dx_unpacked, dense_gradient, transposed};

/// allRank's norm as the backward pass needs it: x̂ and (1/(std + ε), std) per row.
struct NormTrace {
    xhat: Vec<f32>,
    rows: Vec<f32>,
}

fn norm_forward(x: &mut [f32], width: usize, n: &LayerNorm) -> NormTrace {
    let (mut xhat, mut rows) = (Vec::new(), Vec::new());
    kernels::std_norm_rows(x, width, n, Some((&mut xhat, &mut rows)));
    NormTrace { xhat, rows }
}

/// The gradient with respect to the input of allRank's norm; γ and β gradients added into `grad`.
fn norm_backward(dout: &[f32], t: &NormTrace, n: &LayerNorm, grad: &mut LayerNorm) -> Vec<f32> {
    let w = n.gamma.len();
    let dof = w.saturating_sub(1).max(1) as f64;
    let mut dx = vec![0f32; dout.len()];
    let mut dc = vec![0f64; w];
    for (r, ((dr, xr), dxr)) in dout
        .chunks(w)
        .zip(t.xhat.chunks(w))
        .zip(dx.chunks_mut(w))
        .enumerate()
    {
        let (inv, std) = (f64::from(t.rows[2 * r]), f64::from(t.rows[2 * r + 1]));
        let mut a = 0f64;
        for j in 0..w {
            grad.gamma[j] += dr[j] * xr[j];
            grad.beta[j] += dr[j];
            a += f64::from(dr[j] * n.gamma[j]) * f64::from(xr[j]);
        }
        // y = γ·c/(s + ε) + β with c = x − mean, s = √(Σc²/(w − 1)): through s, ∂s/∂c_j = c_j/((w − 1)s).
        let through_std = if std > 0.0 { a / (dof * std) } else { 0.0 };
        let mut mean = 0f64;
        for j in 0..w {
            dc[j] = f64::from(dr[j] * n.gamma[j]) * inv - through_std * f64::from(xr[j]);
            mean += dc[j];
        }
        mean /= w as f64;
        for j in 0..w {
            dxr[j] = (dc[j] - mean) as f32;
        }
    }
    dx
}

/// A dropout mask kept as a bit an entry (set: kept, factor `1/(1 − p)`; else 0), a thirty-second of the f32 mask
/// it stands for: the factor is rebuilt as the same f32, so every product with it has the same bits.
struct Mask {
    kept: Vec<u64>,
    keep: f32,
}

impl Mask {
    /// `x` times the mask's factors, in place (`x` as long as the mask). A factor is `keep` or +0.0 chosen by its
    /// bit without a branch, 64 entries a word, so the loop runs in vector registers.
    fn scale(&self, x: &mut [f32]) {
        let keep = self.keep.to_bits();
        for (xs, &w) in x.chunks_mut(64).zip(&self.kept) {
            for (b, v) in xs.iter_mut().enumerate() {
                *v *= f32::from_bits(((w >> b) & 1) as u32 * keep);
            }
        }
    }
}

/// A dropout mask drawn from `rng` and applied to `x` (`dense::dropout_codes`); none when `p` is 0.
fn dropout(x: &mut [f32], drop: Option<(f32, &mut ChaCha8Rng)>) -> Option<Mask> {
    let (p, rng) = drop?;
    if p <= 0.0 {
        return None;
    }
    let codes = crate::dense::dropout_codes(x, Some((p, &mut *rng)), false);
    // Eight codes at a time: their bit 0s, one a byte, gathered into one byte by a product (code `i` lands on bit
    // `56 + i`, and no two partial products meet, so nothing carries).
    let kept = codes
        .chunks(64)
        .map(|c| {
            c.chunks(8).enumerate().fold(0u64, |w, (k, eight)| {
                let mut b = [0u8; 8];
                b[..eight.len()].copy_from_slice(eight);
                let bits = u64::from_le_bytes(b) & 0x0101_0101_0101_0101;
                w | (bits.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * k)
            })
        })
        .collect();
    Some(Mask {
        kept,
        keep: 1.0 / (1.0 - p),
    })
}

/// allRank's norm's output `γ·x̂ + β`, rebuilt from its trace with the forward pass's products (the same bits).
fn normalised(t: &NormTrace, n: &LayerNorm) -> Vec<f32> {
    let w = n.gamma.len();
    let mut out = t.xhat.clone();
    for row in out.chunks_mut(w) {
        for ((v, g), b) in row.iter_mut().zip(&n.gamma).zip(&n.beta) {
            *v = *v * g + b;
        }
    }
    out
}

/// `d` times the mask's factors, in place.
fn mask(d: &mut [f32], m: Option<&Mask>) {
    if let Some(m) = m {
        m.scale(d);
    }
}

/// `x` as the forward pass dropped it with the mask `m`: the same products, rebuilt from `x` and the mask rather
/// than kept.
fn dropped<'a>(x: &'a [f32], m: Option<&Mask>) -> std::borrow::Cow<'a, [f32]> {
    match m {
        Some(m) => {
            let mut d = x.to_vec();
            m.scale(&mut d);
            std::borrow::Cow::Owned(d)
        }
        None => std::borrow::Cow::Borrowed(x),
    }
}

/// Queries of at most this many documents keep their attention weights for the backward pass; longer ones have them
/// recomputed ([`BlockTrace`]). Either way gives the same bits: this only trades time for memory. Kept, a query of
/// 64 documents holds 16 K values a head and block; recomputing them costs short queries about 5% of an epoch
/// (MQ2008, 20 documents a query on average), where the allocations and the small products of a second pass weigh
/// more than the memory they save.
pub(crate) const KEEP_WEIGHTS_UP_TO: usize = 64;

/// What one block's backward pass needs. Memory is what limits training here (a query's trace is per thread), so
/// whatever can be rebuilt with the forward pass's own arithmetic is rebuilt: the norms' outputs (the projections'
/// inputs) from x̂, and, for a query longer than [`KEEP_WEIGHTS_UP_TO`], each head's attention weights from q and k,
/// one head at a time ([`kernels::attention_head_probs`]), which costs one more `q kᵀ` and softmax a block and saves
/// `heads × rows²` values (four fifths of a 240-document query's trace without them).
struct BlockTrace {
    attn_norm: NormTrace,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    /// Every head's attention weights before dropout, for a query of at most [`KEEP_WEIGHTS_UP_TO`] documents
    /// (else empty: recomputed).
    p: Vec<f32>,
    /// Each head's attention dropout mask (none without dropout).
    p_masks: Vec<Mask>,
    /// The heads' concatenated outputs.
    o: Vec<f32>,
    res1_mask: Option<Mask>,
    ff_norm: NormTrace,
    /// ReLU outputs before dropout (for ReLU's derivative; after it, the input of `ff_out`, is rebuilt).
    h: Vec<f32>,
    h_mask: Option<Mask>,
    res2_mask: Option<Mask>,
}

/// What the encoder's forward pass over one slate keeps.
#[allow(missing_debug_implementations)]
pub struct EncoderTrace {
    rows: usize,
    blocks: Vec<BlockTrace>,
    norm: NormTrace,
}

/// The encoder over one slate's rows `x` (`rows × width`) in place, in training mode when `drop` is given.
pub fn forward(
    e: &Encoder,
    x: &mut [f32],
    rows: usize,
    mut drop: Option<(f32, &mut ChaCha8Rng)>,
) -> EncoderTrace {
    let w = e.width();
    let mut blocks = Vec::with_capacity(e.blocks.len());
    let mut t = vec![0f32; rows * w];
    for b in &e.blocks {
        let mut a = x.to_vec();
        let attn_norm = norm_forward(&mut a, w, &b.attn_norm);
        let (mut q, mut k, mut v) = (t.clone(), t.clone(), t.clone());
        kernels::affine(&a, &b.query, &mut q);
        kernels::affine(&a, &b.key, &mut k);
        kernels::affine(&a, &b.value, &mut v);
        std::mem::drop(a);
        // Head by head: the heads' masks draw the stream in the order one mask over all heads would.
        let mut ph = vec![0f32; rows * rows];
        let mut p_kept = Vec::new();
        let mut p_masks = Vec::new();
        let mut o = t.clone();
        for h in 0..e.heads {
            kernels::attention_head_probs(&q, &k, rows, w, e.heads, h, &mut ph);
            if rows <= KEEP_WEIGHTS_UP_TO {
                p_kept.extend_from_slice(&ph);
            }
            p_masks.extend(dropout(&mut ph, drop.as_mut().map(|(p, r)| (*p, &mut **r))));
            kernels::attention_apply_head(&ph, &v, rows, w, e.heads, h, &mut o);
        }
        std::mem::drop(ph);
        kernels::affine(&o, &b.out, &mut t);
        let res1_mask = dropout(&mut t, drop.as_mut().map(|(p, r)| (*p, &mut **r)));
        kernels::axpy(1.0, &t, x);
        let mut bn = x.to_vec();
        let ff_norm = norm_forward(&mut bn, w, &b.ff_norm);
        let mut h = vec![0f32; rows * b.ff_in.outputs];
        kernels::affine(&bn, &b.ff_in, &mut h);
        std::mem::drop(bn);
        kernels::activate(Activation::Relu, &mut h);
        let mut h_dropped = h.clone();
        let h_mask = dropout(&mut h_dropped, drop.as_mut().map(|(p, r)| (*p, &mut **r)));
        kernels::affine(&h_dropped, &b.ff_out, &mut t);
        let res2_mask = dropout(&mut t, drop.as_mut().map(|(p, r)| (*p, &mut **r)));
        kernels::axpy(1.0, &t, x);
        blocks.push(BlockTrace {
            attn_norm,
            q,
            k,
            v,
            p: p_kept,
            p_masks,
            o,
            res1_mask,
            ff_norm,
            h,
            h_mask,
            res2_mask,
        });
    }
    let norm = norm_forward(x, w, &e.norm);
    EncoderTrace { rows, blocks, norm }
}

/// A step's mean query length (documents) from which the encoder's backward pass keeps no transposed weights but
/// those of the first feed-forward layers ([`Transposes`]). Below it the transposes are packed as before: `dx =
/// dy Wᵀ` computed as `W dyᵀ` runs a product whose panels span the query's documents, and a short query fills them
/// poorly (MQ2008's 20 documents a query would train 7% slower), while its trace is small.
pub const UNPACKED_FROM: usize = 64;

/// `Wᵀ` of the encoder's dense layers for the backward pass's `dy Wᵀ`, packed once per step. Each block's first
/// feed-forward layer always has its own: its `dh`, past ReLU and dropout, is mostly zeros, which the packed
/// product skips. The other five layers' `dy` are dense; for a step of long queries (a mean of at least
/// [`UNPACKED_FROM`] documents) their `dx` is computed from `W` itself (`dense::dense_dx_unpacked`, the same bits),
/// so that the step holds a third of a transposed encoder rather than all of it: 2.1 MB less for allRank's
/// attention configuration, whose long web queries are where training's memory peaks ("The attention network's
/// memory", BENCHMARKS.md).
#[allow(missing_debug_implementations)]
pub struct Transposes {
    ff_in: Vec<kernels::Packed>,
    /// Per block, query, key, value, out and the second feed-forward layer; `None` for a step of long queries.
    rest: Option<Vec<[kernels::Packed; 5]>>,
}

impl Transposes {
    /// The transposes of [`Transposes`] for a step of long queries (`long_queries`) or not.
    pub fn new(e: &Encoder, long_queries: bool) -> Self {
        Self {
            ff_in: e.blocks.iter().map(|b| transposed(&b.ff_in)).collect(),
            rest: (!long_queries).then(|| {
                e.blocks
                    .iter()
                    .map(|b| {
                        [
                            transposed(&b.query),
                            transposed(&b.key),
                            transposed(&b.value),
                            transposed(&b.out),
                            transposed(&b.ff_out),
                        ]
                    })
                    .collect()
            }),
        }
    }

    /// `dW += aᵀ dy`, `db += Σ dy` and `dx = dy Wᵀ` of block `l`'s layer `which` (0–4: query, key, value, out,
    /// the second feed-forward layer), `dx` by its packed `Wᵀ` where the step keeps one, else from `W`: the same
    /// bits.
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        l: usize,
        which: usize,
        a: &[f32],
        dy: &[f32],
        layer: &Dense,
        grad: &mut Dense,
    ) -> Vec<f32> {
        dense_gradient(a, dy, layer, grad, &mut false, 1);
        match &self.rest {
            Some(rest) => dense_dx(dy, &rest[l][which], layer),
            None => dense_dx_unpacked(dy, layer),
        }
    }
}

/// Multi-head attention's backward: from the gradient of the heads' outputs `d_o` to those of q, k and v.
fn attention_backward(
    bt: &BlockTrace,
    d_o: &[f32],
    rows: usize,
    w: usize,
    heads: usize,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let dk = w / heads;
    let scale = (dk as f32).sqrt();
    let (mut dq, mut dk_, mut dv) = (
        vec![0f32; rows * w],
        vec![0f32; rows * w],
        vec![0f32; rows * w],
    );
    let mut dp = vec![0f32; rows * rows];
    let mut recomputed = vec![0f32; if bt.p.is_empty() { rows * rows } else { 0 }];
    let mut part = vec![0f32; rows * dk];
    let scatter = |m: &mut [f32], part: &[f32], h: usize| {
        for r in 0..rows {
            m[r * w + h * dk..r * w + (h + 1) * dk].copy_from_slice(&part[r * dk..(r + 1) * dk]);
        }
    };
    for h in 0..heads {
        let p: &[f32] = if bt.p.is_empty() {
            kernels::attention_head_probs(&bt.q, &bt.k, rows, w, heads, h, &mut recomputed);
            &recomputed
        } else {
            &bt.p[h * rows * rows..(h + 1) * rows * rows]
        };
        let p_mask = bt.p_masks.get(h);
        let pd = dropped(p, p_mask);
        let d_oh = kernels::head_slice(d_o, w, h * dk, dk, false);
        // o_h = p' v_h: ∂p' = ∂o_h v_hᵀ, ∂v_h = p'ᵀ ∂o_h.
        let vt = kernels::head_slice(&bt.v, w, h * dk, dk, true);
        kernels::matmul_rows(&d_oh, &vt, None, &mut dp, dk, rows);
        kernels::matmul_rows(
            &kernels::transpose(&pd, rows, rows),
            &d_oh,
            None,
            &mut part,
            rows,
            dk,
        );
        scatter(&mut dv, &part, h);
        mask(&mut dp, p_mask);
        // Softmax: ∂s_ij = p_ij (∂p_ij − Σ_k p_ik ∂p_ik); then the 1/√dk.
        // −0.0: the start of `Iterator::sum`, which this sum was.
        let dots = kernels::row_sums_with(p, &dp, rows, -0.0, |a, b| f64::from(a * b));
        for ((pr, dr), dot) in p.chunks(rows).zip(dp.chunks_mut(rows)).zip(dots) {
            let dot = dot as f32;
            for (g, &pv) in dr.iter_mut().zip(pr) {
                *g = pv * (*g - dot) / scale;
            }
        }
        // s = q_h k_hᵀ: ∂q_h = ∂s k_h, ∂k_h = ∂sᵀ q_h.
        let kh = kernels::head_slice(&bt.k, w, h * dk, dk, false);
        kernels::matmul_rows(&dp, &kh, None, &mut part, rows, dk);
        scatter(&mut dq, &part, h);
        let qh = kernels::head_slice(&bt.q, w, h * dk, dk, false);
        kernels::matmul_rows(
            &kernels::transpose(&dp, rows, rows),
            &qh,
            None,
            &mut part,
            rows,
            dk,
        );
        scatter(&mut dk_, &part, h);
    }
    (dq, dk_, dv)
}

/// The backward pass over one slate: the gradient with respect to the encoder's input, given that of its output;
/// parameter gradients added into `grad`.
pub fn backward(
    e: &Encoder,
    tr: &Transposes,
    trace: &EncoderTrace,
    dz: &[f32],
    grad: &mut Encoder,
) -> Vec<f32> {
    let (w, rows) = (e.width(), trace.rows);
    let mut dx = norm_backward(dz, &trace.norm, &e.norm, &mut grad.norm);
    for l in (0..e.blocks.len()).rev() {
        let (b, bt, g) = (&e.blocks[l], &trace.blocks[l], &mut grad.blocks[l]);
        // x ← x + drop(W₂ drop(ReLU(W₁ norm₂(x)))).
        let mut d = dx.clone();
        mask(&mut d, bt.res2_mask.as_ref());
        let h_dropped = dropped(&bt.h, bt.h_mask.as_ref());
        let mut dh = tr.backward(l, 4, &h_dropped, &d, &b.ff_out, &mut g.ff_out);
        drop(h_dropped);
        mask(&mut dh, bt.h_mask.as_ref());
        dh.iter_mut()
            .zip(&bt.h)
            .for_each(|(g, y)| *g = if *y <= 0.0 { 0.0 } else { *g });
        let bn = normalised(&bt.ff_norm, &b.ff_norm);
        let db = dense_backward(&bn, &dh, &tr.ff_in[l], &b.ff_in, &mut g.ff_in, true);
        drop(bn);
        let dn = norm_backward(&db, &bt.ff_norm, &b.ff_norm, &mut g.ff_norm);
        kernels::axpy(1.0, &dn, &mut dx);
        // x ← x + drop(W_o Attention(norm₁(x))).
        let mut d = dx.clone();
        mask(&mut d, bt.res1_mask.as_ref());
        let d_o = tr.backward(l, 3, &bt.o, &d, &b.out, &mut g.out);
        let (dq, dk, dv) = attention_backward(bt, &d_o, rows, w, e.heads);
        let a = normalised(&bt.attn_norm, &b.attn_norm);
        let mut da = tr.backward(l, 0, &a, &dq, &b.query, &mut g.query);
        let da_k = tr.backward(l, 1, &a, &dk, &b.key, &mut g.key);
        let da_v = tr.backward(l, 2, &a, &dv, &b.value, &mut g.value);
        drop(a);
        kernels::axpy(1.0, &da_k, &mut da);
        kernels::axpy(1.0, &da_v, &mut da);
        let dn = norm_backward(&da, &bt.attn_norm, &b.attn_norm, &mut g.attn_norm);
        kernels::axpy(1.0, &dn, &mut dx);
    }
    dx
}

/// An encoder of zeros shaped like `e` (the gradient's container).
pub fn zeros_like(e: &Encoder) -> Encoder {
    let z = |d: &Dense| Dense::zeros(d.inputs, d.outputs);
    let zn = |n: &LayerNorm| LayerNorm {
        gamma: vec![0.0; n.gamma.len()],
        beta: vec![0.0; n.beta.len()],
    };
    Encoder {
        heads: e.heads,
        blocks: e
            .blocks
            .iter()
            .map(|b| EncoderBlock {
                attn_norm: zn(&b.attn_norm),
                query: z(&b.query),
                key: z(&b.key),
                value: z(&b.value),
                out: z(&b.out),
                ff_norm: zn(&b.ff_norm),
                ff_in: z(&b.ff_in),
                ff_out: z(&b.ff_out),
            })
            .collect(),
        norm: zn(&e.norm),
    }
}

/// Every parameter array of `e` in one fixed order (the optimiser's).
pub fn parameters_mut(e: &mut Encoder) -> Vec<&mut [f32]> {
    let mut out: Vec<&mut [f32]> = Vec::new();
    for b in e.blocks.iter_mut() {
        out.push(&mut b.attn_norm.gamma);
        out.push(&mut b.attn_norm.beta);
        for d in [&mut b.query, &mut b.key, &mut b.value, &mut b.out] {
            out.push(&mut d.weights);
            out.push(&mut d.bias);
        }
        out.push(&mut b.ff_norm.gamma);
        out.push(&mut b.ff_norm.beta);
        out.push(&mut b.ff_in.weights);
        out.push(&mut b.ff_in.bias);
        out.push(&mut b.ff_out.weights);
        out.push(&mut b.ff_out.bias);
    }
    out.push(&mut e.norm.gamma);
    out.push(&mut e.norm.beta);
    out
}
