//! A decoder of Universal Binary JSON (ubjson.org, draft 12) into a `serde_json::Value`: what XGBoost ≥ 2 writes
//! for `save_model("m.ubj")`, read as its JSON form is.
//!
//! Everything XGBoost emits is read — objects (keys without the `S` marker), plain arrays, counted arrays
//! (`[#L n`, no closing `]`), typed and counted arrays (`[$d#L n` of big-endian f32, `$l` i32, `$L` i64, `$U`
//! u8), strings, every integer width, f32, f64, booleans and null — and the rest of the draft but high-precision
//! numbers is read too (`N` no-ops, `C` chars, counted objects, typed objects). Refused with the byte offset:
//! truncation, an unknown marker, a negative count, a count larger than the bytes left (before anything is
//! allocated), typed containers of zero-byte types (`$Z`, `$T`, `$F`, `$N`: a few bytes could claim 2⁶³ values),
//! invalid UTF-8, non-finite numbers (JSON has none), nesting deeper than 256 and bytes after the document.

use serde_json::{Map, Number, Value};

/// The deepest nesting read (XGBoost's models nest 6 deep).
const MAX_DEPTH: usize = 256;

/// Decode one UBJSON document that fills `bytes`. The error names the byte offset and what is wrong.
// pub for the tests in tests/unit/ubjson.rs; not API.
#[doc(hidden)]
pub fn decode(bytes: &[u8]) -> std::result::Result<Value, String> {
    let mut r = Reader { bytes, pos: 0 };
    let marker = r.marker()?;
    let v = r.value(marker, r.pos - 1, 0)?;
    if r.pos != bytes.len() {
        return Err(format!(
            "UBJSON: {} bytes after the document, from byte {}",
            bytes.len() - r.pos,
            r.pos
        ));
    }
    Ok(v)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> std::result::Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(format!(
                "UBJSON: truncated at byte {}: {what} needs {n} bytes, {} left",
                self.pos,
                self.bytes.len() - self.pos
            ));
        };
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> std::result::Result<[u8; N], String> {
        let s = self.take(N, what)?;
        Ok(s.try_into().expect("take returns N bytes"))
    }

    /// The next type marker, skipping no-ops (`N`).
    fn marker(&mut self) -> std::result::Result<u8, String> {
        loop {
            let m = self.take(1, "a type marker")?[0];
            if m != b'N' {
                return Ok(m);
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// An integer after its marker `m` (a length or a count), as i64.
    fn int(&mut self, m: u8) -> std::result::Result<Option<i64>, String> {
        Ok(Some(match m {
            b'i' => i64::from(i8::from_be_bytes(self.array("an int8")?)),
            b'U' => i64::from(self.array::<1>("a uint8")?[0]),
            b'I' => i64::from(i16::from_be_bytes(self.array("an int16")?)),
            b'l' => i64::from(i32::from_be_bytes(self.array("an int32")?)),
            b'L' => i64::from_be_bytes(self.array("an int64")?),
            _ => return Ok(None),
        }))
    }

    /// A length or count: an integer with its own marker, not negative.
    fn length(&mut self, what: &str) -> std::result::Result<usize, String> {
        let at = self.pos;
        let m = self.marker()?;
        match self.int(m)? {
            Some(n) if n >= 0 => usize::try_from(n)
                .map_err(|_| format!("UBJSON: {what} {n} at byte {at} does not fit in memory")),
            Some(n) => Err(format!("UBJSON: negative {what} {n} at byte {at}")),
            None => Err(format!(
                "UBJSON: {what} at byte {at} must be an integer, not marker {}",
                show(m)
            )),
        }
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        let n = self.length("string length")?;
        let at = self.pos;
        let s = self.take(n, "a string")?;
        String::from_utf8(s.to_vec())
            .map_err(|_| format!("UBJSON: invalid UTF-8 in the string at byte {at}"))
    }

    fn float(x: f64, at: usize) -> std::result::Result<Value, String> {
        Number::from_f64(x).map(Value::Number).ok_or_else(|| {
            format!("UBJSON: the number at byte {at} is {x}, which JSON cannot hold")
        })
    }

    /// The value of type `m` that starts at byte `at` (its marker, or its first byte in a typed container).
    fn value(&mut self, m: u8, at: usize, depth: usize) -> std::result::Result<Value, String> {
        if let Some(n) = self.int(m)? {
            return Ok(Value::Number(n.into()));
        }
        Ok(match m {
            b'Z' => Value::Null,
            b'T' => Value::Bool(true),
            b'F' => Value::Bool(false),
            b'd' => Self::float(f64::from(f32::from_be_bytes(self.array("a float32")?)), at)?,
            b'D' => Self::float(f64::from_be_bytes(self.array("a float64")?), at)?,
            b'C' => {
                let c = self.array::<1>("a char")?[0];
                if !c.is_ascii() {
                    return Err(format!("UBJSON: char {c:#04x} at byte {at} is not ASCII"));
                }
                Value::String(char::from(c).to_string())
            }
            b'S' => Value::String(self.string()?),
            b'[' | b'{' => {
                if depth >= MAX_DEPTH {
                    return Err(format!(
                        "UBJSON: containers nest deeper than {MAX_DEPTH} at byte {at}"
                    ));
                }
                let (typ, count) = self.container_header()?;
                if m == b'[' {
                    self.array_body(typ, count, depth)?
                } else {
                    self.object_body(typ, count, depth)?
                }
            }
            b'H' => {
                return Err(format!(
                    "UBJSON: high-precision numbers (marker H at byte {at}) are not read"
                ))
            }
            other => {
                return Err(format!(
                    "UBJSON: unknown type marker {} at byte {at}",
                    show(other)
                ))
            }
        })
    }

    /// `$T` and `#n` after a container's opening marker: its element type and count, when given.
    fn container_header(&mut self) -> std::result::Result<(Option<u8>, Option<usize>), String> {
        let mut typ = None;
        if self.peek() == Some(b'$') {
            let at = self.pos;
            self.pos += 1;
            let t = self.take(1, "a container's type")?[0];
            if matches!(t, b'Z' | b'T' | b'F' | b'N') {
                return Err(format!(
                    "UBJSON: a container of type {} at byte {at} is not read (its values take no bytes)",
                    show(t)
                ));
            }
            if self.peek() != Some(b'#') {
                return Err(format!(
                    "UBJSON: the typed container at byte {at} has no count (`#`)"
                ));
            }
            typ = Some(t);
        }
        let mut count = None;
        if self.peek() == Some(b'#') {
            let at = self.pos;
            self.pos += 1;
            let n = self.length("container count")?;
            // Every value takes at least one byte (zero-byte types are refused above).
            if n > self.bytes.len() - self.pos {
                return Err(format!(
                    "UBJSON: truncated: the container counted at byte {at} claims {n} values but {} bytes are left",
                    self.bytes.len() - self.pos
                ));
            }
            count = Some(n);
        }
        Ok((typ, count))
    }

    /// The next value of a container of type `typ` (each value has its own marker when `None`).
    fn element(&mut self, typ: Option<u8>, depth: usize) -> std::result::Result<Value, String> {
        match typ {
            Some(t) => self.value(t, self.pos, depth + 1),
            None => {
                let m = self.marker()?;
                self.value(m, self.pos - 1, depth + 1)
            }
        }
    }

    fn array_body(
        &mut self,
        typ: Option<u8>,
        count: Option<usize>,
        depth: usize,
    ) -> std::result::Result<Value, String> {
        let mut out = Vec::with_capacity(count.unwrap_or(0));
        match count {
            Some(n) => {
                for _ in 0..n {
                    out.push(self.element(typ, depth)?);
                }
            }
            None => loop {
                let m = self.marker()?;
                if m == b']' {
                    break;
                }
                out.push(self.value(m, self.pos - 1, depth + 1)?);
            },
        }
        Ok(Value::Array(out))
    }

    fn object_body(
        &mut self,
        typ: Option<u8>,
        count: Option<usize>,
        depth: usize,
    ) -> std::result::Result<Value, String> {
        let mut out = Map::new();
        let mut entry = |r: &mut Self| -> std::result::Result<(), String> {
            let key = r.string()?;
            let v = r.element(typ, depth)?;
            out.insert(key, v);
            Ok(())
        };
        match count {
            Some(n) => {
                for _ in 0..n {
                    entry(self)?;
                }
            }
            None => loop {
                // Between entries: the closing `}`, or the key's length (no-ops may stand before either).
                while self.peek() == Some(b'N') {
                    self.pos += 1;
                }
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    break;
                }
                entry(self)?;
            },
        }
        Ok(Value::Object(out))
    }
}

/// A marker byte for a message: the character when printable, else its hex value.
fn show(m: u8) -> String {
    if m.is_ascii_graphic() {
        format!("`{}`", char::from(m))
    } else {
        format!("{m:#04x}")
    }
}
