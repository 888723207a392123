//! Scoring in 8-bit integers (`src/neural/int8.rs`): the quantization by hand, the AVX2 tiles against the portable
//! code bit for bit, rows the integers cannot hold, and the scores' distance from f32's.

use ltr_core::neural::int8::{self, Int8Dense, RowScale, Scratch};
use ltr_core::neural::*;

use super::neural_bf16::scoring_net;
use super::neural_tiles::Values;

#[test]
fn a_layer_by_hand() {
    // Two inputs, two outputs: W = [[1, −0.5], [0.25, 2]], b = [0.1, −0.1].
    let mut d = Dense::zeros(2, 2);
    d.weights = vec![1.0, -0.5, 0.25, 2.0];
    d.bias = vec![0.1, -0.1];
    let layer = Int8Dense::new(&d);
    // Column 0: scale 1/63, bytes 63 and round(15.75) = 16; column 1: scale 2/63, bytes round(−15.75) = −16, 63.
    assert_eq!(layer.weight_scale[..2], [1.0 / 63.0, 2.0 / 63.0]);
    assert_eq!(layer.column_sum[..2], [63 + 16, -16 + 63]);
    assert_eq!(
        layer.quads(),
        1,
        "two inputs and two zero bytes in one quad"
    );
    let (lane0, lane1) = (&layer.packed[0..4], &layer.packed[4..8]);
    assert_eq!(lane0, [63, 16, 0, 0]);
    assert_eq!(lane1, [-16, 63, 0, 0]);
    // The row [−1, 3]: range [−1, 3], step 4/127, zero round(127/4) = round(31.75) = 32; bytes 0 and
    // round(95.25) + 32 = 127.
    let mut q = [9u8; 8];
    let scale = int8::quantize_row(&[-1.0, 3.0], &mut q);
    assert_eq!(
        scale,
        RowScale::Quantized {
            scale: 4.0 / 127.0,
            zero: 32
        }
    );
    assert_eq!(q, [0, 127, 0, 0, 0, 0, 0, 0], "the padding is zero");
    // Output 0: sum 0·63 + 127·16 = 2032, minus 32·79 = −496 steps of (4/127)·(1/63): −0.248 + 0.1. The exact
    // answer is −1 + 0.75 + 0.1 = −0.15.
    let mut y = [0f32; 2];
    let mut s = Scratch::default();
    layer.affine_with(&[-1.0, 3.0], &mut y, &mut s, false);
    let want0 = (-496f32) * ((4.0f32 / 127.0) * (1.0 / 63.0)) + 0.1;
    assert_eq!(y[0].to_bits(), want0.to_bits());
    assert!((y[0] - -0.15).abs() < 0.1, "{}", y[0]);
    // Output 1: 127·63 − 32·47 = 6497 steps of (4/127)·(2/63), − 0.1: about 6.4 (exact: 0.5 + 6 − 0.1).
    assert!((y[1] - 6.4).abs() < 0.1, "{}", y[1]);
    // A row of zeros is the bias exactly; a row with ∞ is the f32 layer's (∞ and NaN, as at `full`).
    layer.affine_with(&[0.0, -0.0], &mut y, &mut s, false);
    assert_eq!(y, [0.1, -0.1]);
    let mut want = [0f32; 2];
    kernels::affine(&[f32::INFINITY, 1.0], &d, &mut want);
    layer.affine_with(&[f32::INFINITY, 1.0], &mut y, &mut s, false);
    assert_eq!(y[0].to_bits(), want[0].to_bits());
    assert!(y[1].is_nan() == want[1].is_nan() && (y[1].is_nan() || y[1] == want[1]));
}

#[test]
fn no_sixteen_bit_lane_saturates_at_the_extremes() {
    // Every input at the top of its range and every weight ±63: the largest sums the tile forms. A saturated
    // 16-bit lane would lose most of the sum; exact sums give the product to the last steps' rounding.
    for sign in [1.0f32, -1.0] {
        let inputs = 40;
        let mut d = Dense::zeros(inputs, 16);
        d.weights = vec![sign; inputs * 16];
        let layer = Int8Dense::new(&d);
        let x = vec![1.0f32; inputs];
        for tiles in [false, int8::tiles_available()] {
            let mut y = vec![0f32; 16];
            layer.affine_with(&x, &mut y, &mut Scratch::default(), tiles);
            for v in y {
                assert!(
                    (v - sign * inputs as f32).abs() < 1e-4,
                    "tiles {tiles}: {v}"
                );
            }
        }
    }
}

