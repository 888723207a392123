//! EM (and the DCM's EM on its exact likelihood) recovering the parameters a log was simulated from, for the DCM,
//! UBM and DBN (the cascade and PBM are in `click_models.rs`). Each log is 20,000 sessions over 6 queries: the
//! documents at the top of each query's ranking are seen in most sessions, so their sampling error is about
//! √(p(1 − p)/n) ≈ 0.01 at a few thousand views; the tolerances below are a few times that, and the parameters seen
//! rarely (deep ranks, rare click patterns) are not checked.

use ltr_clicks::{
    fit_click_model, ClickModel, ClickModelFit, ClickModelKind, ClickModelParams, SessionLog,
};

use crate::click_models::{data, simulate, true_attr};

/// How often each pair of `log` is displayed at ranks 1 to `top`.
fn views(log: &SessionLog, top: usize) -> Vec<usize> {
    let mut v = vec![0; log.n_pairs()];
    for s in 0..log.n_sessions() {
        for &d in log.session(s).0.iter().take(top) {
            v[d as usize] += 1;
        }
    }
    v
}

/// The largest |fitted − true| over the pairs seen at the top ranks in at least `min` sessions (`seen`), of
/// which there must be `at_least`.
fn worst(fitted: &[f64], truth: &[f64], seen: &[usize], min: usize, at_least: usize) -> f64 {
    let mut checked = 0;
    let w = fitted
        .iter()
        .zip(truth)
        .zip(seen)
        .filter(|(_, &n)| n >= min)
        .map(|((f, t), _)| {
            checked += 1;
            (f - t).abs()
        })
        .fold(0.0, f64::max);
    assert!(checked >= at_least, "only {checked} pairs checked");
    w
}

#[test]
fn dcm_em_recovers_attractiveness_and_continuation() {
    let ds = data(6, 21);
    let log = simulate(&ds, ClickModel::Dependent, 20_000, 1, false);
    let fit = ClickModelFit {
        dcm_by_em: true,
        ..ClickModelFit::new(ClickModelKind::Dcm)
    };
    let fit = fit_click_model(&log, &fit).unwrap();
    let ClickModelParams::Dcm { attr, cont } = &fit.params else {
        unreachable!()
    };
    let a = worst(attr, &true_attr(&ds, &fit), &views(&log, 3), 2_000, 12);
    println!("DCM attractiveness: worst error {a:.4}");
    assert!(a < 0.04, "{a}");
    // λ after a click at rank r: 1 − (1/r)/2 (η = 1), ranks 1–4 (clicked often enough).
    for r in 1..=4 {
        let want = 1.0 - 0.5 / r as f64;
        println!("DCM λ({r}): {:.4} against {want:.4}", cont[r - 1]);
        assert!(
            (cont[r - 1] - want).abs() < 0.04,
            "λ({r}) = {}",
            cont[r - 1]
        );
    }
}

#[test]
fn ubm_em_recovers_examination_by_distance_to_the_last_click() {
    let ds = data(6, 22);
    // Swaps vary which document sits where, which separates attractiveness from examination.
    let log = simulate(&ds, ClickModel::UserBrowsing, 20_000, 2, true);
    let fit = ClickModelFit {
        iterations: 300,
        ..ClickModelFit::new(ClickModelKind::Ubm)
    };
    let fit = fit_click_model(&log, &fit).unwrap();
    let ClickModelParams::Ubm { attr, exam } = &fit.params else {
        unreachable!()
    };
    // γ(r, r') = 1/(r − r') (η = 1; r' = 0 with no click above): γ(1, none) = 1 fixes the scale. UBM's EM
    // converges slowly: after PyClick's 50 iterations γ(3, ·) is still 0.06–0.2 short, after 300 within 0.05.
    let mut worst_exam: f64 = 0.0;
    for (r, prev) in [(2, 0), (3, 0), (4, 0), (2, 1), (3, 2), (3, 1), (4, 3)] {
        let got = exam[r - 1][prev];
        let want = 1.0 / (r - prev) as f64;
        println!("UBM γ({r}, {prev}): {got:.4} against {want:.4}");
        worst_exam = worst_exam.max((got - want).abs());
    }
    assert!(worst_exam < 0.05, "{worst_exam}");
    let a = worst(attr, &true_attr(&ds, &fit), &views(&log, 2), 2_000, 6);
    println!("UBM attractiveness: worst error {a:.4}");
    assert!(a < 0.05, "{a}");
}

#[test]
fn dbn_em_recovers_persistence_attractiveness_and_satisfaction() {
    let ds = data(6, 23);
    let log = simulate(&ds, ClickModel::DynamicBayesian, 20_000, 3, false);
    let fit = fit_click_model(&log, &ClickModelFit::new(ClickModelKind::Dbn)).unwrap();
    let ClickModelParams::Dbn { attr, sat, gamma } = &fit.params else {
        unreachable!()
    };
    println!("DBN γ: {gamma:.4} against 0.9");
    assert!((gamma - 0.9).abs() < 0.03, "{gamma}");
    let truth = true_attr(&ds, &fit);
    // Rank 1 is always examined; below it a document may sit under one that always satisfies (the top grade
    // gives satisfaction 1), never examined: attractiveness is checked at rank 1 (one document a query).
    let seen = views(&log, 1);
    let a = worst(attr, &truth, &seen, 2_000, 6);
    println!("DBN attractiveness: worst error {a:.4}");
    assert!(a < 0.04, "{a}");
    // Satisfaction is the grade's gain share, (α − ε₋)/(ε₊ − ε₋); it is learnt from the clicks, so only documents
    // clicked often (attractive ones at the top) are checked.
    let true_sat: Vec<f64> = truth.iter().map(|a| (a - 0.1) / 0.9).collect();
    let clicked_often: Vec<usize> = seen
        .iter()
        .zip(&truth)
        .map(|(&n, &a)| if a >= 0.3 { n } else { 0 })
        .collect();
    let s = worst(sat, &true_sat, &clicked_often, 2_000, 2);
    println!("DBN satisfaction: worst error {s:.4}");
    assert!(s < 0.06, "{s}");
}
