//! Quality floors on a real LETOR fold (skipped with a reason when the data is absent).

use std::time::Instant;

use ltr_core::{Fit, FitContext, LtrError, ParamGuard, Scorer};
use ltr_data::{read_letor, Dataset};
use ltr_metrics::{evaluate_mean, Convention, Metric};
use ltr_trees::{GbdtParams, RandomForestParams};

#[test]
fn tree_learners_reach_their_floors_on_mq2008_fold1() {
    let Some(root) = ltr_testdata::shared_datasets_dir() else {
        eprintln!("SKIP: ../shared/datasets is absent (set LTR_DATASETS to run on MQ2008)");
        return;
    };
    let dir = root.join("MQ2008/Fold1");
    if !dir.is_dir() {
        eprintln!("SKIP: {} is absent", dir.display());
        return;
    }
    let load = |n: &str| read_letor(dir.join(n)).unwrap();
    let (train, vali, test) = (load("train.txt"), load("vali.txt"), load("test.txt"));
    let conv = Convention::LETOR4;
    let ndcg10 = Metric::Ndcg(Some(10));
    let map: Metric = "MAP".parse().unwrap();
    let measure =
        |d: &Dataset, s: &[f64]| evaluate_mean(d, s, ndcg10, &conv).map_err(LtrError::measure);
    let ctx = FitContext::new(1).with_validation(&vali, &measure);
    let judge = |name: &str, learner: &dyn Fit| {
        let t = Instant::now();
        let fitted = learner.fit(&train, &ctx).unwrap();
        let secs = t.elapsed().as_secs_f64();
        let s = fitted.model.score_dataset(&test);
        let (n, m) = (
            evaluate_mean(&test, &s, ndcg10, &conv).unwrap(),
            evaluate_mean(&test, &s, map, &conv).unwrap(),
        );
        let standard = evaluate_mean(&test, &s, ndcg10, &Convention::STANDARD).unwrap();
        eprintln!(
            "{name} MQ2008 Fold1 test NDCG@10 {n:.4} MAP {m:.4} (standard NDCG@10 {standard:.4}; {secs:.1} s, {:?})",
            fitted.report.selected
        );
        (n, m)
    };
    // Measured on Fold1 (LETOR 4.0 convention: a query of fewer than 10 documents scores NDCG@10 = 0, so these
    // are far below the standard convention's ~0.48). The floor for mart and random-forest is RankSVM's with C
    // chosen on validation (NDCG@10 0.2133, MAP 0.4549 here) minus 0.02: early stopping on one fold's validation
    // queries moves a model's test values by about 0.01 when the summation order of its histograms changes. Models
    // are deterministic. Measured (2026-11-29): mart 0.2154 / 0.4602 (53 kept), random-forest 0.2171 / 0.4635.
    let floor = |name: &str, (n, m): (f64, f64)| {
        assert!(
            n > 0.2133 - 0.02 && m > 0.4549 - 0.02,
            "{name} NDCG@10 {n} MAP {m} below RankSVM's 0.2133 / 0.4549 minus 0.02"
        );
    };
    // lambdamart's floor is its own measured value minus 0.02. With the default `min-docs-count=hessian`
    // validation keeps 2 of 100 trees on this fold: 0.1988 / 0.4333 (`documents` keeps 30: 0.2219 / 0.4671; LightGBM
    // lambdarank, matched settings and no validation, 0.2074 / 0.4507). Over MQ2008's five folds the two counts
    // are level on NDCG@10 (0.2238 against 0.2281, p = 0.21; BENCHMARKS.md, "Choosing `min-docs-count`").
    let (n, m) = judge("lambdamart", &GbdtParams::lambdamart().check().unwrap());
    assert!(
        n > 0.1988 - 0.02 && m > 0.4333 - 0.02,
        "lambdamart NDCG@10 {n} MAP {m} below its measured 0.1988 / 0.4333 minus 0.02"
    );
    floor("mart", judge("mart", &GbdtParams::mart().check().unwrap()));
    floor(
        "random-forest",
        judge(
            "random-forest",
            &RandomForestParams::default().check().unwrap(),
        ),
    );
}
