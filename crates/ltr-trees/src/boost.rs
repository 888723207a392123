//! The training loops: gradient boosting (`lambdamart`, `mart`) and the random forest.

use ltr_core::{
    Allreduce, Boosted, Fit, FitContext, FitReport, Fitted, Forest, ForestTree, InitModel,
    LtrError, Model, Result, SingleProcess,
};
use ltr_data::{Dataset, ExactVec};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::json;
use std::borrow::Cow;

use crate::bins::Binned;
use crate::grow::{grow, BinTree, Scale};
use crate::hist::{HistPool, Rows};
use crate::objective::{
    dla_gradients, lambda_gradients, lambda_gradients_unbiased, squared_error_gradients, BiasLoss,
    PairBias,
};
use crate::ranks::Layout;
use crate::{
    Debias, GbdtParams, GbdtValidParams, Objective, RandomForestParams, RandomForestValidParams,
    TreeParams,
};

/// Documents per parallel task when trees are applied to every document.
const DOC_BLOCK: usize = 4096;

/// What [`train_gbdt`] found.
#[derive(Debug, Clone)]
pub struct GbdtRun {
    /// The ensemble (cut back to the best round on validation when validation data was given).
    pub forest: Forest,
    /// The training-time scores of the returned ensemble, computed from bins: equal to its predictions on the
    /// training data.
    pub train_scores: Vec<f64>,
    /// Trees grown before stopping.
    pub trees_grown: usize,
    /// The validation measure after each round (empty without validation data).
    pub curve: Vec<f64>,
    /// What position debiasing learned, by position ([`Debias`]); `None` without it.
    pub position_bias: Option<PositionBias>,
}

/// The position biases a debiased LambdaMART learned alongside its trees, by position (0 = the top).
#[derive(Debug, Clone, PartialEq)]
pub enum PositionBias {
    /// [`Debias::PositionFactors`]: the additive factor of each position (its multiplicative factor is e^b).
    Factors(Vec<f64>),
    /// [`Debias::Pairwise`]: t⁺ and t⁻ of each position, relative to position 0.
    Pairwise {
        /// The bias of a click at each position.
        t_plus: Vec<f64>,
        /// The bias of a non-click at each position.
        t_minus: Vec<f64>,
    },
    /// [`Debias::Dla`]: the examination propensity of each position, relative to position 0 (and
    /// [`Debias::Ips`]'s known ones).
    Propensities(Vec<f64>),
}

/// The position biases of a debiased run while it trains.
enum DebiasState {
    None,
    Factors {
        factors: Vec<f64>,
        rate: f64,
        regularization: f64,
    },
    Pairwise {
        t_plus: Vec<f64>,
        t_minus: Vec<f64>,
        exponent: f64,
        /// The pair loss the sums add up.
        loss: BiasLoss,
        /// Per query: its L⁺ then L⁻ by position, summed in query order after each round.
        losses: Vec<f64>,
        /// Known propensities as t⁺ ([`Debias::Ips`]): never updated.
        fixed: bool,
    },
    Dla {
        /// θ_k / θ_0 by position.
        propensity: Vec<f64>,
        /// The most θ_k / θ_0 may be.
        max_propensity: f64,
    },
}

impl DebiasState {
    /// The state of `p.debias` on `train`, whose rows must carry positions (one process only).
    fn new(p: &GbdtParams, train: &Dataset, comm: &dyn Allreduce) -> Result<Self> {
        if p.debias == Debias::None {
            return Ok(DebiasState::None);
        }
        let Some(positions) = train.positions() else {
            return Err(LtrError::param(
                "debias",
                "position debiasing needs each document's display position: train on clicks (ltr train \
                 --clicks LOG, or a LightGBM `.position` file beside the training file)",
            ));
        };
        if comm.size() > 1 {
            return Err(LtrError::param(
                "debias",
                "position debiasing trains in one process",
            ));
        }
        let n = positions.iter().max().map_or(0, |&m| m as usize + 1);
        Ok(match p.debias {
            Debias::None => DebiasState::None,
            Debias::PositionFactors {
                rate,
                regularization,
            } => DebiasState::Factors {
                factors: vec![0.0; n],
                rate,
                regularization,
            },
            Debias::Pairwise { bias_norm, loss } => DebiasState::Pairwise {
                t_plus: vec![1.0; n],
                t_minus: vec![1.0; n],
                exponent: 1.0 / (1.0 + bias_norm),
                loss,
                losses: Vec::new(),
                fixed: false,
            },
            Debias::Ips(table) => {
                let theta = table.values();
                if theta.len() < n {
                    return Err(LtrError::param(
                        "propensities",
                        format!(
                            "the table gives {} positions, but the sessions show {n}",
                            theta.len()
                        ),
                    ));
                }
                DebiasState::Pairwise {
                    t_plus: theta[..n].to_vec(),
                    t_minus: vec![1.0; n],
                    exponent: 1.0,
                    loss: BiasLoss::RankNet,
                    losses: Vec::new(),
                    fixed: true,
                }
            }
            Debias::Dla { max_propensity } => DebiasState::Dla {
                propensity: vec![1.0; n],
                max_propensity,
            },
        })
    }

