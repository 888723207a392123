//! Tests of `src/forest.rs`.

use ltr_data::Preprocess;
use ltr_export::forest::*;

#[test]
fn next_float_and_solr_slack_are_exact() {
    assert_eq!(next_up(1.0), f32::from_bits(1.0f32.to_bits() + 1));
    assert_eq!(next_up(-1.0), f32::from_bits((-1.0f32).to_bits() - 1));
    assert!(next_up(0.0) > 0.0 && next_up(-0.0) == next_up(0.0));
    assert_eq!(next_up(-f32::from_bits(1)), 0.0);
    for x in [0.5f32, 3.25, -2.0, 0.0, 123456.7, 1e9, -7.5e-3, -1e-6] {
        let (t, exact) = solr_threshold(x);
        assert!(exact, "{x}");
        assert_eq!(t + 1e-6f32, x, "{x}");
    }
    // Near 0 the floats around -1e-6 are coarser than those around x: no sum lands on it, the closest below.
    let (t, exact) = solr_threshold(1e-7);
    assert!(!exact && t + 1e-6f32 < 1e-7 && next_up(t) + 1e-6f32 > 1e-7);
}

#[test]
fn preprocessed_thresholds_map_back_to_raw_values_exactly() {
    let mut p = Preprocess {
        features: None,
        log1p: vec![],
        normalization: Some(ltr_data::Normalization::ZScore(ltr_data::ZScore {
            mean: vec![3.0, 1.0],
            std: vec![7.0, 0.0],
        })),
        raw_features: 2,
    };
    let f = |r: f32| p.transform_value(0, r).unwrap();
    let theta = f(10.0);
    let Ok(Cut::At(r)) = raw_cut(Some(&p), 0, theta) else {
        panic!()
    };
    assert!(f(r) <= theta && f(next_up(r)) > theta);
    // The constant feature: every value maps to 0.
    assert!(matches!(raw_cut(Some(&p), 1, 0.5), Ok(Cut::Always(true))));
    assert!(matches!(raw_cut(Some(&p), 1, -0.5), Ok(Cut::Always(false))));
    p.normalization = None;
    assert!(matches!(raw_cut(Some(&p), 0, 2.5), Ok(Cut::At(r)) if r == 2.5));
    assert!(raw_cut(None, 0, f32::INFINITY).is_err());
}
