//! `ltr eval`: metrics of a score file (or of a TREC run against qrels) under a named convention.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_metrics::{check_scores_fit, read_judgments, read_run, read_scores};
use ltr_metrics::{evaluate, Evaluation};

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
    #[arg(long = "metric", visible_alias = "measure")]
    pub metrics: Vec<String>,
    /// Evaluator convention: letor3, letor4, mslr, trec, standard (default: trec for --run, as trec_eval and
    /// ir_measures evaluate runs; standard for --data).
    #[arg(long)]
    pub convention: Option<String>,
    /// Tie policy overriding the convention's: input, docid, expected.
    #[arg(long)]
    pub ties: Option<String>,
    /// Relevance threshold for binary metrics (trec_eval's -l).
    #[arg(long)]
    pub relevance_level: Option<f32>,
    /// Also print per-query values.
    #[arg(long)]
    pub per_query: bool,
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
    let metrics = super::parse_metrics(&a.metrics, DEFAULT_METRICS)?;
    let default = if a.run.is_some() { "trec" } else { "standard" };
    let name = a.convention.as_deref().unwrap_or(default);
    let mut conv = super::convention(name, a.ties.as_deref())?;
    if let Some(l) = a.relevance_level {
        conv = conv.with_relevance_threshold(l);
    }
    let bar = crate::progress::Bar::for_terminal();
    let ev = if let Some(run) = &a.run {
        let qrels = a.qrels.as_ref().context("--run needs --qrels")?;
        let r = bar.stage(&format!("reading {}", run.display()), || read_run(run))?;
        let q = bar.stage(&format!("reading {}", qrels.display()), || {
            read_judgments(qrels, &metrics)
        })?;
        bar.stage("evaluating", || q.evaluate(&r, &metrics, &conv))?
    } else {
        let (Some(data), Some(scores)) = (&a.data, &a.scores) else {
            bail!("give --data and --scores (or --run and --qrels)")
        };
        let ds = bar.stage(&format!("reading {}", data.display()), || {
            super::load_dataset(data, &a.read)
        })?;
        let s = read_scores(scores)?;
        check_scores_fit(&s, &ds, scores, data)?;
        bar.stage("evaluating", || evaluate(&ds, &s, &metrics, &conv))
            .with_context(|| format!("evaluating {}", scores.display()))?
    };
    print_evaluation(&ev, a.per_query, a.output.json)
}

/// Print an evaluation as a table or as JSON.
pub fn print_evaluation(ev: &Evaluation, per_query: bool, json: bool) -> Result<()> {
    if json {
        println!("{:#}", ev.to_json(per_query));
    } else {
        print!("{}", ev.to_text(per_query));
    }
    Ok(())
}
