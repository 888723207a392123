//! Explore perceptron settings on a LETOR dataset: `cargo run --release -p ltr-perceptron --example explore -- DIR CONV`.
use ltr_core::{FitContext, LtrError, Scorer};
use ltr_data::load_letor_folds;
use ltr_metrics::{evaluate_mean, Convention, Metric};
use ltr_perceptron::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(&args[1]);
    let conv: Convention = args[2].parse().unwrap();
    let data = load_letor_folds(&dir).unwrap();
    let alphas = [("epoch", AlphaBound::PerEpoch(0.85))];
    let orders = [
        ("shuf1", PairOrder::Shuffled(1)),
        ("shuf2", PairOrder::Shuffled(2)),
    ];
    let outs = [
        ("pocket", Output::Pocket),
        ("average", Output::Average),
        ("com20", Output::committee(20)),
        ("com30", Output::committee(30)),
    ];
    for (an, a) in alphas {
        for (on, o) in orders {
            for (un, u) in outs {
                let t = std::time::Instant::now();
                let mut map = 0.0;
                let mut ep = vec![];
                for f in &data {
                    let (tr, va, te) = (&f.train, &f.vali, &f.test);
                    let p =
                        PerceptronParams::default()
                            .epochs(50)
                            .output(u)
                            .settings(LoopSettings {
                                alpha_bound: a,
                                order: o,
                                ..Default::default()
                            });
                    let measure = |d: &ltr_data::Dataset, s: &[f64]| {
                        evaluate_mean(d, s, Metric::Ndcg(Some(10)), &conv)
                            .map_err(LtrError::measure)
                    };
                    let ctx = FitContext::new(1).with_validation(va, &measure);
                    let fit = p.run(tr, &ctx, None).unwrap();
                    ep.push(fit.epochs_used);
                    map += evaluate_mean(te, &fit.model.score_dataset(te), Metric::Ap(None), &conv)
                        .unwrap()
                        / data.len() as f64;
                }
                println!(
                    "alpha={an:8} order={on:5} out={un:8} MAP={map:.4} epochs={ep:?} {:.1}s",
                    t.elapsed().as_secs_f64()
                );
            }
        }
    }
}
