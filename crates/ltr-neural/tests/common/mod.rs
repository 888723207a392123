//! Shared test setup.
#![allow(dead_code)]

use ltr_core::{Fit, FitContext, Fitted, LtrError};
use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};
use ltr_metrics::{evaluate_mean, Convention, Metric};
use ltr_neural::{LambdaScheme, Loss, NeuralValidParams};

/// The loss of a fixture case: `name` with allRank's defaults, then the case's parameters.
pub fn loss_of(name: &str, params: &serde_json::Value) -> Loss {
    let mut loss = Loss::parse(name).unwrap_or_else(|| panic!("unknown loss {name}"));
    let f = |k: &str| params.get(k).and_then(|v| v.as_f64());
    match &mut loss {
        Loss::LambdaLoss { k, sigma, mu, .. } => {
            if let Some(v) = f("k") {
                *k = (v > 0.0).then_some(v as usize);
            }
            *sigma = f("sigma").unwrap_or(*sigma);
            *mu = f("mu").unwrap_or(*mu);
        }
        Loss::ApproxNdcg { alpha } => *alpha = f("alpha").unwrap_or(*alpha),
        Loss::NeuralNdcg { temperature, k } => {
            *temperature = f("temperature").unwrap_or(*temperature);
            if let Some(v) = f("k") {
                *k = (v > 0.0).then_some(v as usize);
            }
        }
        Loss::Rmse { levels } => *levels = f("levels").unwrap_or(*levels),
        _ => {}
    }
    loss
}

/// Every loss, with non-default settings where it has any.
pub fn all_losses() -> Vec<Loss> {
    let mut v: Vec<Loss> = Loss::NAMES
        .iter()
        .map(|n| Loss::parse(n).unwrap())
        .collect();
    v.push(Loss::LambdaLoss {
        scheme: LambdaScheme::NdcgLoss2PlusPlus,
        k: Some(3),
        sigma: 1.7,
        mu: 4.0,
    });
    v.push(Loss::NeuralNdcg {
        temperature: 0.3,
        k: Some(4),
    });
    v.push(Loss::ApproxNdcg { alpha: 3.0 });
    v
}

/// A small synthetic LETOR-like set.
pub fn letor(queries: usize, seed: u64) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries,
        min_docs: 5,
        max_docs: 25,
        features: 8,
        seed,
        ..SyntheticConfig::default()
    })
    .unwrap()
}

/// `f` run on a rayon pool of `threads` threads (the thread-count checks: 1 and 2 threads, one model).
pub fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}

/// NDCG@10 under the standard convention: the validation measure of the thread-count checks.
pub fn ndcg10(d: &Dataset, s: &[f64]) -> ltr_core::Result<f64> {
    evaluate_mean(d, s, Metric::Ndcg(Some(10)), &Convention::STANDARD).map_err(LtrError::measure)
}

/// `p` fitted on `train` with seed 11, validated on `vali` by [`ndcg10`], on 1 and on 2 rayon threads; asserts that
/// the two models and reports are equal bit for bit (`what` names the case) and returns the 1-thread fit.
pub fn fit_at_one_and_two_threads(
    p: &NeuralValidParams,
    train: &Dataset,
    vali: &Dataset,
    what: &str,
) -> Fitted {
    let run = |threads: usize| {
        with_threads(threads, || {
            p.fit(train, &FitContext::new(11).with_validation(vali, &ndcg10))
                .unwrap()
        })
    };
    let (a, b) = (run(1), run(2));
    assert_eq!(a.model, b.model, "{what}");
    assert_eq!(a.report, b.report, "{what}");
    a
}
