//! A file without qids plus a LightGBM/XGBoost group file (one group size per line), split at the first 0xFF byte.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ltr_data::{read_letor_with, ParseOptions, QueryFile};
use ltr_fuzz::write_scratch;

fuzz_target!(|data: &[u8]| {
    let cut = data.iter().position(|&b| b == 0xFF).unwrap_or(data.len());
    let (text, group) = (&data[..cut], data.get(cut + 1..).unwrap_or_default());
    let path = write_scratch("grouped.txt", text);
    let group_path = write_scratch("grouped.txt.query", group);
    for query_file in [QueryFile::Path(group_path.clone()), QueryFile::Auto] {
        let opts = ParseOptions {
            query_file,
            ..ParseOptions::default()
        };
        match read_letor_with(&path, &opts) {
            Ok(ds) => {
                assert_eq!(ds.query_offsets().last().copied(), Some(ds.n_docs()));
                assert!(
                    ds.query_offsets().windows(2).all(|w| w[0] < w[1]),
                    "empty query"
                );
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.contains("grouped.txt"),
                    "error names neither file: {msg}"
                );
            }
        }
    }
});
