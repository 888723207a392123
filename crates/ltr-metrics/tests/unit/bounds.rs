use ltr_metrics::{phi_lower_bound, phi_metric as phi};
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
