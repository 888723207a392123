//! Shared inputs of the workspace benchmarks: the real OHSUMED / MQ2008 folds when `../shared/datasets` is present,
//! generated LETOR-like data of the same shape otherwise (printed, so a reader knows which).
#![deny(missing_docs)]

use ltr_testdata::shared_datasets_dir;

use ltr_data::{generate_letor_like, read_letor, Dataset, SyntheticConfig};

/// OHSUMED Fold1 train (≈ 9,200 documents, 45 features, ≈ 330k pairs), or a generated stand-in.
pub fn ohsumed_like() -> Dataset {
    if let Some(d) = shared_datasets_dir() {
        if let Ok(ds) = read_letor(d.join("OHSUMED/QueryLevelNorm/Fold1/train.txt")) {
            return ds;
        }
    }
    eprintln!("benches: ../shared/datasets absent, using generated OHSUMED-like data");
    generate_letor_like(&SyntheticConfig {
        queries: 63,
        min_docs: 40,
        max_docs: 300,
        features: 45,
        seed: 1,
        ..Default::default()
    })
    .expect("generate")
}

/// A generated dataset of `queries` × `docs` with `features` features and 5 grades.
pub fn generated(queries: usize, docs: usize, features: usize) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries,
        min_docs: docs,
        max_docs: docs,
        features,
        grades: 5,
        seed: 3,
        ..Default::default()
    })
    .expect("generate")
}