    /// The scores the gradients see: each document's score plus its position's factor (a zero factor leaves the
    /// score as it is, bit for bit).
    fn scores<'s>(&self, train: &Dataset, scores: &'s [f64]) -> Cow<'s, [f64]> {
        match self {
            DebiasState::Factors { factors, .. } if factors.iter().any(|&b| b != 0.0) => {
                let positions = train.positions().expect("checked");
                Cow::Owned(
                    scores
                        .iter()
                        .zip(positions)
                        .map(|(&s, &k)| match factors[k as usize] {
                            0.0 => s,
                            b => s + b,
                        })
                        .collect(),
                )
            }
            _ => Cow::Borrowed(scores),
        }
    }

    /// For unbiased LambdaMART: the current t⁺ and t⁻, the pair loss, and one zeroed buffer of L⁺ then L⁻ per
    /// query; nothing otherwise.
    #[allow(clippy::type_complexity)]
    fn pair_biases(
        &mut self,
        queries: usize,
    ) -> (Option<(&[f64], &[f64], BiasLoss)>, Vec<Option<&mut [f64]>>) {
        match self {
            DebiasState::Pairwise {
                t_plus,
                t_minus,
                loss,
                losses,
                ..
            } if !t_plus.is_empty() => {
                let width = 2 * t_plus.len();
                losses.clear();
                losses.resize(queries * width, 0.0);
                (
                    Some((t_plus, t_minus, *loss)),
                    losses.chunks_mut(width).map(Some).collect(),
                )
            }
            _ => (None, (0..queries).map(|_| None).collect()),
        }
    }

    /// DLA's propensities by position, when it is on.
    fn dla(&self) -> Option<&[f64]> {
        match self {
            DebiasState::Dla { propensity, .. } => Some(propensity),
            _ => None,
        }
    }

    /// After a round's gradients `g`, `h` at `scores`: a Newton step for each position's factor, the next t⁺ and
    /// t⁻ from the round's pair losses, or DLA's propensities fitted to the ranker's scores. Sums run in document
    /// and query order: the same at any thread count.
    fn update(
        &mut self,
        train: &Dataset,
        ctx: &FitContext<'_>,
        scores: &[f64],
        g: &[f64],
        h: &[f64],
    ) {
        match self {
            DebiasState::None => {}
            DebiasState::Dla {
                propensity,
                max_propensity,
            } => dla_propensities(train, ctx, scores, propensity, *max_propensity),
            DebiasState::Factors {
                factors,
                rate,
                regularization,
            } => {
                let n = factors.len();
                let (mut gs, mut hs, mut weight) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
                let positions = train.positions().expect("checked");
                for q in 0..train.n_queries() {
                    let w = ctx.query_weight(q);
                    for i in train.query_range(q) {
                        let k = positions[i] as usize;
                        gs[k] += g[i];
                        hs[k] += h[i];
                        weight[k] += w;
                    }
                }
                for k in 0..n {
                    let reg = *regularization * weight[k];
                    let step = (gs[k] + reg * factors[k]) / ((hs[k] + reg).abs() + 0.001);
                    factors[k] -= *rate * step;
                }
            }
            DebiasState::Pairwise {
                t_plus,
                t_minus,
                exponent,
                losses,
                fixed,
                ..
            } => {
                let n = t_plus.len();
                if n == 0 || *fixed {
                    return;
                }
                let (mut plus, mut minus) = (vec![0.0; n], vec![0.0; n]);
                for chunk in losses.chunks(2 * n) {
                    for k in 0..n {
                        plus[k] += chunk[k];
                        minus[k] += chunk[n + k];
                    }
                }
                for (t, l) in [(t_plus, &plus), (t_minus, &minus)] {
                    if l[0] > 0.0 {
                        for k in 0..n {
                            // A position no pair touched this round keeps its bias.
                            if l[k] > 0.0 {
                                t[k] = (l[k] / l[0]).powf(*exponent);
                            }
                        }
                    }
                }
            }
        }
    }

    /// What it learned, for the report.
    fn learned(self) -> Option<PositionBias> {
        match self {
            DebiasState::None => None,
            DebiasState::Factors { factors, .. } => Some(PositionBias::Factors(factors)),
            DebiasState::Pairwise { t_plus, fixed, .. } if fixed => {
                Some(PositionBias::Propensities(t_plus))
            }
            DebiasState::Pairwise {
                t_plus, t_minus, ..
            } => Some(PositionBias::Pairwise { t_plus, t_minus }),
            DebiasState::Dla { propensity, .. } => Some(PositionBias::Propensities(propensity)),
        }
    }
}

