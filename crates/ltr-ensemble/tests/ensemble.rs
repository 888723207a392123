//! MHR, sigmoid meta-ranker and RankBoost tests.

use ltr_testdata::shared_datasets_dir;

use ltr_core::{positions, Aggregation, FitContext, LinearModel, LtrError, RankAggregate, Scorer};
use ltr_data::{generate_letor_like, load_letor_folds, split_by_queries, Dataset, SyntheticConfig};
use ltr_ensemble::*;
use ltr_metrics::{evaluate_mean, Convention, Metric};

/// Validation NDCG@10 under the standard convention, the measure the CLI validates with by default.
fn ndcg10(d: &Dataset, s: &[f64]) -> ltr_core::Result<f64> {
    evaluate_mean(d, s, Metric::Ndcg(Some(10)), &Convention::STANDARD).map_err(LtrError::measure)
}

fn data(seed: u64) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 30,
        min_docs: 4,
        max_docs: 40,
        features: 8,
        seed,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn mhr_of_identical_hyperplanes_ranks_like_that_hyperplane() {
    let ds = data(1);
    let w = LinearModel::new(
        (0..ds.n_features())
            .map(|j| (j as f64 * 0.37).sin())
            .collect(),
    );
    let single = w.score_dataset(&ds);
    for method in [
        Aggregation::Borda,
        Aggregation::BordaFuse,
        Aggregation::MedianRank,
        Aggregation::markov_default(),
    ] {
        let agg = RankAggregate {
            members: vec![w.clone(); 3],
            weights: vec![0.2, 0.5, 0.3],
            method,
        };
        let s = agg.score_dataset(&ds);
        for q in ds.queries() {
            let r = q.rows();
            assert_eq!(
                positions(&s[r.clone()]),
                positions(&single[r]),
                "{method:?} query {}",
                q.qid()
            );
        }
    }
}

#[test]
fn mhr_trains_one_ranker_per_grade_pair_with_diagnostics() {
    let ds = data(2);
    let fit = MhrParams::default()
        .weighted(true)
        .train(&ds, &FitContext::new(1).with_measure(&ndcg10))
        .unwrap();
    let d = &fit.diagnostics;
    assert_eq!(d.grade_pairs, vec![(2.0, 1.0), (2.0, 0.0), (1.0, 0.0)]);
    assert_eq!(d.cosines.len(), 3);
    assert_eq!(d.cosine_with_ranksvm.len(), 3);
    assert!(
        (fit.model.weights.iter().sum::<f64>() - 1.0).abs() < 1e-9,
        "WBC weights on the simplex"
    );
    // Each hyperplane orders its own grade pair at least as well as the single RankSVM does, on the training set.
    for &((s, t), own, single) in &d.order_error {
        assert!(
            own <= single + 0.02,
            "({s},{t}): own {own} vs single {single}"
        );
    }
    let adj = MhrParams::default()
        .pairs(GradePairs::Adjacent)
        .diagnostics(false)
        .train(&ds, &FitContext::new(1).with_measure(&ndcg10))
        .unwrap();
    assert_eq!(adj.model.members.len(), 2);
}

