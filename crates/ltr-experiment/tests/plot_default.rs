//! `cargo xtask reproduce` commits its SVG figures under `results/`, so the default chart style must keep drawing
//! them byte for byte. The fixtures were rendered by `line_chart` and `bar_chart` before chart styles existed
//! (commit "ltr-experiment: fixtures of today's line and bar chart SVGs"); `LTR_BLESS_PLOTS=1` rewrites them.

use std::path::{Path, PathBuf};

use ltr_experiment::{bar_chart, line_chart, Series};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(name)
}

/// Two curves crossing zero (ticks around 0) and a third with a gap (a NaN point is skipped).
fn series() -> Vec<Series> {
    vec![
        Series {
            label: "ranksvm".into(),
            points: (0..=10)
                .map(|i| (f64::from(i) / 10.0, f64::from(i) * 0.02 - 0.1))
                .collect(),
        },
        Series {
            label: "rankboost".into(),
            points: (0..=10)
                .map(|i| (f64::from(i) / 10.0, 0.05 - f64::from(i) * 0.01))
                .collect(),
        },
        Series {
            label: "lambdamart".into(),
            points: vec![(0.0, 0.02), (0.5, f64::NAN), (1.0, 0.03)],
        },
    ]
}

fn check(name: &str, render: impl Fn(&Path) -> ltr_experiment::Result<()>) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let got_path = dir.path().join(name);
    render(&got_path).expect("the chart renders");
    let got = std::fs::read(&got_path).expect("the chart was written");
    let want_path = fixture(name);
    if std::env::var_os("LTR_BLESS_PLOTS").is_some() {
        std::fs::write(&want_path, &got).expect("fixture written");
    }
    let want = std::fs::read(&want_path).expect("the fixture exists");
    assert!(
        got == want,
        "{name}: the default style no longer draws today's bytes ({} bytes, fixture {} bytes)",
        got.len(),
        want.len()
    );
}

#[test]
fn the_default_line_chart_keeps_its_bytes() {
    check("line-default.svg", |p| {
        line_chart(
            p,
            "NDCG@10: method − baseline",
            "share of test queries",
            "difference",
            &series(),
        )
    });
}

#[test]
fn the_default_bar_chart_keeps_its_bytes() {
    let bars = vec![
        ("ranksvm".to_string(), 0.4412),
        ("rankboost".to_string(), 0.4019),
        ("lambdamart".to_string(), 0.4687),
    ];
    check("bar-default.svg", |p| {
        bar_chart(p, "MAP on the test folds", "MAP", &bars)
    });
}
