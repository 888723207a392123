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
/// the first `rows` rows of `x` (`k_dim` wide; with `by_cols`, `x[r, k]` is `x[k · rows + r]`: `x` stored
/// transposed) and `y` (`o_dim` wide), with the widest tile this CPU has for panels of `T` outputs. `false` (nothing
/// done) when there is none ([`available`] is false).
#[allow(clippy::too_many_arguments)]
pub(super) fn panel_rows<const T: usize>(
    x: &[f32],
    by_cols: bool,
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
        x86::panel_rows::<T>(x, by_cols, k_dim, k0, p, start, y, o_dim, rows)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, by_cols, k_dim, k0, p, start, y, o_dim, rows);
        false
    }
}

/// Whether this CPU has a tile for panels of `T` outputs: x86-64 with AVX-512F and FMA (`T` = 64 or 32), or with
/// AVX2 and FMA (`T` = 16).
pub(super) fn available<const T: usize>() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::isa::<T>().is_some()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Rows of a group of [`sparse_rows`]: they go through their lists together, so that their chains advance together.
pub(super) const SPARSE_ROWS: usize = 4;

/// The terms of a group of up to [`SPARSE_ROWS`] rows for [`sparse_rows`]: row `i`'s `t`-th term is
/// `(offs[i · stride + t], vals[i · stride + t])` for `t < len`, where the offset is `(k − k0) · T`, the input's
/// row of the packed panel. A row with fewer nonzero inputs than `len` is padded with `(0, +0)`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Terms<'a> {
    /// The offsets, `n` rows of `stride`.
    pub(super) offs: &'a [u32],
    /// The values, laid out as `offs`.
    pub(super) vals: &'a [f32],
    /// Slots a row.
    pub(super) stride: usize,
    /// Rows in the group.
    pub(super) n: usize,
    /// Steps.
    pub(super) len: usize,
}

/// The nonzero entries of `x` (NaN counts as nonzero, ±0 as zero), in order: their values into `vals` and
/// `k · t` for entry `k` into `offs`; returns how many. `offs` and `vals` need `x.len() + 16` slots (whole vectors
/// are stored past the count).
pub(super) fn compact_nonzero(x: &[f32], t: u32, offs: &mut [u32], vals: &mut [f32]) -> usize {
    assert!(
        offs.len() >= x.len() + 16 && vals.len() >= x.len() + 16,
        "room for whole vectors"
    );
    #[cfg(target_arch = "x86_64")]
    if let Some(c) = x86::compact_nonzero(x, t, offs, vals) {
        return c;
    }
    let mut c = 0;
    for (k, &v) in x.iter().enumerate() {
        offs[c] = k as u32 * t;
        vals[c] = v;
        c += usize::from(v != 0.0);
    }
    c
}

