//! Tests of `src/cells.rs`.

use ltr_experiment::*;

#[test]
fn cells_are_computed_once_and_survive_a_killed_write() {
    let dir = tempfile::tempdir().unwrap();
    let cells = Cells::new(dir.path().join("cells"));
    let mut calls = 0;
    let mut cell = |key: &str, v: f64| {
        cells
            .get::<f64, std::io::Error>(key, || {
                calls += 1;
                Ok(v)
            })
            .unwrap()
    };
    assert_eq!(cell("a/b c", 1.5), 1.5);
    // A finished cell is never recomputed, whatever the new closure would say.
    assert_eq!(cell("a/b c", 9.0), 1.5);
    // What a SIGKILL in the middle of a write leaves: the temporary file only (the rename never happened) —
    // it is ignored; and a cell file that is not valid JSON (written by something else) is recomputed.
    std::fs::write(dir.path().join("cells/.k.json.tmp-99999"), "{\"trunc").unwrap();
    std::fs::write(dir.path().join("cells/j.json"), "{\"trunc").unwrap();
    assert_eq!(cell("k", 2.0), 2.0);
    assert_eq!(cell("j", 3.0), 3.0);
    assert_eq!(cell("j", 4.0), 3.0);
    let _ = cell;
    assert_eq!(calls, 3);
    // Keys are sanitised into one flat file name each.
    assert!(dir.path().join("cells/a_b_c.json").is_file());
    let (v, origin) = cells
        .get_with_origin::<f64, std::io::Error>("j", || Ok(0.0))
        .unwrap();
    assert_eq!((v, origin), (3.0, CellOrigin::Stored));
}
