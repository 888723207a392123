//! The explicit SIMD tiles of the products (`src/neural/tiles.rs`) against the safe kernels they replace, bit for
//! bit: every output one fused multiply-add chain from its bias, inputs ascending, whatever the tile.

use ltr_core::neural::kernels;

/// x86's NaN for an invalid operation (`∞ · 0`, `∞ − ∞`): the one NaN the tests put in, so that every NaN an output
/// can hold has these bits whichever operand an FMA instruction propagates (the sign and payload of a NaN from two
/// different NaNs depend on the operand order the compiler picks, in the safe kernels as in the tiles).
const NAN: f32 = f32::from_bits(0xffc0_0000);

/// A deterministic stream of values: mostly in [−1.5, 1.5), with exact zeros, −0, and (`special`) ±∞, NaN, values
/// near the largest f32 (products overflow) and subnormals. Also the stream of `neural_bf16.rs`.
pub(super) struct Values(pub(super) u64);

impl Values {
    fn next(&mut self, special: bool) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let v = ((self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 3.0;
        match (self.0 % 97, special) {
            (0..=8, _) => 0.0,
            (9..=12, _) => -0.0,
            (13, true) => f32::INFINITY,
            (14, true) => f32::NEG_INFINITY,
            (15, true) => NAN,
            (16, true) => 3e38 * v.signum(),
            (17, true) => 1e-40 * v,
            _ => v,
        }
    }

    pub(super) fn take(&mut self, n: usize, special: bool) -> Vec<f32> {
        (0..n).map(|_| self.next(special)).collect()
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// Row counts around every tile height (6 and 12 rows, the safe kernels' 4) and the chunks of training (128);
/// widths around every panel (16, 32, 64) and vector (8, 16); input counts of one, of a partial and of several
/// panels (136: two equal panels of 68 with 64 outputs).
const SHAPES: [(usize, usize, usize); 22] = [
    (1, 1, 2),
    (5, 1, 64),
    (7, 2, 15),
    (11, 3, 16),
    (13, 7, 17),
    (6, 9, 31),
    (12, 5, 32),
    (23, 13, 33),
    (25, 17, 48),
    (17, 70, 63),
    (18, 136, 64),
    (19, 45, 65),
    (29, 129, 100),
    (3, 257, 130),
    (128, 136, 256),
    (130, 45, 256),
    (128, 512, 40),
    (37, 600, 24),
    (0, 4, 8),
    (4, 0, 40),
    (2, 1030, 70),
    (9, 64, 8),
];

/// `matmul_rows`' products with the SIMD tiles equal the safe kernels' at both panel widths (the AVX-512 tiles
/// with 64 and 32 outputs, the AVX2 ones with 16, where this CPU has them), with and without a bias, on finite
/// inputs with zeros and −0 and on inputs with ±∞, NaN, overflowing products and subnormals.
#[test]
fn simd_product_tiles_are_the_safe_kernels_bit_for_bit() {
    let mut v = Values(0x0dd5_eed5_1234_5679);
    for (rows, k_dim, o_dim) in SHAPES {
        for special in [false, true] {
            let x = v.take(rows * k_dim, special);
            let m = v.take(k_dim * o_dim, special);
            let b = v.take(o_dim, special);
            for bias in [Some(&b[..]), None] {
                for wide in [false, true] {
                    let mut want = vec![f32::NAN; rows * o_dim];
                    kernels::matmul_with(&x, &m, bias, &mut want, k_dim, o_dim, rows, wide, false);
                    let mut got = vec![f32::NAN; rows * o_dim];
                    kernels::matmul_with(&x, &m, bias, &mut got, k_dim, o_dim, rows, wide, true);
                    let what = format!("{rows}x{k_dim}x{o_dim} special {special} wide {wide}");
                    assert_eq!(bits(&got), bits(&want), "{what}");
                    if !special {
                        // And the plain loop: from the bias, `k` ascending, one `mul_add` a term.
                        for (r, yr) in got.chunks(o_dim).enumerate() {
                            for (j, &g) in yr.iter().enumerate() {
                                let mut acc = bias.map_or(0.0, |b| b[j]);
                                for k in 0..k_dim {
                                    acc = x[r * k_dim + k].mul_add(m[k * o_dim + j], acc);
                                }
                                assert_eq!(g.to_bits(), acc.to_bits(), "{what} at {r}, {j}");
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The weight gradient with the SIMD tiles in its products (`dW += aᵀ dy` from `dW`) equals the safe kernels', on
/// inputs that take the products (at most three quarters zeros, a finite `dy`) and the lists (sparser inputs, or
/// ±∞ and NaN), from a `dW` with zeros and −0.
#[test]
fn simd_weight_gradient_is_the_safe_kernels_bit_for_bit() {
    let mut v = Values(0x5eed_0f9a_1d3e_4701);
    for (rows, k_dim, o_dim) in SHAPES {
        for case in 0..3 {
            let mut a = v.take(rows * k_dim, case == 2);
            let dy = v.take(rows * o_dim, case == 2);
            if case == 1 {
                a.iter_mut()
                    .enumerate()
                    .filter(|(i, _)| i % 5 != 0)
                    .for_each(|(_, x)| *x = 0.0);
            }
            let dw0 = v.take(k_dim * o_dim, false);
            for wide in [false, true] {
                let mut want = dw0.clone();
                kernels::weight_gradient_with(&a, &dy, &mut want, k_dim, o_dim, wide, false);
                let mut got = dw0.clone();
                kernels::weight_gradient_with(&a, &dy, &mut got, k_dim, o_dim, wide, true);
                assert_eq!(
                    bits(&got),
                    bits(&want),
                    "{rows}x{k_dim}x{o_dim} case {case} wide {wide}"
                );
            }
        }
    }
}

/// A product with `M` packed beforehand (`Packed`, as a training step packs each layer's weights once for all its
/// chunks) equals `matmul_rows`' bit for bit, with and without a bias, on the shapes above (a single output goes
/// through the dot products of the output layer).
#[test]
fn packed_products_are_matmul_rows_bit_for_bit() {
    let mut v = Values(0x5eed_0f9a_c4ed_0005);
    for (rows, k_dim, o_dim) in SHAPES {
        for special in [false, true] {
            let x = v.take(rows * k_dim, special);
            let m = v.take(k_dim * o_dim, special);
            let b = v.take(o_dim, special);
            let packed = kernels::Packed::new(&m, k_dim, o_dim);
            for bias in [Some(&b[..]), None] {
                let mut want = vec![f32::NAN; rows * o_dim];
                kernels::matmul_rows(&x, &m, bias, &mut want, k_dim, o_dim);
                let mut got = vec![f32::NAN; rows * o_dim];
                kernels::matmul_packed(&x, &packed, bias, &mut got);
                let what = format!("{rows}x{k_dim}x{o_dim} special {special}");
                assert_eq!(bits(&got), bits(&want), "{what}");
            }
        }
    }
}

/// Dropout's and ReLU's backward in one pass over the bytes (`mask_backward`) equals the two passes it replaces,
/// `d *= mask` and then `d = 0` where ReLU's output was at most 0, on gradients with zeros, −0, ±∞ and NaN.
#[test]
fn mask_backward_is_the_two_passes_bit_for_bit() {
    let mut v = Values(0x0bad_c0de_5eed_0001);
    let keep = 1.0 / (1.0 - 0.3f32);
    for n in [0, 1, 7, 16, 31, 64, 100, 1000] {
        let d = v.take(n, true);
        let act: Vec<f32> = v.take(n, false).iter().map(|x| x.max(0.0)).collect();
        let kept: Vec<bool> = v.take(n, false).iter().map(|x| *x > -0.7).collect();
        let mask: Vec<f32> = kept.iter().map(|&k| if k { keep } else { 0.0 }).collect();
        for (with_mask, relu) in [(true, true), (true, false), (false, true), (false, false)] {
            let mut want = d.clone();
            if with_mask {
                want.iter_mut().zip(&mask).for_each(|(g, m)| *g *= m);
            }
            if relu {
                want.iter_mut().zip(&act).for_each(|(g, y)| {
                    if *y <= 0.0 {
                        *g = 0.0
                    }
                });
            }
            let codes: Vec<u8> = kept
                .iter()
                .zip(&act)
                .map(|(&k, &y)| u8::from(with_mask && k) | if relu && y <= 0.0 { 2 } else { 0 })
                .collect();
            let mut got = d.clone();
            kernels::mask_backward(&mut got, &codes, with_mask.then_some(keep), relu);
            assert_eq!(
                bits(&got),
                bits(&want),
                "n {n} mask {with_mask} relu {relu}"
            );
        }
    }
}