/// Minorise–maximise steps of DLA's propensity fit a round (each never lowers the likelihood).
const DLA_STEPS: usize = 50;
/// The least propensity DLA learns (a click there weighs at most 10⁶ times one at the top).
const DLA_MIN_PROPENSITY: f64 = 1e-6;

/// DLA's propensity step: with the ranker's scores fixed, the θ by position that minimise
/// `Σ_sessions Σ_clicks −v_i log(θ_{k_i} / Σ_{k ∈ session} θ_k)`, each click weighted by `v_i = e^{s_top − s_i}`
/// (the ranker's softmax relevance of the session's top-position document over the clicked one's) and the
/// session by its weight, then normalised to θ_0 = 1 (and held at least [`DLA_MIN_PROPENSITY`] and at most `max`,
/// [`Debias::Dla`]'s bound: the minimiser projected, not a minimiser under the bound). The minimiser is
/// the fixed point of
/// `θ_k ← A_k / Σ_{sessions showing k} V_q / Σ_{k' ∈ q} θ_k'` (`A_k` the weighted clicks at `k`, `V_q` a
/// session's): the Bradley–Terry/Plackett–Luce update (Hunter 2004). A position without a click gets the least θ
/// and is never weighted by (no click sits there).
fn dla_propensities(
    train: &Dataset,
    ctx: &FitContext<'_>,
    scores: &[f64],
    theta: &mut [f64],
    max: f64,
) {
    let positions = train.positions().expect("checked");
    let labels = train.labels();
    let n = theta.len();
    let mut clicked = vec![0.0; n];
    // Each session with a click: its rows and its total click weight.
    let mut sessions: Vec<(std::ops::Range<usize>, f64)> = Vec::new();
    for q in 0..train.n_queries() {
        let r = train.query_range(q);
        let Some(top) = r.clone().min_by_key(|&i| positions[i]) else {
            continue;
        };
        let u = ctx.query_weight(q);
        let mut total = 0.0;
        for i in r.clone() {
            if labels[i] > 0.0 {
                let v = u * labels[i] as f64 * (scores[top] - scores[i]).exp();
                clicked[positions[i] as usize] += v;
                total += v;
            }
        }
        if total > 0.0 && total.is_finite() {
            sessions.push((r, total));
        }
    }
    if sessions.is_empty() || clicked.iter().any(|v| !v.is_finite()) {
        return;
    }
    let mut pi = clicked.clone();
    let mut denominator = vec![0.0; n];
    for _ in 0..DLA_STEPS {
        denominator.fill(0.0);
        for (r, total) in &sessions {
            let z: f64 = r.clone().map(|i| pi[positions[i] as usize]).sum();
            for i in r.clone() {
                denominator[positions[i] as usize] += total / z;
            }
        }
        for k in 0..n {
            if denominator[k] > 0.0 {
                pi[k] = clicked[k] / denominator[k];
            }
        }
    }
    if pi[0] > 0.0 {
        for k in 0..n {
            // A position whose clicks all carry a vanishing weight (e^{s_top − s_k} underflows) would get θ = 0
            // and infinite weights: its θ stays at least DLA_MIN_PROPENSITY.
            theta[k] = (pi[k] / pi[0]).clamp(DLA_MIN_PROPENSITY, max);
        }
    }
}

/// What [`train_random_forest`] found.
#[derive(Debug, Clone)]
pub struct ForestRun {
    /// The averaged trees.
    pub forest: Forest,
    /// The context's measure on the out-of-bag predictions of the training queries some tree left out (`None`
    /// without a measure or when every query was in every bag).
    pub out_of_bag: Option<f64>,
}

fn check_labels(train: &Dataset, layout: &Layout) -> Result<()> {
    if layout.docs == 0 {
        return Err(LtrError::Training("no training documents".into()));
    }
    if let Some(i) = train.labels().iter().position(|l| !l.is_finite()) {
        return Err(LtrError::Training(format!(
            "label of document {i} is not finite"
        )));
    }
    Ok(())
}

