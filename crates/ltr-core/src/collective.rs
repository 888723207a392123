//! Data-parallel training's one communication abstraction: [`Allreduce`].
//!
//! A distributed learner runs the same code on every rank, each rank holding whole queries of the training data
//! (its shard). Wherever the single-process learner sums over queries, the distributed one sums its own queries
//! and then over ranks through an `Allreduce`; everything else (the weights, the step sizes, the stopping tests)
//! is computed identically on every rank from those sums, so all ranks take the same path and hold the same model.
//!
//! Backends: [`SingleProcess`] (one rank — what every ordinary `fit` uses), [`ThreadGroup`] (ranks as threads of
//! one process: the default, testable anywhere) and MPI (`ltr-mpi`, the optional `mpi` feature of `ltr-cli`).
//!
//! Two kinds of sum:
//! - [`Allreduce::sum_exact`] sums [`ExactVec`] accumulators as integers, so the result is the same bit for bit
//!   at any number of ranks and threads — Newton RankSVM's loss, gradient and Hessian products go this way, which
//!   is why its model is identical at 1, 2 and 3 ranks.
//! - [`Allreduce::sum_ordered`] adds every rank's f64 values in rank order (a long vector in parts, each rank
//!   adding one part): deterministic for a given number of ranks, cheaper, and enough where an algorithm's result
//!   is only meant to be reproducible (parameter mixing of the perceptrons).

use std::sync::{Arc, Condvar, Mutex};

use crate::{LtrError, Result};
use ltr_data::ExactVec;

/// Collective operations among the ranks of one training run. Every rank must make the same calls in the same
/// order with buffers of the same length; a rank that fails makes the others' calls return an error rather than
/// wait forever.
pub trait Allreduce {
    /// This rank, 0-based.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// Element-wise integer sum over all ranks, left in `buf` on every rank.
    fn sum_i64(&self, buf: &mut [i64]) -> Result<()>;
    /// Every rank's `local` (the same length on every rank), concatenated in rank order, on every rank.
    fn gather_f64(&self, local: &[f64]) -> Result<Vec<f64>>;

    /// Sum `acc` over all ranks exactly: afterwards every rank holds the sum of every rank's additions, and
    /// [`ExactVec::value`] gives the same bits on every rank whatever the number of ranks.
    fn sum_exact(&self, acc: &mut ExactVec) -> Result<()> {
        // One rank already holds the whole sums; moving them into limbs would only cost time.
        if self.size() > 1 {
            // `limbs_mut` moves every sum into normalised limbs, so every rank ships one representation.
            self.sum_i64(acc.limbs_mut())?;
            acc.normalise();
        }
        Ok(())
    }

    /// Every rank's `local`, of any length, one vector per rank in rank order, on every rank: two gathers, the
    /// lengths first, then the values ([`Allreduce::gather_parts_f64`]: `MPI_Allgatherv` under MPI). Coordinate
    /// Ascent's line search gathers its per-query values and crossing points so.
    fn gather_varying_f64(&self, local: &[f64]) -> Result<Vec<Vec<f64>>> {
        if self.size() == 1 {
            return Ok(vec![local.to_vec()]);
        }
        let lengths: Vec<usize> = self
            .gather_f64(&[local.len() as f64])?
            .iter()
            .map(|&n| n as usize)
            .collect();
        let all = self.gather_parts_f64(local, &lengths)?;
        let mut start = 0;
        Ok(lengths
            .iter()
            .map(|&n| {
                start += n;
                all[start - n..start].to_vec()
            })
            .collect())
    }

    /// Element-wise minimum of `mins` and maximum of `maxs` over all ranks, on every rank. The default gathers
    /// every rank's values (their bits carried as f64) and folds them; MPI overrides it with `MPI_MIN`/`MPI_MAX`.
    /// Coordinate Ascent's bucket exchange takes each bucket's extreme crossing points so.
    fn min_max_u64(&self, mins: &mut [u64], maxs: &mut [u64]) -> Result<()> {
        if self.size() == 1 {
            return Ok(());
        }
        let local: Vec<f64> = mins
            .iter()
            .chain(maxs.iter())
            .map(|&v| f64::from_bits(v))
            .collect();
        let all = self.gather_f64(&local)?;
        let n = local.len();
        for rank in all.chunks_exact(n.max(1)) {
            let (lo, hi) = rank.split_at(mins.len());
            for (m, v) in mins.iter_mut().zip(lo) {
                *m = (*m).min(v.to_bits());
            }
            for (m, v) in maxs.iter_mut().zip(hi) {
                *m = (*m).max(v.to_bits());
            }
        }
        Ok(())
    }

