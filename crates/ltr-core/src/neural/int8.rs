//! Scoring an MLP with its hidden layers' products in 8-bit integers ([`Int8Net`], `ltr predict --precision
//! int8`): an opt-in for throughput on CPUs without AVX-512 BF16, not the default.
//!
//! Why: an f32 product of 136→256→128→1 needs 67,712 multiply-adds a document, and an AVX2 core does at most 16 f32
//! multiply-adds a cycle, so f32 scoring stays well below 1 M documents/s per core there (BENCHMARKS.md, "Scoring
//! in 8-bit integers"). AVX2's `vpmaddubsw` multiplies 32 pairs of bytes and adds them pairwise into 16-bit lanes
//! in one instruction; two of those added and widened by one `vpmaddwd` make 64 multiply-adds in four
//! instructions, where f32 needs eight FMAs.
//!
//! The scheme (what onnxruntime calls dynamic quantization with a reduced weight range, its choices fixed here so
//! that every machine gives the same bits):
//! - **Weights**, once per model: each output column `j` of a hidden layer gets its own scale
//!   `s_j = max_k |W[k][j]| / 63` and is stored as `round(W[k][j] / s_j)` in `−63..=63` (ties to even).
//! - **Inputs**, per row and layer (dynamic): the row's range `[lo, hi]`, widened to hold 0, maps to `0..=127`
//!   with scale `t = (hi − lo) / 127` and zero point `z = round(−lo · 127 / (hi − lo))` (ties to even).
//! - Seven bits each, not eight, because the 16-bit lanes saturate: a lane of `vpmaddubsw` holds two products and
//!   the tile adds two lanes before widening, `4 · 127 · 63 = 32,004`, which fits below 32,767; with eight-bit
//!   weights it would not.
//! - **Sums** are exact 32-bit integers `a_j = Σ_k q[k] · Wq[k][j]`, so their order does not matter.
//! - **Outputs**: `y_j = ((a_j − z · Σ_k Wq[k][j]) as f32) · (t · s_j) + b_j`, a product and then a sum, each
//!   rounded (never fused); then the network's own normalisation and activation in f32.
//!
//! A row holding ±∞ or NaN, or whose range overflows f32, is computed by the layer's f32 product instead
//! ([`crate::neural::kernels::affine`]), so it scores as it does at `full`. The encoder and the output layer stay
//! f32. Scores move by about 1e-2 of their scale; `tests/unit/neural_int8.rs` bounds it and BENCHMARKS.md measures
//! the ranking on real folds.
//!
//! Determinism: the integer sums are exact and each output's f32 steps are fixed, so the AVX2 tiles
//! (`int8/avx2.rs`) and the portable code that runs without AVX2 (or below `LTR_SIMD=avx2`) give the same bits;
//! the tests compare them wherever AVX2 exists.

use ltr_data::{Dataset, QueryView};

use super::{kernels, score_dataset_in_blocks, score_query_in_blocks, NeuralNet, RowScorer};
use crate::scorer::Scorer;

/// Outputs a panel of the packed weights holds: two AVX2 vectors of 8 integer sums.
pub const PANEL: usize = 16;

/// Inputs one 32-bit lane of a panel holds: four bytes, summed by `vpmaddubsw` and `vpmaddwd` into one sum.
pub const QUAD: usize = 4;

/// The largest quantized value of an input (seven bits: no `vpmaddubsw` sum saturates).
pub const INPUT_MAX: i32 = 127;

/// The largest magnitude of a quantized weight (seven bits with the sign: no 16-bit lane saturates).
pub const WEIGHT_MAX: f32 = 63.0;

/// How one row of a layer's input was quantized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowScale {
    /// `x ≈ (q − zero) · scale`.
    Quantized {
        /// The real value of one step.
        scale: f32,
        /// The byte that stands for 0.
        zero: i32,
    },
    /// A value is ±∞ or NaN, or the range overflows f32: the row is computed in f32.
    Float,
}

