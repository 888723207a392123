//! `ltr shard`: one file per rank for `ltr train --distributed --train 'PATTERN'` (whole queries, balanced by
//! pairs: [`ltr_learn::write_shards`]).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

/// Arguments of `ltr shard`.
#[derive(Debug, Args)]
pub struct ShardArgs {
    /// The data file to split (LETOR/SVMlight).
    #[arg(long)]
    pub data: PathBuf,
    /// Number of shards (ranks).
    #[arg(long)]
    pub ranks: usize,
    /// Output path with `{rank}` (e.g. `shards/train-{rank}.txt`; `{rank}` may be left out with --ranks 1); each
    /// file is written atomically. A name ending in `.ltrcache` writes the checked binary cache, which every
    /// command loads instead of parsing.
    #[arg(long)]
    pub out: PathBuf,
    /// How the data file is read.
    #[command(flatten)]
    pub read: super::DataOpts,
}

/// Run the command.
pub fn run(a: ShardArgs) -> Result<()> {
    if let Some(problem) = ltr_learn::shard_output_problem(&a.out, a.ranks) {
        anyhow::bail!("--out {problem}");
    }
    let ds = super::load_dataset(&a.data, &a.read)?;
    for (path, queries, documents) in ltr_learn::write_shards(&ds, &a.data, a.ranks, &a.out)? {
        tracing::info!(
            "{}: {queries} queries, {documents} documents",
            path.display()
        );
    }
    Ok(())
}
