//! Quality floors on a real LETOR fold (skipped with a reason when the data is absent).

use std::time::Instant;

use ltr_core::{Fit, FitContext, LtrError, Scorer};
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
    // are far below the standard convention's ~0.48; RankSVM with C chosen on validation: NDCG@10 0.2133, MAP
    // 0.4549 here). Models are deterministic; floors sit 0.01 below the measured values.
    // lambdamart: NDCG@10 0.2167, MAP 0.4568 (standard NDCG@10 0.4773), 73 of 100 trees kept, 0.7 s.
    let (n, m) = judge("lambdamart", &GbdtParams::lambdamart());
    assert!(n > 0.2067 && m > 0.4468, "lambdamart NDCG@10 {n} MAP {m}");
    // mart: NDCG@10 0.2194, MAP 0.4524 (standard 0.4850), 16 trees kept, 0.4 s.
    let (n, m) = judge("mart", &GbdtParams::mart());
    assert!(n > 0.2094 && m > 0.4424, "mart NDCG@10 {n} MAP {m}");
    // random-forest: NDCG@10 0.2160, MAP 0.4677 (standard 0.4945), 100 trees, 0.2 s.
    let (n, m) = judge("random-forest", &RandomForestParams::default());
    assert!(
        n > 0.2060 && m > 0.4577,
        "random-forest NDCG@10 {n} MAP {m}"
    );
}
