//! The arithmetic shared by scoring and training. Each output of a kernel is summed in one fixed order.

use super::tiles::{self, Panel, Start};
use super::{Activation, BatchNorm, Dense, LayerNorm, BATCH_NORM_EPS, LAYER_NORM_EPS};

pub use super::softmax::exp;

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// `out[j] += a · x[j]`.
pub fn axpy(a: f32, x: &[f32], out: &mut [f32]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o += a * v;
    }
}
}

/// `a · b + c` rounded once (IEEE 754's fusedMultiplyAdd, `f32::mul_add`): the term of every product kernel. It
/// is the same number on every CPU — one FMA instruction in the AVX2+FMA and AVX-512 clones, a call to the
/// correctly rounded `fmaf` of Rust's `compiler_builtins` in the baseline clone (slow: CPUs without FMA,
/// `LTR_SIMD=baseline|avx2`) — so a kernel's bits do not depend on the clone that runs it, and a product needs
/// half the arithmetic instructions of a multiply followed by an add.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    a.mul_add(b, c)
}

/// `y = x W + b` for the rows of `x` (`w.inputs` wide) into `y` (`w.outputs` wide). Row `r`, output `j`:
/// `b[j] + Σ_k x[r,k] W[k,j]` added with `k` ascending (four rows share each read of a weight row).
pub fn affine(x: &[f32], w: &Dense, y: &mut [f32]) {
    matmul_rows(x, &w.weights, Some(&w.bias), y, w.inputs, w.outputs);
}

/// `y = x M (+ bias)` with `M` row-major `[k_dim][o_dim]`; each output's terms added with `k` ascending, from
/// the bias (or 0), one fused multiply-add a term ([`fma`]: the same bits on every CPU). Blocked like a BLAS
/// product without changing any output's chain: `M` is packed a panel of `T` outputs × `PANEL`` / T` inputs at
/// a time (32 KiB, in L1 while every row of the call passes over it), and a tile of `TILE_ROWS` rows × `T`
/// running sums stays in registers through the panel's inputs (each weight loaded once for four rows), starting
/// from the bias (first panel of `k`) or from the sums the previous panel stored in `y` (a stored f32 reloads
/// exactly); the rows past the last whole tile go one at a time. `T` is 64 with AVX-512 (16 registers of sums) and
/// 16 otherwise (AVX2: 8); outputs past the last whole panel are padded with zeros in the pack and their sums
/// discarded. From `LTR_SIMD`'s `avx2+fma` level up, the tile is the explicit SIMD one of `tiles.rs` (6 rows × 64
/// sums with AVX-512, 12 × 32 for panels of 32, 6 × 16 with AVX2) and the safe loops are the fallback. A single
/// output (the output layer) goes 16 rows at a time through a transposed copy. Every output is the same chain
/// whatever the tile, panel or CPU, so the blocking changes no bit. A whole panel's tile reads its starting sums
/// from `y` (or the bias) and stores them back there itself; [`matmul_packed`] takes `M` packed beforehand.
pub fn matmul_rows(
    x: &[f32],
    m: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    k_dim: usize,
    o_dim: usize,
) {
    let rows = y.len().checked_div(o_dim).unwrap_or(0);
    if rows == 0 {
        return;
    }
    let wide = ltr_data::simd_level() >= ltr_data::SimdLevel::Avx512;
    matmul_clone(x, m, None, bias, y, k_dim, o_dim, rows, wide, simd_tiles());
}

mod packed;
mod sparse;
pub use packed::{matmul_packed, Packed};
use packed::{pack, panel_inputs};
pub use sparse::matmul_packed_sparse;

/// Whether the products use the explicit SIMD tiles of [`tiles`]: from `LTR_SIMD`'s `avx2+fma` level up (AVX-512
/// tiles for panels of 64 and 32 outputs, AVX2 ones for 16), so that `LTR_SIMD=baseline|avx2` keeps the safe
/// kernels everywhere.
// pub for the tests in tests/unit/neural.rs (the tiles the products use by default); not API.
#[doc(hidden)]
pub fn simd_tiles() -> bool {
    ltr_data::simd_level() >= ltr_data::SimdLevel::Avx2Fma
}

/// [`matmul_rows`] with the panel width `wide` picks and the choice of tiles given: `simd` true uses the explicit
/// SIMD tiles where the CPU has them ([`simd_tiles`] is what [`matmul_rows`] takes), false the safe kernels only
/// (the tests' oracle).
// pub for the tests in tests/unit/neural.rs; not API.
#[doc(hidden)]
#[allow(clippy::too_many_arguments)]
pub fn matmul_with(
    x: &[f32],
    m: &[f32],
    bias: Option<&[f32]>,
    y: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    rows: usize,
    wide: bool,
    simd: bool,
) {
    matmul_clone(x, m, None, bias, y, k_dim, o_dim, rows, wide, simd);
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx2+fma" if Avx512, "x86_64+avx2+fma" if Avx2Fma);
/// [`matmul_rows`] in one instruction-set clone: `wide` picks panels of 64 outputs (AVX-512's registers hold a tile
/// of 4 rows × 64 sums), else 16 (AVX2's: 4 × 16); `simd`, the explicit SIMD tiles where the CPU has them;
/// `packed`, `M`'s panels packed beforehand ([`Packed`]; `m` is then not read).
#[allow(clippy::too_many_arguments)]
fn matmul_clone(
    x: &[f32],
    m: &[f32],
    packed: Option<&[f32]>,
    bias: Option<&[f32]>,
    y: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    rows: usize,
    wide: bool,
    simd: bool,
) {
    if o_dim == 1 {
        dot_rows(x, m, bias.map_or(0.0, |b| b[0]), y, k_dim);
    } else {
        by_width(x, false, m, packed, bias, y, k_dim, o_dim, rows, wide, false, simd);
    }
}
}

