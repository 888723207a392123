//! The flags of `ltr eval`, apart from the command so that the trec_eval output (`eval_trec`) reads them
//! without importing the command that calls it.

use std::path::PathBuf;

use clap::Args;

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
