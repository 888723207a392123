//! The memory estimate before a run: its parts by hand on a small case, and how it moves with the settings.

use crate::common::letor;
use ltr_core::ParamGuard;
use ltr_data::{generate_letor_like, SyntheticConfig};
use ltr_neural::NeuralParams;

#[test]
fn the_estimate_counts_data_parameters_and_a_batchs_activations() {
    let data = letor(30, 2); // 8 features, 5–25 documents a query
    let (n, d) = (data.n_docs() as u64, 8u64);
    let p = NeuralParams::default()
        .sizes(vec![16])
        .batch_size(4)
        .slate_length(10);
    let e = p.clone().check().unwrap().memory_estimate(&data);
    assert_eq!(e.n_parameters, 8 * 16 + 16 + 16 + 1);
    // Nothing: the features, grades and offsets are read in place. BCE's scaled grades are held, as f64.
    assert_eq!(e.data_copy, 0);
    let bce = p.clone().loss(ltr_neural::Loss::Bce).check().unwrap();
    assert_eq!(bce.memory_estimate(&data).data_copy, n * 8);
    // The largest batch: four queries, each capped at 10 documents (every query here has at least 5).
    let mut lens: Vec<u64> = (0..data.n_queries())
        .map(|q| data.query_range(q).len().min(10) as u64)
        .collect();
    lens.sort_unstable_by(|a, b| b.cmp(a));
    let rows: u64 = lens[..4].iter().sum();
    assert_eq!(e.batch_rows, rows);
    assert_eq!(
        e.piece_rows, rows,
        "a batch of 4 short queries is one piece"
    );
    // One chunk, one group: the network, Adam's moments, the best copy, transposes, the sum and one partial.
    assert_eq!(e.parameters, 4 * e.n_parameters * 7);
    // Rows × (2 input copies, the layer's output and activation, the backward's two), 6 per-row numbers of the
    // piece and the batch's row numbers and labels (4 f32 values a row).
    assert_eq!(
        e.activations,
        4 * (2 * rows * d + 2 * rows * 16 + 2 * rows * 16 + 6 * rows + 4 * rows)
    );
    assert_eq!(e.total(), e.data_copy + e.parameters + e.activations);
    // Dropout and a normalisation keep a mask and an x̂ per value; attention adds heads × n² per query.
    let more = p
        .clone()
        .dropout(0.1)
        .batch_norm(true)
        .check()
        .unwrap()
        .memory_estimate(&data);
    assert_eq!(more.activations - e.activations, 4 * 2 * rows * 16);
    // An encoder network without batch norm goes query by query: its estimate holds the longest queries, one a
    // thread (two here), not the piece's four.
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    let att = |heads, threads| {
        pool(threads).install(|| {
            p.clone()
                .blocks(1)
                .heads(heads)
                .d_ff(8)
                .check()
                .unwrap()
                .memory_estimate(&data)
        })
    };
    let squares: u64 = lens[..2].iter().map(|n| n * n).sum();
    let (two, four) = (att(2, 2), att(4, 2));
    let alone = att(2, 1);
    assert!(
        alone.activations < two.activations,
        "one query held, not two"
    );
    // Queries of at most 64 documents keep every head's attention weights (longer ones have them recomputed a head
    // at a time); with attention dropout each head's mask holds a bit an entry.
    assert_eq!(four.activations - two.activations, 4 * 2 * squares);
    let dropped = |heads| {
        pool(2).install(|| {
            p.clone()
                .blocks(1)
                .heads(heads)
                .d_ff(8)
                .encoder_dropout(0.5)
                .check()
                .unwrap()
                .memory_estimate(&data)
        })
    };
    let rows_held: u64 = lens[..2].iter().sum();
    let mask_bytes =
        |heads: u64| (2 * rows_held * 16 + heads * squares + rows_held * 8).div_ceil(8);
    assert_eq!(
        dropped(4).activations - dropped(2).activations,
        4 * 2 * squares + mask_bytes(4) - mask_bytes(2)
    );
    assert!(two.n_parameters > e.n_parameters);
}

/// Lean (`memory=lean`): a step whose queries hold a mean of at least 64 documents keeps the transposes of each
/// encoder block's first feed-forward layer only (`encoder::Transposes`), so the estimate's parameters lose the
/// other five layers' weights once; and no group is parked, so at 2 threads one gradient less. `auto` is lean only
/// where the lean estimate keeps within the bound: not for this network, large beside its data.
#[test]
fn lean_keeps_fewer_transposes_and_parks_no_group() {
    let at_batch = |docs: usize, lean: Option<bool>, threads: usize, batch: usize| {
        let data = generate_letor_like(&SyntheticConfig {
            queries: 32,
            min_docs: docs,
            max_docs: docs,
            features: 8,
            seed: 3,
            ..SyntheticConfig::default()
        })
        .unwrap();
        crate::common::with_threads(threads, || {
            let p = NeuralParams::default()
                .sizes(vec![16])
                .blocks(2)
                .heads(2)
                .d_ff(24)
                .batch_size(batch);
            let p = match lean {
                Some(l) => p.lean(l),
                None => p,
            };
            let v = p.check().unwrap();
            (v.memory_estimate(&data), v.lean_for(&data))
        })
    };
    let at = |docs, lean, threads| at_batch(docs, lean, threads, 4);
    let ((speed, chose), (lean, _)) = (at(64, None, 1), at(64, Some(true), 1));
    assert!(!chose, "auto keeps speed where the bound is out of reach");
    assert_eq!(speed, at(64, Some(false), 1).0);
    // One query held (one thread), one group: the 6 + 1 parameter copies, less two blocks of four 16 × 16
    // projections and a 24 × 16 feed-forward layer; `dyᵀ` and `dxᵀ` of the longest query besides.
    assert_eq!(speed.parameters, 4 * speed.n_parameters * 7);
    assert_eq!(
        lean.parameters,
        speed.parameters - 4 * 2 * (4 * 16 * 16 + 24 * 16)
    );
    assert_eq!(lean.activations - speed.activations, 4 * 64 * (24 + 16));
    // Queries of 63 documents: every transpose kept, lean or not (at one thread nothing is parked either way).
    assert_eq!(at(63, Some(true), 1).0, at(63, Some(false), 1).0);
    // Two threads and batches of 32 queries (four groups of 8): a group a thread, and one parked unless lean.
    let (speed2, lean2) = (
        at_batch(63, Some(false), 2, 32).0,
        at_batch(63, Some(true), 2, 32).0,
    );
    assert_eq!(
        speed2.parameters - lean2.parameters,
        4 * speed2.n_parameters
    );
}

