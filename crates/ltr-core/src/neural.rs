//! [`NeuralNet`]: a feed-forward network over each document's features (allRank's `FCModel` followed by its
//! `OutputLayer`), trained by `ltr-neural`, optionally with allRank's self-attention [`Encoder`] over the documents
//! of a query before the output layer. The linear model is its one-layer case (no hidden layer).
//!
//! Scoring and training share the kernels of [`kernels`], so a trained network scores here with the numbers it had
//! in training. Every kernel keeps each output's additions in one fixed order (the input index ascending): the SIMD
//! clones chosen at run time vectorise across outputs, never across a sum, so a score has the same bits on every
//! machine and at any thread count.

use ltr_data::{QueryView, Row};
use serde::{Deserialize, Serialize};

use crate::scorer::Scorer;

mod encoder;
pub use encoder::{Encoder, EncoderBlock, ENCODER_NORM_EPS};

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

/// A hidden layer: affine map, optional layer normalisation, then the network's activation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HiddenLayer {
    /// The affine map.
    pub dense: Dense,
    /// Layer normalisation of its outputs, before the activation.
    pub norm: Option<LayerNorm>,
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
        norm(&self.input_norm)
            + self
                .hidden
                .iter()
                .map(|h| dense(&h.dense) + norm(&h.norm))
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
        let rows = out.len();
        let mut cur = x.to_vec();
        if let Some(n) = &self.input_norm {
            kernels::layer_norm_rows(&mut cur, self.n_features, n, None);
        }
        let mut next = Vec::new();
        for h in &self.hidden {
            next.resize(rows * h.dense.outputs, 0.0);
            kernels::affine(&cur, &h.dense, &mut next);
            if let Some(n) = &h.norm {
                kernels::layer_norm_rows(&mut next, h.dense.outputs, n, None);
            }
            kernels::activate(self.activation, &mut next);
            std::mem::swap(&mut cur, &mut next);
        }
        if let Some(e) = &self.encoder {
            e.forward(&mut cur, rows);
        }
        kernels::affine(&cur, &self.output, out);
    }
}

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

impl Scorer for NeuralNet {
    fn score_query(&self, q: &QueryView<'_>, out: &mut [f64]) {
        // Blocks of 64 documents: the activations of a block stay in cache. With an encoder, the whole query.
        let block = if self.encoder.is_some() {
            q.len().max(1)
        } else {
            64
        };
        let d = self.n_features;
        let mut x = vec![0f32; block * d];
        let mut s = vec![0f32; block];
        for start in (0..q.len()).step_by(block) {
            let n = block.min(q.len() - start);
            for i in 0..n {
                row_into(q.row(start + i), &mut x[i * d..(i + 1) * d]);
            }
            self.score_matrix(&x[..n * d], &mut s[..n]);
            for i in 0..n {
                out[start + i] = f64::from(s[i]);
            }
        }
    }
    fn n_features(&self) -> usize {
        self.n_features
    }
}

/// The arithmetic shared by scoring and training. Each output of a kernel is summed in one fixed order.
pub mod kernels {
    use super::{Activation, Dense, LayerNorm, LAYER_NORM_EPS};

    ltr_data::multiversioned! {
    clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
    /// `out[j] += a · x[j]`.
    pub fn axpy(a: f32, x: &[f32], out: &mut [f32]) {
        for (o, v) in out.iter_mut().zip(x) {
            *o += a * v;
        }
    }
    }

    /// `y = x W + b` for the rows of `x` (`w.inputs` wide) into `y` (`w.outputs` wide). Row `r`, output `j`:
    /// `b[j] + Σ_k x[r,k] W[k,j]` added with `k` ascending (four rows share each read of a weight row).
    pub fn affine(x: &[f32], w: &Dense, y: &mut [f32]) {
        matmul_rows(x, &w.weights, Some(&w.bias), y, w.inputs, w.outputs);
    }