/// The random stream of tree `t`.
fn rng_for(seed: u64, t: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The kept features tree `t` may split on, and this rank's documents (ascending) it is grown on with whether each
/// of this rank's queries was drawn. Queries are drawn among all the ranks' queries by their global numbers, so
/// every rank draws the bag one process draws.
fn sample(
    rng: &mut ChaCha8Rng,
    data: &Binned,
    train: &Dataset,
    layout: &Layout,
    p: &TreeParams,
) -> (Vec<usize>, Vec<u32>, Vec<bool>) {
    let nf = data.features.len();
    let feats: Vec<usize> = if p.feature_fraction < 1.0 && nf > 0 {
        let k = ((p.feature_fraction * nf as f64).round() as usize).clamp(1, nf);
        let mut f = rand::seq::index::sample(rng, nf, k).into_vec();
        f.sort_unstable();
        f
    } else {
        (0..nf).collect()
    };
    let (nq, all) = (train.n_queries(), layout.queries);
    if p.query_fraction >= 1.0 || all == 0 {
        return (feats, (0..train.n_docs() as u32).collect(), vec![true; nq]);
    }
    let k = ((p.query_fraction * all as f64).ceil() as usize).clamp(1, all);
    let mut in_bag = vec![false; nq];
    let mine = layout.query_offset..layout.query_offset + nq;
    for q in rand::seq::index::sample(rng, all, k) {
        if mine.contains(&q) {
            in_bag[q - layout.query_offset] = true;
        }
    }
    let docs = (0..nq)
        .filter(|&q| in_bag[q])
        .flat_map(|q| train.query_range(q).map(|i| i as u32))
        .collect();
    (feats, docs, in_bag)
}

/// Every document's fixed-point gradient and hessian under the round's scale, agreed over the ranks.
fn quantise(
    g: &[f64],
    h: &[f64],
    layout: &Layout,
    comm: &dyn Allreduce,
    gh: &mut Vec<[i64; 2]>,
) -> Result<Scale> {
    let scale = Scale::agree(g, h, layout.docs, comm)?;
    gh.resize(g.len(), [0, 0]);
    gh.par_chunks_mut(DOC_BLOCK)
        .zip(g.par_chunks(DOC_BLOCK).zip(h.par_chunks(DOC_BLOCK)))
        .for_each(|(q, (g, h))| {
            for ((q, &g), &h) in q.iter_mut().zip(g).zip(h) {
                *q = scale.quantise(g, h);
            }
        });
    Ok(scale)
}

/// The mean label over every rank's documents, summed exactly (the same bits at any number of ranks).
fn mean_label(train: &Dataset, layout: &Layout, comm: &dyn Allreduce) -> Result<f64> {
    let mut sum = ExactVec::new(1);
    for &l in train.labels() {
        sum.add(0, l as f64);
    }
    comm.sum_exact(&mut sum)?;
    Ok(sum.value(0) / layout.docs as f64)
}

/// Per-query mutable slices of `v`.
fn per_query<'v>(train: &Dataset, v: &'v mut [f64]) -> Vec<&'v mut [f64]> {
    let mut out = Vec::with_capacity(train.n_queries());
    let mut rest = v;
    for w in train.query_offsets().windows(2) {
        let (a, b) = rest.split_at_mut(w[1] - w[0]);
        out.push(a);
        rest = b;
    }
    out
}

/// Add `weight ·` each document's leaf value of `tree` to `scores`: from the leaves' document lists when the tree
/// was grown on every document, else by walking each document down, in parallel over document blocks.
fn add_tree(tree: &BinTree, data: &Binned, weight: f64, scores: &mut [f64]) {
    if tree.docs.len() == scores.len() {
        for (&(start, end), &value) in tree.leaf_range.iter().zip(&tree.leaf_value) {
            for &i in &tree.docs[start..end] {
                scores[i as usize] += weight * value;
            }
        }
        return;
    }
    scores
        .par_chunks_mut(DOC_BLOCK)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (o, s) in chunk.iter_mut().enumerate() {
                *s += weight * tree.leaf_value[tree.leaf_of(data, c * DOC_BLOCK + o)];
            }
        });
}

/// Add `weight ·` each document's output of `tree` on raw features to `scores`.
fn add_raw(tree: &ForestTree, ds: &Dataset, scores: &mut [f64]) {
    scores
        .par_chunks_mut(DOC_BLOCK)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (o, s) in chunk.iter_mut().enumerate() {
                *s += tree.weight * tree.output(&ds.row(c * DOC_BLOCK + o));
            }
        });
}

/// Gradient boosting: `trees` rounds (fewer when validation stops it), each fitting one tree to the objective's
/// Newton step on a bag of queries.
pub fn train_gbdt(p: &GbdtParams, train: &Dataset, ctx: &FitContext<'_>) -> Result<GbdtRun> {
    train_gbdt_from(p, train, ctx, None)
}

/// [`train_gbdt`] starting from `init`'s scores of the training and validation data instead of 0 (`lambdamart`)
/// or the mean label (`mart`); the forest's base score is then 0 and the model is `init` plus the forest
/// ([`Boosted`]).
pub fn train_gbdt_from(
    p: &GbdtParams,
    train: &Dataset,
    ctx: &FitContext<'_>,
    init: Option<&InitModel>,
) -> Result<GbdtRun> {
    train_gbdt_ranks(p, train, ctx, init, &SingleProcess)
}