/// [`panels`] at the width the clone and `o_dim` call for: 64 outputs with AVX-512 (32 when there are at most 32:
/// the attention heads' products, which a 64-wide panel would pad by half), else 16.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn by_width(
    x: &[f32],
    by_cols: bool,
    m: &[f32],
    packed: Option<&[f32]>,
    bias: Option<&[f32]>,
    y: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    rows: usize,
    wide: bool,
    from_y: bool,
    simd: bool,
) {
    if wide && o_dim > 32 {
        panels::<64>(
            x, by_cols, m, packed, bias, y, k_dim, o_dim, rows, from_y, simd,
        );
    } else if wide {
        panels::<32>(
            x, by_cols, m, packed, bias, y, k_dim, o_dim, rows, from_y, simd,
        );
    } else {
        panels::<16>(
            x, by_cols, m, packed, bias, y, k_dim, o_dim, rows, from_y, simd,
        );
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx2+fma" if Avx512, "x86_64+avx2+fma" if Avx2Fma);
/// `y += x M` in one instruction-set clone: [`matmul_rows`]'s panels with every output's chain starting from the
/// value in `y` (`k` ascending, one [`fma`] a term); with `by_cols`, `x` is stored transposed (`x[r, k]` at
/// `x[k · rows + r]`), which only the SIMD tiles read ([`tiles::available`] must hold).
#[allow(clippy::too_many_arguments)]
fn matmul_acc_dispatch(
    x: &[f32],
    by_cols: bool,
    m: &[f32],
    y: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    rows: usize,
    wide: bool,
    simd: bool,
) {
    by_width(x, by_cols, m, None, None, y, k_dim, o_dim, rows, wide, true, simd);
}
}

/// Floats in a packed panel of [`matmul_rows`] (32 KiB).
const PANEL: usize = 8192;

/// Rows of [`matmul_rows`]'s register tile.
const TILE_ROWS: usize = 4;

/// [`matmul_rows`] with panels of `T` outputs; with `from_y`, every chain starts from the value in `y` (no bias);
/// with `simd`, each panel's rows go through [`tiles::panel_rows`] when the CPU has its tiles (which alone read an
/// `x` stored by columns, `by_cols`); with `packed`, the
/// panels are read from `M` packed beforehand ([`Packed`]) instead of packed here.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn panels<const T: usize>(
    x: &[f32],
    by_cols: bool,
    m: &[f32],
    packed: Option<&[f32]>,
    bias: Option<&[f32]>,
    y: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    rows: usize,
    from_y: bool,
    simd: bool,
) {
    let kc = panel_inputs(k_dim, T);
    // A product of few inputs (an attention head's) packs and zeroes only what it uses; the panel starts on a
    // 64-byte line, so that no vector load of it straddles two.
    let mut buf = vec![
        0f32;
        if packed.is_some() {
            0
        } else {
            kc.min(k_dim) * T + 16
        }
    ];
    let off = buf.as_ptr().align_offset(64).min(16);
    let nj = o_dim.div_ceil(T);
    let mut k0 = 0;
    loop {
        let k1 = (k0 + kc).min(k_dim);
        let mut j0 = 0;
        while j0 < o_dim {
            let w = T.min(o_dim - j0);
            let len = (k1 - k0) * T;
            let panel: &[f32] = match packed {
                // Panels in order of `k0`, then `j0`: those of the earlier inputs fill `k0 · nj · T` floats.
                Some(p) => {
                    let at = k0 * nj * T + j0 / T * len;
                    &p[at..at + len]
                }
                None => {
                    let panel = &mut buf[off..off + len];
                    pack(m, o_dim, k0..k1, j0, T, panel);
                    panel
                }
            };
            if simd {
                let p = Panel {
                    weights: panel,
                    kc: k1 - k0,
                    j0,
                    w,
                };
                let start = match bias {
                    _ if k0 > 0 || from_y => Start::Y,
                    Some(b) => Start::Bias(&b[j0..j0 + w]),
                    None => Start::Zero,
                };
                if tiles::panel_rows::<T>(x, by_cols, k_dim, k0, p, start, y, o_dim, rows) {
                    j0 += w;
                    continue;
                }
            }
            assert!(!by_cols, "x by columns only through the SIMD tiles");
            // Four rows at a time: each weight of the panel, loaded once, goes into four rows' sums.
            let mut r = 0;
            while r + TILE_ROWS <= rows {
                let start = |i: usize| {
                    let mut acc = [0f32; T];
                    if k0 > 0 || from_y {
                        let at = (r + i) * o_dim + j0;
                        copy_in(&mut acc, &y[at..at + w]);
                    } else if let Some(b) = bias {
                        copy_in(&mut acc, &b[j0..j0 + w]);
                    }
                    acc
                };
                let (mut a0, mut a1, mut a2, mut a3) = (start(0), start(1), start(2), start(3));
                let xs = |i: usize| &x[(r + i) * k_dim + k0..(r + i) * k_dim + k1];
                let inputs = xs(0).iter().zip(xs(1)).zip(xs(2)).zip(xs(3));
                for ((((&v0, &v1), &v2), &v3), p) in inputs.zip(panel.chunks_exact(T)) {
                    let p: &[f32; T] = p.try_into().expect("a panel row");
                    let sums = a0.iter_mut().zip(&mut a1).zip(&mut a2).zip(&mut a3);
                    for ((((o0, o1), o2), o3), &q) in sums.zip(p) {
                        *o0 = fma(v0, q, *o0);
                        *o1 = fma(v1, q, *o1);
                        *o2 = fma(v2, q, *o2);
                        *o3 = fma(v3, q, *o3);
                    }
                }
                for (i, acc) in [a0, a1, a2, a3].iter().enumerate() {
                    let at = (r + i) * o_dim + j0;
                    copy_out(&mut y[at..at + w], acc);
                }
                r += TILE_ROWS;
            }
            for r in r..rows {
                let yr = &mut y[r * o_dim + j0..r * o_dim + j0 + w];
                let mut acc = [0f32; T];
                if k0 > 0 || from_y {
                    copy_in(&mut acc, yr);
                } else if let Some(b) = bias {
                    copy_in(&mut acc, &b[j0..j0 + w]);
                }
                let xr = &x[r * k_dim + k0..r * k_dim + k1];
                for (&v, p) in xr.iter().zip(panel.chunks_exact(T)) {
                    let p: &[f32; T] = p.try_into().expect("a panel row");
                    for (o, &q) in acc.iter_mut().zip(p) {
                        *o = fma(v, q, *o);
                    }
                }
                copy_out(yr, &acc);
            }
            j0 += w;
        }
        k0 = k1;
        if k0 >= k_dim {
            break;
        }
    }
}

