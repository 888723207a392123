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
    // are far below the standard convention's ~0.48). The floor for every tree learner is RankSVM's with C chosen
    // on validation (NDCG@10 0.2133, MAP 0.4549 here) minus 0.02: early stopping on one fold's validation queries
    // moves a model's test values by about 0.01 when the summation order of its histograms changes. Models are
    // deterministic. Measured: lambdamart 0.2133 / 0.4488 (4 of 100 trees kept; 0.2198 / 0.4425 with 19 kept
    // while ndcg-at defaulted to 10), mart 0.2194 / 0.4524 (16 kept), random-forest 0.2160 / 0.4677.
    let floor = |name: &str, (n, m): (f64, f64)| {
        assert!(
            n > 0.2133 - 0.02 && m > 0.4549 - 0.02,
            "{name} NDCG@10 {n} MAP {m} below RankSVM's 0.2133 / 0.4549 minus 0.02"
        );
    };
    floor(
        "lambdamart",
        judge("lambdamart", &GbdtParams::lambdamart().check().unwrap()),
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
