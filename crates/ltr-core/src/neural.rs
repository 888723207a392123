//! [`NeuralNet`]: a feed-forward network over each document's features (allRank's `FCModel` followed by its
//! `OutputLayer`), trained by `ltr-neural`, optionally with allRank's self-attention [`Encoder`] over the documents
//! of a query before the output layer. The linear model is its one-layer case (no hidden layer).
//!
//! Scoring and training share the kernels of [`kernels`], so a trained network scores here with the numbers it had
//! in training. Every kernel keeps each output's additions in one fixed order (the input index ascending): the SIMD
//! clones chosen at run time vectorise across outputs, never across a sum, so a score has the same bits on every
//! machine and at any thread count.

use ltr_data::{Dataset, QueryView, Row};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::scorer::Scorer;

pub mod bf16;
mod encoder;
pub mod int8;
pub use bf16::{Bf16Dense, Bf16Net};
pub use encoder::{Encoder, EncoderBlock, ENCODER_NORM_EPS};
pub use int8::{Int8Dense, Int8Net};

/// The non-linearity after each hidden layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Activation {
    /// max(0, x).
    Relu,
    /// tanh(x).
    Tanh,
    /// 1 / (1 + e^−x).
    Sigmoid,
    /// x (a deep linear network; mostly for tests).
    Identity,
}

impl Activation {
    /// The activation called `name` (`relu`, `tanh`, `sigmoid`, `identity`).
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "relu" => Self::Relu,
            "tanh" => Self::Tanh,
            "sigmoid" => Self::Sigmoid,
            "identity" | "linear" | "none" => Self::Identity,
            _ => return None,
        })
    }
    /// Its name as [`Activation::parse`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Relu => "relu",
            Self::Tanh => "tanh",
            Self::Sigmoid => "sigmoid",
            Self::Identity => "identity",
        }
    }
}

/// A fully connected layer `y = x W + b`; `weights` is row-major `[inputs][outputs]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dense {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// `inputs × outputs` weights, row `k` the weights out of input `k`.
    pub weights: Vec<f32>,
    /// One bias per output.
    pub bias: Vec<f32>,
}

impl Dense {
    /// A layer of zeros.
    pub fn zeros(inputs: usize, outputs: usize) -> Self {
        Self {
            inputs,
            outputs,
            weights: vec![0.0; inputs * outputs],
            bias: vec![0.0; outputs],
        }
    }
}

/// Layer normalisation (Ba et al. 2016) over one row: `(x − mean) / sqrt(var + ε) · γ + β`, ε = [`LAYER_NORM_EPS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerNorm {
    /// Scale per component.
    pub gamma: Vec<f32>,
    /// Shift per component.
    pub beta: Vec<f32>,
}

/// ε of [`LayerNorm`] (PyTorch's default).
pub const LAYER_NORM_EPS: f64 = 1e-5;

impl LayerNorm {
    /// The identity normalisation (γ = 1, β = 0) of `width` components.
    pub fn new(width: usize) -> Self {
        Self {
            gamma: vec![1.0; width],
            beta: vec![0.0; width],
        }
    }
}

/// Batch normalisation (Ioffe & Szegedy 2015) of each component over the documents of a training batch; at
/// inference `(x − running_mean) / sqrt(running_var + ε) · γ + β`, ε = [`BATCH_NORM_EPS`] (PyTorch's
/// `BatchNorm1d` in eval mode).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchNorm {
    /// Scale per component.
    pub gamma: Vec<f32>,
    /// Shift per component.
    pub beta: Vec<f32>,
    /// Running mean of each component over the training batches (what inference subtracts).
    pub running_mean: Vec<f32>,
    /// Running (unbiased) variance of each component over the training batches.
    pub running_var: Vec<f32>,
}

/// ε of [`BatchNorm`] (PyTorch's default).
pub const BATCH_NORM_EPS: f64 = 1e-5;

/// The weight of a batch's statistics in the running ones (PyTorch's default `momentum`):
/// `running = (1 − m)·running + m·batch`.
pub const BATCH_NORM_MOMENTUM: f64 = 0.1;

impl BatchNorm {
    /// The identity normalisation of `width` components before any batch (γ = 1, β = 0, mean 0, variance 1).
    pub fn new(width: usize) -> Self {
        Self {
            gamma: vec![1.0; width],
            beta: vec![0.0; width],
            running_mean: vec![0.0; width],
            running_var: vec![1.0; width],
        }
    }

