use ltr_core::*;

#[test]
fn ties_keep_the_earlier_candidate_and_nan_never_wins() {
    let b = best_by_validation([1.0, 3.0, 3.0, f64::NAN, 2.0], |x| Ok((x, x)))
        .unwrap()
        .unwrap();
    assert_eq!((b.index, b.score), (1, 3.0));
    let mut s = BestSoFar::new();
    assert!(s.offer(f64::NAN, "first"));
    assert!(!s.offer(5.0, "nan is not beaten by comparison"));
    assert_eq!(s.into_best().unwrap().item, "first");
    assert!(best_by_validation(Vec::<f64>::new(), |x| Ok((x, x)))
        .unwrap()
        .is_none());
}

#[test]
fn measure_errors_propagate_and_a_missing_measure_is_an_error() {
    let ctx = FitContext::new(1);
    let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 2,
        ..Default::default()
    })
    .unwrap();
    assert!(ctx.measure(&ds, &vec![0.0; ds.n_docs()]).is_err());
    assert_eq!(ctx.validate(&LinearModel::new(vec![0.0; 3])).unwrap(), None);
}
