//! Products whose rows are mostly exact zeros (a hidden layer's input after ReLU and dropout, the gradient of a
//! layer's output after their masks): each row's chains take only its nonzero inputs, with the dense chains' bits.

use super::packed::{pack_all, panel_inputs, Packed};
use super::tiles::{self, Panel, Start, Terms, SPARSE_ROWS};
use super::{matmul_packed, simd_tiles, transpose, Scan, FINE, NEG_ZERO};

/// Panel width of the sparse rows: AVX-512's 64 outputs.
const T: usize = 64;

/// `y = x M (+ bias)` as [`matmul_packed`] computes it, bit for bit, skipping the terms of zero inputs when at
/// least half of `x` is zeros and the skipping provably changes nothing: then each row's nonzero inputs are listed
/// per panel of inputs (ascending), and groups of `SPARSE_ROWS` rows run their lists through the panel together
/// (a shorter list padded with `+0` terms), each row's 64 sums of a panel in registers.
///
/// **Why the bits stay.** The dense chain of an output is `s ← fma(x[r,k], M[k,j], s)` from its start (the bias,
/// +0, or the sum an earlier panel of inputs stored in `y`), `k` ascending. A term whose input is ±0 (and whose
/// weight is finite) is ±0, and `s + ±0` is `s` unless `s` is a zero, where −0 may turn into +0 (and +0 stays
/// +0). So skipping it (or adding a padding term `+0 · M`) changes nothing as long as the dense chain never stands
/// at −0. It never does when (1) `M` is finite (no `0 · ∞`), (2) no start is −0 (the bias has no −0; +0 and a
/// stored sum of such a chain are not −0), and (3) the smallest nonzero `|x|` times the smallest nonzero `|M|` is
/// at least 2⁻¹⁰¹: every nonzero term is then a whole multiple of 2⁻¹⁴⁹ and at least 2⁻¹⁰¹, every sum a multiple
/// of 2⁻¹⁴⁹, so no nonzero sum rounds to a zero, and an exact zero sum of nonzero values rounds to +0. (The same
/// argument as the weight gradient's, `weight_gradient`.) When any of the three fails, or the CPU has no AVX-512
/// tiles, or the outputs are not whole panels of 64, the dense product runs. Returns whether the sparse rows ran.
pub fn matmul_packed_sparse(x: &[f32], m: &Packed, bias: Option<&[f32]>, y: &mut [f32]) -> bool {
    let rows = y.len().checked_div(m.o_dim).unwrap_or(0);
    let (k_dim, o_dim) = (m.k_dim, m.o_dim);
    let shaped = rows > 0
        && k_dim > 0
        && o_dim.is_multiple_of(T)
        && m.wide
        && simd_tiles()
        && tiles::available::<T>()
        && m.finite
        && bias.is_none_or(|b| !b.iter().any(|v| v.to_bits() == NEG_ZERO));
    if !shaped {
        matmul_packed(x, m, bias, y);
        return false;
    }
    let x = &x[..rows * k_dim];
    let scan = Scan::of(x);
    let fine = f64::from(scan.min_nonzero()) * f64::from(m.min_nonzero) >= FINE;
    if 2 * scan.zeros < x.len() || !fine {
        matmul_packed(x, m, bias, y);
        return false;
    }
    sparse_product(x, rows, k_dim, &m.buf[m.off..], o_dim, bias, false, y);
    true
}

