//! Debiased LambdaMART from clicks under ULTRA's simulation (Ai et al.'s ULTRA toolbox, CIKM 2021; issue 52): a
//! production RankSVM trained on 1% of the training queries shows each training query's top 10; users click under
//! the position-based model with ULTRA's examination curve raised to η, or under the dependent click model (DCM,
//! Guo, Liu & Wang, WSDM 2009); sessions accumulate to 10⁴, 10⁵ and 10⁶. On each session set `lambdamart` learns with
//! every position debiaser it has, beside its naive control:
//! - `debias=position-factors`: LightGBM's position-bias GAM (a learned factor per position, training only);
//! - `debias=pairwise`: Unbiased LambdaMART (Hu et al., WWW 2019), propensities of clicked and unclicked positions
//!   learned jointly with the trees;
//! - `debias=dla`: the Dual Learning Algorithm (Ai et al., SIGIR 2018) with trees;
//! - `debias=dr`: the doubly robust set of the same sessions (Oosterhuis, TOIS 2023), with the simulation's true
//!   propensities (position-based users only);
//! - `debias=ips`: inverse propensity weighting with the simulation's true propensities (position-based users
//!   only: no table is true of a DCM user);
//!
//! and `lambdamart` on the training judgments, and on the judgments of the shown top 10 alone (what any learner of
//! these clicks could know at best), bound the rows from above. Every tree model has `lambdamart`'s defaults and no
//! validation: nothing judged tunes a click learner. The peers on the same protocol (LightGBM
//! `lambdarank_position_bias`, XGBoost `lambdarank_unbiased`) are BENCHMARKS.md's, from `benches/debias-clicks.sh`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use ltr_clicks::{
    write_propensity_table, ClickModel, ClickSessionBuilder, ClickSimulation, DoublyRobustBuilder,
    DoublyRobustSettings, Examination, PropensityEstimate, PropensitySource, ULTRA_CURVE,
};
use ltr_core::Scorer;
use ltr_data::Dataset;
use ltr_experiment::{line_chart, Series};
use ltr_metrics::{paired_t_test, Alternative, Convention, Metric};
use serde_json::json;

use super::clicks::{fold_keys, tasks, web_fold, Task};
use super::{
    f4, in_parallel, md_table, mean, test_result_of_scores, train_fold, Ctx, Fold, FoldResult,
};

/// A simulated user: its name in the tables, its click model and η.
struct User {
    name: &'static str,
    model: ClickModel,
    eta: f64,
}

/// ULTRA's position-based users at three severities of position bias, and the DCM user (reads on after a click at
/// rank r with the probability 1 − (1/r)^η/2).
const USERS: [User; 4] = [
    User {
        name: "PBM η=0.5",
        model: ClickModel::PositionBased(Examination::Ultra),
        eta: 0.5,
    },
    User {
        name: "PBM η=1",
        model: ClickModel::PositionBased(Examination::Ultra),
        eta: 1.0,
    },
    User {
        name: "PBM η=2",
        model: ClickModel::PositionBased(Examination::Ultra),
        eta: 2.0,
    },
    User {
        name: "DCM",
        model: ClickModel::Dependent,
        eta: 1.0,
    },
];

/// The user of the slice: the headline user (PBM, η = 1), with whom every method runs.
const SLICE_USERS: [usize; 1] = [1];

/// Sessions simulated (each set a prefix of the next).
const SESSIONS: [u64; 3] = [10_000, 100_000, 1_000_000];

/// The click learners: label, `lambdamart`'s `debias`.
const METHODS: [(&str, &str); 6] = [
    ("naive", "none"),
    ("position-factors", "position-factors"),
    ("pairwise", "pairwise"),
    ("DLA", "dla"),
    ("DR, true propensities", "dr"),
    ("IPS, true propensities", "ips"),
];

/// The methods that need the true propensities, last in [`METHODS`].
const KNOWN_PROPENSITIES: [&str; 2] = ["dr", "ips"];