/// A dense layer's weights in bytes, packed for the tiles (module docs): panel `p` (outputs `16p..16p + 16`, zero
/// past the layer's outputs) holds, for each quad `c` of inputs, 16 lanes of the four bytes
/// `Wq[4c..4c + 4][j]` (zero past the layer's inputs).
#[derive(Debug, Clone)]
pub struct Int8Dense {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// The packed bytes, `panels × quads × 16 × 4`.
    pub packed: Vec<i8>,
    /// Each output's weight scale `s_j`, padded with zeros to whole panels.
    pub weight_scale: Vec<f32>,
    /// Each output's `Σ_k Wq[k][j]` (for the inputs' zero point), padded with zeros.
    pub column_sum: Vec<i32>,
    /// One bias per output, padded with zeros.
    pub bias: Vec<f32>,
    /// The layer in f32 (rows [`RowScale::Float`] are computed with it).
    pub dense: super::Dense,
}

impl Int8Dense {
    /// Quantize `dense` (module docs).
    pub fn new(dense: &super::Dense) -> Self {
        let (inputs, outputs) = (dense.inputs, dense.outputs);
        let (quads, panels) = (inputs.div_ceil(QUAD), outputs.div_ceil(PANEL));
        let width = panels * PANEL;
        let mut weight_scale = vec![0f32; width];
        let mut column_sum = vec![0i32; width];
        let mut q = vec![0i8; inputs * width];
        for j in 0..outputs {
            let largest = (0..inputs)
                .map(|k| dense.weights[k * outputs + j].abs())
                .fold(0f32, f32::max);
            if largest == 0.0 {
                continue;
            }
            let s = largest / WEIGHT_MAX;
            weight_scale[j] = s;
            for k in 0..inputs {
                let v = (dense.weights[k * outputs + j] / s)
                    .round_ties_even()
                    .clamp(-WEIGHT_MAX, WEIGHT_MAX) as i8;
                q[k * width + j] = v;
                column_sum[j] += i32::from(v);
            }
        }
        let mut packed = Vec::with_capacity(panels * quads * PANEL * QUAD);
        for p in 0..panels {
            for c in 0..quads {
                for lane in 0..PANEL {
                    for b in 0..QUAD {
                        let k = c * QUAD + b;
                        let j = p * PANEL + lane;
                        packed.push(if k < inputs { q[k * width + j] } else { 0 });
                    }
                }
            }
        }
        let mut bias = dense.bias.clone();
        bias.resize(width, 0.0);
        Self {
            inputs,
            outputs,
            packed,
            weight_scale,
            column_sum,
            bias,
            dense: dense.clone(),
        }
    }

    /// Quads of inputs (the width of a quantized row, in 4-byte lanes).
    pub fn quads(&self) -> usize {
        self.inputs.div_ceil(QUAD)
    }

    /// Panels of [`PANEL`] outputs.
    pub fn panels(&self) -> usize {
        self.outputs.div_ceil(PANEL)
    }

    /// `y = bias + x W` for the rows of `x` (`inputs` wide) into `y` (`outputs` wide) in integers (module docs),
    /// with the AVX2 tiles where the CPU has them and `LTR_SIMD` allows AVX2, portable code otherwise.
    pub fn affine(&self, x: &[f32], y: &mut [f32], s: &mut Scratch) {
        self.affine_with(x, y, s, tiles_available());
    }

