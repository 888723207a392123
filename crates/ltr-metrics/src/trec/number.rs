//! Scores and relevance values parsed without allocation, bit for bit as `str::parse` parses them: plain decimals
//! of up to 15 digits eight digits at a time (SWAR), anything else by `str::parse`; a score's division by its
//! power of ten is left for later ([`Decimal`]).

const ZEROS: u64 = 0x3030_3030_3030_3030;

/// Whether every byte of `w` is an ASCII digit: its high nibble is 3 and adding 6 to it does not carry into the high
/// nibble (a low nibble of at most 9).
// pub for the tests in tests/unit/trec_number.rs; not API.
#[doc(hidden)]
#[inline]
pub fn all_digits(w: u64) -> bool {
    const HIGH: u64 = 0xf0f0_f0f0_f0f0_f0f0;
    (w & HIGH) | ((w.wrapping_add(0x0606_0606_0606_0606) & HIGH) >> 4) == 0x3333_3333_3333_3333
}

/// The value of the eight ASCII digits of `w`, the first in its lowest byte: pairs, then quadruples, then the
/// whole, each step multiplying the higher-order half by the power of ten the lower one spans.
// pub for the tests in tests/unit/trec_number.rs; not API.
#[doc(hidden)]
#[inline]
pub fn eight_digits(w: u64) -> u64 {
    const LOW: u64 = 0x0000_00ff_0000_00ff;
    let w = w - ZEROS;
    // Byte 2k: ten times digit 2k plus digit 2k + 1.
    let w = w.wrapping_mul(10).wrapping_add(w >> 8);
    // Lanes of 32 bits: the pairs at bytes 0 and 4 times 10^6 and 10^2, those at 2 and 6 times 10^4 and 1; the
    // sum lands in the high 32 bits.
    let hi = (w & LOW).wrapping_mul(100 + (1_000_000 << 32));
    let lo = ((w >> 16) & LOW).wrapping_mul(1 + (10_000 << 32));
    hi.wrapping_add(lo) >> 32
}

/// The bytes `d` (1 to 16 of them) right-aligned in 16 bytes after `0`s, little-endian: two loads of eight bytes
/// (one shifted) where `d` has eight or more, not a copy into a stack buffer, whose reload the profile showed
/// stalling (a store forwarded to a wider load).
#[inline]
fn right_aligned(d: &[u8]) -> u128 {
    let n = d.len();
    debug_assert!((1..=16).contains(&n));
    let word = |at: usize| u64::from_le_bytes(d[at..at + 8].try_into().expect("eight bytes"));
    let (lo, hi) = match n {
        16 => (word(0), word(8)),
        8 => (ZEROS, word(0)),
        9..=15 => (
            (word(0) << (8 * (16 - n))) | (ZEROS >> (8 * (n - 8))),
            word(n - 8),
        ),
        _ => {
            let w = d.iter().rev().fold(0u64, |w, &c| (w << 8) | c as u64);
            (ZEROS, (w << (8 * (8 - n))) | (ZEROS >> (8 * n)))
        }
    };
    lo as u128 | ((hi as u128) << 64)
}

/// A number as read, whose value is `num / 10^scale` (at most 15): a plain decimal's digits as an integer and the
/// count of its fractional digits, or any other number's value with a scale of 0. The division is left to
/// [`Decimal::value`], so that a reader can take a query's values in one loop of independent divisions: in a line
/// by line parse each one's latency held the next line up (a third of the score check in `ltr eval`'s profile).
// pub for the tests in tests/unit/trec_number.rs; not API.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decimal {
    num: f64,
    scale: u8,
}

/// 10^0 … 10^15, each exact in f64: the scales of a [`Decimal`].
const SCALES: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

impl Decimal {
    /// The value, bit for bit `str::parse`'s: a plain decimal's digits are an integer below 2^53 and its scale a
    /// power of ten exact in f64, so one division rounds the decimal's value correctly (Clinger 1990).
    // pub for the tests in tests/unit/trec_number.rs; not API.
    #[doc(hidden)]
    #[inline]
    pub fn value(self) -> f64 {
        self.num / SCALES[self.scale as usize & 15]
    }
    /// Whether the value is finite (without dividing: a plain decimal's always is).
    #[inline]
    pub(super) fn is_finite(self) -> bool {
        self.num.is_finite()
    }
}

/// The values of `numbers` into `out` (cleared first): one loop of independent divisions.
#[inline]
pub(super) fn values_into(numbers: &[Decimal], out: &mut Vec<f64>) {
    out.clear();
    out.extend(numbers.iter().map(|d| d.value()));
}

/// `str::parse::<f64>` as a [`Decimal`], with a short path for plain decimals (`-`, digits, `.`, digits; at most 15
/// digits, one at least on each side of the point): their digits and the count after the point, the digits read
/// eight at a time.
// pub for the tests in tests/unit/trec_number.rs; not API.
#[doc(hidden)]
#[inline]
pub fn parse_decimal(s: &str) -> Option<Decimal> {
    let whole = |v: f64| Decimal { num: v, scale: 0 };
    let b = s.as_bytes();
    let (neg, d) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        _ => (false, b),
    };
    let n = d.len();
    if n == 0 || n > 16 {
        return s.parse().ok().map(whole);
    }
    // Right-aligned: the last digit in byte 15, zeros (which add nothing) before the first.
    let v = right_aligned(d);
    // The point, if any: its byte index in `buf`.
    let dots = v ^ u128::from_le_bytes([b'.'; 16]);
    let dot = (dots.wrapping_sub(u128::from_le_bytes([1; 16])) & !dots & (u128::MAX / 255 * 0x80))
        .trailing_zeros() as usize
        / 8;
    let (v, frac) = if dot < 16 {
        // `5.`, `.5` and a second point go the long way, as do 16 digits with no point.
        let frac = 15 - dot;
        if frac == 0 || dot == 16 - n {
            return s.parse().ok().map(whole);
        }
        // The point taken out: the digits before it move up one byte, a zero comes in at the bottom.
        let below = v & ((1u128 << (8 * dot)) - 1);
        let above = (v >> (8 * (dot + 1))) << (8 * (dot + 1));
        ((above | (below << 8)) | b'0' as u128, frac)
    } else if n == 16 {
        return s.parse().ok().map(whole);
    } else {
        (v, 0)
    };
    let (lo, hi) = (v as u64, (v >> 64) as u64);
    if !all_digits(lo) || !all_digits(hi) {
        return s.parse().ok().map(whole);
    }
    // Below 10^16, so as exact in i64 as in f64 (and converted in one instruction).
    let m = (eight_digits(lo) * 100_000_000 + eight_digits(hi)) as i64 as f64;
    Some(Decimal {
        num: if neg { -m } else { m },
        scale: frac as u8,
    })
}

/// `str::parse::<f32>`, with a short path for whole numbers of up to three digits (exact in f32).
// pub for the tests in tests/unit/trec_number.rs; not API.
#[doc(hidden)]
#[inline]
pub fn parse_f32(s: &str) -> Option<f32> {
    let b = s.as_bytes();
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        _ => (false, b),
    };
    if (1..=3).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
        let v = digits.iter().fold(0u32, |v, &c| v * 10 + (c - b'0') as u32) as f32;
        return Some(if neg { -v } else { v });
    }
    s.parse().ok()
}
