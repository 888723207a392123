//! # ltr-trees
//!
//! Regression-tree ensembles for ranking, trained on binned features (255 bins a feature by default, one byte a
//! cell; up to 65,535, two bytes a cell beyond 256; NaN in a bin of its own whose direction each split learns)
//! with gradient/hessian histograms and leaf-wise best-first growth:
//!
//! - [`GbdtParams::lambdamart`]: gradient boosting with LambdaRank gradients (Burges 2010) weighted by |ΔNDCG|
//!   under a [`LabelGain`], |ΔERR| (Chapelle et al. 2009) or |ΔAP| ([`LambdaMetric`]), over the pairs touching
//!   the current top k or sampled per document ([`PairMethod`]), each query scaled by its weight
//!   ([`ltr_core::FitContext::with_query_weights`]); Newton leaf values,
//! - [`GbdtParams::mart`]: gradient boosting of the squared error (Friedman 2001),
//! - [`RandomForestParams`]: regression trees fitted to the labels on query subsamples, averaged (Breiman 2001).
//!
//! Every model is an [`ltr_core::Forest`]. Work is parallel over features, queries and document blocks. Each
//! round's gradients and hessians are summed as fixed-point integers ([`Sums`] under a [`Scale`]), so a model is
//! bit-identical at any thread count, and data-parallel training over ranks ([`train_gbdt_ranks`],
//! [`train_random_forest_ranks`], on an [`ltr_core::Allreduce`]) gives the one-process model at any number of
//! ranks.
//!
//! ```
//! use ltr_core::{Fit, FitContext, ParamGuard, Scorer};
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//! use ltr_trees::GbdtParams;
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 20, ..Default::default() }).unwrap();
//! let mut p = GbdtParams::lambdamart();
//! p.trees = 10;
//! p.tree.min_docs_in_leaf = 5;
//! let fitted = p.check().unwrap().fit(&ds, &FitContext::new(1)).unwrap();
//! assert_eq!(fitted.model.score_dataset(&ds).len(), ds.n_docs());
//! ```
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness (an explicit target
// selection ignores `test = false`), which would compile every module a second time. The unit tests are modules
// of the integration binary instead (`tests/unit/`), which links the library (CONTRIBUTING.md, "CI time").
#![cfg(not(test))]
#![deny(missing_docs)]

// pub for the tests in tests/unit/ (the library's unit tests, moved there so that it compiles once); not API.
#[doc(hidden)]
pub mod bins;
mod boost;
mod debias;
mod forest;
mod grow;
#[doc(hidden)]
#[allow(missing_debug_implementations)] // `Rows`, a build buffer, has no use for `Debug`.
pub mod hist;
mod objective;
mod partition;
#[doc(hidden)]
pub mod ranks;
mod scan;

pub use bins::{bin_bounds, BIN_SAMPLE_DOCS, MAX_BIN, MIN_DATA_IN_BIN};
pub use boost::{
    fit_gbdt_from, fit_gbdt_ranks, train_gbdt, train_gbdt_from, train_gbdt_ranks, GbdtRun,
};
pub use debias::PositionBias;
pub use forest::{
    fit_random_forest_ranks, train_random_forest, train_random_forest_ranks, ForestRun,
};
pub use grow::{
    best_split, leaf_value, split_gain, Cell, FeatureSplit, GrowSettings, LeafCount, Scale,
};
pub use hist::{histogram, subtract, Sums, ROWS_FROM_CELLS};
pub use objective::{
    discount, dla_gradients, gain, lambda_gradients, lambda_gradients_unbiased,
    squared_error_gradients, BiasLoss, GainTable, LabelGain, LambdaMetric, LambdaQuery,
    LambdaSettings, PairBias, PairMethod, TieBreak, MAX_ERR_GRADE, MAX_GAIN_LABELS,
};

use ltr_core::{LtrError, Result};

/// What gradient boosting minimises.
// LambdaRank's settings carry an inline gain list (see `LabelGain`); parameters are copied rarely.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    /// LambdaRank gradients (`lambdamart`); the ensemble starts at score 0 (or a start model's scores).
    LambdaRank(LambdaSettings),
    /// Pointwise squared error against the labels (`mart`); the ensemble starts at the mean label (or a start
    /// model's scores).
    SquaredError,
}

