//! The binary dataset cache loader on arbitrary bytes (its checksum is recomputed by the harness half the time, so
//! the fuzzer also reaches the layout checks behind it).
#![no_main]
use libfuzzer_sys::fuzz_target;
use ltr_data::load_cache;
use ltr_fuzz::{assert_names_file, write_scratch};

fuzz_target!(|data: &[u8]| {
    let path = write_scratch("data.ltrcache", data);
    match load_cache(&path, None) {
        Ok(ds) => {
            assert_eq!(ds.n_docs(), ds.labels().len());
            assert_eq!(ds.query_offsets().last().copied(), Some(ds.n_docs()));
            let scores = ds.scores(&vec![1.0; ds.n_features()]);
            assert_eq!(scores.len(), ds.n_docs());
        }
        Err(e) => assert_names_file(&e.to_string(), &path),
    }
});
