//! Test data shared by the tree exporters' tests (`trees.rs`) and the ONNX tests (`onnx.rs`).

use ltr_data::{generate_web, split_by_queries, Dataset, WebConfig};

/// Web-like raw data; features 1-4 shifted to be mostly negative, so that many splits send raw 0 right.
pub fn data() -> (Dataset, Dataset) {
    let mut all = generate_web(&WebConfig {
        queries: 40,
        min_docs: 10,
        max_docs: 30,
        features: 16,
        seed: 11,
        ..Default::default()
    })
    .unwrap();
    all.to_dense();
    let ltr_data::FeatureMatrix::Dense(a) = all.features_mut() else {
        unreachable!()
    };
    for mut row in a.rows_mut() {
        for j in 0..4 {
            row[j] -= 5.0;
        }
    }
    let mut parts = split_by_queries(&all, &[0.7, 0.3], 3).unwrap();
    let test = parts.pop().unwrap();
    (parts.pop().unwrap(), test)
}

/// The test data with some values removed: every document lacks a few features (stored sparse, so the engine's
/// feature queries would not match them). Removed values are those `ltr predict` reads as 0.
pub fn with_missing(test: &Dataset) -> Dataset {
    edited(test, |i, j| ((i * 7 + j * 3) % 5 < 2).then_some(0.0), true)
}

/// `test` with value (i, j) replaced by `f(i, j)` where it says so; stored sparse when `sparse`.
pub fn edited(test: &Dataset, f: impl Fn(usize, usize) -> Option<f32>, sparse: bool) -> Dataset {
    let mut d = test.clone();
    d.to_dense();
    let ltr_data::FeatureMatrix::Dense(a) = d.features_mut() else {
        unreachable!()
    };
    let cols = a.ncols();
    for (i, mut row) in a.rows_mut().into_iter().enumerate() {
        for j in 0..cols {
            if let Some(v) = f(i, j) {
                row[j] = v;
            }
        }
    }
    if sparse {
        d.to_sparse();
    }
    d
}
