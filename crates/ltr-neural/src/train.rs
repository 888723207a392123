//! [`NeuralParams`]: the settings of a neural ranker and its training loop — batches of whole queries (a query
//! longer than the slate cap is sampled down to it, as allRank's `FixLength` does), Adam or AdamW with a
//! per-epoch learning-rate schedule, dropout, the epoch kept by the validation measure and early stopping.
//!
//! Determinism: the initial weights, the query order of each epoch, each slate's sample, each dropout mask and
//! ListMLE's tie order come from ChaCha8 streams keyed by the seed and the epoch, batch, query or chunk they are
//! for; every sum over documents runs in a fixed order ([`crate::net`]). So the same seed gives the same model bit
//! for bit at any thread count.

use ltr_core::neural::{
    row_into, Activation, BatchNorm, Dense, Encoder, EncoderBlock, HiddenLayer, LayerNorm,
    NeuralNet,
};
use ltr_core::{BestSoFar, Fit, FitContext, FitReport, Fitted, LtrError, Model, Result};
use ltr_data::{ClickWeighting, Dataset};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dla::{propensities_of_logits, DlaState, NeuralDla};
use crate::losses::Loss;
use crate::net::{update_running_stats, Dropout};
use crate::optim::{Adam, Optimizer, Schedule};
use crate::step::{step, Batch, Passes};

/// Settings of a neural ranker.
#[derive(Debug, Clone, PartialEq)]
pub struct NeuralParams {
    sizes: Vec<usize>,
    activation: Activation,
    dropout: f64,
    layer_norm: bool,
    batch_norm: bool,
    input_norm: bool,
    loss: Loss,
    optimizer: Optimizer,
    lr: f64,
    weight_decay: f64,
    schedule: Schedule,
    warmup: usize,
    epochs: usize,
    batch_size: usize,
    slate_length: usize,
    patience: usize,
    blocks: usize,
    heads: usize,
    d_ff: usize,
    encoder_dropout: f64,
    /// `None`: `piece-rows=auto` ([`NeuralValidParams::piece_rows_for`]).
    piece_rows: Option<usize>,
    /// `None`: `memory=auto` ([`NeuralValidParams::lean_for`]); `Some(true)`: lean.
    lean: Option<bool>,
    clicks: Option<ClickWeighting>,
    dla: Option<NeuralDla>,
    doubly_robust: bool,
}

impl Default for NeuralParams {
    fn default() -> Self {
        Self {
            sizes: vec![256, 128],
            activation: Activation::Relu,
            dropout: 0.0,
            layer_norm: false,
            batch_norm: false,
            input_norm: false,
            loss: Loss::parse("ndcgloss2pp").expect("a loss"),
            optimizer: Optimizer::Adam,
            lr: 1e-3,
            weight_decay: 0.0,
            schedule: Schedule::Constant,
            warmup: 0,
            epochs: 100,
            batch_size: 64,
            slate_length: 240,
            patience: 20,
            blocks: 0,
            heads: 4,
            d_ff: 512,
            encoder_dropout: 0.0,
            piece_rows: None,
            lean: None,
            clicks: None,
            dla: None,
            doubly_robust: false,
        }
    }
}