    /// Element-wise maximum over all ranks of values each ≥ 0 (or +∞, or NaN), left in `values` on every rank. The
    /// bits of such an f64 order as its value, a NaN's above every number, so this is [`Allreduce::min_max_u64`] of
    /// the bits: one collective, the same bits on every rank, and a NaN on any rank wins. A −0 counts as +0 (its
    /// sign bit would otherwise order it above everything).
    fn max_nonnegative_f64(&self, values: &mut [f64]) -> Result<()> {
        let mut bits: Vec<u64> = values.iter().map(|&v| (v + 0.0).to_bits()).collect();
        self.min_max_u64(&mut [], &mut bits)?;
        for (v, b) in values.iter_mut().zip(bits) {
            *v = f64::from_bits(b);
        }
        Ok(())
    }

    /// All-to-all: `local` is cut into consecutive parts of `counts[r]` values (the same `counts` on every rank,
    /// summing to `local.len()`), part r goes to rank r, and each rank receives its part from every rank,
    /// concatenated in rank order (`size × counts[rank]` values). The default gathers every rank's whole buffer;
    /// MPI overrides it with `MPI_Alltoallv`, which moves only `local.len()` values each way per rank.
    fn exchange_parts_f64(&self, local: &[f64], counts: &[usize]) -> Result<Vec<f64>> {
        check_parts(local.len(), counts, self.size())?;
        let all = self.gather_f64(local)?;
        let start: usize = counts[..self.rank()].iter().sum();
        let part = start..start + counts[self.rank()];
        Ok(all
            .chunks_exact(local.len().max(1))
            .flat_map(|rank| &rank[part.clone()])
            .copied()
            .collect())
    }

    /// One vector held in parts, rank r holding `counts[r]` values (the same `counts` on every rank), put together
    /// in rank order on every rank. The default pads every part to the longest and gathers; MPI overrides it with
    /// `MPI_Allgatherv`.
    fn gather_parts_f64(&self, local: &[f64], counts: &[usize]) -> Result<Vec<f64>> {
        check_parts(counts.iter().sum(), counts, self.size())?;
        check_length(local.len() * 8, counts[self.rank()] * 8)?;
        let longest = counts.iter().copied().max().unwrap_or(0);
        let mut padded = local.to_vec();
        padded.resize(longest, 0.0);
        let all = self.gather_f64(&padded)?;
        Ok(counts
            .iter()
            .enumerate()
            .flat_map(|(r, &n)| &all[r * longest..r * longest + n])
            .copied()
            .collect())
    }

    /// Element-wise sum over ranks, added in rank order (rank 0's value first), on every rank.
    ///
    /// A short vector is gathered whole. A long one is reduced in parts: each rank receives one part of every
    /// rank's vector ([`Allreduce::exchange_parts_f64`]), adds it in rank order and the parts are gathered again —
    /// about 2n values in and out per rank instead of P·n, with the same bits.
    fn sum_ordered(&self, buf: &mut [f64]) -> Result<()> {
        let ranks = self.size();
        if ranks == 1 {
            return Ok(());
        }
        let n = buf.len();
        if n < ORDERED_IN_PARTS_FROM * ranks {
            let all = self.gather_f64(buf)?;
            for (i, b) in buf.iter_mut().enumerate() {
                *b = all[i..].iter().step_by(n).sum();
            }
            return Ok(());
        }
        let counts: Vec<usize> = (0..ranks)
            .map(|r| n * (r + 1) / ranks - n * r / ranks)
            .collect();
        let received = self.exchange_parts_f64(buf, &counts)?;
        let mine = counts[self.rank()];
        let part: Vec<f64> = (0..mine)
            .map(|i| received[i..].iter().step_by(mine).sum())
            .collect();
        let all = self.gather_parts_f64(&part, &counts)?;
        check_length(all.len() * 8, n * 8)?;
        buf.copy_from_slice(&all);
        Ok(())
    }
}

/// From how many values per rank [`Allreduce::sum_ordered`] reduces in parts: below it one gather is cheaper than
/// the two collectives' latency.
const ORDERED_IN_PARTS_FROM: usize = 64;

/// Checks that `counts` cuts `len` values into one part per rank: the precondition of
/// [`Allreduce::exchange_parts_f64`] and [`Allreduce::gather_parts_f64`], shared with every backend that overrides them.
///
/// ```
/// use ltr_core::check_parts;
/// assert!(check_parts(5, &[2, 3], 2).is_ok());
/// assert!(check_parts(5, &[2, 2], 2).is_err());
/// ```
pub fn check_parts(len: usize, counts: &[usize], ranks: usize) -> Result<()> {
    if counts.len() == ranks && counts.iter().sum::<usize>() == len {
        Ok(())
    } else {
        Err(LtrError::Training(format!(
            "a collective's parts ({counts:?}) do not cut {len} values into one part for each of {ranks} ranks"
        )))
    }
}

/// One rank: every collective is the identity. Ordinary single-process training uses this.
#[derive(Debug, Clone, Copy, Default)]
pub struct SingleProcess;

impl Allreduce for SingleProcess {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn sum_i64(&self, _buf: &mut [i64]) -> Result<()> {
        Ok(())
    }
    fn gather_f64(&self, local: &[f64]) -> Result<Vec<f64>> {
        Ok(local.to_vec())
    }
}