/// `y[r + i, j0..j0 + T] = start + Σ_t value · panel[offset, ..]` over row `i`'s listed terms, in list order (one
/// fused multiply-add a term), for the `n` rows `r..r + n` of `y` (`o_dim` wide) and a whole panel (`p.w == T`);
/// `false` (nothing done) when this CPU has no tile for panels of `T` outputs (only AVX-512's 64 here). The
/// caller lists each row's nonzero inputs in ascending order: that the chains equal the dense ones is its
/// argument (`kernels::sparse`), this function only runs them.
pub(super) fn sparse_rows<const T: usize>(
    terms: Terms<'_>,
    p: Panel<'_>,
    start: Start<'_>,
    y: &mut [f32],
    r: usize,
    o_dim: usize,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86::sparse_rows::<T>(terms, p, start, y, r, o_dim)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (terms, p, start, y, r, o_dim);
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
    pub(super) enum Isa {
        /// AVX-512F with FMA: vectors of 16.
        Zmm,
        /// AVX2 with FMA: vectors of 8.
        Ymm,
    }

    /// The tiles for panels of `T` outputs on this CPU, and their rows.
    pub(super) fn isa<const T: usize>() -> Option<(Isa, usize)> {
        match T {
            64 if zmm() => Some((Isa::Zmm, 6)),
            32 if zmm() => Some((Isa::Zmm, 12)),
            16 if ymm() => Some((Isa::Ymm, 6)),
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn panel_rows<const T: usize>(
        x: &[f32],
        by_cols: bool,
        k_dim: usize,
        k0: usize,
        p: Panel<'_>,
        start: Start<'_>,
        y: &mut [f32],
        o_dim: usize,
        rows: usize,
    ) -> bool {
        let Some((isa, tile_rows)) = isa::<T>() else {
            return false;
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
        // A whole panel's sums start from and go back to their rows of `y` (or start from the bias, or zero) inside
        // the kernel, read and written with a row stride (0: the same `T` values for every row); a narrower last
        // panel goes through a buffer of `T` sums a row, whose padding lanes start at zero and are dropped.
        let mut sums = [0f32; MAX_SUMS];
        let mut r = 0;
        while r < rows {
            let n = tile_rows.min(rows - r);
            let at = r * o_dim + j0;
            let (src, src_stride, dst, dst_stride) = if w == T {
                let yp = y.as_mut_ptr();
                let (src, stride) = match start {
                    Start::Bias(b) => (b.as_ptr(), 0),
                    Start::Zero => (ZEROS.as_ptr(), 0),
                    // SAFETY: `at + (n − 1)·o_dim + T <= rows·o_dim <= y.len()` (asserted above; `j0 + T <= o_dim`).
                    Start::Y => (unsafe { yp.add(at) }.cast_const(), o_dim),
                };
                // SAFETY: as above.
                (src, stride, unsafe { yp.add(at) }, o_dim)
            } else {
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
                (sums.as_ptr(), T, sums.as_mut_ptr(), T)
            };
            // Row `i`, input `k` of the tile at `xs + i·stride + k`, or `xs + k·stride + i` by columns.
            let (xs, stride) = if by_cols {
                (x[k0 * rows + r..].as_ptr(), rows)
            } else {
                (x[r * k_dim + k0..].as_ptr(), k_dim)
            };
            // SAFETY: the CPU has the tile's features (`zmm()`/`ymm()` above); row `i < n` of the tile reads
            // `x[(r + i)·k_dim + k0 + k]` (by columns `x[(k0 + k)·rows + r + i]`) for `k < kc`, inside `x`
            // because `r + n <= rows`, `k0 + kc <= k_dim` and `x.len() >= rows·k_dim`; the panel reads
            // `weights[..kc·T]` (asserted); the sums start from `T` values at `src + i·src_stride` and go to
            // `dst + i·dst_stride`: rows `r + i` of `y` at `j0` (a whole panel: `j0 + T <= o_dim`,
            // `r + n <= rows`), the bias (`T` values when `w == T`, asserted) or `ZEROS` with stride 0, or
            // `sums[..n·T]` (`n·T <= MAX_SUMS` for every tile of `isa`). Every load of a tile comes before its
            // first store, so `src` may be `dst`.
            unsafe {
                tile(
                    isa,
                    T,
                    n,
                    by_cols,
                    Io {
                        x: xs,
                        stride,
                        p: weights.as_ptr(),
                        kc,
                        src,
                        src_stride,
                        dst,
                        dst_stride,
                    },
                )
            };
            if w < T {
                for (i, s) in sums.chunks_exact(T).take(n).enumerate() {
                    let at = (r + i) * o_dim + j0;
                    y[at..at + w].copy_from_slice(&s[..w]);
                }
            }
            r += n;
        }
        true
    }

    pub(super) fn sparse_rows<const T: usize>(
        terms: super::Terms<'_>,
        p: Panel<'_>,
        start: Start<'_>,
        y: &mut [f32],
        r: usize,
        o_dim: usize,
    ) -> bool {
        if T != 64 || !zmm() {
            return false;
        }
        let super::Terms {
            offs,
            vals,
            stride,
            n,
            len,
        } = terms;
        let Panel { weights, kc, j0, w } = p;
        // The bounds the kernel relies on.
        assert!(w == T && j0 + T <= o_dim, "a whole panel inside the rows");
        assert!(kc > 0 && weights.len() >= kc * T, "a whole panel");
        assert!(
            (1..=super::SPARSE_ROWS).contains(&n)
                && len <= stride
                && offs.len() >= (n - 1) * stride + len
                && vals.len() >= (n - 1) * stride + len,
            "every row's terms"
        );
        let at = r * o_dim + j0;
        assert!(y.len() >= at + (n - 1) * o_dim + T, "the group's rows of y");
        if let Start::Bias(b) = start {
            assert!(b.len() >= T, "a bias for every output of the panel");
        }
        let yp = y.as_mut_ptr();
        let (src, src_stride) = match start {
            Start::Bias(b) => (b.as_ptr(), 0),
            Start::Zero => (ZEROS.as_ptr(), 0),
            // SAFETY: `at + (n − 1)·o_dim + T <= y.len()` (asserted above).
            Start::Y => (unsafe { yp.add(at) }.cast_const(), o_dim),
        };
        let sio = SparseIo {
            offs: offs.as_ptr(),
            vals: vals.as_ptr(),
            stride,
            len,
            p: weights.as_ptr(),
            // A term's offset is clamped to the panel's last input row.
            max_off: (kc - 1) * T,
            src,
            src_stride,
            // SAFETY: as above.
            dst: unsafe { yp.add(at) },
            dst_stride: o_dim,
        };
        // SAFETY: the CPU has AVX-512F and FMA (`zmm()`); the kernel reads `offs` and `vals` at `i·stride + t` for
        // `i < n`, `t < len <= stride` (inside them, asserted), the panel at
        // offsets at most `(kc − 1)·T` plus `T` floats (`weights.len() >= kc·T`, asserted), `T` starting sums a
        // row at `src + i·src_stride` (the bias with `T` values, `ZEROS`, or rows of `y`) and writes `T` sums a row
        // at `dst + i·o_dim`, rows `r + i < r + n` of `y` inside it (asserted). Every load of a row's sums comes
        // before its store, so `src` may be `dst`.
        unsafe {
            match n {
                1 => zmm_sparse::<1>(sio),
                2 => zmm_sparse::<2>(sio),
                3 => zmm_sparse::<3>(sio),
                4 => zmm_sparse::<4>(sio),
                _ => unreachable!("a group of {n} rows"),
            }
        }
        true
    }

    /// Where [`zmm_sparse`] reads and writes: row `i`'s `len` terms at `offs`, `vals` + `i·stride`, the packed panel `p` (term offsets
    /// clamped to `max_off`), row `i`'s 64 starting sums at `src + i·src_stride` and final sums at
    /// `dst + i·dst_stride`.
    #[derive(Clone, Copy)]
    struct SparseIo {
        offs: *const u32,
        vals: *const f32,
        stride: usize,
        len: usize,
        p: *const f32,
        max_off: usize,
        src: *const f32,
        src_stride: usize,
        dst: *mut f32,
        dst_stride: usize,
    }

    /// `R` rows × 64 sums (4 vectors of 16 a row) through `len` steps of one term a row:
    /// `s[i][v] = fma(value, p[offset + 16·v..], s[i][v])`, terms in list order.
    ///
    /// # Safety
    /// AVX-512F and FMA present; `len` values at `offs` and `vals` + `i·stride`, `p[..max_off + 64]` and 64 floats at `src + i·src_stride`
    /// valid to read, 64 floats at `dst + i·dst_stride` valid to write, for `i < R`.
    #[target_feature(enable = "avx512f,fma")]
    unsafe fn zmm_sparse<const R: usize>(io: SparseIo) {
        const L: usize = 16;
        let SparseIo {
            offs,
            vals,
            stride,
            len,
            p,
            max_off,
            src,
            src_stride,
            dst,
            dst_stride,
        } = io;
        let mut s: [[__m512; 4]; R] = [[_mm512_setzero_ps(); 4]; R];
        for (i, row) in s.iter_mut().enumerate() {
            for (v, acc) in row.iter_mut().enumerate() {
                // SAFETY: inside row `i`'s 64 starting sums.
                *acc = unsafe { _mm512_loadu_ps(src.add(i * src_stride + v * L)) };
            }
        }
        for t in 0..len {
            for (i, row) in s.iter_mut().enumerate() {
                // SAFETY: `t < len`, `i < R`: row `i`'s `t`-th term.
                let (off, value) =
                    unsafe { (*offs.add(i * stride + t), *vals.add(i * stride + t)) };
                let q = p.wrapping_add((off as usize).min(max_off));
                let a = _mm512_set1_ps(value);
                for (v, acc) in row.iter_mut().enumerate() {
                    // SAFETY: the offset is at most `max_off`, and `p[..max_off + 64]` is valid.
                    *acc = _mm512_fmadd_ps(a, unsafe { _mm512_loadu_ps(q.add(v * L)) }, *acc);
                }
            }
        }
        for (i, row) in s.iter().enumerate() {
            for (v, &acc) in row.iter().enumerate() {
                // SAFETY: inside row `i`'s 64 final sums.
                unsafe { _mm512_storeu_ps(dst.add(i * dst_stride + v * L), acc) };
            }
        }
    }

    /// [`super::compact_nonzero`] with AVX-512 compress instructions; `None` without AVX-512F.
    pub(super) fn compact_nonzero(
        x: &[f32],
        t: u32,
        offs: &mut [u32],
        vals: &mut [f32],
    ) -> Option<usize> {
        if !is_x86_feature_detected!("avx512f") {
            return None;
        }
        // SAFETY: the CPU has AVX-512F; the kernel reads `x[..x.len()]` (a masked load past a whole vector) and
        // stores whole vectors of 16 at counts at most `x.len()`, inside `offs` and `vals` (the caller asserted
        // `x.len() + 16` slots each).
        Some(unsafe { zmm_compact(x.as_ptr(), x.len(), t, offs.as_mut_ptr(), vals.as_mut_ptr()) })
    }

    /// The compaction of [`compact_nonzero`]: 16 entries at a time, `x != 0` (unordered or not equal: NaN kept,
    /// ±0 dropped) as a mask, the values and offsets compressed in registers and stored as whole vectors at the
    /// count so far.
    ///
    /// # Safety
    /// AVX-512F present; `x[..n]` valid to read, `offs[..n + 16]` and `vals[..n + 16]` valid to write.
    #[target_feature(enable = "avx512f")]
    unsafe fn zmm_compact(
        x: *const f32,
        n: usize,
        t: u32,
        offs: *mut u32,
        vals: *mut f32,
    ) -> usize {
        let lanes = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let tv = _mm512_set1_epi32(t as i32);
        let mut idx = _mm512_mullo_epi32(lanes, tv);
        let step = _mm512_set1_epi32(16 * t as i32);
        let (mut c, mut k) = (0usize, 0usize);
        while k < n {
            let m: __mmask16 = if n - k >= 16 {
                0xffff
            } else {
                ((1u32 << (n - k)) - 1) as u16
            };
            // SAFETY: lanes past `n` are masked off (not read).
            let v = unsafe { _mm512_maskz_loadu_ps(m, x.add(k)) };
            let nz = _mm512_mask_cmp_ps_mask::<_CMP_NEQ_UQ>(m, v, _mm512_setzero_ps());
            // SAFETY: `c <= k < n`, so 16 slots from `c` are inside `n + 16`.
            unsafe {
                _mm512_storeu_ps(vals.add(c), _mm512_maskz_compress_ps(nz, v));
                _mm512_storeu_epi32(offs.add(c).cast(), _mm512_maskz_compress_epi32(nz, idx));
            }
            c += nz.count_ones() as usize;
            idx = _mm512_add_epi32(idx, step);
            k += 16;
        }
        c
    }

    /// The CPU has AVX-512F and FMA.
    fn zmm() -> bool {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("fma")
    }

    /// The CPU has AVX2 and FMA.
    fn ymm() -> bool {
        is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
    }

    /// Where a tile reads and writes: rows `i` of `x` at `x + i·stride` (inputs `0..kc`; by columns, input `k` at
    /// `x + k·stride`), the packed panel `p`
    /// (`kc × t`), the starting sums of row `i` at `src + i·src_stride` and its final sums to `dst + i·dst_stride`
    /// (`t` values each).
    #[derive(Clone, Copy)]
    struct Io {
        x: *const f32,
        stride: usize,
        p: *const f32,
        kc: usize,
        src: *const f32,
        src_stride: usize,
        dst: *mut f32,
        dst_stride: usize,
    }

    /// Zero starting sums for a tile of up to 64 outputs (read with stride 0).
    static ZEROS: [f32; 64] = [0.0; 64];

    /// One tile of `n` rows × `t` sums: the kernel for `isa`, `t`, `n` and `x`'s layout (`by_cols`), monomorphised.
    ///
    /// # Safety
    /// The CPU has `isa`'s features; for `i < n`, `k < kc`: `x + i·stride + k` (by columns `x + k·stride + i`),
    /// `p[..kc·t]` and `t` floats at
    /// `src + i·src_stride` are valid to read, `t` floats at `dst + i·dst_stride` valid to write; `n` is at most
    /// the tile rows of `isa` and `t`.
    unsafe fn tile(isa: Isa, t: usize, n: usize, by_cols: bool, io: Io) {
        macro_rules! rows {
            ($kernel:ident, $nv:literal, $($r:literal)+) => {
                match (n, by_cols) {
                    // SAFETY: the caller's contract, with `n` rows.
                    $(($r, false) => unsafe { $kernel::<$r, $nv, false>(io) },)+
                    // SAFETY: as above, `x` by columns.
                    $(($r, true) => unsafe { $kernel::<$r, $nv, true>(io) },)+
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

    /// A tile kernel for one instruction set: `R` rows × `NV` vectors of `$lanes` sums in registers through `kc`
    /// inputs, from `src`'s rows to `dst`'s: `s[i][v] = fma(x[i, k], p[k, v], s[i][v])` for `k` ascending. The
    /// AVX-512 and AVX2 kernels are this one text with their own vector type and intrinsics, so that both keep the
    /// same order of operations (the bits) and the same safety argument.
    macro_rules! tile_kernel {
        ($name:ident, $features:literal, $what:literal, $lanes:literal, $vec:ty,
         $zero:ident, $load:ident, $store:ident, $set1:ident, $fma:ident) => {
            #[doc = concat!("The tile kernel with vectors of ", $lanes, " (", $what, ").")]
            ///
            /// # Safety
            #[doc = concat!(
                $what, " present; for `i < R`, `k < kc`: `x + i·stride + k` (`BY_COLS`: `x + k·stride + i`), ",
                "`p[..kc·", $lanes, "·NV]` and `", $lanes, "·NV` floats at `src + i·src_stride` valid to read, `",
                $lanes, "·NV` floats at `dst + i·dst_stride` valid to write."
            )]
            #[target_feature(enable = $features)]
            unsafe fn $name<const R: usize, const NV: usize, const BY_COLS: bool>(io: Io) {
                const L: usize = $lanes;
                let Io {
                    x,
                    stride,
                    p,
                    kc,
                    src,
                    src_stride,
                    dst,
                    dst_stride,
                } = io;
                let mut s: [[$vec; NV]; R] = [[$zero(); NV]; R];
                for (i, row) in s.iter_mut().enumerate() {
                    for (v, acc) in row.iter_mut().enumerate() {
                        // SAFETY: `src + i·src_stride + v·L` is inside row `i`'s `L·NV` starting sums.
                        *acc = unsafe { $load(src.add(i * src_stride + v * L)) };
                    }
                }
                for k in 0..kc {
                    let mut q: [$vec; NV] = [$zero(); NV];
                    for (v, qv) in q.iter_mut().enumerate() {
                        // SAFETY: `p[(k·NV + v)·L..][..L]` lies in `p[..kc·L·NV]`.
                        *qv = unsafe { $load(p.add((k * NV + v) * L)) };
                    }
                    for (i, row) in s.iter_mut().enumerate() {
                        let at = if BY_COLS {
                            k * stride + i
                        } else {
                            i * stride + k
                        };
                        // SAFETY: `x + i·stride + k` (by columns `x + k·stride + i`) with `i < R`, `k < kc`.
                        let a = $set1(unsafe { *x.add(at) });
                        for (acc, &qv) in row.iter_mut().zip(&q) {
                            *acc = $fma(a, qv, *acc);
                        }
                    }
                }
                for (i, row) in s.iter().enumerate() {
                    for (v, &acc) in row.iter().enumerate() {
                        // SAFETY: `dst + i·dst_stride + v·L` is inside row `i`'s `L·NV` final sums.
                        unsafe { $store(dst.add(i * dst_stride + v * L), acc) };
                    }
                }
            }
        };
    }

    tile_kernel!(
        zmm_tile,
        "avx512f,fma",
        "AVX-512F and FMA",
        16,
        __m512,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps
    );
    tile_kernel!(
        ymm_tile,
        "avx2,fma",
        "AVX2 and FMA",
        8,
        __m256,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_set1_ps,
        _mm256_fmadd_ps
    );
}
