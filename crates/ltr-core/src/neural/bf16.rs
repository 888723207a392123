//! Scoring an MLP with its hidden layers' products in bfloat16 ([`Bf16Net`], `ltr predict --precision bf16`): an
//! opt-in for throughput, not the default.
//!
//! Why: an f32 product of 136→256→128→1 needs 67,712 multiply-adds a document, and this project's 2-core Zen 4
//! does at most 16 f32 multiply-adds a cycle, so no f32 scorer reaches 1 M documents/s per core there (BENCHMARKS.md,
//! "The core's ceiling"). AVX-512 BF16's `vdpbf16ps` does two multiply-adds a lane per instruction on bfloat16
//! inputs (8 bits of mantissa) with f32 sums: twice the f32 rate.
//!
//! What changes: each hidden layer's input and weights are rounded to bfloat16 (round to nearest even, subnormals
//! to zero, as the instruction's conversions do) before its product; the sums, the bias, normalisation,
//! activations, the encoder and the output layer stay f32. Scores move by about 1e-3 relative (each input keeps 8
//! significant bits); `--precision full` (the default) is the model as trained and exported.
//!
//! Determinism is kept: every output is one chain from its bias over the input pairs ascending, each step adding the
//! odd input's product and then the even one's, rounded to f32 with subnormals flushed to zero — what `vdpbf16ps`
//! does on this project's CPU (checked on 3.2 M random lanes, ±∞, NaN, −0 and subnormals included). Without AVX-512
//! BF16 (or below `LTR_SIMD=avx512`) [`dot_pair`] computes the same chain in safe code, slowly, so a score has the
//! same bits on every machine; `tests/unit/neural_bf16.rs` compares the two wherever the instruction exists.

use ltr_data::{Dataset, QueryView};

use super::{score_dataset_in_blocks, score_query_in_blocks, NeuralNet, RowScorer};
use crate::scorer::Scorer;

/// Outputs a panel of the packed weights holds: a tile's four vectors of 16 sums.
pub const PANEL: usize = 64;

/// `x` rounded to bfloat16 as AVX-512 BF16's conversions round it: to nearest, ties to even, a subnormal to a zero
/// of its sign, a NaN kept a (quiet) NaN.
pub fn to_bf16(x: f32) -> u16 {
    let x = if x.is_subnormal() {
        0f32.copysign(x)
    } else {
        x
    };
    let b = x.to_bits();
    if x.is_nan() {
        ((b >> 16) | 0x40) as u16
    } else {
        ((b + 0x7fff + ((b >> 16) & 1)) >> 16) as u16
    }
}

/// The f32 a bfloat16 stands for.
pub fn from_bf16(h: u16) -> f32 {
    f32::from_bits(u32::from(h) << 16)
}

/// Two bfloat16 in one lane: `lo` (the even input) in the low half, `hi` (the odd one) in the high half.
pub fn pair(lo: f32, hi: f32) -> u32 {
    u32::from(to_bf16(lo)) | (u32::from(to_bf16(hi)) << 16)
}

fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0f32.copysign(x)
    } else {
        x
    }
}

/// One step of a chain: `acc + hi(a)·hi(b)`, rounded, then `+ lo(a)·lo(b)`, rounded, subnormals (in `acc` and in
/// each sum) flushed to zero. A product of two bfloat16 is exact in f32 unless it leaves f32's normal range; then
/// it is taken exactly in f64 (as the instruction does), and the sum rounded once from there.
pub fn dot_pair(acc: f32, a: u32, b: u32) -> f32 {
    let (a0, a1) = (from_bf16(a as u16), from_bf16((a >> 16) as u16));
    let (b0, b1) = (from_bf16(b as u16), from_bf16((b >> 16) as u16));
    let acc = flush(acc);
    let (p1, p0) = (f64::from(a1) * f64::from(b1), f64::from(a0) * f64::from(b0));
    let in_range = |p: f64| p == 0.0 || (p as f32).is_normal();
    if in_range(p1) && in_range(p0) {
        flush(flush(acc + a1 * b1) + a0 * b0)
    } else {
        let t = flush((f64::from(acc) + p1) as f32);
        flush((f64::from(t) + p0) as f32)
    }
}

