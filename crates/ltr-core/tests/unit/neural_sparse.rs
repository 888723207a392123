//! The sparse rows of the products (`kernels::matmul_packed_sparse`: each row's chains take only its nonzero
//! inputs) against the dense product, bit for bit, on inputs with +0, −0, all-zero rows and columns, and the cases
//! that must fall back to the dense product (a −0 in the bias, an infinite weight, products below 2⁻¹⁰¹).

use ltr_core::neural::kernels;

/// A deterministic stream: about two thirds exact zeros (a third of them −0), the rest in [−1.5, 1.5) and, with
/// `special`, ±∞ and NaN among them.
struct Values(u64);

impl Values {
    fn next(&mut self, zeros: bool, special: bool) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        let v = ((self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 3.0;
        match (self.0 % 90, zeros, special) {
            (0..=39, true, _) => 0.0,
            (40..=59, true, _) => -0.0,
            (60, _, true) => f32::INFINITY,
            (61, _, true) => f32::NEG_INFINITY,
            (62, _, true) => f32::from_bits(0xffc0_0000),
            (63..=66, false, _) => 0.0,
            (67, false, _) => -0.0,
            _ => v,
        }
    }

    fn take(&mut self, n: usize, zeros: bool, special: bool) -> Vec<f32> {
        (0..n).map(|_| self.next(zeros, special)).collect()
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// Row counts around the groups of 4 rows and a training chunk (128); inputs of one and of several panels (136:
/// two of 68; 1030: nine); outputs in whole panels of 64 (the sparse rows) and not (the dense product).
const SHAPES: [(usize, usize, usize); 12] = [
    (1, 1, 64),
    (3, 45, 64),
    (5, 136, 128),
    (7, 257, 192),
    (13, 512, 256),
    (128, 256, 512),
    (129, 1030, 64),
    (0, 8, 64),
    (6, 2, 64),
    (9, 64, 65),
    (6, 40, 32),
    (4, 30, 16),
];

/// What a case breaks: nothing, or one of the conditions of the sparse rows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Case {
    Plain,
    Special,
    NegZeroBias,
    InfiniteWeight,
    TinyInput,
}

#[test]
fn sparse_rows_are_the_dense_product_bit_for_bit() {
    let avx512 = ltr_data::simd_level() >= ltr_data::SimdLevel::Avx512;
    let mut v = Values(0x5a5a_0f0f_1234_9877);
    let mut sparse_runs = 0;
    for (rows, k_dim, o_dim) in SHAPES {
        for case in [
            Case::Plain,
            Case::Special,
            Case::NegZeroBias,
            Case::InfiniteWeight,
            Case::TinyInput,
        ] {
            let mut x = v.take(rows * k_dim, true, case == Case::Special);
            // An all-zero row (−0 and +0) and an all-zero column.
            if rows > 2 {
                x[k_dim..2 * k_dim]
                    .iter_mut()
                    .enumerate()
                    .for_each(|(k, e)| *e = if k % 2 == 0 { -0.0 } else { 0.0 });
                (0..rows).for_each(|r| x[r * k_dim + k_dim / 2] = -0.0);
            }
            if case == Case::TinyInput && !x.is_empty() {
                let mid = x.len() / 2;
                x[mid] = 1e-35;
            }
            let mut m = v.take(k_dim * o_dim, false, false);
            if case == Case::InfiniteWeight && !m.is_empty() {
                m[0] = f32::INFINITY;
            }
            let mut b = v.take(o_dim, false, false);
            if case == Case::NegZeroBias {
                b[o_dim / 3] = -0.0;
            }
            let packed = kernels::Packed::new(&m, k_dim, o_dim);
            for bias in [Some(&b[..]), None] {
                let mut want = vec![f32::NAN; rows * o_dim];
                kernels::matmul_packed(&x, &packed, bias, &mut want);
                let mut got = vec![f32::NAN; rows * o_dim];
                let took = kernels::matmul_packed_sparse(&x, &packed, bias, &mut got);
                let what = format!("{rows}x{k_dim}x{o_dim} {case:?} bias {}", bias.is_some());
                assert_eq!(bits(&got), bits(&want), "{what}");
                // The conditions, from the data: a finite `M`, no −0 in the bias, no product below 2⁻¹⁰¹.
                let min = |v: &[f32]| {
                    v.iter()
                        .filter(|e| **e != 0.0)
                        .fold(f64::INFINITY, |a, e| a.min(f64::from(e.abs())))
                };
                let fits = m.iter().all(|e| e.is_finite())
                    && bias.is_none_or(|b| b.iter().all(|e| e.to_bits() != 0x8000_0000))
                    && min(&x) * min(&m) >= 2f64.powi(-101);
                match case {
                    Case::Plain | Case::Special => {}
                    Case::NegZeroBias => assert!(bias.is_none() || !fits, "{what}"),
                    Case::InfiniteWeight | Case::TinyInput => {
                        assert!(!fits || rows * k_dim == 0, "{what}")
                    }
                }
                // At least half of `x` zeros.
                let sparse = 2 * x.iter().filter(|e| **e == 0.0).count() >= x.len();
                let expect = avx512 && rows > 0 && o_dim % 64 == 0 && fits && sparse;
                assert_eq!(took, expect, "{what}: sparse rows");
                sparse_runs += usize::from(took);
                if case == Case::Plain {
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
    assert!(!avx512 || sparse_runs > 0);
}

/// A product whose dense chains would stand at −0 (a −0 bias, an input of −0 times a positive weight: the dense
/// chain turns −0 into +0, the skipping one would not) falls back to the dense product.
#[test]
fn a_negative_zero_start_keeps_the_dense_chain() {
    let (rows, k_dim, o_dim) = (4, 3, 64);
    let x = vec![-0.0f32; rows * k_dim];
    let m = vec![1.0f32; k_dim * o_dim];
    let b = vec![-0.0f32; o_dim];
    let packed = kernels::Packed::new(&m, k_dim, o_dim);
    let mut got = vec![f32::NAN; rows * o_dim];
    assert!(!kernels::matmul_packed_sparse(
        &x,
        &packed,
        Some(&b),
        &mut got
    ));
    // −0 + (−0 · 1) = −0; the chain stays −0 (a +0 term would have made it +0): the dense product's.
    let mut want = vec![f32::NAN; rows * o_dim];
    kernels::matmul_packed(&x, &packed, Some(&b), &mut want);
    assert_eq!(bits(&got), bits(&want));
}

/// The weight gradient with sparse inputs (at least half zeros: the rows of `aᵀ` listed, `dy` packed) equals the
/// fused row `axpy` of every nonzero input, rows in order (the lists' chain), from a zero `dW` and from a `dW` of
/// values; with a −0 in `dW` or a product below 2⁻¹⁰¹ it falls back, still the same bits. Several panels of rows
/// (300 rows: three of 100), all-zero rows and columns of `a`.
#[test]
fn sparse_weight_gradient_is_the_row_axpy_bit_for_bit() {
    let mut v = Values(0x0ddb_a11c_5eed_0042);
    for (rows, k_dim, o_dim) in [
        (1, 1, 64),
        (5, 3, 64),
        (7, 45, 128),
        (128, 256, 512),
        (300, 40, 192),
        (13, 20, 65),
        (0, 4, 64),
    ] {
        for case in 0..4 {
            let mut a = v.take(rows * k_dim, true, false);
            if rows > 2 {
                a[..k_dim].iter_mut().for_each(|e| *e = -0.0);
                (0..rows).for_each(|r| a[r * k_dim + k_dim / 2] = 0.0);
            }
            let mut dy = v.take(rows * o_dim, false, false);
            if case == 3 && !dy.is_empty() {
                dy[0] = 1e-36;
            }
            let mut dw: Vec<f32> = match case {
                0 => vec![0.0; k_dim * o_dim],
                _ => v
                    .take(k_dim * o_dim, false, false)
                    .into_iter()
                    .map(|e| if e.to_bits() == 0x8000_0000 { 0.0 } else { e })
                    .collect(),
            };
            if case == 2 {
                dw[0] = -0.0;
            }
            let mut want = dw.clone();
            for r in 0..rows {
                for k in 0..k_dim {
                    let x = a[r * k_dim + k];
                    if x != 0.0 {
                        for j in 0..o_dim {
                            let w = &mut want[k * o_dim + j];
                            *w = x.mul_add(dy[r * o_dim + j], *w);
                        }
                    }
                }
            }
            let mut flag = case == 0;
            kernels::weight_gradient_known(&a, &dy, &mut dw, k_dim, o_dim, &mut flag);
            assert_eq!(bits(&dw), bits(&want), "{rows}x{k_dim}x{o_dim} case {case}");
        }
    }
}