/// `src` (at most `T` values) into the start of `dst`: a whole panel row as one fixed-size move, not a call.
#[inline(always)]
fn copy_in<const T: usize>(dst: &mut [f32; T], src: &[f32]) {
    if src.len() == T {
        dst.copy_from_slice(&src[..T]);
    } else {
        dst[..src.len()].copy_from_slice(src);
    }
}

/// The start of `src` into `dst` (at most `T` values), as [`copy_in`].
#[inline(always)]
fn copy_out<const T: usize>(dst: &mut [f32], src: &[f32; T]) {
    if dst.len() == T {
        dst[..T].copy_from_slice(src);
    } else {
        let n = dst.len();
        dst.copy_from_slice(&src[..n]);
    }
}

/// `dW += aᵀ dy` for the rows of `a` (`k_dim` wide) and `dy` (`o_dim` wide), `dW` row-major `[k_dim][o_dim]`:
/// `dW[k,j]` gets `a[r,k] · dy[r,j]` added ([`fma`]) for every row `r` with `a[r,k] ≠ 0`, rows ascending — the
/// chain a row-at-a-time fused `axpy` of each nonzero input makes (a zero input, ReLU's or dropout's, adds
/// nothing, not even a signed zero or the NaN of `0 · ∞`). The nonzero inputs are listed per `k` (rows ascending) in one pass
/// over `a`; then a strip of `dW`'s row `k`, 128 outputs with AVX-512 and 64 otherwise, stays in registers
/// while the listed rows of `dy` pass, strip by strip, so that a strip of `dy` is reused by every `k`.
///
/// An `a` with at most three quarters zeros (normalised inputs, attention outputs, ReLU's output after dropout)
/// and a finite `dy` skips the lists: `aᵀ` is multiplied by `dy` with [`matmul_rows`]'s panels (the SIMD tiles read
/// `a` by columns; the safe kernels a transposed copy), each entry's chain starting from `dW` and taking every row in order, zero inputs included. A zero input's term
/// `±0 · d` (d finite) leaves a sum `s` as it is unless `s` is a zero, where it may turn −0 into +0; the next
/// nonzero term gives both chains the same sum again. So the two chains agree at every step, or stand at +0
/// (products) and −0 (lists). The lists' chain never stands at −0 when no `dW` entry starts at −0 and no term
/// underflows to −0: an exact zero sum of nonzero values rounds to +0, and when the smallest nonzero `|a|` times
/// the smallest nonzero `|dy|` is at least 2⁻¹⁰¹ every term and sum is a whole multiple of 2⁻¹⁴⁹ (the spacing
/// of the smallest f32), so a nonzero sum never rounds to a zero. Then the product is the lists' chain bit for
/// bit. Otherwise `dW` is copied first, and if any entry ends at +0 it is restored and the lists are used.
///
/// A single output (`o_dim` 1) goes row by row instead of by lists: each nonzero input's term is added to its
/// `dW` entry and a zero input's is not (a select, so that the entries advance together in SIMD registers), the
/// same chains without building the lists.
pub fn weight_gradient(a: &[f32], dy: &[f32], dw: &mut [f32], k_dim: usize, o_dim: usize) {
    weight_gradient_known(a, dy, dw, k_dim, o_dim, &mut false);
}

