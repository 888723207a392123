//! Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019, decoupled weight decay), as PyTorch's `Adam` and
//! `AdamW` compute them, and the learning-rate schedules, applied per epoch as allRank's `lr_scheduler` is.

use ltr_core::neural::NeuralNet;

use crate::net::{parameters_mut, zeros_like};

/// The optimiser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Optimizer {
    /// Adam; weight decay is added to the gradient (an L2 penalty), as `torch.optim.Adam`'s `weight_decay`.
    Adam,
    /// AdamW: weight decay shrinks the weights directly, `w ← w − lr·λ·w`, as `torch.optim.AdamW`.
    AdamW,
}

/// The learning rate of each epoch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Schedule {
    /// The same rate every epoch.
    Constant,
    /// `lr · γ^⌊epoch / step⌋` (PyTorch's `StepLR`, allRank's published configurations: step 50, γ 0.1).
    Step {
        /// Epochs between decays.
        step: usize,
        /// Factor of each decay.
        gamma: f64,
    },
    /// Cosine annealing from `lr` to 0 over the run (PyTorch's `CosineAnnealingLR` with `T_max` = epochs).
    Cosine,
}

impl Schedule {
    /// The rate of 0-based `epoch` of `epochs`, after `warmup` epochs rising linearly to `lr`.
    pub fn rate(&self, lr: f64, epoch: usize, epochs: usize, warmup: usize) -> f64 {
        if epoch < warmup {
            return lr * (epoch + 1) as f64 / (warmup + 1) as f64;
        }
        match *self {
            Schedule::Constant => lr,
            Schedule::Step { step, gamma } => lr * gamma.powi((epoch / step.max(1)) as i32),
            Schedule::Cosine => {
                let t = (epoch - warmup) as f64 / (epochs - warmup).max(1) as f64;
                lr * 0.5 * (1.0 + (std::f64::consts::PI * t).cos())
            }
        }
    }
}

/// Adam's moments and step count.
#[derive(Debug)]
pub(crate) struct Adam {
    kind: Optimizer,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    m: NeuralNet,
    v: NeuralNet,
    t: i32,
}

impl Adam {
    pub(crate) fn new(kind: Optimizer, net: &NeuralNet, weight_decay: f64) -> Self {
        Self {
            kind,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: weight_decay as f32,
            m: zeros_like(net),
            v: zeros_like(net),
            t: 0,
        }
    }

    /// One step of size `lr` along `grad`.
    pub(crate) fn step(&mut self, net: &mut NeuralNet, grad: &mut NeuralNet, lr: f64) {
        self.t += 1;
        let lr = lr as f32;
        let (b1, b2) = (self.beta1, self.beta2);
        let bc1 = 1.0 - b1.powi(self.t);
        let bc2 = 1.0 - b2.powi(self.t);
        let wd = self.weight_decay;
        let kind = self.kind;
        for (((w, g), m), v) in parameters_mut(net)
            .into_iter()
            .zip(parameters_mut(grad))
            .zip(parameters_mut(&mut self.m))
            .zip(parameters_mut(&mut self.v))
        {
            for j in 0..w.len() {
                let mut gj = g[j];
                match kind {
                    Optimizer::Adam => gj += wd * w[j],
                    Optimizer::AdamW => w[j] -= lr * wd * w[j],
                }
                m[j] = b1 * m[j] + (1.0 - b1) * gj;
                v[j] = b2 * v[j] + (1.0 - b2) * gj * gj;
                let denom = (v[j] / bc2).sqrt() + self.eps;
                w[j] -= lr * (m[j] / bc1) / denom;
            }
        }
    }
}
