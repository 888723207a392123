use std::collections::HashMap;
use std::path::Path;

use ltr_metrics::trec::read::*;
use ltr_metrics::*;

/// The line-by-line reader that the block readers replaced.
fn serial_run(path: &Path) -> Result<Vec<RunQuery>, FileError> {
    let mut out: Vec<RunQuery> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for_each_record(path, |f, err| {
        if f.len() < 5 {
            return Err(err(format!(
                "{} fields; a run line is `qid Q0 docid rank score [tag]`",
                f.len()
            )));
        }
        let score: f64 = f[4]
            .parse()
            .map_err(|_| err(format!("score `{}` is not a number", f[4])))?;
        if !score.is_finite() {
            return Err(err(format!("score `{}` is not finite", f[4])));
        }
        let q = *index.entry(f[0].to_string()).or_insert_with(|| {
            out.push(RunQuery::new(f[0]));
            out.len() - 1
        });
        out[q].push(f[2], score);
        Ok(())
    })?;
    Ok(out)
}

fn serial_qrels(path: &Path) -> Result<Qrels, FileError> {
    let mut out = Qrels::new();
    for_each_record(path, |f, err| {
        if f.len() != 4 {
            return Err(err(format!(
                "{} fields; a qrels line is `qid iter docid rel`",
                f.len()
            )));
        }
        let rel: f32 = f[3]
            .parse()
            .map_err(|_| err(format!("relevance `{}` is not a number", f[3])))?;
        if !rel.is_finite() {
            return Err(err("relevance is not finite".into()));
        }
        out.insert(f[0], f[2], rel);
        Ok(())
    })?;
    Ok(out)
}

fn show<T: std::fmt::Debug>(r: Result<T, FileError>) -> String {
    match r {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => format!("err {e}"),
    }
}

/// The eight-bytes-at-a-time line and field split against `split_ascii_whitespace` on random plain lines (spaces,
/// tabs, form feeds, carriage returns, runs of them, long fields, lengths around the word and 64-byte limits).
#[test]
fn plain_lines_match_split_ascii_whitespace() {
    let mut rng = ltr_testdata::XorShift64::new(0x5851_f42d_4c95_7f2d);
    let mut next = move |m: u64| rng.below(m);
    for _ in 0..20_000 {
        let len = next(80) as usize;
        let line: String = (0..len)
            .map(|_| match next(10) {
                0 => ' ',
                1 => ['\t', '\r', '\x0c', ' '][next(4) as usize],
                _ => (b'!' + next(94) as u8) as char,
            })
            .collect();
        assert!(plain_ascii(line.as_bytes()));
        let want: Vec<&str> = line.split_ascii_whitespace().collect();
        // At the end of a block (words filled with newlines) and followed by more lines (words read past the end).
        let all = [0, 1, 2, 3, 4, 5];
        let (end, f, n) = plain_line(&line, 0, all);
        assert_eq!(end, line.len());
        let more = format!("{line}\nnext line x");
        assert_eq!(plain_line(&more, 0, all), (end, f, n), "{line:?}");
        let before = format!("first\n{line}");
        assert_eq!(plain_line(&before, 6, all), (6 + end, f, n), "{line:?}");
        // A selection of fields, as the readers ask for them.
        let (end2, g, n2) = plain_line(&more, 0, [0, 2, 4]);
        assert_eq!((end2, n2, g), (end, n, [f[0], f[2], f[4]]), "{line:?}");
        assert_eq!(n, want.len(), "{line:?}");
        assert_eq!(&f[..n.min(6)], &want[..n.min(6)], "{line:?}");
    }
    assert!(!plain_ascii(b"a\x0bb") && !plain_ascii(b"a\x01") && !plain_ascii("é".as_bytes()));
}

