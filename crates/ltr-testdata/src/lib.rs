//! Test and benchmark support (never a dependency of a library): where the shared benchmark folders live.
//!
//! Tests that need real data call [`shared_datasets_dir`] and skip with a printed reason when it is `None` — a
//! user's fresh clone has no `../shared/datasets`.
// Empty under `cfg(test)`: `cargo test --all-targets` builds the library's unit-test harness, which would compile
// the library again; its tests live in the integration binary instead (`tests/main.rs`).
#![cfg(not(test))]
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

/// Marsaglia's xorshift64 (shifts 13, 7, 17): a test's stream of pseudo-random numbers that is the same on every
/// machine and needs no dependency, for tests that draw many small random cases (parser and reader inputs, ties).
/// Not for anything a model or a result depends on.
#[derive(Debug, Clone)]
pub struct XorShift64(u64);

impl XorShift64 {
    /// A stream from `seed`, which must not be 0 (xorshift maps 0 to itself forever).
    pub fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "xorshift64 needs a seed other than 0");
        Self(seed)
    }
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// The next number modulo `m` (slightly uneven for a large `m`, which these tests do not mind).
    pub fn below(&mut self, m: u64) -> u64 {
        self.next_u64() % m
    }
}
