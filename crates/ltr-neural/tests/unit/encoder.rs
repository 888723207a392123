use ltr_neural::encoder::{backward, forward, zeros_like, Transposes, UNPACKED_FROM};
use ltr_neural::NeuralParams;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Every parameter's bits of an encoder (its gradient), in the optimiser's order.
fn bits(e: &mut ltr_core::neural::Encoder) -> Vec<u32> {
    ltr_neural::encoder::parameters_mut(e)
        .concat()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

/// The encoder's backward pass without the transposes a step of long queries does not keep (`dx` from `W`
/// itself) gives the bits of the packed transposes, through dropout, for queries either side of the length from
/// which attention weights are recomputed and of [`UNPACKED_FROM`].
#[test]
fn the_encoder_backward_without_transposes_has_their_bits() {
    let net = NeuralParams::default()
        .sizes(vec![16])
        .blocks(2)
        .heads(2)
        .d_ff(24)
        .init(5, 7);
    let e = net.encoder.as_ref().expect("an encoder");
    let w = e.width();
    for rows in [1, 3, 40, UNPACKED_FROM + 6, 130] {
        let x: Vec<f32> = (0..rows * w)
            .map(|i| ((i * 7919 % 1000) as f32 / 500.0) - 1.0)
            .collect();
        // The output's gradient, a fifth of it exact zeros.
        let dz: Vec<f32> = (0..rows * w)
            .map(|i| {
                if i % 5 == 0 {
                    0.0
                } else {
                    ((i * 104_729 % 2000) as f32 / 1000.0 - 1.0) * 0.1
                }
            })
            .collect();
        let mut rng = ChaCha8Rng::seed_from_u64(rows as u64);
        let mut out = x.clone();
        let trace = forward(e, &mut out, rows, Some((0.3, &mut rng)));
        let run = |long: bool| {
            let mut g = zeros_like(e);
            let dx = backward(e, &Transposes::new(e, long), &trace, &dz, &mut g);
            (
                dx.iter().map(|v| v.to_bits()).collect::<Vec<u32>>(),
                bits(&mut g),
            )
        };
        let (packed, unpacked) = (run(false), run(true));
        assert!(
            packed.1.iter().any(|&b| b != 0),
            "{rows} rows: some gradient"
        );
        assert_eq!(packed, unpacked, "{rows} rows");
    }
}