/// How LambdaMART corrects the position bias of clicks: the training data's labels are clicks and each row
/// carries the position it was shown at ([`ltr_data::Dataset::positions`]).
// `Ips` carries its table inline (see `PropensityTable`); parameters are copied rarely.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Debias {
    /// Clicks read as labels: the naive control (and judged data).
    None,
    /// A learned additive factor per position, added to every document's score while the gradients are computed
    /// (training only; the model scores documents without it). After each round's gradients, each position's
    /// factor takes one Newton step on the LambdaRank loss, as LightGBM's `lambdarank_position_bias` (≥ 4.1):
    /// `b_k −= rate · (G_k + reg · n_k · b_k) / (|H_k + reg · n_k| + 0.001)`, over the rows shown at position `k`
    /// (`G`, `H` their gradient and hessian sums, `n_k` their count in [`PenaltyUnit`]s). Factors start at 0 (a
    /// multiplicative factor of e⁰ = 1); rate 0 keeps them there, which is plain LambdaMART bit for bit.
    PositionFactors {
        /// The Newton step's scale (LightGBM uses the learning rate); ≥ 0.
        rate: f64,
        /// L2 penalty on the factors (LightGBM's `lambdarank_position_bias_regularization`); ≥ 0.
        regularization: f64,
        /// What `n_k` counts.
        unit: PenaltyUnit,
    },
    /// Unbiased LambdaMART (Hu et al., WWW 2019; XGBoost's `lambdarank_unbiased`): each pair (clicked `i` at
    /// position `k`, unclicked `j` at position `l`) is divided by `t⁺_k · t⁻_l`, the position biases of a click and
    /// of a non-click, learned jointly: after each round `t⁺_k = (L⁺_k / L⁺_0)^(1/(1+p))` with `L⁺_k` the sum over
    /// the pairs whose clicked document sits at `k` of the pair's loss divided by `t⁻_l`, and `t⁻` alike. All
    /// start at 1.
    Pairwise {
        /// `p` of the exponent `1/(1 + p)` (XGBoost's `lambdarank_bias_norm`); ≥ 0.
        bias_norm: f64,
        /// The pair loss `L⁺` and `L⁻` sum.
        loss: BiasLoss,
        /// Every document's hessian is multiplied by this each round (> 0): 2 is XGBoost's pair hessian
        /// `2σ(1 − σ)|Δ|` against LightGBM's `σ(1 − σ)|Δ|`. With `l2 = 0` it divides every leaf value by it and
        /// chooses the same splits, as the learning rate divided by it does (bit for bit when it is a power of two,
        /// every scaling then exact), unless a candidate leaf's hessian sum lies within this factor of
        /// `min_hessian_in_leaf` (the limit does not scale with it).
        hessian: f64,
    },
    /// The Dual Learning Algorithm (Ai et al., SIGIR 2018) with trees as the ranker: an examination propensity θ_k
    /// per position and the trees learned together. The trees fit the softmax cross-entropy of each session's
    /// scores against its clicks, each click weighted by `θ_1/θ_k` ([`crate::dla_gradients`]; this replaces the
    /// LambdaRank gradients). After each round the propensities fit the same loss the other way: a softmax over
    /// each session's positions against its clicks, each click weighted by `r_1/r_k = e^{s_1 − s_k}`, the
    /// ranker's relevance of the session's top document over the clicked one's, solved exactly by
    /// minorise–maximise steps. Both start at 1 (the naive softmax model).
    Dla {
        /// The most a propensity may be relative to the top's (≥ 1; 1 by default: no position is examined more
        /// than the first). Without the bound θ can run away above 1 when the ranker's steps are large (a click
        /// weighted less, its document scored lower, its relevance ratio and so its θ higher: 10⁶ after 100 stumps
        /// at learning rate 1); at the bound its clicks count as the top's.
        max_propensity: f64,
    },
    /// Inverse propensity weighting with known propensities (Wang et al., SIGIR 2016; Joachims, Swaminathan &
    /// Schnabel, WSDM 2017, on LambdaRank's pairs): each pair (clicked `i` at position `k`, unclicked `j`) divided
    /// by `θ_k`, the examination propensity of `k` relative to the top, read from a table (`ltr clicks propensity
    /// --out`). This is [`Debias::Pairwise`] with `t⁺ = θ` fixed and `t⁻ = 1`.
    Ips(PropensityTable),
}

