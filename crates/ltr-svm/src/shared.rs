//! The pairwise objective of queries spread over ranks: each rank holds its own queries' [`PairwiseObjective`],
//! and every quantity a solver needs — the loss, its gradient in the weights, its slope along a line — is a sum over
//! queries, taken per query in f64 and summed exactly ([`ExactVec`]) within and across ranks. So the cutting-plane
//! methods and gradient descent see the same numbers, bit for bit, at any number of ranks and threads, and with one
//! rank (`SingleProcess`) they are the ordinary single-machine solvers.

use ltr_core::{Allreduce, Result, SingleProcess};
use ltr_data::{exact_transpose_times, Dataset, ExactVec};
use ltr_pairs::PairwiseObjective;

/// This rank's share of a pairwise objective and the ranks it is summed over.
pub(crate) struct SharedObjective<'a> {
    obj: &'a PairwiseObjective<'a>,
    comm: &'a dyn Allreduce,
}

impl<'a> SharedObjective<'a> {
    /// The objective of the queries of `obj` and of the other ranks of `comm`.
    pub(crate) fn new(obj: &'a PairwiseObjective<'a>, comm: &'a dyn Allreduce) -> Self {
        Self { obj, comm }
    }

    /// The objective of the queries of `obj` alone.
    pub(crate) fn single(obj: &'a PairwiseObjective<'a>) -> Self {
        Self::new(obj, &SingleProcess)
    }

    /// This rank's data.
    pub(crate) fn dataset(&self) -> &'a Dataset {
        self.obj.dataset()
    }

    /// The pair loss at `scores` (this rank's documents' scores), over every rank's queries.
    pub(crate) fn loss(&self, scores: &[f64]) -> Result<f64> {
        let sg = self.obj.gradient(scores);
        let mut sum = ExactVec::new(1);
        for &l in sg.query_losses() {
            sum.add(0, l);
        }
        self.comm.sum_exact(&mut sum)?;
        Ok(sum.value(0))
    }

    /// The pair loss at `scores` and its gradient with respect to the weights, Xᵀ ∂L/∂s, over every rank's queries.
    pub(crate) fn loss_and_gradient(&self, scores: &[f64]) -> Result<(f64, Vec<f64>)> {
        let ds = self.dataset();
        let d = ds.n_features();
        let sg = self.obj.gradient(scores);
        let mut sums = exact_transpose_times(ds, &sg.coef, &[sg.query_losses()]);
        self.comm.sum_exact(&mut sums)?;
        let mut values = sums.values();
        let loss = values.pop().expect("the loss follows the d gradient sums");
        debug_assert_eq!(values.len(), d);
        Ok((loss, values))
    }

    /// The pair loss at `scores` and its derivative along the score direction `dir` (Σ_d ∂L/∂s_d · dir_d), over
    /// every rank's queries: one sorted sweep, no product with the data. `order` carries this rank's queries'
    /// orders by score from one probe of a line search to the next
    /// ([`PairwiseObjective::loss_and_slope_sums`]; empty at first).
    pub(crate) fn loss_and_slope(
        &self,
        scores: &[f64],
        dir: &[f64],
        order: &mut Vec<u32>,
    ) -> Result<(f64, f64)> {
        let mut sums = self.obj.loss_and_slope_sums(scores, dir, order);
        self.comm.sum_exact(&mut sums)?;
        Ok((sums.value(0), sums.value(1)))
    }
}
