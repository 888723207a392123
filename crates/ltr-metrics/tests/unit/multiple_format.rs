use ltr_metrics::{compare_runs, ManyOptions};

/// A `|` in a run label is escaped in every Markdown cell that names the run, so each table row keeps its
/// column count.
#[test]
fn markdown_escapes_pipes_in_run_labels() {
    let names = vec![
        "bm25|rm3".to_string(),
        "plain".to_string(),
        "a|b|c".to_string(),
    ];
    let values = vec![
        vec![0.5, 0.25, 0.75],
        vec![0.5, 0.0, 0.25],
        vec![1.0, 0.5, 0.5],
    ];
    let opts = ManyOptions {
        resamples: 10,
        trials: 10,
        ..ManyOptions::default()
    };
    let md = compare_runs(&names, &values, 0, "AP", &opts)
        .unwrap()
        .to_markdown();
    assert!(md.contains("| bm25\\|rm3 | 0.5000 |"), "{md}");
    assert!(md.contains("| a\\|b\\|c | 0.6667 |"), "{md}");
    assert!(md.contains("|  | plain | a\\|b\\|c |"), "{md}");
    assert!(!md.contains("bm25|rm3"), "{md}");
    for line in md.lines().filter(|l| l.starts_with('|')) {
        let cells = line.replace("\\|", "").matches('|').count();
        assert!(cells == 5 || cells == 4, "{line}");
    }
}