    /// Per component `(scale, shift)` with `y = x · scale + shift` at inference: `scale = γ / sqrt(var + ε)`,
    /// `shift = β − mean · scale` (what an exporter folds into the layer before).
    pub fn folded(&self) -> (Vec<f64>, Vec<f64>) {
        let scale: Vec<f64> = self
            .gamma
            .iter()
            .zip(&self.running_var)
            .map(|(&g, &v)| f64::from(g) / (f64::from(v) + BATCH_NORM_EPS).sqrt())
            .collect();
        let shift = self
            .beta
            .iter()
            .zip(&self.running_mean)
            .zip(&scale)
            .map(|((&b, &m), &s)| f64::from(b) - f64::from(m) * s)
            .collect();
        (scale, shift)
    }
}

/// A hidden layer: affine map, optional layer or batch normalisation, then the network's activation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HiddenLayer {
    /// The affine map.
    pub dense: Dense,
    /// Layer normalisation of its outputs, before the activation.
    pub norm: Option<LayerNorm>,
    /// Batch normalisation of its outputs, before the activation (never with `norm`).
    #[serde(default)]
    pub batch_norm: Option<BatchNorm>,
}

/// A feed-forward scorer: optional input normalisation (allRank's `input_norm`), hidden layers, and a linear output
/// of one score per document. With no hidden layer it is a linear model with a bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NeuralNet {
    /// Features of the training data (the input width).
    pub n_features: usize,
    /// Layer normalisation of the input features.
    pub input_norm: Option<LayerNorm>,
    /// The hidden layers, input first.
    pub hidden: Vec<HiddenLayer>,
    /// The activation after every hidden layer.
    pub activation: Activation,
    /// The output layer (one output).
    pub output: Dense,
    /// allRank's context-aware encoder between the last hidden layer and the output (none: every document is
    /// scored on its own).
    #[serde(default)]
    pub encoder: Option<Encoder>,
}

impl NeuralNet {
    /// The width of layer `l`'s input (`l = hidden.len()`: the output layer's).
    pub fn width_before(&self, l: usize) -> usize {
        if l == 0 {
            self.n_features
        } else {
            self.hidden[l - 1].dense.outputs
        }
    }

    /// Number of trained parameters.
    pub fn n_parameters(&self) -> usize {
        let dense = |d: &Dense| d.weights.len() + d.bias.len();
        let norm = |n: &Option<LayerNorm>| n.as_ref().map_or(0, |n| 2 * n.gamma.len());
        let batch = |n: &Option<BatchNorm>| n.as_ref().map_or(0, |n| 2 * n.gamma.len());
        norm(&self.input_norm)
            + self
                .hidden
                .iter()
                .map(|h| dense(&h.dense) + norm(&h.norm) + batch(&h.batch_norm))
                .sum::<usize>()
            + dense(&self.output)
            + self.encoder.as_ref().map_or(0, Encoder::n_parameters)
    }

    /// Why the parts disagree (widths, lengths, a non-finite parameter), if they do.
    pub fn inconsistency(&self) -> Option<String> {
        let mut width = self.n_features;
        let check_norm = |n: &Option<LayerNorm>, w: usize, what: &str| -> Option<String> {
            let n = n.as_ref()?;
            if n.gamma.len() != w || n.beta.len() != w {
                return Some(format!("{what}: layer norm of the wrong width"));
            }
            if n.gamma.iter().chain(&n.beta).any(|v| !v.is_finite()) {
                return Some(format!("{what}: a non-finite layer-norm parameter"));
            }
            None
        };
        let check_dense = |d: &Dense, w: usize, what: &str| -> Option<String> {
            if d.inputs != w {
                return Some(format!(
                    "{what}: takes {} inputs, the layer before gives {w}",
                    d.inputs
                ));
            }
            if d.weights.len() != d.inputs * d.outputs || d.bias.len() != d.outputs {
                return Some(format!("{what}: weight or bias arrays of the wrong length"));
            }
            if d.weights.iter().chain(&d.bias).any(|v| !v.is_finite()) {
                return Some(format!("{what}: a non-finite weight"));
            }
            None
        };
        if let Some(p) = check_norm(&self.input_norm, width, "input") {
            return Some(p);
        }
        for (l, h) in self.hidden.iter().enumerate() {
            let what = format!("hidden layer {}", l + 1);
            if let Some(p) = check_dense(&h.dense, width, &what) {
                return Some(p);
            }
            width = h.dense.outputs;
            if let Some(p) = check_norm(&h.norm, width, &what) {
                return Some(p);
            }
            if let Some(b) = &h.batch_norm {
                if h.norm.is_some() {
                    return Some(format!("{what}: both layer and batch normalisation"));
                }
                let arrays = [&b.gamma, &b.beta, &b.running_mean, &b.running_var];
                if arrays.iter().any(|a| a.len() != width) {
                    return Some(format!("{what}: batch norm of the wrong width"));
                }
                if arrays.iter().any(|a| a.iter().any(|v| !v.is_finite())) {
                    return Some(format!("{what}: a non-finite batch-norm parameter"));
                }
                if b.running_var.iter().any(|&v| v < 0.0) {
                    return Some(format!("{what}: a negative batch-norm running variance"));
                }
            }
        }
        if let Some(p) = self.encoder.as_ref().and_then(|e| e.inconsistency(width)) {
            return Some(p);
        }
        if self.output.outputs != 1 {
            return Some("the output layer must have one output".into());
        }
        check_dense(&self.output, width, "output layer")
    }