/// Setters (builder style); [`ltr_core::ParamGuard::check`] verifies the combination.
impl NeuralParams {
    /// Widths of the hidden layers, input side first (`[256, 128]`; empty: the linear model with a bias).
    pub fn sizes(mut self, sizes: Vec<usize>) -> Self {
        self.sizes = sizes;
        self
    }
    /// The activation after each hidden layer (ReLU).
    pub fn activation(mut self, a: Activation) -> Self {
        self.activation = a;
        self
    }
    /// Dropout probability after each hidden layer during training (0).
    pub fn dropout(mut self, p: f64) -> Self {
        self.dropout = p;
        self
    }
    /// Layer normalisation of each hidden layer before its activation (off).
    pub fn layer_norm(mut self, on: bool) -> Self {
        self.layer_norm = on;
        self
    }
    /// Batch normalisation of each hidden layer before its activation (off): batch statistics in training, the
    /// running statistics stored in the model at inference.
    pub fn batch_norm(mut self, on: bool) -> Self {
        self.batch_norm = on;
        self
    }
    /// Layer normalisation of the input features (allRank's `input_norm`; off).
    pub fn input_norm(mut self, on: bool) -> Self {
        self.input_norm = on;
        self
    }
    /// The loss (LambdaLoss, NDCG-Loss2++).
    pub fn loss(mut self, loss: Loss) -> Self {
        self.loss = loss;
        self
    }
    /// Adam or AdamW (Adam).
    pub fn optimizer(mut self, o: Optimizer) -> Self {
        self.optimizer = o;
        self
    }
    /// Learning rate (0.001).
    pub fn lr(mut self, lr: f64) -> Self {
        self.lr = lr;
        self
    }
    /// Weight decay (0).
    pub fn weight_decay(mut self, wd: f64) -> Self {
        self.weight_decay = wd;
        self
    }
    /// Learning-rate schedule (constant).
    pub fn schedule(mut self, s: Schedule) -> Self {
        self.schedule = s;
        self
    }
    /// Epochs of linear warm-up (0).
    pub fn warmup(mut self, epochs: usize) -> Self {
        self.warmup = epochs;
        self
    }
    /// Epochs at most (100).
    pub fn epochs(mut self, epochs: usize) -> Self {
        self.epochs = epochs;
        self
    }
    /// Queries per batch (64).
    pub fn batch_size(mut self, queries: usize) -> Self {
        self.batch_size = queries;
        self
    }
    /// Documents of a query per batch at most; a longer query is sampled down to it each epoch (240).
    pub fn slate_length(mut self, docs: usize) -> Self {
        self.slate_length = docs;
        self
    }
    /// Stop after this many epochs without a better validation measure (20).
    pub fn patience(mut self, epochs: usize) -> Self {
        self.patience = epochs;
        self
    }
    /// Self-attention encoder blocks after the hidden layers (allRank's transformer `N`; 0: none, the MLP).
    pub fn blocks(mut self, n: usize) -> Self {
        self.blocks = n;
        self
    }
    /// Attention heads of each encoder block (4); they divide the last hidden width.
    pub fn heads(mut self, h: usize) -> Self {
        self.heads = h;
        self
    }
    /// Width of each encoder block's feed-forward layer (allRank's `d_ff`; 512).
    pub fn d_ff(mut self, width: usize) -> Self {
        self.d_ff = width;
        self
    }
    /// Dropout inside the encoder during training (allRank's transformer `dropout`; 0): on the attention weights,
    /// both residual branches and the feed-forward layer.
    pub fn encoder_dropout(mut self, p: f64) -> Self {
        self.encoder_dropout = p;
        self
    }
    /// Documents a training step takes through its passes at once: consecutive whole queries up to this many, a
    /// longer query alone (`step.rs`). The activations held at once are a piece's, so fewer documents a piece hold
    /// less memory, at some CPU (BENCHMARKS.md, "The MLP's piece at the default"). A batch split into more pieces
    /// sums its gradient in another order (equal to rounding) and draws its dropout masks by other chunks, so the
    /// model differs; for a given value it is one model at any thread count. Unset: [`Self::auto_piece_rows`].
    pub fn piece_rows(mut self, docs: usize) -> Self {
        self.piece_rows = Some(docs);
        self
    }
    /// The piece chosen from the data and the network ([`NeuralValidParams::piece_rows_for`]): the default.
    pub fn auto_piece_rows(mut self) -> Self {
        self.piece_rows = None;
        self
    }
    /// How an attention network without batch norm (which goes query by query) trades time for memory; the model
    /// is the same bit for bit either way. `true` (lean): a step whose queries hold a mean of at least 64
    /// documents keeps no transposed weights of the encoder but its first feed-forward layers' (`dx` from `W`
    /// itself), and a worker that finishes a group before the group ahead of it is added waits rather than
    /// parking its gradient and going on: 2.1 MB and one gradient (3.2 MB) less for allRank's attention
    /// configuration, at about 6% more CPU and 11% more wall at 2 threads (BENCHMARKS.md, "The attention
    /// network's memory"). `false` (speed): every transpose kept, one group parked. Unset: [`Self::auto_memory`].
    pub fn lean(mut self, lean: bool) -> Self {
        self.lean = Some(lean);
        self
    }
    /// Lean where the memory bound is within reach ([`NeuralValidParams::lean_for`]): the default.
    pub fn auto_memory(mut self) -> Self {
        self.lean = None;
        self
    }
    /// Weigh the queries of a click training set (one query per click, [`Dataset::click_weights`]; `None`: every
    /// query counts once). Each query's loss and gradient are multiplied by its weight, the weights scaled to a
    /// mean of 1 over the training set: a batch's loss is then an unbiased estimate of the weighted loss over all
    /// queries (with inverse-propensity weights, ULTRA's IPW with the listwise losses), and the loss keeps its
    /// scale.
    pub fn clicks(mut self, weighting: Option<ClickWeighting>) -> Self {
        self.clicks = weighting;
        self
    }
    /// Learn from click sessions with positions by the Dual Learning Algorithm (Ai et al., SIGIR 2018; `None`:
    /// off): a propensity per position and the network learned together. Each epoch trains the network on DLA's
    /// softmax loss, each session's clicks weighted by the inverse propensities of their positions
    /// (`loss=listnet-binary` over the weighted clicks, each session weighted by their sum); then the propensity
    /// tower takes its steps against the clicks weighted by the network's inverse relevance
    /// (`ltr_listwise::dla`, the linear DLA's tower). The first epoch's propensities are all 1 (the naive model).
    pub fn dla(mut self, dla: Option<NeuralDla>) -> Self {
        self.dla = dla;
        self
    }
    /// Learn from the doubly robust set of a click log (`ltr_clicks::doubly_robust_set`: labels that are relevance
    /// estimates, query weights that are sessions; Oosterhuis, TOIS 2023). The loss must be `listnet-binary` (the
    /// softmax cross-entropy against labels over their sum); each query is weighted by its sessions times that sum
    /// ([`Dataset::label_sum_weights`], scaled to a mean of 1), so that the loss, Σ_q sessions_q Σ_i ŷ_i (−log
    /// P_s(i)), is linear in the estimates ŷ, as an unbiased estimator needs. Not with `clicks` or `dla`.
    pub fn doubly_robust(mut self, doubly_robust: bool) -> Self {
        self.doubly_robust = doubly_robust;
        self
    }
}

