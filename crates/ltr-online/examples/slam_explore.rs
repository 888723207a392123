//! SLAM on a LETOR file: average cumulative NDCG@10 of the stream, and training/test NDCG@10 of the final weights,
//! under the paper's settings, single-setting variants, the mean-violator extension and online ListNet
//! (`cargo run --release -p ltr-online --example slam_explore -- TRAIN TEST`).
use ltr_online::*;

fn ndcg_of(ds: &ltr_data::Dataset, w: &[f64]) -> f64 {
    mean_measure(ds, w, Rml::Ndcg(10), PredictTies::InputOrder)
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let train = ltr_data::read_letor(&a[1]).expect("training file");
    let test = ltr_data::read_letor(&a[2]).expect("test file");
    let d = train.n_features();
    for passes in [1, 5, 20] {
        let cfg = StreamConfig {
            passes,
            ..Default::default()
        };
        let paper = SlamPerceptron::ndcg(d);
        let mut variants: Vec<(&str, Box<dyn OnlineRanker>)> = vec![
            ("paper (scaled Δ, 1/√t)", Box::new(paper.clone())),
            (
                "constant Δ",
                Box::new(SlamPerceptron {
                    margin: Margin::Constant(1.0),
                    ..paper.clone()
                }),
            ),
            (
                "v^NDCG@10",
                Box::new(SlamPerceptron {
                    surrogate: Measure::NdcgAt(10),
                    ..paper.clone()
                }),
            ),
            (
                "constant η",
                Box::new(SlamPerceptron {
                    eta: Eta::Constant(1.0),
                    ..paper.clone()
                }),
            ),
            ("AP", Box::new(SlamPerceptron::ap(d))),
            (
                "mean violators",
                Box::new(SlamPerceptron {
                    violators: Violators::Mean,
                    ..paper.clone()
                }),
            ),
            ("online ListNet", Box::new(OnlineListNet::new(d))),
        ];
        for (name, l) in variants.iter_mut() {
            let r = replay(l.as_mut(), &[&train], &cfg);
            let w = l.weights();
            println!(
                "passes {passes:2} {name:24} avg-cum {:.4} train {:.4} test {:.4}",
                r.average_cumulative.last().copied().unwrap_or(f64::NAN),
                ndcg_of(&train, w),
                ndcg_of(&test, w),
            );
        }
    }
}
