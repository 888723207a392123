//! Data-parallel training: the queries cut into shards, one per rank of a [`ThreadGroup`], give the model one
//! process trains on all of them, bit for bit, at 1, 2 and 3 ranks — `lambdamart` and `mart` with bagged queries
//! and features, missing values, a wide (two-byte) feature, ERR weights and sampled pairs, and `random-forest` with its
//! out-of-bag estimate. A rank may hold no query.

use ltr_core::{FitContext, Forest, ThreadGroup};
use ltr_data::{generate_letor_like, Dataset, FeatureMatrix, SyntheticConfig};
use ltr_trees::{
    train_gbdt, train_gbdt_ranks, train_random_forest, train_random_forest_ranks, GbdtParams,
    LambdaMetric, LambdaSettings, Objective, PairMethod, RandomForestParams,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// 40 queries of 10–40 documents, 8 features; feature 0 partly missing, feature 1 with about 700 distinct values.
fn data() -> Dataset {
    let base = generate_letor_like(&SyntheticConfig {
        queries: 40,
        min_docs: 10,
        max_docs: 40,
        features: 8,
        seed: 17,
        ..Default::default()
    })
    .unwrap();
    let FeatureMatrix::Dense(mut x) = base.features().clone() else {
        panic!("dense")
    };
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    for mut row in x.rows_mut() {
        if rng.random_bool(0.15) {
            row[0] = f32::NAN;
        }
        row[1] = rng.random_range(0..700) as f32 * 0.25;
    }
    Dataset::new(
        FeatureMatrix::Dense(x),
        base.labels().to_vec(),
        base.query_offsets().to_vec(),
        base.qids().to_vec(),
    )
    .unwrap()
}

/// The queries cut at `cuts` (query numbers), one shard per rank.
fn shards(ds: &Dataset, cuts: &[usize]) -> Vec<Dataset> {
    cuts.windows(2)
        .map(|w| ds.select_queries(&(w[0]..w[1]).collect::<Vec<_>>()))
        .collect()
}

fn bits(f: &Forest) -> String {
    serde_json::to_string(f).unwrap()
}

const CUTS: [&[usize]; 4] = [&[0, 40], &[0, 17, 40], &[0, 1, 30, 40], &[0, 0, 25, 40]];

#[test]
fn boosting_over_ranks_gives_the_one_process_model() {
    let ds = data();
    let mut lambdamart = GbdtParams::lambdamart();
    lambdamart.trees = 12;
    lambdamart.tree.min_docs_in_leaf = 5;
    lambdamart.tree.query_fraction = 0.6;
    lambdamart.tree.feature_fraction = 0.7;
    lambdamart.tree.max_bin = 1000;
    let mut mart = GbdtParams::mart();
    mart.trees = 8;
    mart.tree.max_bin = 16;
    // Sampled pairs draw by global query number; ERR's largest grade is the data's (2 here, on every rank).
    let mut sampled = lambdamart;
    sampled.trees = 6;
    sampled.objective = Objective::LambdaRank(LambdaSettings {
        metric: LambdaMetric::Err { max_grade: 2.0 },
        pairs: PairMethod::Mean { pairs_per_doc: 2 },
        ..LambdaSettings::default()
    });
    for p in [lambdamart, mart, sampled] {
        let ctx = FitContext::new(11);
        let single = train_gbdt(&p, &ds, &ctx).unwrap();
        assert_eq!(single.forest.trees.len(), p.trees);
        for cuts in CUTS {
            let parts = shards(&ds, cuts);
            let runs = ThreadGroup::run(parts.len(), |comm| {
                let shard = &parts[ltr_core::Allreduce::rank(comm)];
                train_gbdt_ranks(&p, shard, &FitContext::new(11), None, comm)
            });
            let mut start = 0;
            for (rank, run) in runs.into_iter().enumerate() {
                let run = run.unwrap();
                assert_eq!(
                    bits(&run.forest),
                    bits(&single.forest),
                    "{cuts:?} rank {rank}"
                );
                // Each rank's training scores are its documents' slice of the one-process scores.
                let n = parts[rank].n_docs();
                assert_eq!(run.train_scores, single.train_scores[start..start + n]);
                start += n;
            }
        }
    }
}

#[test]
fn a_random_forest_over_ranks_is_the_one_process_forest() {
    let ds = data();
    let p = RandomForestParams {
        trees: 6,
        ..Default::default()
    };
    // NDCG@10 of the out-of-bag queries: every rank measures them all, so it gets the one-process value.
    let ndcg: ltr_metrics::Metric = "NDCG@10".parse().unwrap();
    let measure = |d: &Dataset, s: &[f64]| {
        let e = ltr_metrics::evaluate(d, s, &[ndcg], &ltr_metrics::Convention::default()).unwrap();
        Ok::<f64, ltr_core::LtrError>(e.results[0].mean)
    };
    let ctx = FitContext::new(4).with_measure(&measure);
    let single = train_random_forest(&p, &ds, &ctx).unwrap();
    let oob = single.out_of_bag.expect("bags leave queries out");
    assert!(oob > 0.0 && oob < 1.0, "{oob}");
    for cuts in &CUTS[1..] {
        let parts = shards(&ds, cuts);
        let runs = ThreadGroup::run(parts.len(), |comm| {
            let shard = &parts[ltr_core::Allreduce::rank(comm)];
            train_random_forest_ranks(&p, shard, &ctx, comm)
        });
        for run in runs {
            let run = run.unwrap();
            assert_eq!(bits(&run.forest), bits(&single.forest), "{cuts:?}");
            assert_eq!(
                run.out_of_bag.map(f64::to_bits),
                Some(oob.to_bits()),
                "{cuts:?}"
            );
        }
    }
}
