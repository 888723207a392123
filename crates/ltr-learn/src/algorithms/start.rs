//! A linear start model named by parameters — the sigmoid's seed (`seed-…`) and LambdaRank's fine-tuning start
//! (`init-…`): `PREFIX-model` names a model file, `PREFIX-algo` an algorithm of this registry trained first on the
//! same data, with its parameters given as `PREFIX-KEY=V`.

use ltr_core::{Allreduce, FitContext, LinearModel, LtrError, Model, ModelFile, Params, Result};
use ltr_data::{Dataset, Preprocess};

use crate::spec::SpecReader;

/// Where a start model comes from.
pub(crate) enum Start {
    /// A saved linear model.
    File(String),
    /// A registered algorithm and its parameters.
    Algorithm(String, Params),
}

/// Read `PREFIX-model`, else `PREFIX-algo` with its `PREFIX-KEY` parameters (every `PREFIX-…` name but those in
/// `own`, the caller's other parameters under the same prefix).
pub(crate) fn read_start(r: &SpecReader<'_>, prefix: &str, own: &[&str]) -> Result<Option<Start>> {
    if let Some(path) = r.text(&format!("{prefix}-model"))? {
        return Ok(Some(Start::File(path)));
    }
    let Some(algo) = r.text(&format!("{prefix}-algo"))? else {
        return Ok(None);
    };
    let (model, algo_name) = (format!("{prefix}-model"), format!("{prefix}-algo"));
    let mut except = vec![model.as_str(), algo_name.as_str()];
    except.extend_from_slice(own);
    let sub = r.prefixed(&format!("{prefix}-"), &except)?;
    Ok(Some(Start::Algorithm(algo, Params::new(sub))))
}

/// The start model as its source gives it: a label for errors (the file, or the start algorithm), the model, the
/// preprocessing its file stored (none for a start trained here on the same data), and the algorithm's name when one
/// made it. `owner` (the algorithm being started) cannot start itself. With `comm`, the start algorithm is trained
/// on this rank's shard like its owner.
pub(crate) fn start_model(
    start: Start,
    prefix: &str,
    owner: &str,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: Option<&dyn Allreduce>,
) -> Result<StartModel> {
    Ok(match start {
        Start::File(path) => {
            let file = ModelFile::load(std::path::Path::new(&path))?;
            // A start model to which NaN is no value would score the documents holding one as NaN, which the
            // trees on top cannot mend: refused, as the start algorithms refuse such data when they are trained.
            if !file.model.takes_missing_values() {
                for (what, data) in [("training", Some(train)), ("validation", ctx.validation())] {
                    if let Some((row, column)) = data.and_then(Dataset::first_nan) {
                        return Err(LtrError::param(
                            format!("{prefix}-model"),
                            format!(
                                "{path}: a {} model takes no missing values, and the {what} data's row {row}, \
                                 column {column} is NaN",
                                file.algorithm
                            ),
                        ));
                    }
                }
            }
            StartModel {
                label: path,
                model: file.model,
                preprocess: file.preprocess,
                file_width: Some(file.n_features),
                by: None,
            }
        }
        Start::Algorithm(name, sub) => {
            let param = format!("{prefix}-algo");
            let a = crate::find(&name)
                .ok_or_else(|| LtrError::param(&param, format!("unknown algorithm `{name}`")))?;
            if a.name == owner {
                return Err(LtrError::param(
                    &param,
                    format!("`{owner}` cannot start from itself"),
                ));
            }
            let fitted = match comm {
                Some(comm) => a.fit_distributed(&sub, train, ctx, comm)?,
                None => a.fit(&sub, train, ctx)?,
            };
            StartModel {
                label: format!("the `{}` start", a.name),
                model: fitted.model,
                preprocess: None,
                file_width: None,
                by: Some(a.name),
            }
        }
    })
}

/// A start model and where it came from ([`start_model`]).
pub(crate) struct StartModel {
    /// The file, or the start algorithm, in words.
    pub label: String,
    /// The scoring function.
    pub model: Model,
    /// The preprocessing its file applies to raw data first.
    pub preprocess: Option<Preprocess>,
    /// The width of data its file accepts (a file's `n_features`).
    pub file_width: Option<usize>,
    /// The algorithm that made it, when trained here.
    pub by: Option<&'static str>,
}

/// The start model with `d` features (a shorter file model is padded with zeros) and, when an algorithm made it,
/// that algorithm's name for the report. `owner` (the algorithm being started) cannot start itself. With `comm`,
/// the start algorithm is trained on this rank's shard like its owner.
pub(crate) fn resolve_start(
    start: Start,
    prefix: &str,
    owner: &str,
    train: &Dataset,
    ctx: &FitContext<'_>,
    comm: Option<&dyn Allreduce>,
) -> Result<(LinearModel, Option<&'static str>)> {
    let d = train.n_features();
    let StartModel {
        label: path,
        model,
        by,
        ..
    } = start_model(start, prefix, owner, train, ctx, comm)?;
    match model {
        Model::Linear(l) if l.weights.len() <= d => {
            let mut w = l.weights;
            w.resize(d, 0.0);
            Ok((LinearModel::new(w), by))
        }
        Model::Linear(l) => Err(LtrError::Shape(format!(
            "{path}: the start model has {} features, the training data {d}",
            l.weights.len()
        ))),
        _ => Err(LtrError::param(
            format!("{prefix}-{}", if by.is_some() { "algo" } else { "model" }),
            format!("{path} is not a linear model"),
        )),
    }
}
