//! The LETOR baselines: our RankSVM, RankBoost, ListNet, committee perceptron and tree ensembles (LambdaMART, MART,
//! random forest at their defaults) under the official LETOR protocol (validation model selection, LETOR script
//! conventions), next to the published LETOR baseline tables.

use std::path::PathBuf;

use anyhow::Result;
use serde_json::json;

use super::committee::method_cells;
use super::{f4, md_table, pooled, write_report, Ctx};

const METHODS: [&str; 8] = [
    "RankSVM",
    "RankBoost",
    "ListNet",
    "Com30-A",
    "Average",
    "LambdaMART",
    "MART",
    "RandomForest",
];

/// Published LETOR baselines (metrics-and-numbers.md §2; RECALLED there — verify before relying on them):
/// NDCG@1, @3, @5, @10, MAP.
fn published(bench: &str, method: &str) -> Option<[f64; 5]> {
    match (bench, method) {
        ("OHSUMED", "RankSVM") => Some([0.4958, 0.4207, 0.4164, 0.4140, 0.4334]),
        ("OHSUMED", "RankBoost") => Some([0.4632, 0.4555, 0.4494, 0.4302, 0.4411]),
        ("OHSUMED", "ListNet") => Some([0.5326, 0.4732, 0.4432, 0.4410, 0.4457]),
        ("MQ2008", "RankSVM") => Some([0.3627, 0.4286, 0.4695, 0.2279, 0.4696]),
        ("MQ2008", "RankBoost") => Some([0.3856, 0.4288, 0.4666, 0.2255, 0.4775]),
        ("MQ2008", "ListNet") => Some([0.3754, 0.4324, 0.4747, 0.2303, 0.4775]),
        _ => None,
    }
}

/// Run the experiment.
pub fn run(ctx: &Ctx) -> Result<PathBuf> {
    let mut md = String::from("# LETOR baselines\n\nOur implementations under the LETOR protocol: 5 folds, model selection on validation (RankSVM: C by MAP; RankBoost, ListNet and perceptrons: rounds/epochs by NDCG@10; LambdaMART and MART: trees by NDCG@10, stopping 100 rounds after the best; random forest: 100 trees, nothing selected), evaluated with the LETOR 3.0 (OHSUMED) and 4.0 (MQ2008) script conventions. In brackets: the published LETOR baseline (metrics-and-numbers.md §2 marks these as recalled — verify before citing).\n\n");
    let mut rows = Vec::new();
    for (bench, by_method) in ctx.benches.iter().zip(method_cells(ctx, &METHODS)?) {
        let mut table = Vec::new();
        for (m, res) in METHODS.into_iter().zip(by_method) {
            let mut row = vec![m.to_string()];
            let pubd = published(&bench.name, m);
            for (k, metric) in ["NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP"]
                .iter()
                .enumerate()
            {
                let (v, _) = pooled(&res, metric);
                row.push(match pubd {
                    Some(p) => format!("{} [{:.4}]", f4(v), p[k]),
                    None => f4(v),
                });
                rows.push(std::collections::BTreeMap::from([
                    ("experiment".to_string(), json!("letor-baselines")),
                    ("dataset".to_string(), json!(bench.name)),
                    ("method".to_string(), json!(m)),
                    ("metric".to_string(), json!(metric)),
                    ("value".to_string(), json!(v)),
                ]));
            }
            row.push(format!("{:.1}", res.iter().map(|r| r.seconds).sum::<f64>()));
            table.push(row);
        }
        md.push_str(&format!(
            "## {} ({})\n\n{}\n",
            bench.name,
            bench.convention.name,
            md_table(
                &[
                    "method",
                    "NDCG@1",
                    "NDCG@3",
                    "NDCG@5",
                    "NDCG@10",
                    "MAP",
                    "train s (sum over folds)"
                ],
                &table
            )
        ));
    }
    write_report(ctx, "letor-baselines", &md, &rows)
}
