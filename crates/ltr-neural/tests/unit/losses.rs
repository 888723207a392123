use ltr_neural::losses::{sigmoid, softplus};

#[test]
fn softplus_and_sigmoid_are_stable() {
    assert_eq!(softplus(1000.0), 1000.0);
    assert_eq!(softplus(-1000.0), 0.0);
    assert!((sigmoid(-800.0)).abs() < 1e-300);
    assert!((softplus(0.3) - (1.0 + 0.3f64.exp()).ln()).abs() < 1e-15);
}
