use ltr_data::Dataset;
use ltr_metrics::*;

/// `evaluate` (reused buffers, bucket and radix sorts, the measures from the relevant positions, RBP's weight
/// table) against the plain path: each query ranked by the comparator and every metric computed by
/// `query_metric`, bit for bit, under every tie policy. The queries have distinct scores (the bucket sort), a
/// few ties (its runs), many ties (the key sort); lengths 1 to 700; labels whole and graded, and in some queries
/// negative, fractional or above 15 (a dataset's labels are finite).
#[test]
fn evaluate_matches_plain_per_query_path() {
    let (ds, mut scores) = ltr_data::generate_judged_run(40, 700, true).unwrap();
    let mut labels = ds.labels().to_vec();
    let mut offsets = vec![0];
    let mut keep = Vec::new();
    let mut ids = ltr_data::TextColumn::new();
    for (qi, q) in ds.queries().enumerate() {
        let len = [700, 1, 2, 63, 64, 300][qi % 6];
        let rows = q.rows();
        for i in rows.start..rows.start + len {
            match qi % 3 {
                0 => scores[i] = (scores[i] * 10.0).floor(), // many ties
                1 if i % 50 == 1 => scores[i] = scores[i - 1], // a few
                _ => {}
            }
            if qi % 4 == 3 {
                labels[i] = [labels[i], -0.0, 3.0, -1.0, 2.5, 20.0][i % 6];
            }
            keep.push(i);
            ids.push(ds.docids().unwrap().get(i));
        }
        offsets.push(keep.len());
    }
    let scores: Vec<f64> = keep.iter().map(|&i| scores[i]).collect();
    let labels: Vec<f32> = keep.iter().map(|&i| labels[i]).collect();
    let ds = Dataset::new(
        ltr_data::FeatureMatrix::Dense(ndarray::Array2::zeros((keep.len(), 0))),
        labels,
        offsets,
        ds.qids().to_vec(),
    )
    .unwrap()
    .with_docids(ids)
    .unwrap();
    let metrics: Vec<Metric> = [
        "nDCG@10",
        "AP",
        "RBP(p=0.8)",
        "RBP(p=0.5)",
        "P@20",
        "nDCG",
        "DCG@5",
        "AP@100",
        "RR",
        "RR@3",
        "R@50",
        "R",
        "NumRet",
        "NumRel",
        "NumRelRet",
        "P@1000",
        "nDCG@1000",
        "ERR@10",
    ]
    .iter()
    .map(|m| m.parse().unwrap())
    .collect();
    for conv in [
        Convention::TREC,
        Convention::STANDARD,
        Convention::LETOR3,
        Convention::LETOR4,
        Convention::MSLR,
    ] {
        for ties in [
            TiePolicy::InputOrder,
            TiePolicy::ReverseInput,
            TiePolicy::Expected,
            TiePolicy::DocIdDescending,
        ] {
            let conv = Convention { ties, ..conv };
            // Without ERR (which refuses graded labels above the convention's largest): the resolved path.
            for metrics in [&metrics[..metrics.len() - 1], &metrics[..]] {
                let ev = match evaluate(&ds, &scores, metrics, &conv) {
                    Ok(ev) => ev,
                    Err(e) => {
                        assert!(
                            metrics.len() == 18 && e.to_string().contains("ERR@10"),
                            "{e}"
                        );
                        continue;
                    }
                };
                for (qi, q) in ds.queries().enumerate() {
                    let rows = q.rows();
                    let s = &scores[rows.clone()];
                    let id = |d: usize| q.docid(d).unwrap();
                    let ranking = Ranking::new(s, ties, Some(&id));
                    let input = QueryInput {
                        labels: q.labels(),
                        scores: s,
                        ranking: &ranking,
                        unretrieved: &[],
                    };
                    for (j, &m) in metrics.iter().enumerate() {
                        let want = match (m, ties) {
                            (Metric::Rbp(p), _) => plain_rbp(&input, &conv, p.get()),
                            _ => query_metric(m, &input, &conv).unwrap(),
                        };
                        assert_eq!(
                            ev.results[j].per_query[qi].to_bits(),
                            want.to_bits(),
                            "{m} query {qi} {} {ties:?}: {} against {want}",
                            conv.name,
                            ev.results[j].per_query[qi]
                        );
                    }
                }
            }
        }
    }
}