/// What the ranks of a [`ThreadGroup`] exchange through.
#[derive(Debug)]
struct Exchange {
    size: usize,
    state: Mutex<ExchangeState>,
    changed: Condvar,
}

#[derive(Debug)]
struct ExchangeState {
    /// Each rank's contribution to the current round.
    slots: Vec<Option<Vec<u8>>>,
    /// Ranks that have read the current round's result.
    read: usize,
    /// Completed rounds.
    round: u64,
    /// The first failure of any rank: every later collective returns it.
    failed: Option<String>,
}

/// Ranks as threads of one process: the default backend of distributed training, and how its results are
/// checked on any machine. Each rank runs on its own thread with its own shard; the exchange copies each rank's
/// buffer once per collective, in rank order.
#[derive(Debug, Clone)]
pub struct ThreadGroup {
    rank: usize,
    exchange: Arc<Exchange>,
}

impl ThreadGroup {
    /// Run `work(comm)` on `ranks` threads, one per rank, and return each rank's result in rank order. When a
    /// rank returns an error or panics, the others' pending and later collectives fail with its message.
    pub fn run<T, F>(ranks: usize, work: F) -> Vec<Result<T>>
    where
        T: Send,
        F: Fn(&ThreadGroup) -> Result<T> + Sync,
    {
        assert!(ranks >= 1, "a group needs at least one rank");
        let exchange = Arc::new(Exchange {
            size: ranks,
            state: Mutex::new(ExchangeState {
                slots: vec![None; ranks],
                read: 0,
                round: 0,
                failed: None,
            }),
            changed: Condvar::new(),
        });
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..ranks)
                .map(|rank| {
                    let comm = ThreadGroup {
                        rank,
                        exchange: Arc::clone(&exchange),
                    };
                    let work = &work;
                    scope.spawn(move || {
                        let result =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&comm)))
                                .unwrap_or_else(|_| {
                                    Err(LtrError::Training(format!("rank {rank} panicked")))
                                });
                        if let Err(e) = &result {
                            comm.fail(format!("rank {rank} failed: {e}"));
                        }
                        result
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("rank threads catch their panics"))
                .collect()
        })
    }

    fn fail(&self, message: String) {
        let mut st = self
            .exchange
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        st.failed.get_or_insert(message);
        self.exchange.changed.notify_all();
    }

    /// Every rank's bytes, in rank order, once all ranks have given theirs.
    fn all_gather(&self, mine: Vec<u8>) -> Result<Vec<Vec<u8>>> {
        let ex = &*self.exchange;
        let mut st = ex.state.lock().unwrap_or_else(|p| p.into_inner());
        // Wait until the previous round has been read by everyone before filling a slot again.
        while st.slots[self.rank].is_some() && st.failed.is_none() {
            st = ex.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        if let Some(f) = &st.failed {
            return Err(LtrError::Training(f.clone()));
        }
        st.slots[self.rank] = Some(mine);
        let round = st.round;
        if st.slots.iter().all(Option::is_some) {
            st.round += 1;
            ex.changed.notify_all();
        }
        while st.round == round && st.failed.is_none() {
            st = ex.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        if let Some(f) = &st.failed {
            return Err(LtrError::Training(f.clone()));
        }
        let all: Vec<Vec<u8>> = st
            .slots
            .iter()
            .map(|s| s.clone().unwrap_or_default())
            .collect();
        st.read += 1;
        if st.read == ex.size {
            st.read = 0;
            st.slots.iter_mut().for_each(|s| *s = None);
            ex.changed.notify_all();
        }
        Ok(all)
    }
}

impl Allreduce for ThreadGroup {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.exchange.size
    }
    fn sum_i64(&self, buf: &mut [i64]) -> Result<()> {
        let mine = buf.iter().flat_map(|x| x.to_le_bytes()).collect();
        let all = self.all_gather(mine)?;
        buf.iter_mut().for_each(|b| *b = 0);
        for bytes in all {
            check_length(bytes.len(), buf.len() * 8)?;
            for (b, chunk) in buf.iter_mut().zip(bytes.chunks_exact(8)) {
                *b += i64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            }
        }
        Ok(())
    }
    fn gather_f64(&self, local: &[f64]) -> Result<Vec<f64>> {
        let mine = local.iter().flat_map(|x| x.to_le_bytes()).collect();
        let all = self.all_gather(mine)?;
        let mut out = Vec::with_capacity(local.len() * all.len());
        for bytes in all {
            check_length(bytes.len(), local.len() * 8)?;
            out.extend(
                bytes
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
            );
        }
        Ok(out)
    }
}

fn check_length(got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(LtrError::Training(format!(
            "ranks disagree on a collective's length ({got} bytes against {want}): every rank must run the same \
             algorithm with the same parameters on data of the same width"
        )))
    }
}
