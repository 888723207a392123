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