/// A dense layer's weights in bfloat16 pairs, packed for the tiles: panel `q` (outputs `64q..64q + 64`, past the
/// layer's outputs zero) holds, for each input pair `p`, 64 lanes `pair(W[2p][j], W[2p + 1][j])` (an odd input
/// count pads the last pair with 0).
#[derive(Debug, Clone)]
pub struct Bf16Dense {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// The packed pairs, `panels × pairs × 64`.
    pub packed: Vec<u32>,
    /// One bias per output, padded with zeros to whole panels.
    pub bias: Vec<f32>,
}

impl Bf16Dense {
    /// Pack `weights` (row-major `[inputs][outputs]`) and `bias`.
    pub fn new(inputs: usize, outputs: usize, weights: &[f32], bias: &[f32]) -> Self {
        let pairs = inputs.div_ceil(2);
        let panels = outputs.div_ceil(PANEL);
        let w = |k: usize, j: usize| {
            if k < inputs && j < outputs {
                weights[k * outputs + j]
            } else {
                0.0
            }
        };
        let mut packed = Vec::with_capacity(panels * pairs * PANEL);
        for q in 0..panels {
            for p in 0..pairs {
                for lane in 0..PANEL {
                    let j = q * PANEL + lane;
                    packed.push(pair(w(2 * p, j), w(2 * p + 1, j)));
                }
            }
        }
        let mut padded = bias.to_vec();
        padded.resize(panels * PANEL, 0.0);
        Self {
            inputs,
            outputs,
            packed,
            bias: padded,
        }
    }

    /// Input pairs.
    pub fn pairs(&self) -> usize {
        self.inputs.div_ceil(2)
    }

    /// Panels of [`PANEL`] outputs.
    pub fn panels(&self) -> usize {
        self.outputs.div_ceil(PANEL)
    }

    /// `y = bias + x W` for the rows of `x` (`inputs` wide) into `y` (`outputs` wide), with the tiles of
    /// AVX-512 BF16 where the CPU has them and `LTR_SIMD` allows AVX-512, [`dot_pair`] otherwise. `xb` and `wide`
    /// are scratch.
    pub fn affine(&self, x: &[f32], y: &mut [f32], xb: &mut Vec<u32>, wide: &mut Vec<f32>) {
        self.affine_with(x, y, xb, wide, tiles_available());
    }

    /// [`Bf16Dense::affine`] with the choice of kernel given (`tiles` false: the safe chain only; the tests'
    /// oracle).
    pub fn affine_with(
        &self,
        x: &[f32],
        y: &mut [f32],
        xb: &mut Vec<u32>,
        wide: &mut Vec<f32>,
        tiles: bool,
    ) {
        let rows = y.len().checked_div(self.outputs).unwrap_or(0);
        assert_eq!(x.len(), rows * self.inputs, "x is not rows × inputs");
        let pairs = self.pairs();
        xb.clear();
        xb.resize(rows * pairs, 0);
        for (xr, br) in x
            .chunks_exact(self.inputs.max(1))
            .zip(xb.chunks_exact_mut(pairs.max(1)))
        {
            convert_row(xr, br, tiles);
        }
        let width = self.panels() * PANEL;
        let direct = width == self.outputs;
        if !direct {
            wide.clear();
            wide.resize(rows * width, 0.0);
        }
        let out: &mut [f32] = if direct { y } else { wide };
        let done = tiles && simd::product(self, xb, out, rows);
        if !done {
            for (br, yr) in xb
                .chunks_exact(pairs.max(1))
                .zip(out.chunks_exact_mut(width))
            {
                for (j, o) in yr.iter_mut().enumerate() {
                    let (q, lane) = (j / PANEL, j % PANEL);
                    let panel = &self.packed[q * pairs * PANEL..(q + 1) * pairs * PANEL];
                    let mut acc = self.bias[j];
                    for (p, &a) in br.iter().enumerate().take(pairs) {
                        acc = dot_pair(acc, a, panel[p * PANEL + lane]);
                    }
                    *o = acc;
                }
            }
        }
        if !direct {
            for (yr, wr) in y
                .chunks_exact_mut(self.outputs)
                .zip(wide.chunks_exact(width))
            {
                yr.copy_from_slice(&wr[..self.outputs]);
            }
        }
    }
}

