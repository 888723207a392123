//! Seed 002 (Chaudhuri & Tewari 2015): average cumulative NDCG@10 of the SLAM perceptron (NDCG and AP), the
//! pure-online algorithm and online ListNet, on the separable simulation and on the benchmarks streamed fold by fold.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use ltr_data::{generate_slam_stream, Dataset};
use ltr_online::{
    replay, Eta, OnlineListNet, OnlineRanker, PureOnline, SlamPerceptron, StreamConfig,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{md_table, write_report, Ctx};
use crate::plot::{line_chart, Series};

#[derive(Serialize, Deserialize)]
struct Curve {
    name: String,
    average_cumulative: Vec<f64>,
    cumulative_loss: Vec<f64>,
    seconds: f64,
}

fn learners(d: usize, simulation: bool) -> Vec<(String, Box<dyn OnlineRanker>)> {
    let pure_eta = if simulation {
        Eta::InvSqrt(1.0)
    } else {
        Eta::Constant(1.0)
    };
    vec![
        (
            "SLAM-NDCG".into(),
            Box::new(SlamPerceptron::ndcg(d)) as Box<dyn OnlineRanker>,
        ),
        ("SLAM-AP".into(), Box::new(SlamPerceptron::ap(d))),
        (
            "PureOnline".into(),
            Box::new(PureOnline {
                eta: pure_eta,
                ..PureOnline::new(d)
            }),
        ),
        ("OnlineListNet".into(), Box::new(OnlineListNet::new(d))),
    ]
}

fn run_stream(ctx: &Ctx, key: &str, data: &[&Dataset], simulation: bool) -> Result<Vec<Curve>> {
    ctx.cells.get(key, || {
        let d = data[0].n_features();
        Ok(learners(d, simulation)
            .into_iter()
            .map(|(name, mut l)| {
                let r = replay(l.as_mut(), data, &StreamConfig::default());
                Curve {
                    name,
                    average_cumulative: r.average_cumulative,
                    cumulative_loss: r.cumulative_loss,
                    seconds: r.seconds,
                }
            })
            .collect())
    })
}

fn section(
    ctx: &Ctx,
    title: &str,
    file: &str,
    curves: &[Curve],
    limit: usize,
    rows: &mut Vec<BTreeMap<String, serde_json::Value>>,
) -> Result<String> {
    let dir = ctx.out.join("online");
    std::fs::create_dir_all(&dir)?;
    let series: Vec<Series> = curves
        .iter()
        .map(|c| Series {
            label: c.name.clone(),
            points: c
                .average_cumulative
                .iter()
                .take(limit)
                .enumerate()
                .map(|(t, v)| ((t + 1) as f64, *v))
                .collect(),
        })
        .collect();
    line_chart(
        &dir.join(format!("{file}.svg")),
        title,
        "round t",
        "average cumulative NDCG@10",
        &series,
    )?;
    let n = curves
        .iter()
        .map(|c| c.average_cumulative.len())
        .max()
        .unwrap_or(0);
    let mut csv = format!(
        "round,{}\n",
        curves
            .iter()
            .map(|c| c.name.clone())
            .collect::<Vec<_>>()
            .join(",")
    );
    for t in 0..n {
        let vals: Vec<String> = curves
            .iter()
            .map(|c| {
                c.average_cumulative
                    .get(t)
                    .map_or(String::new(), |v| format!("{v:.6}"))
            })
            .collect();
        csv.push_str(&format!("{},{}\n", t + 1, vals.join(",")));
    }
    ltr_data::write_atomic(&dir.join(format!("{file}.csv")), |w| {
        w.write_all(csv.as_bytes())
    })?;
    let mut table = Vec::new();
    for c in curves {
        let last = c.average_cumulative.last().copied().unwrap_or(f64::NAN);
        let loss = c.cumulative_loss.last().copied().unwrap_or(f64::NAN);
        let mid = c
            .cumulative_loss
            .get(c.cumulative_loss.len() / 2)
            .copied()
            .unwrap_or(f64::NAN);
        let rps = c.average_cumulative.len() as f64 / c.seconds.max(1e-9);
        table.push(vec![
            c.name.clone(),
            format!("{last:.4}"),
            format!("{loss:.2}"),
            format!("{:.2}", loss - mid),
            format!("{rps:.0}"),
        ]);
        rows.push(BTreeMap::from([
            ("experiment".to_string(), json!("online")),
            ("stream".to_string(), json!(file)),
            ("method".to_string(), json!(c.name)),
            ("rounds".to_string(), json!(c.average_cumulative.len())),
            ("average_cumulative_ndcg10".to_string(), json!(last)),
            ("cumulative_loss".to_string(), json!(loss)),
            ("rounds_per_second".to_string(), json!(rps)),
        ]));
    }
    Ok(format!(
        "## {title}\n\n![curve]({file}.svg)\n\n{}\n",
        md_table(
            &[
                "method",
                "average cumulative NDCG@10 (end)",
                "cumulative loss Σ(1 − NDCG@10)",
                "loss added in the second half",
                "rounds / s"
            ],
            &table
        )
    ))
}

/// Run the experiment.
pub fn run(ctx: &Ctx) -> Result<PathBuf> {
    let mut md = String::from("# Online learning to rank (Chaudhuri & Tewari 2015 — seed 002)\n\n");
    md.push_str("Settings follow the authors' code (algorithms.md §3.8–3.9): w₁ = 0; SLAM with tie-averaged full-list weights, relevance-scaled margin Δ = 1, mistake test 1 − NDCG@10 > 0 (SLAM-AP: 1 − AP, relevance R > 0), η_t = 1/√t; pure online with the most violated pair and step L_t (×1/√t on the simulation); online top-one ListNet with η_t = 1/√t; ties in prediction in reverse input order. Queries without relevant documents count NDCG = 1 and cause no update. The seed gives no numbers, only the claim that the SLAM perceptron's cumulative loss stays bounded on separable data and beats ListNet there, and that the pure-online algorithm does worse on real data.\n\n");
    let mut rows = Vec::new();
    let sim = generate_slam_stream(1000, 2015)?;
    let curves = run_stream(ctx, "online-simulation", &[&sim], true)?;
    md.push_str(&section(
        ctx,
        "Separable simulation (1000 rounds, first 400 plotted as in the paper)",
        "simulation",
        &curves,
        400,
        &mut rows,
    )?);
    for bench in &ctx.benches {
        let trains: Vec<&Dataset> = bench.folds.iter().map(|f| &f.train).collect();
        let curves = run_stream(ctx, &format!("online-{}", bench.name), &trains, false)?;
        let title = format!(
            "{}: the training files of folds {} streamed in order",
            bench.name,
            bench
                .folds
                .iter()
                .map(|f| f.number.to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
        md.push_str(&section(
            ctx,
            &title,
            &bench.name.to_lowercase(),
            &curves,
            usize::MAX,
            &mut rows,
        )?);
    }
    write_report(ctx, "online", &md, &rows)
}
