//! Tests of `src/adarank.rs`.

use ltr_core::{Fit, FitContext, ParamGuard};
use ltr_data::{Dataset, FeatureMatrix};
use ltr_listwise::*;
use ltr_metrics::Convention;

/// Three queries, two features; feature 1 ranks A and C perfectly, feature 2 ranks B perfectly.
fn toy() -> Dataset {
    let rows: [[f32; 2]; 8] = [
        [0.9, 0.1],
        [0.5, 0.5],
        [0.1, 0.9], // A: labels 1 0 0
        [0.9, 0.2],
        [0.1, 0.9],
        [0.5, 0.1], // B: labels 0 1 0
        [0.9, 0.1],
        [0.1, 0.9], // C: labels 1 0
    ];
    let x = ndarray::Array2::from_shape_fn((8, 2), |(i, j)| rows[i][j]);
    Dataset::new(
        FeatureMatrix::Dense(x),
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0],
        vec![0, 3, 6, 8],
        vec!["A".into(), "B".into(), "C".into()],
    )
    .unwrap()
}

#[test]
fn two_rounds_match_the_hand_computation() {
    // Round 1, P = 1/3 each: Σ P·AP is 7/9 for feature 1 (APs 1, 1/3, 1) and 11/18 for feature 2
    // (1/3, 1, 1/2): feature 1, α₁ = ½ ln((2 + 4/3 + 2)/(2/3)) = ½ ln 8.
    // The model ranks like feature 1, so P₂ ∝ (e⁻¹, e^{−1/3}, e⁻¹). Round 2: feature 2 wins
    // (Σ P₂·AP = 0.7045 against 0.6711), α₂ = ½ ln(Σ P₂(1 + E)/Σ P₂(1 − E)) with E = (1/3, 1, 1/2).
    let a1 = 0.5 * 8f64.ln();
    let z = 2.0 * (-1f64).exp() + (-1.0f64 / 3.0).exp();
    let (pa, pb) = ((-1f64).exp() / z, (-1.0f64 / 3.0).exp() / z);
    let num = pa * (4.0 / 3.0) + pb * 2.0 + pa * 1.5;
    let den = pa * (2.0 / 3.0) + pa * 0.5;
    let a2 = 0.5 * (num / den).ln();
    let fitted = AdaRankParams::default()
        .rounds(2)
        .tolerance(0.0)
        .measure(Some(
            ListMeasure::new("MAP".parse().unwrap(), Convention::STANDARD).unwrap(),
        ))
        .check()
        .unwrap()
        .fit(&toy(), &FitContext::new(1))
        .unwrap();
    let w = &fitted.linear().unwrap().weights;
    assert!((w[0] - a1).abs() < 1e-12, "α₁ {} vs {a1}", w[0]);
    assert!((w[1] - a2).abs() < 1e-12, "α₂ {} vs {a2}", w[1]);
    // After round 2, B's relevant document moves from third to second: training MAP (1 + 1/2 + 1)/3.
    assert!((fitted.report.objective.unwrap() - 2.5 / 3.0).abs() < 1e-12);
}
