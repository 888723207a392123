use ltr_pairs::*;

/// A run of click copies takes its one-top Hessian products all at once, each copy's bit for bit the general
/// sweeps': lists of more and fewer than 32 copies, ties, margins of exactly 1, scores beyond 2⁵³, infinities
/// and NaNs, zero and negative zero directions, zero pair weights; zero query weights leave the run to the
/// query-by-query path.
#[test]
fn a_run_of_one_top_copies_is_each_copy_bit_for_bit() {
    use ltr_data::{generate_letor_like, SyntheticConfig};
    use rand::{Rng, SeedableRng};
    let base = generate_letor_like(&SyntheticConfig {
        queries: 5,
        min_docs: 2,
        max_docs: 40,
        features: 3,
        seed: 8,
        ..Default::default()
    })
    .unwrap();
    let (ds, rows) = super::objective::one_click_copies(&base);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
    let mut taken = 0;
    for round in 0..40 {
        let scale = [0.5, 1.0, 1e17, 3e300][round % 4];
        let on_base: Vec<f64> = (0..base.n_docs())
            .map(|_| match (round % 7, rng.random_range(0..12)) {
                (3, 0) => f64::NAN,
                (3, 1) => f64::INFINITY,
                (3, 2) => f64::NEG_INFINITY,
                _ => rng.random_range(-6..6) as f64 * scale,
            })
            .collect();
        let p_base = super::objective::random_direction(&mut rng, base.n_docs());
        let scores: Vec<f64> = rows.iter().map(|&r| on_base[r]).collect();
        let p: Vec<f64> = rows.iter().map(|&r| p_base[r]).collect();
        let mut obj = PairwiseObjective::new(&ds, PairLoss::SquaredHinge)
            .with_level_weights(LevelWeights::uniform(2).scaled([1.0, 0.0, 0.3][round % 3]));
        match round % 5 {
            1 => {
                obj = obj.with_query_weights((0..ds.n_queries()).map(|q| (q % 3) as f64).collect())
            }
            2 => {
                obj = obj.with_query_weights(
                    (0..ds.n_queries())
                        .map(|_| rng.random::<f64>() * 3.0)
                        .collect(),
                )
            }
            _ => {}
        }
        let g = obj.gradient(&scores);
        let runs = obj.shared_rows();
        assert!(runs.len() < ds.n_queries() / 4);
        for r in 0..runs.len() {
            let queries = runs.run(r);
            let lead = ds.query_range(queries.start);
            let m = lead.len();
            let mut fast = vec![9.0; m * queries.len()];
            let ran = obj.run_one_top_hessian(&g, queries.clone(), &p[lead], &mut fast);
            if round % 5 != 1 {
                assert_eq!(ran, queries.len() > 1, "round {round}");
            }
            if !ran {
                continue;
            }
            taken += 1;
            for (k, q) in queries.enumerate() {
                let rq = ds.query_range(q);
                let mut sweeps = vec![7.0; m];
                obj.query_hessian_sweeps(q, &scores, &g.order[rq.clone()], &p[rq], &mut sweeps);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&fast[k * m..(k + 1) * m]),
                    bits(&sweeps),
                    "round {round} query {q}"
                );
            }
        }
    }
    assert!(taken > 100, "{taken} runs taken at once");
}