/// A batch larger than a piece is held a piece at a time: the activations stop growing with the batch (but for its
/// row numbers and labels); batch normalisation takes the whole batch.
#[test]
fn the_estimate_holds_a_piece_not_the_batch() {
    let data = generate_letor_like(&SyntheticConfig {
        queries: 40,
        min_docs: 200,
        max_docs: 200,
        features: 8,
        seed: 3,
        ..SyntheticConfig::default()
    })
    .unwrap();
    let at = |batch: usize, bn: bool| {
        NeuralParams::default()
            .sizes(vec![16])
            .batch_size(batch)
            .batch_norm(bn)
            .check()
            .unwrap()
            .memory_estimate(&data)
    };
    let (small, big) = (at(20, false), at(40, false));
    // 20 queries of 200 documents fill a piece of 4,096; 40 are two pieces.
    assert_eq!((small.batch_rows, small.piece_rows), (4000, 4000));
    assert_eq!((big.batch_rows, big.piece_rows), (8000, 4000));
    assert_eq!(big.parameters, small.parameters);
    assert_eq!(big.activations - small.activations, 4 * 4 * 4000);
    // Batch normalisation goes in pieces too (its statistics summed over them): the piece, not the batch.
    let bn = at(40, true);
    assert_eq!(bn.piece_rows, 4000);
    assert_eq!(bn.activations - big.activations, 4 * 4000 * 16);
}

/// `piece-rows=auto` (the default) keeps 4,096 documents a piece unless a feed-forward network's estimate there
/// would take the process past 1.5 × (data + model + Adam) while a smaller piece would not: then the largest of
/// 2,048, 1,024 and 512 within the bound. Where no piece meets it (a network large beside its data), and for encoder
/// or batch-normalised networks, 4,096; a given piece is taken as it is.
#[test]
fn auto_pieces_shrink_only_where_the_bound_can_be_met() {
    // 120,000 documents of 8 features beside a network of about 5,000 parameters: activations, not parameters,
    // decide.
    let big = generate_letor_like(&SyntheticConfig {
        queries: 600,
        min_docs: 200,
        max_docs: 200,
        features: 8,
        seed: 4,
        ..SyntheticConfig::default()
    })
    .unwrap();
    let data = big.feature_memory_bytes()
        + 4 * big.labels().len() as u64
        + 8 * big.query_offsets().len() as u64;
    let p = NeuralParams::default().sizes(vec![64, 64]).dropout(0.1);
    let at = |rows: usize| {
        p.clone()
            .piece_rows(rows)
            .check()
            .unwrap()
            .memory_estimate(&big)
    };
    let within = |rows: usize| {
        let e = at(rows);
        2 * (data + e.total()) <= 3 * (data + 12 * e.n_parameters)
    };
    let auto = p.clone().check().unwrap();
    let chosen = auto.piece_rows_for(&big);
    assert!(!within(4096), "the default piece passes the bound here");
    assert!([2048, 1024, 512].contains(&chosen), "{chosen}");
    assert!(within(chosen), "{chosen}");
    let larger = [4096, 2048, 1024, 512]
        .into_iter()
        .rev()
        .find(|&r| r > chosen)
        .unwrap();
    assert!(!within(larger), "{chosen}: {larger} fits too");
    assert_eq!(auto.memory_estimate(&big), at(chosen));
    // A given piece is taken as it is.
    assert_eq!(
        p.clone()
            .piece_rows(100)
            .check()
            .unwrap()
            .piece_rows_for(&big),
        100
    );
    // Encoder and batch-normalised networks keep 4,096.
    for q in [
        p.clone().blocks(1).heads(2).d_ff(8),
        p.clone().batch_norm(true),
    ] {
        assert_eq!(q.check().unwrap().piece_rows_for(&big), 4096);
    }
    // A network large beside its data: no piece meets the bound, so the fastest.
    let small = letor(30, 2);
    let wide = NeuralParams::default()
        .sizes(vec![512, 512])
        .check()
        .unwrap();
    assert_eq!(wide.piece_rows_for(&small), 4096);
}