/// [`weight_gradient`] told whether `dw` holds no −0 (`no_neg_zero` true: as after zeroing with +0, or after a
/// call that left it true), which spares the product path its scan of `dw` for −0; the same bits whatever the
/// flag, as long as it is only true when no entry is −0. On return the flag says whether that still holds: true
/// when `dw` held no −0 and every nonzero product was at least 2⁻¹⁰¹ (then no term underflows and an exact zero
/// sum rounds to +0, so neither chain makes a −0), false when not known.
pub fn weight_gradient_known(
    a: &[f32],
    dy: &[f32],
    dw: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    no_neg_zero: &mut bool,
) {
    let wide = ltr_data::simd_level() >= ltr_data::SimdLevel::Avx512;
    gradient_flagged(a, dy, dw, k_dim, o_dim, wide, simd_tiles(), no_neg_zero);
}

/// The bits of −0.
const NEG_ZERO: u32 = 0x8000_0000;

/// 2⁻¹⁰¹: when the smallest nonzero `|a|` times the smallest nonzero `|dy|` is at least this, every product of
/// [`weight_gradient`] is a whole multiple of 2⁻¹⁴⁹ (an f32 of exponent `e` is a multiple of `2^(e − 23)`).
const FINE: f64 = 1.0 / (1u128 << 101) as f64;

/// What [`weight_gradient`] needs to know of an array, from one pass: its zeros and the bits of its smallest
/// nonzero and largest `|v|` (the bits of a non-negative f32 order as its values do).
struct Scan {
    zeros: usize,
    min_nonzero_bits: u32,
    max_bits: u32,
}

impl Scan {
    fn of(x: &[f32]) -> Self {
        let (zeros, min_nonzero_bits, max_bits) = scan_dispatch(x);
        Self {
            zeros,
            min_nonzero_bits,
            max_bits,
        }
    }

    /// Every value finite (no ±∞, no NaN).
    fn finite(&self) -> bool {
        self.max_bits < 0x7f80_0000
    }

    /// The smallest nonzero `|v|` (+∞ when all are zero: no term is then nonzero).
    fn min_nonzero(&self) -> f32 {
        if self.min_nonzero_bits == u32::MAX {
            f32::INFINITY
        } else {
            f32::from_bits(self.min_nonzero_bits)
        }
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx2+fma" if Avx512, "x86_64+avx2+fma" if Avx2Fma);
/// [`Scan::of`] in one instruction-set clone: 16 lanes of counts, minima and maxima, combined at the end.
fn scan_dispatch(x: &[f32]) -> (usize, u32, u32) {
    let (mut zeros, mut lo, mut hi) = ([0u32; 16], [u32::MAX; 16], [0u32; 16]);
    let mut chunks = x.chunks_exact(16);
    for c in chunks.by_ref() {
        for (((z, l), h), v) in zeros.iter_mut().zip(&mut lo).zip(&mut hi).zip(c) {
            let b = v.to_bits() & 0x7fff_ffff;
            *z += u32::from(b == 0);
            *l = (*l).min(if b == 0 { u32::MAX } else { b });
            *h = (*h).max(b);
        }
    }
    let mut n = zeros.iter().map(|&z| z as usize).sum::<usize>();
    let (mut l, mut h) = (lo.into_iter().min().unwrap_or(u32::MAX), hi.into_iter().max().unwrap_or(0));
    for v in chunks.remainder() {
        let b = v.to_bits() & 0x7fff_ffff;
        n += usize::from(b == 0);
        if b != 0 {
            l = l.min(b);
        }
        h = h.max(b);
    }
    (n, l, h)
}
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx2+fma" if Avx512, "x86_64+avx2+fma" if Avx2Fma);
/// Whether some entry of `x` is −0.
fn has_neg_zero(x: &[f32]) -> bool {
    x.iter().fold(false, |any, v| any | (v.to_bits() == NEG_ZERO))
}
}

/// `m` (`rows × cols`, row-major) transposed, `cols × rows`: blocks of 16 rows, so that the writes run along
/// rows of the result and the 16 rows read stay in cache.
pub fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0f32; rows * cols];
    for r0 in (0..rows).step_by(16) {
        let r1 = (r0 + 16).min(rows);
        for c in 0..cols {
            let out = &mut t[c * rows + r0..c * rows + r1];
            for (o, r) in out.iter_mut().zip(r0..r1) {
                *o = m[r * cols + c];
            }
        }
    }
    t
}

