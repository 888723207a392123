//! Named hold points, so that tests can act on a process while it provably is at a given step — kill a rank
//! mid-training, or check that training releases Python's GIL — instead of sleeping and hoping that the step is
//! still running.
//!
//! Inert unless `LTR_TEST_HOLD_DIR` and `LTR_TEST_HOLD_AT` are both set (one environment lookup per call; the points
//! sit once per training, never in a loop). With `LTR_TEST_HOLD_AT=NAME`, every arrival at point `NAME` holds; with
//! `NAME#N`, only the process's `N`-th arrival does. A holding thread writes `holding-<pid>-<k>` (its process id
//! inside, `k` the arrival number) into the directory and waits until a file `release` appears there. It then
//! renames its file to `released-<pid>-<k>`. If no release comes within `LTR_TEST_HOLD_LIMIT_S` seconds (default
//! 600) it renames it to `expired-<pid>-<k>` and goes on, so a test that fails never leaves a process waiting
//! forever, and a test can tell a real release from a timeout.
//!
//! ```
//! // Not set: a no-op.
//! ltr_core::test_hold::point("fit");
//! ```

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The directory of the hold files.
pub const DIR_VARIABLE: &str = "LTR_TEST_HOLD_DIR";
/// `NAME` or `NAME#N`: where to hold.
pub const AT_VARIABLE: &str = "LTR_TEST_HOLD_AT";
/// Seconds to wait for `release` before going on.
pub const LIMIT_VARIABLE: &str = "LTR_TEST_HOLD_LIMIT_S";

static ARRIVALS: AtomicUsize = AtomicUsize::new(0);

/// Hold here if the environment names this point (see the module's documentation); otherwise return at once.
pub fn point(name: &str) {
    let Some(dir) = std::env::var_os(DIR_VARIABLE) else {
        return;
    };
    let Ok(at) = std::env::var(AT_VARIABLE) else {
        return;
    };
    let (wanted, nth) = match at.split_once('#') {
        Some((n, k)) => (n, k.parse::<usize>().ok()),
        None => (at.as_str(), None),
    };
    if wanted != name {
        return;
    }
    let arrival = ARRIVALS.fetch_add(1, Ordering::SeqCst) + 1;
    if nth.is_some_and(|k| k != arrival) {
        return;
    }
    let limit = std::env::var(LIMIT_VARIABLE)
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(600.0);
    hold(Path::new(&dir), arrival, Duration::from_secs_f64(limit));
}

fn named(dir: &Path, what: &str, arrival: usize) -> PathBuf {
    dir.join(format!("{what}-{}-{arrival}", std::process::id()))
}

fn hold(dir: &Path, arrival: usize, limit: Duration) {
    let holding = named(dir, "holding", arrival);
    // Written under a temporary name and renamed, so a reader never sees a file without its process id.
    let tmp = named(dir, ".tmp", arrival);
    if std::fs::write(&tmp, format!("{}\n", std::process::id())).is_err()
        || std::fs::rename(&tmp, &holding).is_err()
    {
        return;
    }
    let release = dir.join("release");
    let t0 = Instant::now();
    let outcome = loop {
        if release.exists() {
            break "released";
        }
        if t0.elapsed() > limit {
            break "expired";
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = std::fs::rename(&holding, named(dir, outcome, arrival));
}
