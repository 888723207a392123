//! # ltr-metrics
//!
//! Exact IR metrics under named evaluator conventions, paired significance tests, and the comparison of many
//! runs (randomised Tukey HSD or corrected paired tests, bootstrap intervals, effect sizes).
//!
//! ```
//! use ltr_metrics::{evaluate, Convention, Metric};
//! use ltr_data::{generate_letor_like, SyntheticConfig};
//!
//! let ds = generate_letor_like(&SyntheticConfig { queries: 20, ..Default::default() }).unwrap();
//! let scores: Vec<f64> = (0..ds.n_docs()).map(|i| ds.row(i).get(0) as f64).collect();
//! let metrics: Vec<Metric> = ["NDCG@10", "MAP"].iter().map(|m| m.parse().unwrap()).collect();
//! let ev = evaluate(&ds, &scores, &metrics, &Convention::LETOR4).unwrap();
//! assert!(ev.mean(metrics[0]).unwrap() >= 0.0);
//! ```
//!
//! ## Conventions
//! A metric value only means something with its convention, because the standard evaluators disagree:
//!
//! | convention | gain | discount | lists shorter than k | relevant for MAP/P@k | ties |
//! |---|---|---|---|---|---|
//! | `letor3` | 0→0, 1→1, 2→3 | 1 at ranks 1–2, then 1/log2 r | NDCG@k, P@k = 0 | label ≥ 1 | file order |
//! | `letor4` | same | same | NDCG@k = 0; P@k divides by k | label ≥ 1 | file order |
//! | `mslr` | 2^r − 1 (table to 15) | same | as letor4 | label ≥ 2 | file order |
//! | `trec` | label (linear) | 1/log2(r+1) | over the documents present | label ≥ 1 (`-l`) | docid descending |
//! | `standard` | 2^r − 1 | 1/log2(r+1) | over the documents present; P@k divides by min(k, n) | label ≥ 1 | file order |
//!
//! Worked example (seed 000's list R N R N R N, with R = label 1): under `letor3`,
//! DCG = 1 + 0 + 1/log2 3 + 0 + 1/log2 5 = 1.6309, the ideal R R R N N N gives 1 + 1 + 1/log2 3 = 2.6309, so
//! NDCG = 0.7836 (the paper's 0.783); under `standard` the same list scores 0.8855.
//! Queries with no relevant document score 0 and stay in the mean under every convention.
//!
//! ## Measure names
//! Besides this crate's names (`NDCG@10`, `MAP`, `MRR`, `R-prec`, ...) every metric accepts ir_measures' syntax,
//! case-insensitively: `nDCG@10`, `AP(rel=2)`, `P(judged_only=True)@10`, `R@100`, `Success@10`, `IPrec@0.5`,
//! `SetF(beta=0.5)`, `Judged@10`, `RBP(p=0.8)` ([`MEASURES`] lists them all). Under the `trec` convention the
//! values are trec_eval's (and so ir_measures'); `rel=` and `judged_only=` apply to one measure, where
//! `--relevance-level` applies to all. Unjudged documents exist only in TREC runs evaluated against qrels: on LETOR
//! data every document is judged, so `judged_only` changes nothing, `Judged@k` is 1 and RBP's residual is p^n.
//! A negative qrels value marks a pooled but unjudged document (trec_eval's sampling mark): every measure treats it
//! as unjudged, infAP as in the pool. The diversity measures (`alpha_nDCG@20`, `ERR_IA@20`, `NRBP`, `P_IA@20`,
//! `StRecall@20`, …) need subtopic qrels ([`read_diversity_qrels`], [`evaluate_diversity_run`]) and follow ndeval.
//!
//! trec_eval 10.0 itself is reproduced in [`treceval`]: every measure of `-m all_trec` under trec_eval's names and
//! parameters, its flags and its output line for line.
//!
//! Tie policy is an option of every convention: file order, doc id order, or the exact expectation over the orders
//! of tied documents (McSherry & Najork 2008).
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness, which would compile
// every module again; the unit tests live in the integration binary instead (`tests/unit/`).
#![cfg(not(test))]
#![deny(missing_docs)]

mod asked;
mod bounds;
mod compute;
mod convention;
mod diversity;
mod evaluate;
mod fusion;
mod infap;
mod metric;
mod multiple;
mod multiple_format;
// pub for the tests in tests/unit/rank.rs; not API.
#[doc(hidden)]
pub mod rank;
mod ranking;
mod real;
mod report;
mod resolved;
// pub for the tests in tests/unit/runs.rs; not API.
#[doc(hidden)]
pub mod runs;
mod significance;
// pub for the tests in tests/unit/trec_*.rs; not API.
#[doc(hidden)]
pub mod trec;
pub mod treceval;

pub use asked::{
    classify_asked, measure_suggestions, rows_in_order, split_asked, split_measures,
    trec_measure_set, trec_rows, Asked,
};
pub use bounds::{phi as phi_metric, phi_lower_bound};
pub use compute::{pair_counts, query_metric, PairCounts, QueryInput, Unsupported};
pub use convention::{Convention, Discount, Gain, ShortList, TiePolicy};
pub use diversity::{DiversityKind, DiversityMeasure, DiversityQrels};
pub use evaluate::{evaluate, evaluate_mean, EvalError, Evaluation, MetricResult};
pub use fusion::{
    fuse, fusion_weights, tune_weights, write_trec_run, FusionError, FusionMethod, FusionNorm,
};
pub use metric::{MeasureInfo, Metric, MetricParseError, Params, Tunable, MEASURES};
pub use multiple::{
    align_queries, bh_adjust, bonferroni_adjust, cohens_d, compare_runs, resolve_baseline,
    run_names, tukey_hsd, AlignedRuns, Correction, ManyComparison, ManyOptions, ManyTest,
    PairResult, RunSummary,
};
pub use multiple_format::{p_value_text, ReportFormat};
pub use rank::fast_ranking;
pub use ranking::Ranking;
pub use real::Real;
pub use report::{
    is_summed, measures_json, measures_text, rows_json, rows_text, Row, RowAggregate,
};
pub use runs::{Qrels, QueryQrels, RunQuery};
pub use significance::{
    bootstrap_ci, holm_adjust, mean_ci, paired_t_test, permutation_test, run_test, sign_test,
    wilcoxon, Alternative, PairedComparison, TestKind, TestResult,
};
pub use trec::{
    check_scores_fit, evaluate_diversity_run, evaluate_run, evaluate_run_against_qrels,
    evaluate_run_file, evaluate_run_files, evaluate_score_files, read_diversity_qrels,
    read_judgments, read_qrels, read_run, read_scores, write_qrels_to, write_run, write_run_to,
    FileError, Judgments,
};

/// Evaluate one query given its labels and scores (ties resolved by `convention.ties`, input order without doc ids).
pub fn evaluate_query(
    metric: Metric,
    labels: &[f32],
    scores: &[f64],
    convention: &Convention,
) -> Result<f64, compute::Unsupported> {
    let ranking = fast_ranking(scores, convention.ties);
    query_metric(
        metric,
        &QueryInput {
            labels,
            scores,
            ranking: &ranking,
            unretrieved: &[],
        },
        convention,
    )
}
