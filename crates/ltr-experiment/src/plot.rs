//! SVG plots (plotters, SVG backend): the papers' figures and the experiment report's curves.
//!
//! [`ChartStyle::default`] draws what `cargo xtask reproduce` commits under `results/`, byte for byte (the test
//! `tests/plot_default.rs` holds its output); [`ChartStyle::report`] is the style of `ltr experiment`'s report.

use std::path::Path;

use plotters::data::float::FloatPrettyPrinter;
use plotters::prelude::*;

use crate::error::{ExperimentError, Result};

/// One named curve.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// (x, y) points.
    pub points: Vec<(f64, f64)>,
}

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// How a chart is drawn beyond its data. The default is the papers' figures as `cargo xtask reproduce` commits
/// them; [`ChartStyle::report`] is the experiment report's.
#[derive(Debug, Clone, Default)]
pub struct ChartStyle {
    /// The methods in palette order: a series whose label is the k-th name takes the k-th colour, so that a method
    /// keeps its colour in every figure. A series not named here takes its position in the series list.
    pub palette_order: Vec<String>,
    /// Discrete x categories: the point with x = k (k = 1, 2, …) sits at the k-th name, with one tick per name and
    /// no tick between names.
    pub x_categories: Option<Vec<String>>,
    /// A circle on every point, the points joined by thin lines.
    pub markers: bool,
    /// Tick labels that round to zero print `0` (never `-0.0`).
    pub clean_zero: bool,
    /// A light grey, thin grid.
    pub light_grid: bool,
}

impl ChartStyle {
    /// The experiment report's style: colours from the experiment's method list, `0` for zero ticks, a light grid.
    pub fn report(methods: &[String]) -> Self {
        Self {
            palette_order: methods.to_vec(),
            x_categories: None,
            markers: false,
            clean_zero: true,
            light_grid: true,
        }
    }

    /// The same style with discrete x categories, each point marked and joined to the next by a thin line.
    pub fn with_categories(mut self, names: Vec<String>) -> Self {
        self.x_categories = Some(names);
        self.markers = true;
        self
    }

    /// The palette colour of the `i`-th of `series`.
    fn color(&self, i: usize, label: &str) -> RGBColor {
        let slot = self
            .palette_order
            .iter()
            .position(|m| m == label)
            .unwrap_or(i);
        COLORS[slot % COLORS.len()]
    }
}

/// The palette, as CSS hex colours (`#1f77b4`, …), in order: the k-th method of a report is drawn in the k-th.
pub fn palette() -> Vec<String> {
    COLORS
        .iter()
        .map(|c| format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2))
        .collect()
}

/// A tick label as plotters prints it, with `0` for anything that prints as zero (`-0.0`, `0.0`).
fn tick_label(v: f64) -> String {
    let s = FloatPrettyPrinter {
        allow_scientific: false,
        min_decimal: 1,
        max_decimal: 5,
    }
    .print(v);
    if s.parse::<f64>().is_ok_and(|x| x == 0.0) {
        "0".into()
    } else {
        s
    }
}

/// A line chart with a legend, in the default style.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    line_chart_styled(
        path,
        title,
        x_label,
        y_label,
        series,
        &ChartStyle::default(),
    )
}

/// A line chart with a legend, drawn in `style`, written atomically.
pub fn line_chart_styled(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    style: &ChartStyle,
) -> Result<()> {
    let svg = line_chart_svg(path, title, x_label, y_label, series, style)?;
    ltr_data::write_atomic(path, |w| w.write_all(svg.as_bytes()))?;
    Ok(())
}

/// The SVG text of a line chart (`path` names it in errors only).
fn line_chart_svg(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    style: &ChartStyle,
) -> Result<String> {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
    );
    for &(x, y) in pts {
        if x.is_finite() && y.is_finite() {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
    }
    if !x0.is_finite() {
        return Err(ExperimentError::Plot {
            path: path.to_path_buf(),
            message: format!("nothing to plot for {title}"),
        });
    }
    if let Some(names) = &style.x_categories {
        // Categories 1..=n, half a category of room on either side.
        (x0, x1) = (0.5, names.len().max(1) as f64 + 0.5);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.05).max(1e-3);
    let (y0, y1) = (y0 - pad, y1 + pad);
    let mut svg = String::new();
    let root = SVGBackend::with_string(&mut svg, (760, 460)).into_drawing_area();
    let e = |e: &dyn std::fmt::Display| ExperimentError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|x| e(&x))?;
    let category = |v: &f64| -> String {
        let k = v.round();
        match &style.x_categories {
            Some(names) if (v - k).abs() < 1e-9 && k >= 1.0 && k <= names.len() as f64 => {
                names[k as usize - 1].clone()
            }
            _ => String::new(),
        }
    };
    let clean = |v: &f64| tick_label(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_label).y_desc(y_label);
    if style.light_grid {
        // One thin light grey line per tick, none between ticks.
        mesh.bold_line_style(RGBColor(225, 225, 225).stroke_width(1))
            .max_light_lines(0);
    }
    if style.clean_zero {
        mesh.x_label_formatter(&clean).y_label_formatter(&clean);
    }
    if let Some(names) = &style.x_categories {
        // One tick per category (plotters puts them on the integers of 0.5..n+0.5), none between.
        mesh.x_labels(names.len().max(1))
            .x_max_light_lines(0)
            .x_label_formatter(&category);
    }
    mesh.draw().map_err(|x| e(&x))?;
    for (i, s) in series.iter().enumerate() {
        let c = style.color(i, &s.label);
        let points = || {
            s.points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
        };
        let width = if style.markers { 1 } else { 2 };
        chart
            .draw_series(LineSeries::new(points(), c.stroke_width(width)))
            .map_err(|x| e(&x))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
        if style.markers {
            chart
                .draw_series(points().map(|p| Circle::new(p, 4, c.filled())))
                .map_err(|x| e(&x))?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    drop(chart);
    drop(root);
    Ok(svg)
}

/// A bar chart (one bar per label), drawn as a line chart of steps so it needs no extra plotters feature.
pub fn bar_chart(path: &Path, title: &str, y_label: &str, bars: &[(String, f64)]) -> Result<()> {
    let series: Vec<Series> = bars
        .iter()
        .enumerate()
        .map(|(i, (l, v))| {
            let x = i as f64;
            Series {
                label: format!("{l}: {v:.4}"),
                points: vec![(x + 0.1, 0.0), (x + 0.1, *v), (x + 0.9, *v), (x + 0.9, 0.0)],
            }
        })
        .collect();
    line_chart(path, title, "method", y_label, &series)
}
