use ltr_core::neural::Dense;
use ltr_neural::dense::{dense_dx, dense_dx_unpacked, transposed};

/// A `inputs × outputs` layer of deterministic weights in [-1, 1), some of them exact zeros.
fn layer(inputs: usize, outputs: usize) -> Dense {
    let mut d = Dense::zeros(inputs, outputs);
    for (i, w) in d.weights.iter_mut().enumerate() {
        *w = if i % 13 == 0 {
            0.0
        } else {
            ((i * 7919 % 1000) as f32 / 500.0) - 1.0
        };
    }
    d
}

/// `rows × outputs` gradients; with `sparse`, about seven in ten exact zeros (a third of them −0), as ReLU and
/// dropout leave them.
fn gradients(rows: usize, outputs: usize, sparse: bool) -> Vec<f32> {
    (0..rows * outputs)
        .map(|i| match i * 31 % 10 {
            0..=6 if sparse => {
                if i % 3 == 0 {
                    -0.0
                } else {
                    0.0
                }
            }
            _ => ((i * 104_729 % 2000) as f32 / 1000.0 - 1.0) * 1e-3,
        })
        .collect()
}

#[test]
fn dx_from_w_itself_has_the_bits_of_the_packed_transpose() {
    // The encoder's shapes (width 128, d_ff 512) and odd ones; one-row queries take the dot-product path.
    for (inputs, outputs) in [
        (128, 128),
        (512, 128),
        (128, 512),
        (136, 128),
        (7, 3),
        (128, 1),
        (1, 5),
    ] {
        let l = layer(inputs, outputs);
        let wt = transposed(&l);
        for rows in [1, 2, 17, 64, 65, 100, 150, 240] {
            for sparse in [false, true] {
                let dy = gradients(rows, outputs, sparse);
                let packed: Vec<u32> = dense_dx(&dy, &wt, &l).iter().map(|v| v.to_bits()).collect();
                let unpacked: Vec<u32> = dense_dx_unpacked(&dy, &l)
                    .iter()
                    .map(|v| v.to_bits())
                    .collect();
                assert_eq!(
                    packed, unpacked,
                    "{inputs} inputs, {outputs} outputs, {rows} rows, sparse {sparse}"
                );
            }
        }
    }
}
