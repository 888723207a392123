//! The memory a training run needs, estimated before it starts from the settings and the query lengths: the
//! targets the loop holds where they are not the grades (the features, grades and offsets are read where they lie),
//! the parameters with Adam's
//! moments, the best epoch's copy and the gradients, and a piece's activations (`step.rs`: a batch goes through the
//! passes `piece-rows` documents at a time, a batch-normalised one too; `auto`, the default, picks the piece from
//! this estimate: [`NeuralValidParams::piece_rows_for`]) —
//! per hidden layer `rows × width` values (the output, the activation, a dropout mask, a normalisation's x̂), per
//! encoder block the `n × width` projections and the `n × d_ff` feed-forward values of each query of `n` documents
//! (the encoder's dropout masks a bit an entry), and one head's `n²` attention weights at a time, which the backward
//! pass recomputes rather than keeps (a query of at most 64 documents keeps them). An encoder network without
//! batch norm goes query by query (`step.rs`): it holds the activations of the longest queries, one a thread, and
//! a group's gradient a thread and one more ([`crate::step::PARKED`]).

use ltr_data::Dataset;

use crate::net::{CHUNK, GROUP};
use crate::step::PIECE_ROWS;
use crate::NeuralValidParams;

/// The settings the estimate reads (`NeuralParams` hands them over).
pub(crate) struct Shape {
    pub sizes: Vec<usize>,
    pub dropout: bool,
    pub norm: bool,
    pub input_norm: bool,
    pub batch_size: usize,
    pub slate_length: usize,
    pub blocks: usize,
    pub heads: usize,
    pub d_ff: usize,
    pub encoder_dropout: bool,
    pub dla: bool,
    /// The loop holds its own f64 targets (BCE's scaled grades, DLA's epoch targets); else it reads the grades.
    pub targets_held: bool,
    /// Batch normalisation (an encoder network without it goes query by query).
    pub batch_norm: bool,
    /// Threads of the step: an encoder network without batch norm holds a query's activations and a group's
    /// gradient a thread.
    pub threads: usize,
}

/// A training run's memory beyond the data as read, in bytes, by part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeuralMemory {
    /// What the loop keeps of the training data beside it: nothing but targets that are not the grades — f64
    /// labels under BCE (scaled) or DLA (each epoch's) — (the features, grades and query offsets are read in
    /// place, a piece's rows gathered at a time); under DLA also each row's weighted clicks and the network's score
    /// of every row, which the propensity tower reads after each epoch.
    pub data_copy: u64,
    /// Parameters: the network, Adam's two moments, the best epoch's copy, the transposed weights of the backward
    /// pass (lean, of an encoder's only its first feed-forward layers when the largest batch's queries hold a mean
    /// of at least 64 documents: `encoder::Transposes`), the summed gradient and one partial gradient per group of
    /// 8 chunks of the largest piece (when an encoder network goes query by query, one a thread and, unless lean,
    /// one parked).
    pub parameters: u64,
    /// The largest piece's forward trace and backward working set (query by query: its longest queries', one a
    /// thread) — hidden layers; the encoder's projections, attention weights and feed-forward values — and the
    /// largest batch's row numbers and labels.
    pub activations: u64,
    /// Trained parameters of one network.
    pub n_parameters: u64,
    /// Documents of the largest batch (the `batch-size` longest queries, each capped at `slate-length`).
    pub batch_rows: u64,
    /// Documents of the largest piece: the batch's up to `piece-rows` (or its longest query).
    pub piece_rows: u64,
}

impl NeuralMemory {
    /// All parts together.
    pub fn total(&self) -> u64 {
        self.data_copy + self.parameters + self.activations
    }
}

/// The pieces `piece-rows=auto` tries, largest first.
const AUTO_PIECES: [usize; 4] = [PIECE_ROWS, 2048, 1024, 512];

impl NeuralValidParams {
    /// The memory training on `train` will take beyond the data as read, before it runs.
    pub fn memory_estimate(&self, train: &Dataset) -> NeuralMemory {
        self.estimate_at(train, self.piece_rows_for(train), self.lean_for(train))
    }

