use ltr_neural::step::{pieces, step_on};
use ltr_neural::Loss;
use ltr_neural::NeuralParams;

/// Queries of the given lengths: their offsets, `d` deterministic features a row in [-1, 1) and grades 0–4.
fn batch(lengths: &[usize], d: usize) -> (Vec<usize>, Vec<f32>, Vec<f64>) {
    let mut offsets = vec![0];
    for l in lengths {
        offsets.push(offsets.last().unwrap() + l);
    }
    let n = *offsets.last().unwrap();
    let x = (0..n * d)
        .map(|i| ((i * 7919 % 1000) as f32 / 500.0) - 1.0)
        .collect();
    let labels = (0..n).map(|i| ((i * 31) % 5) as f64).collect();
    (offsets, x, labels)
}

/// Every parameter's bits, in the optimiser's order.
fn bits(net: &ltr_core::neural::NeuralNet) -> Vec<u32> {
    let mut net = net.clone();
    ltr_neural::net::parameters_mut(&mut net)
        .concat()
        .iter()
        .map(|g| g.to_bits())
        .collect()
}

#[test]
fn pieces_hold_whole_queries_up_to_the_limit() {
    // Query lengths 3, 4, 2, 9, 1, 1.
    let offsets = [0, 3, 7, 9, 18, 19, 20];
    assert_eq!(pieces(&offsets, 7), vec![0..2, 2..3, 3..4, 4..6]);
    assert_eq!(pieces(&offsets, 9), vec![0..3, 3..4, 4..6]);
    assert_eq!(pieces(&offsets, usize::MAX), vec![0..6]);
    assert_eq!(
        pieces(&offsets, 1),
        vec![0..1, 1..2, 2..3, 3..4, 4..5, 5..6]
    );
    assert!(pieces(&[0], 7).is_empty());
}

/// A batch-normalised network on a batch of many pieces: the statistics and backward sums are the whole
/// batch's, summed over the pieces, so the scores, loss, gradient and batch statistics equal one piece's to
/// rounding (the chunks' f64 sums group the rows differently); the same bits at 1 and 2 threads; and a batch
/// that fits one piece is summed exactly as the whole batch.
#[test]
fn batch_norm_over_pieces_is_the_batch_in_one_piece() {
    let d = 5;
    let (offsets, x, labels) = batch(&[7, 30, 1, 12, 25, 3, 40, 9, 18, 2, 33, 11, 140, 60], d);
    let n = *offsets.last().unwrap();
    let loss = Loss::parse("ndcgloss2pp").unwrap();
    let net = NeuralParams::default()
        .sizes(vec![8, 6, 4])
        .batch_norm(true)
        .init(d, 3);
    let one = step_on(&net, &x, &labels, &offsets, loss, usize::MAX);
    let fits = step_on(&net, &x, &labels, &offsets, loss, n);
    assert_eq!(one.value.to_bits(), fits.value.to_bits());
    assert_eq!(one.scores, fits.scores);
    let pool = |t| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(t)
            .build()
            .unwrap()
    };
    let many = pool(1).install(|| step_on(&net, &x, &labels, &offsets, loss, 100));
    let many2 = pool(2).install(|| step_on(&net, &x, &labels, &offsets, loss, 100));
    assert!(pieces(&offsets, 100).len() > 3);
    assert_eq!(many.value.to_bits(), many2.value.to_bits());
    assert_eq!(many.scores, many2.scores);
    let close = |a: f64, b: f64, top: f64| (a - b).abs() <= 1e-5 * top.max(1e-30);
    assert!(
        close(one.value, many.value, one.value.abs()),
        "{} against {}",
        one.value,
        many.value
    );
    let top_s = one.scores.iter().fold(0f32, |m, v| m.max(v.abs())) as f64;
    for (a, b) in one.scores.iter().zip(&many.scores) {
        assert!(
            close(f64::from(*a), f64::from(*b), top_s),
            "score {a} against {b}"
        );
    }
    for (a, b) in one.batch.iter().zip(&many.batch) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        assert_eq!(a.n, b.n);
        for (u, v) in a.mean.iter().zip(&b.mean).chain(a.var.iter().zip(&b.var)) {
            assert!((u - v).abs() <= 1e-9 * (1.0 + u.abs()), "{u} against {v}");
        }
    }
    let (mut a, mut b, mut c) = (one.grad, many.grad, many2.grad);
    let (a, b, c) = (
        ltr_neural::net::parameters_mut(&mut a),
        ltr_neural::net::parameters_mut(&mut b),
        ltr_neural::net::parameters_mut(&mut c),
    );
    let top = a
        .iter()
        .flat_map(|u| u.iter())
        .fold(0f32, |m, g| m.max(g.abs()));
    assert!(top > 0.0);
    for ((u, v), w) in a.iter().zip(&b).zip(&c) {
        assert_eq!(
            v.iter().map(|g| g.to_bits()).collect::<Vec<_>>(),
            w.iter().map(|g| g.to_bits()).collect::<Vec<_>>()
        );
        for (g, h) in u.iter().zip(v.iter()) {
            assert!((g - h).abs() <= 1e-4 * top, "{g} against {h}");
        }
    }
}

