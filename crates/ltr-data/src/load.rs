//! Reading a dataset by its path, whatever its form: the checked binary cache (`.ltrcache`) is loaded, any other
//! file parsed as LETOR/SVMlight — what every command of `ltr` and every training run reads data with.

use std::path::Path;

use crate::{load_cache, read_letor_with, Dataset, ParseOptions, Result};

/// Read `path`: a `.ltrcache` file (`ltr shard --out F.ltrcache`) is loaded and checked, not parsed; anything else
/// is parsed with `opts`. Errors name the file (and the line, for a malformed line).
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("train.txt");
/// std::fs::write(&path, "2 qid:1 1:0.5\n0 qid:1 1:0.1\n").unwrap();
/// let ds = ltr_data::read_dataset(&path, &Default::default()).unwrap();
/// assert_eq!((ds.n_queries(), ds.n_docs()), (1, 2));
/// ```
pub fn read_dataset(path: &Path, opts: &ParseOptions) -> Result<Dataset> {
    let t = std::time::Instant::now();
    let cached = path.extension().is_some_and(|e| e == "ltrcache");
    let ds = if cached {
        load_cache(path, None)?
    } else {
        read_letor_with(path, opts)?
    };
    tracing::debug!(
        "{}: {} queries, {} documents {} in {:.3}s",
        path.display(),
        ds.n_queries(),
        ds.n_docs(),
        if cached { "loaded" } else { "parsed" },
        t.elapsed().as_secs_f64()
    );
    Ok(ds)
}
