//! A model as the linear function of raw features that engines evaluate: Σ_k w_k · norm_k(x_{f_k}).

use ltr_core::{Model, ModelFile};
use ltr_data::Normalization;

use crate::{ExportError, Result};

/// What the engine applies to a raw feature value before weighting it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Normalizer {
    /// The raw value.
    Identity,
    /// (x − mean) / std.
    Standard {
        /// Training mean.
        mean: f64,
        /// Training standard deviation (> 0).
        std: f64,
    },
    /// (x − min) / (max − min).
    MinMax {
        /// Training minimum.
        min: f64,
        /// Training maximum (> min).
        max: f64,
    },
}

impl Normalizer {
    /// The normalised value of `x`.
    pub fn apply(&self, x: f64) -> f64 {
        match *self {
            Normalizer::Identity => x,
            Normalizer::Standard { mean, std } => (x - mean) / std,
            Normalizer::MinMax { min, max } => (x - min) / (max - min),
        }
    }
    /// (scale, shift) with norm(x) = scale · x + shift: folding multiplies the weight by `scale` and drops the shift,
    /// a constant that changes no ranking.
    pub fn affine(&self) -> (f64, f64) {
        match *self {
            Normalizer::Identity => (1.0, 0.0),
            Normalizer::Standard { mean, std } => (1.0 / std, -mean / std),
            Normalizer::MinMax { min, max } => (1.0 / (max - min), -min / (max - min)),
        }
    }
}

/// One weighted raw feature.
#[derive(Debug, Clone, PartialEq)]
pub struct Term {
    /// The feature's number in the data file (1-based).
    pub feature: usize,
    /// Its name (from the model's feature names, or `f<number>`).
    pub name: String,
    /// The weight of the normalised value.
    pub weight: f64,
    /// The normaliser.
    pub normalizer: Normalizer,
}

/// A model as Σ_k weight_k · normalizer_k(raw feature_k), one term per raw feature, in feature order.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearForm {
    /// The terms (features whose weight is zero, or that were constant on the training data, are left out: an
    /// absent feature contributes nothing in every engine).
    pub terms: Vec<Term>,
}

impl LinearForm {
    /// The score of a document given its raw feature values (`raw[k]` is file feature k + 1; absent = 0).
    pub fn score(&self, raw: &[f64]) -> f64 {
        self.terms
            .iter()
            .map(|t| {
                t.weight
                    * t.normalizer
                        .apply(raw.get(t.feature - 1).copied().unwrap_or(0.0))
            })
            .sum()
    }
    /// The same ranking with every normaliser folded into its weight (the constant shift dropped).
    pub fn folded(&self) -> LinearForm {
        LinearForm {
            terms: self
                .terms
                .iter()
                .map(|t| Term {
                    weight: t.weight * t.normalizer.affine().0,
                    normalizer: Normalizer::Identity,
                    ..t.clone()
                })
                .collect(),
        }
    }
}

fn refuse(target: &str, reason: impl Into<String>) -> ExportError {
    ExportError::Unsupported {
        target: target.to_string(),
        reason: reason.into(),
    }
}

/// Reduce `model` to its linear form over raw features, or say why `target` cannot run it.
pub fn linear_form(model: &ModelFile, target: &str) -> Result<LinearForm> {
    let weights = match &model.model {
        Model::Linear(m) => &m.weights,
        Model::Aggregate(a) => {
            return Err(refuse(
                target,
                format!(
                    "it aggregates the rankings of {} linear models ({:?}), which a scoring function cannot express; train committee-perceptron with combine=average (its default), or ranksvm",
                    a.members.len(),
                    a.method
                ),
            ))
        }
        Model::Trees(_) => {
            return Err(refuse(
                target,
                "it is a RankLib tree ensemble read for evaluation; upload the RankLib file itself (Elasticsearch/OpenSearch model/ranklib)",
            ))
        }
        Model::Stumps(_) => {
            return Err(refuse(
                target,
                "RankBoost's threshold rankers are trees, not a linear function; `export` writes them as depth-1 trees (raw_stumps)",
            ))
        }
        Model::Boosted(_) => return Err(refuse(target, "it is trees boosted from another model (init-model/init-algo), which no export target expresses as one model; export the start model and a model trained without init-… instead")),
        Model::Forest(_) => {
            return Err(refuse(
                target,
                format!(
                    "exporting lambdamart/mart/random-forest models to {target} is not supported yet"
                ),
            ))
        }
        Model::Neural(_) => {
            return Err(refuse(
                target,
                "it is a neural network, which only ONNX expresses (`ltr export --to onnx`, or `--to vespa`, which runs the ONNX graph)",
            ))
        }
    };
    let pre = model.preprocess.as_ref();
    if let Some(p) = pre {
        if !p.log1p.is_empty() {
            return Err(refuse(
                target,
                format!(
                    "the model applies log1p to features {:?}, which no engine's normaliser computes; retrain without --log1p (or index log-transformed values)",
                    p.log1p
                ),
            ));
        }
    }
    let normalizer_of = |j: usize| -> Result<Option<Normalizer>> {
        Ok(match pre.and_then(|p| p.normalization.as_ref()) {
            None => Some(Normalizer::Identity),
            Some(Normalization::ZScore(z)) => {
                (z.std[j] > 0.0).then_some(Normalizer::Standard { mean: z.mean[j], std: z.std[j] })
            }
            Some(Normalization::MinMax { min, max }) => {
                (max[j] > min[j]).then_some(Normalizer::MinMax { min: min[j], max: max[j] })
            }
            Some(other) => {
                return Err(refuse(
                    target,
                    format!(
                        "the model normalises per query ({other:?}), which needs every document of the query before scoring one; retrain with --normalize zscore or minmax"
                    ),
                ))
            }
        })
    };
    let mut terms: Vec<Term> = Vec::new();
    for (j, &w) in weights.iter().enumerate() {
        let feature = pre
            .and_then(|p| p.features.as_ref())
            .map_or(j + 1, |f| f[j]);
        // A constant training feature maps to 0 whatever its value: it contributes nothing.
        let Some(normalizer) = normalizer_of(j)? else {
            continue;
        };
        if w == 0.0 {
            continue;
        }
        if let Some(t) = terms.iter_mut().find(|t| t.feature == feature) {
            // A feature selected twice has the same statistics both times: the weights add.
            t.weight += w;
            continue;
        }
        let name = model.feature_name(feature);
        terms.push(Term {
            feature,
            name,
            weight: w,
            normalizer,
        });
    }
    terms.sort_by_key(|t| t.feature);
    Ok(LinearForm { terms })
}