    /// Scores of `rows` rows of `x` (row-major, `n_features` wide), one per row, in `out`. With an encoder the rows
    /// are the documents of one query (each attends to all of them).
    pub fn score_matrix(&self, x: &[f32], out: &mut [f32]) {
        RowScorer::score_rows(self, x, out, &mut Buffers::default());
    }

    /// The forward pass of `rows` rows of `x` into `out` (one score a row) through `cur` and `next`, with
    /// `product(l, a, y)` writing hidden layer `l`'s affine map of `a` into `y`: the f32 kernels, or the bfloat16
    /// products of [`Bf16Net`]. Everything else (normalisation, activation, encoder, output layer) is f32 here.
    fn forward_rows(
        &self,
        x: &[f32],
        out: &mut [f32],
        cur: &mut Vec<f32>,
        next: &mut Vec<f32>,
        mut product: impl FnMut(usize, &[f32], &mut [f32]),
    ) {
        let rows = out.len();
        // Without input normalisation the first product reads `x` itself: no copy of the block.
        let read_x = self.input_norm.is_none() && !self.hidden.is_empty();
        if !read_x {
            cur.clear();
            cur.extend_from_slice(x);
        }
        if let Some(n) = &self.input_norm {
            kernels::layer_norm_rows(cur, self.n_features, n, None);
        }
        for (l, h) in self.hidden.iter().enumerate() {
            next.resize(rows * h.dense.outputs, 0.0);
            product(l, if l == 0 && read_x { x } else { cur }, next);
            if let Some(n) = &h.norm {
                kernels::layer_norm_rows(next, h.dense.outputs, n, None);
            }
            if let Some(b) = &h.batch_norm {
                kernels::batch_norm_inference(next, b);
            }
            kernels::activate(self.activation, next);
            std::mem::swap(cur, next);
        }
        if let Some(e) = &self.encoder {
            e.forward(cur, rows);
        }
        kernels::affine(cur, &self.output, out);
    }
}

/// The activations of a block of rows while it is scored (reused from block to block).
#[derive(Default)]
struct Buffers {
    cur: Vec<f32>,
    next: Vec<f32>,
}

/// Rows scored together by an MLP's [`Scorer::score_dataset`]: their activations stay in cache. A multiple of
/// the products' row tiles (6 and 12 rows for AVX-512, 16 for the output layer's dot products), so that no block
/// ends in a short tile; 128 left two rows a block to a tile bound by its loads.
const SCORE_BLOCK: usize = 144;

/// Copy `row` into `out` (`out.len()` columns; columns beyond the row's are 0, beyond `out.len()` dropped).
pub fn row_into(row: Row<'_>, out: &mut [f32]) {
    match row {
        Row::Dense(x) => {
            let n = x.len().min(out.len());
            out[..n].copy_from_slice(&x[..n]);
            out[n..].fill(0.0);
        }
        Row::Sparse { indices, values } => {
            out.fill(0.0);
            for (&j, &v) in indices.iter().zip(values) {
                if let Some(o) = out.get_mut(j as usize) {
                    *o = v;
                }
            }
        }
    }
}

/// A network that scores rows of features: [`NeuralNet`] itself, its bfloat16 form [`Bf16Net`] or its 8-bit
/// integer form [`Int8Net`]. Each scores queries and data sets through [`score_query_in_blocks`] and [`score_dataset_in_blocks`].
trait RowScorer: Sync {
    /// What one thread reuses from block to block.
    type Buffers: Default + Send;
    /// The network (its width and whether it has an encoder).
    fn net(&self) -> &NeuralNet;
    /// One score a row of `x` into `out`.
    fn score_rows(&self, x: &[f32], out: &mut [f32], bufs: &mut Self::Buffers);
}

impl RowScorer for NeuralNet {
    type Buffers = Buffers;
    fn net(&self) -> &NeuralNet {
        self
    }
    /// [`NeuralNet::score_matrix`] in the caller's buffers (no allocation once they have grown).
    fn score_rows(&self, x: &[f32], out: &mut [f32], bufs: &mut Buffers) {
        let Buffers { cur, next } = bufs;
        self.forward_rows(x, out, cur, next, |l, a, y| {
            kernels::affine(a, &self.hidden[l].dense, y)
        });
    }
}

