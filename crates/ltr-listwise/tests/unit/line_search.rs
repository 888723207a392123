//! Tests of `src/line_search/`: each line's best point against brute force, the pruned line against the whole one,
//! and the mean over ranks.

use ltr_core::Allreduce;
use ltr_data::{generate_letor_like, SyntheticConfig};
use ltr_listwise::line_search::*;
use ltr_listwise::*;
use ltr_metrics::{Convention, Metric};

/// Brute force: the measure at the midpoint of every interval between consecutive crossings, by sorting.
fn brute_force_max(p: &Problem<'_>, scores: &[f64], j: usize, wj: f64) -> f64 {
    let col = p.column(j);
    let mut ts = Vec::new();
    for q in 0..p.data().n_queries() {
        let r = p.data().query_range(q);
        for d in r.clone() {
            for e in r.clone() {
                if col[d] != col[e] {
                    let bd = scores[d] - wj * col[d] as f64;
                    let be = scores[e] - wj * col[e] as f64;
                    ts.push((bd - be) / (col[e] as f64 - col[d] as f64));
                }
            }
        }
    }
    ts.sort_by(f64::total_cmp);
    ts.dedup();
    let mut probes = vec![ts[0] - 1.0, ts[ts.len() - 1] + 1.0];
    probes.extend(ts.windows(2).map(|w| 0.5 * (w[0] + w[1])));
    probes
        .iter()
        .map(|&t| {
            let s: Vec<f64> = scores
                .iter()
                .zip(&col)
                .map(|(s, &x)| s + (t - wj) * x as f64)
                .collect();
            p.value(&s)
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Enough changes to be bucketed: the pruned line's best is the whole line's, under penalties and signs too.
#[test]
fn pruned_line_gives_the_whole_line_best() {
    let data = generate_letor_like(&SyntheticConfig {
        queries: 40,
        min_docs: 50,
        max_docs: 70,
        features: 4,
        seed: 5,
        ..SyntheticConfig::default()
    })
    .unwrap();
    for name in ["MAP", "NDCG", "ERR"] {
        let metric: Metric = name.parse().unwrap();
        let p = Problem::new(
            &data,
            &ListMeasure::new(metric, Convention::STANDARD).unwrap(),
        )
        .unwrap();
        let w = [0.3, -0.2, 0.5, 0.1];
        let scores = data.scores(&w);
        let current = p.per_query_values(&scores);
        for (j, &wj) in w.iter().enumerate() {
            for (non_negative, l2) in [(false, 0.0), (true, 0.0), (false, 0.05)] {
                let choice = Choice {
                    current: wj,
                    non_negative,
                    l2,
                    centre: 0.25,
                    unit: 0.25,
                };
                let whole = p.line(&scores, j, wj).best(&choice).unwrap();
                let mut scratch = LineScratch::default();
                let line = p.line_into(&scores, &current, j, wj, Some(&choice), &mut scratch);
                let pruned = line.best(&choice).unwrap();
                let (changes, kept) = (scratch.changes.len(), scratch.buckets.kept);
                assert!(changes >= PRUNE_FROM, "{name}: only {changes} changes");
                assert!(kept * 4 < changes, "{name}: kept {kept} of {changes}");
                assert!(
                    (pruned.1 - whole.1).abs() < 1e-12 && (pruned.2 - whole.2).abs() < 1e-12,
                    "{name} j={j} {non_negative} {l2}: {pruned:?} vs {whole:?}"
                );
                let s: Vec<f64> = scores
                    .iter()
                    .zip(&p.column(j))
                    .map(|(s, &x)| s + (pruned.0 - wj) * x as f64)
                    .collect();
                assert!(
                    (p.value(&s) - pruned.1).abs() < 1e-12,
                    "{name} at {}",
                    pruned.0
                );
            }
        }
    }
}

/// Longer queries, cut-offs far below their length (only the top layers are swept), and features rounded to
/// one decimal (many equal values, parallel lines).
#[test]
fn truncated_measures_on_long_queries_with_tied_features_match_brute_force() {
    let mut data = generate_letor_like(&SyntheticConfig {
        queries: 3,
        min_docs: 25,
        max_docs: 35,
        features: 3,
        seed: 9,
        ..SyntheticConfig::default()
    })
    .unwrap();
    if let ltr_data::FeatureMatrix::Dense(a) = data.features_mut() {
        a.mapv_inplace(|v| (v * 10.0).round() / 10.0);
    }
    for name in ["NDCG@3", "ERR@5", "P@2", "MAP@4", "MRR@3"] {
        let metric: Metric = name.parse().unwrap();
        let p = Problem::new(
            &data,
            &ListMeasure::new(metric, Convention::STANDARD).unwrap(),
        )
        .unwrap();
        let w = [0.3, -0.6, 0.45];
        let scores = data.scores(&w);
        for (j, &wj) in w.iter().enumerate() {
            let choice = Choice {
                current: wj,
                non_negative: false,
                l2: 0.0,
                centre: 0.0,
                unit: 0.25,
            };
            let (_, value, _) = p.line(&scores, j, wj).best(&choice).unwrap();
            let want = brute_force_max(&p, &scores, j, wj);
            assert!(
                (value - want).abs() < 1e-12,
                "{name}, feature {j}: {value} vs {want}"
            );
        }
    }
}

#[test]
fn the_mean_over_ranks_is_gathered_up_to_its_bound_and_summed_per_rank_above() {
    // Rank r holds r + 2 queries; values whose sum depends on the order of addition.
    let value = |r: usize, q: usize| [1e16, 1.0, -1e16][(r + q) % 3] + 0.25 * q as f64;
    let all: Vec<f64> = (0..3)
        .flat_map(|r| (0..r + 2).map(move |q| value(r, q)))
        .collect();
    let single = all.iter().sum::<f64>() / all.len() as f64;
    let results = ltr_core::ThreadGroup::run(3, |comm| {
        let mine: Vec<f64> = (0..comm.rank() + 2)
            .map(|q| value(comm.rank(), q))
            .collect();
        Ok((
            mean_over_ranks(&mine, comm, 9)?,
            mean_over_ranks(&mine, comm, 8)?,
        ))
    });
    let by_rank: Vec<f64> = (0..3)
        .map(|r| (0..r + 2).map(|q| value(r, q)).sum::<f64>())
        .collect();
    let summed = by_rank.iter().sum::<f64>() / all.len() as f64;
    for r in results {
        let (gathered, per_rank) = r.unwrap();
        assert_eq!(gathered.to_bits(), single.to_bits());
        assert_eq!(per_rank.to_bits(), summed.to_bits());
    }
    assert_ne!(
        single, summed,
        "the values should tell the two orders apart"
    );
    assert_eq!(
        mean_over_ranks(&all, &ltr_core::SingleProcess, 0)
            .unwrap()
            .to_bits(),
        single.to_bits()
    );
}

#[test]
fn exact_line_search_finds_the_brute_force_optimum() {
    let data = generate_letor_like(&SyntheticConfig {
        queries: 6,
        min_docs: 3,
        max_docs: 9,
        features: 4,
        seed: 3,
        ..SyntheticConfig::default()
    })
    .unwrap();
    for name in ["NDCG@3", "NDCG", "MAP", "ERR@5", "P@2", "MRR"] {
        let metric: Metric = name.parse().unwrap();
        for conv in [Convention::STANDARD, Convention::LETOR4] {
            let p = Problem::new(&data, &ListMeasure::new(metric, conv).unwrap()).unwrap();
            let w = [0.3, -0.2, 0.5, 0.1];
            let scores = data.scores(&w);
            for (j, &wj) in w.iter().enumerate() {
                let line = p.line(&scores, j, wj);
                let (t, value, _) = line
                    .best(&Choice {
                        current: wj,
                        non_negative: false,
                        l2: 0.0,
                        centre: 0.0,
                        unit: 0.25,
                    })
                    .unwrap();
                let want = brute_force_max(&p, &scores, j, wj);
                assert!(
                    (value - want).abs() < 1e-12,
                    "{name} {}: {value} vs {want}",
                    conv.name
                );
                // The chosen point really has that value.
                let s: Vec<f64> = scores
                    .iter()
                    .zip(&p.column(j))
                    .map(|(s, &x)| s + (t - wj) * x as f64)
                    .collect();
                assert!((p.value(&s) - value).abs() < 1e-12, "{name} at t = {t}");
                // The current point's interval carries the current value.
                assert!(value >= p.value(&scores) - 1e-12);
            }
        }
    }
}

/// The ranking of `per_query_values` by packed integer keys (the top k selected, then sorted) against a full
/// comparator sort on (score descending, file order), bit for bit: ties, signed zeros, a NaN, cut and uncut
/// measures, on one thread and on rayon's.
#[test]
fn per_query_values_equal_a_comparator_sort_bit_for_bit() {
    let data = generate_letor_like(&SyntheticConfig {
        queries: 30,
        min_docs: 1,
        max_docs: 40,
        features: 3,
        seed: 11,
        ..SyntheticConfig::default()
    })
    .unwrap();
    let mut scores = data.scores(&[0.3, -0.6, 0.45]);
    for (i, s) in scores.iter_mut().enumerate() {
        // Coarse scores tie often; a few signed zeros and one NaN.
        *s = match i % 17 {
            3 => 0.0,
            5 => -0.0,
            _ if i == 40 => f64::NAN,
            _ => (*s * 4.0).round() / 4.0,
        };
    }
    for name in ["NDCG@10", "NDCG@3", "MAP", "ERR@5", "P@2", "MRR"] {
        let metric: Metric = name.parse().unwrap();
        let p = Problem::new(
            &data,
            &ListMeasure::new(metric, Convention::STANDARD).unwrap(),
        )
        .unwrap();
        let want: Vec<u64> = (0..data.n_queries())
            .map(|q| {
                let m = &p.queries[q];
                if m.constant {
                    return m.constant_value.to_bits();
                }
                let s = &scores[data.query_range(q)];
                let mut order: Vec<u32> = (0..s.len() as u32).collect();
                order.sort_by(|&a, &b| s[b as usize].total_cmp(&s[a as usize]).then(a.cmp(&b)));
                m.value(&order).to_bits()
            })
            .collect();
        let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(p.per_query_values(&scores)), want, "{name}");
        let p = p.sequential();
        assert_eq!(
            bits(p.per_query_values(&scores)),
            want,
            "{name}, sequential"
        );
    }
}
