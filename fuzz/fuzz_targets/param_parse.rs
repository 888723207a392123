//! The `--param` parser: lines of `name=value` (or `name=v1,v2` grids) read for an algorithm picked by the first
//! byte, then trained on a 3-query dataset. Numbers above 10,000 in magnitude (also `1e09` forms) are skipped: they only buy running time (rounds,
//! epochs), which the fuzzer would report as timeouts, not bugs.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

use ltr_data::Dataset;
use ltr_learn::{Grid, TrainRequest, ALGORITHMS};

fn training_data() -> &'static Dataset {
    static DATA: OnceLock<Dataset> = OnceLock::new();
    DATA.get_or_init(|| {
        ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
            queries: 3,
            min_docs: 4,
            max_docs: 4,
            features: 3,
            ..ltr_data::SyntheticConfig::default()
        })
        .expect("valid generator settings")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let big = text
        .split(|c: char| !c.is_ascii_digit())
        .any(|digits| digits.len() > 4)
        || text
            .split(['=', ',', '\n'])
            .filter_map(|v| v.trim().parse::<f64>().ok())
            .any(|v| v.abs() > 1e4);
    if big || text.len() > 512 {
        return;
    }
    let items: Vec<&str> = text.lines().collect();
    let Ok(grid) = Grid::parse(&items) else {
        return;
    };
    if grid.settings().len() > 8 {
        return;
    }
    let algo = &ALGORITHMS[pick as usize % ALGORITHMS.len()];
    let train = training_data();
    let request = TrainRequest::new(train).validation(train);
    if let Ok(trained) = ltr_learn::train(algo.name, &grid, &request) {
        let model = trained.into_model_file(ltr_core::TrainingSummary {
            train_file: "fuzz.txt".into(),
            validation_file: None,
            queries: train.n_queries(),
            documents: train.n_docs(),
            features: train.n_features(),
            seed: 0,
            seconds: 0.0,
        });
        let scores = model
            .score_raw(train)
            .expect("a trained model scores its training data");
        assert!(
            scores.iter().all(|s| s.is_finite()),
            "{}: non-finite score",
            algo.name
        );
    }
});
