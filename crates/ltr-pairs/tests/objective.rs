//! The O(n log n) pairwise loss, gradient and Hessian-vector product equal the explicit O(n²) sums; pair counts
//! and correctly ordered pairs equal enumeration; τ's closed form agrees with the Monte-Carlo simulation.

use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};
use ltr_pairs::*;
use rand::{Rng, SeedableRng};

fn data(seed: u64, grades: u32) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 12,
        min_docs: 1,
        max_docs: 40,
        features: 6,
        grades,
        seed,
        ..Default::default()
    })
    .unwrap()
}

/// Level weights τ(a, b) for every pair of `ds`'s grades a > b, drawn uniform in [0, 1) in row order.
fn random_level_weights(ds: &Dataset, rng: &mut impl Rng) -> LevelWeights {
    let k = Levels::new(ds).count();
    let mut tau = LevelWeights::zeros(k);
    for a in 0..k {
        for b in 0..a {
            tau.set(a, b, rng.random::<f64>());
        }
    }
    tau
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn sorted_sweeps_equal_explicit_sums() {
    for seed in 0..6u64 {
        let ds = data(seed, 2 + (seed % 4) as u32);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        // Scores on a coarse grid so that ties and exact margins of 1 occur.
        let scores: Vec<f64> = (0..ds.n_docs())
            .map(|_| rng.random_range(-6..6) as f64 * 0.5)
            .collect();
        let p: Vec<f64> = (0..ds.n_docs())
            .map(|_| rng.random::<f64>() - 0.5)
            .collect();
        let tau = random_level_weights(&ds, &mut rng);
        let mu: Vec<f64> = (0..ds.n_queries())
            .map(|_| rng.random::<f64>() * 3.0)
            .collect();
        for loss in [PairLoss::Hinge, PairLoss::SquaredHinge] {
            for weighted in [false, true] {
                let mut obj = PairwiseObjective::new(&ds, loss);
                if weighted {
                    obj = obj
                        .with_level_weights(tau.clone())
                        .with_query_weights(mu.clone());
                }
                let g = obj.gradient(&scores);
                let (l2, c2) = obj.gradient_explicit(&scores);
                assert!(
                    close(g.loss, l2),
                    "{loss:?} weighted={weighted}: {} vs {l2}",
                    g.loss
                );
                for (a, b) in g.coef.iter().zip(&c2) {
                    assert!(close(*a, *b), "{loss:?} coef {a} vs {b}");
                }
                if loss == PairLoss::SquaredHinge {
                    let h = obj.hessian_times(&g, &p);
                    let h2 = obj.hessian_times_explicit(&scores, &p);
                    for (a, b) in h.iter().zip(&h2) {
                        assert!(close(*a, *b), "Hv {a} vs {b}");
                    }
                }
            }
        }
    }
}

#[test]
fn counts_equal_enumeration() {
    let ds = data(3, 4);
    let all = PairSet::build(&ds, &PairScheme::AllDifferent);
    let per_q = count_pairs_per_query(&ds);
    for q in 0..ds.n_queries() {
        assert_eq!(all.query(q).len() as u64, per_q[q]);
    }
    let by_grade = count_pairs_per_grade(&ds);
    for ((s, t), c) in by_grade {
        let set = PairSet::build(&ds, &PairScheme::Grades(s, t));
        assert_eq!(set.len() as u64, c, "grade pair ({s},{t})");
        assert!(set
            .pairs
            .iter()
            .all(|p| ds.labels()[p.hi as usize] == s && ds.labels()[p.lo as usize] == t));
    }
    let adj = PairSet::build(&ds, &PairScheme::Adjacent);
    assert!(adj
        .pairs
        .iter()
        .all(|p| ds.labels()[p.hi as usize] - ds.labels()[p.lo as usize] == 1.0));
    let sampled = PairSet::build(
        &ds,
        &PairScheme::Sampled {
            per_query: 5,
            seed: 1,
        },
    );
    assert!((0..ds.n_queries()).all(|q| sampled.query(q).len() == all.query(q).len().min(5)));
}

#[test]
fn ordered_pairs_are_counted_as_by_enumeration_with_ties_counting_as_wrong() {
    let ds = data(5, 4);
    // Scores with many ties: a coarse function of the first feature.
    let scores: Vec<f64> = (0..ds.n_docs())
        .map(|i| (ds.row(i).get(0) * 4.0).floor() as f64)
        .collect();
    let all = PairSet::build(&ds, &PairScheme::AllDifferent);
    let expected = all
        .pairs
        .iter()
        .filter(|p| scores[p.hi as usize] > scores[p.lo as usize])
        .count() as u64;
    assert!(expected > 0 && expected < all.len() as u64);
    assert_eq!(count_ordered_pairs(&ds, &scores), expected);
    let perfect: Vec<f64> = ds.labels().iter().map(|&l| f64::from(l)).collect();
    assert_eq!(count_ordered_pairs(&ds, &perfect), all.len() as u64);
}

#[test]
fn query_weights_and_steps() {
    let ds = data(1, 3);
    let c = count_pairs_per_query(&ds);
    let mu = query_weights_mu(&ds);
    let max = *c.iter().max().unwrap() as f64;
    for (n, m) in c.iter().zip(&mu) {
        if *n > 0 {
            assert!(close(*m, max / *n as f64));
        }
    }
    assert!(mu.contains(&1.0));
    let eta = perceptron_query_steps(&ds);
    for (n, e) in c.iter().zip(&eta) {
        assert_eq!(*e, if *n == 0 { 0.0 } else { 1.0 / *n as f64 });
    }
}

#[test]
fn tau_simulation_agrees_with_closed_form() {
    let ds = data(5, 3);
    let exact = tau_closed_form(&ds, MissingGrade::CountZero);
    let sim = tau_monte_carlo(&ds, 4000, 9, MissingGrade::CountZero);
    let k = Levels::new(&ds).count();
    for a in 0..k {
        for b in 0..a {
            let (e, s) = (exact.get(a, b), sim.get(a, b));
            // Standard error of a mean of 12 queries × 4000 Bernoulli-like draws is below 0.005.
            assert!(
                (e - s).abs() < 0.02,
                "tau({a},{b}): closed {e} vs simulated {s}"
            );
        }
    }
    // Only pairs whose upper grade is a query's top grade can lower NDCG@1: tau(top, 0) > 0.
    assert!(exact.get(k - 1, 0) > 0.0);
}

#[test]
fn the_fused_gradient_pass_sums_what_the_separate_passes_sum() {
    for seed in 0..4u64 {
        let ds = data(seed, 2 + (seed % 4) as u32);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed + 100);
        let w: Vec<f64> = (0..ds.n_features())
            .map(|_| rng.random_range(-2.0..2.0))
            .collect();
        let scores = ds.scores(&w);
        for loss in [PairLoss::Hinge, PairLoss::SquaredHinge] {
            let obj = PairwiseObjective::new(&ds, loss);
            let (fused, sums) = obj.gradient_sums(&scores);
            let separate = obj.gradient(&scores);
            assert_eq!(fused.coef, separate.coef);
            assert_eq!(fused.loss.to_bits(), separate.loss.to_bits());
            assert_eq!(fused.query_losses(), separate.query_losses());
            let want =
                ltr_data::exact_transpose_times(&ds, &separate.coef, &[separate.query_losses()]);
            assert_eq!(sums.values(), want.values(), "seed {seed}, {loss:?}");
            assert!(sums.value(ds.n_features()) > 0.0, "a loss to sum");
        }
    }
}

