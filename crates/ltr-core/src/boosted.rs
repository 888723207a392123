//! [`Boosted`]: trees boosted from another model's scores (`lambdamart`/`mart` with `init-model` or `init-algo`).
//! The start model keeps the preprocessing its own file stored, so it scores exactly as it did alone.
//!
//! Both types are generic over the start model's type only so that this module need not import
//! [`Model`](crate::Model), whose variant holds them: the crate exports them with `M = Model` (`ltr_core::Boosted`,
//! `ltr_core::InitModel`).

use ltr_data::{Dataset, Preprocess, QueryView};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::forest::Forest;
use crate::scorer::Scorer;

/// The model boosting started from, with the preprocessing its file applied to its input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitModel<M> {
    /// The start model (any kind, another [`Boosted`] included).
    pub model: Box<M>,
    /// Applied to the input before `model` scores it: the start model file's own preprocessing (`None` for a start
    /// trained on the same prepared data as the trees).
    pub preprocess: Option<Preprocess>,
}

impl<M: Scorer> InitModel<M> {
    /// The start model's score of every document of `ds` (in row order), through its preprocessing.
    pub fn scores(&self, ds: &Dataset) -> crate::Result<Vec<f64>> {
        Ok(match &self.preprocess {
            Some(p) => self.model.score_dataset(&p.apply(ds)?),
            None => self.model.score_dataset(ds),
        })
    }

    /// Width of the raw data the start model reads.
    pub fn raw_features(&self) -> usize {
        self.preprocess
            .as_ref()
            .map_or_else(|| self.model.n_features(), |p| p.raw_features)
    }
}

/// `score(x) = init(x) + base_score + Σ_t weight_t · leaf_t(x)`, the trees added one by one in the order they were
/// grown, starting from the start model's score: the order boosting summed them in, so the training-time scores
/// are the predictions bit for bit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Boosted<M> {
    /// Where boosting started.
    pub init: InitModel<M>,
    /// The trees grown on top of it.
    pub forest: Forest,
}

impl<M: Scorer> Boosted<M> {
    /// Why this model cannot be used, if so: a malformed forest or start model, or a start model wider than the
    /// trees' input (the file accepts data as wide as the trees', and the start must read every such column).
    pub fn inconsistency(&self) -> Option<String> {
        if let Some(p) = self.forest.inconsistency() {
            return Some(p);
        }
        if let Some(p) = self
            .init
            .preprocess
            .as_ref()
            .and_then(|p| p.inconsistency())
        {
            return Some(format!("start model: {p}"));
        }
        let width = self.init.raw_features();
        if width > self.forest.n_features
            || (self.init.preprocess.is_some() && width != self.forest.n_features)
        {
            return Some(format!(
                "the start model reads {width} features but the trees {}",
                self.forest.n_features
            ));
        }
        None
    }

    /// Add the trees to start scores `out` (one per document of `ds`), in parallel over queries.
    fn add_trees(&self, ds: &Dataset, out: &mut [f64]) {
        let mut slices: Vec<&mut [f64]> = Vec::with_capacity(ds.n_queries());
        let mut rest = out;
        for w in ds.query_offsets().windows(2) {
            let (a, b) = rest.split_at_mut(w[1] - w[0]);
            slices.push(a);
            rest = b;
        }
        slices.into_par_iter().enumerate().for_each(|(q, s)| {
            let rows: Vec<_> = ds.query_range(q).map(|i| ds.row(i)).collect();
            self.forest.add_rows(&rows, s);
        });
    }
}

impl<M: Scorer> Scorer for Boosted<M> {
    fn score_query(&self, query: &QueryView<'_>, out: &mut [f64]) {
        let one = query.dataset().select_queries(&[query.index()]);
        self.add_scores(&one, out);
    }
    fn n_features(&self) -> usize {
        self.forest.n_features
    }
    fn score_dataset(&self, ds: &Dataset) -> Vec<f64> {
        let mut out = vec![0.0; ds.n_docs()];
        self.add_scores(ds, &mut out);
        out
    }
}

impl<M: Scorer> Boosted<M> {
    /// Write the scores of `ds` into `out`. Data the start model's preprocessing refuses (wider than it was
    /// fitted on; a model file checks widths before scoring) scores NaN rather than panicking inside a scorer.
    fn add_scores(&self, ds: &Dataset, out: &mut [f64]) {
        match self.init.scores(ds) {
            Ok(s) => {
                for (o, s) in out.iter_mut().zip(s) {
                    *o = s + self.forest.base_score;
                }
                self.add_trees(ds, out);
            }
            Err(_) => out.fill(f64::NAN),
        }
    }
}
