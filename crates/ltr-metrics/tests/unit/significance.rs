use ltr_metrics::holm_adjust;

#[test]
fn holm_matches_the_step_down_rule_by_hand() {
    // Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → kept monotone at 0.06.
    let adj = holm_adjust(&[0.01, 0.04, 0.03, 0.005]);
    let want = [0.03, 0.06, 0.06, 0.02];
    for (a, w) in adj.iter().zip(want) {
        assert!((a - w).abs() < 1e-15, "{adj:?}");
    }
    // Capped at 1; NaN stays NaN and does not count as a hypothesis.
    let adj = holm_adjust(&[0.6, f64::NAN, 0.3]);
    assert_eq!(adj[0], 0.6);
    assert!(adj[1].is_nan());
    assert_eq!(adj[2], 0.6);
    assert_eq!(holm_adjust(&[0.9, 0.8]), vec![1.0, 1.0]);
    assert!(holm_adjust(&[]).is_empty());
}
