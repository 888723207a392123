//! `ltr eval --format trec_eval` and trec_eval's flags: the flags mapped to `ltr_metrics::treceval::Options`, the
//! report printed. Classifying the asked names and building the rows is `ltr_metrics::asked`'s.

use std::path::Path;

use anyhow::{bail, Result};
use ltr_metrics::treceval::{self, Options};

use super::eval_args::EvalArgs;

/// trec_eval's flags from `ltr eval`'s arguments.
pub fn options(a: &EvalArgs) -> Result<Options> {
    let level = match a.relevance_level {
        Some(l) if l.fract() != 0.0 => {
            bail!("-l/--relevance-level {l}: trec_eval's relevance level is an integer")
        }
        Some(l) => l as i64,
        None => 1,
    };
    Ok(Options {
        per_query: a.per_query,
        complete: a.complete,
        relevance_level: level,
        summary: !a.no_summary,
        judged_only: a.judged_only,
        num_docs_in_coll: a.collection_size.unwrap_or(0),
        max_per_topic: a.max_per_query.unwrap_or(2_147_483_647),
    })
}

/// `--format trec_eval`: trec_eval's output, the `-m` items read as trec_eval reads them (default `official`).
pub fn print_trec_eval(a: &EvalArgs, run: &Path, qrels: &Path) -> Result<()> {
    let set = ltr_metrics::trec_measure_set(&a.metrics)?;
    let report = treceval::trec_eval(qrels, run, &set, &options(a)?)?;
    print!("{}", report.to_trec_eval());
    Ok(())
}
