//! A block's lines and fields found for the whole block at once: one pass over its bytes, eight at a time, makes a
//! bitmap of the whitespace (a bit per byte) and the list of line ends, with no branch that depends on where a
//! line ends; each line's fields are then cut out of its 64 bits of the whitespace bitmap. Blocks that are not
//! plain ASCII (see [`plain_ascii`]) are split line by line by the caller (`memchr` and [`fields`]).

/// Is `chunk` ASCII whose only bytes below `!` are ASCII whitespace (space, tab, newline, form feed, carriage
/// return)? Then a byte is whitespace exactly when it is below `!`, which [`Lines::scan`] tests eight bytes at once.
fn plain_ascii(chunk: &[u8]) -> bool {
    chunk.iter().fold(true, |ok, &b| {
        ok & (b < 0x80)
            & ((b > 0x20) | (b == b' ') | (b == b'\t') | (b == b'\n') | (b == b'\r') | (b == 0x0c))
    })
}

/// The whitespace-separated fields of a line (`str::split_whitespace`'s): the first `N` and how many there are in
/// all. `ascii` says the line is ASCII without a vertical tab, where ASCII whitespace is the same set and
/// splitting bytes is faster.
#[inline]
pub(super) fn fields<const N: usize>(line: &str, ascii: bool) -> ([&str; N], usize) {
    let mut f = [""; N];
    let mut n = 0;
    if ascii {
        // Fields between runs of ASCII whitespace, found byte by byte.
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let start = i;
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i > start {
                if n < N {
                    f[n] = &line[start..i];
                }
                n += 1;
            }
        }
    } else {
        for w in line.split_whitespace() {
            if n < N {
                f[n] = w;
            }
            n += 1;
        }
    }
    (f, n)
}

const HIGH: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The top bits of the bytes of `m` (no other bit set) as one bit per byte, the lowest byte's in bit 0.
#[inline(always)]
fn gather(m: u64) -> u64 {
    m.wrapping_mul(0x0002_0408_1020_4081) >> 56
}

/// One plain block's lines: where each ends, and a bit per byte that is set for whitespace. Both
/// buffers belong to a reading thread and are reused from block to block (only grown).
#[derive(Default)]
pub(super) struct Lines {
    /// Bit `i % 64` of word `i / 64`: byte `i` is whitespace (below `!`); one word more than the block needs,
    /// all set, so that a line's 64 bits can always be read from two words.
    ws: Vec<u64>,
    /// The first `count` entries: each line's end (its newline's index, or the block's length for a last line
    /// without one). Entries past `count` are stale.
    ends: Vec<u32>,
    count: usize,
}

impl Lines {
    /// Find the lines of the block `text` when it is [`plain_ascii`] (and under 4 GiB); `false` otherwise, when
    /// the caller finds each line's end with `memchr` and its fields with [`fields`].
    pub(super) fn scan(&mut self, text: &str) -> bool {
        let b = text.as_bytes();
        self.count = 0;
        if !(plain_ascii(b) && u32::try_from(b.len()).is_ok()) {
            return false;
        }
        let words = b.len().div_ceil(64);
        self.ws.clear();
        self.ws.resize(words + 1, !0);
        // Room for eight ends a word written unconditionally (grown where a word holds more than eight lines).
        let need = 8 * words + 16;
        if self.ends.len() < need {
            self.ends.resize(need, 0);
        }
        let mut n = 0;
        for (w, chunk) in b.chunks(64).enumerate() {
            let (ws, nl) = if chunk.len() == 64 {
                masks(chunk.try_into().expect("64 bytes"))
            } else {
                // The last, short chunk padded with spaces: whitespace, not newlines.
                let mut pad = [b' '; 64];
                pad[..chunk.len()].copy_from_slice(chunk);
                masks(&pad)
            };
            self.ws[w] = ws;
            let base = 64 * w as u32;
            let lines = nl.count_ones() as usize;
            let mut m = nl;
            let out = &mut self.ends[n..n + 8];
            for e in out {
                *e = base.wrapping_add(m.trailing_zeros());
                m &= m.wrapping_sub(1);
            }
            if lines > 8 {
                // Blank lines: more ends than written; the room kept for the words left grows with them.
                let len = self.ends.len();
                self.ends.resize(len + 64, 0);
                let mut at = n + 8;
                while m != 0 {
                    self.ends[at] = base + m.trailing_zeros();
                    m &= m - 1;
                    at += 1;
                }
            }
            n += lines;
        }
        if b.last().is_some_and(|&c| c != b'\n') {
            self.ends[n] = b.len() as u32;
            n += 1;
        }
        self.count = n;
        true
    }

    /// Each line's end, in order: its newline's index, or the block's length for a last line without one.
    #[inline]
    pub(super) fn ends(&self) -> &[u32] {
        &self.ends[..self.count]
    }

