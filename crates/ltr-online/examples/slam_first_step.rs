//! Why SLAM's first step needs ties shared: compare directions at w = 0 (`cargo run --release -p ltr-online --example slam_first_step -- FILE`).
use ltr_online::*;
fn ndcg_of(ds: &ltr_data::Dataset, w: &[f64]) -> f64 {
    mean_measure(ds, w, Rml::Ndcg(10), PredictTies::InputOrder)
}
fn main() {
    let ds = ltr_data::read_letor(std::env::args().nth(1).unwrap()).unwrap();
    let d = ds.n_features();
    let (mut first, mut last, mut mean) = (vec![0.0; d], vec![0.0; d], vec![0.0; d]);
    for q in ds.queries() {
        let v = weights(q.labels(), Measure::Ndcg, true);
        let vs: f64 = v.iter().sum();
        let irr: Vec<usize> = (0..q.len()).filter(|&i| q.labels()[i] == 0.0).collect();
        if irr.is_empty() {
            continue;
        }
        for (i, vi) in v.iter().enumerate() {
            for w in [&mut first, &mut last, &mut mean] {
                q.row(i).axpy(*vi, w);
            }
        }
        q.row(irr[0]).axpy(-vs, &mut first);
        q.row(*irr.last().unwrap()).axpy(-vs, &mut last);
        for &j in &irr {
            q.row(j).axpy(-vs / irr.len() as f64, &mut mean);
        }
    }
    println!("w=0 (input order) {:.4}", ndcg_of(&ds, &vec![0.0; d]));
    println!("minus first irrelevant {:.4}", ndcg_of(&ds, &first));
    println!("minus last irrelevant {:.4}", ndcg_of(&ds, &last));
    println!("minus mean irrelevant {:.4}", ndcg_of(&ds, &mean));
}
