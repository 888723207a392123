//! Software prefetch of feature rows the epoch loop will read a few pairs from now (and of the streamed loop's
//! per-pair entries a batch ahead).
//!
//! The perceptron visits pairs in a shuffled order, so each check reads two rows at random from a feature matrix
//! (2.9 MB on an OHSUMED fold) that misses the L2 cache; the dot product itself is short (45 features). Asking for
//! the rows a few visits early overlaps those misses with useful work. A prefetch is only a hint: it never faults
//! and never changes a result, whatever the address.

/// Hint that `x[start..start + len]` will be read soon (no effect on other targets or when out of range).
#[inline(always)]
pub(crate) fn row(x: &[f32], start: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let Some(r) = x.get(start..start + len).filter(|r| !r.is_empty()) else {
            return;
        };
        // One hint per 64-byte line: a row of d f32 spans ⌈4d/64⌉ (+1 when unaligned) lines.
        let mut off = 0;
        while off < r.len() {
            line(&r[off]);
            off += 16;
        }
        line(&r[r.len() - 1]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (x, start, len);
    }
}

/// Hint that the line holding `p` will be read soon (no effect on other targets).
#[inline(always)]
pub(crate) fn value<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    line(p);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)]
fn line<T>(p: &T) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: `_mm_prefetch` is a cache hint that performs no memory access the program can observe and cannot
    // fault; SSE is part of the x86_64 baseline, so the instruction always exists. The pointer comes from a live
    // reference anyway.
    unsafe { _mm_prefetch::<_MM_HINT_T0>((p as *const T).cast::<i8>()) }
}