/// The fuzz target's seeds and regressions (run and qrels split at the first 0xFF byte, as the target does):
/// the block readers agree with the serial ones.
#[test]
fn block_readers_match_serial_readers_on_fuzz_inputs() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let dir = std::env::temp_dir().join(format!("ltr-trec-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seen = 0;
    for sub in ["seeds/trec_read", "regressions/trec_read"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(sub)) else {
            continue;
        };
        for e in entries {
            let bytes = std::fs::read(e.unwrap().path()).unwrap();
            let cut = bytes.iter().position(|&b| b == 0xFF).unwrap_or(bytes.len());
            let (rp, qp) = (dir.join("run"), dir.join("qrels"));
            std::fs::write(&rp, &bytes[..cut]).unwrap();
            std::fs::write(&qp, bytes.get(cut + 1..).unwrap_or_default()).unwrap();
            for block in [1, 7, BLOCK] {
                assert_eq!(show(read_run_in_blocks(&rp, block)), show(serial_run(&rp)));
                match (read_qrels_in_blocks(&qp, block, true), serial_qrels(&qp)) {
                    (Ok(got), Ok(want)) => assert_eq!(got, want),
                    (got, want) => assert_eq!(show(got.map(|_| ())), show(want.map(|_| ()))),
                }
            }
            seen += 1;
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(seen >= 3, "the fuzz inputs were not found");
}

/// Random files (interleaved queries, blank lines, CRLF, tabs, repeated judgments, one bad line or none) read
/// in blocks of many sizes give the serial reader's result, and its error with the same line.
#[test]
fn block_readers_match_serial_readers() {
    let dir = std::env::temp_dir().join(format!("ltr-trec-blocks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = ltr_testdata::XorShift64::new(0x2545_f491_4f6c_dd1d);
    let mut next = move |m: u64| rng.below(m);
    for case in 0..60 {
        let lines = 1 + next(300) as usize;
        let bad = (case % 3 != 0).then(|| next(lines as u64) as usize);
        let (mut run, mut qrels) = (String::new(), String::new());
        for i in 0..lines {
            let q = next(7);
            let d = next(40);
            let end = if next(5) == 0 { "\r\n" } else { "\n" };
            if next(10) == 0 {
                run.push_str(if next(2) == 0 { "\n" } else { "  \t \r\n" });
                qrels.push('\n');
            }
            let score = match (Some(i) == bad, next(4)) {
                (true, 0) => "x1".to_string(),
                (true, 1) => "inf".to_string(),
                (true, 2) => "1 extra extra".to_string(),
                _ => format!("{}", next(1000) as f64 / 7.0 - 50.0),
            };
            let short = Some(i) == bad && next(4) == 3;
            if short {
                run.push_str(&format!("q{q} Q0 d{d}{end}"));
                qrels.push_str(&format!("q{q} 0 d{d}{end}"));
            } else {
                // Whitespace that ASCII splitting and `split_whitespace` disagree on, and non-ASCII ids.
                let sep = ["\t", " ", "\x0b", "\u{a0}", "\u{3000}", " "][next(6) as usize];
                let id = if next(9) == 0 { "é" } else { "d" };
                run.push_str(&format!("q{q}{sep}Q0 {id}{d} {i} {score} tag{end}"));
                qrels.push_str(&format!("q{q} 0 d{d} {score}{end}"));
            }
        }
        if next(2) == 0 {
            run.push_str("q1 Q0 last 1 0.5 t");
            qrels.push_str("q1 0 last 2");
        }
        let (rp, qp) = (dir.join("run"), dir.join("qrels"));
        std::fs::write(&rp, &run).unwrap();
        std::fs::write(&qp, &qrels).unwrap();
        let want_run = show(serial_run(&rp));
        let want_qrels = show(serial_qrels(&qp));
        for block in [1, 2, 7, 30, 100, 1000, BLOCK] {
            assert_eq!(
                show(read_run_in_blocks(&rp, block)),
                want_run,
                "case {case}, block {block}"
            );
            match (read_qrels_in_blocks(&qp, block, true), serial_qrels(&qp)) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "case {case}, block {block}"),
                (got, _) => assert_eq!(
                    show(got.map(|_| ())),
                    want_qrels,
                    "case {case}, block {block}"
                ),
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
