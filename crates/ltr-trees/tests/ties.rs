//! The order of equal scores in LambdaRank's ranking (`LambdaSettings::ties`): document order by default, a
//! seeded shuffle on request that is reproducible and removes the file order's bias.

use ltr_trees::{lambda_gradients, LambdaQuery, LambdaSettings, TieBreak};

fn gradients(labels: &[f32], scores: &[f64], ties: TieBreak, seed: u64) -> Vec<f64> {
    let s = LambdaSettings {
        ties,
        ..Default::default()
    };
    let (mut g, mut h) = (vec![0.0; labels.len()], vec![0.0; labels.len()]);
    lambda_gradients(
        labels,
        scores,
        &s,
        LambdaQuery::new(seed, 0, 0, 1.0),
        &mut g,
        &mut h,
    );
    g.iter().chain(&h).copied().collect()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Without ties the shuffle changes nothing: the same gradients, bit for bit, as document order.
#[test]
fn seeded_shuffle_leaves_distinct_scores_alone() {
    let labels = [2.0, 0.0, 1.0, 0.0, 3.0, 1.0, 0.0, 0.0, 2.0, 1.0, 0.0, 4.0];
    let scores: Vec<f64> = (0..12).map(|i| ((i * 7) % 12) as f64 * 0.1 - 0.3).collect();
    let file = gradients(&labels, &scores, TieBreak::FileOrder, 0);
    assert!(file.iter().any(|&x| x != 0.0));
    for seed in 0..20 {
        let shuffled = gradients(&labels, &scores, TieBreak::SeededShuffle, seed);
        assert_eq!(bits(&shuffled), bits(&file), "seed {seed}");
    }
}

/// A query whose relevant documents come first in the file, all scores equal (every query's first round): in
/// document order the first relevant document sits at rank 1 and gets another gradient than the fourth; the
/// shuffle gives one seed one order (the same bits twice), another seed another, and over many seeds the
/// documents of one label get the same mean gradient.
#[test]
fn seeded_shuffle_orders_ties_by_seed_without_the_file_orders_bias() {
    let labels = [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
    let scores = [0.25; 12];
    let n = labels.len();
    let file = gradients(&labels, &scores, TieBreak::FileOrder, 0);
    // Document order does not depend on the seed.
    assert_eq!(
        bits(&file),
        bits(&gradients(&labels, &scores, TieBreak::FileOrder, 9))
    );
    let (first, fourth) = (file[0], file[3]);
    assert!(
        (first - fourth).abs() > 0.2 * first.abs(),
        "file order: {first} {fourth}"
    );

    let one = gradients(&labels, &scores, TieBreak::SeededShuffle, 1);
    assert_eq!(
        bits(&one),
        bits(&gradients(&labels, &scores, TieBreak::SeededShuffle, 1))
    );
    assert_ne!(
        bits(&one),
        bits(&gradients(&labels, &scores, TieBreak::SeededShuffle, 2))
    );
    assert_ne!(bits(&one), bits(&file));
    // Each pair adds λ to one document and takes it from the other, in any order.
    assert!(one[..n].iter().sum::<f64>().abs() < 1e-12);

    let draws = 4000;
    let mut mean = vec![0.0; n];
    for seed in 0..draws {
        for (m, g) in
            mean.iter_mut()
                .zip(gradients(&labels, &scores, TieBreak::SeededShuffle, seed))
        {
            *m += g / draws as f64;
        }
    }
    for (label, docs) in [(1, 0..4), (0, 4..12)] {
        let avg = mean[docs.clone()].iter().sum::<f64>() / docs.len() as f64;
        for d in docs {
            assert!(
                (mean[d] - avg).abs() < 0.05 * avg.abs(),
                "label {label}, document {d}: mean gradient {} against the label's {avg}",
                mean[d]
            );
        }
    }
}