    ltr_data::multiversioned! {
    clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
    /// `y = x M (+ bias)` with `M` row-major `[k_dim][o_dim]`; each output's terms added with `k` ascending.
    pub fn matmul_rows(
        x: &[f32],
        m: &[f32],
        bias: Option<&[f32]>,
        y: &mut [f32],
        k_dim: usize,
        o_dim: usize,
    ) {
        let rows = y.len().checked_div(o_dim).unwrap_or(0);
        let init = |yr: &mut [f32]| match bias {
            Some(b) => yr.copy_from_slice(b),
            None => yr.fill(0.0),
        };
        if o_dim == 1 {
            // A dot product per row (the output layer): the same left-to-right order.
            for r in 0..rows {
                let xr = &x[r * k_dim..(r + 1) * k_dim];
                let mut acc = bias.map_or(0.0, |b| b[0]);
                for k in 0..k_dim {
                    acc += xr[k] * m[k];
                }
                y[r] = acc;
            }
            return;
        }
        let mut r = 0;
        while r + 4 <= rows {
            let (y0, rest) = y[r * o_dim..(r + 4) * o_dim].split_at_mut(o_dim);
            let (y1, rest) = rest.split_at_mut(o_dim);
            let (y2, y3) = rest.split_at_mut(o_dim);
            init(y0);
            init(y1);
            init(y2);
            init(y3);
            for k in 0..k_dim {
                let mr = &m[k * o_dim..(k + 1) * o_dim];
                let (a0, a1, a2, a3) = (
                    x[r * k_dim + k],
                    x[(r + 1) * k_dim + k],
                    x[(r + 2) * k_dim + k],
                    x[(r + 3) * k_dim + k],
                );
                for j in 0..o_dim {
                    let v = mr[j];
                    y0[j] += a0 * v;
                    y1[j] += a1 * v;
                    y2[j] += a2 * v;
                    y3[j] += a3 * v;
                }
            }
            r += 4;
        }
        for r in r..rows {
            let yr = &mut y[r * o_dim..(r + 1) * o_dim];
            init(yr);
            for k in 0..k_dim {
                let a = x[r * k_dim + k];
                let mr = &m[k * o_dim..(k + 1) * o_dim];
                for j in 0..o_dim {
                    yr[j] += a * mr[j];
                }
            }
        }
    }
    }

    /// Apply `f` elementwise.
    pub fn activate(f: Activation, x: &mut [f32]) {
        match f {
            Activation::Relu => x.iter_mut().for_each(|v| *v = v.max(0.0)),
            Activation::Tanh => x.iter_mut().for_each(|v| *v = v.tanh()),
            Activation::Sigmoid => x.iter_mut().for_each(|v| *v = 1.0 / (1.0 + (-*v).exp())),
            Activation::Identity => {}
        }
    }

    /// Normalise each `width`-wide row of `x` in place; with `stats`, record each row's (mean, 1/σ) and keep the
    /// normalised values before γ, β in `stats.1` (what the backward pass needs).
    pub fn layer_norm_rows(
        x: &mut [f32],
        width: usize,
        n: &LayerNorm,
        mut stats: Option<(&mut Vec<f32>, &mut Vec<f32>)>,
    ) {
        if let Some((rstd, xhat)) = stats.as_mut() {
            rstd.clear();
            xhat.clear();
        }
        for row in x.chunks_mut(width) {
            let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / width as f64;
            let var = row
                .iter()
                .map(|&v| (f64::from(v) - mean).powi(2))
                .sum::<f64>()
                / width as f64;
            let rs = (1.0 / (var + LAYER_NORM_EPS).sqrt()) as f32;
            let m = mean as f32;
            for (j, v) in row.iter_mut().enumerate() {
                let h = (*v - m) * rs;
                if let Some((_, xhat)) = stats.as_mut() {
                    xhat.push(h);
                }
                *v = h * n.gamma[j] + n.beta[j];
            }
            if let Some((rstd, _)) = stats.as_mut() {
                rstd.push(rs);
            }
        }
    }

    /// allRank's encoder norm of each `width`-wide row of `x`, in place: `γ·(x − mean)/(std + ε) + β`, the standard
    /// deviation unbiased (divided by `width − 1`), ε = [`super::ENCODER_NORM_EPS`]. With `stats`, record
    /// `x̂ = (x − mean)/(std + ε)` per component and (1/(std + ε), std) per row for the backward pass.
    pub fn std_norm_rows(
        x: &mut [f32],
        width: usize,
        n: &LayerNorm,
        mut stats: Option<(&mut Vec<f32>, &mut Vec<f32>)>,
    ) {
        if let Some((xhat, rows)) = stats.as_mut() {
            xhat.clear();
            rows.clear();
        }
        let dof = width.saturating_sub(1).max(1) as f64;
        for row in x.chunks_mut(width) {
            let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / width as f64;
            let var = row
                .iter()
                .map(|&v| (f64::from(v) - mean).powi(2))
                .sum::<f64>()
                / dof;
            let std = var.sqrt();
            let inv = (1.0 / (std + f64::from(super::ENCODER_NORM_EPS))) as f32;
            let m = mean as f32;
            for (j, v) in row.iter_mut().enumerate() {
                let h = (*v - m) * inv;
                if let Some((xhat, _)) = stats.as_mut() {
                    xhat.push(h);
                }
                *v = h * n.gamma[j] + n.beta[j];
            }
            if let Some((_, rows)) = stats.as_mut() {
                rows.push(inv);
                rows.push(std as f32);
            }
        }
    }