/// A score that is not finite is reported by line before any measure's error (here ERR on grades above the
/// convention's largest, in an earlier query), as the first one in line order, whatever the measures.
#[test]
fn first_non_finite_score_is_reported_before_measure_errors() {
    let (ds, mut scores) = ltr_data::generate_judged_run(30, 100, true).unwrap();
    scores[2_345] = f64::INFINITY;
    scores[1_017] = f64::NAN;
    let err: Metric = "ERR@10".parse().unwrap();
    let conv = Convention::TREC.with_relevance_threshold(1.0);
    let conv = Convention {
        err_max_grade: 1.0,
        ..conv
    };
    for metrics in [vec![err], vec![], vec!["AP".parse().unwrap()]] {
        let e = evaluate(&ds, &scores, &metrics, &conv).unwrap_err();
        assert_eq!(e.to_string(), "score NaN (line 1018) is not finite");
    }
    scores[1_017] = 0.5;
    scores[2_345] = 0.5;
    let e = evaluate(&ds, &scores, &[err], &conv).unwrap_err();
    assert!(e.to_string().starts_with("ERR@10: grade"), "{e}");
}

/// RBP as first written: `p.powi(i)` at every relevant position.
fn plain_rbp(q: &QueryInput<'_>, c: &Convention, p: f64) -> f64 {
    plain_rbp_both(q, c, p).0
}

fn plain_rbp_both(q: &QueryInput<'_>, c: &Convention, p: f64) -> (f64, f64) {
    let (mut value, mut unjudged) = (0.0, 0.0);
    for &(a, m) in &q.ranking.groups {
        let docs = &q.ranking.order[a..a + m];
        let rel = docs
            .iter()
            .filter(|&&d| q.labels[d].is_finite() && c.is_relevant(q.labels[d]))
            .count();
        let unj = docs.iter().filter(|&&d| !q.labels[d].is_finite()).count();
        if rel + unj == 0 {
            continue;
        }
        let w: f64 = (a..a + m).map(|i| p.powi(i as i32)).sum::<f64>() / m as f64;
        value += rel as f64 * w;
        unjudged += unj as f64 * w;
    }
    let depth = q.ranking.order.len();
    (
        (1.0 - p) * value,
        (1.0 - p) * unjudged + p.powi(depth as i32),
    )
}

/// RBP and its residual with unjudged documents (NaN, −∞), ties and no ties, against the first form.
#[test]
fn rbp_and_residual_match_plain_form_with_unjudged() {
    let mut rng = ltr_testdata::XorShift64::new(0x1234_5678_9abc_def1);
    let mut next = move |m: u64| rng.below(m);
    for n in [0usize, 1, 5, 300, 1200] {
        let labels: Vec<f32> = (0..n)
            .map(|_| match next(6) {
                0 => f32::NAN,
                1 => f32::NEG_INFINITY,
                g => (g - 2) as f32,
            })
            .collect();
        let scores: Vec<f64> = (0..n).map(|_| next(50) as f64).collect();
        for ties in [TiePolicy::InputOrder, TiePolicy::Expected] {
            let ranking = Ranking::new(&scores, ties, None);
            let q = QueryInput {
                labels: &labels,
                scores: &scores,
                ranking: &ranking,
                unretrieved: &[],
            };
            for p in ["0.8", "0.5", "0.95"] {
                for rel in [1, 2] {
                    let conv = Convention::TREC.with_relevance_threshold(rel as f32);
                    let m: Metric = format!("RBP(p={p})").parse().unwrap();
                    let r: Metric = format!("RBPResidual(p={p})").parse().unwrap();
                    let want = plain_rbp_both(&q, &conv, p.parse().unwrap());
                    let got = (
                        query_metric(m, &q, &conv).unwrap(),
                        query_metric(r, &q, &conv).unwrap(),
                    );
                    assert_eq!(got.0.to_bits(), want.0.to_bits(), "{m} n {n} {ties:?}");
                    assert_eq!(got.1.to_bits(), want.1.to_bits(), "{r} n {n} {ties:?}");
                }
            }
        }
    }
}
