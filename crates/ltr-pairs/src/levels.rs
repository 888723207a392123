//! Relevance levels: the distinct labels of a dataset, and each document's level index.

use ltr_data::Dataset;

/// The sorted distinct labels of a dataset and the level index of every document.
#[derive(Debug, Clone, PartialEq)]
pub struct Levels {
    /// Distinct label values, ascending.
    pub values: Vec<f32>,
    /// Level index (into `values`) of each document, in row order.
    pub of_doc: Vec<u16>,
}

impl Levels {
    /// Compute the levels of `ds`. Panics if there are more than 65,535 distinct labels.
    pub fn new(ds: &Dataset) -> Self {
        Self::with_values(ds, Self::distinct_labels(ds))
    }

    /// The distinct labels of `ds`, ascending.
    pub fn distinct_labels(ds: &Dataset) -> Vec<f32> {
        let mut values: Vec<f32> = ds.labels().to_vec();
        values.sort_by(f32::total_cmp);
        values.dedup();
        values
    }

    /// The levels `values` (ascending, distinct; a superset of the labels of `ds`, such as the labels of every
    /// rank's shard of a distributed run) with the documents of `ds` placed on them. Panics if a label of `ds` is
    /// not in `values`, or if there are more than 65,535 values.
    pub fn with_values(ds: &Dataset, values: Vec<f32>) -> Self {
        assert!(
            values.len() <= u16::MAX as usize,
            "too many distinct labels"
        );
        let of_doc = ds
            .labels()
            .iter()
            .map(|l| {
                values
                    .binary_search_by(|v| v.total_cmp(l))
                    .expect("label present") as u16
            })
            .collect();
        Self { values, of_doc }
    }
    /// Number of levels K.
    pub fn count(&self) -> usize {
        self.values.len()
    }
    /// Level index of a label value, if present.
    pub fn index_of(&self, label: f32) -> Option<usize> {
        self.values.iter().position(|&v| v == label)
    }
}

/// A weight per ordered level pair (a preferred over b, a > b); row-major K×K, entries with a ≤ b unused.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelWeights {
    k: usize,
    w: Vec<f64>,
}

impl LevelWeights {
    /// All pairs of different levels weighted 1.
    pub fn uniform(k: usize) -> Self {
        let mut w = vec![0.0; k * k];
        for a in 0..k {
            for b in 0..a {
                w[a * k + b] = 1.0;
            }
        }
        Self { k, w }
    }
    /// All zero (add pairs with [`LevelWeights::set`]).
    pub fn zeros(k: usize) -> Self {
        Self {
            k,
            w: vec![0.0; k * k],
        }
    }
    /// Only level pairs whose indices are adjacent (a = b + 1).
    pub fn adjacent(k: usize) -> Self {
        let mut s = Self::zeros(k);
        for a in 1..k {
            s.set(a, a - 1, 1.0);
        }
        s
    }
    /// Only the level pair (a, b), a > b.
    pub fn single(k: usize, a: usize, b: usize) -> Self {
        let mut s = Self::zeros(k);
        s.set(a, b, 1.0);
        s
    }
    /// Set the weight of (a, b), a > b.
    pub fn set(&mut self, a: usize, b: usize, v: f64) {
        assert!(
            a > b && a < self.k,
            "level pair ({a}, {b}) must have a > b within {} levels",
            self.k
        );
        self.w[a * self.k + b] = v;
    }
    /// Weight of (a, b).
    #[inline]
    pub fn get(&self, a: usize, b: usize) -> f64 {
        self.w[a * self.k + b]
    }
    /// Number of levels.
    pub fn k(&self) -> usize {
        self.k
    }
    /// These weights over the levels `from` (ascending label values) carried to the levels `to`, a subset of
    /// `from`: the weight of two labels stays theirs. Panics if a value of `to` is not in `from`.
    pub fn restricted(&self, from: &[f32], to: &[f32]) -> Self {
        assert_eq!(from.len(), self.k, "one label value per level");
        let index: Vec<usize> = to
            .iter()
            .map(|v| {
                from.iter()
                    .position(|f| f == v)
                    .expect("the levels kept are among the levels weighted")
            })
            .collect();
        let mut out = Self::zeros(to.len());
        for a in 0..to.len() {
            for b in 0..a {
                out.set(a, b, self.get(index[a], index[b]));
            }
        }
        out
    }
    /// Multiply every weight by `f`.
    pub fn scaled(mut self, f: f64) -> Self {
        self.w.iter_mut().for_each(|x| *x *= f);
        self
    }
}
