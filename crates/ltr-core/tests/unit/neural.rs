use ltr_core::neural::kernels;
use ltr_core::neural::*;

fn net() -> NeuralNet {
    let mut h = Dense::zeros(3, 4);
    for (k, w) in h.weights.iter_mut().enumerate() {
        *w = (k as f32 * 0.37).sin();
    }
    h.bias = vec![0.1, -0.2, 0.0, 0.3];
    let mut o = Dense::zeros(4, 1);
    o.weights = vec![1.0, -0.5, 0.25, 2.0];
    o.bias = vec![0.05];
    NeuralNet {
        n_features: 3,
        input_norm: None,
        hidden: vec![HiddenLayer {
            dense: h,
            norm: Some(LayerNorm::new(4)),
            batch_norm: None,
        }],
        activation: Activation::Relu,
        output: o,
        encoder: None,
    }
}

/// The kernels against a plain f64 evaluation of the same network.
#[test]
fn scores_match_a_direct_evaluation() {
    let n = net();
    assert_eq!(n.inconsistency(), None);
    let x: Vec<f32> = (0..21).map(|k| ((k * 7 % 11) as f32 - 5.0) / 3.0).collect();
    let mut out = vec![0f32; 7];
    n.score_matrix(&x, &mut out);
    for r in 0..7 {
        let h: Vec<f64> = (0..4)
            .map(|j| {
                f64::from(n.hidden[0].dense.bias[j])
                    + (0..3)
                        .map(|k| f64::from(x[r * 3 + k] * n.hidden[0].dense.weights[k * 4 + j]))
                        .sum::<f64>()
            })
            .collect();
        let mean = h.iter().sum::<f64>() / 4.0;
        let var = h.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 4.0;
        let s: f64 = h
            .iter()
            .enumerate()
            .map(|(j, v)| {
                ((v - mean) / (var + LAYER_NORM_EPS).sqrt()).max(0.0)
                    * f64::from(n.output.weights[j])
            })
            .sum::<f64>()
            + 0.05;
        assert!((s - f64::from(out[r])).abs() < 1e-5, "{s} vs {}", out[r]);
    }
}

/// The next draw of a xorshift64 stream at `state`: the new state (whose residues pick zeros and −0 in the tests) and
/// a value in [−1.5, 1.5).
fn xorshift(state: &mut u64) -> (u64, f32) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    let v = (*state >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
    (*state, v * 3.0)
}

/// The bits of each value: bit-for-bit comparisons that tell −0 from +0.
fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// `dW + aᵀ·dy` the plain way the weight gradient must equal: for each of the `rows` rows, a fused row `axpy`
/// (`mul_add`) of each nonzero input, inputs in order.
fn fused_row_axpy(
    a: &[f32],
    dy: &[f32],
    dw0: &[f32],
    rows: usize,
    k_dim: usize,
    o_dim: usize,
) -> Vec<f32> {
    let mut want = dw0.to_vec();
    for (ar, dyr) in a.chunks(k_dim.max(1)).zip(dy.chunks(o_dim)).take(rows) {
        for (k, &v) in ar.iter().enumerate() {
            if v != 0.0 {
                for (w, &d) in want[k * o_dim..(k + 1) * o_dim].iter_mut().zip(dyr) {
                    *w = v.mul_add(d, *w);
                }
            }
        }
    }
    want
}