    /// Whether training on `train` goes lean ([`crate::NeuralParams::lean`]): as given, else (`memory=auto`, the
    /// default) for an attention network without batch norm (one that goes query by query) whose lean estimate
    /// keeps the process within 1.5 × (the data + the network and Adam's two moments) — the bound — and
    /// never where the bound is out of reach anyway (a network large beside its data, such as allRank's attention
    /// configuration on a LETOR fold), which keeps the faster way. The model is the same either way; the choice
    /// reads the data's numbers and the thread count (one gradient parked a step is per pool).
    pub fn lean_for(&self, train: &Dataset) -> bool {
        if let Some(lean) = self.given_lean() {
            return lean;
        }
        let s = self.shape();
        if s.blocks == 0 || s.batch_norm {
            return false;
        }
        let e = self.estimate_at(train, self.piece_rows_for(train), true);
        let data = data_bytes(train);
        2 * (data + e.total()) <= 3 * (data + 12 * e.n_parameters)
    }

    /// The documents a piece holds when training on `train`: `piece-rows` when it is given; else (`auto`, the
    /// default) 4,096, unless the network is feed-forward without batch norm and its estimate at that piece would
    /// take the process past 1.5 × (the data + the network and Adam's two moments) — the bound — while a
    /// smaller piece would not: then the largest of 2,048, 1,024 and 512 documents that keeps within it. Where even
    /// 512 does not (a network large beside its data, such as allRank's MLP on a LETOR fold, where the bound is out
    /// of reach), the piece stays 4,096, the fastest: smaller pieces cost 5–8% more CPU
    /// (BENCHMARKS.md, "`piece-rows=auto`"). Encoder networks (query by query) and batch-normalised ones (whose
    /// statistics over several pieces cost recomputed passes) keep 4,096. It depends on the data and the settings
    /// only (the data's features, labels and query offsets: not its ids or comments), never on the thread count.
    pub fn piece_rows_for(&self, train: &Dataset) -> usize {
        if let Some(rows) = self.given_piece_rows() {
            return rows;
        }
        let s = self.shape();
        if s.blocks > 0 || s.batch_norm {
            return PIECE_ROWS;
        }
        // The data's numbers only (features, labels, query offsets), not its ids or comments: a file with other
        // comments takes the same piece, so it trains the same model.
        let data = data_bytes(train);
        let fits = |rows: usize| {
            let e = self.estimate_at(train, rows, false);
            2 * (data + e.total()) <= 3 * (data + 12 * e.n_parameters)
        };
        AUTO_PIECES
            .into_iter()
            .find(|&rows| fits(rows))
            .unwrap_or(PIECE_ROWS)
    }