/// Whether [`by_width`]'s panels for `o_dim` outputs (AVX-512's when `wide`) have SIMD tiles on this CPU.
fn tiles_for(wide: bool, o_dim: usize) -> bool {
    match () {
        _ if wide && o_dim > 32 => tiles::available::<64>(),
        _ if wide => tiles::available::<32>(),
        _ => tiles::available::<16>(),
    }
}

/// [`weight_gradient`] with the wide strips (`wide`) or the narrow ones, and the choice of tiles for its products
/// given (`simd`, as [`matmul_with`]).
// pub for the tests in tests/unit/neural.rs; not API.
#[doc(hidden)]
pub fn weight_gradient_with(
    a: &[f32],
    dy: &[f32],
    dw: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    wide: bool,
    simd: bool,
) {
    gradient_flagged(a, dy, dw, k_dim, o_dim, wide, simd, &mut false);
}

/// [`weight_gradient_with`] with [`weight_gradient_known`]'s flag.
#[allow(clippy::too_many_arguments)]
fn gradient_flagged(
    a: &[f32],
    dy: &[f32],
    dw: &mut [f32],
    k_dim: usize,
    o_dim: usize,
    wide: bool,
    simd: bool,
    no_neg_zero: &mut bool,
) {
    let rows = dy.len().checked_div(o_dim).unwrap_or(0);
    if rows == 0 || k_dim == 0 {
        return;
    }
    let a = &a[..rows * k_dim];
    let clean = std::mem::replace(no_neg_zero, false);
    if o_dim == 1 {
        single_output(a, dy, dw, k_dim);
        return;
    }
    let (a_scan, dy_scan) = (Scan::of(a), Scan::of(dy));
    let fine = f64::from(a_scan.min_nonzero()) * f64::from(dy_scan.min_nonzero()) >= FINE;
    // At least half of `a` zeros, with the product path's conditions: the same chains over the nonzero rows only.
    let no_neg_zero_yet = |dw: &[f32]| clean || !has_neg_zero(dw);
    if simd
        && wide
        && 2 * a_scan.zeros >= a.len()
        && dy_scan.finite()
        && fine
        && no_neg_zero_yet(dw)
        && sparse::gradient_sparse(a, dy, dw, rows, k_dim, o_dim)
    {
        *no_neg_zero = true;
        return;
    }
    if o_dim >= 16 && 4 * a_scan.zeros <= 3 * a.len() && dy_scan.finite() {
        // Every term, zero inputs included, as a product `dW += aᵀ dy` from dW (see above): the SIMD tiles read `a`
        // by columns as `aᵀ`, the safe kernels a transposed copy.
        let by_cols = simd && tiles_for(wide, o_dim);
        let copy = if by_cols {
            Vec::new()
        } else {
            transpose(a, rows, k_dim)
        };
        let at = if by_cols { a } else { &copy[..] };
        if fine && (clean || !has_neg_zero(dw)) {
            matmul_acc_dispatch(at, by_cols, dy, dw, rows, o_dim, k_dim, wide, simd);
            *no_neg_zero = true;
            return;
        }
        let dw0 = dw.to_vec();
        matmul_acc_dispatch(at, by_cols, dy, dw, rows, o_dim, k_dim, wide, simd);
        if !dw.iter().any(|v| v.to_bits() == 0) {
            return;
        }
        dw.copy_from_slice(&dw0);
    }
    // Per k, the rows with a nonzero input and that input: a count, then a fill in row order.
    let mut start = vec![0usize; k_dim + 1];
    for ar in a.chunks_exact(k_dim).take(rows) {
        for (k, &v) in ar.iter().enumerate() {
            if v != 0.0 {
                start[k + 1] += 1;
            }
        }
    }
    for k in 0..k_dim {
        start[k + 1] += start[k];
    }
    let mut at = start.clone();
    let mut list = vec![(0u32, 0f32); start[k_dim]];
    for (r, ar) in a.chunks_exact(k_dim).take(rows).enumerate() {
        for (k, &v) in ar.iter().enumerate() {
            if v != 0.0 {
                list[at[k]] = (r as u32, v);
                at[k] += 1;
            }
        }
    }
    gradient_dispatch(dy, dw, &start, &list, o_dim, wide);
    *no_neg_zero = clean && fine;
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx2+fma" if Avx512, "x86_64+avx2+fma" if Avx2Fma);
/// [`weight_gradient`] for one output, in one instruction-set clone: rows in order, `dW[k]` takes `a[r,k] · dy[r]`
/// ([`fma`]) where `a[r,k] ≠ 0` and is kept where it is zero — the lists' chains, all `k` of a row at once.
fn single_output(a: &[f32], dy: &[f32], dw: &mut [f32], k_dim: usize) {
    for (ar, &d) in a.chunks_exact(k_dim).zip(dy) {
        for (w, &v) in dw.iter_mut().zip(ar) {
            let t = fma(v, d, *w);
            *w = if v != 0.0 { t } else { *w };
        }
    }
}
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx2+fma" if Avx512, "x86_64+avx2+fma" if Avx2Fma);
/// [`weight_gradient`] once the nonzero inputs are listed, in one instruction-set clone.
pub(super) fn gradient_dispatch(
    dy: &[f32],
    dw: &mut [f32],
    start: &[usize],
    list: &[(u32, f32)],
    o_dim: usize,
    wide: bool,
) {
    if wide {
        gradient_strips::<128>(dy, dw, start, list, o_dim);
    } else {
        gradient_strips::<64>(dy, dw, start, list, o_dim);
    }
}
}