/// Input counts of one, of a partial quad, of an odd and an even number of quads; outputs within, at and past a
/// panel of 16; rows around a tile of 3.
const SHAPES: [(usize, usize, usize); 10] = [
    (1, 1, 1),
    (4, 8, 16),
    (7, 3, 17),
    (13, 136, 256),
    (12, 256, 128),
    (5, 45, 7),
    (0, 8, 16),
    (19, 33, 130),
    (6, 64, 192),
    (144, 137, 64),
];

fn same(got: &[f32], want: &[f32]) -> bool {
    got.iter()
        .zip(want)
        .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()))
}

#[test]
fn tiles_are_the_portable_code_bit_for_bit() {
    if !int8::tiles_available() {
        eprintln!("skipped: this CPU (or LTR_SIMD) has no AVX2, so only the portable code runs");
        return;
    }
    let mut v = Values(0x0001_e81e_81e8_0008);
    for (rows, inputs, outputs) in SHAPES {
        for special in [false, true] {
            // Special inputs: ±∞, NaN and ±3e38 (rows the integers cannot hold), subnormals, zero rows.
            let mut x = v.take(rows * inputs, special);
            if special && inputs > 0 {
                x.iter_mut().take(inputs).for_each(|e| *e = 0.0);
            }
            let mut d = Dense::zeros(inputs, outputs);
            d.weights = v.take(inputs * outputs, false);
            d.bias = v.take(outputs, false);
            let layer = Int8Dense::new(&d);
            let mut s = Scratch::default();
            let mut want = vec![f32::NAN; rows * outputs];
            layer.affine_with(&x, &mut want, &mut s, false);
            let mut got = vec![f32::NAN; rows * outputs];
            layer.affine_with(&x, &mut got, &mut s, true);
            assert!(
                same(&got, &want),
                "{rows}×{inputs}×{outputs} special {special}"
            );
        }
    }
}

#[test]
fn rows_the_integers_cannot_hold_score_as_in_f32() {
    let mut v = Values(0x0bad_0bad_0bad_0008);
    let (inputs, outputs) = (20, 24);
    let mut d = Dense::zeros(inputs, outputs);
    d.weights = v.take(inputs * outputs, false);
    d.bias = v.take(outputs, false);
    let layer = Int8Dense::new(&d);
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut x = v.take(inputs, false);
        x[7] = bad;
        let mut want = vec![0f32; outputs];
        kernels::affine(&x, &d, &mut want);
        for tiles in [false, int8::tiles_available()] {
            let mut got = vec![0f32; outputs];
            layer.affine_with(&x, &mut got, &mut Scratch::default(), tiles);
            assert!(same(&got, &want), "{bad} tiles {tiles}");
        }
    }
    // A range that overflows f32 (3e38 − (−3e38)).
    let mut x = v.take(inputs, false);
    x[0] = 3e38;
    x[1] = -3e38;
    assert_eq!(int8::quantize_row(&x, &mut [0u8; 24]), RowScale::Float);
}

#[test]
fn int8_scores_stay_near_the_f32_ones() {
    let mut v = Values(0x5eed_0000_1e81_0136);
    let net = scoring_net(&mut v);
    let rows = 500;
    let x = v.take(rows * 136, false);
    let mut f32_scores = vec![0f32; rows];
    net.score_matrix(&x, &mut f32_scores);
    let fast = net.to_int8();
    let mut q_scores = vec![0f32; rows];
    fast.score_matrix(&x, &mut q_scores);
    let spread = f32_scores.iter().map(|s| s.abs()).sum::<f32>() / rows as f32;
    let worst = f32_scores
        .iter()
        .zip(&q_scores)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    // Seven bits of each input and weight: a score moves by a few hundredths of the scores' scale, not by nothing.
    assert!(worst < 0.05 * spread, "worst {worst}, scale {spread}");
    assert!(
        worst > 0.0,
        "int8 scores equal to f32's: the products did not run in integers"
    );
    // Pairs whose f32 scores differ by more than twice the worst error keep their order.
    for i in 0..rows {
        for j in 0..rows {
            if f32_scores[i] > f32_scores[j] + 2.0 * worst {
                assert!(q_scores[i] > q_scores[j], "documents {i} and {j} swapped");
            }
        }
    }
    // The rows in blocks of a data set, in parallel, give each row's own bits.
    let rows_alone: Vec<u32> = x
        .chunks_exact(136)
        .map(|r| {
            let mut s = [0f32];
            fast.score_matrix(r, &mut s);
            s[0].to_bits()
        })
        .collect();
    assert_eq!(
        rows_alone,
        q_scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
    );
}