impl NeuralParams {
    /// Check the settings.
    pub fn validate(&self) -> Result<()> {
        if !(self.lr > 0.0 && self.lr.is_finite()) {
            return Err(LtrError::param(
                "lr",
                format!("the learning rate must be > 0 and finite, not {}", self.lr),
            ));
        }
        if self.slate_length == 0 {
            return Err(LtrError::param(
                "slate-length",
                "a slate cap of 0 leaves no document to train on; give at least 1",
            ));
        }
        if self.lean == Some(true) && (self.blocks == 0 || self.batch_norm) {
            return Err(LtrError::param(
                "memory",
                "memory=lean changes how an attention network without batch norm goes query by query; this network \
                 has no encoder or uses batch norm, so nothing would change: give memory=auto or speed, or set \
                 piece-rows to trade time for memory",
            ));
        }
        if self.piece_rows == Some(0) {
            return Err(LtrError::param(
                "piece-rows",
                "a piece of 0 documents holds no query; give at least 1 (a longer query is a piece alone)",
            ));
        }
        if self.dla.is_some() && self.loss != Loss::ListNetBinary {
            return Err(LtrError::param(
                "loss",
                format!(
                    "debias=dla trains the network on DLA's softmax loss over inverse-propensity weighted clicks, \
                     which is listnet-binary, not {:?}",
                    self.loss
                ),
            ));
        }
        if self.doubly_robust && self.loss != Loss::ListNetBinary {
            return Err(LtrError::param(
                "loss",
                format!(
                    "debias=dr trains the network on the softmax cross-entropy against the relevance estimates over \
                     their sum, each query weighted by that sum (linear in the estimates), which is listnet-binary, \
                     not {:?}",
                    self.loss
                ),
            ));
        }
        if self.doubly_robust && (self.clicks.is_some() || self.dla.is_some()) {
            return Err(LtrError::param(
                "debias",
                "debias=dr learns from the doubly robust set, whose labels are already corrected for position: \
                 neither click weighting nor DLA applies",
            ));
        }
        if self.dla.is_some() && self.clicks.is_some() {
            return Err(LtrError::param(
                "debias",
                "debias=dla learns the propensities from click sessions; the weighting of a set of one query per \
                 click does not apply",
            ));
        }
        if self.epochs == 0 || self.batch_size == 0 || self.patience == 0 {
            return Err(LtrError::param(
                "epochs/batch-size/patience",
                "need epochs, batch-size and patience >= 1",
            ));
        }
        if self.layer_norm && self.batch_norm {
            return Err(LtrError::param(
                "layer-norm/batch-norm",
                "a hidden layer takes layer norm or batch norm, not both",
            ));
        }
        if self.sizes.contains(&0) {
            return Err(LtrError::param("sizes", "a hidden layer of width 0"));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(LtrError::param("dropout", "need 0 <= dropout < 1"));
        }
        if !(0.0..1.0).contains(&self.encoder_dropout) {
            return Err(LtrError::param(
                "attention-dropout",
                "need 0 <= attention-dropout < 1",
            ));
        }
        if self.blocks > 0 {
            let width = self.sizes.last().copied();
            if self.heads == 0 || self.d_ff == 0 {
                return Err(LtrError::param(
                    "heads/d-ff",
                    "an encoder needs heads >= 1 and d-ff >= 1",
                ));
            }
            if let Some(w) = width.filter(|w| !w.is_multiple_of(self.heads)) {
                return Err(LtrError::param(
                    "heads",
                    format!(
                        "{} attention heads do not divide the encoder's width {w} (the last of sizes)",
                        self.heads
                    ),
                ));
            }
        }
        if !(self.weight_decay >= 0.0 && self.weight_decay.is_finite()) {
            return Err(LtrError::param("weight-decay", "need weight-decay >= 0"));
        }
        if let Schedule::Step { step, gamma } = self.schedule {
            if step == 0 || !(gamma > 0.0 && gamma.is_finite()) {
                return Err(LtrError::param(
                    "step-size/gamma",
                    "need step-size >= 1 and gamma > 0",
                ));
            }
        }
        let positive = |v: f64| v > 0.0 && v.is_finite();
        let ok = match self.loss {
            Loss::LambdaLoss { k, sigma, mu, .. } => k != Some(0) && positive(sigma) && mu >= 0.0,
            Loss::ApproxNdcg { alpha } => positive(alpha),
            Loss::NeuralNdcg { temperature, k } => positive(temperature) && k != Some(0),
            Loss::Rmse { levels } => positive(levels),
            _ => true,
        };
        if !ok {
            return Err(LtrError::param(
                "loss",
                "need k >= 1 and sigma, alpha, temperature, levels > 0, mu >= 0",
            ));
        }
        Ok(())
    }
}

