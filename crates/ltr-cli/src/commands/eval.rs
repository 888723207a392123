//! `ltr eval`: metrics of a score file (or of a TREC run against qrels) under a named convention.

use anyhow::{bail, Context, Result};
use ltr_metrics::{check_scores_fit, evaluate_run_against_qrels, read_scores, FileError};
use ltr_metrics::{evaluate, rows_json, rows_text, Asked, Metric};

pub use super::eval_args::EvalArgs;

/// Default metrics of `ltr eval`.
pub const DEFAULT_METRICS: &[&str] = &["NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP"];

/// Run the command.
pub fn run(a: EvalArgs) -> Result<()> {
    if a.list_measures {
        if a.output.json {
            println!("{:#}", ltr_metrics::measures_json());
        } else {
            print!("{}", ltr_metrics::measures_text());
        }
        return Ok(());
    }
    let json = a.output.json || a.format.as_deref() == Some("json");
    if a.format.as_deref() == Some("trec_eval") {
        let (Some(run), Some(qrels)) = (&a.run, &a.qrels) else {
            bail!("--format trec_eval needs --run and --qrels")
        };
        return super::eval_trec::print_trec_eval(&a, run, qrels);
    }
    let items = if a.metrics.is_empty() {
        DEFAULT_METRICS.iter().map(|s| s.to_string()).collect()
    } else {
        ltr_metrics::split_asked(&a.metrics)
    };
    let asked = ltr_metrics::classify_asked(&items).context("--measure")?;
    let (names, metrics): (Vec<String>, Vec<Metric>) = asked
        .iter()
        .filter_map(|x| match x {
            Asked::Metric(n, m) => Some((n.clone(), *m)),
            Asked::Trec(_) => None,
        })
        .unzip();
    let default = if a.run.is_some() { "trec" } else { "standard" };
    let name = a.convention.as_deref().unwrap_or(default);
    let mut conv = super::convention(name, a.ties.as_deref())?;
    if let Some(l) = a.relevance_level {
        conv = conv.with_relevance_threshold(l);
    }
    let bar = crate::progress::Bar::for_terminal();
    let (ev, trec) = if let Some(run) = &a.run {
        let qrels = a.qrels.as_ref().context("--run needs --qrels")?;
        let stage = format!("reading {} and {}", qrels.display(), run.display());
        let ev = bar
            .stage(&stage, || {
                evaluate_run_against_qrels(run, qrels, &metrics, &conv)
            })
            .map_err(|e| match e {
                // These name their file and line already.
                e @ (FileError::Io { .. } | FileError::Parse { .. } | FileError::Empty { .. }) => {
                    anyhow::Error::from(e)
                }
                e => anyhow::Error::from(e).context(format!("evaluating {}", run.display())),
            })?;
        let o = super::eval_trec::options(&a)?;
        let trec = ltr_metrics::trec_rows(&asked, run, qrels, &o)?;
        (ev, trec)
    } else {
        if asked.iter().any(|x| matches!(x, Asked::Trec(_))) {
            bail!(
                "trec_eval's measures (and names such as P_5, ndcg_cut_10) need --run and --qrels"
            );
        }
        let (Some(data), Some(scores)) = (&a.data, &a.scores) else {
            bail!("give --data and --scores (or --run and --qrels)")
        };
        let ds = bar.stage(&format!("reading {}", data.display()), || {
            super::load_dataset(data, &a.read)
        })?;
        let s = read_scores(scores)?;
        check_scores_fit(&s, &ds, scores, data)?;
        let ev = bar
            .stage("evaluating", || evaluate(&ds, &s, &metrics, &conv))
            .with_context(|| format!("evaluating {}", scores.display()))?;
        (ev, Vec::new())
    };
    let rows = ltr_metrics::rows_in_order(&asked, ev.rows(&names), trec);
    let queries = if ev.results.is_empty() {
        rows.iter().map(|r| r.per_query.len()).max().unwrap_or(0)
    } else {
        ev.qids.len()
    };
    if json {
        println!(
            "{:#}",
            rows_json(ev.convention.name, queries, &rows, a.per_query)
        );
    } else {
        print!(
            "{}",
            rows_text(ev.convention.name, queries, &rows, a.per_query)
        );
    }
    Ok(())
}