    /// [`Int8Dense::affine`] with the choice of kernel given (`tiles` false: portable code only; the tests'
    /// oracle).
    pub fn affine_with(&self, x: &[f32], y: &mut [f32], s: &mut Scratch, tiles: bool) {
        let rows = y.len().checked_div(self.outputs).unwrap_or(0);
        assert_eq!(x.len(), rows * self.inputs, "x is not rows × inputs");
        let stride = self.quads() * QUAD;
        // Every byte is written by the quantization (the padding zeroed there).
        s.xq.resize(rows * stride, 0);
        s.scales.clear();
        for (xr, qr) in x
            .chunks_exact(self.inputs.max(1))
            .zip(s.xq.chunks_exact_mut(stride.max(1)))
            .take(rows)
        {
            let scale = if tiles {
                avx2::quantize_row(xr, qr)
            } else {
                None
            };
            s.scales.push(scale.unwrap_or_else(|| quantize_row(xr, qr)));
        }
        if self.inputs == 0 {
            s.scales.resize(
                rows,
                RowScale::Quantized {
                    scale: 0.0,
                    zero: 0,
                },
            );
        }
        let width = self.panels() * PANEL;
        let direct = width == self.outputs;
        if !direct {
            s.wide.clear();
            s.wide.resize(rows * width, 0.0);
        }
        let out: &mut [f32] = if direct { &mut *y } else { &mut s.wide };
        let done = tiles && avx2::product(self, &s.xq, &s.scales, out, rows);
        if !done {
            for (r, yr) in out.chunks_exact_mut(width).enumerate().take(rows) {
                self.row_portable(&s.xq[r * stride..(r + 1) * stride], s.scales[r], yr);
            }
        }
        if !direct {
            for (yr, wr) in y
                .chunks_exact_mut(self.outputs)
                .zip(s.wide.chunks_exact(width))
            {
                yr.copy_from_slice(&wr[..self.outputs]);
            }
        }
        // Rows the integers cannot hold: the layer's f32 product, as at `full`.
        for (r, scale) in s.scales.iter().enumerate() {
            if *scale == RowScale::Float {
                let (xr, yr) = (
                    &x[r * self.inputs..(r + 1) * self.inputs],
                    &mut y[r * self.outputs..(r + 1) * self.outputs],
                );
                kernels::affine(xr, &self.dense, yr);
            }
        }
    }

    /// One row's outputs (`width` of them) from its quantized input, in portable code.
    fn row_portable(&self, q: &[u8], scale: RowScale, yr: &mut [f32]) {
        let RowScale::Quantized { scale, zero } = scale else {
            return;
        };
        let quads = self.quads();
        for (p, panel_out) in yr.chunks_exact_mut(PANEL).enumerate() {
            let panel = &self.packed[p * quads * PANEL * QUAD..(p + 1) * quads * PANEL * QUAD];
            for (lane, o) in panel_out.iter_mut().enumerate() {
                let mut sum = 0i32;
                for (c, qc) in q.chunks_exact(QUAD).enumerate() {
                    let w = &panel[(c * PANEL + lane) * QUAD..(c * PANEL + lane + 1) * QUAD];
                    for (&a, &b) in qc.iter().zip(w) {
                        sum += i32::from(a) * i32::from(b);
                    }
                }
                let j = p * PANEL + lane;
                *o = dequantize(
                    sum,
                    zero,
                    self.column_sum[j],
                    scale,
                    self.weight_scale[j],
                    self.bias[j],
                );
            }
        }
    }
}

/// An output from its integer sum (module docs): `((sum − zero · column_sum) as f32) · (scale · weight_scale) +
/// bias`, in that order, with wrapping integer steps as the vector instructions take them.
pub fn dequantize(
    sum: i32,
    zero: i32,
    column_sum: i32,
    scale: f32,
    weight_scale: f32,
    bias: f32,
) -> f32 {
    let t = sum.wrapping_sub(zero.wrapping_mul(column_sum)) as f32;
    t * (scale * weight_scale) + bias
}

/// The range of a row (module docs), widened to hold 0, or `None` when a value is not finite.
fn range_of(xr: &[f32]) -> Option<(f32, f32)> {
    let (mut lo, mut hi) = (0f32, 0f32);
    for &v in xr {
        if !v.is_finite() {
            return None;
        }
        lo = lo.min(v);
        hi = hi.max(v);
    }
    Some((lo, hi))
}

/// How a row with range `[lo, hi]` is quantized, and the factor that maps a value to its step (module docs).
pub fn row_scale(lo: f32, hi: f32) -> (RowScale, f32) {
    let range = hi - lo;
    if !range.is_finite() {
        return (RowScale::Float, 0.0);
    }
    if range == 0.0 {
        return (
            RowScale::Quantized {
                scale: 0.0,
                zero: 0,
            },
            0.0,
        );
    }
    let inv = INPUT_MAX as f32 / range;
    let zero = ((-lo * inv).round_ties_even() as i32).clamp(0, INPUT_MAX);
    let scale = range / INPUT_MAX as f32;
    (RowScale::Quantized { scale, zero }, inv)
}

/// One input's byte: `round(v · inv) + zero`, clamped to `0..=127`.
pub fn quantize(v: f32, inv: f32, zero: i32) -> u8 {
    ((v * inv).round_ties_even() as i32 + zero).clamp(0, INPUT_MAX) as u8
}

