//! Setup shared by the test modules.

use std::path::{Path, PathBuf};

use xtask_lab::reproduce::{Cells, Ctx};

/// A reproduction context on generated data writing to `out` (its cells in `out/cells`), with no progress drawn:
/// `jobs` workers per [`xtask_lab::reproduce::in_parallel`] call, `places` cells computing at once, and
/// `data_roots` searched for installed benchmarks.
pub fn quiet_ctx(out: &Path, jobs: usize, places: usize, data_roots: Vec<PathBuf>) -> Ctx {
    Ctx {
        benches: Default::default(),
        synthetic: true,
        out: out.to_path_buf(),
        cells: Cells::with_protocol(out.join("cells"), false, places),
        slice: false,
        progress: indicatif::MultiProgress::with_draw_target(
            indicatif::ProgressDrawTarget::hidden(),
        ),
        jobs,
        data_roots,
    }
}
