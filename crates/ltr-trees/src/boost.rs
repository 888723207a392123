//! The training loop of gradient boosting (`lambdamart`, `mart`), and the pieces the random forest (`forest.rs`)
//! shares with it: bagging, binning, fixed-point gradients. Position debiasing's state is in `debias.rs`.

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
use crate::debias::{DebiasState, PositionBias};
use crate::grow::{grow, BinTree, Scale};
use crate::hist::{HistPool, Rows};
use crate::objective::{
    dla_gradients, lambda_gradients, lambda_gradients_unbiased, squared_error_gradients, PairBias,
};
use crate::ranks::Layout;
use crate::{Debias, GbdtParams, GbdtValidParams, Objective, TreeParams};

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
    /// What position debiasing learned, by position ([`Debias`](crate::Debias)); `None` without it.
    pub position_bias: Option<PositionBias>,
}

pub(crate) fn check_labels(train: &Dataset, layout: &Layout) -> Result<()> {
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
pub(crate) fn rng_for(seed: u64, t: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ (t as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// The kept features tree `t` may split on, and this rank's documents (ascending) it is grown on with whether each
/// of this rank's queries was drawn. Queries are drawn among all the ranks' queries by their global numbers, so
/// every rank draws the bag one process draws.
pub(crate) fn sample(
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
        let n = train.n_docs() as u32;
        let docs = if n >= ADD_BLOCK as u32 {
            (0..n).into_par_iter().collect()
        } else {
            (0..n).collect()
        };
        return (feats, docs, vec![true; nq]);
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
pub(crate) fn quantise(
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

/// Documents a parallel task when a tree grown on every document adds its leaf values ([`add_tree`]).
const ADD_BLOCK: usize = 1 << 16;

/// Add `weight ·` each document's leaf value of `tree` to `scores`: from the leaves' document lists when the tree
/// was grown on every document, else by walking each document down, in parallel over document blocks. The lists
/// are ascending, so a block of scores finds its documents in each leaf's list by two binary searches and the
/// blocks go to the thread pool (one add a document either way: the same sums; serial, this held one core for
/// about 3 ms a tree at 1 M documents).
fn add_tree(tree: &BinTree, data: &Binned, weight: f64, scores: &mut [f64]) {
    if tree.docs.len() == scores.len() {
        scores
            .par_chunks_mut(ADD_BLOCK)
            .enumerate()
            .for_each(|(c, chunk)| {
                let (lo, hi) = ((c * ADD_BLOCK) as u32, (c * ADD_BLOCK + chunk.len()) as u32);
                for (&(start, end), &value) in tree.leaf_range.iter().zip(&tree.leaf_value) {
                    let docs = &tree.docs[start..end];
                    let from = docs.partition_point(|&i| i < lo);
                    let to = from + docs[from..].partition_point(|&i| i < hi);
                    for &i in &docs[from..to] {
                        chunk[(i - lo) as usize] += weight * value;
                    }
                }
            });
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
/// goes, leaving the data without them (labels and queries are all the rounds read), and large enough data gets
/// its bins by rows too; borrowed data is binned in place, without rows.
pub(crate) fn bin<'d>(
    train: Cow<'d, Dataset>,
    p: &TreeParams,
    layout: &Layout,
    comm: &dyn Allreduce,
) -> Result<(Binned, Cow<'d, Dataset>, Option<Rows>)> {
    let spec = p.bin_spec();
    match train {
        Cow::Borrowed(t) => Ok((Binned::new(t, &spec, layout, comm)?, Cow::Borrowed(t), None)),
        Cow::Owned(mut t) => {
            // Nothing after binning reads a document's id or comment.
            t = t.without_docids();
            let data = Binned::take(&mut t, &spec, layout, comm)?;
            // Scattered leaves of large data read their bins by rows ([`Rows`]): the same histograms, less memory
            // traffic. Only where the f32 features were freed while binned: the rows (a quarter of them) then fit
            // in what was freed.
            let rows = Rows::of(&data, t.n_docs());
            Ok((data, Cow::Owned(t), rows))
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
    let (data, train, rows) = bin(train, &p.tree, &layout, comm)?;
    let train: &Dataset = &train;
    let n = train.n_docs();
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
        if let Debias::Pairwise { hessian, .. } = p.debias {
            if hessian != 1.0 {
                h.par_iter_mut().for_each(|x| *x *= hessian);
            }
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