ltr_core::param_guard!(NeuralParams => NeuralValidParams);

impl NeuralParams {
    /// `piece-rows` as given (`None`: auto).
    pub(crate) fn given_lean(&self) -> Option<bool> {
        self.lean
    }

    pub(crate) fn given_piece_rows(&self) -> Option<usize> {
        self.piece_rows
    }

    /// What the memory estimate reads (`memory.rs`).
    pub(crate) fn shape(&self) -> crate::memory::Shape {
        crate::memory::Shape {
            sizes: self.sizes.clone(),
            dropout: self.dropout > 0.0,
            norm: self.layer_norm || self.batch_norm,
            input_norm: self.input_norm,
            batch_size: self.batch_size,
            slate_length: self.slate_length,
            blocks: self.blocks,
            heads: self.heads,
            d_ff: self.d_ff,
            encoder_dropout: self.blocks > 0 && self.encoder_dropout > 0.0,
            dla: self.dla.is_some(),
            targets_held: self.dla.is_some() || matches!(self.loss, Loss::Bce),
            batch_norm: self.batch_norm,
            threads: rayon::current_num_threads(),
        }
    }
}

/// A 64-bit key from a seed and parts (SplitMix64 steps): one independent random stream per use.
pub(crate) fn key(seed: u64, parts: &[u64]) -> u64 {
    let mut h = seed ^ 0x6A09_E667_F3BC_C909;
    for &p in parts {
        h = h.wrapping_add(p).wrapping_add(0x9E37_79B9_7F4A_7C15);
        h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 31;
    }
    h
}