/// A batch in many pieces gives the scores of one piece bit for bit (each row's score is its own), the loss
/// and the gradient to rounding (only the grouping of the sums moves).
#[test]
fn a_batch_in_pieces_is_the_batch_in_one_piece() {
    let d = 5;
    let (offsets, x, labels) = batch(&[7, 30, 1, 12, 25, 3, 40, 9, 18, 2, 33, 11], d);
    for (blocks, loss) in [(0, "ranknet"), (0, "neuralndcg"), (1, "ndcgloss2pp")] {
        let loss = Loss::parse(loss).unwrap();
        let net = NeuralParams::default()
            .sizes(vec![8, 4])
            .layer_norm(true)
            .input_norm(true)
            .blocks(blocks)
            .heads(2)
            .d_ff(6)
            .init(d, 3);
        let one = step_on(&net, &x, &labels, &offsets, loss, usize::MAX);
        let many = step_on(&net, &x, &labels, &offsets, loss, 40);
        assert!(pieces(&offsets, 40).len() > 4);
        assert_eq!(one.scores, many.scores, "{loss:?}");
        // The loss is summed piece by piece: the same terms, grouped otherwise (to rounding).
        let gap = (one.value - many.value).abs();
        assert!(
            gap <= 1e-12 * one.value.abs(),
            "{loss:?}: {} against {}",
            one.value,
            many.value
        );
        let (mut a, mut b) = (one.grad, many.grad);
        let (a, b) = (
            ltr_neural::net::parameters_mut(&mut a),
            ltr_neural::net::parameters_mut(&mut b),
        );
        // f32 sums in another order: within 1e-5 of the largest gradient component.
        let top = a
            .iter()
            .flat_map(|u| u.iter())
            .fold(0f32, |m, g| m.max(g.abs()));
        assert!(top > 0.0);
        for (u, v) in a.iter().zip(&b) {
            for (g, h) in u.iter().zip(v.iter()) {
                assert!((g - h).abs() <= 1e-5 * top, "{loss:?}: {g} against {h}");
            }
        }
    }
}