/// The blocked kernel against the plain loop (each output from its bias, `k` ascending, one `f32::mul_add` a
/// term), bit for bit, on shapes that exercise both panel widths, whole and partial tiles of four rows, partial
/// panels, several `k` blocks, no input at all and the transposed single output; inputs with exact zeros and
/// negative zeros.
#[test]
fn tiled_matmul_is_the_plain_loop_bit_for_bit() {
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        let (state, v) = xorshift(&mut state);
        match state % 7 {
            0 => 0.0,
            1 => -0.0,
            _ => v,
        }
    };
    for (rows, k_dim, o_dim) in [
        (1, 1, 1),
        (7, 5, 1),
        (37, 13, 1),
        (9, 3, 2),
        (13, 17, 32),
        (6, 8, 33),
        (11, 136, 64),
        (5, 70, 100),
        (0, 4, 8),
        (3, 0, 40),
        (20, 300, 70),
        (17, 257, 32),
        (9, 600, 48),
        (130, 45, 256),
        (12, 512, 1),
    ] {
        let x: Vec<f32> = (0..rows * k_dim).map(|_| next()).collect();
        let m: Vec<f32> = (0..k_dim * o_dim).map(|_| next()).collect();
        let b: Vec<f32> = (0..o_dim).map(|_| next()).collect();
        for bias in [Some(&b[..]), None] {
            let mut want = vec![0f32; rows * o_dim];
            for r in 0..rows {
                for j in 0..o_dim {
                    let mut acc = bias.map_or(0.0, |b| b[j]);
                    for k in 0..k_dim {
                        acc = x[r * k_dim + k].mul_add(m[k * o_dim + j], acc);
                    }
                    want[r * o_dim + j] = acc;
                }
            }
            let mut got = vec![f32::NAN; rows * o_dim];
            kernels::matmul_rows(&x, &m, bias, &mut got, k_dim, o_dim);
            assert_eq!(bits(&got), bits(&want), "{rows}x{k_dim}x{o_dim}");
            // Both panel widths (64 and 16), whichever this CPU runs.
            for wide in [false, true] {
                let mut got = vec![f32::NAN; rows * o_dim];
                kernels::matmul_with(
                    &x,
                    &m,
                    bias,
                    &mut got,
                    k_dim,
                    o_dim,
                    rows,
                    wide,
                    kernels::simd_tiles(),
                );
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{rows}x{k_dim}x{o_dim} wide {wide}"
                );
            }
        }
    }
}

/// The weight gradient against a row-at-a-time fused `axpy` (`mul_add`) of each nonzero input, bit for bit, with
/// zeros, negative zeros and an infinite `dy` entry (skipped where its input is zero, as before), on shapes that
/// exercise whole and partial strips of both widths.
#[test]
fn weight_gradient_is_the_fused_row_axpy_bit_for_bit() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        let (state, v) = xorshift(&mut state);
        match state % 5 {
            0 | 1 => 0.0,
            2 => -0.0,
            _ => v,
        }
    };
    for (rows, k_dim, o_dim) in [
        (1, 1, 1),
        (5, 3, 7),
        (17, 13, 64),
        (9, 6, 130),
        (40, 45, 256),
        (3, 20, 300),
        (130, 256, 1),
        (7, 40, 1),
        (0, 4, 8),
        (4, 0, 8),
    ] {
        let a: Vec<f32> = (0..rows * k_dim).map(|_| next()).collect();
        let mut dy: Vec<f32> = (0..rows * o_dim).map(|_| next()).collect();
        if let Some(r) = (0..rows).find(|&r| k_dim > 0 && a[r * k_dim] == 0.0) {
            dy[r * o_dim] = f32::INFINITY;
        }
        let dw0: Vec<f32> = (0..k_dim * o_dim).map(|_| next()).collect();
        let want = fused_row_axpy(&a, &dy, &dw0, rows, k_dim, o_dim);
        let mut got = dw0.clone();
        kernels::weight_gradient(&a, &dy, &mut got, k_dim, o_dim);
        assert_eq!(bits(&got), bits(&want), "{rows}x{k_dim}x{o_dim}");
        for wide in [false, true] {
            let mut got = dw0.clone();
            kernels::weight_gradient_with(
                &a,
                &dy,
                &mut got,
                k_dim,
                o_dim,
                wide,
                kernels::simd_tiles(),
            );
            assert_eq!(
                bits(&got),
                bits(&want),
                "{rows}x{k_dim}x{o_dim} wide {wide}"
            );
        }
    }
}