/// [`weight_gradient`]'s strips of `S` outputs (then the outputs left, as one narrower strip).
#[inline(always)]
fn gradient_strips<const S: usize>(
    dy: &[f32],
    dw: &mut [f32],
    start: &[usize],
    list: &[(u32, f32)],
    o_dim: usize,
) {
    let k_dim = start.len() - 1;
    let mut j0 = 0;
    while j0 + S <= o_dim {
        for k in 0..k_dim {
            let row = &mut dw[k * o_dim + j0..k * o_dim + j0 + S];
            let mut acc: [f32; S] = row.try_into().expect("a strip");
            for &(r, v) in &list[start[k]..start[k + 1]] {
                let at = r as usize * o_dim + j0;
                let d: &[f32; S] = dy[at..at + S].try_into().expect("a strip");
                for (o, &q) in acc.iter_mut().zip(d) {
                    *o = fma(v, q, *o);
                }
            }
            row.copy_from_slice(&acc);
        }
        j0 += S;
    }
    if j0 < o_dim {
        for k in 0..k_dim {
            let row = &mut dw[k * o_dim + j0..(k + 1) * o_dim];
            for &(r, v) in &list[start[k]..start[k + 1]] {
                let at = r as usize * o_dim;
                for (o, &q) in row.iter_mut().zip(&dy[at + j0..at + o_dim]) {
                    *o = fma(v, q, *o);
                }
            }
        }
    }
}

/// Rows per block of [`dot_rows`].
const DOT_ROWS: usize = 16;

