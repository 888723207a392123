//! [`Real`]: a real-valued measure parameter that keeps [`Metric`](crate::Metric) `Eq + Hash`.

use std::fmt;

/// A real-valued measure parameter (RBP's p, SetF's β, IPrec's recall level, the diversity measures' α and β), kept by
/// its bits so that [`Metric`](crate::Metric) stays `Eq + Hash`; −0 is stored as +0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Real(u64);

impl Real {
    /// Wrap a finite value.
    pub fn new(v: f64) -> Self {
        Real(if v == 0.0 {
            0f64.to_bits()
        } else {
            v.to_bits()
        })
    }
    /// The value.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl fmt::Display for Real {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.get())
    }
}
