//! Tests of `src/lambdarank.rs`.

use ltr_core::{Fit, FitContext, FitWith, LinearModel, LtrError, Model, ParamGuard};
use ltr_data::{generate_letor_like, Dataset, SyntheticConfig};
use ltr_listwise::lambdarank::*;
use ltr_listwise::measure::*;
use ltr_metrics::{Convention, Metric};

/// Every query's frozen pairs as `(row, row, |ΔNDCG|)`, rows numbered in the dataset.
fn frozen_pairs(
    data: &Dataset,
    measures: &[QueryMeasure],
    scores: &[f64],
) -> Vec<Vec<(u32, u32, f64)>> {
    let frozen = freeze(data, measures, scores);
    (0..data.n_queries())
        .map(|q| {
            let start = data.query_range(q).start;
            let mut pairs = Vec::new();
            for_each_pair(data, q, &measures[q], &frozen, |i, j, dw| {
                pairs.push(((start + i) as u32, (start + j) as u32, dw))
            });
            pairs
        })
        .collect()
}

#[test]
fn lambdas_are_the_gradient_of_the_smoothed_objective() {
    let data = generate_letor_like(&SyntheticConfig {
        queries: 5,
        min_docs: 4,
        max_docs: 12,
        features: 6,
        seed: 11,
        ..SyntheticConfig::default()
    })
    .unwrap();
    let measures = ndcg3_measures(&data);
    let w = [0.4, -0.3, 0.2, 0.8, -0.1, 0.05];
    let pairs = frozen_pairs(&data, &measures, &data.scores(&w));
    assert!(pairs.iter().map(Vec::len).sum::<usize>() > 10);
    let frozen = freeze(&data, &measures, &data.scores(&w));
    let nq = data.n_queries() as f64;
    // Losses and lambdas at `w`, σ = 1.5.
    let at = |w: &[f64], weights: Option<&[f64]>, with_lambdas: bool| {
        let scores = data.scores(w);
        loss_and_lambdas(
            &data,
            &measures,
            &frozen,
            &scores,
            1.5,
            nq,
            weights,
            with_lambdas,
        )
    };
    // Unweighted (1/Q each) and with IPS-like query weights (summing to 1).
    let ips = [0.1, 0.4, 0.05, 0.3, 0.15];
    let uniform = [0.2; 5];
    for weights in [None, Some(&ips[..]), Some(&uniform[..])] {
        let loss_at = |w: &[f64]| at(w, weights, false).0.iter().sum::<f64>() / nq;
        let (_, lambdas) = at(&w, weights, true);
        let g = data.transpose_times(&lambdas);
        for j in 0..w.len() {
            let h = 1e-6;
            let (mut up, mut down) = (w, w);
            up[j] += h;
            down[j] -= h;
            let fd = (loss_at(&up) - loss_at(&down)) / (2.0 * h);
            assert!(
                (fd - g[j]).abs() < 1e-6 * (1.0 + fd.abs()),
                "feature {j}: {fd} vs {}",
                g[j]
            );
        }
    }
    // Equal weights are the unweighted objective.
    let total = |weights: Option<&[f64]>| at(&w, weights, false).0.iter().sum::<f64>() / nq;
    let a = total(None);
    let b = total(Some(&uniform));
    assert!((a - b).abs() < 1e-12 * a.abs(), "{a} vs {b}");
    let c = total(Some(&ips));
    assert!((a - c).abs() > 1e-6, "the weights must matter");
}

