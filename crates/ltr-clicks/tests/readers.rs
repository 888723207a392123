//! The readers of the layouts people have — the per-document table and Baidu-ULTR's sessions — on fixtures
//! written from their documentation, and the bad inputs every reader (the TSV's too) refuses by file and line; and
//! the reader of a model's learned propensities.

use std::path::{Path, PathBuf};

use ltr_clicks::{read_baidu_sessions, read_click_log, read_document_table, ClickRecord};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/readers")
        .join(name)
}

/// (session, qid, docid, rank, clicked) of each record.
fn rows(log: &[ClickRecord]) -> Vec<(u64, &str, &str, u32, bool)> {
    log.iter()
        .map(|r| {
            (
                r.session,
                r.qid.as_str(),
                r.docid.as_str(),
                r.rank,
                r.clicked,
            )
        })
        .collect()
}

#[test]
fn a_per_document_table_reads_as_sessions_in_position_order() {
    let log = read_document_table(&fixture("table.csv")).unwrap();
    assert_eq!(
        rows(&log),
        [
            (1, "q1", "dB", 1, true),
            (1, "q1", "dA", 2, false),
            (1, "q1", "dD", 3, true),
            (2, "q1", "dB", 1, false),
            (2, "q1", "dA", 2, true),
            (3, "q2", "dE", 1, false),
            (3, "q2", "dG", 2, true),
        ]
    );
    assert_eq!(log[2].propensity, Some(0.33));
    // Written as the TSV, it reads back the same: every reader of logs reads it.
    let dir = tempfile::tempdir().unwrap();
    let tsv = dir.path().join("log.tsv");
    ltr_clicks::write_click_log(&tsv, &log).unwrap();
    assert_eq!(read_click_log(&tsv).unwrap(), log);
    // Tabs and no session column: each qid's rows are one session.
    let p = dir.path().join("t.tsv");
    std::fs::write(
        &p,
        "qid\tdoc\tclick\tposition\tscore\nq\ta\t0\t2\t.3\nq\tb\t1\t1\t.1\n",
    )
    .unwrap();
    assert_eq!(
        rows(&read_document_table(&p).unwrap()),
        [(1, "q", "b", 1, true), (1, "q", "a", 2, false)]
    );
}

#[test]
fn baidu_ultr_sessions_read_query_position_click_and_url() {
    let log = read_baidu_sessions(&fixture("baidu-sessions.txt")).unwrap();
    assert_eq!(
        rows(&log),
        [
            (1, "1001", "9e107d9d372bb6826bd81d3542a419d6", 1, false),
            (1, "1001", "e4d909c290d0fb1ca068ffaddf22cbd0", 2, true),
            (1, "1001", "d41d8cd98f00b204e9800998ecf8427e", 3, false),
            (2, "1002", "c3fcd3d76192e4007dfb496cca67e13b", 1, true),
            (2, "1002", "9e107d9d372bb6826bd81d3542a419d6", 2, false),
        ]
    );
    assert!(log.iter().all(|r| r.propensity.is_none()));
}

