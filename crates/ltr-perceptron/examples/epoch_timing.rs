//! Time perceptron epochs on a LETOR file: `cargo run --release -p ltr-perceptron --example epoch_timing -- FILE`.
use ltr_perceptron::*;
struct Nop;
impl Observer for Nop {
    fn retire(&mut self, _: usize, _: &[f64], _: u64) {}
}
fn main() {
    let f = std::env::args().nth(1).expect("file");
    let ds = ltr_data::read_letor(&f).unwrap();
    for (name, order) in [
        ("file", PairOrder::File),
        ("shuffled", PairOrder::Shuffled(1)),
    ] {
        for obs in ["none", "committee20"] {
            let mut lp = PerceptronLoop::new(
                &ds,
                LoopSettings {
                    order,
                    alpha_bound: AlphaBound::PerEpoch(0.85),
                    ..Default::default()
                },
                50,
            );
            let mut rec = Recorder {
                committee: Some(Committee::new(20)),
                ..Default::default()
            };
            let t = std::time::Instant::now();
            let mut mistakes = 0;
            for _ in 0..50 {
                let s = if obs == "none" {
                    lp.epoch(&mut Nop)
                } else {
                    lp.epoch(&mut rec)
                };
                mistakes += s.mistakes;
            }
            println!(
                "{name:9} {obs:12} 50 epochs {:.3}s, {} pairs, {mistakes} mistakes",
                t.elapsed().as_secs_f64(),
                lp.n_pairs()
            );
        }
    }
}
