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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Φ ≥ bound for AP (Z = m = R) on random binary rankings.
        #[test]
        fn phi_at_least_its_lower_bound(rel in proptest::collection::vec(any::<bool>(), 1..60)) {
            let ranks: Vec<usize> = rel.iter().enumerate().filter(|(_, &r)| r).map(|(p, _)| p + 1).collect();
            let r = ranks.len();
            prop_assume!(r > 0);
            // Q = Σ over relevant documents of the non-relevant ones above it.
            let q: usize = ranks.iter().enumerate().map(|(i, &rk)| rk - 1 - i).sum();
            let ap = phi(r as f64, r, &ranks);
            prop_assert!(ap + 1e-12 >= phi_lower_bound(r as f64, r, q as f64, r));
            // RR and P@K members of the family as well.
            prop_assert!(phi(1.0, 1, &ranks) + 1e-12 >= phi_lower_bound(1.0, 1, q as f64, r));
        }
    }
}
