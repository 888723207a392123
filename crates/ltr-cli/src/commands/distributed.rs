//! `ltr train --distributed` (data-parallel training over ranks: threads, or MPI processes) and `ltr shard`
//! (one file per rank, whole queries, balanced by pairs). Training itself is `ltr_learn::train_distributed`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use ltr_core::{Allreduce, ThreadGroup, TrainingSummary};
use ltr_data::{Dataset, PreprocessSpec};
use ltr_learn::{Grid, TrainRequest, Trained};
use ltr_metrics::{Convention, Metric};

use super::train::TrainArgs;

/// Where rank `rank` reads its shard: `{rank}` in the path is replaced by the rank.
fn shard_path(pattern: &Path, rank: usize) -> Option<PathBuf> {
    let text = pattern.to_string_lossy();
    text.contains("{rank}")
        .then(|| PathBuf::from(text.replace("{rank}", &rank.to_string())))
}

/// This rank's queries: its own file, or its balanced share of the one file.
fn load_shard(a: &TrainArgs, rank: usize, size: usize) -> Result<Dataset> {
    if let Some(path) = shard_path(&a.train, rank) {
        return super::load_dataset(&path, a.regroup, a.allow_duplicate_docids);
    }
    let all = super::load_dataset(&a.train, a.regroup, a.allow_duplicate_docids)?;
    if size == 1 {
        return Ok(all);
    }
    let range = ranges(&all, size, &a.train)?.swap_remove(rank);
    Ok(all.select_queries(&range.collect::<Vec<_>>()))
}

/// The runs of whole queries of `ds` for `parts` ranks, balanced by pairs.
fn ranges(ds: &Dataset, parts: usize, path: &Path) -> Result<Vec<std::ops::Range<usize>>> {
    ltr_pairs::balanced_query_ranges(ds, parts)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// `ds` in `parts` runs of whole queries, balanced by pairs (one part: `ds` itself, not a copy).
fn split(ds: Dataset, parts: usize, path: &Path) -> Result<Vec<Dataset>> {
    if parts == 1 {
        return Ok(vec![ds]);
    }
    Ok(ranges(&ds, parts, path)?
        .into_iter()
        .map(|r| ds.select_queries(&r.collect::<Vec<_>>()))
        .collect())
}

/// What every rank trains: the same on all of them.
struct Job<'a> {
    args: &'a TrainArgs,
    algo: &'a str,
    grid: &'a Grid,
    preprocess: &'a PreprocessSpec,
    metric: Metric,
    convention: Convention,
}

/// Train on this rank's shard; every rank returns the same model.
fn train_rank(
    job: &Job<'_>,
    shard: Dataset,
    comm: &dyn Allreduce,
) -> Result<(Trained, TrainingSummary)> {
    let (a, algo, grid) = (job.args, job.algo, job.grid);
    let t0 = Instant::now();
    // Preprocessed in place (statistics over all ranks): each rank holds its shard once.
    let prepared = ltr_learn::prepare(job.preprocess, shard, comm)
        .with_context(|| format!("preprocessing on rank {}", comm.rank()))?;
    let shard = &prepared.data;
    let req = TrainRequest::new(shard)
        .metric(job.metric, job.convention)
        .seed(a.seed)
        .prepared(&prepared.preprocess);
    let trained = ltr_learn::train_distributed(algo, grid, &req, comm)
        .with_context(|| format!("training {algo} on rank {}", comm.rank()))?;
    let totals = comm.gather_f64(&[shard.n_queries() as f64, shard.n_docs() as f64])?;
    let (queries, documents) = totals
        .chunks_exact(2)
        .fold((0.0, 0.0), |(q, d), c| (q + c[0], d + c[1]));
    tracing::debug!(
        "rank {}: {} queries, {} documents, trained in {:.3}s",
        comm.rank(),
        shard.n_queries(),
        shard.n_docs(),
        t0.elapsed().as_secs_f64()
    );
    let features = match &trained.preprocess {
        Some(p) => p.raw_features,
        None => shard.n_features(),
    };
    let summary = TrainingSummary {
        train_file: a.train.display().to_string(),
        validation_file: None,
        queries: queries as usize,
        documents: documents as usize,
        features,
        seed: a.seed,
        seconds: 0.0,
    };
    Ok((trained, summary))
}

