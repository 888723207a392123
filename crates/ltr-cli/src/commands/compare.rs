//! `ltr compare`: two score files with a paired test, or many runs (TREC runs or score files) with randomised
//! Tukey HSD or corrected paired tests. The statistics and tables are `ltr_metrics`' (`PairedComparison`,
//! `compare_runs`); this module reads the files and prints.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_metrics::{compare_runs, resolve_baseline, AlignedRuns, ManyOptions, ManyTest};
use ltr_metrics::{evaluate_run_files, evaluate_score_files};

/// Arguments of `ltr compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The data file of --scores.
    #[arg(long, required_unless_present = "runs", conflicts_with = "runs")]
    pub data: Option<PathBuf>,
    /// Score files (give --scores twice or more), one score per line of --data.
    #[arg(long = "scores", num_args = 1, requires = "data")]
    pub scores: Vec<PathBuf>,
    /// TREC runs (give --run twice or more), against --qrels; named by file stem. Runs are compared on the judged
    /// queries they all answer (a warning says how many each loses).
    #[arg(long = "run", num_args = 1, requires = "qrels")]
    pub runs: Vec<PathBuf>,
    /// TREC qrels of --run.
    #[arg(long)]
    pub qrels: Option<PathBuf>,
    /// The measure compared per query.
    #[arg(long, visible_alias = "measure", default_value = "NDCG@10")]
    pub metric: String,
    /// tukey-hsd, ttest, wilcoxon, sign or permutation (default: ttest for two score files, else tukey-hsd).
    #[arg(long)]
    pub test: Option<ManyTest>,
    /// Many runs: holm, bonferroni, bh or none, over all pairs of a paired test (Tukey HSD needs none).
    #[arg(long, default_value = "holm")]
    pub correction: ltr_metrics::Correction,
    /// Many runs: the baseline, `first` or a run's name.
    #[arg(long, default_value = "first")]
    pub baseline: String,
    /// Many runs: significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// markdown, latex or json: the many-run tables (also for two runs); --json means json.
    #[arg(long)]
    pub format: Option<ltr_metrics::ReportFormat>,
    /// Many runs: bootstrap resamples of each run's 95% interval.
    #[arg(long, default_value_t = 10_000)]
    pub resamples: usize,
    /// Many runs: randomisation trials of Tukey HSD and the permutation test.
    #[arg(long, default_value_t = 10_000)]
    pub trials: usize,
    /// Two score files: two-sided, greater (A better) or less.
    #[arg(long, default_value = "two-sided")]
    pub alternative: ltr_metrics::Alternative,
    /// Evaluator convention (default: trec for --run, standard for --data).
    #[arg(long)]
    pub convention: Option<String>,
    /// Seed of the randomisations and the bootstrap.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
    /// How the data file is read.
    #[command(flatten)]
    pub read: super::DataOpts,
}

/// Run the command.
pub fn run(a: CompareArgs) -> Result<()> {
    let metric: ltr_metrics::Metric = a.metric.parse().context("--metric")?;
    let (files, default) = match a.runs.is_empty() {
        true => (&a.scores, "standard"),
        false => (&a.runs, "trec"),
    };
    let conv = super::convention(a.convention.as_deref().unwrap_or(default), None)?;
    let two_files = a.runs.is_empty() && a.scores.len() == 2 && a.format.is_none();
    let test = a.test.unwrap_or(match two_files {
        true => ManyTest::Paired(ltr_metrics::TestKind::TTest),
        false => ManyTest::TukeyHsd,
    });
    let json = ltr_metrics::ReportFormat::Json;
    let format = a.format.unwrap_or(if a.output.json {
        json
    } else {
        Default::default()
    });
    if files.len() < 2 {
        bail!(
            "comparing needs two runs or more (give --run or --scores twice or more), got {}",
            files.len()
        );
    }
    let evals = match (&a.qrels, &a.data) {
        (Some(q), _) => evaluate_run_files(files, q, metric, &conv)?,
        (None, Some(data)) => {
            let ds = crate::progress::Bar::for_terminal()
                .stage(&format!("reading {}", data.display()), || {
                    super::load_dataset(data, &a.read)
                })?;
            evaluate_score_files(&ds, data, files, metric, &conv)?
        }
        (None, None) => bail!("give --run with --qrels, or --scores with --data"),
    };
    let runs = AlignedRuns::new(files, evals)?;
    for w in runs.warnings() {
        tracing::warn!("{w}");
    }
    let (v, n) = (&runs.values, runs.qids.len());
    if let (true, ManyTest::Paired(kind)) = (two_files, test) {
        let c = ltr_metrics::PairedComparison::new(&v[0], &v[1], kind, a.alternative, a.seed);
        print!(
            "{}",
            c.render(a.output.json, &metric.to_string(), conv.name, n, files)
        );
        return Ok(());
    }
    let opts = ManyOptions {
        test,
        correction: a.correction,
        alpha: a.alpha,
        resamples: a.resamples,
        trials: a.trials,
        seed: a.seed,
        higher_is_better: metric.higher_is_better(),
    };
    let baseline = resolve_baseline(&runs.names, &a.baseline)?;
    let label = format!("{metric} ({})", conv.name);
    let cmp = compare_runs(&runs.names, v, baseline, &label, &opts)?;
    print!("{}", cmp.render(format));
    Ok(())
}