/// Glorot/Xavier-uniform weights (allRank's initialisation) and PyTorch's default biases
/// `U(−1/√fan_in, 1/√fan_in)`.
fn init_dense(inputs: usize, outputs: usize, rng: &mut ChaCha8Rng) -> Dense {
    let a = (6.0 / (inputs + outputs) as f64).sqrt() as f32;
    let b = 1.0 / (inputs as f32).sqrt();
    Dense {
        inputs,
        outputs,
        weights: (0..inputs * outputs)
            .map(|_| rng.random_range(-a..a))
            .collect(),
        bias: (0..outputs).map(|_| rng.random_range(-b..b)).collect(),
    }
}

impl NeuralParams {
    /// The initial network for `d` features.
    // pub for the tests in tests/unit/step.rs; not API.
    #[doc(hidden)]
    pub fn init(&self, d: usize, seed: u64) -> NeuralNet {
        let mut rng = ChaCha8Rng::seed_from_u64(key(seed, &[0]));
        let mut width = d;
        let hidden = self
            .sizes
            .iter()
            .map(|&w| {
                let dense = init_dense(width, w, &mut rng);
                width = w;
                HiddenLayer {
                    dense,
                    norm: self.layer_norm.then(|| LayerNorm::new(w)),
                    batch_norm: self.batch_norm.then(|| BatchNorm::new(w)),
                }
            })
            .collect();
        let output = init_dense(width, 1, &mut rng);
        // The encoder from its own stream, so an MLP's initial weights do not depend on it.
        let mut rng = ChaCha8Rng::seed_from_u64(key(seed, &[5]));
        let encoder = (self.blocks > 0).then(|| Encoder {
            heads: self.heads,
            blocks: (0..self.blocks)
                .map(|_| EncoderBlock {
                    attn_norm: LayerNorm::new(width),
                    query: init_dense(width, width, &mut rng),
                    key: init_dense(width, width, &mut rng),
                    value: init_dense(width, width, &mut rng),
                    out: init_dense(width, width, &mut rng),
                    ff_norm: LayerNorm::new(width),
                    ff_in: init_dense(width, self.d_ff, &mut rng),
                    ff_out: init_dense(self.d_ff, width, &mut rng),
                })
                .collect(),
            norm: LayerNorm::new(width),
        });
        NeuralNet {
            n_features: d,
            input_norm: self.input_norm.then(|| LayerNorm::new(d)),
            hidden,
            activation: self.activation,
            output,
            encoder,
        }
    }
}