/// A click training set's query weights multiply each query's share of the loss and gradient: weights of 1 give
/// the unweighted step bit for bit, a query of weight 0 adds nothing, and the weighted gradient is the weighted
/// sum of each query's alone (the loss normaliser is the batch's, whatever the weights).
#[test]
fn query_weights_scale_each_querys_loss_and_gradient() {
    use ltr_neural::step::loss_and_gradient_weighted;
    // Every parameter, in one order.
    let parameters = |net: &ltr_core::neural::NeuralNet| -> Vec<f32> {
        let mut net = net.clone();
        ltr_neural::net::parameters_mut(&mut net).concat()
    };
    let d = 4;
    let (offsets, x, labels) = batch(&[5, 3, 7], d);
    for name in ["listnet", "ndcgloss2pp", "ranknet"] {
        let loss = Loss::parse(name).unwrap();
        let net = NeuralParams::default().sizes(vec![6]).init(d, 11);
        let plain = ltr_neural::loss_and_gradient(&net, &x, &labels, &offsets, loss);
        let ones = loss_and_gradient_weighted(&net, &x, &labels, &offsets, loss, &[1.0; 3]);
        assert_eq!(plain.0.to_bits(), ones.0.to_bits(), "{name}");
        assert_eq!(parameters(&plain.2), parameters(&ones.2), "{name}");
        let w = [2.5, 0.0, 0.75];
        let weighted = loss_and_gradient_weighted(&net, &x, &labels, &offsets, loss, &w);
        let alone: Vec<_> = (0..3)
            .map(|q| {
                let mut e = [0.0; 3];
                e[q] = 1.0;
                loss_and_gradient_weighted(&net, &x, &labels, &offsets, loss, &e)
            })
            .collect();
        assert!(
            alone[1].0 != 0.0,
            "{name}: the middle query has a loss of its own"
        );
        let value: f64 = (0..3).map(|q| w[q] * alone[q].0).sum();
        assert!(
            (weighted.0 - value).abs() <= 1e-12 * value.abs(),
            "{name}: {} against {value}",
            weighted.0
        );
        let expect: Vec<f64> = (0..parameters(&weighted.2).len())
            .map(|i| {
                (0..3)
                    .map(|q| w[q] * f64::from(parameters(&alone[q].2)[i]))
                    .sum()
            })
            .collect();
        let top = expect.iter().fold(0f64, |m, v| m.max(v.abs()));
        for (g, e) in parameters(&weighted.2).iter().zip(&expect) {
            assert!(
                (f64::from(*g) - e).abs() <= 1e-5 * top,
                "{name}: {g} against {e}"
            );
        }
        assert!(parameters(&weighted.2) != parameters(&plain.2), "{name}");
    }
}

/// An encoder network's step query by query (what training does: a query's activations held a thread) gives the
/// bits of the layer-by-layer passes over a whole piece: the loss, the scores and every gradient component, with
/// dropout, query weights, several groups of 8 queries a piece and several pieces, at 1 and 3 threads.
#[test]
fn query_by_query_is_layer_by_layer_bit_for_bit() {
    use ltr_neural::step::{step_taking, Passes};
    let d = 5;
    let lengths = [
        7, 30, 1, 12, 25, 3, 40, 9, 18, 2, 33, 11, 6, 14, 1, 27, 8, 5, 19, 4,
    ];
    let (offsets, x, labels) = batch(&lengths, d);
    let weights: Vec<f64> = (0..lengths.len()).map(|q| 0.5 + q as f64 / 7.0).collect();
    let net = NeuralParams::default()
        .sizes(vec![8])
        .layer_norm(true)
        .input_norm(true)
        .blocks(2)
        .heads(2)
        .d_ff(6)
        .init(d, 5);
    for name in ["listnet", "ndcgloss2pp", "ranknet", "listmle"] {
        let loss = Loss::parse(name).unwrap();
        for limit in [usize::MAX, 60, 1] {
            for (dropout, w) in [(None, None), (Some((0.2, 0.1, 9)), Some(&weights[..]))] {
                let run = |passes| {
                    step_taking(&net, &x, &labels, &offsets, loss, limit, dropout, w, passes)
                };
                // Query by query at 1 and 3 threads: its workers finish out of turn and park groups at 3.
                let fewest = |threads| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .unwrap()
                        .install(|| run(Passes::Fewest))
                };
                let (a, b) = (fewest(3), run(Passes::LayerByLayer));
                let one = fewest(1);
                assert_eq!(one.value.to_bits(), a.value.to_bits());
                assert_eq!(bits(&one.grad), bits(&a.grad));
                let what = format!("{name}, {limit} rows a piece, dropout {dropout:?}");
                assert_eq!(a.value.to_bits(), b.value.to_bits(), "{what}");
                assert_eq!(a.scores, b.scores, "{what}");
                let (ga, gb) = (bits(&a.grad), bits(&b.grad));
                assert!(ga.iter().any(|&g| g != 0), "{what}: a gradient");
                assert_eq!(ga, gb, "{what}");
            }
        }
    }
}