/// Quantize a row of f32 into `qr` (its padding zero), in portable code.
pub fn quantize_row(xr: &[f32], qr: &mut [u8]) -> RowScale {
    qr.fill(0);
    let Some((lo, hi)) = range_of(xr) else {
        return RowScale::Float;
    };
    let (scale, inv) = row_scale(lo, hi);
    if let RowScale::Quantized { zero, .. } = scale {
        for (q, &v) in qr.iter_mut().zip(xr) {
            *q = quantize(v, inv, zero);
        }
    }
    scale
}

/// What a front end says when 8-bit scoring is asked for and [`tiles_available`] is false: the same scores,
/// computed by portable code, about 35 times slower than the AVX2 tiles (BENCHMARKS.md, "Scoring in 8-bit
/// integers": 22 K against 0.76 M documents/s on AMD Zen 3; f32 at that level takes 4 K).
pub const PORTABLE_WARNING: &str = "--precision int8: this CPU has no AVX2 (or LTR_SIMD caps it below avx2), so \
    the integer products run in portable code, about 35 times slower than with AVX2 (still faster than `full` \
    there); the scores are the ones a CPU with AVX2 gives";

/// Whether this CPU has AVX2, whatever `LTR_SIMD` says.
pub fn cpu_has_tiles() -> bool {
    avx2::detected()
}

/// Whether the AVX2 tiles run: the CPU has AVX2 and `LTR_SIMD` allows it.
pub fn tiles_available() -> bool {
    ltr_data::simd_level() >= ltr_data::SimdLevel::Avx2 && cpu_has_tiles()
}

/// A [`NeuralNet`] whose hidden layers' products run in 8-bit integers (module docs). Made by
/// [`NeuralNet::to_int8`].
#[derive(Debug, Clone)]
pub struct Int8Net {
    net: NeuralNet,
    layers: Vec<Int8Dense>,
}

/// One thread's buffers while it scores: the quantized rows, their scales, and a padded output.
#[derive(Default, Debug)]
pub struct Scratch {
    xq: Vec<u8>,
    scales: Vec<RowScale>,
    wide: Vec<f32>,
}

/// [`Scratch`] and the activations of a block of rows.
#[derive(Default)]
pub(super) struct Buffers {
    cur: Vec<f32>,
    next: Vec<f32>,
    scratch: Scratch,
}

impl NeuralNet {
    /// This network with its hidden layers' products in 8-bit integers ([`Int8Net`]).
    pub fn to_int8(&self) -> Int8Net {
        Int8Net {
            net: self.clone(),
            layers: self
                .hidden
                .iter()
                .map(|h| Int8Dense::new(&h.dense))
                .collect(),
        }
    }
}

impl Int8Net {
    /// The network in f32, as trained.
    pub fn f32_net(&self) -> &NeuralNet {
        &self.net
    }

    /// The quantized hidden layers, input first.
    pub fn layers(&self) -> &[Int8Dense] {
        &self.layers
    }

    /// Scores of the rows of `x` (`n_features` wide), one per row, in `out` (with an encoder: the documents of one
    /// query).
    pub fn score_matrix(&self, x: &[f32], out: &mut [f32]) {
        RowScorer::score_rows(self, x, out, &mut Buffers::default());
    }
}

impl RowScorer for Int8Net {
    type Buffers = Buffers;
    fn net(&self) -> &NeuralNet {
        &self.net
    }
    /// The hidden layers' products in integers ([`Int8Dense::affine`]), the rest as [`NeuralNet`]'s.
    fn score_rows(&self, x: &[f32], out: &mut [f32], b: &mut Buffers) {
        let Buffers { cur, next, scratch } = b;
        self.net.forward_rows(x, out, cur, next, |l, a, y| {
            self.layers[l].affine(a, y, scratch)
        });
    }
}

impl Scorer for Int8Net {
    fn score_query(&self, q: &QueryView<'_>, out: &mut [f64]) {
        score_query_in_blocks(self, q, out);
    }
    fn n_features(&self) -> usize {
        self.net.n_features
    }
    /// As [`NeuralNet`]'s: documents in blocks of rows across queries, in parallel (query by query with an encoder).
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        score_dataset_in_blocks(self, ds)
    }
}

mod avx2;
