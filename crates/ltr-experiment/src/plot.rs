//! SVG plots (plotters, SVG backend): the papers' figures and the experiment report's curves.

use std::path::Path;

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

/// A line chart with a legend.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
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
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let pad = ((y1 - y0) * 0.05).max(1e-3);
    let (y0, y1) = (y0 - pad, y1 + pad);
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
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
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .draw()
        .map_err(|x| e(&x))?;
    for (i, s) in series.iter().enumerate() {
        let c = COLORS[i % COLORS.len()];
        chart
            .draw_series(LineSeries::new(
                s.points
                    .iter()
                    .copied()
                    .filter(|(x, y)| x.is_finite() && y.is_finite()),
                c.stroke_width(2),
            ))
            .map_err(|x| e(&x))?
            .label(s.label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
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
