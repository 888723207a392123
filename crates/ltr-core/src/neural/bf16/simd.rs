//! The AVX-512 BF16 kernels of [`super::Bf16Dense`]: the conversion of f32 rows to bfloat16 pairs
//! (`vcvtne2ps2bf16`) and a tile of 6 rows × 64 sums over a panel's input pairs (`vdpbf16ps`, two multiply-adds a
//! lane). Each sum is the chain of [`super::dot_pair`] from its bias, pairs ascending: the tile changes how many
//! chains advance together, not any chain.
//!
//! Unsafe for the same two reasons as `neural/tiles.rs`: calling functions compiled for features the baseline lacks
//! (each call follows [`detected`]) and unchecked pointer reads (bounds asserted once by the safe caller).
#![allow(unsafe_code)]

use super::{Bf16Dense, PANEL};

/// Rows a tile advances together (24 of the 32 vector registers hold its sums).
const TILE_ROWS: usize = 6;

/// Whether this CPU has AVX-512 F, BW and BF16.
pub(super) fn detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512bf16")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The first `16·g` pairs of `br` from the first `32·g` values of `xr`, for as many whole groups `g` as both
/// hold; returns the pairs written (0 without the instruction).
pub(super) fn convert(xr: &[f32], br: &mut [u32]) -> usize {
    let groups = (xr.len() / 32).min(br.len() / 16);
    if groups == 0 || !detected() {
        return 0;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has the features (`detected`); group `g < groups` reads `xr[32g..32g + 32]` and writes
    // `br[16g..16g + 16]`, inside both by the definition of `groups`.
    unsafe {
        x86::convert(xr.as_ptr(), br.as_mut_ptr(), groups)
    };
    groups * 16
}

/// `y[r, ..] = bias + Σ_p dot_pair(xb[r, p], panel)` for `rows` rows of `xb` (`layer.pairs()` wide) into `y`
/// (`layer.panels()·64` wide). False (nothing done) without the instruction.
pub(super) fn product(layer: &Bf16Dense, xb: &[u32], y: &mut [f32], rows: usize) -> bool {
    if !detected() {
        return false;
    }
    let (pairs, panels) = (layer.pairs(), layer.panels());
    let width = panels * PANEL;
    assert!(xb.len() >= rows * pairs, "xb holds rows × pairs");
    assert!(y.len() >= rows * width, "y holds rows × panels × 64");
    assert_eq!(layer.packed.len(), panels * pairs * PANEL, "packed panels");
    assert_eq!(layer.bias.len(), width, "a bias for every padded output");
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the CPU has the features (`detected`); the lengths are asserted above, and `x86::product` reads
    // and writes only inside them.
    unsafe {
        x86::product(
            layer.packed.as_ptr(),
            layer.bias.as_ptr(),
            xb.as_ptr(),
            y.as_mut_ptr(),
            rows,
            pairs,
            panels,
        )
    };
    true
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{PANEL, TILE_ROWS};
    use std::arch::x86_64::*;

    /// # Safety
    /// AVX-512 F, BW and BF16 present; `x[..32·groups]` readable, `b[..16·groups]` writable.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn convert(x: *const f32, b: *mut u32, groups: usize) {
        for g in 0..groups {
            // SAFETY: inside the ranges of the contract.
            unsafe {
                let lo = _mm512_loadu_ps(x.add(32 * g));
                let hi = _mm512_loadu_ps(x.add(32 * g + 16));
                let pairs = std::mem::transmute::<__m512bh, __m512i>(_mm512_cvtne2ps_pbh(hi, lo));
                _mm512_storeu_si512(b.add(16 * g).cast(), pairs);
            }
        }
    }

    /// # Safety
    /// AVX-512 F, BW and BF16 present; `w[..panels·pairs·64]`, `bias[..panels·64]` and `x[..rows·pairs]`
    /// readable, `y[..rows·panels·64]` writable.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    pub(super) unsafe fn product(
        w: *const u32,
        bias: *const f32,
        x: *const u32,
        y: *mut f32,
        rows: usize,
        pairs: usize,
        panels: usize,
    ) {
        let width = panels * PANEL;
        for q in 0..panels {
            // SAFETY (every `add` of this loop): panel `q`'s weights `w[q·pairs·64..][..pairs·64]` and bias
            // `bias[64q..][..64]`; rows `r..r + R` of `x` (`pairs` each) and of `y` (at column `64q`), `r + R <= rows`.
            unsafe {
                let (wq, bq) = (w.add(q * pairs * PANEL), bias.add(q * PANEL));
                let mut r = 0;
                while r + TILE_ROWS <= rows {
                    tile::<TILE_ROWS>(
                        x.add(r * pairs),
                        pairs,
                        wq,
                        bq,
                        y.add(r * width + q * PANEL),
                        width,
                    );
                    r += TILE_ROWS;
                }
                while r < rows {
                    tile::<1>(
                        x.add(r * pairs),
                        pairs,
                        wq,
                        bq,
                        y.add(r * width + q * PANEL),
                        width,
                    );
                    r += 1;
                }
            }
        }
    }

    /// The 32 bfloat16 of `v`, as the BF16 instructions take them (the same 512 bits).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn bh(v: __m512i) -> __m512bh {
        // SAFETY: both are 512 bits of plain data; every bit pattern is valid for each.
        unsafe { std::mem::transmute::<__m512i, __m512bh>(v) }
    }

    /// `R` rows × 64 sums from the bias over `pairs` input pairs.
    ///
    /// # Safety
    /// AVX-512 F, BW and BF16 present; `x[..R·pairs]`, `w[..pairs·64]`, `bias[..64]` readable; `y + i·stride`
    /// writable for 64 floats, `i < R`.
    #[target_feature(enable = "avx512f,avx512bw,avx512bf16")]
    unsafe fn tile<const R: usize>(
        x: *const u32,
        pairs: usize,
        w: *const u32,
        bias: *const f32,
        y: *mut f32,
        stride: usize,
    ) {
        // SAFETY (every pointer of this function): inside the ranges of the contract.
        unsafe {
            let mut acc = [[_mm512_setzero_ps(); 4]; R];
            for row in acc.iter_mut() {
                for (v, a) in row.iter_mut().enumerate() {
                    *a = _mm512_loadu_ps(bias.add(16 * v));
                }
            }
            for p in 0..pairs {
                let mut wv: [__m512bh; 4] = [bh(_mm512_setzero_si512()); 4];
                for (v, wr) in wv.iter_mut().enumerate() {
                    *wr = bh(_mm512_loadu_si512(w.add(p * PANEL + 16 * v).cast()));
                }
                for (i, row) in acc.iter_mut().enumerate() {
                    let a: __m512bh =
                        std::mem::transmute(_mm512_set1_epi32(*x.add(i * pairs + p) as i32));
                    for (s, &wr) in row.iter_mut().zip(&wv) {
                        *s = _mm512_dpbf16_ps(*s, a, wr);
                    }
                }
            }
            for (i, row) in acc.iter().enumerate() {
                for (v, &s) in row.iter().enumerate() {
                    _mm512_storeu_ps(y.add(i * stride + 16 * v), s);
                }
            }
        }
    }
}