/// The training data as the loop reads it: the features where they lie (a step gathers a piece's rows as it
/// goes), labels as the loss takes them. The grades themselves are read from the data (`f64::from` of an f32 is
/// exact, so a batch's labels are those of a copy); only targets that differ from them — BCE's scaled grades, DLA's
/// epoch targets — are held, as `targets`, so that training does not keep a second copy of every label (1 MB for
/// 133,000 documents: "The attention network's memory", BENCHMARKS.md).
struct Slates<'a> {
    d: usize,
    data: &'a Dataset,
    targets: Option<Vec<f64>>,
    offsets: &'a [usize],
}

impl<'a> Slates<'a> {
    /// `held`: keep a copy of the targets even when they are the grades (DLA rewrites them every epoch).
    fn new(data: &'a Dataset, loss: Loss, held: bool) -> Self {
        let top = data.labels().iter().fold(0f32, |m, &l| m.max(l));
        let scaled = matches!(loss, Loss::Bce) && top > 0.0;
        let targets = (scaled || held).then(|| {
            data.labels()
                .iter()
                .map(|&l| {
                    if scaled {
                        // BCE's targets: grades scaled to [0, 1] by the largest.
                        f64::from(l) / f64::from(top)
                    } else {
                        f64::from(l)
                    }
                })
                .collect()
        });
        Self {
            d: data.n_features(),
            data,
            targets,
            offsets: data.query_offsets(),
        }
    }

    /// Row `r`'s target.
    fn label(&self, r: usize) -> f64 {
        match &self.targets {
            Some(t) => t[r],
            None => f64::from(self.data.labels()[r]),
        }
    }
}

/// Check that the data can give the loss something to learn.
fn check_data(train: &Dataset, loss: Loss) -> Result<()> {
    if let Some((row, column)) = train.first_nan() {
        return Err(LtrError::Training(format!(
            "training data: row {row}, column {column} (feature {}) is NaN: a neural network takes no missing values \
             (impute them, or train a tree model, to which NaN is a missing value)",
            column + 1
        )));
    }
    if train.n_features() == 0 || train.n_docs() == 0 {
        return Err(LtrError::Training(
            "the training data has no features or no documents".into(),
        ));
    }
    let labels = train.labels();
    let mixed = (0..train.n_queries()).any(|q| {
        let l = &labels[train.query_range(q)];
        l.iter().any(|&v| v != l[0])
    });
    if loss.is_ranking() && !mixed {
        return Err(LtrError::Training(format!(
            "every query's documents share one grade: the ranking loss `{loss:?}` is 0 for any scores, so there is \
             nothing to learn (give queries with at least two grades, or a pointwise loss)"
        )));
    }
    if !loss.is_ranking() && labels.iter().all(|&v| v == labels[0]) {
        return Err(LtrError::Training(
            "every document has the same grade: there is nothing to learn".into(),
        ));
    }
    if matches!(loss, Loss::Bce) && labels.iter().any(|&v| v < 0.0) {
        return Err(LtrError::Training("bce needs grades >= 0".into()));
    }
    Ok(())
}

/// One batch's rows: for each query, its documents (all, or a sample of `cap`).
fn batch_rows(
    s: &Slates<'_>,
    queries: &[usize],
    cap: usize,
    seed: u64,
    epoch: usize,
) -> (Vec<usize>, Vec<usize>) {
    let mut rows = Vec::new();
    let mut offsets = vec![0];
    for &q in queries {
        let (a, b) = (s.offsets[q], s.offsets[q + 1]);
        if b - a <= cap {
            rows.extend(a..b);
        } else {
            // allRank's FixLength: a random subset; when it holds no relevant document but the query has some, draw
            // again (a query with one relevant document keeps it).
            let mut rng = ChaCha8Rng::seed_from_u64(key(seed, &[1, epoch as u64, q as u64]));
            let all: Vec<usize> = (a..b).collect();
            let relevant: Vec<usize> = all.iter().copied().filter(|&r| s.label(r) > 0.0).collect();
            let mut pick: Vec<usize> = all.choose_multiple(&mut rng, cap).copied().collect();
            if !relevant.is_empty() && pick.iter().all(|&r| s.label(r) <= 0.0) {
                if relevant.len() == 1 {
                    pick.pop();
                    pick.push(relevant[0]);
                } else {
                    for _ in 0..100 {
                        pick = all.choose_multiple(&mut rng, cap).copied().collect();
                        if pick.iter().any(|&r| s.label(r) > 0.0) {
                            break;
                        }
                    }
                }
            }
            rows.extend(pick);
        }
        offsets.push(rows.len());
    }
    (rows, offsets)
}