/// A click-style training set: each base query copied once per document, the copy's label 1 on that document and 0
/// elsewhere, with a weight per copy (as `ltr_clicks::click_training_set` makes them), and base queries of one
/// document left single.
fn copies(seed: u64, sparse: bool) -> Dataset {
    let base = generate_letor_like(&SyntheticConfig {
        queries: 9,
        min_docs: 1,
        max_docs: 45,
        features: 7,
        seed,
        ..Default::default()
    })
    .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut rows, mut labels, mut offsets, mut qids, mut weights) =
        (Vec::new(), Vec::new(), vec![0], Vec::new(), Vec::new());
    for q in 0..base.n_queries() {
        let range = base.query_range(q);
        for clicked in range.clone() {
            for r in range.clone() {
                rows.push(r);
                labels.push(if r == clicked { 1.0 } else { 0.0 });
            }
            offsets.push(rows.len());
            qids.push(format!("{q}/c{clicked}"));
            weights.push(rng.random::<f64>() * 2.0);
        }
    }
    let mut ds = Dataset::new(base.select_rows_matrix(&rows), labels, offsets, qids)
        .unwrap()
        .with_query_weights(weights)
        .unwrap();
    if sparse {
        ds.to_sparse();
    }
    ds
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Queries sharing their rows are scored, sorted and multiplied by the data once per run, and every sum stays the
/// one computed query by query, bit for bit: the scores, the loss and gradient sums, the Hessian product sums.
#[test]
fn runs_of_shared_rows_keep_every_sum() {
    for (seed, sparse) in [(1u64, false), (2, true), (3, false)] {
        let ds = copies(seed, sparse);
        let obj = PairwiseObjective::new(&ds, PairLoss::SquaredHinge)
            .with_query_weights(ds.query_weights().unwrap().to_vec());
        let runs = obj.shared_rows();
        assert!(runs.len() < ds.n_queries() / 4, "{} runs", runs.len());
        for r in 0..runs.len() {
            let q = runs.run(r);
            assert!(q.len() <= 32);
            let n = ds.query_range(q.start).len();
            assert!(q.clone().all(|x| ds.query_range(x).len() == n));
        }
        // Lists of more than 32 copies are several runs of one list, whose X v the Hessian product takes once.
        assert!((0..runs.n_lists()).any(|l| runs.list(l).len() > 1));
        assert_eq!(runs.list(runs.n_lists() - 1).end, runs.len());
        for l in 0..runs.n_lists() {
            assert!(runs.list(l).all(|r| runs.list_of_run(r) == l));
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let w: Vec<f64> = (0..ds.n_features())
            .map(|_| rng.random::<f64>() - 0.5)
            .collect();
        let v: Vec<f64> = (0..ds.n_features())
            .map(|_| rng.random::<f64>() - 0.5)
            .collect();
        let s = obj.scores(&w);
        assert!(same_bits(&s, &ds.scores(&w)));
        let (g, sums) = obj.gradient_sums(&s);
        let by_query = obj.gradient(&s);
        assert!(same_bits(&g.coef, &by_query.coef));
        assert!(same_bits(g.query_losses(), by_query.query_losses()));
        let expected =
            ltr_data::exact_transpose_times(&ds, &by_query.coef, &[by_query.query_losses()]);
        assert!(same_bits(&sums.values(), &expected.values()), "seed {seed}");
        let hv = obj.hessian_product_sums(&g, &v);
        let expected = ltr_data::exact_transpose_times(
            &ds,
            &obj.hessian_times(&by_query, &ds.scores(&v)),
            &[],
        );
        assert!(same_bits(&hv.values(), &expected.values()), "seed {seed}");
    }
}

/// Queries whose rows differ in one value, or in their number, are not one run.
#[test]
fn runs_need_the_same_rows() {
    let ds = data(4, 3);
    let obj = PairwiseObjective::new(&ds, PairLoss::SquaredHinge);
    assert_eq!(obj.shared_rows().len(), ds.n_queries());
    let twice = ds.select_queries(&[0, 0, 1, 1, 1, 2]);
    let obj = PairwiseObjective::new(&twice, PairLoss::SquaredHinge);
    assert_eq!(obj.shared_rows().query_offsets(), &[0, 2, 5, 6]);
    assert_eq!(obj.shared_rows().n_lists(), 3);
    let long = ds.select_queries(&[vec![0; 40], vec![1; 3]].concat());
    let obj = PairwiseObjective::new(&long, PairLoss::SquaredHinge);
    assert_eq!(obj.shared_rows().query_offsets(), &[0, 32, 40, 43]);
    assert_eq!(obj.shared_rows().n_lists(), 2);
    assert_eq!(obj.shared_rows().list(0), 0..2);
    assert_eq!(obj.shared_rows().list_of_run(2), 1);
}

/// A line search's probe ([`PairwiseObjective::loss_and_slope_sums`]) gives the loss and slope of
/// [`PairwiseObjective::gradient`] bit for bit, whatever order it carries in from the probe before: a fresh one,
/// the order of nearby scores, of far-away scores, or of other data's length. Scores on a coarse grid (ties,
/// margins of exactly 1), both losses, level and query weights, zero query weights.
#[test]
fn line_search_probes_are_the_gradients_bit_for_bit() {
    for seed in 0..6u64 {
        let ds = data(seed, 2 + (seed % 4) as u32);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(100 + seed);
        let base: Vec<f64> = (0..ds.n_docs())
            .map(|_| rng.random_range(-6..6) as f64 * 0.5)
            .collect();
        let dir: Vec<f64> = (0..ds.n_docs())
            .map(|_| match rng.random_range(0..4) {
                0 => 0.0,
                1 => rng.random_range(-3..3) as f64 * 0.25,
                _ => rng.random::<f64>() - 0.5,
            })
            .collect();
        let tau = random_level_weights(&ds, &mut rng);
        let mu: Vec<f64> = (0..ds.n_queries())
            .map(|q| {
                if q % 4 == 0 {
                    0.0
                } else {
                    rng.random::<f64>() * 3.0
                }
            })
            .collect();
        for loss in [PairLoss::Hinge, PairLoss::SquaredHinge] {
            for weighted in [false, true] {
                let mut obj = PairwiseObjective::new(&ds, loss);
                if weighted {
                    obj = obj
                        .with_level_weights(tau.clone())
                        .with_query_weights(mu.clone());
                }
                let mut order = if seed % 2 == 0 {
                    Vec::new()
                } else {
                    vec![0; 3]
                };
                // Bisection-like steps, then jumps back and forth.
                for k in [
                    0.0, 1.0, 2.0, 1.5, 1.25, 1.375, 1.3125, -7.0, 9.0, 1.3125, 0.0,
                ] {
                    let scores: Vec<f64> = base.iter().zip(&dir).map(|(b, d)| b + k * d).collect();
                    let g = obj.gradient(&scores);
                    let mut want = ltr_data::ExactVec::new(2);
                    for q in 0..ds.n_queries() {
                        let rows = ds.query_range(q);
                        let slope: f64 = g.coef[rows.clone()]
                            .iter()
                            .zip(&dir[rows])
                            .map(|(c, v)| c * v)
                            .sum();
                        want.add(0, g.query_losses()[q]);
                        want.add(1, slope);
                    }
                    let got = obj.loss_and_slope_sums(&scores, &dir, &mut order);
                    for s in 0..2 {
                        assert_eq!(
                            got.value(s).to_bits(),
                            want.value(s).to_bits(),
                            "seed {seed} {loss:?} weighted={weighted} k={k} sum {s}"
                        );
                    }
                }
            }
        }
    }
}