/// What the position-factor penalty of [`Debias::PositionFactors`] is multiplied by at each position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PenaltyUnit {
    /// The rows shown there, each counted once (LightGBM's `instance_count`). A row of a click session set stands
    /// for every session with its pattern, so the penalty weighs less against the gradients as the log grows.
    Row,
    /// The rows' query weights summed: with clicks, the sessions shown the position. The penalty grows with the
    /// log as the gradient sums do, and holds the factors at one strength at any log size.
    Session,
}

/// The most positions a [`PropensityTable`] holds.
pub const MAX_PROPENSITY_POSITIONS: usize = 128;

/// Known propensities by position (position 0 first), positive and finite, at most [`MAX_PROPENSITY_POSITIONS`]
/// (kept inline, so that the settings stay `Copy`, as [`GainTable`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PropensityTable {
    values: [f64; MAX_PROPENSITY_POSITIONS],
    len: usize,
}

impl PropensityTable {
    /// The table of `values`, checked; errors name the parameter `propensities`.
    pub fn new(values: &[f64]) -> Result<Self> {
        let bad = |problem: String| Err(LtrError::param("propensities", problem));
        if values.is_empty() || values.len() > MAX_PROPENSITY_POSITIONS {
            return bad(format!(
                "a propensity table needs 1 to {MAX_PROPENSITY_POSITIONS} positions, got {}",
                values.len()
            ));
        }
        if let Some((k, p)) = values
            .iter()
            .enumerate()
            .find(|(_, p)| !(p.is_finite() && **p > 0.0))
        {
            return bad(format!(
                "the propensity {p} of rank {} is not a positive number",
                k + 1
            ));
        }
        let mut table = [0.0; MAX_PROPENSITY_POSITIONS];
        table[..values.len()].copy_from_slice(values);
        Ok(Self {
            values: table,
            len: values.len(),
        })
    }
    /// The propensities, position 0 first.
    pub fn values(&self) -> &[f64] {
        &self.values[..self.len]
    }
}

impl Debias {
    fn validate(&self) -> Result<()> {
        let ok = |name: &str, v: f64| {
            if v >= 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(LtrError::param(
                    name,
                    format!("must be finite and ≥ 0, got {v}"),
                ))
            }
        };
        match *self {
            Debias::None => Ok(()),
            Debias::PositionFactors {
                rate,
                regularization,
                ..
            } => {
                ok("position-bias-rate", rate)?;
                ok("position-bias-regularization", regularization)
            }
            Debias::Pairwise {
                bias_norm, hessian, ..
            } => {
                ok("bias-norm", bias_norm)?;
                if hessian > 0.0 && hessian.is_finite() {
                    Ok(())
                } else {
                    Err(LtrError::param(
                        "pair-hessian",
                        format!("must be finite and > 0, got {hessian}"),
                    ))
                }
            }
            Debias::Dla { max_propensity } => {
                if max_propensity >= 1.0 && max_propensity.is_finite() {
                    Ok(())
                } else {
                    Err(LtrError::param(
                        "max-propensity",
                        format!("must be finite and ≥ 1, got {max_propensity}"),
                    ))
                }
            }
            Debias::Ips(_) => Ok(()),
        }
    }
}