/// Share of the training queries the production ranker learns from (ULTRA's 1%), at least one query.
const PRODUCTION_SHARE: f64 = 0.01;
/// Documents shown a session.
const TOP: usize = 10;
/// Sessions simulated at a time.
const CHUNK: u64 = 20_000;

/// The simulation of `user` (ULTRA's noise: ε₋ 0.1, ε₊ 1, the top 10).
fn simulation(user: &User, seed: u64) -> ClickSimulation {
    ClickSimulation {
        model: user.model,
        eta: user.eta,
        top: TOP,
        eps_minus: 0.1,
        eps_plus: 1.0,
        seed,
        ..ClickSimulation::default()
    }
}

/// Whether `user` examines by position alone, so that its propensities are known.
fn positional(user: &User) -> bool {
    matches!(user.model, ClickModel::PositionBased(_))
}

/// What every user of one fold starts from.
struct FoldStart {
    /// `lambdamart` on the training judgments.
    judged: FoldResult,
    /// `lambdamart` on the judgments of the documents the production ranker shows.
    shown: FoldResult,
    /// The production ranker.
    production: FoldResult,
    /// The production ranker's scores of the training documents.
    prod_scores: Vec<f64>,
    /// Training queries the production ranker learnt from.
    n_prod: usize,
}

/// The training queries cut to the production ranker's top [`TOP`] of each.
fn shown_part(train: &Dataset, scores: &[f64]) -> Result<Dataset> {
    let mut rows = Vec::new();
    let mut offsets = vec![0];
    for q in 0..train.n_queries() {
        let r = train.query_range(q);
        let mut order: Vec<usize> = r.clone().collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        order.truncate(TOP);
        rows.extend(order);
        offsets.push(rows.len());
    }
    let labels = rows.iter().map(|&i| train.labels()[i]).collect();
    Ok(Dataset::new(
        train.select_rows_matrix(&rows),
        labels,
        offsets,
        train.qids().to_vec(),
    )?)
}

fn evaluate(
    model: &dyn Scorer,
    fold: &Fold,
    conv: &Convention,
    seconds: f64,
) -> Result<FoldResult> {
    let scores = model.score_dataset(&fold.test);
    test_result_of_scores(&fold.test, &scores, conv, seconds, BTreeMap::new())
}

/// `lambdamart` (its defaults, no validation) with `params` on `train`, evaluated on the fold's test queries.
fn lambdamart(
    params: &[&str],
    train: &Dataset,
    fold: &Fold,
    conv: &Convention,
) -> Result<FoldResult> {
    let t0 = Instant::now();
    let t = train_fold(
        "lambdamart",
        params,
        train,
        None,
        Metric::Ndcg(Some(10)),
        conv,
    )?;
    evaluate(&t.model, fold, conv, t0.elapsed().as_secs_f64())
}

/// The production ranker (cheap: always trained, never stored) and the judged bounds (stored) of one fold.
fn fold_start(ctx: &Ctx, task: &Task<'_>, fold: &Fold) -> Result<FoldStart> {
    let conv = task.conv;
    let n_prod = ((fold.train.n_queries() as f64 * PRODUCTION_SHARE).round() as usize).max(1);
    let prod_train = fold.train.select_queries(&(0..n_prod).collect::<Vec<_>>());
    let prod = train_fold(
        "ranksvm",
        &["c=0.1"],
        &prod_train,
        None,
        Metric::Ndcg(Some(10)),
        &conv,
    )?;
    let production = evaluate(&prod.model, fold, &conv, 0.0)?;
    let prod_scores = prod.model.score_dataset(&fold.train);
    let key = |what: &str| format!("clicks-trees-{}-f{}-{what}", task.name, fold.number);
    let judged = ctx
        .cells
        .get_shared(&key("judged"), || lambdamart(&[], &fold.train, fold, &conv))?;
    let shown = ctx.cells.get_shared(&key("shown"), || {
        lambdamart(&[], &shown_part(&fold.train, &prod_scores)?, fold, &conv)
    })?;
    Ok(FoldStart {
        judged,
        shown,
        production,
        prod_scores,
        n_prod,
    })
}

