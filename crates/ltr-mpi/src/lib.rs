//! # ltr-mpi
//!
//! [`ltr_core::Allreduce`] over MPI (`MPI_COMM_WORLD`), for `mpirun -n P ltr train --distributed …`. Compiled
//! only with the `mpi` feature; the default build of the workspace needs no MPI library.
//!
//! Exact sums travel as `i64` limbs summed by `MPI_Allreduce(MPI_SUM)` — integer addition, so the reduction order
//! MPI picks cannot change a bit. Ordered sums of short vectors are an `MPI_Allgather` of every rank's values,
//! added in rank order; long ones an `MPI_Alltoallv` (each rank receives one part of every rank's vector and adds
//! it in rank order) and an `MPI_Allgatherv` of the added parts. Gathers of varying length (Coordinate Ascent's
//! crossing points) are an `MPI_Allgatherv` too, without padding every rank to the longest.
//!
//! MPI's default error handler is fatal: a rank that dies makes `mpirun` stop the whole job with a message naming
//! it, and a rank that fails on its own input calls `Mpi::abort` after printing why, so no rank waits forever.
// Unit tests live in tests/: `cargo test --all-targets` (CI's one build) compiles a unit-test harness of every
// library and binary even when it has no tests, so under `cfg(test)` this crate is empty and that harness is free.
#![cfg(not(test))]
#![deny(missing_docs)]

#[cfg(feature = "mpi")]
mod backend {
    use ltr_core::{check_parts, Allreduce, LtrError, Result};
    use mpi::collective::SystemOperation;
    use mpi::datatype::{Partition, PartitionMut};
    use mpi::environment::Universe;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::{Communicator, CommunicatorCollectives};
    use mpi::Count;

    /// The MPI world this process belongs to.
    pub struct Mpi {
        // Dropping the universe finalises MPI: it lives as long as the communicator.
        _universe: Universe,
        world: SimpleCommunicator,
    }

    impl std::fmt::Debug for Mpi {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Mpi")
                .field("rank", &self.world.rank())
                .field("size", &self.world.size())
                .finish()
        }
    }

    impl Mpi {
        /// Initialise MPI when this process was started by an MPI launcher (`mpirun`/`mpiexec`: Open MPI's
        /// `OMPI_COMM_WORLD_SIZE`, or PMI's `PMI_SIZE`); `None` otherwise, and when MPI was already initialised.
        pub fn from_launcher() -> Option<Mpi> {
            super::launcher_variable()?;
            let universe = mpi::initialize()?;
            let world = universe.world();
            Some(Mpi {
                _universe: universe,
                world,
            })
        }

        /// Stop every rank of the job with `code` (after this rank has said why on stderr).
        pub fn abort(&self, code: i32) -> ! {
            self.world.abort(code)
        }
    }

    impl Allreduce for Mpi {
        fn rank(&self) -> usize {
            self.world.rank() as usize
        }
        fn size(&self) -> usize {
            self.world.size() as usize
        }
        fn sum_i64(&self, buf: &mut [i64]) -> Result<()> {
            let local = buf.to_vec();
            self.world
                .all_reduce_into(&local[..], buf, SystemOperation::sum());
            Ok(())
        }
        fn gather_f64(&self, local: &[f64]) -> Result<Vec<f64>> {
            let mut out = vec![0.0; local.len() * self.size()];
            self.world.all_gather_into(local, &mut out[..]);
            Ok(out)
        }
        fn exchange_parts_f64(&self, local: &[f64], counts: &[usize]) -> Result<Vec<f64>> {
            let ranks = self.size();
            let mine = counts.get(self.rank()).copied().unwrap_or(0);
            check_parts(local.len(), counts, ranks)?;
            let send_counts = as_counts(counts.iter().copied())?;
            let send_displs = displacements(&send_counts)?;
            let recv_counts = as_counts(std::iter::repeat_n(mine, ranks))?;
            let recv_displs = displacements(&recv_counts)?;
            let mut out = vec![0.0; mine * ranks];
            let send = Partition::new(local, send_counts, send_displs);
            let mut recv = PartitionMut::new(&mut out[..], recv_counts, recv_displs);
            self.world.all_to_all_varcount_into(&send, &mut recv);
            Ok(out)
        }
        fn gather_parts_f64(&self, local: &[f64], counts: &[usize]) -> Result<Vec<f64>> {
            check_parts(counts.iter().sum(), counts, self.size())?;
            if counts[self.rank()] != local.len() {
                return Err(LtrError::Training(format!(
                    "a collective's parts ({counts:?}) disagree with rank {}'s {} values",
                    self.rank(),
                    local.len()
                )));
            }
            let recv_counts = as_counts(counts.iter().copied())?;
            let recv_displs = displacements(&recv_counts)?;
            let mut out = vec![0.0; counts.iter().sum()];
            let mut recv = PartitionMut::new(&mut out[..], recv_counts, recv_displs);
            self.world.all_gather_varcount_into(local, &mut recv);
            Ok(out)
        }
        fn min_max_u64(&self, mins: &mut [u64], maxs: &mut [u64]) -> Result<()> {
            let local = mins.to_vec();
            self.world
                .all_reduce_into(&local[..], mins, SystemOperation::min());
            let local = maxs.to_vec();
            self.world
                .all_reduce_into(&local[..], maxs, SystemOperation::max());
            Ok(())
        }
    }

    /// MPI's `int` counts, or an error for a part too large for them.
    fn as_counts(counts: impl Iterator<Item = usize>) -> Result<Vec<Count>> {
        counts
            .map(|c| {
                Count::try_from(c).map_err(|_| {
                    LtrError::Training(format!(
                        "a part of {c} values is more than one MPI message can carry"
                    ))
                })
            })
            .collect()
    }

    /// Where each part starts, from the parts' lengths.
    fn displacements(counts: &[Count]) -> Result<Vec<Count>> {
        let mut at: Count = 0;
        counts
            .iter()
            .map(|&c| {
                let start = at;
                at = at.checked_add(c).ok_or_else(|| {
                    LtrError::Training(
                        "a collective of more values than one MPI message can carry".into(),
                    )
                })?;
                Ok(start)
            })
            .collect()
    }
}

#[cfg(feature = "mpi")]
pub use backend::Mpi;

/// Whether this build carries the MPI backend (the `mpi` feature).
pub const ENABLED: bool = cfg!(feature = "mpi");

/// The environment variable by which an MPI launcher (`mpirun`/`mpiexec`: Open MPI's `OMPI_COMM_WORLD_SIZE`, PMI's
/// `PMI_SIZE`, PMIx's `PMIX_RANK`) marks the processes it starts, with its value; `None` outside a launcher. Known
/// in every build, so that a build without the backend can refuse to run under `mpirun` instead of training each
/// process alone.
pub fn launcher_variable() -> Option<(&'static str, String)> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"]
        .into_iter()
        .find_map(|v| Some((v, std::env::var(v).ok()?)))
}