    /// The fields numbered `want` (each below 6; empty past the last) of the line `start..end` of the block
    /// `text` just scanned, and how many fields it has (as [`fields`] counts them): the line's 64 bits of the
    /// whitespace bitmap (those past its end set), whose runs of clear bits are the fields: each starts where the
    /// bit before it is set and ends where the bit after it is; their count is the number of starts, and only the
    /// fields wanted are cut out. Lines of 64 bytes or more take [`fields`].
    #[inline(always)]
    pub(super) fn fields<'t, const N: usize>(
        &self,
        text: &'t str,
        start: usize,
        end: usize,
        want: [usize; N],
    ) -> ([&'t str; N], usize) {
        let len = end - start;
        let line = &text[start..end];
        if len >= 64 {
            let (f, n) = fields::<6>(line, true);
            let mut out = [""; N];
            for (o, &k) in out.iter_mut().zip(&want) {
                *o = f[k];
            }
            return (out, n);
        }
        let (w, shift) = (start / 64, start % 64);
        let pair = self.ws[w] as u128 | (self.ws[w + 1] as u128) << 64;
        let ws = (pair >> shift) as u64 | (!0u64 << len);
        let starts = !ws & ((ws << 1) | 1);
        let ends = !ws & (ws >> 1);
        let n = starts.count_ones() as usize;
        /// The position of the `k`th set bit of `m` (it has more than `k`).
        #[inline(always)]
        fn nth(mut m: u64, k: usize) -> usize {
            for _ in 0..k {
                m &= m - 1;
            }
            m.trailing_zeros() as usize
        }
        // A loop, not `want.map`: the profile showed `[T; N]::try_map` not inlined, 7.9% of `ltr eval`'s samples.
        let mut f = [""; N];
        for (out, &k) in f.iter_mut().zip(&want) {
            if k < n {
                *out = &line[nth(starts, k)..=nth(ends, k)];
            }
        }
        (f, n)
    }
}

/// The whitespace (bytes below `!`) and newline bitmaps of 64 plain ASCII bytes, eight bytes at a time. Adding
/// 0x5f to a byte below 0x80 sets its top bit exactly when it is 0x21 or more, with no carry out of the byte; a
/// byte of the word xor `\n`s is zero exactly when its low seven bits plus 0x7f leave the top bit clear and its
/// own top bit is clear.
#[inline(always)]
fn masks(chunk: &[u8; 64]) -> (u64, u64) {
    let (mut ws, mut nl) = (0u64, 0u64);
    for k in 0..8 {
        let x = u64::from_le_bytes(chunk[8 * k..8 * k + 8].try_into().expect("eight bytes"));
        let low = !x.wrapping_add(0x5f5f_5f5f_5f5f_5f5f) & HIGH;
        let t = x ^ 0x0a0a_0a0a_0a0a_0a0a;
        let zero = !((t & LOW7).wrapping_add(LOW7) | t) & HIGH;
        ws |= gather(low) << (8 * k);
        nl |= gather(zero) << (8 * k);
    }
    (ws, nl)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bitmap split against `str::lines` and `split_ascii_whitespace` on random plain blocks (spaces, tabs,
    /// form feeds, carriage returns, runs of them, blank lines, runs of many newlines, long fields, lines around
    /// the word and 64-byte limits, with and without a last newline); blocks that are not plain are refused.
    #[test]
    fn lines_match_str_lines_and_split_whitespace() {
        let mut rng = ltr_testdata::XorShift64::new(0x5851_f42d_4c95_7f2d);
        let mut next = move |m: u64| rng.below(m);
        let mut lines = Lines::default();
        for case in 0..3000 {
            let mut text = String::new();
            for _ in 0..next(40) {
                let len = [next(80), next(10), next(200)][next(3) as usize] as usize;
                let line: String = (0..len)
                    .map(|_| match next(10) {
                        0 => ' ',
                        1 => ['\t', '\r', '\x0c', ' '][next(4) as usize],
                        _ if case % 10 == 9 && next(50) == 0 => {
                            ['é', '\x0b', '\u{3000}'][next(3) as usize]
                        }
                        _ => (b'!' + next(94) as u8) as char,
                    })
                    .collect();
                text.push_str(&line);
                // Now and then many newlines at once.
                let breaks = if next(20) == 0 { 1 + next(70) } else { 1 };
                text.extend(std::iter::repeat_n('\n', breaks as usize));
            }
            if next(2) == 0 {
                text.pop();
            }
            let plain = plain_ascii(text.as_bytes());
            assert_eq!(lines.scan(&text), plain, "case {case}");
            if !plain {
                continue;
            }
            let want: Vec<&str> = text.split('\n').collect();
            // `split` gives one piece more than there are lines when the text ends with a newline (or is empty).
            let want = if text.is_empty() || text.ends_with('\n') {
                &want[..want.len() - 1]
            } else {
                &want[..]
            };
            assert_eq!(lines.ends().len(), want.len(), "case {case}");
            let mut start = 0;
            for (&end, line) in lines.ends().iter().zip(want) {
                let end = end as usize;
                assert_eq!(&text[start..end], *line, "case {case}");
                let split: Vec<&str> = line.split_whitespace().collect();
                let (f, n) = lines.fields(&text, start, end, [0, 1, 2, 3, 4, 5]);
                assert_eq!(n, split.len(), "{line:?}");
                assert_eq!(&f[..n.min(6)], &split[..n.min(6)], "{line:?}");
                let (g, n2) = lines.fields(&text, start, end, [0, 2, 4]);
                assert_eq!((n2, g), (n, [f[0], f[2], f[4]]), "{line:?}");
                start = end + 1;
            }
        }
        assert!(!plain_ascii(b"a\x0bb") && !plain_ascii(b"a\x01") && !plain_ascii("é".as_bytes()));
    }

    #[test]
    fn masks_mark_every_byte() {
        for b in 0..0x80u8 {
            for k in 0..64 {
                let mut chunk = [b'a'; 64];
                chunk[k] = b;
                let (ws, nl) = masks(&chunk);
                assert_eq!(ws, ((b < 0x21) as u64) << k, "{b:#x} at {k}");
                assert_eq!(nl, ((b == b'\n') as u64) << k, "{b:#x} at {k}");
            }
        }
    }
}