/// [`train_gbdt_from`] on this rank's shard of the queries, the ranks joined by `comm`: every rank returns the
/// model one process trains on all the shards' queries in rank order, bit for bit (bin bounds, bags and every
/// histogram are agreed over the ranks; see [`crate::Sums`]). Validation data is a one-process affair: with more
/// than one rank the context must hold none.
pub fn train_gbdt_ranks(
    p: &GbdtParams,
    train: &Dataset,
    ctx: &FitContext<'_>,
    init: Option<&InitModel>,
    comm: &dyn Allreduce,
) -> Result<GbdtRun> {
    gbdt(p, Cow::Borrowed(train), ctx, init, comm)
}

/// Bin `train` for the trees: data handed over is binned by [`Binned::take`], which frees its f32 features as it
/// goes, leaving the data without them (labels and queries are all the rounds read); borrowed data is binned in
/// place.
fn bin<'d>(
    train: Cow<'d, Dataset>,
    p: &TreeParams,
    layout: &Layout,
    comm: &dyn Allreduce,
) -> Result<(Binned, Cow<'d, Dataset>)> {
    let spec = p.bin_spec();
    match train {
        Cow::Borrowed(t) => Ok((Binned::new(t, &spec, layout, comm)?, Cow::Borrowed(t))),
        Cow::Owned(mut t) => {
            // Nothing after binning reads a document's id or comment.
            t = t.without_docids();
            Ok((Binned::take(&mut t, &spec, layout, comm)?, Cow::Owned(t)))
        }
    }
}

