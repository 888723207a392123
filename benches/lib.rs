//! Shared inputs of the workspace benchmarks: the real OHSUMED / MQ2008 folds when `../shared/datasets` is present,
//! generated LETOR-like data of the same shape otherwise (printed, so a reader knows which).
// Unit tests live in tests/: `cargo test --all-targets` (CI's one build) compiles a unit-test harness of every
// library and binary even when it has no tests, so under `cfg(test)` this crate is empty and that harness is free.
#![cfg(not(test))]
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

/// A sparse Yahoo-style set: 100 queries of 30 documents, 700 features of which each document stores 60 (density
/// 0.086), values in [0, 1), five grades from a hidden linear score over the first 80 features plus noise. Made by
/// a fixed splitmix64 stream and read back through the LETOR parser, so it is stored sparse as a user's file
/// would be.
pub fn sparse_yahoo_like() -> Dataset {
    let path = std::env::temp_dir().join(format!("ltr-bench-sparse-{}.txt", std::process::id()));
    std::fs::write(&path, sparse_yahoo_like_text()).expect("write the sparse bench file");
    let ds = read_letor(&path).expect("read the sparse bench file");
    let _ = std::fs::remove_file(&path);
    ds
}

/// The LETOR text of [`sparse_yahoo_like`] (2.3 MB).
pub fn sparse_yahoo_like_text() -> String {
    let mut state = 5u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let d = 700;
    let beta: Vec<f64> = (0..d)
        .map(|j| if j < 80 { 2.0 * next() - 1.0 } else { 0.0 })
        .collect();
    let mut text = String::new();
    for q in 1..=100 {
        for _ in 0..30 {
            let mut picked = vec![false; d];
            let mut count = 0;
            while count < 60 {
                let j = (next() * d as f64) as usize;
                if !picked[j] {
                    picked[j] = true;
                    count += 1;
                }
            }
            let entries: Vec<(usize, f64)> = (0..d)
                .filter(|&j| picked[j])
                .map(|j| (j, (next() * 1e6).round() / 1e6))
                .collect();
            let score: f64 = entries.iter().map(|&(j, v)| beta[j] * v).sum::<f64>() + next() - 0.5;
            let grade = (score * 2.0 + 2.0).clamp(0.0, 4.0).floor();
            text.push_str(&format!("{grade} qid:{q}"));
            for (j, v) in entries {
                text.push_str(&format!(" {}:{v}", j + 1));
            }
            text.push('\n');
        }
    }
    text
}
