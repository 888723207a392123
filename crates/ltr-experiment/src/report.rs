//! The report of an experiment: per-query metrics from every cell's test scores, fold means, paired tests against
//! the baseline over all test queries with Holm's correction across methods, win/tie/loss counts, the settings kept
//! per fold, and the files — `report.md` and `report.html`, `results.json`, `results.csv`, SVG plots, optional score files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ltr_metrics::{compare_runs, evaluate, holm_adjust, run_test, Alternative, Metric, TestKind};
use ltr_metrics::{p_value_text, ManyComparison, ManyOptions};
use rayon::prelude::*;
use serde::Serialize;

use crate::error::{ExperimentError, Result};
use crate::experiment::{CellRecord, Experiment};
use crate::plot::{line_chart_styled, ChartStyle, Series};

/// A Markdown table; a `|` inside a cell (a method's label) is written `\|`.
pub fn md_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let row = |cells: &mut dyn Iterator<Item = &str>| -> String {
        cells
            .map(|c| c.replace('|', "\\|"))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    let mut s = format!(
        "| {} |\n|{}|\n",
        row(&mut header.iter().copied()),
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for r in rows {
        s.push_str(&format!("| {} |\n", row(&mut r.iter().map(String::as_str))));
    }
    s
}

/// Arithmetic mean (0 for none).
pub fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// One paired test of a method against the baseline on one metric, over all test queries of all folds.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Metric.
    pub metric: String,
    /// The method.
    pub method: String,
    /// The test (`ttest`, `wilcoxon`, `permutation`, `sign`).
    pub test: String,
    /// Mean over queries of method − baseline.
    pub mean_difference: f64,
    /// The test statistic.
    pub statistic: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// The p-value after Holm's correction over the methods compared on this metric with this test.
    pub p_holm: f64,
    /// Queries where the method is better, equal, worse.
    pub wins: usize,
    /// Ties.
    pub ties: usize,
    /// Losses.
    pub losses: usize,
}

/// Per-query values: `values[method][fold][metric]`, one value per test query of the fold.
type Values = Vec<Vec<Vec<Vec<f64>>>>;

fn per_query_values(exp: &Experiment, cells: &[CellRecord]) -> Result<Values> {
    let n_methods = exp.labels.len();
    let evaluated: Vec<Vec<Vec<f64>>> = cells
        .par_iter()
        .enumerate()
        .map(|(i, c)| {
            let fold = &exp.folds[i / n_methods];
            evaluate(
                &fold.test,
                &c.test_scores,
                &exp.report_metrics,
                &exp.convention,
            )
            .map(|ev| ev.results.into_iter().map(|r| r.per_query).collect())
            .map_err(|source| ExperimentError::Evaluation {
                context: format!("{} on fold {}", c.label, c.fold),
                source: Box::new(source),
            })
        })
        .collect::<Result<_>>()?;
    let mut values: Values = vec![Vec::new(); n_methods];
    for (i, v) in evaluated.into_iter().enumerate() {
        values[i % n_methods].push(v);
    }
    Ok(values)
}

fn pooled(values: &Values, m: usize, k: usize) -> Vec<f64> {
    values[m]
        .iter()
        .flat_map(|f| f[k].iter().copied())
        .collect()
}

fn fold_mean(values: &Values, m: usize, k: usize) -> f64 {
    mean(&values[m].iter().map(|f| mean(&f[k])).collect::<Vec<_>>())
}