/// [`train_gbdt_ranks`] on borrowed data, or on data handed over, whose features are freed once binned.
fn gbdt(
    p: &GbdtParams,
    train: Cow<'_, Dataset>,
    ctx: &FitContext<'_>,
    init: Option<&InitModel>,
    comm: &dyn Allreduce,
) -> Result<GbdtRun> {
    match init {
        // Zero rounds are the start model itself: a check that boosting adds nothing by itself.
        Some(_) => GbdtParams {
            trees: p.trees.max(1),
            ..*p
        }
        .validate()?,
        None => p.validate()?,
    }
    if comm.size() > 1 && ctx.validation().is_some() {
        return Err(LtrError::param(
            "validate",
            "training over several ranks takes no validation data",
        ));
    }
    let layout = Layout::agree(&train, comm)?;
    check_labels(&train, &layout)?;
    if let Objective::LambdaRank(l) = p.objective {
        l.check_labels(train.labels())?;
    }
    let n_features = train.n_features();
    let base = match (init, p.objective) {
        (Some(_), _) | (None, Objective::LambdaRank(_)) => 0.0,
        (None, Objective::SquaredError) => mean_label(&train, &layout, comm)?,
    };
    // Every document starts at the start model's score plus the base, the order the model file sums them in.
    let start = |ds: &Dataset| -> Result<Vec<f64>> {
        let Some(init) = init else {
            return Ok(vec![base; ds.n_docs()]);
        };
        let s = init.scores(ds)?;
        if let Some(i) = s.iter().position(|v| !v.is_finite()) {
            return Err(LtrError::Training(format!(
                "the start model's score of document {i} is {}",
                s[i]
            )));
        }
        Ok(s.into_iter().map(|v| v + base).collect())
    };
    let as_model = |forest: &Forest| match init {
        Some(init) => Model::Boosted(Boosted {
            init: init.clone(),
            forest: forest.clone(),
        }),
        None => Model::Forest(forest.clone()),
    };
    // The start model reads the raw features: its scores come before binning frees them.
    let mut scores = start(&train)?;
    let handed_over = matches!(train, Cow::Owned(_));
    let (data, train) = bin(train, &p.tree, &layout, comm)?;
    let train: &Dataset = &train;
    let n = train.n_docs();
    // Scattered leaves of large data read their bins by rows ([`Rows`]): the same histograms, less memory traffic.
    // Only where the f32 features were freed while binned: the rows (a quarter of them) then fit in what was freed.
    let rows = if handed_over {
        Rows::of(&data, n)
    } else {
        None
    };
    let labels = train.labels();
    let mut forest = Forest {
        trees: Vec::new(),
        base_score: base,
        n_features,
    };
    let (mut g, mut h) = (vec![0.0; n], vec![0.0; n]);
    let mut gh: Vec<[i64; 2]> = Vec::new();
    let validation = ctx.validation();
    let mut val_scores = validation.map(start).transpose()?;
    let mut curve = Vec::new();
    // Best round so far on validation: (trees kept, measure, training scores then).
    let mut best: Option<(usize, f64, Vec<f64>)> = None;
    // A start model is round 0: boosting keeps no tree that does not beat it on validation.
    if let (Some(_), Some(v), Some(vs)) = (init, validation, val_scores.as_ref()) {
        best = Some((0, ctx.measure(v, vs)?, scores.clone()));
    }
    let mut debias = DebiasState::new(p, train, comm)?;
    let settings = p.tree.grow_settings(p.learning_rate);
    let progress = ctx.progress();
    progress.begin("trees", Some(p.trees as u64));
    let mut grown = 0;
    // Histogram buffers, reused from one leaf and one round to the next.
    let mut pool = HistPool::default();
    for t in 0..p.trees {
        {
            // Position factors shift the scores the gradients see (training only).
            let seen = debias.scores(train, &scores);
            let scores: &[f64] = &seen;
            let gq = per_query(train, &mut g);
            let hq = per_query(train, &mut h);
            let dla = debias.dla().map(<[f64]>::to_vec);
            let dla = dla.as_deref();
            let (biases, losses) = debias.pair_biases(train.n_queries());
            gq.into_par_iter()
                .zip(hq)
                .zip(losses)
                .enumerate()
                .for_each(|(q, ((gs, hs), loss))| {
                    let r = train.query_range(q);
                    match p.objective {
                        Objective::LambdaRank(l) => {
                            // Sampled pairs draw by the query's global number: the same at any number of ranks.
                            let query = crate::LambdaQuery::new(
                                ctx.seed(),
                                t,
                                layout.query_offset + q,
                                ctx.query_weight(q),
                            );
                            let (labels, scores) = (&labels[r.clone()], &scores[r.clone()]);
                            if let Some(propensity) = dla {
                                let positions = &train.positions().expect("checked")[r];
                                return dla_gradients(
                                    labels,
                                    scores,
                                    positions,
                                    propensity,
                                    ctx.query_weight(q),
                                    gs,
                                    hs,
                                );
                            }
                            match (biases, loss) {
                                (Some((t_plus, t_minus, pair_loss)), Some(loss)) => {
                                    let (loss_plus, loss_minus) = loss.split_at_mut(t_plus.len());
                                    let mut bias = PairBias {
                                        positions: &train.positions().expect("checked")[r],
                                        t_plus,
                                        t_minus,
                                        loss_plus,
                                        loss_minus,
                                        loss: pair_loss,
                                    };
                                    lambda_gradients_unbiased(
                                        labels, scores, &l, query, &mut bias, gs, hs,
                                    )
                                }
                                _ => lambda_gradients(labels, scores, &l, query, gs, hs),
                            }
                        }
                        Objective::SquaredError => {
                            squared_error_gradients(&labels[r.clone()], &scores[r], gs, hs)
                        }
                    }
                });
        }
        // DLA's propensities see the scores the gradients saw (it shifts no score).
        debias.update(train, ctx, &scores, &g, &h);
        let scale = quantise(&g, &h, &layout, comm, &mut gh)?;
        let mut rng = rng_for(ctx.seed(), t);
        let (feats, docs, _) = sample(&mut rng, &data, train, &layout, &p.tree);
        let tree = grow(
            &data,
            rows.as_ref(),
            &feats,
            docs,
            &gh,
            &scale,
            &settings,
            comm,
            &mut pool,
        )?;
        if tree.feature.is_empty() && p.tree.query_fraction >= 1.0 && p.tree.feature_fraction >= 1.0
        {
            // Nothing can split with every query and feature: later rounds would repeat this one.
            break;
        }
        add_tree(&tree, &data, 1.0, &mut scores);
        let ft = tree.to_forest_tree(&data, 1.0);
        grown += 1;
        if let (Some(v), Some(vs)) = (validation, val_scores.as_mut()) {
            add_raw(&ft, v, vs);
            let m = ctx.measure(v, vs)?;
            curve.push(m);
            if best.as_ref().is_none_or(|b| m > b.1) {
                best = Some((t + 1, m, scores.clone()));
            }
            progress.advance(grown as u64, &format!("validation {m:.4}"));
        } else {
            progress.advance(grown as u64, "");
        }
        forest.trees.push(ft);
        if let Some(observe) = ctx.epoch_observer() {
            // A boosting round is the observer's epoch: the ensemble so far, as it would score.
            observe(t + 1, &as_model(&forest))?;
        }
        if p.stop_after > 0 {
            if let Some((kept, _, _)) = &best {
                if t + 1 - kept >= p.stop_after {
                    break;
                }
            }
        }
    }
    progress.end();
    let train_scores = match best {
        Some((kept, _, s)) => {
            forest.trees.truncate(kept);
            s
        }
        None => scores,
    };
    Ok(GbdtRun {
        forest,
        train_scores,
        trees_grown: grown,
        curve,
        position_bias: debias.learned(),
    })
}

impl Fit for GbdtValidParams {
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        fit_gbdt_from(self, train, ctx, None)
    }
}

