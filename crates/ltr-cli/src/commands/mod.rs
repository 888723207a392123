//! One module per subcommand.

pub mod clicks;
pub mod compare;
pub mod eval;
pub mod eval_args;
pub mod eval_trec;
pub mod experiment;
pub mod export;
pub mod fuse;
pub mod generate;
pub mod inspect;
pub mod interleave;
pub mod predict;
pub mod shard;
pub mod train;

use std::path::Path;

use anyhow::{Context, Result};
use ltr_data::{Dataset, ParseOptions, RepeatedQid};

/// How data files are read: the options every command that reads a LETOR file shares.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct DataOpts {
    /// Merge the runs of a qid that reappears later in a file (default: an error).
    #[arg(long)]
    pub regroup: bool,
    /// Accept the same `#docid` twice within one query (default: an error naming both lines).
    #[arg(long)]
    pub allow_duplicate_docids: bool,
}

impl DataOpts {
    /// The parser's options.
    pub fn parse_options(&self) -> ParseOptions {
        ParseOptions {
            allow_duplicate_docids: self.allow_duplicate_docids,
            repeated_qid: if self.regroup {
                RepeatedQid::Regroup
            } else {
                RepeatedQid::Error
            },
            ..Default::default()
        }
    }
}

/// What a command prints: the options every command with a machine-readable form shares.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct OutputOpts {
    /// Print JSON on stdout (logs and progress stay on stderr).
    #[arg(long)]
    pub json: bool,
}

/// Read a dataset ([`ltr_data::read_dataset`]: a `.ltrcache` is loaded, anything else parsed).
pub fn load_dataset(path: &Path, opts: &DataOpts) -> Result<Dataset> {
    Ok(ltr_data::read_dataset(path, &opts.parse_options())?)
}

/// Parse metric names (repeatable, each a comma list split outside parentheses, so `P(rel=2,judged_only=True)@5`
/// and `OER(2,1)` stay whole), with a default list when none is given.
#[cfg(test)]
pub fn parse_metrics(names: &[String], default: &[&str]) -> Result<Vec<ltr_metrics::Metric>> {
    let list: Vec<String> = if names.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        names.to_vec()
    };
    ltr_metrics::split_measures(&list)
        .iter()
        .map(|s| {
            s.parse::<ltr_metrics::Metric>()
                .map_err(anyhow::Error::from)
        })
        .collect::<Result<Vec<_>>>()
        .context("--metric")
}

/// Resolve a convention name and an optional tie policy.
pub fn convention(name: &str, ties: Option<&str>) -> Result<ltr_metrics::Convention> {
    let mut c: ltr_metrics::Convention = name
        .parse()
        .map_err(anyhow::Error::msg)
        .context("--convention")?;
    if let Some(t) = ties {
        c = c.with_ties(t.parse().map_err(anyhow::Error::msg).context("--ties")?);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_inside_parentheses_stay_with_their_measure() {
        let v = vec![
            "P(judged_only=True,rel=2)@5, MAP".to_string(),
            "OER(2,1)".to_string(),
            "nDCG@10,,".to_string(),
        ];
        assert_eq!(
            ltr_metrics::split_measures(&v),
            ["P(judged_only=True,rel=2)@5", "MAP", "OER(2,1)", "nDCG@10"]
        );
        let m = parse_metrics(&v, &[]).unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].to_string(), "P(judged_only=True,rel=2)@5");
        assert_eq!(m[2].to_string(), "OER(2,1)");
        assert_eq!(parse_metrics(&[], &["NDCG@10", "MAP"]).unwrap().len(), 2);
    }
}
