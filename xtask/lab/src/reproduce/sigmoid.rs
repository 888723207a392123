//! Seed 003 (Carvalho et al., LR4IR 2008): perceptron / RankSVM / ListNet, each refined by the sigmoid meta-ranker
//! (Table 1, with paired t-test and Wilcoxon), the σ sweep (Figure 8) and the training AUC per iteration (Figure 7).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use ltr_core::{LinearModel, Params};
use ltr_metrics::{paired_t_test, wilcoxon, Alternative, Metric};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{
    f4, in_parallel, linear, md_table, pooled, ranksvm_c_grid, ranksvm_stored, test_result,
    train_by_name, train_fold, write_report, Ctx, Fold, FoldResult,
};
use ltr_experiment::{line_chart, Series};

#[derive(Serialize, Deserialize, Clone)]
struct SigmoidCell {
    base: FoldResult,
    refined: FoldResult,
    lambda: f64,
    auc_trace: Vec<f64>,
}

/// The σ values of the sweep (Figure 8).
const SIGMAS: [f64; 6] = [0.1, 1.0, 2.0, 5.0, 7.0, 10.0];
/// The table's σ. The sweep's point at this σ is the table's RankSVM cell (the same seed refined the same way), so it
/// is taken from there rather than trained a second time.
const TABLE_SIGMA: f64 = 1.0;

/// A cell of one benchmark: the table's (seed, fold) or the sweep's (σ, fold), by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum CellKey {
    Table(usize, usize),
    Sweep(usize, usize),
}

/// What a [`CellKey`] computes.
enum Computed {
    Table(SigmoidCell),
    Sweep(FoldResult),
}

fn seed_model(
    ctx: &Ctx,
    bench: &str,
    name: &str,
    fold: &Fold,
    conv: &ltr_metrics::Convention,
) -> Result<Vec<f64>> {
    let ndcg10 = Metric::Ndcg(Some(10));
    Ok(match name {
        // The paper's deliberately weak seed: the averaged perceptron after 5 epochs.
        "Perceptron" => {
            let p = ["output=average", "epochs=5", "select-epochs=false"];
            linear(&train_fold(
                "perceptron",
                &p,
                &fold.train,
                None,
                ndcg10,
                conv,
            )?)?
            .weights
        }
        "RankSVM" => {
            ranksvm_stored(ctx, bench, fold, conv, ranksvm_c_grid(ctx))?
                .0
                .weights
        }
        _ => linear(&train_by_name("listnet", &[], fold, ndcg10, conv)?)?.weights,
    })
}

/// The registry's sigmoid from `seed` with σ given and λ chosen on validation MAP (algorithms.md §4.4).
fn refine(
    fold: &Fold,
    conv: &ltr_metrics::Convention,
    seed: &[f64],
    sigma: f64,
    lambda: Option<f64>,
) -> Result<(LinearModel, f64, Vec<f64>)> {
    let mut kv = vec![
        ("sigma", sigma.to_string()),
        ("max-iter", "300".to_string()),
    ];
    if let Some(l) = lambda {
        kv.push(("lambda", l.to_string()));
    }
    let measure = ltr_learn::MetricMeasure {
        metric: Metric::Ap(None),
        convention: *conv,
    };
    let ctx = ltr_core::FitContext::new(1).with_validation(&fold.vali, &measure);
    let fit = ltr_learn::refine_sigmoid(
        &LinearModel::new(seed.to_vec()),
        &Params::new(kv),
        &fold.train,
        &ctx,
    )?;
    let l: f64 = fit.report.selected["lambda"].parse()?;
    let auc: Vec<f64> = fit
        .diagnostics
        .as_ref()
        .and_then(|d| d["trace"].as_array())
        .map(|t| t.iter().filter_map(|s| s["auc"].as_f64()).collect())
        .unwrap_or_default();
    Ok((fit.linear().expect("the sigmoid is linear").clone(), l, auc))
}

