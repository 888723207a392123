//! The random forest (Breiman 2001, on bags of queries): every tree grown in parallel on its own bag of queries and
//! features, fitting the labels, and its out-of-bag estimate.

use std::borrow::Cow;

use ltr_core::{
    Allreduce, Fit, FitContext, FitReport, Fitted, Forest, LtrError, Model, Result, SingleProcess,
};
use ltr_data::Dataset;
use rayon::prelude::*;
use serde_json::json;

use crate::bins::Binned;
use crate::boost::{bin, check_labels, quantise, rng_for, sample};
use crate::grow::{grow, BinTree};
use crate::hist::HistPool;
use crate::ranks::Layout;
use crate::{RandomForestParams, RandomForestValidParams};

/// What [`train_random_forest`] found.
#[derive(Debug, Clone)]
pub struct ForestRun {
    /// The averaged trees.
    pub forest: Forest,
    /// The context's measure on the out-of-bag predictions of the training queries some tree left out (`None`
    /// without a measure or when every query was in every bag).
    pub out_of_bag: Option<f64>,
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
    let (data, train, rows) = bin(train, &p.tree, &layout, comm)?;
    let train: &Dataset = &train;
    let n = train.n_docs();
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
