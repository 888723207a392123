//! Tests of `src/trees.rs`.

use ltr_export::trees::*;

#[test]
fn raw_thresholds_are_exact_on_float_boundaries() {
    let f = |r: f32| ((r as f64 - 3.0) / 7.0) as f32;
    let theta = f(10.0);
    let t = raw_threshold(f, theta).unwrap();
    assert!(f(t) <= theta && f(value(key(t) + 1)) > theta);
    assert!(t >= 10.0);
    assert_eq!(raw_threshold(|_| 0.0, 0.5), None);
    assert_eq!(raw_threshold(|_| 0.0, -0.5), None);
    assert_eq!(raw_threshold(|r| r, 0.0), Some(0.0));
    assert_eq!(value(key(-2.5)), -2.5);
}