    /// [`Self::memory_estimate`] with pieces of at most `piece_rows` documents, lean or not.
    fn estimate_at(&self, train: &Dataset, piece_rows: usize, lean: bool) -> NeuralMemory {
        let s = self.shape();
        let (n, d, nq) = (
            train.n_docs() as u64,
            train.n_features() as u64,
            train.n_queries() as u64,
        );
        // The largest batch: the longest queries (capped), as many as a batch holds.
        let mut lengths: Vec<u64> = (0..train.n_queries())
            .map(|q| train.query_range(q).len().min(s.slate_length) as u64)
            .collect();
        lengths.sort_unstable_by(|a, b| b.cmp(a));
        lengths.truncate(s.batch_size);
        let batch_rows: u64 = lengths.iter().sum();
        // The largest piece: the longest queries while they fit (a piece holds whole queries).
        let limit = piece_rows as u64;
        let mut rows = 0;
        let mut piece = 0;
        for &l in &lengths {
            if piece > 0 && rows + l > limit {
                break;
            }
            rows += l;
            piece += 1;
        }
        lengths.truncate(piece);
        let (h, f, e) = (s.heads as u64, s.d_ff as u64, s.blocks as u64);
        let chunks = if e > 0 {
            lengths.len() as u64
        } else {
            rows.div_ceil(CHUNK as u64)
        };
        let mut groups = chunks.div_ceil(GROUP as u64).max(1);
        // What holds activations at once: the piece, or with an encoder and no batch norm (`step.rs`, query by
        // query) the longest queries, one a thread, and a group's gradient a thread and one parked.
        let mut held = lengths.clone();
        let by_query = e > 0 && !s.batch_norm;
        if by_query {
            let threads = s.threads.max(1) as u64;
            held.truncate(threads as usize);
            let parked = if lean { 0 } else { crate::step::PARKED as u64 };
            groups = groups.min(threads + parked);
        }
        let piece_rows = rows;
        let rows: u64 = held.iter().sum();
        let squares: u64 = held.iter().map(|n| n * n).sum();
        let longest = held.first().copied().unwrap_or(0);
        // Parameters.
        let mut widths = vec![d];
        widths.extend(s.sizes.iter().map(|&w| w as u64));
        let last = *widths.last().unwrap_or(&d);
        let norm_params = |w: u64| if s.norm { 2 * w } else { 0 };
        let mut p: u64 = widths
            .windows(2)
            .map(|w| w[0] * w[1] + w[1] + norm_params(w[1]))
            .sum::<u64>()
            + last
            + 1
            + if s.input_norm { 2 * d } else { 0 };
        if e > 0 {
            p += e * (4 * (last * last + last) + 4 * last + (last * f + f) + (f * last + last))
                + 2 * last;
        }
        let mut parameters = 4 * p * (6 + groups);
        // A step of long queries keeps no transposes of the encoder's projections and second feed-forward layers.
        let batch_queries = (s.batch_size as u64).min(nq).max(1);
        let unpacked =
            lean && by_query && batch_rows >= crate::encoder::UNPACKED_FROM as u64 * batch_queries;
        if unpacked {
            parameters -= 4 * e * (4 * last * last + f * last);
        }
        // Activations of the largest batch, in f32 values.
        let drop = u64::from(s.dropout);
        // The gathered features (query by query: each held query's own), and the network's input copy of the rows
        // held.
        let gathered = if by_query { rows } else { piece_rows };
        let mut values = gathered * d + rows * d + if s.input_norm { rows * (d + 1) } else { 0 };
        let widest = widths.iter().copied().max().unwrap_or(d);
        for &w in &widths[1..] {
            values += rows * w * (2 + drop + u64::from(s.norm));
        }
        // The backward pass: each chunk's gradient with respect to a layer's output and input.
        values += 2 * rows * widest;
        let mut bytes = 0;
        if e > 0 {
            let ed = u64::from(s.encoder_dropout);
            // Per block (`encoder.rs`, `BlockTrace`): q, k, v, o and the two norms' x̂; the feed-forward values
            // before dropout; with dropout a bit an entry of each of the four masks (the dropped values are rebuilt
            // from them). No attention weights: the backward pass recomputes them a head at a time. While a block
            // runs forward, a norm's output, one head's weights and the dropped feed-forward values besides.
            // A query of at most `KEEP_WEIGHTS_UP_TO` documents keeps its weights instead.
            let kept: u64 = held
                .iter()
                .filter(|&&n| n <= crate::encoder::KEEP_WEIGHTS_UP_TO as u64)
                .map(|n| n * n)
                .sum();
            let per_block = rows * last * 6 + rows * f + h * kept;
            values += e * per_block + rows * last + squares + rows * f;
            bytes += (e * ed * (2 * rows * last + h * squares + rows * f)).div_ceil(8);
            // The backward pass of the longest query: one head's weights, their dropped copy, their gradient and
            // the two transposes; the projections' gradients and inputs; the feed-forward's.
            values += 5 * longest * longest + 8 * longest * last + 2 * longest * f;
            // Without the transposes, `dx = dy Wᵀ` goes through `dyᵀ` and `dxᵀ` (the widest: the second
            // feed-forward layer's).
            if unpacked {
                values += longest * (f + last);
            }
        }
        values += piece_rows * 6; // scores, labels, their gradients
        values += batch_rows * 4; // the batch's row numbers and labels (8 bytes each)
        NeuralMemory {
            data_copy: if s.targets_held { n * 8 } else { 0 } + if s.dla { 2 * n * 8 } else { 0 },
            parameters,
            activations: 4 * values + bytes,
            n_parameters: p,
            batch_rows,
            piece_rows,
        }
    }
}

/// The training data's numbers as read, in bytes (features, f32 labels, query offsets), not its ids or comments: a
/// file with other comments makes the same choices, so it trains the same model.
fn data_bytes(train: &Dataset) -> u64 {
    train.feature_memory_bytes()
        + 4 * train.labels().len() as u64
        + 8 * train.query_offsets().len() as u64
}
