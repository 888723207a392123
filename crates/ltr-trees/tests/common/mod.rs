//! Setup shared by the integration tests' modules.

/// `f` run on a rayon pool of `threads` threads: the determinism tests compare a run on 1 thread with one on 2.
pub fn with_threads<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool")
        .install(f)
}
