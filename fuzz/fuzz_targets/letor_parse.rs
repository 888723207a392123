//! The LETOR / SVMlight parser on arbitrary bytes, under the option combinations users reach from the CLI.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ltr_data::{read_letor_with, ParseOptions, QueryFile, RepeatedQid};
use ltr_fuzz::{assert_names_file, write_scratch};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, text)) = data.split_first() else {
        return;
    };
    let path = write_scratch("data.txt", text);
    let opts = ParseOptions {
        query_file: QueryFile::None,
        repeated_qid: if flags & 1 == 1 {
            RepeatedQid::Regroup
        } else {
            RepeatedQid::Error
        },
        allow_duplicate_docids: flags & 2 == 2,
        // Small blocks exercise the block and sub-chunk boundaries with small inputs.
        block_size: if flags & 4 == 4 { 7 } else { 64 << 20 },
        ..ParseOptions::default()
    };
    match read_letor_with(&path, &opts) {
        Ok(ds) => {
            // A dataset that loads is internally consistent and round-trips through the writer.
            assert_eq!(ds.n_docs(), ds.labels().len());
            assert!(ds.labels().iter().all(|y| y.is_finite()));
            let mut out = Vec::new();
            ltr_data::write_letor_to(&ds, &mut out).expect("write to memory");
            let again = read_letor_with(write_scratch("again.txt", &out), &opts)
                .expect("the writer's output parses");
            assert_eq!(again.labels(), ds.labels());
            assert_eq!(again.n_queries(), ds.n_queries());
        }
        Err(e) => assert_names_file(&e.to_string(), &path),
    }
});