/// The settings of each tree and of the data it sees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeParams {
    /// Leaves per tree at most (≥ 2).
    pub leaves: usize,
    /// Depth at most (0: unlimited).
    pub max_depth: usize,
    /// Documents per leaf at least (≥ 1).
    pub min_docs_in_leaf: usize,
    /// Hessian sum per leaf at least (≥ 0).
    pub min_hessian_in_leaf: f64,
    /// How a split's sides are counted against `min_docs_in_leaf`: documents, or LightGBM's estimate from the
    /// hessians ([`LeafCount`]).
    pub leaf_count: LeafCount,
    /// L2 penalty λ on leaf values (≥ 0).
    pub l2: f64,
    /// Bins per feature at most (2 to [`MAX_BIN`]; 255 by default), not counting the bin of missing values. A
    /// feature with more than 256 bins is stored two bytes a cell, and each of its histograms holds as many cells.
    pub max_bin: usize,
    /// Documents a bin holds at least (≥ 1; [`MIN_DATA_IN_BIN`] by default, LightGBM's `min_data_in_bin`): a value
    /// held by fewer documents shares a bin with its neighbours. How the bounds are chosen: `bins.rs`.
    pub min_data_in_bin: usize,
    /// Documents whose values set the bin bounds, at most (≥ 1; [`BIN_SAMPLE_DOCS`] by default): with more training
    /// documents, this many spread evenly over them.
    pub bin_sample_docs: usize,
    /// Share of the features each tree may split on (0, 1].
    pub feature_fraction: f64,
    /// Share of the queries each tree is grown on, drawn without replacement (0, 1].
    pub query_fraction: f64,
}

impl Default for TreeParams {
    fn default() -> Self {
        Self {
            leaves: 31,
            max_depth: 0,
            min_docs_in_leaf: 20,
            min_hessian_in_leaf: 1e-3,
            leaf_count: LeafCount::Documents,
            l2: 0.0,
            max_bin: 255,
            min_data_in_bin: MIN_DATA_IN_BIN,
            bin_sample_docs: BIN_SAMPLE_DOCS,
            feature_fraction: 1.0,
            query_fraction: 1.0,
        }
    }
}

impl TreeParams {
    fn validate(&self) -> Result<()> {
        let fraction = |name: &str, v: f64| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(LtrError::param(name, format!("must be in (0, 1], got {v}")))
            }
        };
        if self.leaves < 2 {
            return Err(LtrError::param(
                "leaves",
                format!("must be at least 2, got {}", self.leaves),
            ));
        }
        if self.min_docs_in_leaf < 1 {
            return Err(LtrError::param("min-docs-in-leaf", "must be at least 1"));
        }
        if !(self.min_hessian_in_leaf >= 0.0 && self.min_hessian_in_leaf.is_finite()) {
            return Err(LtrError::param(
                "min-hessian-in-leaf",
                format!("must be finite and ≥ 0, got {}", self.min_hessian_in_leaf),
            ));
        }
        if !(self.l2 >= 0.0 && self.l2.is_finite()) {
            return Err(LtrError::param(
                "l2",
                format!("must be finite and ≥ 0, got {}", self.l2),
            ));
        }
        if !(2..=MAX_BIN).contains(&self.max_bin) {
            return Err(LtrError::param(
                "max-bin",
                format!("must be in [2, {MAX_BIN}], got {}", self.max_bin),
            ));
        }
        if self.min_data_in_bin < 1 {
            return Err(LtrError::param("min-data-in-bin", "must be at least 1"));
        }
        if self.bin_sample_docs < 1 {
            return Err(LtrError::param("bin-sample-docs", "must be at least 1"));
        }
        fraction("feature-fraction", self.feature_fraction)?;
        fraction("query-fraction", self.query_fraction)
    }

    pub(crate) fn bin_spec(&self) -> bins::BinSpec {
        bins::BinSpec {
            max_bin: self.max_bin,
            min_data_in_bin: self.min_data_in_bin,
            sample_docs: self.bin_sample_docs,
        }
    }

    pub(crate) fn grow_settings(&self, shrinkage: f64) -> GrowSettings {
        GrowSettings {
            leaves: self.leaves,
            max_depth: self.max_depth,
            min_docs_in_leaf: self.min_docs_in_leaf,
            min_hessian_in_leaf: self.min_hessian_in_leaf,
            leaf_count: self.leaf_count,
            l2: self.l2,
            shrinkage,
        }
    }
}

