use ltr_metrics::treceval::input::*;

#[test]
fn atol_as_c() {
    assert_eq!(atol("12"), Some(12));
    assert_eq!(atol("-2"), Some(-2));
    assert_eq!(atol("1.5"), Some(1));
    assert_eq!(atol("x"), None);
}