#[test]
fn sigmoid_never_increases_its_loss_and_its_gradient_is_right() {
    let ds = data(3);
    let p = SigmoidParams::default().lambda(0.01).max_iter(60);
    let seed: Vec<f64> = (0..ds.n_features())
        .map(|j| if j % 2 == 0 { 0.3 } else { -0.2 })
        .collect();
    let fit = p.refine(&ds, &seed).unwrap();
    assert!(fit.trace.len() > 2);
    for w in fit.trace.windows(2) {
        assert!(
            w[1].loss < w[0].loss,
            "loss rose: {} -> {}",
            w[0].loss,
            w[1].loss
        );
    }
    assert!(
        (p.loss(&ds, &fit.model.weights) - fit.trace.last().unwrap().loss).abs()
            < 1e-9 * fit.trace[0].loss
    );
    // Finite differences of L at the seed against the analytic descent direction: L(w − εg) < L(w) for small ε.
    let l0 = p.loss(&ds, &seed);
    let h = 1e-6;
    let mut fd = vec![0.0; seed.len()];
    for j in 0..seed.len() {
        let mut wp = seed.clone();
        wp[j] += h;
        let mut wm = seed.clone();
        wm[j] -= h;
        fd[j] = (p.loss(&ds, &wp) - p.loss(&ds, &wm)) / (2.0 * h);
    }
    let step: Vec<f64> = seed.iter().zip(&fd).map(|(w, g)| w - 1e-4 * g).collect();
    assert!(p.loss(&ds, &step) < l0);
    // The optimiser's first step went along −∇L: its loss equals L(w − η∇L) for the recorded η.
    let eta = fit.trace[1].eta;
    let first: Vec<f64> = seed.iter().zip(&fd).map(|(w, g)| w - eta * g).collect();
    assert!(
        (p.loss(&ds, &first) - fit.trace[1].loss).abs() < 1e-6 * l0,
        "first step is not a gradient step"
    );
}

#[test]
fn rankboost_learns_and_chooses_rounds_on_validation() {
    let all = generate_letor_like(&SyntheticConfig {
        queries: 60,
        features: 10,
        seed: 4,
        query_level_norm: false,
        ..Default::default()
    })
    .unwrap();
    let parts = split_by_queries(&all, &[0.7, 0.3], 2).unwrap();
    let fit = RankBoostParams::default()
        .rounds(60)
        .train(
            &parts[0],
            &FitContext::new(1).with_validation(&parts[1], &ndcg10),
        )
        .unwrap();
    assert!(fit.rounds_used >= 1 && fit.rounds_used <= 60);
    assert_eq!(fit.validation_curve.len(), 60);
    let m = Metric::Ndcg(Some(10));
    let conv = Convention::STANDARD;
    let v = evaluate_mean(&parts[1], &fit.scores(&parts[1]), m, &conv).unwrap();
    let zero = evaluate_mean(&parts[1], &vec![0.0; parts[1].n_docs()], m, &conv).unwrap();
    assert!(v > zero + 0.1, "RankBoost NDCG@10 {v} vs constant {zero}");
    assert_eq!(v, fit.validation_curve[fit.rounds_used - 1]);
}

/// Fold-mean test MAP of RankBoost (T chosen on validation NDCG@10) against RankLib's with its defaults
/// (300 rounds, 10 thresholds), measured on these folds: OHSUMED 0.4453, MQ2008 0.4752.
fn rankboost_floor(sub: &str, conv: Convention, ranklib: f64) {
    let Some(root) = shared_datasets_dir() else {
        eprintln!("SKIP: ../shared/datasets is absent");
        return;
    };
    let folds = load_letor_folds(&root.join(sub)).unwrap();
    let t0 = std::time::Instant::now();
    let mut map = 0.0;
    for f in &folds {
        let (tr, va, te) = (&f.train, &f.vali, &f.test);
        let measure = |d: &Dataset, s: &[f64]| {
            evaluate_mean(d, s, Metric::Ndcg(Some(10)), &conv).map_err(LtrError::measure)
        };
        let ctx = FitContext::new(1).with_validation(va, &measure);
        let fit = RankBoostParams::default().train(tr, &ctx).unwrap();
        map += evaluate_mean(te, &fit.scores(te), Metric::Ap(None), &conv).unwrap()
            / folds.len() as f64;
    }
    eprintln!(
        "{sub}: RankBoost MAP {map:.4} (RankLib {ranklib}) in {:.1}s",
        t0.elapsed().as_secs_f64()
    );
    assert!(
        map >= ranklib - 0.005,
        "{sub}: RankBoost MAP {map:.4} < RankLib {ranklib} - 0.005"
    );
}

#[test]
fn rankboost_floor_ohsumed() {
    rankboost_floor("OHSUMED/QueryLevelNorm", Convention::LETOR3, 0.4453);
}

#[test]
fn rankboost_floor_mq2008() {
    rankboost_floor("MQ2008", Convention::LETOR4, 0.4752);
}