/// `dW += aᵀ dy` as the weight gradient's product path computes it (`kernels::weight_gradient`: every entry's
/// chain from `dW`, rows ascending), with the rows whose input is zero skipped: the caller has established that
/// path's conditions (a finite `dy`, no −0 in `dW`, no product below 2⁻¹⁰¹), under which its chain, the lists'
/// chain and this one (the nonzero inputs, rows ascending, padded with `+0` terms) are the same. `aᵀ` is the
/// sparse matrix (a row per input `k`), `dy` packed into panels of 64 outputs. `false` (nothing done) when `dy`'s
/// rows are not whole panels of 64 or the CPU has no AVX-512 tiles.
pub(super) fn gradient_sparse(
    a: &[f32],
    dy: &[f32],
    dw: &mut [f32],
    rows: usize,
    k_dim: usize,
    o_dim: usize,
) -> bool {
    if rows == 0
        || k_dim == 0
        || !o_dim.is_multiple_of(T)
        || !simd_tiles()
        || !tiles::available::<T>()
    {
        return false;
    }
    let at = transpose(&a[..rows * k_dim], rows, k_dim);
    // `dy` (`rows × o_dim`) packed as a training step packs `M` ([`Packed`]).
    let (buf, off) = pack_all(dy, rows, o_dim, T);
    sparse_product(&at, k_dim, rows, &buf[off..], o_dim, None, true, dw);
    true
}

/// `y = start + x M` over the nonzero entries of each row of `x` (`rows × k_dim`), `M` packed in panels of 64
/// outputs (`panels`, as [`Packed`] holds them); each chain starts from `y` (`from_y`, and for every panel of
/// inputs after the first), the bias or +0.
#[allow(clippy::too_many_arguments)]
fn sparse_product(
    x: &[f32],
    rows: usize,
    k_dim: usize,
    panels: &[f32],
    o_dim: usize,
    bias: Option<&[f32]>,
    from_y: bool,
    y: &mut [f32],
) {
    let kc = panel_inputs(k_dim, T);
    let nj = o_dim / T;
    // Per row, its nonzero inputs of the panel (offset in the panel, value) in `stride` slots, padded to the
    // longest list of its group with `(0, +0)`.
    let stride = kc + 16;
    let groups = rows.div_ceil(SPARSE_ROWS);
    let mut offs = vec![0u32; groups * SPARSE_ROWS * stride];
    let mut vals = vec![0f32; groups * SPARSE_ROWS * stride];
    let mut lens = vec![0usize; groups];
    let mut k0 = 0;
    while k0 < k_dim {
        let k1 = (k0 + kc).min(k_dim);
        for (g, glen) in lens.iter_mut().enumerate() {
            let r = g * SPARSE_ROWS;
            let n = SPARSE_ROWS.min(rows - r);
            let mut row_lens = [0usize; SPARSE_ROWS];
            for (i, len) in row_lens.iter_mut().enumerate().take(n) {
                let xr = &x[(r + i) * k_dim + k0..(r + i) * k_dim + k1];
                let at = (r + i) * stride;
                *len = tiles::compact_nonzero(
                    xr,
                    T as u32,
                    &mut offs[at..at + stride],
                    &mut vals[at..at + stride],
                );
            }
            *glen = row_lens[..n].iter().copied().max().unwrap_or(0);
            for (i, &l) in row_lens.iter().enumerate().take(n) {
                let at = (r + i) * stride;
                offs[at + l..at + *glen].fill(0);
                vals[at + l..at + *glen].fill(0.0);
            }
        }
        let len_p = (k1 - k0) * T;
        for jp in 0..nj {
            let j0 = jp * T;
            let at = k0 * nj * T + jp * len_p;
            let p = Panel {
                weights: &panels[at..at + len_p],
                kc: k1 - k0,
                j0,
                w: T,
            };
            let start = match bias {
                _ if k0 > 0 || from_y => Start::Y,
                Some(b) => Start::Bias(&b[j0..j0 + T]),
                None => Start::Zero,
            };
            for (g, &len) in lens.iter().enumerate() {
                let r = g * SPARSE_ROWS;
                let n = SPARSE_ROWS.min(rows - r);
                let at = r * stride;
                let group = Terms {
                    offs: &offs[at..],
                    vals: &vals[at..],
                    stride,
                    n,
                    len,
                };
                let done = tiles::sparse_rows::<T>(group, p, start, y, r, o_dim);
                assert!(done, "the AVX-512 tiles are there");
            }
        }
        k0 = k1;
    }
}
