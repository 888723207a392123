//! `ltr interleave`: two rankers (model or score files) over one judged data file, compared by interleaving
//! against a simulated user; prints A's wins, ties and losses.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use clap::Args;
use ltr_clicks::{interleave_judged, Interleaving, InterleavingUser};

/// Arguments of `ltr interleave`.
#[derive(Debug, Args)]
pub struct InterleaveArgs {
    /// Judged data (its grades drive the simulated user).
    #[arg(long)]
    pub data: PathBuf,
    /// Ranker A: a model file, or a score file (one score per document, as `ltr predict` writes).
    #[arg(long)]
    pub a: PathBuf,
    /// Ranker B: a model file or a score file.
    #[arg(long)]
    pub b: PathBuf,
    /// Interleaving method.
    #[arg(long, default_value = "team-draft", value_parser = ["team-draft", "balanced", "probabilistic"])]
    pub method: String,
    /// Simulated user: pbm (examination (1/rank)^eta) or cascade.
    #[arg(long, default_value = "pbm", value_parser = ["pbm", "cascade"])]
    pub user: String,
    /// Severity of position bias η.
    #[arg(long, default_value_t = 1.0)]
    pub eta: f64,
    /// Documents displayed per session.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// Sessions (queries drawn uniformly).
    #[arg(long, default_value_t = 10_000)]
    pub sessions: u64,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output options.
    #[command(flatten)]
    pub output: super::OutputOpts,
}

pub(crate) fn scores(path: &Path, ds: &ltr_data::Dataset, data: &Path) -> Result<Vec<f64>> {
    match ltr_export::load_model(path) {
        Ok(mut m) => Ok(ltr_export::score_loaded(
            &mut m,
            ds,
            &data.display().to_string(),
        )?),
        Err(_) => {
            let s = ltr_metrics::read_scores(path)?;
            ltr_metrics::check_scores_fit(&s, ds, path, data)?;
            Ok(s)
        }
    }
}

/// Run `ltr interleave`.
pub fn run(a: InterleaveArgs) -> Result<()> {
    if a.sessions == 0 || a.top == 0 || !(a.eta >= 0.0 && a.eta.is_finite()) {
        bail!("--sessions and --top must be at least 1 and --eta a number >= 0");
    }
    let ds = super::load_dataset(&a.data, &Default::default())?;
    let (sa, sb) = (scores(&a.a, &ds, &a.data)?, scores(&a.b, &ds, &a.data)?);
    let user = InterleavingUser::new(a.user == "cascade", a.eta);
    let method = Interleaving::parse(&a.method)?;
    let o = interleave_judged(method, &ds, &sa, &sb, a.top, &user, a.sessions, a.seed);
    match a.output.json {
        true => println!(
            "{}",
            serde_json::json!({"wins": o.wins, "ties": o.ties, "losses": o.losses})
        ),
        false => println!("wins\t{}\nties\t{}\nlosses\t{}", o.wins, o.ties, o.losses),
    }
    Ok(())
}