    /// Columns `[c, c + dk)` of the `width`-wide rows of `x` as a `rows × dk` matrix (`transpose`: `dk × rows`).
    pub fn head_slice(x: &[f32], width: usize, c: usize, dk: usize, transpose: bool) -> Vec<f32> {
        let rows = x.len() / width.max(1);
        let mut out = vec![0f32; rows * dk];
        for r in 0..rows {
            for t in 0..dk {
                let v = x[r * width + c + t];
                if transpose {
                    out[t * rows + r] = v;
                } else {
                    out[r * dk + t] = v;
                }
            }
        }
        out
    }

    /// Scaled dot-product attention weights of every head: `p[h][i][j] = softmax_j(q_i · k_j / √dk)` over the
    /// `rows` documents of one query, `q` and `k` `rows × width` with head `h` in columns `[h·dk, (h+1)·dk)`.
    pub fn attention_probs(
        q: &[f32],
        k: &[f32],
        rows: usize,
        width: usize,
        heads: usize,
        p: &mut [f32],
    ) {
        let dk = width / heads;
        let scale = (dk as f32).sqrt();
        for h in 0..heads {
            let qh = head_slice(q, width, h * dk, dk, false);
            let kt = head_slice(k, width, h * dk, dk, true);
            let ph = &mut p[h * rows * rows..(h + 1) * rows * rows];
            matmul_rows(&qh, &kt, None, ph, dk, rows);
            for row in ph.chunks_mut(rows) {
                let mut top = f32::NEG_INFINITY;
                for v in row.iter_mut() {
                    *v /= scale;
                    top = top.max(*v);
                }
                let mut sum = 0f64;
                for v in row.iter_mut() {
                    *v = (*v - top).exp();
                    sum += f64::from(*v);
                }
                let inv = (1.0 / sum) as f32;
                row.iter_mut().for_each(|v| *v *= inv);
            }
        }
    }

    /// The heads' outputs `o[i, h·dk + t] = Σ_j p[h][i][j] · v[j, h·dk + t]` (`j` ascending).
    pub fn attention_apply(
        p: &[f32],
        v: &[f32],
        rows: usize,
        width: usize,
        heads: usize,
        o: &mut [f32],
    ) {
        let dk = width / heads;
        let mut oh = vec![0f32; rows * dk];
        for h in 0..heads {
            let vh = head_slice(v, width, h * dk, dk, false);
            matmul_rows(
                &p[h * rows * rows..(h + 1) * rows * rows],
                &vh,
                None,
                &mut oh,
                rows,
                dk,
            );
            for r in 0..rows {
                o[r * width + h * dk..r * width + (h + 1) * dk]
                    .copy_from_slice(&oh[r * dk..(r + 1) * dk]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net() -> NeuralNet {
        let mut h = Dense::zeros(3, 4);
        for (k, w) in h.weights.iter_mut().enumerate() {
            *w = (k as f32 * 0.37).sin();
        }
        h.bias = vec![0.1, -0.2, 0.0, 0.3];
        let mut o = Dense::zeros(4, 1);
        o.weights = vec![1.0, -0.5, 0.25, 2.0];
        o.bias = vec![0.05];
        NeuralNet {
            n_features: 3,
            input_norm: None,
            hidden: vec![HiddenLayer {
                dense: h,
                norm: Some(LayerNorm::new(4)),
            }],
            activation: Activation::Relu,
            output: o,
            encoder: None,
        }
    }

    /// The kernels against a plain f64 evaluation of the same network.
    #[test]
    fn scores_match_a_direct_evaluation() {
        let n = net();
        assert_eq!(n.inconsistency(), None);
        let x: Vec<f32> = (0..21).map(|k| ((k * 7 % 11) as f32 - 5.0) / 3.0).collect();
        let mut out = vec![0f32; 7];
        n.score_matrix(&x, &mut out);
        for r in 0..7 {
            let h: Vec<f64> = (0..4)
                .map(|j| {
                    f64::from(n.hidden[0].dense.bias[j])
                        + (0..3)
                            .map(|k| f64::from(x[r * 3 + k] * n.hidden[0].dense.weights[k * 4 + j]))
                            .sum::<f64>()
                })
                .collect();
            let mean = h.iter().sum::<f64>() / 4.0;
            let var = h.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 4.0;
            let s: f64 = h
                .iter()
                .enumerate()
                .map(|(j, v)| {
                    ((v - mean) / (var + LAYER_NORM_EPS).sqrt()).max(0.0)
                        * f64::from(n.output.weights[j])
                })
                .sum::<f64>()
                + 0.05;
            assert!((s - f64::from(out[r])).abs() < 1e-5, "{s} vs {}", out[r]);
        }
    }

    #[test]
    fn inconsistent_networks_are_named() {
        let mut n = net();
        n.output.weights.pop();
        assert!(n.inconsistency().unwrap().contains("output layer"));
        let mut n = net();
        n.hidden[0].dense.bias[0] = f32::NAN;
        assert!(n.inconsistency().unwrap().contains("non-finite"));
    }
}
