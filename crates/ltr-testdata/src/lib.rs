//! Test and benchmark support (never a dependency of a library): where the shared benchmark folders live.
//!
//! Tests that need real data call [`shared_datasets_dir`] and skip with a printed reason when it is `None` — a
//! user's fresh clone has no `../shared/datasets`.
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

/// Where the shared benchmark folders (`MQ2008/`, `OHSUMED/`) live: `$LTR_DATASETS` if set, else
/// `../shared/datasets` beside the project root. `None` when the folder is absent.
pub fn shared_datasets_dir() -> Option<PathBuf> {
    let p = match std::env::var_os("LTR_DATASETS") {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets"),
    };
    p.is_dir().then_some(p)
}