/// Fine-tuning keeps the start as epoch 0: the result is never worse on validation than the start, and a start
/// no epoch improves on comes back unchanged, reported as 0 epochs.
#[test]
fn a_start_is_epoch_zero_and_kept_when_no_epoch_beats_it() {
    let cfg = |seed| SyntheticConfig {
        queries: 20,
        min_docs: 8,
        max_docs: 20,
        features: 5,
        noise: 1.0,
        seed,
        ..SyntheticConfig::default()
    };
    let (train, vali) = (
        generate_letor_like(&cfg(3)).unwrap(),
        generate_letor_like(&cfg(4)).unwrap(),
    );
    let measure = |d: &Dataset, s: &[f64]| {
        ltr_metrics::evaluate_mean(d, s, Metric::Ndcg(Some(10)), &Convention::STANDARD)
            .map_err(LtrError::measure)
    };
    let ctx = FitContext::new(1).with_validation(&vali, &measure);
    let p = LambdaRankParams::default().epochs(30).check().unwrap();
    let tuned = p.fit(&train, &ctx).unwrap();
    let Model::Linear(best) = &tuned.model else {
        panic!("linear")
    };
    // From a deliberately bad start (the tuned model reversed) the epochs climb well above it.
    let bad = LinearModel::new(best.weights.iter().map(|w| -w).collect());
    let v_bad = measure(&vali, &vali.scores(&bad.weights)).unwrap();
    let from_bad = p.fit_with(&bad, &train, &ctx).unwrap();
    let v = from_bad.report.validation.unwrap();
    assert!(v > v_bad + 0.05, "{v_bad} -> {v}");
    // A validation measure that rewards only the start's own scores: every epoch moves away, so the start is kept
    // as it was, reported as epoch 0.
    let start_scores = vali.scores(&best.weights);
    let only_start = |d: &Dataset, s: &[f64]| Ok(f64::from(d.scores(&best.weights) == s));
    assert_eq!(only_start(&vali, &start_scores).unwrap(), 1.0);
    let kept = p
        .fit_with(
            best,
            &train,
            &FitContext::new(1).with_validation(&vali, &only_start),
        )
        .unwrap();
    assert_eq!(kept.model, Model::Linear(best.clone()));
    assert_eq!(kept.report.validation, Some(1.0));
    assert_eq!(
        kept.report.selected.get("epochs").map(String::as_str),
        Some("0")
    );
    // A start longer than the data is an error, a shorter one is padded with zeros.
    let long = LinearModel::new(vec![1.0; 6]);
    assert!(p.fit_with(&long, &train, &ctx).is_err());
    let short = LinearModel::new(vec![1.0; 3]);
    let Model::Linear(m) = p
        .fit_with(&short, &train, &FitContext::new(1))
        .unwrap()
        .model
    else {
        panic!("linear")
    };
    assert_eq!(m.weights.len(), 5);
}

#[test]
fn only_pairs_touching_the_top_k_are_enumerated_and_each_once() {
    let data = generate_letor_like(&SyntheticConfig {
        queries: 3,
        min_docs: 15,
        max_docs: 15,
        features: 4,
        seed: 5,
        ..SyntheticConfig::default()
    })
    .unwrap();
    let measures = ndcg3_measures(&data);
    let scores = data.scores(&[1.0, 0.5, -0.5, 0.2]);
    for (q, ps) in frozen_pairs(&data, &measures, &scores).iter().enumerate() {
        let mut seen: Vec<(u32, u32)> = ps.iter().map(|p| (p.0, p.1)).collect();
        seen.sort_unstable();
        let len = seen.len();
        seen.dedup();
        assert_eq!(seen.len(), len, "query {q}: a pair twice");
        let r = data.query_range(q);
        let s = &scores[r.clone()];
        let top: Vec<usize> = {
            let mut o: Vec<usize> = (0..s.len()).collect();
            o.sort_by(|&a, &b| s[b].total_cmp(&s[a]).then(a.cmp(&b)));
            o.into_iter().take(3).map(|d| d + r.start).collect()
        };
        for &(i, j, dw) in ps {
            assert!(top.contains(&(i as usize)) || top.contains(&(j as usize)));
            assert!(data.labels()[i as usize] > data.labels()[j as usize] && dw > 0.0);
        }
    }
}

/// NDCG@3 (standard convention) of each query of `data`, as the LambdaRank pairs are weighted by.
fn ndcg3_measures(data: &Dataset) -> Vec<QueryMeasure> {
    let lm = ListMeasure::new(Metric::Ndcg(Some(3)), Convention::STANDARD).unwrap();
    (0..data.n_queries())
        .map(|q| lm.query(&data.labels()[data.query_range(q)]).unwrap())
        .collect()
}
