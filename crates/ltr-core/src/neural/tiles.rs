//! The register tiles of `kernels::matmul_rows` in explicit SIMD (`std::arch::x86_64`): the one place of
//! the neural code with `unsafe`.
//!
//! The safe kernels keep a tile of 4 rows × 64 sums in registers because that is the largest the compiler would not
//! spill or split into scalars (ARCHITECTURE.md). Here a tile is written with intrinsics: 6 rows × 4 vectors of 16
//! sums with AVX-512 (24 of the 32 registers, so each weight vector loaded feeds six rows), 12 rows × 2 vectors for
//! panels of 32 outputs, and 6 rows × 2 vectors of 8 with AVX2 and FMA (12 of 16 registers). Every sum is still one
//! chain: it starts from the value the caller put in the tile (the bias, zero, or the sum an earlier panel of
//! inputs left in `y`) and takes one fused multiply-add (`vfmadd`, rounded once: IEEE 754's fusedMultiplyAdd, the
//! `f32::mul_add` of the safe kernels) per input, inputs ascending. The tile changes how many chains advance
//! together, not any chain, so the outputs are the safe kernels' bit for bit (`tests/unit/neural.rs` compares them
//! on odd shapes with zeros, −0, ±∞ and NaN at every level this CPU has).
//!
//! Unsafe is needed for two things only: calling a function compiled for features the baseline target lacks
//! (each call follows a run-time check that the CPU has them) and unchecked loads through pointers (each kernel's
//! bounds are asserted once, before the call, by the safe function that calls it).
#![allow(unsafe_code)]

/// Where a tile's sums start: the panel's slice of the bias, zero, or the values already in `y`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Start<'a> {
    /// `bias[j]` for output `j` of the panel (`w` values).
    Bias(&'a [f32]),
    /// Zero (a product without bias, first panel of inputs).
    Zero,
    /// The value in `y` (a later panel of inputs, or a chain that continues from `y`).
    Y,
}

/// A panel of a product as `kernels` packs it: `kc` inputs of `T` outputs each (row-major, outputs past
/// `w` zero), for the outputs `j0..j0 + w` of a row of `o_dim`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Panel<'a> {
    /// The packed weights, `kc × T`.
    pub(super) weights: &'a [f32],
    /// Inputs in the panel.
    pub(super) kc: usize,
    /// The panel's first output.
    pub(super) j0: usize,
    /// Outputs in the panel (at most `T`).
    pub(super) w: usize,
}