/// `memory=lean` changes no bit: on queries of a mean of 64 documents and more (so the lean step keeps no
/// transposes of the encoder's projections and second feed-forward layers) and on short ones, with dropout and
/// query weights, at 3 threads (where the default step parks groups and the lean one waits) and 1.
#[test]
fn a_lean_step_is_the_default_step_bit_for_bit() {
    use ltr_neural::step::{step_taking, Passes};
    let d = 5;
    let net = NeuralParams::default()
        .sizes(vec![8])
        .blocks(2)
        .heads(2)
        .d_ff(12)
        .init(d, 3);
    let long = [
        70, 90, 65, 120, 80, 66, 100, 75, 64, 130, 71, 88, 69, 95, 77, 140, 66, 81,
    ];
    for lengths in [&long[..], &[7, 30, 1, 12, 25, 3, 40, 9, 18, 2][..]] {
        let (offsets, x, labels) = batch(lengths, d);
        let weights: Vec<f64> = (0..lengths.len()).map(|q| 0.5 + q as f64 / 7.0).collect();
        let loss = Loss::parse("ndcgloss2pp").unwrap();
        let on = |threads: usize, passes| {
            crate::common::with_threads(threads, || {
                let (l, w) = (&labels, Some(&weights[..]));
                let drop = Some((0.2, 0.1, 9));
                step_taking(&net, &x, l, &offsets, loss, usize::MAX, drop, w, passes)
            })
        };
        let fewest = on(3, Passes::Fewest);
        assert!(bits(&fewest.grad).iter().any(|&g| g != 0), "a gradient");
        for threads in [1, 3] {
            let lean = on(threads, Passes::Lean);
            let what = format!("{} queries, {threads} threads", lengths.len());
            assert_eq!(lean.value.to_bits(), fewest.value.to_bits(), "{what}");
            assert_eq!(lean.scores, fewest.scores, "{what}");
            assert_eq!(bits(&lean.grad), bits(&fewest.grad), "{what}");
        }
    }
}

/// A feed-forward step with fewer groups of 8 chunks than threads shares each group's affine maps among the
/// threads (a weight gradient's rows in runs, the chunks' `dx` side by side): the loss, the scores and every
/// gradient component are those of one thread bit for bit, for pieces of one group, of part of a group and of two
/// groups, with dropout (ReLU's and dropout's zeros take the sparse products), layer or batch norm, and inputs
/// wide enough to split (70 features, layers of 96 and 64).
#[test]
fn a_group_shared_among_threads_is_one_thread_bit_for_bit() {
    use ltr_neural::step::{step_taking, Passes};
    let d = 70;
    let lengths: Vec<usize> = (0..40).map(|q| 5 + (q * 37) % 60).collect();
    let (offsets, x, labels) = batch(&lengths, d);
    assert!(
        *offsets.last().unwrap() > 1024,
        "two groups of 8 chunks of 128 rows"
    );
    let loss = Loss::parse("ndcgloss2pp").unwrap();
    for (norm, batch_norm) in [(false, false), (true, false), (false, true)] {
        let net = NeuralParams::default()
            .sizes(vec![96, 64])
            .layer_norm(norm)
            .input_norm(norm)
            .batch_norm(batch_norm)
            .init(d, 11);
        for limit in [usize::MAX, 300, 1] {
            let run = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| {
                        let dropout = Some((0.3, 0.0, 7));
                        step_taking(
                            &net,
                            &x,
                            &labels,
                            &offsets,
                            loss,
                            limit,
                            dropout,
                            None,
                            Passes::Fewest,
                        )
                    })
            };
            let one = run(1);
            assert!(bits(&one.grad).iter().any(|&g| g != 0));
            for threads in [2, 5] {
                let many = run(threads);
                let what = format!(
                    "norm {norm}, batch norm {batch_norm}, {limit} rows a piece, {threads} threads"
                );
                assert_eq!(one.value.to_bits(), many.value.to_bits(), "{what}");
                assert_eq!(one.scores, many.scores, "{what}");
                assert_eq!(bits(&one.grad), bits(&many.grad), "{what}");
            }
        }
    }
}
