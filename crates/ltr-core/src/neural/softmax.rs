//! The softmax's numerators for the attention weights (`kernels::attention_head_probs`): scaling, each row's
//! maximum and an `exp` that runs in vector registers and gives the same bits at every SIMD level.

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// The softmax's numerators: each `rows`-wide row of `ph` divided by `scale`, then `exp(v − the row's maximum)`.
pub(super) fn scaled_exps(ph: &mut [f32], rows: usize, scale: f32) {
    for row in ph.chunks_mut(rows) {
        row.iter_mut().for_each(|v| *v /= scale);
        let top = max_of(row);
        row.iter_mut().for_each(|v| *v = exp(*v - top));
    }
}
}

/// `eˣ` in f32 from IEEE additions and products alone, so that it is the same bits on every CPU and compiler
/// target, and branch-free, so that a loop of it runs in vector registers (libm's `expf` is a call an entry, about
/// half of a softmax's time). `x = n·ln 2 + r` with `|r| ≤ ln 2 / 2` (ln 2 in two parts, so `r` is exact to f32),
/// `eʳ` by its Taylor series to `r⁷/7!` (truncation below 6e-9 relative, under a tenth of an f32 ulp; the f32
/// Horner steps leave at most 2 ulp; the test finds 1.15), then `2ⁿ` applied as two exact powers of two, so that
/// results below the normal range round once into subnormals. Below −105 the result is 0, above 88.8 it is +∞, NaN
/// stays NaN.
#[inline]
pub fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    // ln 2 = LN2_HI + LN2_LO, LN2_HI = 355/512 (9 significant bits) so that n · LN2_HI is exact for |n| < 2¹⁵.
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // 1.5 · 2²³: adding and subtracting it rounds to the nearest integer (ties to even).
    const ROUND: f32 = 12_582_912.0;
    let c = x.clamp(-105.0, 88.8);
    let shifted = c * LOG2_E + ROUND;
    let n = shifted - ROUND;
    let r = (c - n * LN2_HI) - n * LN2_LO;
    let mut p = 1.0 / 5040.0;
    for k in [720.0, 120.0, 24.0, 6.0, 2.0, 1.0, 1.0] {
        p = p * r + 1.0 / k;
    }
    // n as an integer: it sits in the low bits of `shifted` (|n| < 2²²), read without a float-to-int conversion,
    // which would not run in vector registers.
    let n = shifted.to_bits() as i32 - ROUND.to_bits() as i32;
    let half = n >> 1;
    let pow2 = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    let y = p * pow2(half) * pow2(n - half);
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// The largest of `x` (NaN ignored, −∞ when empty) in eight lanes, so that the loop runs in vector registers. The
/// maximum is exact in any order; only the sign of a zero maximum may differ from a left-to-right scan, which
/// `v − top` and `exp` do not see.
#[inline]
fn max_of(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut chunks = x.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = l.max(v);
        }
    }
    let rest = chunks
        .remainder()
        .iter()
        .fold(f32::NEG_INFINITY, |t, &v| t.max(v));
    lanes.iter().fold(rest, |t, &l| t.max(l))
}
