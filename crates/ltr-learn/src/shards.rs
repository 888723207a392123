//! Whole-query shards for data-parallel training: which queries each rank trains on, read from one file per rank
//! (`{rank}` in the path) or as each rank's share of one file, balanced by pairs.

use std::ops::Range;
use std::path::{Path, PathBuf};

use ltr_core::{LtrError, Result};
use ltr_data::{Dataset, ParseOptions};

/// Where rank `rank` reads its shard: `{rank}` in `pattern` replaced by the rank; `None` when the path has no
/// `{rank}` (every rank then reads the one file and keeps its share).
pub fn shard_path(pattern: &Path, rank: usize) -> Option<PathBuf> {
    let text = pattern.to_string_lossy();
    text.contains("{rank}")
        .then(|| PathBuf::from(text.replace("{rank}", &rank.to_string())))
}

/// The runs of whole queries of `ds` (read from `path`) for `parts` ranks, balanced by pairs.
pub fn balanced_ranges(ds: &Dataset, parts: usize, path: &Path) -> Result<Vec<Range<usize>>> {
    ltr_pairs::balanced_query_ranges(ds, parts)
        .map_err(|e| LtrError::Training(format!("{}: {e}", path.display())))
}

/// `ds` in `parts` runs of whole queries, balanced by pairs (one part: `ds` itself, not a copy).
pub(crate) fn split(mut ds: Dataset, parts: usize, path: &Path) -> Result<Vec<Dataset>> {
    if parts == 1 {
        return Ok(vec![ds]);
    }
    // The ranges are consecutive: split the parts off from the last, so that the data and one part are held at
    // once, not the data and all its parts (3.77 M documents on 2 thread ranks: 4.6 GB at the peak, twice the
    // data).
    let ranges = balanced_ranges(&ds, parts, path)?;
    let mut out: Vec<Dataset> = Vec::with_capacity(parts);
    for r in ranges.iter().skip(1).rev() {
        out.push(ds.split_off_queries(r.start));
    }
    out.push(ds);
    out.reverse();
    Ok(out)
}

/// Rank `rank`'s queries of `size` ranks: its own file (`{rank}` in `pattern`), or its balanced share of the one
/// file.
pub(crate) fn load_shard(
    pattern: &Path,
    opts: &ParseOptions,
    rank: usize,
    size: usize,
) -> Result<Dataset> {
    if let Some(path) = shard_path(pattern, rank) {
        return Ok(ltr_data::read_dataset(&path, opts)?);
    }
    let mut all = ltr_data::read_dataset(pattern, opts)?;
    if size == 1 {
        return Ok(all);
    }
    let range = balanced_ranges(&all, size, pattern)?.swap_remove(rank);
    // In place: the peak is the data, not the data and a copy of this rank's part.
    all.retain_queries(range);
    Ok(all)
}

/// Every rank's shard, for thread ranks in one process: one file per rank, or the one file split by pairs.
pub(crate) fn load_all(pattern: &Path, opts: &ParseOptions, ranks: usize) -> Result<Vec<Dataset>> {
    match shard_path(pattern, 0) {
        Some(_) => (0..ranks)
            .map(|r| load_shard(pattern, opts, r, ranks))
            .collect(),
        None => split(ltr_data::read_dataset(pattern, opts)?, ranks, pattern),
    }
}

/// Why `out` cannot name the files of `ranks` shards, if it cannot: more than one rank needs `{rank}` in the path.
/// [`write_shards`] refuses such an output; `ltr shard` asks before it reads the data.
pub fn shard_output_problem(out: &Path, ranks: usize) -> Option<String> {
    (shard_path(out, 0).is_none() && ranks != 1).then(|| {
        format!(
            "{} has no `{{rank}}` to number the shards by",
            out.display()
        )
    })
}

/// Write `ds` (read from `source`) as `ranks` shard files of whole queries balanced by pairs, at `out` with
/// `{rank}` replaced (`out` itself for one rank); a name ending in `.ltrcache` writes the checked binary cache.
/// One part is in memory at a time (none for one rank), so the peak is the data and its largest part. Returns
/// each file with its query and document counts.
pub fn write_shards(
    ds: &Dataset,
    source: &Path,
    ranks: usize,
    out: &Path,
) -> Result<Vec<(PathBuf, usize, usize)>> {
    if ranks == 0 {
        return Err(LtrError::param("ranks", "must be at least 1"));
    }
    if let Some(problem) = shard_output_problem(out, ranks) {
        return Err(LtrError::param("out", problem));
    }
    let mut written = Vec::with_capacity(ranks);
    for (rank, range) in balanced_ranges(ds, ranks, source)?.into_iter().enumerate() {
        let owned;
        let part = if ranks == 1 {
            ds
        } else {
            owned = ds.select_queries(&range.collect::<Vec<_>>());
            &owned
        };
        let path = shard_path(out, rank).unwrap_or_else(|| out.to_path_buf());
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| ltr_data::DataError::io(dir, e))?;
        }
        if path.extension().is_some_and(|e| e == "ltrcache") {
            ltr_data::save_cache(part, &path, None)?;
        } else {
            ltr_data::write_letor(part, &path)?;
        }
        written.push((path, part.n_queries(), part.n_docs()));
    }
    Ok(written)
}