fn comparisons(exp: &Experiment, values: &Values) -> Vec<Comparison> {
    let b = exp.baseline;
    let mut out = Vec::new();
    for (k, metric) in exp.report_metrics.iter().enumerate() {
        let base = pooled(values, b, k);
        for &test in &exp.tests {
            let mut group: Vec<Comparison> = (0..exp.labels.len())
                .filter(|&m| m != b)
                .map(|m| {
                    let v = pooled(values, m, k);
                    let t = run_test(test, &v, &base, Alternative::TwoSided, exp.spec.seed);
                    let better = |x: f64, y: f64| {
                        if metric.higher_is_better() {
                            x > y
                        } else {
                            x < y
                        }
                    };
                    let wins = v
                        .iter()
                        .zip(&base)
                        .filter(|(x, y)| better(**x, **y))
                        .count();
                    let losses = v
                        .iter()
                        .zip(&base)
                        .filter(|(x, y)| better(**y, **x))
                        .count();
                    Comparison {
                        metric: metric.to_string(),
                        method: exp.labels[m].clone(),
                        test: test_name(test).into(),
                        mean_difference: mean(&v) - mean(&base),
                        statistic: t.statistic,
                        p_value: t.p_value,
                        p_holm: f64::NAN,
                        wins,
                        ties: v.len() - wins - losses,
                        losses,
                    }
                })
                .collect();
            let adjusted = holm_adjust(&group.iter().map(|c| c.p_value).collect::<Vec<_>>());
            for (c, p) in group.iter_mut().zip(adjusted) {
                c.p_holm = p;
            }
            out.extend(group);
        }
    }
    out
}

/// Randomised Tukey HSD over every pair of methods, one comparison per metric (none for two methods or fewer: the
/// tests against the baseline cover them). Methods are ordered baseline first.
fn all_pairs(exp: &Experiment, values: &Values) -> Vec<ManyComparison> {
    if exp.labels.len() <= 2 {
        return Vec::new();
    }
    let order: Vec<usize> = std::iter::once(exp.baseline)
        .chain((0..exp.labels.len()).filter(|&m| m != exp.baseline))
        .collect();
    let names: Vec<String> = order.iter().map(|&m| exp.labels[m].clone()).collect();
    exp.report_metrics
        .iter()
        .enumerate()
        .filter_map(|(k, metric)| {
            let v: Vec<Vec<f64>> = order.iter().map(|&m| pooled(values, m, k)).collect();
            let opts = ManyOptions {
                seed: exp.spec.seed,
                higher_is_better: metric.higher_is_better(),
                ..ManyOptions::default()
            };
            // Metric values are finite and every fold has test queries, so this cannot fail.
            compare_runs(&names, &v, 0, &metric.to_string(), &opts).ok()
        })
        .collect()
}

fn test_name(t: TestKind) -> &'static str {
    match t {
        TestKind::TTest => "ttest",
        TestKind::Wilcoxon => "wilcoxon",
        TestKind::Sign => "sign",
        TestKind::Permutation => "permutation",
    }
}

fn f4(x: f64) -> String {
    format!("{x:.4}")
}

/// Write every output of the experiment into `out`; returns the path of `report.md`.
pub(crate) fn write_report(exp: &Experiment, cells: &[CellRecord], out: &Path) -> Result<PathBuf> {
    let values = per_query_values(exp, cells)?;
    let comps = comparisons(exp, &values);
    let many = all_pairs(exp, &values);
    write_json(exp, cells, &values, &comps, &many, out)?;
    write_csv(exp, &values, out)?;
    let plots = write_plots(exp, &values, out)?;
    if exp.spec.keep_scores {
        write_scores(exp, cells, out)?;
    }
    let md = markdown(exp, cells, &values, &comps, &many, &plots);
    let path = out.join("report.md");
    ltr_data::write_atomic(&path, |w| w.write_all(md.as_bytes()))?;
    let colours: Vec<(String, String)> = exp
        .labels
        .iter()
        .cloned()
        .zip(crate::plot::palette().into_iter().cycle())
        .collect();
    crate::html::write_html(&md, out, &colours)?;
    Ok(path)
}