/// The weight gradient's dense path (at most a quarter of the inputs zero: every term taken as a product) against
/// the fused row `axpy` of each nonzero input, bit for bit, from a `dW` with zeros and −0; and the list path it
/// falls back to with an infinite `dy`, or when an entry ends at +0 (a column of `dy` all zero); tiny products;
/// sparser inputs.
#[test]
fn dense_weight_gradient_is_the_fused_row_axpy_bit_for_bit() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |zeros: bool| {
        let (state, v) = xorshift(&mut state);
        match state % 11 {
            0 if zeros => 0.0,
            1 if zeros => -0.0,
            _ => v,
        }
    };
    for (rows, k_dim, o_dim) in [
        (1, 1, 16),
        (5, 3, 17),
        (17, 13, 32),
        (9, 6, 130),
        (150, 128, 128),
        (231, 512, 128),
        (40, 45, 256),
    ] {
        for case in 0..6 {
            let mut a: Vec<f32> = (0..rows * k_dim).map(|_| next(true)).collect();
            let mut dy: Vec<f32> = (0..rows * o_dim).map(|_| next(false)).collect();
            // Zeros in dW, and a cancellation to an exact zero sum.
            let mut dw0: Vec<f32> = (0..k_dim * o_dim)
                .map(|i| if i % 3 == 0 { 0.0 } else { next(false) })
                .collect();
            match case {
                1 => dy[o_dim / 2] = f32::INFINITY,
                2 => dw0.iter_mut().step_by(5).for_each(|w| *w = -0.0),
                3 => {
                    dy.iter_mut().skip(2).step_by(o_dim).for_each(|d| *d = 0.0);
                    dw0.iter_mut()
                        .skip(2)
                        .step_by(o_dim)
                        .for_each(|w| *w = -0.0);
                }
                // Products below 2⁻¹⁰¹: the path that copies dW first.
                4 => {
                    dy[0] = 1e-20;
                    dw0[0] = 3e-45;
                    a[0] = 1e-25;
                }
                // Three fifths of the inputs zero (ReLU and dropout): still taken as products.
                5 => a
                    .iter_mut()
                    .enumerate()
                    .filter(|(i, _)| i % 5 < 3)
                    .for_each(|(_, v)| *v = 0.0),
                _ => {}
            }
            if a[0] != 0.0 {
                dy[1] = -dw0[1] / a[0];
            }
            let want = fused_row_axpy(&a, &dy, &dw0, rows, k_dim, o_dim);
            for wide in [false, true] {
                let mut got = dw0.clone();
                kernels::weight_gradient_with(
                    &a,
                    &dy,
                    &mut got,
                    k_dim,
                    o_dim,
                    wide,
                    kernels::simd_tiles(),
                );
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{rows}x{k_dim}x{o_dim} case {case} wide {wide}"
                );
            }
        }
    }
}

/// `weight_gradient_known` from a zeroed `dW` (flag true) over several calls: the fused row `axpy`'s bits at every
/// call; no −0 while the flag is true; the flag false after products below 2⁻¹⁰¹ (and for one output, where it
/// is not tracked), until a product's scan of `dW` finds no −0 again.
#[test]
fn weight_gradient_flag_changes_no_bit() {
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move |zeros: bool| {
        let (state, v) = xorshift(&mut state);
        match state % 6 {
            0 if zeros => 0.0,
            1 if zeros => -0.0,
            _ => v,
        }
    };
    for (rows, k_dim, o_dim) in [
        (17, 13, 32),
        (40, 45, 256),
        (9, 6, 130),
        (5, 3, 7),
        (20, 30, 1),
    ] {
        let mut want = vec![0f32; k_dim * o_dim];
        let mut got = want.clone();
        let mut flag = true;
        for call in 0..4 {
            let a: Vec<f32> = (0..rows * k_dim).map(|_| next(true)).collect();
            let mut dy: Vec<f32> = (0..rows * o_dim).map(|_| next(false)).collect();
            if call == 2 {
                dy[0] = 1e-35;
            }
            want = fused_row_axpy(&a, &dy, &want, rows, k_dim, o_dim);
            kernels::weight_gradient_known(&a, &dy, &mut got, k_dim, o_dim, &mut flag);
            let at = format!("{rows}x{k_dim}x{o_dim} call {call}");
            assert_eq!(bits(&got), bits(&want), "{at}");
            if flag {
                assert!(got.iter().all(|v| v.to_bits() != 0x8000_0000), "{at}");
            }
            if call <= 2 {
                assert_eq!(flag, call < 2 && o_dim > 1, "{at}");
            }
        }
    }
}

