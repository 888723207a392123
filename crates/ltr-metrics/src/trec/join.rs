//! A run evaluated against qrels: each run query joined to its judgments by doc id, ranked, and measured (from
//! the relevant positions when the ranking has no tie groups).

use super::FileError;
use crate::compute::{query_metric, QueryInput};
use crate::convention::{Convention, TiePolicy};
use crate::evaluate::{assemble, Evaluation};
use crate::metric::Metric;
use crate::rank::{rank_order, ranking_from_order, DocIds, RankBuffers};
use crate::ranking::Ranking;
use crate::resolved;
use crate::runs::{Qrels, QueryQrels, RunQuery, Table};

/// Evaluate a run against qrels as trec_eval does: only queries present in both are evaluated; retrieved documents
/// missing from the qrels are unjudged; judged documents the run missed count in R, N and the ideal DCG. Queries are
/// evaluated in parallel; the values and the first error (in run order) are those of a serial evaluation.
pub fn evaluate_run(
    run: &[RunQuery],
    qrels: &Qrels,
    metrics: &[Metric],
    conv: &Convention,
) -> Result<Evaluation, FileError> {
    use rayon::prelude::*;
    let judged: Vec<(&RunQuery, &QueryQrels)> = run
        .iter()
        .filter_map(|q| qrels.get(q.qid()).map(|j| (q, j)))
        .collect();
    let nm = metrics.len();
    let mut table = vec![0.0; judged.len() * nm];
    if nm > 0 {
        // Every measure from the relevant positions when the ranking has no tie groups (as `evaluate` does).
        let fused = fused(metrics, conv);
        let first_error = table
            .par_chunks_mut(nm)
            .zip(judged.par_iter())
            .enumerate()
            .map_init(
                || RunScratch::new(conv),
                |sc, (i, (row, &(q, j)))| {
                    run_query_values(QueryDocs::Run(q), j, metrics, conv, fused, sc, row)
                        .err()
                        .map(|e| (i, e))
                },
            )
            .flatten()
            .min_by_key(|(i, _)| *i);
        if let Some((_, e)) = first_error {
            return Err(e);
        }
    }
    let qids = judged.iter().map(|(q, _)| q.qid().to_string()).collect();
    Ok(assemble(qids, metrics, conv, &table))
}

/// Whether every measure is computed from the relevant positions (when the ranking has no tie groups).
pub(super) fn fused(metrics: &[Metric], conv: &Convention) -> bool {
    conv.ties != TiePolicy::Expected && metrics.iter().all(|&m| resolved::supported(m))
}

/// A run query to evaluate: a [`RunQuery`], or a query's documents as parallel slices (ids and scores) read from a
/// file and evaluated in place.
#[derive(Clone, Copy)]
pub(super) enum QueryDocs<'a> {
    Run(&'a RunQuery),
    Slices {
        qid: &'a str,
        ids: &'a [&'a str],
        scores: &'a [f64],
    },
}

impl<'a> QueryDocs<'a> {
    fn qid(self) -> &'a str {
        match self {
            QueryDocs::Run(q) => q.qid(),
            QueryDocs::Slices { qid, .. } => qid,
        }
    }
    fn docid(self, i: usize) -> &'a str {
        match self {
            QueryDocs::Run(q) => q.docid(i),
            QueryDocs::Slices { ids, .. } => ids[i],
        }
    }
    fn scores(self) -> &'a [f64] {
        match self {
            QueryDocs::Run(q) => q.scores(),
            QueryDocs::Slices { scores, .. } => scores,
        }
    }
    fn doc_ids(self) -> DocIds<'a> {
        match self {
            QueryDocs::Run(q) => DocIds::Run(q),
            QueryDocs::Slices { ids, .. } => DocIds::Strs(ids),
        }
    }
}

/// One thread's scratch space for [`evaluate_run`].
pub(super) struct RunScratch {
    buf: RankBuffers,
    order: Vec<u32>,
    ranking: Ranking,
    labels: Vec<f32>,
    seen: Vec<bool>,
    unretrieved: Vec<f32>,
    tables: resolved::Tables,
    /// The hash table of the judgments being joined (see [`QueryQrels::join`]).
    judged: Table,
}

impl RunScratch {
    pub(super) fn new(c: &Convention) -> Self {
        RunScratch {
            buf: RankBuffers::default(),
            order: Vec::new(),
            ranking: Ranking::default(),
            labels: Vec::new(),
            seen: Vec::new(),
            unretrieved: Vec::new(),
            tables: resolved::Tables::new(c),
            judged: Table::default(),
        }
    }
}

/// The values of `metrics` for run query `q` against its judgments `j`, into `out`.
pub(super) fn run_query_values(
    q: QueryDocs<'_>,
    j: &QueryQrels,
    metrics: &[Metric],
    conv: &Convention,
    fused: bool,
    sc: &mut RunScratch,
    out: &mut [f64],
) -> Result<(), FileError> {
    // Judgments read unchecked that judge a document twice: joined once their duplicates are merged.
    let deduped = j.prepare_join(&mut sc.judged);
    let j = match &deduped {
        Some(d) => {
            let again = d.prepare_join(&mut sc.judged);
            debug_assert!(again.is_none());
            d
        }
        None => j,
    };
    // A negative qrels value: in the pool but unjudged (trec_eval), −∞ for the metrics.
    let pooled = |l: f32| if l < 0.0 { f32::NEG_INFINITY } else { l };
    sc.labels.clear();
    sc.seen.clear();
    sc.seen.resize(j.len(), false);
    let rels = j.rels();
    let (labels, seen, table) = (&mut sc.labels, &mut sc.seen, &sc.judged);
    let mut twice = None;
    let mark = |at: Option<usize>| {
        labels.push(match at {
            Some(i) => {
                if seen[i] {
                    twice = Some(labels.len());
                }
                seen[i] = true;
                pooled(rels[i])
            }
            None => f32::NAN,
        })
    };
    match q {
        QueryDocs::Run(r) => j.join(r, table, mark),
        QueryDocs::Slices { ids, .. } => j.join_strs(ids, table, mark),
    }
    if let Some(at) = twice {
        return Err(FileError::DuplicateDocument {
            qid: q.qid().to_string(),
            docid: q.docid(at).to_string(),
        });
    }
    sc.unretrieved.clear();
    sc.unretrieved.extend(
        rels.iter()
            .zip(&sc.seen)
            .filter(|(_, &seen)| !seen)
            .map(|(&l, _)| pooled(l)),
    );
    rank_order(
        q.scores(),
        conv.ties,
        Some(q.doc_ids()),
        &mut sc.buf,
        &mut sc.order,
    );
    if fused {
        return resolved::values(
            metrics,
            &sc.labels,
            &sc.unretrieved,
            &sc.order,
            conv,
            &mut sc.tables,
            out,
        )
        .map_err(FileError::from);
    }
    ranking_from_order(q.scores(), conv.ties, &sc.order, &mut sc.ranking);
    let input = QueryInput {
        labels: &sc.labels,
        scores: q.scores(),
        ranking: &sc.ranking,
        unretrieved: &sc.unretrieved,
    };
    for (v, &m) in out.iter_mut().zip(metrics) {
        *v = query_metric(m, &input, conv)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
                    let bits = |r: &crate::MetricResult| -> Vec<u64> {
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
                    let bits = |r: &crate::MetricResult| -> Vec<u64> {
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
}