/// Where validation came from, in one phrase for all folds.
fn validation_summary(exp: &Experiment) -> String {
    if exp
        .folds
        .iter()
        .all(|f| f.test_file.is_some() && f.validation_source.ends_with("vali.txt"))
    {
        "each fold's `vali.txt`".into()
    } else if exp
        .folds
        .iter()
        .all(|f| f.validation_source == exp.folds[0].validation_source)
    {
        exp.folds[0].validation_source.clone()
    } else {
        exp.folds
            .iter()
            .map(|f| format!("Fold{}: {}", f.number, f.validation_source))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn markdown(
    exp: &Experiment,
    cells: &[CellRecord],
    values: &Values,
    comps: &[Comparison],
    many: &[ManyComparison],
    plots: &[PathBuf],
) -> String {
    let n_methods = exp.labels.len();
    let spec = &exp.spec;
    let test_queries: usize = exp.folds.iter().map(|f| f.test.n_queries()).sum();
    let source = match (&spec.data.file, &spec.data.fold_dir) {
        (Some(f), _) => format!(
            "`{}` split by query into {} folds (seed {}, stratified by relevant documents)",
            f.display(),
            exp.folds.len(),
            spec.seed
        ),
        (_, Some(d)) => format!(
            "the fold folder `{}` ({} folds)",
            d.display(),
            exp.folds.len()
        ),
        _ => String::new(),
    };
    // An experiment on clicks says which methods learned from the logs and which from the judgments.
    let source = match &spec.data.clicks {
        None => source,
        Some(logs) => {
            let judged: Vec<&str> = exp
                .labels
                .iter()
                .zip(&spec.algorithms)
                .filter(|(_, m)| m.judged || m.model_file().is_some())
                .map(|(l, _)| l.as_str())
                .collect();
            format!(
                "{source}, training on the click logs `{}`{} (validation and test judged){}",
                logs.display(),
                spec.data
                    .propensities
                    .as_ref()
                    .map(|p| format!(" with the propensities of `{}`", p.display()))
                    .unwrap_or_default(),
                match judged.is_empty() {
                    true => String::new(),
                    false => format!("; not on clicks: {}", judged.join(", ")),
                }
            )
        }
    };
    let mut md = format!("# Experiment: {}\n\n", exp.labels.join(", "));
    md.push_str(&format!(
        "Data: {source}; {test_queries} test queries in all. Validation: {}. Grids, epochs and rounds chosen on \
         validation {} ({} convention, which every metric below uses). Preprocessing: `--normalize {}`{}. Seed {}. \
         Rerun or extend with `ltr experiment --config experiment.toml --out DIR` (finished cells are reused).\n\n",
        validation_summary(exp),
        exp.metric,
        spec.convention,
        spec.normalize,
        spec.log1p.as_deref().map(|l| format!(", `--log1p {l}`")).unwrap_or_default(),
        spec.seed,
    ));
    // Fold means, best per column in bold.
    let metric_names: Vec<String> = exp.report_metrics.iter().map(|m| m.to_string()).collect();
    let means: Vec<Vec<f64>> = (0..n_methods)
        .map(|m| {
            (0..exp.report_metrics.len())
                .map(|k| fold_mean(values, m, k))
                .collect()
        })
        .collect();
    let best: Vec<f64> = exp
        .report_metrics
        .iter()
        .enumerate()
        .map(|(k, metric)| {
            let col = means.iter().map(|r| r[k]);
            if metric.higher_is_better() {
                col.fold(f64::NEG_INFINITY, f64::max)
            } else {
                col.fold(f64::INFINITY, f64::min)
            }
        })
        .collect();
    let seconds = |m: usize, f: fn(&CellRecord) -> f64| -> f64 {
        cells.iter().skip(m).step_by(n_methods).map(f).sum()
    };
    let rows: Vec<Vec<String>> = (0..n_methods)
        .map(|m| {
            let mut row = vec![exp.labels[m].clone()];
            for (k, v) in means[m].iter().enumerate() {
                row.push(if *v == best[k] {
                    format!("**{}**", f4(*v))
                } else {
                    f4(*v)
                });
            }
            row.push(format!("{:.2}", seconds(m, |c| c.train_seconds)));
            row.push(format!("{:.3}", seconds(m, |c| c.predict_seconds)));
            row
        })
        .collect();
    let mut header: Vec<&str> = vec!["method"];
    header.extend(metric_names.iter().map(String::as_str));
    header.extend(["train s (all folds)", "predict s"]);
    md.push_str("## Test metrics, mean over folds\n\n");
    md.push_str(&md_table(&header, &rows));
    md.push_str("\nBold: the best in each column. Times are summed over folds; cells ran in parallel, so they \
                 shared the machine.\n\n");
    // Significance.
    let base = &exp.labels[exp.baseline];
    if n_methods > 1 && !exp.tests.is_empty() {
        md.push_str(&format!(
            "## Against the baseline `{base}`\n\nPaired two-sided tests over all {test_queries} test queries \
             (pooled over folds); p-values after Holm's correction over the {} methods compared, raw p in \
             brackets; W/T/L counts queries where the method is better / equal / worse.\n\n",
            n_methods - 1
        ));
        for metric in &metric_names {
            let mut header: Vec<String> = vec!["method".into(), "Δ mean".into()];
            header.extend(exp.tests.iter().map(|t| format!("{} p", test_name(*t))));
            header.push("W/T/L".into());
            let rows: Vec<Vec<String>> = exp
                .labels
                .iter()
                .filter(|l| *l != base)
                .map(|label| {
                    let mine: Vec<&Comparison> = comps
                        .iter()
                        .filter(|c| &c.metric == metric && &c.method == label)
                        .collect();
                    let first = mine[0];
                    let mut row = vec![label.clone(), format!("{:+.4}", first.mean_difference)];
                    for c in &mine {
                        let star = if c.p_holm < 0.05 { " *" } else { "" };
                        row.push(format!(
                            "{}{star} ({})",
                            p_value_text(c.p_holm),
                            p_value_text(c.p_value)
                        ));
                    }
                    row.push(format!("{}/{}/{}", first.wins, first.ties, first.losses));
                    row
                })
                .collect();
            let h: Vec<&str> = header.iter().map(String::as_str).collect();
            md.push_str(&format!("### {metric}\n\n{}\n", md_table(&h, &rows)));
        }
        md.push_str("`*`: below 0.05 after correction.\n\n");
    }
    if n_methods > 2 {
        md.push_str(&format!(
            "## All methods against each other\n\nEvery pair of methods over all {test_queries} test queries \
             (pooled over folds), the baseline `{base}` first; `ltr compare` computes the same tables.\n\n"
        ));
        for c in many {
            md.push_str(&format!("### {}\n\n{}\n", c.measure, c.to_markdown()));
        }
    }
    // Per fold.
    md.push_str("## Per fold\n\n");
    let mut header: Vec<String> = vec!["method".into()];
    header.extend(exp.folds.iter().map(|f| format!("Fold{}", f.number)));
    header.push("mean".into());
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    for (k, metric) in metric_names.iter().enumerate() {
        let rows: Vec<Vec<String>> = (0..n_methods)
            .map(|m| {
                let mut row = vec![exp.labels[m].clone()];
                row.extend(values[m].iter().map(|f| f4(mean(&f[k]))));
                row.push(f4(means[m][k]));
                row
            })
            .collect();
        md.push_str(&format!("### {metric}\n\n{}\n", md_table(&h, &rows)));
    }
    // Settings.
    md.push_str(&format!(
        "## Settings kept (chosen on validation {} where a grid was given)\n\n",
        exp.metric
    ));
    let mut header: Vec<String> = vec!["method".into()];
    header.extend(exp.folds.iter().map(|f| format!("Fold{}", f.number)));
    let h: Vec<&str> = header.iter().map(String::as_str).collect();
    let rows: Vec<Vec<String>> = (0..n_methods)
        .map(|m| {
            let mut row = vec![exp.labels[m].clone()];
            row.extend(cells.iter().skip(m).step_by(n_methods).map(|c| {
                let v = c
                    .validation
                    .map(|v| format!(" (vali {})", f4(v)))
                    .unwrap_or_default();
                format!("{}{v}", ltr_learn::describe(&c.params))
            }));
            row
        })
        .collect();
    md.push_str(&md_table(&h, &rows));
    md.push('\n');
    if !plots.is_empty() {
        // The validation metric's plots are shown; the other metrics' are linked.
        md.push_str("## Plots\n\n");
        let primary = format!("-{}.svg", plot_name(&exp.metric));
        let mut others = Vec::new();
        for p in plots {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if name.ends_with(&primary) {
                md.push_str(&format!("![{name}](plots/{name})\n\n"));
            } else {
                others.push(format!("[{name}](plots/{name})"));
            }
        }
        if !others.is_empty() {
            md.push_str(&format!("Other metrics: {}.\n\n", others.join(", ")));
        }
    }
    md.push_str("Files: `results.json` (everything above, with per-query values), `results.csv` (one row per test \
                 query and method), `experiment.toml` (this run's description), `cells/` (checkpoints).\n");
    md
}

fn write_json(
    exp: &Experiment,
    cells: &[CellRecord],
    values: &Values,
    comps: &[Comparison],
    many: &[ManyComparison],
    out: &Path,
) -> Result<()> {
    let n_methods = exp.labels.len();
    let metric_names: Vec<String> = exp.report_metrics.iter().map(|m| m.to_string()).collect();
    let folds: Vec<serde_json::Value> = exp
        .folds
        .iter()
        .map(|f| {
            serde_json::json!({
                "fold": f.number,
                "train_queries": f.train.n_queries(),
                "validation_queries": f.validation.as_ref().map_or(0, |v| v.n_queries()),
                "validation_source": f.validation_source,
                "test_queries": f.test.n_queries(),
                "test_documents": f.test.n_docs(),
                "test_file": f.test_file,
                "test_qids": f.test.qids(),
            })
        })
        .collect();
    let cell_json: Vec<serde_json::Value> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (m, f) = (i % n_methods, i / n_methods);
            let per_query: BTreeMap<&String, &Vec<f64>> =
                metric_names.iter().zip(&values[m][f]).collect();
            let means: BTreeMap<&String, f64> = metric_names
                .iter()
                .zip(values[m][f].iter().map(|v| mean(v)))
                .collect();
            serde_json::json!({
                "fold": c.fold,
                "method": c.label,
                "algo": c.algo,
                "params": c.params,
                "grid": c.grid,
                "validation": c.validation,
                "train_seconds": c.train_seconds,
                "predict_seconds": c.predict_seconds,
                "means": means,
                "per_query": per_query,
            })
        })
        .collect();
    let fold_means: BTreeMap<&String, BTreeMap<&String, f64>> = exp
        .labels
        .iter()
        .enumerate()
        .map(|(m, l)| {
            (
                l,
                metric_names
                    .iter()
                    .enumerate()
                    .map(|(k, n)| (n, fold_mean(values, m, k)))
                    .collect(),
            )
        })
        .collect();
    let doc = serde_json::json!({
        "experiment": exp.spec,
        "methods": exp.labels,
        "baseline": exp.labels[exp.baseline],
        "metrics": metric_names,
        "convention": exp.spec.convention,
        "folds": folds,
        "fold_means": fold_means,
        "significance": comps,
        "all_pairs": many.iter().map(|c| c.to_json()).collect::<Vec<_>>(),
        "cells": cell_json,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(std::io::Error::other)?;
    ltr_data::write_atomic(&out.join("results.json"), |w| w.write_all(text.as_bytes()))?;
    Ok(())
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn write_csv(exp: &Experiment, values: &Values, out: &Path) -> Result<()> {
    let mut csv = String::from("fold,method,qid");
    for m in &exp.report_metrics {
        csv.push(',');
        csv.push_str(&csv_field(&m.to_string()));
    }
    csv.push('\n');
    for (f, fold) in exp.folds.iter().enumerate() {
        for (m, label) in exp.labels.iter().enumerate() {
            for (q, qid) in fold.test.qids().iter().enumerate() {
                csv.push_str(&format!(
                    "{},{},{}",
                    fold.number,
                    csv_field(label),
                    csv_field(qid)
                ));
                for k in 0..exp.report_metrics.len() {
                    csv.push_str(&format!(",{}", values[m][f][k][q]));
                }
                csv.push('\n');
            }
        }
    }
    ltr_data::write_atomic(&out.join("results.csv"), |w| w.write_all(csv.as_bytes()))?;
    Ok(())
}

fn plot_name(metric: &Metric) -> String {
    metric
        .to_string()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '@' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Two plots per metric: each method's per-query difference against the baseline, sorted (how often and by how
/// much it wins), and each method's mean by fold.
fn write_plots(exp: &Experiment, values: &Values, out: &Path) -> Result<Vec<PathBuf>> {
    let dir = out.join("plots");
    std::fs::create_dir_all(&dir).map_err(|e| ExperimentError::io(&dir, e))?;
    let base = &exp.labels[exp.baseline];
    // One colour per method in every figure: the palette follows the experiment's method list.
    let style = ChartStyle::report(&exp.labels);
    let by_fold = style.clone().with_categories(
        exp.folds
            .iter()
            .map(|f| format!("Fold {}", f.number))
            .collect(),
    );
    let mut paths = Vec::new();
    for (k, metric) in exp.report_metrics.iter().enumerate() {
        let name = plot_name(metric);
        if exp.labels.len() > 1 {
            let b = pooled(values, exp.baseline, k);
            let series: Vec<Series> = (0..exp.labels.len())
                .filter(|&m| m != exp.baseline)
                .map(|m| {
                    let mut d: Vec<f64> = pooled(values, m, k)
                        .iter()
                        .zip(&b)
                        .map(|(x, y)| x - y)
                        .collect();
                    d.sort_by(f64::total_cmp);
                    let n = d.len().max(2) as f64 - 1.0;
                    Series {
                        label: exp.labels[m].clone(),
                        points: d
                            .iter()
                            .enumerate()
                            .map(|(i, v)| (i as f64 / n, *v))
                            .collect(),
                    }
                })
                .collect();
            let p = dir.join(format!("difference-{name}.svg"));
            line_chart_styled(
                &p,
                &format!("{metric}: method − {base} per test query, sorted"),
                "share of test queries",
                &format!("{metric} difference"),
                &series,
                &style,
            )?;
            paths.push(p);
        }
        if exp.folds.len() > 1 {
            let series: Vec<Series> = (0..exp.labels.len())
                .map(|m| Series {
                    label: exp.labels[m].clone(),
                    points: exp
                        .folds
                        .iter()
                        .enumerate()
                        .map(|(f, _)| ((f + 1) as f64, mean(&values[m][f][k])))
                        .collect(),
                })
                .collect();
            let p = dir.join(format!("by-fold-{name}.svg"));
            line_chart_styled(
                &p,
                &format!("{metric} by fold (test)"),
                "fold",
                &metric.to_string(),
                &series,
                &by_fold,
            )?;
            paths.push(p);
        }
    }
    Ok(paths)
}

/// `scores/LABEL/foldN.txt` for every cell (one score per line, test-set order) and, for folds split from one
/// file, `folds/foldN/test.txt`, so that `ltr eval --data TEST --scores S` reproduces the report's numbers.
fn write_scores(exp: &Experiment, cells: &[CellRecord], out: &Path) -> Result<()> {
    for c in cells {
        let label: String = c
            .label
            .chars()
            .map(|ch| {
                if ch.is_ascii_alphanumeric() || "-_.".contains(ch) {
                    ch
                } else {
                    '_'
                }
            })
            .collect();
        let dir = out.join("scores").join(label);
        std::fs::create_dir_all(&dir).map_err(|e| ExperimentError::io(&dir, e))?;
        ltr_data::write_scores(&dir.join(format!("fold{}.txt", c.fold)), &c.test_scores)?;
    }
    for f in &exp.folds {
        if f.test_file.is_none() {
            let path = out
                .join("folds")
                .join(format!("fold{}", f.number))
                .join("test.txt");
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| ExperimentError::io(dir, e))?;
            }
            ltr_data::write_letor(&f.test, &path)?;
        }
    }
    Ok(())
}
