//! SLAM on a LETOR file: training/test NDCG@10 of the final weights under the paper's settings and variants
//! (`cargo run --release -p ltr-online --example slam_explore -- TRAIN TEST`).
use ltr_online::*;
fn ndcg_of(ds: &ltr_data::Dataset, w: &[f64]) -> f64 {
    ds.queries()
        .map(|q| {
            let mut s = vec![0.0; q.len()];
            q.scores_into(w, &mut s);
            1.0 - rml(&s, q.labels(), Rml::Ndcg(10), PredictTies::InputOrder)
        })
        .sum::<f64>()
        / ds.n_queries() as f64
}
/// Hypothesis check: the same update with each relevant document's push-down mass spread over *all* its violators
/// (hinge-weighted) instead of the single worst one.
struct SpreadSlam {
    w: Vec<f64>,
}
impl OnlineRanker for SpreadSlam {
    fn weights(&self) -> &[f64] {
        &self.w
    }
    fn update(&mut self, t: usize, q: &ltr_data::QueryView<'_>, s: &[f64]) {
        let r = q.labels();
        if rml(s, r, Rml::Ndcg(10), PredictTies::ReverseInput) <= 0.0 {
            return;
        }
        let v = weights(r, Measure::Ndcg, true);
        let mut g = vec![0.0; s.len()];
        for i in 0..s.len() {
            if v[i] == 0.0 {
                continue;
            }
            let h: Vec<(usize, f64)> = (0..s.len())
                .filter(|&j| r[j] < r[i])
                .map(|j| (j, (r[i] - r[j]) as f64 + s[j] - s[i]))
                .filter(|&(_, x)| x > 0.0)
                .collect();
            let lower = (0..s.len()).filter(|&j| r[j] < r[i]).count() as f64;
            for (j, _) in &h {
                g[i] -= v[i] / lower;
                g[*j] += v[i] / lower;
            }
        }
        let eta = 1.0 / (t as f64).sqrt();
        for (i, gi) in g.iter().enumerate() {
            if *gi != 0.0 {
                q.row(i).axpy(-eta * gi, &mut self.w);
            }
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let train = ltr_data::read_letor(&a[1]).unwrap();
    let test = ltr_data::read_letor(&a[2]).unwrap();
    let d = train.n_features();
    for passes in [1, 5, 20] {
        let cfg = StreamConfig {
            passes,
            ..Default::default()
        };
        let mut variants: Vec<(&str, SlamPerceptron)> = vec![
            ("paper (scaled Δ, 1/√t)", SlamPerceptron::ndcg(d)),
            (
                "constant Δ",
                SlamPerceptron {
                    margin: Margin::Constant(1.0),
                    ..SlamPerceptron::ndcg(d)
                },
            ),
            (
                "v^NDCG@10",
                SlamPerceptron {
                    surrogate: Measure::NdcgAt(10),
                    ..SlamPerceptron::ndcg(d)
                },
            ),
            (
                "constant η",
                SlamPerceptron {
                    eta: Eta::Constant(1.0),
                    ..SlamPerceptron::ndcg(d)
                },
            ),
            ("AP", SlamPerceptron::ap(d)),
        ];
        for (name, l) in variants.iter_mut() {
            let r = replay(l, &[&train], &cfg);
            println!(
                "passes {passes:2} {name:24} avg-cum {:.4} train {:.4} test {:.4} |w| {:.3} updates {}",
                r.average_cumulative.last().unwrap(),
                ndcg_of(&train, &l.w),
                ndcg_of(&test, &l.w),
                l.w.iter().map(|x| x * x).sum::<f64>().sqrt(),
                l.updates
            );
        }
        let mut sp = SpreadSlam { w: vec![0.0; d] };
        let r = replay(&mut sp, &[&train], &cfg);
        println!(
            "passes {passes:2} {:24} avg-cum {:.4} train {:.4} test {:.4}",
            "spread violators",
            r.average_cumulative.last().unwrap(),
            ndcg_of(&train, &sp.w),
            ndcg_of(&test, &sp.w)
        );
        let mut ln = OnlineListNet::new(d);
        let r = replay(&mut ln, &[&train], &cfg);
        println!(
            "passes {passes:2} {:24} avg-cum {:.4} train {:.4} test {:.4}",
            "ListNet",
            r.average_cumulative.last().unwrap(),
            ndcg_of(&train, &ln.w),
            ndcg_of(&test, &ln.w)
        );
    }
}