/// Each bad input refused by `read`, with the file's line and a word of the problem.
fn refused(read: fn(&Path) -> ltr_data::Result<Vec<ClickRecord>>, cases: &[(&str, usize, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.txt"));
        std::fs::write(&p, text).unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(
            e.contains(&format!("bad{i}.txt:{line}:")) && e.contains(what),
            "case {i} {text:?}: {e}"
        );
    }
}

#[test]
fn bad_tables_are_refused_naming_file_and_line() {
    let h = "qid,docid,position,click\n";
    refused(
        read_document_table,
        &[
            // Positions not matching the session: a gap, a repeat.
            (&format!("{h}q,a,1,0\nq,b,3,1\n"), 3, "skip 2"),
            (&format!("{h}q,a,1,0\nq,b,1,1\n"), 3, "displayed twice"),
            // A click without an impression.
            (
                &format!("{h}q,a,1,0\nq,b,,1\n"),
                3,
                "click without an impression",
            ),
            // A negative position.
            (&format!("{h}q,a,-1,0\n"), 2, "negative position"),
            // An empty session: nothing displayed.
            (
                &format!("{h}q,a,1,1\nr,b,NA,0\nr,c,,0\n"),
                3,
                "empty session",
            ),
            (&format!("{h}q,a,1,2\n"), 2, "bad click"),
            (&format!("{h}q,a,x,0\n"), 2, "bad position"),
            (&format!("{h}q,a,1,0\nr,b,1,0\nq,c,2,0\n"), 4, "reappears"),
            (
                "session,qid,docid,position,click\n1,q,a,1,0\n1,r,b,2,0\n",
                3,
                "changes query",
            ),
            (&format!("{h}q,a,1\n"), 2, "fields"),
            ("qid,doc,rank,click\nq,a,1,0\n", 1, "header"),
            ("", 1, "empty"),
            // A tab inside an id of a comma-separated table: the click-log TSV could not hold it (fuzz finding).
            ("qid,docid,position,click\nq,a\tb,1,1\n", 2, "a tab inside"),
            (
                ",qid,doc,position,click,\n,G\t\0,2,1,1,\n",
                2,
                "a tab inside",
            ),
        ],
    );
}

#[test]
fn bad_baidu_sessions_are_refused_naming_file_and_line() {
    let q = "7\t1\x012\t\n";
    let d = |pos: &str, url: &str, click: &str| format!("{pos}\t{url}\t1\t2\t0\t{click}\t0\t0\n");
    refused(
        read_baidu_sessions,
        &[
            // Positions not matching the session.
            (
                &format!("{q}{}{}", d("1", "u1", "0"), d("3", "u2", "1")),
                3,
                "position 2",
            ),
            (&format!("{q}{}", d("2", "u1", "0")), 2, "position 1"),
            // A negative position.
            (
                &format!("{q}{}", d("-1", "u1", "0")),
                2,
                "negative position",
            ),
            // An empty session: a query line with no document, here and at the end of the file.
            (&format!("{q}{q}{}", d("1", "u1", "0")), 1, "empty session"),
            (&format!("{q}{}{q}", d("1", "u1", "0")), 3, "empty session"),
            // A document before any query: a click without a session to belong to.
            (&d("1", "u1", "1"), 1, "before any query"),
            (&format!("{q}{}", d("1", "u1", "yes")), 2, "bad click"),
            (
                &format!("{q}{}{}", d("1", "u1", "0"), d("2", "u1", "0")),
                3,
                "twice",
            ),
            (&format!("{q}1\tu\t0\t1\n"), 2, "4 tab-separated fields"),
            ("", 1, "no session"),
        ],
    );
}

#[test]
fn the_tsv_reader_refuses_the_same_faults() {
    // What the TSV can express of them: a negative rank, ranks that do not follow the session. (Every TSV line is
    // an impression, and a session exists only through its lines, so neither a click without an impression nor
    // an empty session can be written in it.)
    let h = "session\tqid\tdocid\trank\tclicked\n";
    refused(
        read_click_log,
        &[
            (&format!("{h}1\tq\ta\t-1\t0\n"), 2, "bad rank"),
            (
                &format!("{h}1\tq\ta\t1\t0\n1\tq\tb\t3\t1\n"),
                3,
                "rank after rank 1",
            ),
            (
                &format!("{h}1\tq\ta\t1\t0\n1\tq\tb\t1\t1\n"),
                3,
                "rank after rank 1",
            ),
        ],
    );
}

/// The fuzz target `click_log_read`'s seeds and regressions (`fuzz/seeds|regressions/click_log_read`), replayed as
/// it reads them: the first byte picks the layout. `refused-*` inputs must be refused naming the file; the others
/// must read, and the TSV written from them must read back to the same records.
#[test]
fn the_click_log_fuzz_inputs_read_and_round_trip_or_are_refused() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let dir = tempfile::tempdir().unwrap();
    let mut replayed = 0;
    for kind in ["seeds", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(kind).join("click_log_read")) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths {
            let bytes = std::fs::read(&p).unwrap();
            let Some((&pick, body)) = bytes.split_first() else {
                continue;
            };
            let layout = ["tsv", "table", "baidu"][pick as usize % 3];
            let input = dir.path().join("clicks.txt");
            std::fs::write(&input, body).unwrap();
            let name = p.file_name().unwrap().to_str().unwrap();
            replayed += 1;
            match ltr_clicks::read_log_layout(layout, &input) {
                Err(e) => {
                    let e = e.to_string();
                    assert!(e.contains("clicks.txt"), "{name}: {e}");
                    assert!(
                        name.starts_with("refused-") || kind == "regressions",
                        "{name} refused: {e}"
                    );
                }
                Ok(records) => {
                    assert!(!name.starts_with("refused-"), "{name} accepted");
                    let out = dir.path().join("written.tsv");
                    ltr_clicks::write_click_log(&out, &records).unwrap();
                    let again = read_click_log(&out).unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(again, records, "{name}");
                }
            }
        }
    }
    assert!(replayed >= 8, "{replayed}");
}

/// A model's learned propensities as a table (`ltr clicks propensity --from-model`): each position's value from
/// rank 1 with no interval; diagnostics without them, unreadable diagnostics and a value that is no positive
/// number are refused, the last naming its rank.
#[test]
fn learned_propensities_read_a_models_diagnostics() {
    use ltr_clicks::learned_propensities;
    let table = learned_propensities(
        r#"{"training_loss": [1.0], "position_bias": {"propensities": [1.0, 0.5, 0.25]}}"#,
    )
    .unwrap();
    let got: Vec<(u32, f64, f64, f64)> = table
        .iter()
        .map(|e| (e.rank, e.value, e.low, e.high))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 1.0, 1.0, 1.0),
            (2, 0.5, 0.5, 0.5),
            (3, 0.25, 0.25, 0.25)
        ]
    );
    for (diagnostics, needle) in [
        ("", "no learned propensities"),
        (
            r#"{"position_bias": {"factors": [0.1]}}"#,
            "no learned propensities",
        ),
        ("{not json", "diagnostics"),
        (
            r#"{"position_bias": {"propensities": [1.0, 0.0]}}"#,
            "rank 2",
        ),
        (
            r#"{"position_bias": {"propensities": [1.0, -0.5]}}"#,
            "rank 2",
        ),
        (
            r#"{"position_bias": {"propensities": [1.0, null]}}"#,
            "rank 2",
        ),
    ] {
        let e = learned_propensities(diagnostics).unwrap_err().to_string();
        assert!(e.contains(needle), "{diagnostics}: {e}");
    }
}