impl Fit for NeuralValidParams {
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        self.validate()?;
        check_data(train, self.loss)?;
        if let Some((row, column)) = ctx.validation().and_then(Dataset::first_nan) {
            return Err(LtrError::Training(format!(
                "validation data: row {row}, column {column} (feature {}) is NaN: a neural network takes no missing values",
                column + 1
            )));
        }
        let seed = ctx.seed();
        let mut slates = Slates::new(train, self.loss, self.dla.is_some());
        // DLA's sessions and propensity tower.
        let mut dla = match self.dla {
            Some(settings) => Some(DlaState::new(train, ctx, settings)?),
            None => None,
        };
        // A click training set's query weights, scaled to a mean of 1 (under DLA, each epoch's).
        let mut weights = match self.clicks {
            None if self.doubly_robust => Some(train.label_sum_weights()?),
            Some(c) => Some(train.click_weights(c).ok_or_else(|| {
                LtrError::Training(
                    "click weighting needs a click training set (`ltr train --clicks LOG`)".into(),
                )
            })?),
            None => None,
        }
        .map(|w| {
            let n = w.len() as f64;
            w.into_iter().map(|v| v * n).collect::<Vec<f64>>()
        });
        let d = slates.d;
        let piece_rows = self.piece_rows_for(train);
        let passes = if self.lean_for(train) {
            Passes::Lean
        } else {
            Passes::Fewest
        };
        if self.blocks > 0 && self.sizes.is_empty() && !d.is_multiple_of(self.heads) {
            return Err(LtrError::param(
                "heads",
                format!(
                    "{} attention heads do not divide the encoder's width, the {d} features (no hidden layer)",
                    self.heads
                ),
            ));
        }
        let mut net = self.init(d, seed);
        let mut adam = Adam::new(self.optimizer, &net, self.weight_decay);
        let mut best = BestSoFar::new();
        let mut curve = Vec::new();
        let mut losses = Vec::new();
        let mut since_best = 0;
        let nq = train.n_queries();
        let features = |r: usize, out: &mut [f32]| row_into(train.row(r), out);
        // Gradients whose memory the steps reuse (zeroed again rather than allocated and faulted in).
        let mut spare = Vec::new();
        ctx.progress().begin("epochs", Some(self.epochs as u64));
        for epoch in 0..self.epochs {
            let lr = self.schedule.rate(self.lr, epoch, self.epochs, self.warmup);
            // Under DLA the epoch's click weights, and the sessions with a click (the others add nothing).
            let clicked = dla.as_ref().map(|state| {
                let (w, clicked) = state.epoch_targets(
                    train,
                    slates.targets.as_mut().expect("DLA's targets are held"),
                );
                weights = Some(w);
                clicked
            });
            let mut order: Vec<usize> = clicked.unwrap_or_else(|| (0..nq).collect());
            order.shuffle(&mut ChaCha8Rng::seed_from_u64(key(
                seed,
                &[2, epoch as u64],
            )));
            let mut epoch_loss = 0.0;
            for (b, batch) in order.chunks(self.batch_size).enumerate() {
                let (rows, offsets) = batch_rows(&slates, batch, self.slate_length, seed, epoch);
                let labels: Vec<f64> = rows.iter().map(|&r| slates.label(r)).collect();
                let dropout = (self.dropout > 0.0
                    || (self.blocks > 0 && self.encoder_dropout > 0.0))
                    .then(|| Dropout {
                        p: self.dropout as f32,
                        encoder: self.encoder_dropout as f32,
                        seed: key(seed, &[3, epoch as u64, b as u64]),
                    });
                let tie_seeds: Vec<u64> = batch
                    .iter()
                    .map(|&q| key(seed, &[4, epoch as u64, q as u64]))
                    .collect();
                let query_weights: Option<Vec<f64>> = weights
                    .as_ref()
                    .map(|w| batch.iter().map(|&q| w[q]).collect());
                let b = Batch {
                    rows: &rows,
                    offsets: &offsets,
                    labels: &labels,
                    tie_seeds: &tie_seeds,
                    weights: query_weights.as_deref(),
                };
                let mut s = step(
                    &net, &features, &b, self.loss, dropout, piece_rows, false, &mut spare, passes,
                );
                epoch_loss += s.value * batch.len() as f64;
                adam.step(&mut net, &mut s.grad, lr);
                update_running_stats(&mut net, &s.batch);
                // The step's gradient, spent, is a spare for the next step's groups.
                spare.push(s.grad);
            }
            let epoch_loss = epoch_loss / order.len().max(1) as f64;
            if let Some(state) = dla.as_mut() {
                state.after_epoch(&net, train)?;
            }
            if !epoch_loss.is_finite() {
                return Err(LtrError::Training(format!(
                    "the training loss became {epoch_loss} in epoch {}: lower the learning rate (lr={})",
                    epoch + 1,
                    self.lr
                )));
            }
            losses.push(epoch_loss);
            let v = ctx.validate(&net)?;
            curve.push(v.unwrap_or(f64::NAN));
            // Without validation data the last epoch is kept (the loss is not comparable across a schedule).
            let improved = match v {
                Some(v) => best.offer(
                    v,
                    (
                        epoch + 1,
                        net.clone(),
                        epoch_loss,
                        dla.as_ref().map(DlaState::logits),
                    ),
                ),
                None => true,
            };
            since_best = if improved { 0 } else { since_best + 1 };
            ctx.progress().advance(
                epoch as u64 + 1,
                &format!(
                    "loss {epoch_loss:.5}{}",
                    v.map(|v| format!(", validation {v:.4}"))
                        .unwrap_or_default()
                ),
            );
            if since_best >= self.patience {
                break;
            }
        }
        ctx.progress().end();
        let epochs_run = losses.len();
        let (epochs_kept, model, loss, logits, validation) = match best.into_best() {
            Some(b) => (b.item.0, b.item.1, b.item.2, b.item.3, Some(b.score)),
            None => (
                epochs_run,
                net,
                *losses.last().unwrap_or(&f64::NAN),
                dla.as_ref().map(DlaState::logits),
                None,
            ),
        };
        let report = FitReport {
            iterations: Some(epochs_run as u64),
            objective: loss.is_finite().then_some(loss),
            validation,
            ..FitReport::default()
        }
        .select("epochs", epochs_kept);
        // The piece `auto` chose: the model's bits depend on it.
        let report = if self.given_piece_rows().is_none() {
            report.select("piece-rows", piece_rows)
        } else {
            report
        };
        // And the memory mode auto chose for a network that goes query by query (the same bits either way).
        let report = if self.given_lean().is_none() && self.blocks > 0 && !self.batch_norm {
            report.select(
                "memory",
                if passes == Passes::Lean {
                    "lean"
                } else {
                    "speed"
                },
            )
        } else {
            report
        };
        let mut diagnostics = serde_json::json!({
            "training_loss": losses,
            "validation_curve": curve,
        });
        if let Some(phi) = logits {
            diagnostics["position_bias"] =
                serde_json::json!({ "propensities": propensities_of_logits(&phi) });
        }
        Ok(Fitted::new(Model::Neural(model))
            .with_report(report)
            .with_diagnostics(diagnostics))
    }
}