/// `y[r, j0..j0 + w] = start + Σ_k x[r, k0 + k] · panel[k, ..]` (one fused multiply-add a term, `k` ascending) for
/// the first `rows` rows of `x` (`k_dim` wide) and `y` (`o_dim` wide), with the widest tile this CPU has for panels
/// of `T` outputs. `false` (nothing done) when there is none: not x86-64, or a CPU without AVX-512 (`T` = 64 or 32)
/// or AVX2 with FMA (`T` = 16).
#[allow(clippy::too_many_arguments)]
pub(super) fn panel_rows<const T: usize>(
    x: &[f32],
    k_dim: usize,
    k0: usize,
    p: Panel<'_>,
    start: Start<'_>,
    y: &mut [f32],
    o_dim: usize,
    rows: usize,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::panel_rows::<T>(x, k_dim, k0, p, start, y, o_dim, rows)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, k_dim, k0, p, start, y, o_dim, rows);
        false
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Panel, Start};
    use std::arch::x86_64::*;

    /// Rows of the widest tile of any kernel (12 × 32 and 6 × 64 sums: 384 floats).
    const MAX_SUMS: usize = 384;

    /// Which tiles a panel width gets on this CPU.
    #[derive(Clone, Copy)]
    enum Isa {
        /// AVX-512F with FMA: vectors of 16.
        Zmm,
        /// AVX2 with FMA: vectors of 8.
        Ymm,
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn panel_rows<const T: usize>(
        x: &[f32],
        k_dim: usize,
        k0: usize,
        p: Panel<'_>,
        start: Start<'_>,
        y: &mut [f32],
        o_dim: usize,
        rows: usize,
    ) -> bool {
        let (isa, tile_rows) = match T {
            64 if zmm() => (Isa::Zmm, 6),
            32 if zmm() => (Isa::Zmm, 12),
            16 if ymm() => (Isa::Ymm, 6),
            _ => return false,
        };
        let Panel { weights, kc, j0, w } = p;
        // The bounds every kernel call below relies on.
        assert!(
            w <= T && j0 + w <= o_dim && k0 + kc <= k_dim,
            "a panel inside the rows"
        );
        assert!(weights.len() >= kc * T, "a whole panel");
        assert!(
            x.len() >= rows * k_dim && y.len() >= rows * o_dim,
            "whole rows"
        );
        if let Start::Bias(b) = start {
            assert!(b.len() >= w, "a bias for every output of the panel");
        }
        let mut sums = [0f32; MAX_SUMS];
        let mut r = 0;
        while r < rows {
            let n = tile_rows.min(rows - r);
            for (i, s) in sums.chunks_exact_mut(T).take(n).enumerate() {
                let at = (r + i) * o_dim + j0;
                match start {
                    Start::Bias(b) => s[..w].copy_from_slice(&b[..w]),
                    Start::Zero => s[..w].fill(0.0),
                    Start::Y => s[..w].copy_from_slice(&y[at..at + w]),
                }
                // Padding lanes: their weights are zero and their sums are dropped.
                s[w..].fill(0.0);
            }
            let xs = x[r * k_dim + k0..].as_ptr();
            // SAFETY: the CPU has the tile's features (`zmm()`/`ymm()` above); row `i < n` of the tile reads
            // `x[(r + i)·k_dim + k0 + k]` for `k < kc`, inside `x` because `r + n <= rows`, `k0 + kc <= k_dim` and
            // `x.len() >= rows·k_dim`; the panel reads `weights[..kc·T]` (asserted) and the sums `sums[..n·T]`
            // (`n·T <= MAX_SUMS` for every tile of `isa`).
            unsafe {
                tile(
                    isa,
                    T,
                    n,
                    xs,
                    k_dim,
                    weights.as_ptr(),
                    kc,
                    sums.as_mut_ptr(),
                )
            };
            for (i, s) in sums.chunks_exact(T).take(n).enumerate() {
                let at = (r + i) * o_dim + j0;
                y[at..at + w].copy_from_slice(&s[..w]);
            }
            r += n;
        }
        true
    }

    /// The CPU has AVX-512F and FMA.
    fn zmm() -> bool {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma")
    }

    /// The CPU has AVX2 and FMA.
    fn ymm() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    /// One tile of `n` rows × `t` sums: the kernel for `isa`, `t` and `n`, monomorphised.
    ///
    /// # Safety
    /// The CPU has `isa`'s features; `x + i·stride + k` for `i < n`, `k < kc`, `p[..kc·t]` and `sums[..n·t]` are
    /// valid (sums also writable); `n` is at most the tile rows of `isa` and `t`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn tile(
        isa: Isa,
        t: usize,
        n: usize,
        x: *const f32,
        stride: usize,
        p: *const f32,
        kc: usize,
        sums: *mut f32,
    ) {
        macro_rules! rows {
            ($kernel:ident, $nv:literal, $($r:literal)+) => {
                match n {
                    // SAFETY: the caller's contract, with `n` rows.
                    $($r => unsafe { $kernel::<$r, $nv>(x, stride, p, kc, sums) },)+
                    _ => unreachable!("a tile of {n} rows"),
                }
            };
        }
        match (isa, t) {
            (Isa::Zmm, 64) => rows!(zmm_tile, 4, 1 2 3 4 5 6),
            (Isa::Zmm, 32) => rows!(zmm_tile, 2, 1 2 3 4 5 6 7 8 9 10 11 12),
            (Isa::Ymm, 16) => rows!(ymm_tile, 2, 1 2 3 4 5 6),
            _ => unreachable!("a tile of {t} outputs"),
        }
    }

    /// `R` rows × `NV` vectors of 16 sums in registers through `kc` inputs: `s[i][v] = fma(x[i, k], p[k, v], s[i][v])`
    /// for `k` ascending.
    ///
    /// # Safety
    /// AVX-512F and FMA present; `x + i·stride + k` (`i < R`, `k < kc`), `p[..kc·16·NV]` and `sums[..R·16·NV]`
    /// valid.
    #[target_feature(enable = "avx512f,fma")]
    unsafe fn zmm_tile<const R: usize, const NV: usize>(
        x: *const f32,
        stride: usize,
        p: *const f32,
        kc: usize,
        sums: *mut f32,
    ) {
        let mut s = [[_mm512_setzero_ps(); NV]; R];
        for (i, row) in s.iter_mut().enumerate() {
            for (v, acc) in row.iter_mut().enumerate() {
                // SAFETY: `sums[(i·NV + v)·16..][..16]` lies in `sums[..R·16·NV]`.
                *acc = unsafe { _mm512_loadu_ps(sums.add((i * NV + v) * 16)) };
            }
        }
        for k in 0..kc {
            let mut q = [_mm512_setzero_ps(); NV];
            for (v, qv) in q.iter_mut().enumerate() {
                // SAFETY: `p[(k·NV + v)·16..][..16]` lies in `p[..kc·16·NV]`.
                *qv = unsafe { _mm512_loadu_ps(p.add((k * NV + v) * 16)) };
            }
            for (i, row) in s.iter_mut().enumerate() {
                // SAFETY: `x + i·stride + k` with `i < R`, `k < kc`.
                let a = _mm512_set1_ps(unsafe { *x.add(i * stride + k) });
                for (acc, &qv) in row.iter_mut().zip(&q) {
                    *acc = _mm512_fmadd_ps(a, qv, *acc);
                }
            }
        }
        for (i, row) in s.iter().enumerate() {
            for (v, &acc) in row.iter().enumerate() {
                // SAFETY: as the loads above.
                unsafe { _mm512_storeu_ps(sums.add((i * NV + v) * 16), acc) };
            }
        }
    }

    /// [`zmm_tile`] with vectors of 8 (AVX2 and FMA).
    ///
    /// # Safety
    /// AVX2 and FMA present; `x + i·stride + k` (`i < R`, `k < kc`), `p[..kc·8·NV]` and `sums[..R·8·NV]` valid.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn ymm_tile<const R: usize, const NV: usize>(
        x: *const f32,
        stride: usize,
        p: *const f32,
        kc: usize,
        sums: *mut f32,
    ) {
        let mut s = [[_mm256_setzero_ps(); NV]; R];
        for (i, row) in s.iter_mut().enumerate() {
            for (v, acc) in row.iter_mut().enumerate() {
                // SAFETY: `sums[(i·NV + v)·8..][..8]` lies in `sums[..R·8·NV]`.
                *acc = unsafe { _mm256_loadu_ps(sums.add((i * NV + v) * 8)) };
            }
        }
        for k in 0..kc {
            let mut q = [_mm256_setzero_ps(); NV];
            for (v, qv) in q.iter_mut().enumerate() {
                // SAFETY: `p[(k·NV + v)·8..][..8]` lies in `p[..kc·8·NV]`.
                *qv = unsafe { _mm256_loadu_ps(p.add((k * NV + v) * 8)) };
            }
            for (i, row) in s.iter_mut().enumerate() {
                // SAFETY: `x + i·stride + k` with `i < R`, `k < kc`.
                let a = _mm256_set1_ps(unsafe { *x.add(i * stride + k) });
                for (acc, &qv) in row.iter_mut().zip(&q) {
                    *acc = _mm256_fmadd_ps(a, qv, *acc);
                }
            }
        }
        for (i, row) in s.iter().enumerate() {
            for (v, &acc) in row.iter().enumerate() {
                // SAFETY: as the loads above.
                unsafe { _mm256_storeu_ps(sums.add((i * NV + v) * 8), acc) };
            }
        }
    }
}
