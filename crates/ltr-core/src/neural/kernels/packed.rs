//! Products whose matrix is packed once for many calls ([`Packed`]): a training step multiplies every chunk of
//! rows by the same weights.

use super::{matmul_clone, simd_tiles, Scan, PANEL};

/// A matrix `M` (row-major `[k_dim][o_dim]`) packed once into the panels that
/// [`matmul_rows`](super::matmul_rows) packs it into at every call, for products that multiply many blocks of rows
/// by the same `M` (a training step's chunks): the same panels in the same order, so [`matmul_packed`] gives
/// `matmul_rows`' outputs bit for bit.
#[derive(Debug, Clone)]
pub struct Packed {
    pub(super) k_dim: usize,
    pub(super) o_dim: usize,
    /// Whether the panels are AVX-512's: their width is then 64 (32 for at most 32 outputs), else 16, as
    /// `by_width` picks it.
    pub(super) wide: bool,
    /// The panels (offset `off`, on a 64-byte line); `M` itself when `o_dim` is 1 (the dot products read it so).
    pub(super) buf: Vec<f32>,
    pub(super) off: usize,
    /// Every entry of `M` finite (no ±∞, no NaN).
    pub(super) finite: bool,
    /// The smallest nonzero `|M[k, j]|` (+∞ when all are zero).
    pub(super) min_nonzero: f32,
}

impl Packed {
    /// `m` packed into the panels of the widths [`matmul_rows`](super::matmul_rows) uses on this CPU at this
    /// `LTR_SIMD` level.
    pub fn new(m: &[f32], k_dim: usize, o_dim: usize) -> Self {
        let wide = ltr_data::simd_level() >= ltr_data::SimdLevel::Avx512;
        let t = match () {
            _ if wide && o_dim > 32 => 64,
            _ if wide => 32,
            _ => 16,
        };
        assert_eq!(m.len(), k_dim * o_dim, "a k_dim × o_dim matrix");
        let scan = Scan::of(m);
        let (finite, min_nonzero) = (scan.finite(), scan.min_nonzero());
        if o_dim <= 1 || k_dim == 0 {
            return Self {
                k_dim,
                o_dim,
                wide,
                buf: m.to_vec(),
                off: 0,
                finite,
                min_nonzero,
            };
        }
        let (buf, off) = pack_all(m, k_dim, o_dim, t);
        Self {
            k_dim,
            o_dim,
            wide,
            buf,
            off,
            finite,
            min_nonzero,
        }
    }
}

/// `y = x M (+ bias)` as [`matmul_rows`](super::matmul_rows) computes it (the same bits), with `M` packed beforehand.
pub fn matmul_packed(x: &[f32], m: &Packed, bias: Option<&[f32]>, y: &mut [f32]) {
    let rows = y.len().checked_div(m.o_dim).unwrap_or(0);
    if rows == 0 {
        return;
    }
    assert_eq!(
        m.wide,
        ltr_data::simd_level() >= ltr_data::SimdLevel::Avx512,
        "packed at this LTR_SIMD level"
    );
    let panels = (m.o_dim > 1 && m.k_dim > 0).then(|| &m.buf[m.off..]);
    let raw = if panels.is_some() {
        &[][..]
    } else {
        &m.buf[..]
    };
    matmul_clone(
        x,
        raw,
        panels,
        bias,
        y,
        m.k_dim,
        m.o_dim,
        rows,
        m.wide,
        simd_tiles(),
    );
}

/// All of `M` (`k_dim × o_dim`, row-major) packed into panels of `t` outputs, in the order the products read them:
/// by panel of inputs ([`panel_inputs`]), then by `j0`. Returns the buffer and the offset of the first panel (on
/// a 64-byte line).
pub(super) fn pack_all(m: &[f32], k_dim: usize, o_dim: usize, t: usize) -> (Vec<f32>, usize) {
    let nj = o_dim.div_ceil(t);
    let mut buf = vec![0f32; k_dim * nj * t + 16];
    let off = buf.as_ptr().align_offset(64).min(16);
    let kc = panel_inputs(k_dim, t);
    let (mut k0, mut at) = (0, off);
    while k0 < k_dim {
        let k1 = (k0 + kc).min(k_dim);
        for j0 in (0..o_dim).step_by(t) {
            let len = (k1 - k0) * t;
            pack(m, o_dim, k0..k1, j0, t, &mut buf[at..at + len]);
            at += len;
        }
        k0 = k1;
    }
    (buf, off)
}

/// Inputs per panel of `t` outputs: `k_dim` split into panels of equal size (at most `PANEL / t`): 136
/// inputs as 68 + 68, not 128 + 8, so that no panel is too short to pay for loading and storing its tiles.
pub(super) fn panel_inputs(k_dim: usize, t: usize) -> usize {
    k_dim.div_ceil(k_dim.div_ceil(PANEL / t).max(1)).max(1)
}

/// The panel of `M`'s inputs `ks` and outputs `j0..j0 + t` (zeros past `o_dim`) into `panel` (`ks.len() × t`).
#[inline(always)]
pub(super) fn pack(
    m: &[f32],
    o_dim: usize,
    ks: std::ops::Range<usize>,
    j0: usize,
    t: usize,
    panel: &mut [f32],
) {
    let w = t.min(o_dim - j0);
    for (k, p) in ks.zip(panel.chunks_exact_mut(t)) {
        let src = &m[k * o_dim + j0..k * o_dim + j0 + w];
        if w == t {
            p.copy_from_slice(src);
        } else {
            p[..w].copy_from_slice(src);
            p[w..].fill(0.0);
        }
    }
}
