//! The model loader (JSON and postcard forms, every format version) on arbitrary bytes; a model that loads is then
//! used on a small dataset, so inconsistent models must be refused with an error, not a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ltr_core::ModelFile;
use ltr_fuzz::{assert_names_file, write_scratch};

fuzz_target!(|data: &[u8]| {
    let path = write_scratch("model.bin", data);
    match ModelFile::load(&path) {
        Ok(model) => {
            let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
                queries: 2,
                min_docs: 3,
                max_docs: 3,
                features: 4,
                ..ltr_data::SyntheticConfig::default()
            })
            .expect("valid generator settings");
            if model.check_data(&ds, "fuzz.txt").is_ok() {
                if let Ok(scores) = model.score_raw(&ds) {
                    assert_eq!(scores.len(), ds.n_docs());
                }
            }
        }
        Err(e) => assert_names_file(&e.to_string(), &path),
    }
});