/// One row of f32 into bfloat16 pairs (`br.len()` pairs; an odd last input paired with 0).
fn convert_row(xr: &[f32], br: &mut [u32], tiles: bool) {
    let whole = if tiles { simd::convert(xr, br) } else { 0 };
    for (p, b) in br.iter_mut().enumerate().skip(whole) {
        let lo = xr.get(2 * p).copied().unwrap_or(0.0);
        let hi = xr.get(2 * p + 1).copied().unwrap_or(0.0);
        *b = pair(lo, hi);
    }
}

/// What a front end says when bfloat16 scoring is asked for and [`tiles_available`] is false: the same scores,
/// computed by [`dot_pair`]'s portable chain, about 100 times slower than f32 (BENCHMARKS.md, "Neural scoring on an
/// Intel core": 4.5 K against 550 K documents/s at `LTR_SIMD=avx2+fma`).
pub const PORTABLE_WARNING: &str = "--precision bf16: this CPU has no AVX-512 BF16 (or LTR_SIMD caps it below \
    avx512), so the bfloat16 products run in portable code, about 100 times slower than `full`; the scores are \
    the ones a CPU with AVX-512 BF16 gives";

/// Whether this CPU has the bfloat16 tiles' instructions (AVX-512 F, BW and BF16), whatever `LTR_SIMD` says.
pub fn cpu_has_tiles() -> bool {
    simd::detected()
}

/// Whether the bfloat16 tiles run: the CPU has AVX-512 BF16 and `LTR_SIMD` allows AVX-512.
pub fn tiles_available() -> bool {
    ltr_data::simd_level() >= ltr_data::SimdLevel::Avx512 && cpu_has_tiles()
}

/// A [`NeuralNet`] whose hidden layers' products run in bfloat16 (module docs). Made by [`NeuralNet::to_bf16`].
#[derive(Debug, Clone)]
pub struct Bf16Net {
    net: NeuralNet,
    layers: Vec<Bf16Dense>,
}

/// One thread's buffers while it scores.
#[derive(Default)]
pub(super) struct Scratch {
    cur: Vec<f32>,
    next: Vec<f32>,
    xb: Vec<u32>,
    wide: Vec<f32>,
}

impl NeuralNet {
    /// This network with its hidden layers' products in bfloat16 ([`Bf16Net`]).
    pub fn to_bf16(&self) -> Bf16Net {
        let layers = self
            .hidden
            .iter()
            .map(|h| {
                let d = &h.dense;
                Bf16Dense::new(d.inputs, d.outputs, &d.weights, &d.bias)
            })
            .collect();
        Bf16Net {
            net: self.clone(),
            layers,
        }
    }
}

impl Bf16Net {
    /// The network in f32, as trained.
    pub fn f32_net(&self) -> &NeuralNet {
        &self.net
    }

    /// Scores of the rows of `x` (`n_features` wide), one per row, in `out` (with an encoder: the documents of one
    /// query).
    pub fn score_matrix(&self, x: &[f32], out: &mut [f32]) {
        RowScorer::score_rows(self, x, out, &mut Scratch::default());
    }
}

impl RowScorer for Bf16Net {
    type Buffers = Scratch;
    fn net(&self) -> &NeuralNet {
        &self.net
    }
    /// The hidden layers' products in bfloat16 ([`Bf16Dense::affine`]), the rest as [`NeuralNet`]'s.
    fn score_rows(&self, x: &[f32], out: &mut [f32], s: &mut Scratch) {
        let Scratch {
            cur,
            next,
            xb,
            wide,
        } = s;
        self.net.forward_rows(x, out, cur, next, |l, a, y| {
            self.layers[l].affine(a, y, xb, wide)
        });
    }
}

impl Scorer for Bf16Net {
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

mod simd;