/// Fit gradient-boosted trees from `init`'s scores ([`train_gbdt_from`]): a [`Model::Boosted`] with a start model
/// (`trees` may then be 0), a [`Model::Forest`] without.
pub fn fit_gbdt_from(
    p: &GbdtParams,
    train: &Dataset,
    ctx: &FitContext<'_>,
    init: Option<InitModel>,
) -> Result<Fitted> {
    fit_gbdt_ranks(p, Cow::Borrowed(train), ctx, init, &SingleProcess)
}

/// [`fit_gbdt_from`] on this rank's shard of the queries, the ranks joined by `comm` ([`train_gbdt_ranks`]).
/// Data handed over (`Cow::Owned`) gives the same model, and its f32 features are freed while they are binned:
/// the run's peak memory is then the features, not the features plus their bins.
pub fn fit_gbdt_ranks(
    p: &GbdtParams,
    train: Cow<'_, Dataset>,
    ctx: &FitContext<'_>,
    init: Option<InitModel>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let run = gbdt(p, train, ctx, init.as_ref(), comm)?;
    let kept = run.forest.trees.len();
    let mut report = FitReport {
        iterations: Some(run.trees_grown as u64),
        ..Default::default()
    }
    .select("trees", kept);
    if !run.curve.is_empty() {
        report.validation = run.curve.get(kept.wrapping_sub(1)).copied();
    }
    let leaves: usize = run.forest.trees.iter().map(|t| t.n_leaves()).sum();
    let mut diagnostics = json!({
        "best_iteration": kept,
        "trees_grown": run.trees_grown,
        "leaves": leaves,
        "validation_curve": run.curve,
    });
    if let Some(bias) = &run.position_bias {
        diagnostics["position_bias"] = match bias {
            PositionBias::Factors(f) => json!({ "factors": f }),
            PositionBias::Pairwise { t_plus, t_minus } => {
                json!({ "t_plus": t_plus, "t_minus": t_minus })
            }
            PositionBias::Propensities(p) => json!({ "propensities": p }),
        };
    }
    let model = match init {
        Some(init) => Model::Boosted(Boosted {
            init,
            forest: run.forest,
        }),
        None => Model::Forest(run.forest),
    };
    Ok(Fitted::new(model)
        .with_report(report)
        .with_diagnostics(diagnostics))
}

/// A random forest: every tree grown in parallel on its own bag of queries and features, fitting the labels.
pub fn train_random_forest(
    p: &RandomForestParams,
    train: &Dataset,
    ctx: &FitContext<'_>,
) -> Result<ForestRun> {
    train_random_forest_ranks(p, train, ctx, &SingleProcess)
}

