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

/// The text of every `<text>` element of an SVG.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

#[test]
fn the_report_style_draws_folds_as_categories_with_method_colours() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("by-fold.svg");
    let methods: Vec<String> = ["ranksvm", "rankboost", "lambdamart"]
        .map(String::from)
        .to_vec();
    // Listed in another order than the methods: each still takes its method's colour.
    let series: Vec<Series> = [(2, -0.01), (0, 0.3), (1, 0.2)]
        .iter()
        .map(|&(m, base)| Series {
            label: methods[m].clone(),
            points: vec![(1.0, base), (2.0, base + 0.05), (3.0, base - 0.02)],
        })
        .collect();
    let style = ltr_experiment::ChartStyle::report(&methods).with_categories(vec![
        "Fold 1".into(),
        "Fold 2".into(),
        "Fold 3".into(),
    ]);
    ltr_experiment::line_chart_styled(&path, "NDCG@10 by fold", "fold", "NDCG@10", &series, &style)
        .expect("the chart renders");
    let svg = std::fs::read_to_string(&path).expect("the chart was written");
    let labels = texts(&svg);
    for f in ["Fold 1", "Fold 2", "Fold 3"] {
        assert_eq!(
            labels.iter().filter(|l| *l == f).count(),
            1,
            "{f}: {labels:?}"
        );
    }
    for bad in ["1.5", "2.5", "-0.0", "0.0"] {
        assert!(!labels.iter().any(|l| l == bad), "{bad} in {labels:?}");
    }
    // Ticks cross zero: it prints as 0.
    assert!(labels.iter().any(|l| l == "0"), "{labels:?}");
    // Palette slot k for the k-th method, whatever the series order: markers and lines in all three.
    let palette = ltr_experiment::palette();
    let fills: Vec<String> = svg
        .split("<circle")
        .skip(1)
        .filter_map(|c| c.split("fill=\"").nth(1)?.split('"').next())
        .map(str::to_lowercase)
        .collect();
    let want: Vec<String> = [2, 0, 1]
        .iter()
        .flat_map(|&m| std::iter::repeat_n(palette[m].clone(), 3))
        .collect();
    assert_eq!(fills, want, "one marker per point, in its method's colour");
    // The light grid: no black mesh lines.
    assert!(svg.contains(r##"stroke="#E1E1E1" stroke-width="1""##));
    assert!(!svg.contains(r##"opacity="0.2" stroke="#000000""##));
}