/// `ltr train --distributed`.
pub fn train(
    a: &TrainArgs,
    algo: &str,
    grid: &Grid,
    preprocess: &PreprocessSpec,
    metric: Metric,
    convention: Convention,
) -> Result<()> {
    let t0 = Instant::now();
    let job = Job {
        args: a,
        algo,
        grid,
        preprocess,
        metric,
        convention,
    };
    #[cfg(feature = "mpi")]
    if let Some(mpi) = ltr_mpi::Mpi::from_launcher() {
        return train_mpi(&job, &mpi, t0);
    }
    refuse_launcher_without_backend(ltr_mpi::ENABLED, ltr_mpi::launcher_variable())?;
    let ranks = match a.ranks {
        Some(0) => bail!("--ranks must be at least 1"),
        Some(r) => r,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    // One process: read the shards up front (one file per rank, or the one file split by pairs).
    let shards: Vec<Dataset> = match shard_path(&a.train, 0) {
        Some(_) => (0..ranks)
            .map(|r| load_shard(a, r, ranks))
            .collect::<Result<_>>()?,
        None => {
            let all = super::load_dataset(&a.train, a.regroup, a.allow_duplicate_docids)?;
            split(all, ranks, &a.train)?
        }
    };
    tracing::info!(
        "training {algo} on {ranks} ranks (threads) of {} queries: {}",
        shards.iter().map(Dataset::n_queries).sum::<usize>(),
        shards
            .iter()
            .map(|s| s.n_docs().to_string())
            .collect::<Vec<_>>()
            .join(" + ")
    );
    // Each rank takes its shard (and frees it when done).
    let shards: Vec<std::sync::Mutex<Option<Dataset>>> = shards
        .into_iter()
        .map(|s| std::sync::Mutex::new(Some(s)))
        .collect();
    let results = ThreadGroup::run(ranks, |comm| {
        let shard = shards[comm.rank()]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .expect("each rank takes its shard once");
        train_rank(&job, shard, comm)
            .map_err(|e| ltr_core::LtrError::Training(crate::error_chain(&e)))
    });
    let mut first = None;
    for r in results {
        match r {
            Ok(t) => {
                first.get_or_insert(t);
            }
            // The failing rank's own error comes first; the others only say that it failed.
            Err(e) => bail!("{e}"),
        }
    }
    let (trained, mut summary) = first.context("no rank returned")?;
    summary.seconds = t0.elapsed().as_secs_f64();
    super::train::save(a, trained.into_model_file(summary), t0)
}

/// An error when an MPI launcher started this process (`launcher`: its marking variable) but the build has no MPI
/// backend: every process of `mpirun -n P` would otherwise train alone — on rank 0's shard, as the only rank —
/// and write its own model, a silent wrong answer.
fn refuse_launcher_without_backend(backend: bool, launcher: Option<(&str, String)>) -> Result<()> {
    match launcher {
        Some((var, value)) if !backend => bail!(
            "this `ltr` was built without MPI but runs under an MPI launcher ({var}={value}): build it with \
             `cargo build --release -p ltr-cli --features mpi` (scripts/setup-mpi.sh installs Open MPI), or drop \
             mpirun and train on thread ranks with --ranks N"
        ),
        _ => Ok(()),
    }
}

#[cfg(feature = "mpi")]
fn train_mpi(job: &Job<'_>, mpi: &ltr_mpi::Mpi, t0: Instant) -> Result<()> {
    let a = job.args;
    let (rank, size) = (mpi.rank(), mpi.size());
    if let Some(r) = a.ranks.filter(|&r| r != size) {
        eprintln!("error: --ranks {r} disagrees with the {size} MPI processes (drop --ranks under mpirun)");
        mpi.abort(2);
    }
    // A rank that fails alone must stop the job: the others would wait in their next collective forever.
    let fail = |e: anyhow::Error| -> ! {
        eprintln!("error: rank {rank} of {size}: {}", crate::error_chain(&e));
        mpi.abort(1)
    };
    let shard = load_shard(a, rank, size).unwrap_or_else(|e| fail(e));
    if rank == 0 {
        tracing::info!("training {} on {size} MPI ranks", job.algo);
    }
    let (trained, mut summary) = train_rank(job, shard, mpi).unwrap_or_else(|e| fail(e));
    if rank == 0 {
        summary.seconds = t0.elapsed().as_secs_f64();
        super::train::save(a, trained.into_model_file(summary), t0).unwrap_or_else(|e| fail(e));
    }
    Ok(())
}

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
    /// Merge the runs of a qid that reappears later in the file (default: an error).
    #[arg(long)]
    pub regroup: bool,
}

/// `ltr shard`: one file per rank for `ltr train --distributed --train 'PATTERN'`.
pub fn shard(a: ShardArgs) -> Result<()> {
    if shard_path(&a.out, 0).is_none() && a.ranks != 1 {
        bail!(
            "--out {} has no `{{rank}}` to number the shards by",
            a.out.display()
        );
    }
    let ds = super::load_dataset(&a.data, a.regroup, false)?;
    // One part in memory at a time (and no copy at all for one part): peak = the data + its largest part.
    for (rank, range) in ranges(&ds, a.ranks, &a.data)?.into_iter().enumerate() {
        let owned;
        let part = if a.ranks == 1 {
            &ds
        } else {
            owned = ds.select_queries(&range.collect::<Vec<_>>());
            &owned
        };
        let path = shard_path(&a.out, rank).unwrap_or_else(|| a.out.clone());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        if path.extension().is_some_and(|e| e == "ltrcache") {
            ltr_data::save_cache(part, &path, None)
        } else {
            ltr_data::write_letor(part, &path)
        }
        .with_context(|| format!("writing {}", path.display()))?;
        tracing::info!(
            "{}: {} queries, {} documents",
            path.display(),
            part.n_queries(),
            part.n_docs()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_without_mpi_refuses_to_run_under_mpirun() {
        let launched = || Some(("OMPI_COMM_WORLD_SIZE", "2".to_string()));
        let e = refuse_launcher_without_backend(false, launched())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("OMPI_COMM_WORLD_SIZE=2") && e.contains("--features mpi"),
            "{e}"
        );
        assert!(refuse_launcher_without_backend(true, launched()).is_ok());
        assert!(refuse_launcher_without_backend(false, None).is_ok());
    }
}