/// Gradient-boosted trees: `lambdamart` or `mart`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GbdtParams {
    /// What is minimised.
    pub objective: Objective,
    /// Boosting rounds (trees) at most.
    pub trees: usize,
    /// Shrinkage of every leaf value (0, 1000]; it is folded into the stored leaves (tree weight 1).
    pub learning_rate: f64,
    /// With validation data: stop after this many rounds without a better validation measure (0: never stop
    /// early). The ensemble is always cut back to its best round on validation.
    pub stop_after: usize,
    /// Tree and sampling settings.
    pub tree: TreeParams,
    /// Position debiasing of clicks (LambdaRank only; [`Debias::None`] otherwise).
    pub debias: Debias,
}

impl Default for GbdtParams {
    fn default() -> Self {
        Self::lambdamart()
    }
}

impl GbdtParams {
    /// LambdaMART with the defaults: 100 trees of 31 leaves, learning rate 0.1, |ΔNDCG| pair weights over the pairs
    /// with a document in the top 30, normalised by the ideal DCG@30, and a leaf's 20 documents counted from the
    /// hessians as LightGBM counts them ([`LeafCount::Hessian`], chosen by the protocol in BENCHMARKS.md).
    pub fn lambdamart() -> Self {
        Self {
            objective: Objective::LambdaRank(LambdaSettings::default()),
            trees: 100,
            learning_rate: 0.1,
            stop_after: 100,
            tree: TreeParams {
                leaf_count: LeafCount::Hessian,
                ..TreeParams::default()
            },
            debias: Debias::None,
        }
    }
    /// MART (squared error) with the same defaults.
    pub fn mart() -> Self {
        Self {
            objective: Objective::SquaredError,
            ..Self::lambdamart()
        }
    }
    /// Check every setting, naming the first bad one.
    pub fn validate(&self) -> Result<()> {
        if self.trees < 1 {
            return Err(LtrError::param(
                "trees",
                "must be at least 1 (0 only when boosting from a start model: init-model or init-algo)",
            ));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate <= 1000.0) {
            return Err(LtrError::param(
                "learning-rate",
                format!("must be in (0, 1000], got {}", self.learning_rate),
            ));
        }
        if let Objective::LambdaRank(l) = self.objective {
            l.validate()?;
        } else if self.debias != Debias::None {
            return Err(LtrError::param(
                "debias",
                "position debiasing needs the LambdaRank objective",
            ));
        }
        self.debias.validate()?;
        self.tree.validate()
    }
}

ltr_core::param_guard!(GbdtParams => GbdtValidParams);

/// A random forest: each tree fits the labels (squared error, no shrinkage) on a subsample of the queries and
/// features; the model averages the trees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomForestParams {
    /// Trees (≥ 1).
    pub trees: usize,
    /// Tree and sampling settings (defaults: 63 leaves, 10 documents a leaf, 63% of the queries, 50% of the
    /// features per tree).
    pub tree: TreeParams,
}

impl Default for RandomForestParams {
    fn default() -> Self {
        Self {
            trees: 100,
            tree: TreeParams {
                leaves: 63,
                min_docs_in_leaf: 10,
                query_fraction: 0.63,
                feature_fraction: 0.5,
                ..TreeParams::default()
            },
        }
    }
}

impl RandomForestParams {
    /// Check every setting, naming the first bad one.
    pub fn validate(&self) -> Result<()> {
        if self.trees < 1 {
            return Err(LtrError::param("trees", "must be at least 1"));
        }
        self.tree.validate()
    }
}

ltr_core::param_guard!(RandomForestParams => RandomForestValidParams);
