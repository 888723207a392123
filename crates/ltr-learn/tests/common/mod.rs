//! Setup shared by the test modules.

use ltr_core::Scorer;
use ltr_data::Dataset;
use ltr_metrics::{evaluate, Convention, Metric};

/// Per-query NDCG@10 of `model` on `test` under `conv`.
pub fn ndcg10(model: &ltr_learn::Trained, test: &Dataset, conv: &Convention) -> Vec<f64> {
    let s = model.fitted.model.score_dataset(test);
    evaluate(test, &s, &[Metric::Ndcg(Some(10))], conv)
        .unwrap()
        .results
        .remove(0)
        .per_query
}

/// Generated web data (`ltr generate --profile web`) of `queries` queries of `min_docs`–`max_docs` documents from
/// `seed`, split 60/20/20 in query order into train, validation and test, each z-scored by the training part.
pub fn web_fold(queries: usize, min_docs: usize, max_docs: usize, seed: u64) -> [Dataset; 3] {
    let ds = ltr_data::generate_web(&ltr_data::WebConfig {
        queries,
        min_docs,
        max_docs,
        seed,
        ..Default::default()
    })
    .unwrap();
    let q: Vec<usize> = (0..ds.n_queries()).collect();
    let (a, b) = (queries * 3 / 5, queries * 4 / 5);
    let mut fold = [
        ds.select_queries(&q[..a]),
        ds.select_queries(&q[a..b]),
        ds.select_queries(&q[b..]),
    ];
    let z = ltr_data::ZScore::fit(&fold[0]);
    for d in &mut fold {
        z.apply(d).unwrap();
    }
    fold
}
