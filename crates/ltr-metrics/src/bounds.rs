//! Seed 000's appendix: the Φ_{Z,m} family of rank metrics and its lower bound in terms of the inversion count Q.

/// Φ_{Z,m} = (1/Z) Σ_{i=1..m} i / r_i, where `ranks` are the 1-based ranks of the relevant documents in increasing
/// order and only the first `m` of them are used. AP: Z = m = R; P@K: Z = K, m = #relevant in the top K;
/// RR: Z = m = 1; R-prec: Z = R, m = #relevant in the top R.
pub fn phi(z: f64, m: usize, ranks: &[usize]) -> f64 {
    ranks
        .iter()
        .take(m)
        .enumerate()
        .map(|(i, &r)| (i + 1) as f64 / r as f64)
        .sum::<f64>()
        / z
}

/// The appendix lower bound Φ_{Z,m} ≥ (1/Z) [Q + C(R+1, 2)]^{-1} (Σ_{i≤m} √i)², with R relevant documents and Q
/// inversions.
pub fn phi_lower_bound(z: f64, m: usize, q: f64, r: usize) -> f64 {
    let s: f64 = (1..=m).map(|i| (i as f64).sqrt()).sum();
    let c = (r as f64 + 1.0) * r as f64 / 2.0;
    s * s / (z * (q + c))
}
