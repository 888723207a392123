//! Seed 001 (Qin et al., SIGIR 2007): RankSVM vs MHR-BC vs MHR-WBC, hyperplane cosines (Table 5), order error
//! rates (Table 6) and training times (Table 7).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use ltr_core::Model;
use ltr_metrics::Metric;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{f4, md_table, pooled, test_result, train_fold, write_report, Ctx, FoldResult};

#[derive(Serialize, Deserialize)]
struct MhrCell {
    rsvm: FoldResult,
    bc: FoldResult,
    wbc: FoldResult,
    diagnostics: serde_json::Value,
}

/// Run the experiment.
pub fn run(ctx: &Ctx) -> Result<PathBuf> {
    let mut md =
        String::from("# Multiple Hyperplane Ranker (Qin et al., SIGIR 2007 — seed 001)\n\n");
    md.push_str("Protocol: every base ranker and the single RankSVM use SVMlight's default C (1/mean‖x‖²) as in the paper, our Newton solver; MHR-BC = BordaCount, MHR-WBC = weights tuned on the training set by a 0.05 simplex grid maximising NDCG@10. Metrics under the benchmark's LETOR convention. The paper used its own 4-fold OHSUMED extraction (30 features, MAP with only 'definitely relevant'); we use the LETOR 3.0 folds, so compare the direction and size of the relative changes.\n\n");
    let mut rows = Vec::new();
    for bench in ctx.benches.iter() {
        let conv = bench.convention;
        let mut cells = Vec::new();
        for fold in &bench.folds {
            let cell: MhrCell =
                // The same cell in the slice (one fold, no setting to shrink).
                ctx.cells
                    .get_shared(&format!("{}-f{}-mhr", bench.name, fold.number), || {
                        // Every ranker by name, SVMlight's C; the weights of MHR-WBC tuned on the
                        // training set by NDCG@10 (no validation data, as in the paper).
                        let ndcg10 = Metric::Ndcg(Some(10));
                        let t0 = Instant::now();
                        let rsvm = train_fold(
                            "ranksvm",
                            &["c=default"],
                            &fold.train,
                            None,
                            ndcg10,
                            &conv,
                        )?;
                        let rsvm_r = test_result(
                            &rsvm.model,
                            &fold.test,
                            &conv,
                            t0.elapsed().as_secs_f64(),
                            BTreeMap::new(),
                        )?;
                        let t0 = Instant::now();
                        let bc = train_fold("mhr", &[], &fold.train, None, ndcg10, &conv)?;
                        let bc_r = test_result(
                            &bc.model,
                            &fold.test,
                            &conv,
                            t0.elapsed().as_secs_f64(),
                            BTreeMap::new(),
                        )?;
                        let t0 = Instant::now();
                        let wbc = train_fold(
                            "mhr",
                            &["aggregate=wborda", "diagnostics=false"],
                            &fold.train,
                            None,
                            ndcg10,
                            &conv,
                        )?;
                        let mut notes = BTreeMap::new();
                        if let Model::Aggregate(a) = &wbc.model {
                            notes.insert("weights".into(), format!("{:?}", a.weights));
                        }
                        let wbc_r = test_result(
                            &wbc.model,
                            &fold.test,
                            &conv,
                            t0.elapsed().as_secs_f64(),
                            notes,
                        )?;
                        Ok(MhrCell {
                            rsvm: rsvm_r,
                            bc: bc_r,
                            wbc: wbc_r,
                            diagnostics: serde_json::from_str(&bc.diagnostics_json)
                                .unwrap_or_default(),
                        })
                    })?;
            for (m, r) in [
                ("RSVM", &cell.rsvm),
                ("MHR-BC", &cell.bc),
                ("MHR-WBC", &cell.wbc),
            ] {
                rows.push(BTreeMap::from([
                    ("experiment".to_string(), json!("mhr")),
                    ("dataset".to_string(), json!(bench.name)),
                    ("fold".to_string(), json!(fold.number)),
                    ("method".to_string(), json!(m)),
                    (
                        "NDCG@1".to_string(),
                        json!(super::mean(&r.per_query["NDCG@1"])),
                    ),
                    (
                        "NDCG@10".to_string(),
                        json!(super::mean(&r.per_query["NDCG@10"])),
                    ),
                    ("MAP".to_string(), json!(super::mean(&r.per_query["MAP"]))),
                ]));
            }
            cells.push((fold.number, cell));
        }
        let col = |f: &dyn Fn(&MhrCell) -> &FoldResult| -> Vec<FoldResult> {
            cells.iter().map(|(_, c)| f(c).clone()).collect()
        };
        let (rs, bc, wbc) = (col(&|c| &c.rsvm), col(&|c| &c.bc), col(&|c| &c.wbc));
        let paper: [(&str, [&str; 3]); 2] = [
            ("MHR-BC", ["+6.78%", "+0.92%", "+0.34%"]),
            ("MHR-WBC", ["+11.96%", "+1.06%", "+1.60%"]),
        ];
        let mut table = Vec::new();
        for (name, res) in [("RSVM", &rs), ("MHR-BC", &bc), ("MHR-WBC", &wbc)] {
            let mut row = vec![name.to_string()];
            for (k, metric) in ["NDCG@1", "NDCG@10", "MAP"].iter().enumerate() {
                let (v, _) = pooled(res, metric);
                let (base, _) = pooled(&rs, metric);
                let rel = if name == "RSVM" {
                    String::new()
                } else {
                    format!(" ({:+.2}%)", 100.0 * (v - base) / base)
                };
                let p = if bench.name == "OHSUMED" {
                    paper
                        .iter()
                        .find(|x| x.0 == name)
                        .map_or(String::new(), |x| format!(" [paper {}]", x.1[k]))
                } else {
                    String::new()
                };
                row.push(format!("{}{rel}{p}", f4(v)));
            }
            table.push(row);
        }
        md.push_str(&format!(
            "## {} ({}), fold means on test\n\n{}\n",
            bench.name,
            conv.name,
            md_table(&["method", "NDCG@1", "NDCG@10", "MAP"], &table)
        ));
        // Tables 5–7 from the diagnostics.
        let mut t5 = Vec::new();
        let mut t6 = Vec::new();
        let mut t7 = Vec::new();
        for (n, c) in &cells {
            let d = &c.diagnostics;
            let gp: Vec<String> = d["grade_pairs"].as_array().map_or(vec![], |a| {
                a.iter().map(|p| format!("({},{})", p[0], p[1])).collect()
            });
            let cw: Vec<String> = d["cosine_with_ranksvm"].as_array().map_or(vec![], |a| {
                a.iter()
                    .map(|x| format!("{:.2}", x.as_f64().unwrap_or(f64::NAN)))
                    .collect()
            });
            let cc: Vec<String> = d["cosines"].as_array().map_or(vec![], |a| {
                a.iter()
                    .map(|x| format!("{:.2}", x[2].as_f64().unwrap_or(f64::NAN)))
                    .collect()
            });
            t5.push(vec![
                n.to_string(),
                gp.join(" "),
                cw.join(", "),
                cc.join(", "),
            ]);
            let oe: Vec<String> = d["order_error"].as_array().map_or(vec![], |a| {
                a.iter()
                    .map(|x| {
                        format!(
                            "({},{}) MHR {:.4} / RSVM {:.4}",
                            x[0][0],
                            x[0][1],
                            x[1].as_f64().unwrap_or(f64::NAN),
                            x[2].as_f64().unwrap_or(f64::NAN)
                        )
                    })
                    .collect()
            });
            t6.push(vec![n.to_string(), oe.join("; ")]);
            let secs: Vec<f64> = d["seconds"]
                .as_array()
                .map_or(vec![], |a| a.iter().filter_map(|x| x.as_f64()).collect());
            t7.push(vec![
                n.to_string(),
                secs.iter()
                    .map(|s| format!("{s:.3}"))
                    .collect::<Vec<_>>()
                    .join(" / "),
                format!("{:.3}", secs.iter().sum::<f64>()),
                format!("{:.3}", d["ranksvm_seconds"].as_f64().unwrap_or(f64::NAN)),
            ]);
        }
        md.push_str(&format!(
            "### Table 5: cosine similarity ({})\n\n{}\n",
            bench.name,
            md_table(
                &[
                    "fold",
                    "base rankers",
                    "cos(w, w_k) with the single RankSVM",
                    "cos between base rankers (pairs in order)"
                ],
                &t5
            )
        ));
        md.push_str(&format!("### Table 6: order error rate on the training set ({})\n\n{}\nThe paper (OHSUMED, 4-trial mean): RSVM 0.3924 / 0.3095 / 0.3944 vs MHR 0.3621 / 0.3052 / 0.3856 for (1,2), (1,3), (2,3).\n\n", bench.name, md_table(&["fold", "per grade pair"], &t6)));
        md.push_str(&format!("### Table 7: training seconds ({})\n\n{}\nThe paper (SVMlight, OHSUMED): base rankers 17 / 90 / 175 min, MHR 282 min, RSVM 823 min per trial.\n\n", bench.name, md_table(&["fold", "base rankers (s)", "MHR total (s)", "RSVM (s)"], &t7)));
    }
    write_report(ctx, "mhr", &md, &rows)
}
