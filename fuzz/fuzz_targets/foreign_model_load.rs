//! The readers of models trained elsewhere (LightGBM model text and JSON dumps, XGBoost JSON, RankLib ensembles,
//! and `ltr`'s own files, all behind `ltr_export::load_model`) on arbitrary bytes; a model that loads then scores a
//! small dataset, so an inconsistent model must be refused with an error naming the file, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ltr_fuzz::{assert_names_file, write_scratch};

fuzz_target!(|data: &[u8]| {
    let path = write_scratch("foreign.model", data);
    match ltr_export::load_model(&path) {
        Ok(mut model) => {
            let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
                queries: 2,
                min_docs: 3,
                max_docs: 3,
                features: 8,
                ..ltr_data::SyntheticConfig::default()
            })
            .expect("valid generator settings");
            ltr_export::widen_to(&mut model, ds.n_features());
            if model.check_data(&ds, "fuzz.txt").is_ok() {
                if let Ok(scores) = model.score_raw(&ds) {
                    assert_eq!(scores.len(), ds.n_docs());
                }
            }
        }
        Err(e) => assert_names_file(&format!("{e:#}"), &path),
    }
});