/// The scores of `q` by `r`, in blocks of `SCORE_BLOCK` rows whose activations stay in cache; with an encoder, the
/// whole query as one block (each document attends to all of them).
fn score_query_in_blocks<R: RowScorer>(r: &R, q: &QueryView<'_>, out: &mut [f64]) {
    let block = if r.net().encoder.is_some() {
        q.len().max(1)
    } else {
        SCORE_BLOCK
    };
    let d = r.net().n_features;
    let mut x = vec![0f32; block.min(q.len()) * d];
    let mut s = vec![0f32; block.min(q.len())];
    let mut bufs = R::Buffers::default();
    for start in (0..q.len()).step_by(block) {
        let n = block.min(q.len() - start);
        for i in 0..n {
            row_into(q.row(start + i), &mut x[i * d..(i + 1) * d]);
        }
        r.score_rows(&x[..n * d], &mut s[..n], &mut bufs);
        for i in 0..n {
            out[start + i] = f64::from(s[i]);
        }
    }
}

/// The scores of `ds` by `r`. Without an encoder each document is scored on its own, so the documents go in blocks
/// of `SCORE_BLOCK` rows across query boundaries, in parallel, each thread reusing its buffers (a score's bits do
/// not depend on its block); with one, query by query.
fn score_dataset_in_blocks<R: RowScorer>(r: &R, ds: &Dataset) -> Vec<f64> {
    if r.net().encoder.is_some() {
        return crate::scorer::score_by_query(ds, |q, s| score_query_in_blocks(r, q, s));
    }
    let mut out = vec![0.0; ds.n_docs()];
    let d = r.net().n_features;
    out.par_chunks_mut(SCORE_BLOCK).enumerate().for_each_init(
        || {
            (
                vec![0f32; SCORE_BLOCK * d],
                vec![0f32; SCORE_BLOCK],
                R::Buffers::default(),
            )
        },
        |(x, s, bufs), (b, ob)| {
            let (start, n) = (b * SCORE_BLOCK, ob.len());
            for (i, xr) in x.chunks_exact_mut(d.max(1)).take(n).enumerate() {
                row_into(ds.row(start + i), xr);
            }
            r.score_rows(&x[..n * d], &mut s[..n], bufs);
            for (o, &v) in ob.iter_mut().zip(&s[..n]) {
                *o = f64::from(v);
            }
        },
    );
    out
}

/// A [`NeuralNet`] with its hidden layers' weights packed once for a whole data set ([`kernels::Packed`]), so
/// that no block of rows copies them again (for 136→256→128→1, 270 KB a block); the same bits as
/// [`NeuralNet`]'s own products. The sparse product is not used: ReLU leaves about half of a scoring layer's
/// inputs at exact zero, too few for its scan to pay (BENCHMARKS.md, "Neural scoring on an Intel core").
struct PackedNet<'a> {
    net: &'a NeuralNet,
    layers: Vec<kernels::Packed>,
}

impl<'a> PackedNet<'a> {
    fn new(net: &'a NeuralNet) -> Self {
        let layers = net
            .hidden
            .iter()
            .map(|h| kernels::Packed::new(&h.dense.weights, h.dense.inputs, h.dense.outputs))
            .collect();
        Self { net, layers }
    }
}

impl RowScorer for PackedNet<'_> {
    type Buffers = Buffers;
    fn net(&self) -> &NeuralNet {
        self.net
    }
    fn score_rows(&self, x: &[f32], out: &mut [f32], bufs: &mut Buffers) {
        let Buffers { cur, next } = bufs;
        self.net.forward_rows(x, out, cur, next, |l, a, y| {
            kernels::matmul_packed(a, &self.layers[l], Some(&self.net.hidden[l].dense.bias), y);
        });
    }
}

impl Scorer for NeuralNet {
    fn score_query(&self, q: &QueryView<'_>, out: &mut [f64]) {
        score_query_in_blocks(self, q, out);
    }
    fn n_features(&self) -> usize {
        self.n_features
    }
    /// An MLP scores each document on its own, so the documents go in blocks of rows across queries, in parallel
    /// (a score's bits do not depend on its block), through its weights packed once ([`PackedNet`]); with an
    /// encoder, query by query.
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        if self.encoder.is_some() {
            return score_dataset_in_blocks(self, ds);
        }
        score_dataset_in_blocks(&PackedNet::new(self), ds)
    }
}

pub mod kernels;
mod softmax;
mod tiles;
