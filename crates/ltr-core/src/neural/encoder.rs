//! [`Encoder`]: allRank's context-aware scorer — Transformer encoder blocks over the documents of one query
//! (Pobrotyn et al. 2020, after "The Annotated Transformer"), between the feed-forward layers and the output layer.
//!
//! Each block is pre-norm, as allRank's `SublayerConnection`: `x ← x + MultiHeadAttention(norm₁(x))`, then
//! `x ← x + W₂·ReLU(W₁·norm₂(x))`; after the last block a final norm. The norms are allRank's own `LayerNorm`, not
//! PyTorch's: `γ·(x − mean)/(std + ε) + β` with the unbiased standard deviation and ε = [`ENCODER_NORM_EPS`] added to
//! it. No positional encoding: a document's output depends on the set of documents of its query, not on their order
//! (permutation equivariance). Every document attends to every document of its query; allRank's padding mask
//! (padded documents are never attended to) is the same as attending within the unpadded query, which is what
//! scoring here does (no padding is ever built).

use serde::{Deserialize, Serialize};

use super::{kernels, Dense, LayerNorm};

/// ε of allRank's encoder norm, added to the standard deviation.
pub const ENCODER_NORM_EPS: f32 = 1e-6;

/// One encoder block: multi-head self-attention and a position-wise feed-forward layer, each in a pre-norm residual.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EncoderBlock {
    /// Norm before the attention.
    pub attn_norm: LayerNorm,
    /// Query projection (`width × width`).
    pub query: Dense,
    /// Key projection.
    pub key: Dense,
    /// Value projection.
    pub value: Dense,
    /// Output projection of the concatenated heads.
    pub out: Dense,
    /// Norm before the feed-forward layer.
    pub ff_norm: LayerNorm,
    /// Feed-forward input layer (`width × d_ff`), followed by ReLU.
    pub ff_in: Dense,
    /// Feed-forward output layer (`d_ff × width`).
    pub ff_out: Dense,
}

/// The encoder: `heads` attention heads per block, the blocks, the final norm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Encoder {
    /// Attention heads (they divide the width).
    pub heads: usize,
    /// The blocks, input side first.
    pub blocks: Vec<EncoderBlock>,
    /// Norm after the last block.
    pub norm: LayerNorm,
}

impl Encoder {
    /// Its width (the input and output width of every block).
    pub fn width(&self) -> usize {
        self.norm.gamma.len()
    }

    /// The feed-forward width `d_ff` (0 without blocks).
    pub fn d_ff(&self) -> usize {
        self.blocks.first().map_or(0, |b| b.ff_in.outputs)
    }

    /// Number of trained parameters.
    pub fn n_parameters(&self) -> usize {
        let dense = |d: &Dense| d.weights.len() + d.bias.len();
        let norm = |n: &LayerNorm| 2 * n.gamma.len();
        norm(&self.norm)
            + self
                .blocks
                .iter()
                .map(|b| {
                    norm(&b.attn_norm)
                        + norm(&b.ff_norm)
                        + [&b.query, &b.key, &b.value, &b.out, &b.ff_in, &b.ff_out]
                            .into_iter()
                            .map(dense)
                            .sum::<usize>()
                })
                .sum::<usize>()
    }

    /// Why its parts disagree with each other or with `width`, the width it is given, if they do.
    pub fn inconsistency(&self, width: usize) -> Option<String> {
        let w = self.width();
        if w != width {
            return Some(format!("encoder: {w} wide, the layer before gives {width}"));
        }
        if self.heads == 0 || !w.is_multiple_of(self.heads) {
            return Some(format!(
                "encoder: {} heads do not divide its width {w}",
                self.heads
            ));
        }
        let norm_ok = |n: &LayerNorm| {
            n.gamma.len() == w
                && n.beta.len() == w
                && n.gamma.iter().chain(&n.beta).all(|v| v.is_finite())
        };
        let dense_ok = |d: &Dense, i: usize, o: usize| {
            d.inputs == i
                && d.outputs == o
                && d.weights.len() == i * o
                && d.bias.len() == o
                && d.weights.iter().chain(&d.bias).all(|v| v.is_finite())
        };
        if !norm_ok(&self.norm) {
            return Some("encoder: final norm of the wrong width or non-finite".into());
        }
        let ff = self.d_ff();
        for (l, b) in self.blocks.iter().enumerate() {
            let ok = norm_ok(&b.attn_norm)
                && norm_ok(&b.ff_norm)
                && [&b.query, &b.key, &b.value, &b.out]
                    .into_iter()
                    .all(|d| dense_ok(d, w, w))
                && ff > 0
                && dense_ok(&b.ff_in, w, ff)
                && dense_ok(&b.ff_out, ff, w);
            if !ok {
                return Some(format!(
                    "encoder block {}: a layer of the wrong shape or a non-finite parameter",
                    l + 1
                ));
            }
        }
        None
    }

    /// The encoder over the rows of one query, `x` (`rows × width`, row-major), in place.
    pub fn forward(&self, x: &mut [f32], rows: usize) {
        let w = self.width();
        let mut a = vec![0f32; rows * w];
        let (mut q, mut k, mut v, mut o) = (a.clone(), a.clone(), a.clone(), a.clone());
        let mut p = vec![0f32; self.heads * rows * rows];
        let mut h = vec![0f32; rows * self.d_ff()];
        for b in &self.blocks {
            a.copy_from_slice(x);
            kernels::std_norm_rows(&mut a, w, &b.attn_norm, None);
            kernels::affine(&a, &b.query, &mut q);
            kernels::affine(&a, &b.key, &mut k);
            kernels::affine(&a, &b.value, &mut v);
            kernels::attention_probs(&q, &k, rows, w, self.heads, &mut p);
            kernels::attention_apply(&p, &v, rows, w, self.heads, &mut o);
            kernels::affine(&o, &b.out, &mut a);
            kernels::axpy(1.0, &a, x);
            a.copy_from_slice(x);
            kernels::std_norm_rows(&mut a, w, &b.ff_norm, None);
            kernels::affine(&a, &b.ff_in, &mut h);
            kernels::activate(super::Activation::Relu, &mut h);
            kernels::affine(&h, &b.ff_out, &mut a);
            kernels::axpy(1.0, &a, x);
        }
        kernels::std_norm_rows(x, w, &self.norm, None);
    }
}
