//! What every loss returns for one query, and the guard against log(0) and 0/0 that the losses share (apart
//! from `losses` so that NeuralNDCG's sorting module and the losses need not import each other).

/// allRank's `DEFAULT_EPS`.
pub const EPS: f64 = 1e-10;

/// One query's part of a batch loss.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueryLoss {
    /// Its (unnormalised) loss.
    pub value: f64,
    /// Its share of the normaliser.
    pub norm: f64,
}
