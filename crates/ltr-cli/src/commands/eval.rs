//! `ltr eval`: metrics of a score file (or of a TREC run against qrels) under a named convention.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_metrics::{check_scores_fit, read_judgments, read_run, read_scores};
use ltr_metrics::{evaluate, rows_json, rows_text, Metric};

use super::eval_trec::Asked;

/// Default metrics of `ltr eval`.
pub const DEFAULT_METRICS: &[&str] = &["NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP"];

/// Arguments of `ltr eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The LETOR/SVMlight data file (labels and queries).
    #[arg(long, required_unless_present_any = ["run", "list_measures"])]
    pub data: Option<PathBuf>,
    /// One score per line, in the data file's line order.
    #[arg(long, requires = "data")]
    pub scores: Option<PathBuf>,
    /// A TREC run (`qid Q0 docid rank score tag`), evaluated against --qrels instead of --data/--scores.
    #[arg(long, requires = "qrels", conflicts_with_all = ["data", "scores"])]
    pub run: Option<PathBuf>,
    /// TREC qrels (`qid iter docid rel`; a negative rel: pooled but unjudged, for infAP), or, when every measure is
    /// a diversity measure (alpha_nDCG@k, ERR_IA@k, NRBP, P_IA@k, StRecall@k, ...), ndeval's `qid subtopic docid rel`.
    #[arg(long)]
    pub qrels: Option<PathBuf>,
    /// Metrics (repeatable or comma separated): NDCG@k, DCG@k, MAP, MAP@k, P@k, MRR, MRR@k, ERR@k, R-prec,
    /// bpref, RankEff, AUC, OER, OER(s,t), Q, MeanNDCG, R@k, Success@k, NumRet, NumRel, NumRelRet, IPrec@r, SetP,
    /// SetR, SetF, Judged@k, RBP(p=0.8), RBPResidual(p=0.8), infAP, diversity measures; ir_measures' syntax (AP(rel=2),
    /// P(judged_only=True)@10, alpha_nDCG(alpha=0.5)@20, ...). A comma inside parentheses belongs to the measure. See
    /// --list-measures.
    /// trec_eval's names work too (`ndcg_cut_10`, `P_5`, `map`, `gm_map`, `P.5,10`, `ndcg_cut.5,10`, `set_F.0.5`,
    /// `all_trec`, ...). Rows and JSON keys keep each name as written, in the order asked.
    #[arg(short = 'm', long = "metric", visible_alias = "measure")]
    pub metrics: Vec<String>,
    /// Evaluator convention: letor3, letor4, mslr, trec, standard (default: trec for --run, as trec_eval and
    /// ir_measures evaluate runs; standard for --data).
    #[arg(long)]
    pub convention: Option<String>,
    /// Tie policy overriding the convention's: input, docid, expected.
    #[arg(long)]
    pub ties: Option<String>,
    /// Relevance threshold for binary metrics (trec_eval's -l).
    #[arg(short = 'l', long)]
    pub relevance_level: Option<f32>,
    /// Also print per-query values (trec_eval's -q).
    #[arg(short = 'q', long)]
    pub per_query: bool,
    /// Output format: text (default), json (as --json), or trec_eval (trec_eval 10.0's lines, `-m` read as
    /// trec_eval reads it; needs --run and --qrels).
    #[arg(long, value_parser = ["text", "json", "trec_eval"])]
    pub format: Option<String>,
    /// trec_eval's -c: average over every qrels query; a query the run lacks scores as retrieving nothing
    /// (trec_eval measures and --format trec_eval).
    #[arg(short = 'c', long)]
    pub complete: bool,
    /// trec_eval's -M: keep only the top N documents of each query (trec_eval measures and --format trec_eval).
    #[arg(short = 'M', long)]
    pub max_per_query: Option<i64>,
    /// trec_eval's -J: drop unjudged documents before computing (trec_eval measures and --format trec_eval).
    #[arg(short = 'J', long)]
    pub judged_only: bool,
    /// trec_eval's -n: no summary lines (--format trec_eval).
    #[arg(short = 'n', long)]
    pub no_summary: bool,
    /// trec_eval's -N: documents in the collection, for `utility` (default 0, as trec_eval's code).
    #[arg(short = 'N', long)]
    pub collection_size: Option<i64>,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
    /// How the data file is read.
    #[command(flatten)]
    pub read: super::DataOpts,
    /// Print every measure with its syntax, options and defaults, definition and source, and exit (with --json: a
    /// JSON array).
    #[arg(long)]
    pub list_measures: bool,
}

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
        super::eval_trec::split_asked(&a.metrics)
    };
    let asked = super::eval_trec::classify(&items)?;
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
        let r = bar.stage(&format!("reading {}", run.display()), || read_run(run))?;
        if r.is_empty() {
            bail!(
                "{}: the run is empty (no `qid iter docno rank score tag` line)",
                run.display()
            );
        }
        let q = bar.stage(&format!("reading {}", qrels.display()), || {
            read_judgments(qrels, &metrics)
        })?;
        if q.is_empty() {
            bail!(
                "{}: the qrels are empty (no `qid iter docno rel` line)",
                qrels.display()
            );
        }
        let ev = bar
            .stage("evaluating", || q.evaluate(&r, &metrics, &conv))
            .with_context(|| format!("evaluating {}", run.display()))?;
        let trec = super::eval_trec::trec_rows(&a, &asked, run, qrels)?;
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
    // Rows in the order asked: the ltr measures' rows, with the trec_eval items' rows at their positions.
    let mut ltr_rows = ev.rows(&names).into_iter();
    let mut trec = trec.into_iter().peekable();
    let mut rows = Vec::new();
    for i in 0..asked.len() {
        match trec.peek() {
            Some((j, _)) if *j == i => rows.extend(trec.next().map(|(_, r)| r).unwrap_or_default()),
            _ => rows.extend(ltr_rows.next()),
        }
    }
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