/// Run the experiment.
pub fn run(ctx: &Ctx) -> Result<PathBuf> {
    let mut md = String::from(
        "# Sigmoid meta-ranker (Carvalho, Elsas, Cohen, Carbonell, LR4IR 2008 — seed 003)\n\n",
    );
    md.push_str("Protocol: 5 folds. Seeds: averaged perceptron after 5 epochs (deliberately weak, as in the paper), RankSVM (C on validation MAP), batch ListNet (epochs on validation). The sigmoid starts from the seed with σ = 1, η₀ = 0.05 with step halving, stops at a relative decrease below 1e-8 (at most 300 iterations); λ from {1/(2C): C ∈ 1e-5…1e1} on validation MAP. Test MAP under the benchmark's LETOR convention; marks on '+Sigmoid' against its seed over all test queries: * / ** paired t-test p < .05 / .01, † / †† Wilcoxon p < .05 / .01 (two-sided). The paper used LETOR 2.0 (OHSUMED 25 features).\n\n");
    let mut rows = Vec::new();
    // Seed 003 Table 1, OHSUMED: (seed MAP, +sigmoid MAP). 0.318 is the paper's number, not 1/π.
    #[allow(clippy::approx_constant)]
    let paper = [
        ("Perceptron", 0.318, 0.451),
        ("RankSVM", 0.447, 0.448),
        ("ListNet", 0.450, 0.449),
    ];
    // The slice fixes λ at one value of the grid (C = 1) instead of choosing it on validation.
    let slice_lambda = ctx.slice.then_some(0.5);
    // Every cell of every benchmark at once, up to --jobs: the table's (seed, fold) and the sweep's (σ, fold). The
    // RankSVM seed of a fold is the stored model ([`super::ranksvm_stored`]), trained once for its table cell, its
    // σ cells and the other experiments.
    let keys: Vec<(usize, CellKey)> = ctx
        .benches
        .iter()
        .enumerate()
        .flat_map(|(b, bench)| {
            let n = bench.folds.len();
            (0..paper.len())
                .flat_map(move |s| (0..n).map(move |f| CellKey::Table(s, f)))
                .chain(
                    (0..SIGMAS.len())
                        .filter(|&s| SIGMAS[s] != TABLE_SIGMA)
                        .flat_map(move |s| (0..n).map(move |f| CellKey::Sweep(s, f))),
                )
                .map(move |k| (b, k))
        })
        .collect();
    let computed = in_parallel(
        ctx,
        "sigmoid",
        &keys,
        |_| 1.0,
        |&(b, key)| {
            let bench = &ctx.benches[b];
            let conv = bench.convention;
            let seed_of =
                |name: &str, f: usize| seed_model(ctx, &bench.name, name, &bench.folds[f], &conv);
            match key {
                CellKey::Table(s, f) => {
                    let (seed_name, fold) = (paper[s].0, &bench.folds[f]);
                    ctx.cells
                        .get(
                            &format!("{}-f{}-sigmoid-{seed_name}", bench.name, fold.number),
                            || {
                                let t0 = Instant::now();
                                let seed = seed_of(seed_name, f)?;
                                let base = test_result(
                                    &LinearModel::new(seed.clone()),
                                    &fold.test,
                                    &conv,
                                    t0.elapsed().as_secs_f64(),
                                    BTreeMap::new(),
                                )?;
                                let t1 = Instant::now();
                                let (m, lambda, auc_trace) =
                                    refine(fold, &conv, &seed, TABLE_SIGMA, slice_lambda)?;
                                let refined = test_result(
                                    &m,
                                    &fold.test,
                                    &conv,
                                    t1.elapsed().as_secs_f64(),
                                    BTreeMap::new(),
                                )?;
                                Ok(SigmoidCell {
                                    base,
                                    refined,
                                    lambda,
                                    auc_trace,
                                })
                            },
                        )
                        .map(Computed::Table)
                }
                CellKey::Sweep(s, f) => {
                    let (sigma, fold) = (SIGMAS[s], &bench.folds[f]);
                    ctx.cells
                        .get(
                            &format!("{}-f{}-sigma-{sigma}", bench.name, fold.number),
                            || {
                                let seed = seed_of("RankSVM", f)?;
                                let (m, _, _) = refine(fold, &conv, &seed, sigma, slice_lambda)?;
                                test_result(&m, &fold.test, &conv, 0.0, BTreeMap::new())
                            },
                        )
                        .map(Computed::Sweep)
                }
            }
        },
    )?;
    let mut computed: BTreeMap<(usize, CellKey), Computed> =
        keys.into_iter().zip(computed).collect();
    for (b, bench) in ctx.benches.iter().enumerate() {
        let conv = bench.convention;
        let mut table = Vec::new();
        let mut traces: Vec<Series> = Vec::new();
        // The RankSVM seed refined at the table's σ, per fold: the sweep's point at that σ.
        let mut at_table_sigma: Vec<FoldResult> = Vec::new();
        for (s, (seed_name, pb, pr)) in paper.into_iter().enumerate() {
            let mut cells = Vec::new();
            for (f, fold) in bench.folds.iter().enumerate() {
                let Some(Computed::Table(cell)) = computed.remove(&(b, CellKey::Table(s, f)))
                else {
                    anyhow::bail!(
                        "the table cell of {seed_name}, fold {} was not computed",
                        fold.number
                    );
                };
                rows.push(BTreeMap::from([
                    ("experiment".to_string(), json!("sigmoid")),
                    ("dataset".to_string(), json!(bench.name)),
                    ("fold".to_string(), json!(fold.number)),
                    ("seed".to_string(), json!(seed_name)),
                    (
                        "MAP_seed".to_string(),
                        json!(super::mean(&cell.base.per_query["MAP"])),
                    ),
                    (
                        "MAP_sigmoid".to_string(),
                        json!(super::mean(&cell.refined.per_query["MAP"])),
                    ),
                    ("lambda".to_string(), json!(cell.lambda)),
                    (
                        "iterations".to_string(),
                        json!(cell.auc_trace.len().saturating_sub(1)),
                    ),
                ]));
                if seed_name == "RankSVM" {
                    at_table_sigma.push(cell.refined.clone());
                }
                cells.push(cell);
            }
            let b: Vec<FoldResult> = cells.iter().map(|c| c.base.clone()).collect();
            let r: Vec<FoldResult> = cells.iter().map(|c| c.refined.clone()).collect();
            let (mb, qb) = pooled(&b, "MAP");
            let (mr, qr) = pooled(&r, "MAP");
            let t = paired_t_test(&qr, &qb, Alternative::TwoSided).p_value;
            let w = wilcoxon(&qr, &qb, Alternative::TwoSided).p_value;
            let mark = format!(
                "{}{}",
                if t < 0.01 {
                    "**"
                } else if t < 0.05 {
                    "*"
                } else {
                    ""
                },
                if w < 0.01 {
                    "††"
                } else if w < 0.05 {
                    "†"
                } else {
                    ""
                }
            );
            let paper_cols = if bench.name == "OHSUMED" {
                format!("{pb:.3} → {pr:.3}")
            } else {
                "—".into()
            };
            table.push(vec![
                seed_name.to_string(),
                f4(mb),
                format!("{}{mark}", f4(mr)),
                format!("{:.4} / {:.4}", t, w),
                paper_cols,
            ]);
            traces.push(Series {
                label: format!("{seed_name} seed"),
                points: cells[0]
                    .auc_trace
                    .iter()
                    .enumerate()
                    .map(|(i, a)| (i as f64, *a))
                    .collect(),
            });
        }
        md.push_str(&format!(
            "## {} ({}): test MAP, fold means\n\n{}\n",
            bench.name,
            conv.name,
            md_table(
                &[
                    "seed",
                    "seed MAP",
                    "+Sigmoid MAP",
                    "p (t-test / Wilcoxon)",
                    "paper OHSUMED (LETOR 2.0)"
                ],
                &table
            )
        ));
        let dir = ctx.out.join("sigmoid");
        std::fs::create_dir_all(&dir)?;
        let f7 = format!("figure7_auc_{}.svg", bench.name.to_lowercase());
        line_chart(
            &dir.join(&f7),
            &format!("{} fold 1: training AUC per sigmoid iteration", bench.name),
            "iteration",
            "training AUC",
            &traces,
        )?;
        md.push_str(&format!("![training AUC]({f7})\n\nThe paper: RankSVM-seeded runs plateau after about 13 iterations, perceptron and ListNet seeds within 17.\n\n"));
        // σ sweep with the RankSVM seed (Figure 8).
        let mut sweep = Vec::new();
        let mut sweep_rows = Vec::new();
        for (s, sigma) in SIGMAS.into_iter().enumerate() {
            let mut res = Vec::new();
            for (f, fold) in bench.folds.iter().enumerate() {
                if sigma == TABLE_SIGMA {
                    res.push(at_table_sigma[f].clone());
                    continue;
                }
                let Some(Computed::Sweep(r)) = computed.remove(&(b, CellKey::Sweep(s, f))) else {
                    anyhow::bail!(
                        "the σ = {sigma} cell of fold {} was not computed",
                        fold.number
                    );
                };
                res.push(r);
            }
            let (m, _) = pooled(&res, "MAP");
            sweep.push((sigma, m));
            sweep_rows.push(vec![format!("{sigma}"), f4(m)]);
            rows.push(BTreeMap::from([
                ("experiment".to_string(), json!("sigmoid-sweep")),
                ("dataset".to_string(), json!(bench.name)),
                ("sigma".to_string(), json!(sigma)),
                ("MAP".to_string(), json!(m)),
            ]));
        }
        let f8 = format!("figure8_sigma_{}.svg", bench.name.to_lowercase());
        line_chart(
            &dir.join(&f8),
            &format!("{}: test MAP of RankSVM+sigmoid against σ", bench.name),
            "σ",
            "MAP",
            &[Series {
                label: "RankSVM + sigmoid".into(),
                points: sweep.clone(),
            }],
        )?;
        md.push_str(&format!("### σ sweep, RankSVM seed ({})\n\n{}\n![sigma]({f8})\n\nThe paper: smaller σ gives a larger MAP gain over RankSVM.\n\n", bench.name, md_table(&["σ", "MAP"], &sweep_rows)));
    }
    write_report(ctx, "sigmoid", &md, &rows)
}
