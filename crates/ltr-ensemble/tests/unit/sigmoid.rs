use ltr_ensemble::sigmoid::{query_pass, sigmoid};

/// The definition, pair by pair, in input order.
fn explicit(lev: &[u16], s: &[f64], sigma: f64) -> (f64, Vec<f64>, f64) {
    let n = s.len();
    let (mut loss, mut c, mut correct, mut pairs) = (0.0, vec![0.0; n], 0.0, 0.0);
    for i in 0..n {
        for j in 0..n {
            if lev[i] > lev[j] {
                let d = s[i] - s[j];
                let f = sigmoid(sigma * d);
                loss += 1.0 - f;
                c[i] -= sigma * f * (1.0 - f);
                c[j] += sigma * f * (1.0 - f);
                pairs += 1.0;
                correct += if d > 0.0 {
                    1.0
                } else if d == 0.0 {
                    0.5
                } else {
                    0.0
                };
            }
        }
    }
    (loss, c, if pairs > 0.0 { correct / pairs } else { 0.0 })
}

#[test]
fn grouped_factored_pass_equals_the_pairwise_definition() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    // σ = 1 takes the factored path; σ = 500 with scores spread over [−3, 3] exceeds e^{±300} and takes the
    // per-pair stable path; ties in score and queries with one level are included.
    for (sigma, n) in [(1.0, 40), (500.0, 40), (1.0, 1), (2.0, 7)] {
        let lev: Vec<u16> = (0..n).map(|_| rng.random_range(0..3)).collect();
        let mut s: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 6.0 - 3.0).collect();
        if n > 2 {
            s[1] = s[0];
        }
        let mut c = vec![f64::NAN; n];
        let (loss, auc) = query_pass(&lev, &s, sigma, &mut c);
        let (loss_e, c_e, auc_e) = explicit(&lev, &s, sigma);
        assert!(
            (loss - loss_e).abs() <= 1e-12 * loss_e.abs().max(1.0),
            "σ={sigma}: {loss} vs {loss_e}"
        );
        assert!((auc - auc_e).abs() <= 1e-15, "σ={sigma}");
        for (a, b) in c.iter().zip(&c_e) {
            assert!(
                (a - b).abs() <= 1e-12 * (1.0 + b.abs()),
                "σ={sigma}: {a} vs {b}"
            );
        }
    }
}
