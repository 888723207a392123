use ltr_metrics::*;

/// `evaluate_run` measuring from the relevant positions against the per-measure path (forced by adding bpref,
/// which only that path computes), bit for bit: runs with unjudged documents, judged documents the run missed,
/// pooled (negative) judgments, graded and fractional labels, tied scores, queries without judgments, under
/// every resolved tie policy and three conventions.
#[test]
fn evaluate_run_fused_matches_per_measure_path() {
    let mut rng = ltr_testdata::XorShift64::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move |m: u64| rng.below(m);
    let (mut run, mut qrels) = (Vec::new(), Qrels::new());
    for q in 0..40 {
        let qid = format!("q{q}");
        let n = [0, 1, 5, 70, 300][q % 5];
        let mut query = RunQuery::new(qid.as_str());
        for d in 0..n {
            let score = if d % 7 == 0 {
                0.5
            } else {
                next(1000) as f64 / 3.0
            };
            query.push(&format!("d{d}"), score);
        }
        run.push(query);
        if q % 9 == 8 {
            continue;
        }
        for d in 0..n + 20 {
            if next(4) == 0 {
                continue; // unjudged, or not judged at all
            }
            let rel = [0.0, 1.0, 2.0, 3.0, -1.0, 2.5][next(6) as usize];
            qrels.insert(&qid, &format!("d{d}"), rel);
        }
    }
    let supported: Vec<Metric> = [
        "nDCG@10",
        "nDCG",
        "DCG@5",
        "AP",
        "AP@50",
        "P@10",
        "RR",
        "RR@3",
        "R@20",
        "R",
        "RBP(p=0.8)",
        "NumRet",
        "NumRel",
        "NumRelRet",
    ]
    .iter()
    .map(|m| m.parse().unwrap())
    .collect();
    let mut all = supported.clone();
    all.push(Metric::Bpref);
    for conv in [Convention::TREC, Convention::STANDARD, Convention::LETOR4] {
        for ties in [
            TiePolicy::DocIdDescending,
            TiePolicy::InputOrder,
            TiePolicy::ReverseInput,
        ] {
            let conv = conv.with_ties(ties);
            let fused = evaluate_run(&run, &qrels, &supported, &conv).unwrap();
            let plain = evaluate_run(&run, &qrels, &all, &conv).unwrap();
            assert_eq!(fused.qids, plain.qids);
            for (a, b) in fused.results.iter().zip(&plain.results) {
                let bits = |r: &ltr_metrics::MetricResult| -> Vec<u64> {
                    r.per_query.iter().map(|v| v.to_bits()).collect()
                };
                assert_eq!(bits(a), bits(b), "{} {} {ties:?}", a.metric, conv.name);
            }
        }
    }
}

/// `evaluate_run` on runs already in rank order (the pass that keeps the input order) against the same runs
/// shuffled (the sorts), bit for bit under every tie policy: ties in the middle written in and out of doc-id
/// order, a query whose every score is equal, long ids sharing prefixes, unjudged documents, and a query
/// whose judgments match none of its documents.
#[test]
fn evaluate_run_on_ranked_runs_matches_shuffled_runs() {
    let mut rng = ltr_testdata::XorShift64::new(0x0dd5_eed5_7a7e_5eed);
    let mut next = move |m: u64| rng.below(m);
    let (mut ranked, mut shuffled, mut qrels) = (Vec::new(), Vec::new(), Qrels::new());
    for q in 0..30 {
        let qid = format!("q{q}");
        let n = [1, 2, 70, 300, 1000][q % 5];
        let id = |d: u64| format!("http://example.org/collection/{d}/page.html");
        // Distinct ids (a run listing a judged document twice is refused).
        let mut docs: Vec<(String, f64)> = (0..n as u64)
            .map(|i| (id(3 * i + next(3)), (next(40) as f64) / 4.0))
            .collect();
        if q % 7 == 3 {
            docs.iter_mut().for_each(|d| d.1 = 1.0);
        }
        // Rank order, ties by input order (as `write_run` leaves them) or by doc id as the trec order has it.
        docs.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
        if q % 2 == 0 {
            docs.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then_with(|| b.0.cmp(&a.0)));
        }
        ranked.push(RunQuery::with_docs(
            qid.as_str(),
            docs.iter().map(|(d, s)| (d.as_str(), *s)),
        ));
        for i in (1..docs.len()).rev() {
            docs.swap(i, next(i as u64 + 1) as usize);
        }
        shuffled.push(RunQuery::with_docs(
            qid.as_str(),
            docs.iter().map(|(d, s)| (d.as_str(), *s)),
        ));
        // Every query judged (one judgment outside the run), so that the values line up with `ranked`.
        qrels.insert(&qid, "never-retrieved", 1.0);
        for d in 0..3 * n as u64 {
            if next(3) == 0 {
                let d = if q % 10 == 9 { d + 10 * n as u64 } else { d };
                qrels.insert(&qid, &id(d), [0.0, 1.0, 2.0, -1.0][next(4) as usize]);
            }
        }
    }
    let metrics: Vec<Metric> = ["nDCG@10", "AP", "RBP(p=0.8)", "P@5", "RR", "bpref"]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    for ties in [
        TiePolicy::DocIdDescending,
        TiePolicy::InputOrder,
        TiePolicy::ReverseInput,
        TiePolicy::Expected,
    ] {
        let conv = Convention::TREC.with_ties(ties);
        // bpref (the per-measure path) has no tie-aware form.
        let all = if ties == TiePolicy::Expected { 5 } else { 6 };
        for m in [&metrics[..3], &metrics[..all]] {
            let a = evaluate_run(&ranked, &qrels, m, &conv).unwrap();
            let b = evaluate_run(&shuffled, &qrels, m, &conv).unwrap();
            assert_eq!(a.qids, b.qids);
            for (x, y) in a.results.iter().zip(&b.results) {
                let bits = |r: &ltr_metrics::MetricResult| -> Vec<u64> {
                    r.per_query.iter().map(|v| v.to_bits()).collect()
                };
                // Input order differs between the two runs, so only the doc-id order ranks ties alike.
                if ties == TiePolicy::DocIdDescending {
                    assert_eq!(bits(x), bits(y), "{} {ties:?}", x.metric);
                }
            }
            // Against the same run ranked by the comparator and measured per query.
            for (i, q) in ranked.iter().enumerate() {
                let j = qrels.get(q.qid()).unwrap();
                let label = |d: &str| match j.get(d) {
                    Some(l) if l < 0.0 => f32::NEG_INFINITY,
                    Some(l) => l,
                    None => f32::NAN,
                };
                let labels: Vec<f32> = q.docs().map(|(d, _)| label(d)).collect();
                let unretrieved: Vec<f32> = j
                    .iter()
                    .filter(|(d, _)| !q.docs().any(|(e, _)| e == *d))
                    .map(|(_, l)| if l < 0.0 { f32::NEG_INFINITY } else { l })
                    .collect();
                let id = |d: usize| q.docid(d);
                let ranking = Ranking::new(q.scores(), ties, Some(&id));
                let input = QueryInput {
                    labels: &labels,
                    scores: q.scores(),
                    ranking: &ranking,
                    unretrieved: &unretrieved,
                };
                for (r, &metric) in a.results.iter().zip(m) {
                    let want = query_metric(metric, &input, &conv).unwrap();
                    assert_eq!(
                        r.per_query[i].to_bits(),
                        want.to_bits(),
                        "{metric} {ties:?} q{i}"
                    );
                }
            }
        }
    }
}