/// [`train_random_forest`] on this rank's shard of the queries, the ranks joined by `comm`: every rank returns the
/// forest one process grows on all the shards' queries in rank order, bit for bit, and the same out-of-bag estimate.
/// With more than one rank the trees are grown one after another (each tree's histograms are exchanged, in the same
/// order on every rank).
pub fn train_random_forest_ranks(
    p: &RandomForestParams,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<ForestRun> {
    random_forest(p, Cow::Borrowed(train), ctx, comm)
}

/// [`train_random_forest_ranks`] on borrowed data, or on data handed over, whose features are freed once binned.
fn random_forest(
    p: &RandomForestParams,
    train: Cow<'_, Dataset>,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<ForestRun> {
    p.validate()?;
    let layout = Layout::agree(&train, comm)?;
    check_labels(&train, &layout)?;
    let n_features = train.n_features();
    let handed_over = matches!(train, Cow::Owned(_));
    let (data, train) = bin(train, &p.tree, &layout, comm)?;
    let train: &Dataset = &train;
    let n = train.n_docs();
    // Scattered leaves of large data read their bins by rows ([`Rows`]): the same histograms, less memory traffic.
    // Only where the f32 features were freed while binned: the rows (a quarter of them) then fit in what was freed.
    let rows = if handed_over {
        Rows::of(&data, n)
    } else {
        None
    };
    // The first Newton step from score 0 under squared error is the leaf's mean label.
    let g: Vec<f64> = train.labels().iter().map(|&l| -(l as f64)).collect();
    let h = vec![1.0; n];
    let mut gh = Vec::new();
    let scale = quantise(&g, &h, &layout, comm, &mut gh)?;
    let settings = p.tree.grow_settings(1.0);
    let weight = 1.0 / p.trees as f64;
    let grow_tree = |t: usize, comm: &dyn Allreduce| -> Result<(BinTree, Vec<bool>)> {
        let mut rng = rng_for(ctx.seed(), t);
        let (feats, docs, in_bag) = sample(&mut rng, &data, train, &layout, &p.tree);
        let mut tree = grow(
            &data,
            rows.as_ref(),
            &feats,
            docs,
            &gh,
            &scale,
            &settings,
            comm,
            &mut HistPool::default(),
        )?;
        // The forest keeps every tree until the end: not its copy of the bag's document list.
        tree.docs = Vec::new();
        Ok((tree, in_bag))
    };
    // Integer histograms: a tree is the same whether trees grow in parallel or one at a time.
    let grown: Vec<(BinTree, Vec<bool>)> = if comm.size() == 1 {
        (0..p.trees)
            .into_par_iter()
            .map(|t| grow_tree(t, &SingleProcess))
            .collect::<Result<_>>()?
    } else {
        (0..p.trees)
            .map(|t| grow_tree(t, comm))
            .collect::<Result<_>>()?
    };
    let out_of_bag = out_of_bag(&grown, &data, train, &layout, ctx, comm)?;
    let forest = Forest {
        trees: grown
            .iter()
            .map(|(t, _)| t.to_forest_tree(&data, weight))
            .collect(),
        base_score: 0.0,
        n_features,
    };
    Ok(ForestRun { forest, out_of_bag })
}

/// The context's measure on each out-of-bag query's mean output over the trees that did not see it.
///
/// Every rank gathers every rank's out-of-bag queries (their sizes, labels and scores, in global query order) and
/// measures them together, so the estimate is the same bit for bit at any number of ranks. The measure sees labels
/// and scores only: ties are ranked by input order, whatever doc ids the training file had.
fn out_of_bag(
    grown: &[(BinTree, Vec<bool>)],
    data: &Binned,
    train: &Dataset,
    layout: &Layout,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Option<f64>> {
    if !ctx.has_measure() {
        return Ok(None);
    }
    let nq = train.n_queries();
    let mut oob_sum = vec![0.0; train.n_docs()];
    let mut oob_trees = vec![0usize; nq];
    for (tree, in_bag) in grown {
        for q in (0..nq).filter(|&q| !in_bag[q]) {
            oob_trees[q] += 1;
            for i in train.query_range(q) {
                oob_sum[i] += tree.leaf_value[tree.leaf_of(data, i)];
            }
        }
    }
    // This rank's out-of-bag queries: (global number, size) pairs, then each document's label and mean output.
    let (mut sizes, mut labels, mut scores) = (Vec::new(), Vec::new(), Vec::new());
    for q in (0..nq).filter(|&q| oob_trees[q] > 0) {
        let k = oob_trees[q] as f64;
        let rows = train.query_range(q);
        sizes.extend([(layout.query_offset + q) as f64, rows.len() as f64]);
        labels.extend(rows.clone().map(|i| train.labels()[i] as f64));
        scores.extend(rows.map(|i| oob_sum[i] / k));
    }
    let sizes = comm.gather_varying_f64(&sizes)?.concat();
    let labels: Vec<f32> = comm
        .gather_varying_f64(&labels)?
        .concat()
        .into_iter()
        .map(|l| l as f32)
        .collect();
    let scores = comm.gather_varying_f64(&scores)?.concat();
    if sizes.is_empty() {
        return Ok(None);
    }
    let mut offsets = vec![0];
    let mut qids = Vec::with_capacity(sizes.len() / 2);
    for pair in sizes.chunks_exact(2) {
        qids.push(format!("{}", pair[0] as usize + 1));
        offsets.push(offsets.last().copied().unwrap_or(0) + pair[1] as usize);
    }
    let no_features = ndarray::Array2::<f32>::zeros((labels.len(), 0));
    let queries = Dataset::new(
        ltr_data::FeatureMatrix::Dense(no_features),
        labels,
        offsets,
        qids,
    )
    .map_err(|e| LtrError::Training(format!("out-of-bag queries: {e}")))?;
    Ok(ctx.measure(&queries, &scores).ok())
}

/// [`train_random_forest_ranks`] as a [`Fitted`] model. Data handed over (`Cow::Owned`) gives the same forest, and
/// its f32 features are freed while they are binned.
pub fn fit_random_forest_ranks(
    p: &RandomForestParams,
    train: Cow<'_, Dataset>,
    ctx: &FitContext<'_>,
    comm: &dyn Allreduce,
) -> Result<Fitted> {
    let run = random_forest(p, train, ctx, comm)?;
    let report = FitReport {
        iterations: Some(run.forest.trees.len() as u64),
        validation: ctx.validate(&run.forest)?,
        ..Default::default()
    };
    let leaves: usize = run.forest.trees.iter().map(|t| t.n_leaves()).sum();
    let diagnostics = json!({
        "trees": run.forest.trees.len(),
        "leaves": leaves,
        "out_of_bag": run.out_of_bag,
    });
    Ok(Fitted::new(Model::Forest(run.forest))
        .with_report(report)
        .with_diagnostics(diagnostics))
}

impl Fit for RandomForestValidParams {
    fn fit(&self, train: &Dataset, ctx: &FitContext<'_>) -> Result<Fitted> {
        fit_random_forest_ranks(self, Cow::Borrowed(train), ctx, &SingleProcess)
    }
}