/// The true propensities of a position-based user relative to rank 1, as the table `debias=ips` reads, written to
/// a temporary file.
fn truth_table(user: &User) -> Result<tempfile::NamedTempFile> {
    let sim = simulation(user, 0);
    let table: Vec<PropensityEstimate> = (1..=TOP)
        .map(|rank| {
            let p = sim.examination(rank) / sim.examination(1);
            PropensityEstimate {
                rank: rank as u32,
                value: p,
                low: p,
                high: p,
                sessions: 0,
            }
        })
        .collect();
    let file = tempfile::NamedTempFile::new().context("a temporary propensity table")?;
    write_propensity_table(file.path(), &table)?;
    Ok(file)
}

/// The methods `user` is run with: every one, or all but DR and IPS when no propensity is true of it.
fn methods(user: &User) -> Vec<(&'static str, &'static str)> {
    METHODS
        .iter()
        .copied()
        .filter(|m| positional(user) || !KNOWN_PROPENSITIES.contains(&m.1))
        .collect()
}

/// One budget's results: distinct sessions, then the results of [`methods`] in order.
type BudgetCells = (usize, Vec<FoldResult>);

/// The click learners' results on one fold for one user at every budget, simulating only when a cell is missing.
fn user_cells(
    ctx: &Ctx,
    task: &str,
    fold: &Fold,
    conv: &Convention,
    (ui, user): (usize, &User),
    prod_scores: &[f64],
    budgets: &[u64],
) -> Result<Vec<BudgetCells>> {
    let sim = simulation(user, 2019 + ui as u64);
    let methods = methods(user);
    let cell = |n: u64, debias: &str| {
        format!(
            "clicks-trees-{task}-f{}-{}-n{n}-{debias}",
            fold.number,
            user.name.replace([' ', '='], "")
        )
    };
    let truth = if positional(user) {
        Some(truth_table(user)?)
    } else {
        None
    };
    let mut builder = ClickSessionBuilder::new(&fold.train);
    // The doubly robust set of the same sessions, with the simulation's propensities (position-based users).
    let mut dr_builder = match positional(user) {
        true => Some(DoublyRobustBuilder::new(
            &fold.train,
            PropensitySource::Logged,
            DoublyRobustSettings::default(),
        )?),
        false => None,
    };
    let mut simulated = 0u64;
    let mut out = Vec::new();
    for &n in budgets {
        let needed = methods
            .iter()
            .any(|(_, d)| !ctx.cells.contains_shared(&cell(n, d)));
        let mut training: Option<Dataset> = None;
        let mut dr_training: Option<Dataset> = None;
        // The distinct sessions of this budget: stored with each cell, so that a run that reads every cell back
        // reports them without simulating.
        if needed {
            let t0 = Instant::now();
            while simulated < n {
                let end = (simulated + CHUNK).min(n);
                let sessions = sim.simulate_compact(&fold.train, prod_scores, simulated..end)?;
                builder.add_simulated(&fold.train, &sessions)?;
                if let Some(b) = &mut dr_builder {
                    b.add_simulated(&fold.train, &sessions)?;
                }
                simulated = end;
            }
            let (ds, stats) = builder.finish()?;
            dr_training = dr_builder
                .as_ref()
                .map(|b| b.finish())
                .transpose()?
                .map(|d| d.0);
            tracing::info!(
                "{task} fold {} {}: {} sessions, {} with a click, {} distinct ({:.1}s)",
                fold.number,
                user.name,
                stats.sessions,
                stats.sessions - stats.sessions_without_clicks,
                stats.queries,
                t0.elapsed().as_secs_f64()
            );
            training = Some(ds);
        }
        let mut results = Vec::new();
        for (_, debias) in &methods {
            results.push(ctx.cells.get_shared(&cell(n, debias), || {
                let ds = match *debias {
                    "dr" => dr_training.as_ref().context("doubly robust set")?,
                    _ => training.as_ref().context("click session set")?,
                };
                let mut params = vec![format!("debias={debias}")];
                if let (Some(t), true) = (&truth, *debias == "ips") {
                    params.push(format!("propensities={}", t.path().display()));
                }
                let params: Vec<&str> = params.iter().map(String::as_str).collect();
                let mut r = lambdamart(&params, ds, fold, conv)?;
                r.notes
                    .insert("distinct sessions".into(), ds.n_queries().to_string());
                Ok(r)
            })?);
        }
        let distinct = results[0]
            .notes
            .get("distinct sessions")
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        out.push((distinct, results));
    }
    Ok(out)
}

