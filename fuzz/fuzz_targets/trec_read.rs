//! TREC run and qrels readers (split at the first 0xFF byte) and the run evaluation that joins them; the qrels bytes
//! are also read as ndeval's diversity qrels and evaluated with the diversity measures.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ltr_fuzz::{assert_names_file, write_scratch};
use ltr_metrics::{
    evaluate_diversity_run, evaluate_run, read_diversity_qrels, read_qrels, read_run, read_scores, Convention,
    Metric,
};

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len());
    let (run_bytes, qrels_bytes) = (&data[..cut], data.get(cut + 1..).unwrap_or_default());
    let run_path = write_scratch("run.txt", run_bytes);
    let qrels_path = write_scratch("qrels.txt", qrels_bytes);
    if let Err(e) = read_scores(&run_path) {
        assert_names_file(&e.to_string(), &run_path);
    }
    let run = read_run(&run_path);
    match (&run, read_diversity_qrels(&qrels_path)) {
        (Ok(run), Ok(dq)) => {
            let metrics: Vec<Metric> = ["alpha_nDCG@10", "ERR_IA@5", "NRBP", "nNRBP", "AP_IA", "P_IA@3", "StRecall@2"]
                .iter()
                .map(|m| m.parse().expect("known metric"))
                .collect();
            let ev = evaluate_diversity_run(run, &dq, &metrics, &Convention::TREC).expect("resolved ties");
            for m in &ev.results {
                assert!(m.per_query.iter().all(|v| v.is_finite() && *v >= 0.0));
            }
        }
        (_, Err(e)) => assert_names_file(&e.to_string(), &qrels_path),
        _ => {}
    }
    let qrels = read_qrels(&qrels_path);
    match (run, qrels) {
        (Ok(run), Ok(qrels)) => {
            let metrics: Vec<Metric> = ["NDCG@10", "MAP", "P@5", "ERR@10", "MRR"]
                .iter()
                .map(|m| m.parse().expect("known metric"))
                .collect();
            for conv in [Convention::TREC, Convention::STANDARD] {
                if let Ok(ev) = evaluate_run(&run, &qrels, &metrics, &conv) {
                    for m in &ev.results {
                        assert!(m.per_query.iter().all(|v| v.is_finite()));
                        assert!(m.mean.is_finite() || m.per_query.is_empty());
                    }
                }
            }
        }
        (Err(e), _) => assert_names_file(&e.to_string(), &run_path),
        (_, Err(e)) => assert_names_file(&e.to_string(), &qrels_path),
    }
});
