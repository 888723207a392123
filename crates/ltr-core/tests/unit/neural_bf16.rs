//! Scoring in bfloat16 (`src/neural/bf16.rs`): the rounding and the chain step by hand, the AVX-512 BF16 tiles
//! against the safe chain bit for bit, and the scores' distance from f32's.

use ltr_core::neural::bf16::{self, Bf16Dense};
use ltr_core::neural::*;

use super::neural_tiles::Values;

#[test]
fn rounding_to_bfloat16_is_to_nearest_even_with_subnormals_flushed() {
    assert_eq!(bf16::to_bf16(1.0), 0x3f80);
    // Halfway between 0x3f80 and 0x3f81: to the even one; halfway between 0x3f81 and 0x3f82: up.
    assert_eq!(bf16::to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
    assert_eq!(bf16::to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
    assert_eq!(bf16::to_bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
    assert_eq!(bf16::to_bf16(-2.5), 0xc020);
    assert_eq!(
        bf16::to_bf16(f32::MAX),
        0x7f80,
        "the largest f32 rounds to ∞"
    );
    assert_eq!(bf16::to_bf16(f32::NEG_INFINITY), 0xff80);
    assert_eq!(bf16::to_bf16(1e-40), 0x0000, "a subnormal becomes +0");
    assert_eq!(bf16::to_bf16(-1e-40), 0x8000, "and a negative one −0");
    assert!(bf16::from_bf16(bf16::to_bf16(f32::NAN)).is_nan());
    assert_eq!(
        bf16::pair(1.0, -2.5),
        0xc020_3f80,
        "the even input low, the odd one high"
    );
}

#[test]
fn a_chain_step_adds_the_odd_product_then_the_even_one() {
    // 1 + 15 + 8.
    assert_eq!(
        bf16::dot_pair(1.0, bf16::pair(2.0, 3.0), bf16::pair(4.0, 5.0)),
        24.0
    );
    // 1 + 2⁻²³ is exact; adding 2⁻²⁴ then ties and rounds to even: 1 + 2⁻²². The even product first would give
    // 1 (1 + 2⁻²⁴ ties to 1) and then 1 + 2⁻²³.
    let (hi, lo) = (2f32.powi(-23), 2f32.powi(-24));
    let got = bf16::dot_pair(1.0, bf16::pair(lo, hi), bf16::pair(1.0, 1.0));
    assert_eq!(got, 1.0 + 2f32.powi(-22));
    // A subnormal sum is flushed to a zero of its sign, and so is a subnormal start.
    let tiny = 2f32.powi(-70);
    assert_eq!(
        bf16::dot_pair(0.0, bf16::pair(-tiny, 0.0), bf16::pair(tiny, 0.0)).to_bits(),
        (-0f32).to_bits()
    );
    assert_eq!(bf16::dot_pair(1e-40, 0, 0).to_bits(), 0);
    // A product beyond f32's range makes the first sum ∞, and ∞ + finite stays ∞.
    let big = 2f32.powi(100);
    assert_eq!(
        bf16::dot_pair(0.0, bf16::pair(1.0, big), bf16::pair(-1.0, big)),
        f32::INFINITY
    );
}

/// Odd and even input counts, outputs within, at and past a panel of 64, rows around a tile of 6.
const SHAPES: [(usize, usize, usize); 10] = [
    (1, 1, 1),
    (6, 2, 64),
    (7, 3, 65),
    (13, 136, 256),
    (12, 256, 128),
    (5, 45, 7),
    (0, 8, 64),
    (19, 33, 130),
    (6, 64, 192),
    (128, 137, 64),
];

fn same(got: &[f32], want: &[f32]) -> bool {
    got.iter()
        .zip(want)
        .all(|(g, w)| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()))
}

#[test]
fn tiles_are_the_safe_chain_bit_for_bit() {
    if !bf16::tiles_available() {
        eprintln!(
            "skipped: this CPU (or LTR_SIMD) has no AVX-512 BF16, so only the safe chain runs"
        );
        return;
    }
    let mut v = Values(0x0bf1_6bf1_6bf1_6001);
    for (rows, inputs, outputs) in SHAPES {
        for special in [false, true] {
            let mut x = v.take(rows * inputs, special);
            let mut w = v.take(inputs * outputs, special);
            if special {
                // Inputs and weights near 1e-20: their products are subnormal (flushed by the chain).
                x.iter_mut().step_by(11).for_each(|e| *e *= 1e-20);
                w.iter_mut().step_by(7).for_each(|e| *e *= 1e-20);
            }
            let b = v.take(outputs, special);
            let layer = Bf16Dense::new(inputs, outputs, &w, &b);
            let (mut xb, mut wide) = (Vec::new(), Vec::new());
            let mut want = vec![f32::NAN; rows * outputs];
            layer.affine_with(&x, &mut want, &mut xb, &mut wide, false);
            let mut got = vec![f32::NAN; rows * outputs];
            layer.affine_with(&x, &mut got, &mut xb, &mut wide, true);
            assert!(
                same(&got, &want),
                "{rows}×{inputs}×{outputs} special {special}"
            );
        }
    }
}

/// 136 → 256 → 128 → 1 with ReLU, weights of He's scale (also the network of `neural_int8.rs`).
pub(super) fn scoring_net(v: &mut Values) -> NeuralNet {
    let mut dense = |i: usize, o: usize| {
        let mut d = Dense::zeros(i, o);
        let scale = (2.0 / i as f32).sqrt();
        d.weights = v.take(i * o, false).iter().map(|w| w * scale).collect();
        d.bias = v.take(o, false).iter().map(|b| b * 0.1).collect();
        d
    };
    let hidden = vec![
        HiddenLayer {
            dense: dense(136, 256),
            norm: None,
            batch_norm: None,
        },
        HiddenLayer {
            dense: dense(256, 128),
            norm: None,
            batch_norm: None,
        },
    ];
    NeuralNet {
        n_features: 136,
        input_norm: None,
        hidden,
        activation: Activation::Relu,
        output: dense(128, 1),
        encoder: None,
    }
}

#[test]
fn bfloat16_scores_stay_near_the_f32_ones() {
    let mut v = Values(0x5eed_0000_beef_0136);
    let net = scoring_net(&mut v);
    let rows = 500;
    let x = v.take(rows * 136, false);
    let mut f32_scores = vec![0f32; rows];
    net.score_matrix(&x, &mut f32_scores);
    let fast = net.to_bf16();
    let mut bf_scores = vec![0f32; rows];
    fast.score_matrix(&x, &mut bf_scores);
    let spread = f32_scores.iter().map(|s| s.abs()).sum::<f32>() / rows as f32;
    let worst = f32_scores
        .iter()
        .zip(&bf_scores)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    // Inputs and weights keep 8 significant bits (relative error at most 2⁻⁹ each), so a score moves by a small
    // fraction of the scores' scale, and not by nothing (the bfloat16 products did run).
    assert!(worst < 0.02 * spread, "worst {worst}, scale {spread}");
    assert!(
        worst > 0.0,
        "bfloat16 scores equal to f32's: the products did not run in bfloat16"
    );
    // Pairs of documents whose f32 scores differ by more than the worst error keep their order.
    for i in 0..rows {
        for j in 0..rows {
            if f32_scores[i] > f32_scores[j] + 2.0 * worst {
                assert!(bf_scores[i] > bf_scores[j], "documents {i} and {j} swapped");
            }
        }
    }
    // The network's own path through `score_matrix` is the layer products': the same bits as the safe chain.
    let mut again = vec![0f32; rows];
    fast.score_matrix(&x, &mut again);
    assert_eq!(
        again.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
        bf_scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
    );
}
