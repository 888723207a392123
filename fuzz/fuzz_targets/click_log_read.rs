//! Click logs in every layout `ltr` reads: the first byte picks the click-log TSV, the per-document table or
//! Baidu-ULTR's sessions (`ltr_clicks::read_log_layout`, what `ltr clicks convert --from` and the TSV readers
//! use), the rest is the file.
#![no_main]
use libfuzzer_sys::fuzz_target;
use ltr_clicks::{read_click_log, read_log_layout, write_click_log, SessionLog};
use ltr_fuzz::{assert_names_file, scratch, write_scratch};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let layout = ["tsv", "table", "baidu"][pick as usize % 3];
    let path = write_scratch("clicks.txt", bytes);
    match read_log_layout(layout, &path) {
        Err(e) => assert_names_file(&e.to_string(), &path),
        Ok(records) => {
            // Accepted: sessions contiguous with ranks 1..n, and the log written as the TSV reads back the same.
            for s in records.chunk_by(|a, b| a.session == b.session) {
                for (i, r) in s.iter().enumerate() {
                    assert_eq!(
                        r.rank as usize,
                        i + 1,
                        "{layout}: session {} out of order",
                        r.session
                    );
                    assert_eq!(r.qid, s[0].qid);
                }
            }
            let out = scratch("written.tsv");
            write_click_log(&out, &records).expect("writable");
            let again = read_click_log(&out).unwrap_or_else(|e| {
                panic!("{layout}: the TSV written from an accepted log is refused: {e}")
            });
            assert_eq!(
                again, records,
                "{layout}: the written TSV reads back differently"
            );
            let log = SessionLog::from_records(&records);
            assert!(log.n_pairs() <= records.len());
        }
    }
});