#[test]
fn inconsistent_networks_are_named() {
    let mut n = net();
    n.output.weights.pop();
    assert!(n.inconsistency().unwrap().contains("output layer"));
    let mut n = net();
    n.hidden[0].dense.bias[0] = f32::NAN;
    assert!(n.inconsistency().unwrap().contains("non-finite"));
}

/// The softmax's `exp` against f64's over its whole range: within 2 ulp where the result is normal, exact at 0, and
/// the edges (underflow to 0, overflow to +∞, NaN) as `expf` has them.
#[test]
fn exp_is_within_two_ulp_of_the_exact_value() {
    let mut worst = 0f64;
    let mut x = -87.0f32;
    while x < 88.7 {
        let exact = f64::from(x).exp();
        let got = f64::from(kernels::exp(x));
        let ulp = f64::from(f32::EPSILON) * 2f64.powi(exact.log2().floor() as i32);
        worst = worst.max((got - exact).abs() / ulp);
        x += 0.000_731;
    }
    assert!(worst <= 2.0, "worst error {worst} ulp");
    assert_eq!(kernels::exp(0.0), 1.0);
    assert_eq!(kernels::exp(-0.0), 1.0);
    assert_eq!(kernels::exp(f32::NEG_INFINITY), 0.0);
    assert_eq!(kernels::exp(-200.0), 0.0);
    assert_eq!(kernels::exp(f32::INFINITY), f32::INFINITY);
    assert_eq!(kernels::exp(89.0), f32::INFINITY);
    assert!(kernels::exp(f32::NAN).is_nan());
    // Subnormal results are rounded once into the subnormal range: within one unit of the last place there.
    for x in [-88.0f32, -95.0, -100.0, -103.0] {
        let (got, exact) = (kernels::exp(x), f64::from(x).exp() as f32);
        assert!(
            got.to_bits().abs_diff(exact.to_bits()) <= 1,
            "{x}: {got:e} vs {exact:e}"
        );
    }
}

/// `score_dataset` packs the hidden layers once and scores blocks of rows across query boundaries: each score must
/// be the bits of scoring its row alone, for block tails, queries that straddle blocks and a set smaller than a block.
#[test]
fn dataset_scores_are_each_row_scored_alone_bit_for_bit() {
    use ltr_core::Scorer;
    use ltr_data::{generate_letor_like, SyntheticConfig};
    let mut state = 0x5c0e_0000_0136_0256u64;
    let mut dense = |i: usize, o: usize| {
        let mut d = Dense::zeros(i, o);
        let scale = (2.0 / i as f32).sqrt();
        d.weights = (0..i * o).map(|_| xorshift(&mut state).1 * scale).collect();
        d.bias = (0..o).map(|_| xorshift(&mut state).1 * 0.1).collect();
        d
    };
    let layer = |dense| HiddenLayer {
        dense,
        norm: None,
        batch_norm: None,
    };
    let net = NeuralNet {
        n_features: 136,
        input_norm: None,
        hidden: vec![layer(dense(136, 256)), layer(dense(256, 128))],
        activation: Activation::Relu,
        output: dense(128, 1),
        encoder: None,
    };
    assert_eq!(net.inconsistency(), None);
    for (queries, seed) in [(1, 3), (7, 4), (11, 5)] {
        let ds = generate_letor_like(&SyntheticConfig {
            queries,
            min_docs: 1,
            max_docs: 90,
            features: 136,
            seed,
            ..Default::default()
        })
        .unwrap();
        let got = net.score_dataset(&ds);
        assert_eq!(got.len(), ds.n_docs());
        let mut x = vec![0f32; 136];
        let mut alone = [0f32];
        for (i, g) in got.iter().enumerate() {
            row_into(ds.row(i), &mut x);
            net.score_matrix(&x, &mut alone);
            assert_eq!(
                g.to_bits(),
                f64::from(alone[0]).to_bits(),
                "document {i} of {}",
                ds.n_docs()
            );
        }
    }
}