fn pooled(r: &[&FoldResult]) -> Vec<f64> {
    r.iter()
        .flat_map(|x| x.per_query["NDCG@10"].iter().copied())
        .collect()
}

/// Run the experiment.
pub fn run(ctx: &Ctx) -> Result<PathBuf> {
    let budgets: Vec<u64> = if ctx.slice {
        vec![SESSIONS[0]]
    } else {
        SESSIONS.to_vec()
    };
    let users: Vec<usize> = if ctx.slice {
        SLICE_USERS.to_vec()
    } else {
        (0..USERS.len()).collect()
    };
    // The slice leaves the generated web fold to the full run (nor does it generate it): its rows train the same
    // LambdaMART on z-scored features as the LETOR rows, on 3 times their click rows and 136 features, and were 30
    // of the slice's 92 CPU-s. The web fold itself stays checked by the clicks paper's slice (`clicks.rs`).
    let web = if ctx.slice { None } else { Some(web_fold()?) };
    let tasks = tasks(ctx, web.as_ref())?;
    let fold_keys = fold_keys(&tasks);
    let starts = in_parallel(
        ctx,
        "debiased trees: production ranker and judged bounds",
        &fold_keys,
        |&(t, f)| tasks[t].folds[f].train.n_docs() as f64,
        |&(t, f)| fold_start(ctx, &tasks[t], tasks[t].folds[f]),
    )?;
    let units: Vec<(usize, usize)> = (0..fold_keys.len())
        .flat_map(|k| users.iter().map(move |&u| (k, u)))
        .collect();
    let per_unit = in_parallel(
        ctx,
        "debiased trees (fold × user, every budget)",
        &units,
        |&(k, u)| {
            let fold = tasks[fold_keys[k].0].folds[fold_keys[k].1];
            // Distinct sessions, so training rows, grow with the documents a query has and with the clicks a
            // session draws (fewer under a steeper curve).
            fold.train.n_docs() as f64 / fold.train.n_queries() as f64 / (1.0 + USERS[u].eta)
        },
        |&(k, u)| {
            let task = &tasks[fold_keys[k].0];
            let fold = task.folds[fold_keys[k].1];
            user_cells(
                ctx,
                &task.name,
                fold,
                &task.conv,
                (u, &USERS[u]),
                &starts[k].prod_scores,
                &budgets,
            )
        },
    )?;
    let mut md = String::from(
        "# Debiased LambdaMART from clicks (ULTRA's simulation; Unbiased LambdaMART, LightGBM's position \
         factors, DLA, doubly robust)\n\n",
    );
    md.push_str(&format!(
        "Protocol (ULTRA's simulation, issue 52): on each fold a production RankSVM (C = 0.1) is trained on the \
         first {:.0}% of the training queries (at least one) and shows each training query's top {TOP}; a session \
         draws a training query uniformly. **PBM** users examine rank r with ULTRA's measured probability \
         ({ULTRA_CURVE:?} for ranks 1–10) raised to η; the **DCM** user reads down the list and goes on after a \
         click at rank r with the probability 1 − (1/r)/2. An examined document of grade g is clicked with the \
         probability ε₋ + (1 − ε₋)(2^g − 1)/(2^max − 1), ε₋ = 0.1. Sessions accumulate to each budget (the smaller \
         sets are prefixes of the larger); identical sessions are one training query weighted by their count, \
         sessions without a click are dropped. Every model is `lambdamart` with its defaults (100 trees, learning \
         rate 0.1, 31 leaves) and no validation, so that nothing judged tunes a click learner: **naive** \
         (`debias=none`: clicks as labels), **position-factors** (LightGBM's `lambdarank_position_bias`), \
         **pairwise** (Unbiased LambdaMART, Hu et al. 2019, as XGBoost's `lambdarank_unbiased`), **DLA** (Ai et al. \
         2018), **DR** (`debias=dr`: the doubly robust set of the same sessions, Oosterhuis 2023, with the \
         simulation's true propensities) and **IPS** given them (DR and IPS for position-based users only). **Judged** is \
         `lambdamart` on every training judgment, **shown** on the judgments of the shown top {TOP} alone: the \
         most a click log could teach. Test NDCG@10 under each benchmark's convention over all test queries of the \
         folds run; p: one-sided paired t-test over those queries of the row above the naive model. Distinct \
         sessions: the mean per fold. Best − judged: the best click row minus `lambdamart` on the judgments \
         (issue 52 asks for 0.01 at 10⁶ PBM sessions, η = 1). The production ranker shows each query one way, \
         so within a query a position always holds the same document: a learner of position bias separates the \
         two only across queries, which OHSUMED's 63 training queries a fold make hard. The peers on this protocol (LightGBM, XGBoost) are in BENCHMARKS.md \
         (`benches/debias-clicks.sh`).\n\n",
        PRODUCTION_SHARE * 100.0
    ));
    let mut rows = Vec::new();
    let dir = ctx.out.join("clicks-trees");
    std::fs::create_dir_all(&dir)?;
    for (t, task) in tasks.iter().enumerate() {
        let conv = task.conv;
        let keys: Vec<usize> = (0..fold_keys.len())
            .filter(|&k| fold_keys[k].0 == t)
            .collect();
        let mut bound = |label: &str, pick: fn(&FoldStart) -> &FoldResult| {
            let per_fold: Vec<&FoldResult> = keys.iter().map(|&k| pick(&starts[k])).collect();
            for (&k, r) in keys.iter().zip(&per_fold) {
                rows.push(row(
                    task,
                    tasks[t].folds[fold_keys[k].1],
                    "",
                    0,
                    label,
                    r,
                    None,
                ));
            }
            mean(&pooled(&per_fold))
        };
        let judged = bound("judged", |s| &s.judged);
        let shown = bound("shown", |s| &s.shown);
        let production = bound("production", |s| &s.production);
        let n_prod = keys.last().map_or(0, |&k| starts[k].n_prod);
        let test_queries: usize = task.folds.iter().map(|f| f.test.n_queries()).sum();
        md.push_str(&format!(
            "## {} ({} fold{}, {} convention; {} test queries)\n\n`lambdamart` on the judgments: NDCG@10 \
             **{}**; on the shown top {TOP}'s judgments: {}; the production ranker ({n_prod} training \
             quer{} in the last fold): {}.\n\n",
            task.name,
            task.folds.len(),
            if task.folds.len() == 1 { "" } else { "s" },
            conv.name,
            test_queries,
            f4(judged),
            f4(shown),
            if n_prod == 1 { "y" } else { "ies" },
            f4(production),
        ));
        let mut table = Vec::new();
        for &u in &users {
            let user = &USERS[u];
            let methods = methods(user);
            let mut curves: Vec<Series> = methods
                .iter()
                .map(|m| Series {
                    label: m.0.to_string(),
                    points: Vec::new(),
                })
                .collect();
            for (bi, &n) in budgets.iter().enumerate() {
                let per_fold: Vec<&BudgetCells> = keys
                    .iter()
                    .map(|&k| {
                        let at = units
                            .iter()
                            .position(|&x| x == (k, u))
                            .expect("every unit ran");
                        &per_unit[at][bi]
                    })
                    .collect();
                for (&k, cells) in keys.iter().zip(&per_fold) {
                    let fold = tasks[t].folds[fold_keys[k].1];
                    for ((label, _), r) in methods.iter().zip(&cells.1) {
                        rows.push(row(task, fold, user.name, n, label, r, Some(cells.0)));
                    }
                }
                let distinct =
                    per_fold.iter().map(|c| c.0 as f64).sum::<f64>() / per_fold.len() as f64;
                let by_method: Vec<Vec<f64>> = (0..methods.len())
                    .map(|m| pooled(&per_fold.iter().map(|c| &c.1[m]).collect::<Vec<_>>()))
                    .collect();
                let naive = &by_method[0];
                let mut line = vec![
                    user.name.to_string(),
                    n.to_string(),
                    format!("{distinct:.0}"),
                ];
                for (m, values) in by_method.iter().enumerate() {
                    curves[m].points.push(((n as f64).log10(), mean(values)));
                    line.push(if m == 0 {
                        f4(mean(values))
                    } else {
                        let p = paired_t_test(values, naive, Alternative::Greater).p_value;
                        format!("{} (p {})", f4(mean(values)), p_text(p))
                    });
                }
                for _ in methods.len()..METHODS.len() {
                    line.push("—".into());
                }
                let best = by_method.iter().map(|v| mean(v)).fold(f64::MIN, f64::max);
                line.push(format!("{:+.4}", best - judged));
                table.push(line);
            }
            let (lo, hi) = (
                budgets.first().map_or(4.0, |&b| (b as f64).log10()),
                budgets.last().map_or(6.0, |&b| (b as f64).log10()),
            );
            for (label, v) in [
                ("judged", judged),
                ("shown top 10, judged", shown),
                ("production", production),
            ] {
                curves.push(Series {
                    label: label.into(),
                    points: vec![(lo, v), (hi, v)],
                });
            }
            let file = svg_name(task, user.name);
            line_chart(
                &dir.join(&file),
                &format!(
                    "{}, {} user: test NDCG@10 against sessions",
                    task.name, user.name
                ),
                "log10(sessions)",
                "NDCG@10",
                &curves,
            )?;
        }
        let mut header = vec!["user", "sessions", "distinct sessions"];
        header.extend(METHODS.iter().map(|m| m.0));
        header.push("best − judged");
        md.push_str(&md_table(&header, &table));
        md.push('\n');
        for &u in &users {
            let name = USERS[u].name;
            let file = svg_name(task, name);
            md.push_str(&format!("![{name}]({file})\n\n"));
        }
    }
    super::write_report(ctx, "clicks-trees", &md, &rows)
}

/// A p-value as the tables print it: three decimals, or two significant digits below 0.001.
fn p_text(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// The file of one benchmark's and user's curves.
fn svg_name(task: &Task<'_>, user: &str) -> String {
    format!(
        "{}_{}.svg",
        task.name.to_lowercase(),
        user.replace([' ', '='], "")
            .replace('η', "eta")
            .to_lowercase()
    )
}

/// One row of `cells.csv`.
fn row(
    task: &Task<'_>,
    fold: &Fold,
    user: &str,
    sessions: u64,
    method: &str,
    r: &FoldResult,
    distinct: Option<usize>,
) -> BTreeMap<String, serde_json::Value> {
    BTreeMap::from([
        ("experiment".to_string(), json!("clicks-trees")),
        ("dataset".to_string(), json!(task.name)),
        ("fold".to_string(), json!(fold.number)),
        ("user".to_string(), json!(user)),
        ("sessions".to_string(), json!(sessions)),
        ("method".to_string(), json!(method)),
        ("NDCG@10".to_string(), json!(mean(&r.per_query["NDCG@10"]))),
        ("distinct sessions".to_string(), json!(distinct)),
        ("train_s".to_string(), json!(r.seconds)),
    ])
}
