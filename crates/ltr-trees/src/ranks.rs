//! Where this rank's queries sit among all the ranks' queries: what makes a data-parallel run draw the same random
//! bags, and sample the same documents for its bin bounds, as one process holding every query in rank order.

use ltr_core::{Allreduce, Result};
use ltr_data::Dataset;

/// This rank's documents and queries within the whole training data (every rank's shard, in rank order).
// pub for the tests in tests/unit/ranks.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Documents of all the ranks.
    pub docs: usize,
    /// Global number of this rank's first document.
    pub doc_offset: usize,
    /// Queries of all the ranks.
    pub queries: usize,
    /// Global number of this rank's first query.
    pub query_offset: usize,
}

impl Layout {
    /// One gather of every rank's document and query counts.
    pub fn agree(shard: &Dataset, comm: &dyn Allreduce) -> Result<Self> {
        let all = comm.gather_f64(&[shard.n_docs() as f64, shard.n_queries() as f64])?;
        let rank = comm.rank();
        let count = |col: usize, ranks: std::ops::Range<usize>| -> usize {
            all.chunks_exact(2)
                .skip(ranks.start)
                .take(ranks.len())
                .map(|c| c[col] as usize)
                .sum()
        };
        let size = comm.size();
        Ok(Self {
            docs: count(0, 0..size),
            doc_offset: count(0, 0..rank),
            queries: count(1, 0..size),
            query_offset: count(1, 0..rank),
        })
    }

    /// The whole data on one rank.
    // pub for the tests in tests/unit/ranks.rs; not API.
    #[doc(hidden)]
    pub fn single(shard: &Dataset) -> Self {
        Self {
            docs: shard.n_docs(),
            doc_offset: 0,
            queries: shard.n_queries(),
            query_offset: 0,
        }
    }

    /// Local numbers of this rank's documents (`local` of them) among `sample` documents spread evenly over the
    /// global numbering, `⌊j · docs / sample⌋` for `j` in `0..sample`; `None` when there are at most `sample`
    /// documents in all (every document counts).
    pub fn sampled_docs(&self, local: usize, sample: usize) -> Option<Vec<usize>> {
        if self.docs <= sample {
            return None;
        }
        let (n, s) = (self.docs as u128, sample as u128);
        let (lo, hi) = (self.doc_offset as u128, (self.doc_offset + local) as u128);
        // The first j with ⌊j·n/s⌋ ≥ lo is ⌈lo·s/n⌉.
        let first = (lo * s).div_ceil(n);
        Some(
            (first..s)
                .map(|j| j * n / s)
                .take_while(|&i| i < hi)
                .map(|i| (i - lo) as usize)
                .collect(),
        )
    }
}