/// `y[r] = bias + Σ_k x[r, k] m[k]`, `k` ascending: blocks of [`DOT_ROWS`] rows transposed so that a block's
/// sums advance together.
#[inline(always)]
fn dot_rows(x: &[f32], m: &[f32], bias: f32, y: &mut [f32], k_dim: usize) {
    let mut t = vec![0f32; DOT_ROWS * k_dim];
    let done = y.len() / DOT_ROWS * DOT_ROWS;
    for (b, yb) in y.chunks_exact_mut(DOT_ROWS).enumerate() {
        let xb = &x[b * DOT_ROWS * k_dim..(b + 1) * DOT_ROWS * k_dim];
        for (r, row) in xb.chunks_exact(k_dim.max(1)).enumerate() {
            for (k, &v) in row.iter().enumerate() {
                t[k * DOT_ROWS + r] = v;
            }
        }
        let mut acc = [bias; DOT_ROWS];
        for (col, &w) in t.chunks_exact(DOT_ROWS).zip(m) {
            for (a, &v) in acc.iter_mut().zip(col) {
                *a = fma(v, w, *a);
            }
        }
        yb.copy_from_slice(&acc);
    }
    for (r, out) in y.iter_mut().enumerate().skip(done) {
        let xr = &x[r * k_dim..(r + 1) * k_dim];
        let mut acc = bias;
        for (&v, &w) in xr.iter().zip(m) {
            acc = fma(v, w, acc);
        }
        *out = acc;
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl" if Avx512, "x86_64+avx2" if Avx2);
/// Dropout's and ReLU's backward on `d` in place, in one pass, from a byte an entry (`codes`: bit 0 set where
/// dropout kept the entry, whose mask is then `keep`, else 0; bit 1 set where ReLU's output was at most 0): with
/// `keep`, `d · mask`; then, with `relu`, `+0` where bit 1 is set. The same products and zeros as the two passes
/// `d *= mask` and `if y <= 0 { d = 0 }`, without branches.
pub fn mask_backward(d: &mut [f32], codes: &[u8], keep: Option<f32>, relu: bool) {
    let both = d.iter_mut().zip(codes);
    match (keep, relu) {
        (Some(k), true) => both.for_each(|(g, &c)| {
            let v = *g * if c & 1 != 0 { k } else { 0.0 };
            *g = if c & 2 != 0 { 0.0 } else { v };
        }),
        (Some(k), false) => both.for_each(|(g, &c)| *g *= if c & 1 != 0 { k } else { 0.0 }),
        (None, true) => both.for_each(|(g, &c)| *g = if c & 2 != 0 { 0.0 } else { *g }),
        (None, false) => {}
    }
}
}

/// Apply `f` elementwise.
pub fn activate(f: Activation, x: &mut [f32]) {
    match f {
        Activation::Relu => relu(x),
        Activation::Tanh => x.iter_mut().for_each(|v| *v = v.tanh()),
        Activation::Sigmoid => x.iter_mut().for_each(|v| *v = 1.0 / (1.0 + (-*v).exp())),
        Activation::Identity => {}
    }
}

ltr_data::multiversioned! {
clones("x86_64+avx512f+avx512vl+avx2+fma" if Avx512, "x86_64+avx2+fma" if Avx2Fma);
/// ReLU in place (`max(v, 0)`, NaN to 0), in one instruction-set clone: a maximum is exact, so every clone gives
/// the same bits, and the wide ones take 8 or 16 values an instruction where the baseline takes 4.
fn relu(x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}
}

/// Normalise each `width`-wide row of `x` in place; with `stats`, record each row's (mean, 1/σ) and keep the
/// normalised values before γ, β in `stats.1` (what the backward pass needs).
pub fn layer_norm_rows(
    x: &mut [f32],
    width: usize,
    n: &LayerNorm,
    mut stats: Option<(&mut Vec<f32>, &mut Vec<f32>)>,
) {
    if let Some((rstd, xhat)) = stats.as_mut() {
        rstd.clear();
        xhat.clear();
    }
    for row in x.chunks_mut(width) {
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / width as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / width as f64;
        let rs = (1.0 / (var + LAYER_NORM_EPS).sqrt()) as f32;
        let m = mean as f32;
        for (j, v) in row.iter_mut().enumerate() {
            let h = (*v - m) * rs;
            if let Some((_, xhat)) = stats.as_mut() {
                xhat.push(h);
            }
            *v = h * n.gamma[j] + n.beta[j];
        }
        if let Some((rstd, _)) = stats.as_mut() {
            rstd.push(rs);
        }
    }
}

/// `1 / sqrt(var + ε)` of batch normalisation, per component, rounded to f32 once (inference and training
/// share it).
pub fn batch_norm_rstd(var: &[f64]) -> Vec<f32> {
    var.iter()
        .map(|&v| (1.0 / (v + BATCH_NORM_EPS).sqrt()) as f32)
        .collect()
}

/// Batch normalisation at inference, in place on rows of `b.gamma.len()` components:
/// `((x − running_mean) · rstd) · γ + β`.
pub fn batch_norm_inference(x: &mut [f32], b: &BatchNorm) {
    let var: Vec<f64> = b.running_var.iter().map(|&v| f64::from(v)).collect();
    let rstd = batch_norm_rstd(&var);
    batch_norm_apply(x, &b.running_mean, &rstd, b, None);
}

/// `x̂ = (x − mean) · rstd`, then `x̂ · γ + β`, in place on rows of `mean.len()` components; with `xhat`, keep x̂.
pub fn batch_norm_apply(
    x: &mut [f32],
    mean: &[f32],
    rstd: &[f32],
    b: &BatchNorm,
    mut xhat: Option<&mut Vec<f32>>,
) {
    let w = mean.len();
    if let Some(xh) = xhat.as_mut() {
        xh.clear();
        xh.reserve(x.len());
    }
    for row in x.chunks_mut(w.max(1)) {
        for j in 0..w {
            let h = (row[j] - mean[j]) * rstd[j];
            if let Some(xh) = xhat.as_mut() {
                xh.push(h);
            }
            row[j] = h * b.gamma[j] + b.beta[j];
        }
    }
}

/// allRank's encoder norm of each `width`-wide row of `x`, in place: `γ·(x − mean)/(std + ε) + β`, the standard
/// deviation unbiased (divided by `width − 1`), ε = [`super::ENCODER_NORM_EPS`]. With `stats`, record
/// `x̂ = (x − mean)/(std + ε)` per component and (1/(std + ε), std) per row for the backward pass.
pub fn std_norm_rows(
    x: &mut [f32],
    width: usize,
    n: &LayerNorm,
    mut stats: Option<(&mut Vec<f32>, &mut Vec<f32>)>,
) {
    if let Some((xhat, rows)) = stats.as_mut() {
        // Sized exactly: a training query's trace holds these per norm, and pushing into an empty vector would
        // leave up to twice the length allocated.
        xhat.clear();
        xhat.reserve_exact(x.len());
        rows.clear();
        rows.reserve_exact(2 * (x.len() / width.max(1)));
    }
    let dof = width.saturating_sub(1).max(1) as f64;
    for row in x.chunks_mut(width) {
        let mean = row.iter().map(|&v| f64::from(v)).sum::<f64>() / width as f64;
        let var = row
            .iter()
            .map(|&v| (f64::from(v) - mean).powi(2))
            .sum::<f64>()
            / dof;
        let std = var.sqrt();
        let inv = (1.0 / (std + f64::from(super::ENCODER_NORM_EPS))) as f32;
        let m = mean as f32;
        for (j, v) in row.iter_mut().enumerate() {
            let h = (*v - m) * inv;
            if let Some((xhat, _)) = stats.as_mut() {
                xhat.push(h);
            }
            *v = h * n.gamma[j] + n.beta[j];
        }
        if let Some((_, rows)) = stats.as_mut() {
            rows.push(inv);
            rows.push(std as f32);
        }
    }
}

/// Columns `[c, c + dk)` of the `width`-wide rows of `x` as a `rows × dk` matrix (`transpose`: `dk × rows`).
pub fn head_slice(x: &[f32], width: usize, c: usize, dk: usize, transpose: bool) -> Vec<f32> {
    let rows = x.len() / width.max(1);
    let mut out = vec![0f32; rows * dk];
    for r in 0..rows {
        for t in 0..dk {
            let v = x[r * width + c + t];
            if transpose {
                out[t * rows + r] = v;
            } else {
                out[r * dk + t] = v;
            }
        }
    }
    out
}

/// Scaled dot-product attention weights of every head: `p[h][i][j] = softmax_j(q_i · k_j / √dk)` over the
/// `rows` documents of one query, `q` and `k` `rows × width` with head `h` in columns `[h·dk, (h+1)·dk)`.
pub fn attention_probs(
    q: &[f32],
    k: &[f32],
    rows: usize,
    width: usize,
    heads: usize,
    p: &mut [f32],
) {
    let n = rows * rows;
    for h in 0..heads {
        attention_head_probs(q, k, rows, width, heads, h, &mut p[h * n..(h + 1) * n]);
    }
}

/// Head `h`'s `rows × rows` block of [`attention_probs`], bit for bit: training recomputes it in the backward pass
/// instead of keeping every head's weights.
pub fn attention_head_probs(
    q: &[f32],
    k: &[f32],
    rows: usize,
    width: usize,
    heads: usize,
    h: usize,
    ph: &mut [f32],
) {
    let dk = width / heads;
    let scale = (dk as f32).sqrt();
    let qh = head_slice(q, width, h * dk, dk, false);
    let kt = head_slice(k, width, h * dk, dk, true);
    matmul_rows(&qh, &kt, None, ph, dk, rows);
    super::softmax::scaled_exps(ph, rows, scale);
    let sums = row_sums(ph, rows, 0.0, f64::from);
    for (row, sum) in ph.chunks_mut(rows).zip(sums) {
        let inv = (1.0 / sum) as f32;
        row.iter_mut().for_each(|v| *v *= inv);
    }
}

/// Per row of `m` (`width` wide), `start + Σ_j f(m[r, j])` in f64 with `j` ascending: four rows' sums advance
/// together (each still its own chain in order), so that an addition's latency is not paid once per term. (`start`
/// −0.0 is the chain of `Iterator::sum`.)
pub fn row_sums(m: &[f32], width: usize, start: f64, f: impl Fn(f32) -> f64) -> Vec<f64> {
    row_sums_with(m, m, width, start, |a, _| f(a))
}

/// Per row, `start + Σ_j f(a[r, j], b[r, j])` in f64 with `j` ascending, as [`row_sums`].
pub fn row_sums_with(
    a: &[f32],
    b: &[f32],
    width: usize,
    start: f64,
    f: impl Fn(f32, f32) -> f64,
) -> Vec<f64> {
    let rows = a.len().checked_div(width).unwrap_or(0);
    let mut out = vec![0f64; rows];
    let mut r = 0;
    while r + 4 <= rows {
        let (mut s0, mut s1, mut s2, mut s3) = (start, start, start, start);
        let at = |i: usize| r * width + i * width..r * width + (i + 1) * width;
        let (a0, a1, a2, a3) = (&a[at(0)], &a[at(1)], &a[at(2)], &a[at(3)]);
        let (b0, b1, b2, b3) = (&b[at(0)], &b[at(1)], &b[at(2)], &b[at(3)]);
        for j in 0..width {
            s0 += f(a0[j], b0[j]);
            s1 += f(a1[j], b1[j]);
            s2 += f(a2[j], b2[j]);
            s3 += f(a3[j], b3[j]);
        }
        out[r..r + 4].copy_from_slice(&[s0, s1, s2, s3]);
        r += 4;
    }
    for (o, r) in out[r..].iter_mut().zip(r..) {
        let mut s = start;
        for j in r * width..(r + 1) * width {
            s += f(a[j], b[j]);
        }
        *o = s;
    }
    out
}

/// The heads' outputs `o[i, h·dk + t] = Σ_j p[h][i][j] · v[j, h·dk + t]` (`j` ascending).
pub fn attention_apply(
    p: &[f32],
    v: &[f32],
    rows: usize,
    width: usize,
    heads: usize,
    o: &mut [f32],
) {
    let n = rows * rows;
    for h in 0..heads {
        attention_apply_head(&p[h * n..(h + 1) * n], v, rows, width, heads, h, o);
    }
}

/// Head `h`'s columns of [`attention_apply`]'s `o` from its weights `ph` (`rows × rows`), bit for bit.
pub fn attention_apply_head(
    ph: &[f32],
    v: &[f32],
    rows: usize,
    width: usize,
    heads: usize,
    h: usize,
    o: &mut [f32],
) {
    let dk = width / heads;
    let mut oh = vec![0f32; rows * dk];
    let vh = head_slice(v, width, h * dk, dk, false);
    matmul_rows(ph, &vh, None, &mut oh, rows, dk);
    for r in 0..rows {
        o[r * width + h * dk..r * width + (h + 1) * dk].copy_from_slice(&oh[r * dk..(r + 1) * dk]);
    }
}
