use ltr_metrics::trec::read::BLOCK;
use ltr_metrics::trec::stream::*;
use ltr_metrics::*;

fn show(r: Result<Option<Evaluation>, FileError>) -> String {
    match r {
        Ok(None) => "empty".into(),
        Ok(Some(ev)) => {
            let bits: Vec<Vec<u64>> = ev
                .results
                .iter()
                .map(|r| r.per_query.iter().map(|v| v.to_bits()).collect())
                .collect();
            format!("ok {:?} {bits:?}", ev.qids)
        }
        Err(e) => format!("err {e}"),
    }
}

/// Random runs (queries in runs of lines, interleaved with each other and recurring, blank and `#` lines,
/// CRLF, tied scores, unjudged queries and documents, a document listed twice, a bad line or none) evaluated
/// while read, in blocks of many sizes, against `read_run` then `evaluate_run`: the same queries in the same
/// order, every value bit for bit, the same error.
#[test]
fn evaluated_while_read_matches_read_then_evaluated() {
    let dir = std::env::temp_dir().join(format!("ltr-trec-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = ltr_testdata::XorShift64::new(0x1234_5678_9abc_def1);
    let mut next = move |m: u64| rng.below(m);
    let metrics: Vec<Metric> = ["nDCG@10", "AP", "RR", "P@5", "bpref"]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    let (rp, qp) = (dir.join("run"), dir.join("qrels"));
    let mut seen_errors = 0;
    for case in 0..40 {
        let (mut run, mut qrels) = (String::new(), String::new());
        let queries = 1 + next(12);
        for q in 0..queries {
            if q % 5 == 4 {
                continue; // a run query without judgments
            }
            for d in 0..next(40) {
                let rel = [0, 1, 2, -1][next(4) as usize];
                qrels.push_str(&format!("q{q} 0 d{d} {rel}\n"));
                // A document judged again (the last value counts, in its first place).
                if next(8) == 0 {
                    let again = next(d + 1);
                    qrels.push_str(&format!("q{q} 0 d{again} {}\n", next(3)));
                }
            }
        }
        // Later judgments of earlier queries, some of them again.
        for _ in 0..next(4) {
            let q = next(queries);
            qrels.push_str(&format!("q{q} 0 d{} {}\n", next(60), next(3)));
        }
        let bad = (case % 4 == 3).then(|| next(200) as usize);
        let mut line = 0;
        // Distinct documents per query, but for a document listed twice in some cases.
        let mut docs = vec![0u64; queries as usize];
        for _ in 0..1 + next(30) {
            // A run of lines of one query; queries recur in later runs when `case` is odd.
            let q = if case % 2 == 1 {
                next(queries)
            } else {
                line as u64 % queries
            };
            for _ in 0..1 + next(25) {
                let d = if case % 5 == 2 && next(60) == 0 {
                    0
                } else {
                    docs[q as usize] += 1;
                    docs[q as usize] + next(2) * 1000
                };
                let score = if next(5) == 0 {
                    0.5
                } else {
                    next(1000) as f64 / 7.0
                };
                let end = if next(6) == 0 { "\r\n" } else { "\n" };
                match next(20) {
                    0 => run.push('\n'),
                    1 => run.push_str("# a comment\n"),
                    _ => {}
                }
                if Some(line) == bad {
                    run.push_str(&format!("q{q} Q0 d{d} 1 x{score} t{end}"));
                } else {
                    run.push_str(&format!("q{q} Q0 d{d} 1 {score} t{end}"));
                }
                line += 1;
            }
        }
        std::fs::write(&rp, &run).unwrap();
        std::fs::write(&qp, &qrels).unwrap();
        let j = read_qrels(&qp).unwrap();
        // As `ltr eval` reads them: the documents judged twice left for the evaluation to find.
        let unchecked = ltr_metrics::trec::read::read_qrels_unchecked(&qp).unwrap();
        let conv = Convention::TREC;
        // From the relevant positions (the first four) and per measure (bpref).
        for m in [&metrics[..4], &metrics[..]] {
            let want = match read_run(&rp) {
                Ok(r) if r.is_empty() => Ok(None),
                Ok(r) => evaluate_run(&r, &j, m, &conv).map(Some),
                Err(e) => Err(e),
            };
            let want = show(want);
            seen_errors += want.starts_with("err") as usize;
            for block in [1, 7, 30, 100, 1000, 4096, BLOCK] {
                let got = show(evaluate_run_file_in_blocks(&rp, &j, m, &conv, block));
                assert_eq!(got, want, "case {case}, block {block}");
                let got = show(evaluate_run_file_in_blocks(
                    &rp, &unchecked, m, &conv, block,
                ));
                assert_eq!(got, want, "case {case}, block {block}, unchecked qrels");
            }
            if let Ok(r) = read_run(&rp).map(|r| (!r.is_empty()).then_some(r)) {
                let got = r
                    .map(|r| evaluate_run(&r, &unchecked, m, &conv))
                    .transpose();
                assert_eq!(show(got), want, "case {case}, unchecked qrels");
            }
        }
        // No measure: the judged queries, nothing computed.
        let none = evaluate_run_file_in_blocks(&rp, &j, &[], &conv, 100);
        if let Ok(r) = read_run(&rp) {
            let want = evaluate_run(&r, &j, &[], &conv).unwrap();
            assert_eq!(none.unwrap().unwrap().qids, want.qids, "case {case}");
        }
    }
    // An empty run (blank and comment lines only) is `None`.
    std::fs::write(&rp, "\n# nothing\n  \n").unwrap();
    let j = read_qrels(&qp).unwrap();
    assert!(
        evaluate_run_file(&rp, &j, &[Metric::Bpref], &Convention::TREC)
            .unwrap()
            .is_none()
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        (5..60).contains(&seen_errors),
        "{seen_errors} cases with errors"
    );
}
