//! Short strings of every row (doc ids, comments) in one buffer.

use crate::error::{DataError, Result};

/// A column of short strings stored in one buffer (doc ids, comments): no allocation per line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextColumn {
    data: String,
    ends: Vec<usize>,
}

impl TextColumn {
    /// An empty column.
    pub fn new() -> Self {
        Self::default()
    }
    /// Append one entry.
    pub fn push(&mut self, s: &str) {
        self.data.push_str(s);
        self.ends.push(self.data.len());
    }
    /// Entry `i`.
    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.data[start..self.ends[i]]
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    /// Append all entries of `other`.
    pub fn extend_from(&mut self, other: &TextColumn) {
        let base = self.data.len();
        self.data.push_str(&other.data);
        self.ends.extend(other.ends.iter().map(|e| e + base));
    }
    /// Iterate over the entries.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }
    /// The raw parts (buffer and end offsets), for the cache.
    pub fn raw_parts(&self) -> (&str, &[usize]) {
        (&self.data, &self.ends)
    }
    /// Rebuild from raw parts, validating offsets.
    pub fn from_raw_parts(data: String, ends: Vec<usize>) -> Result<Self> {
        let mut prev = 0;
        for &e in &ends {
            if e < prev || e > data.len() || !data.is_char_boundary(e) {
                return Err(DataError::Invalid(
                    "text column offsets are not monotone char boundaries".into(),
                ));
            }
            prev = e;
        }
        Ok(Self { data, ends })
    }
    /// Entries `at..` moved into a new column; this one keeps `..at` (and gives back the memory of the rest).
    pub fn split_off(&mut self, at: usize) -> TextColumn {
        let base = if at == 0 { 0 } else { self.ends[at - 1] };
        let data = self.data.split_off(base);
        let ends = self
            .ends
            .split_off(at)
            .into_iter()
            .map(|e| e - base)
            .collect();
        self.data.shrink_to_fit();
        self.ends.shrink_to_fit();
        TextColumn { data, ends }
    }
    /// The bytes its buffers hold (the text and 8 a row for the offsets), for memory estimates.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.data.len() + self.ends.len() * 8
    }
    /// Keep only the entries listed (in that order).
    pub fn select(&self, rows: &[usize]) -> TextColumn {
        let mut out = TextColumn::new();
        for &r in rows {
            out.push(self.get(r));
        }
        out
    }
}
