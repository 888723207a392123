//! `ltr inspect FILE [--json]`: a dataset or model summary.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

/// Arguments of `ltr inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A LETOR/SVMlight data file or a model file.
    pub file: PathBuf,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
    /// How the data file is read.
    #[command(flatten)]
    pub read: super::DataOpts,
}

/// Run the command.
pub fn run(a: InspectArgs) -> Result<()> {
    if ltr_export::is_model_file(&a.file) {
        // An ltr model, or a RankLib one.
        let m = ltr_export::load_model(&a.file)?;
        print!("{}", m.describe(a.output.json));
        return Ok(());
    }
    let ds = super::load_dataset(&a.file, &a.read)?;
    print!(
        "{}",
        ltr_learn::describe_dataset(&ds, &a.file.display().to_string(), a.output.json)
    );
    Ok(())
}
