//! The AVX2 kernels of [`super::Int8Dense`]: a row's quantization, 32 inputs a step, and a tile of 3 rows × 16
//! outputs over a panel's quads, two at a time (two `vpmaddubsw`, their 16-bit lanes added, then one `vpmaddwd`:
//! 64 byte multiply-adds a vector of 8 sums; an odd last quad alone). The
//! integer sums are exact and the dequantization takes the portable code's f32 steps in the same order
//! ([`super::dequantize`], [`super::quantize`]), so the outputs are the portable code's bit for bit.
//!
//! Unsafe for the same two reasons as `neural/tiles.rs`: calling functions compiled for features the baseline lacks
//! (each call follows [`detected`]) and unchecked pointer reads (bounds asserted once by the safe caller).
#![allow(unsafe_code)]

use super::{Int8Dense, RowScale, PANEL, QUAD};

/// Rows a tile advances together (6 of the 16 vector registers hold its sums; 4 rows spilled registers and were
/// 0–11% slower in three alternated Criterion runs).
const TILE_ROWS: usize = 3;

/// Whether this CPU has AVX2.
pub(super) fn detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| is_x86_feature_detected!("avx2"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`super::quantize_row`] with the range and the bytes in AVX2; `None` (nothing done) without it.
pub(super) fn quantize_row(xr: &[f32], qr: &mut [u8]) -> Option<RowScale> {
    if !detected() {
        return None;
    }
    assert!(qr.len() >= xr.len(), "a byte for every input");
    qr[xr.len()..].fill(0);
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: the CPU has AVX2 (`detected`); `x86::range` reads `xr` only.
        let (lo, hi) = unsafe { x86::range(xr) }?;
        let (scale, inv) = super::row_scale(lo, hi);
        if let RowScale::Quantized { zero, .. } = scale {
            // SAFETY: as above; `qr` holds `xr.len()` bytes (asserted), the only ones written.
            unsafe { x86::quantize_bytes(xr, qr, inv, zero) };
        }
        Some(scale)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Every row's outputs (`layer.panels()·16` wide) from the quantized rows `xq` (`layer.quads()·4` bytes each) and
/// their scales, into `y`. False (nothing done) without AVX2.
pub(super) fn product(
    layer: &Int8Dense,
    xq: &[u8],
    scales: &[RowScale],
    y: &mut [f32],
    rows: usize,
) -> bool {
    if !detected() {
        return false;
    }
    let (quads, panels) = (layer.quads(), layer.panels());
    let width = panels * PANEL;
    assert!(xq.len() >= rows * quads * QUAD, "xq holds rows × quads");
    assert!(scales.len() >= rows, "a scale a row");
    assert!(y.len() >= rows * width, "y holds rows × panels × 16");
    assert_eq!(
        layer.packed.len(),
        panels * quads * PANEL * QUAD,
        "packed panels"
    );
    assert_eq!(layer.bias.len(), width, "a bias for every padded output");
    assert_eq!(
        layer.weight_scale.len(),
        width,
        "a scale for every padded output"
    );
    assert_eq!(
        layer.column_sum.len(),
        width,
        "a sum for every padded output"
    );
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has AVX2 (`detected`); the lengths are asserted above, and `x86::product` reads and writes
    // only inside them.
    unsafe {
        x86::product(
            layer,
            xq.as_ptr(),
            scales,
            y.as_mut_ptr(),
            rows,
            quads,
            panels,
        )
    };
    true
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::INPUT_MAX;
    use super::{Int8Dense, RowScale, PANEL, QUAD, TILE_ROWS};
    use std::arch::x86_64::*;

    /// The row's range widened to hold 0 (as `super::super::range_of`), or `None` when a value is not finite.
    ///
    /// # Safety
    /// AVX2 present.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn range(xr: &[f32]) -> Option<(f32, f32)> {
        let zero = _mm256_setzero_ps();
        let (mut lo, mut hi, mut bad) = (zero, zero, zero);
        let chunks = xr.chunks_exact(8);
        let tail = chunks.remainder();
        for c in chunks {
            // SAFETY: `c` holds 8 floats.
            let v = unsafe { _mm256_loadu_ps(c.as_ptr()) };
            lo = _mm256_min_ps(lo, v);
            hi = _mm256_max_ps(hi, v);
            // v − v is 0 for a finite v and NaN for ±∞ or NaN.
            bad = _mm256_or_ps(bad, _mm256_sub_ps(v, v));
        }
        if _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(bad, bad)) != 0 {
            return None;
        }
        let (mut l, mut h) = ([0f32; 8], [0f32; 8]);
        // SAFETY: each array holds 8 floats.
        unsafe {
            _mm256_storeu_ps(l.as_mut_ptr(), lo);
            _mm256_storeu_ps(h.as_mut_ptr(), hi);
        }
        let mut lo = l.iter().copied().fold(0f32, f32::min);
        let mut hi = h.iter().copied().fold(0f32, f32::max);
        for &v in tail {
            if !v.is_finite() {
                return None;
            }
            lo = lo.min(v);
            hi = hi.max(v);
        }
        Some((lo, hi))
    }

    /// Eight inputs' bytes as `quantize` makes them, in eight 32-bit lanes.
    #[target_feature(enable = "avx2")]
    fn step8(v: __m256, inv: __m256, zero: __m256i) -> __m256i {
        let v = _mm256_mul_ps(v, inv);
        let r = _mm256_round_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(v);
        let i = _mm256_add_epi32(_mm256_cvtps_epi32(r), zero);
        _mm256_min_epi32(
            _mm256_max_epi32(i, _mm256_setzero_si256()),
            _mm256_set1_epi32(INPUT_MAX),
        )
    }

    /// `qr[k] = quantize(xr[k], inv, zero)`, 32 inputs a step, the tail one by one.
    ///
    /// # Safety
    /// AVX2 present; `qr` at least as long as `xr`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn quantize_bytes(xr: &[f32], qr: &mut [u8], inv: f32, zero: i32) {
        let (vinv, vzero) = (_mm256_set1_ps(inv), _mm256_set1_epi32(zero));
        // `packs` and `packus` interleave the two 128-bit halves; this puts the 32 bytes back in order.
        let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        let whole = xr.len() / 32;
        for g in 0..whole {
            // SAFETY: group `g < whole` reads `xr[32g..32g + 32]` and writes `qr[32g..32g + 32]` (`qr` is at
            // least as long as `xr`).
            unsafe {
                let p = xr.as_ptr().add(32 * g);
                let a = step8(_mm256_loadu_ps(p), vinv, vzero);
                let b = step8(_mm256_loadu_ps(p.add(8)), vinv, vzero);
                let c = step8(_mm256_loadu_ps(p.add(16)), vinv, vzero);
                let d = step8(_mm256_loadu_ps(p.add(24)), vinv, vzero);
                let bytes = _mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
                let bytes = _mm256_permutevar8x32_epi32(bytes, order);
                _mm256_storeu_si256(qr.as_mut_ptr().add(32 * g).cast(), bytes);
            }
        }
        let mut k = 32 * whole;
        while k + 8 <= xr.len() {
            // SAFETY: reads `xr[k..k + 8]`; the 8 lanes' bytes are written one by one below.
            let lanes = unsafe { step8(_mm256_loadu_ps(xr.as_ptr().add(k)), vinv, vzero) };
            let mut out = [0i32; 8];
            // SAFETY: `out` holds 8 lanes.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), lanes) };
            for (q, v) in qr[k..k + 8].iter_mut().zip(out) {
                *q = v as u8;
            }
            k += 8;
        }
        for k in k..xr.len() {
            qr[k] = super::super::quantize(xr[k], inv, zero);
        }
    }

    /// `R` rows from `r0`, one panel: the integer sums over every pair of quads, then each output dequantized with
    /// `super::super::dequantize`'s steps.
    ///
    /// # Safety
    /// AVX2 present; `w` the panel's `quads × 64` bytes, `xq` rows `r0..r0 + R` of `quads × 4` bytes, `y` rows
    /// `r0..r0 + R` of `width` floats with outputs `16p..16p + 16` inside.
    #[target_feature(enable = "avx2")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile<const R: usize>(
        layer: &Int8Dense,
        w: *const i8,
        xq: *const u8,
        scales: &[RowScale],
        y: *mut f32,
        r0: usize,
        p: usize,
        quads: usize,
        width: usize,
    ) {
        let stride = quads * QUAD;
        let ones = _mm256_set1_epi16(1);
        let mut acc = [[_mm256_setzero_si256(); 2]; R];
        for c in (0..quads - quads % 2).step_by(2) {
            // SAFETY: quads `c` and `c + 1 < quads` of the panel, 64 bytes each.
            let (wa0, wa1, wb0, wb1) = unsafe {
                let wc = w.add(c * PANEL * QUAD);
                (
                    _mm256_loadu_si256(wc.cast()),
                    _mm256_loadu_si256(wc.add(32).cast()),
                    _mm256_loadu_si256(wc.add(64).cast()),
                    _mm256_loadu_si256(wc.add(96).cast()),
                )
            };
            for (i, a) in acc.iter_mut().enumerate() {
                // SAFETY: row `r0 + i`'s bytes `4c..4c + 8`, inside its `stride`.
                let (xa, xb) = unsafe {
                    let at = xq.add((r0 + i) * stride + c * QUAD);
                    (
                        _mm256_set1_epi32(at.cast::<i32>().read_unaligned()),
                        _mm256_set1_epi32(at.add(QUAD).cast::<i32>().read_unaligned()),
                    )
                };
                // Each 16-bit lane: two products of at most 127 · 63, twice: no saturation (module docs).
                let s0 =
                    _mm256_add_epi16(_mm256_maddubs_epi16(xa, wa0), _mm256_maddubs_epi16(xb, wb0));
                let s1 =
                    _mm256_add_epi16(_mm256_maddubs_epi16(xa, wa1), _mm256_maddubs_epi16(xb, wb1));
                a[0] = _mm256_add_epi32(a[0], _mm256_madd_epi16(s0, ones));
                a[1] = _mm256_add_epi32(a[1], _mm256_madd_epi16(s1, ones));
            }
        }
        if quads % 2 == 1 {
            // The last quad alone (an input count of 4 mod 8, or fewer than 4 left).
            let c = quads - 1;
            // SAFETY: quad `c < quads` of the panel, 64 bytes.
            let (wa0, wa1) = unsafe {
                let wc = w.add(c * PANEL * QUAD);
                (
                    _mm256_loadu_si256(wc.cast()),
                    _mm256_loadu_si256(wc.add(32).cast()),
                )
            };
            for (i, a) in acc.iter_mut().enumerate() {
                // SAFETY: row `r0 + i`'s bytes `4c..4c + 4`, inside its `stride`.
                let xa = unsafe {
                    let at = xq.add((r0 + i) * stride + c * QUAD);
                    _mm256_set1_epi32(at.cast::<i32>().read_unaligned())
                };
                let s0 = _mm256_maddubs_epi16(xa, wa0);
                let s1 = _mm256_maddubs_epi16(xa, wa1);
                a[0] = _mm256_add_epi32(a[0], _mm256_madd_epi16(s0, ones));
                a[1] = _mm256_add_epi32(a[1], _mm256_madd_epi16(s1, ones));
            }
        }
        let j0 = p * PANEL;
        for (i, a) in acc.iter().enumerate() {
            let RowScale::Quantized { scale, zero } = scales[r0 + i] else {
                continue;
            };
            for (h, &sums) in a.iter().enumerate() {
                let j = j0 + 8 * h;
                // SAFETY: outputs `j..j + 8` are inside the padded width of the layer's vectors and of row
                // `r0 + i` of `y`.
                unsafe {
                    let cs = _mm256_loadu_si256(layer.column_sum.as_ptr().add(j).cast());
                    let t = _mm256_sub_epi32(sums, _mm256_mullo_epi32(_mm256_set1_epi32(zero), cs));
                    let m = _mm256_mul_ps(
                        _mm256_set1_ps(scale),
                        _mm256_loadu_ps(layer.weight_scale.as_ptr().add(j)),
                    );
                    let v = _mm256_add_ps(
                        _mm256_mul_ps(_mm256_cvtepi32_ps(t), m),
                        _mm256_loadu_ps(layer.bias.as_ptr().add(j)),
                    );
                    _mm256_storeu_ps(y.add((r0 + i) * width + j), v);
                }
            }
        }
    }

    /// Every panel of every row (see `super::product`).
    ///
    /// # Safety
    /// AVX2 present; the lengths `super::product` asserts.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn product(
        layer: &Int8Dense,
        xq: *const u8,
        scales: &[RowScale],
        y: *mut f32,
        rows: usize,
        quads: usize,
        panels: usize,
    ) {
        let width = panels * PANEL;
        for p in 0..panels {
            // SAFETY: panel `p < panels` of the packed bytes.
            let w = unsafe { layer.packed.as_ptr().add(p * quads * PANEL * QUAD) };
            let mut r = 0;
            while r + TILE_ROWS <= rows {
                // SAFETY: rows `r..r + TILE_ROWS` exist; the rest as this function's contract.
                unsafe { tile::<TILE_ROWS>(layer, w, xq, scales, y, r, p, quads, width) };
                r += TILE_ROWS;
            }
            while r < rows {
                // SAFETY: as above, one row.
                unsafe { tile::<1>(layer, w, xq, scales, y, r, p, quads, width) };
                r += 1;
            }
        }
    }
}
