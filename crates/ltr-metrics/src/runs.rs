//! TREC runs and qrels in memory, with their document ids interned per query: each query keeps its ids in one
//! buffer (one allocation for the whole list, not one per id), and a query's judgments are found through a hash
//! table of 32-bit entries into that buffer instead of a map of owned strings.

use std::collections::HashMap;

/// Strings in one buffer, entry `i` ending at `ends[i]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Ids {
    text: String,
    ends: Vec<usize>,
}

impl Ids {
    #[inline]
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len());
    }
    #[inline]
    fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
    fn append(&mut self, other: &Ids) {
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.ends.extend(other.ends.iter().map(|e| e + base));
    }
}

/// One query of a TREC run: its id and its documents (id and score) in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunQuery {
    qid: String,
    ids: Ids,
    scores: Vec<f64>,
}

impl RunQuery {
    /// A query with no documents yet.
    pub fn new(qid: impl Into<String>) -> Self {
        RunQuery {
            qid: qid.into(),
            ..Default::default()
        }
    }
    /// A query with these `(docid, score)` documents, in order.
    pub fn with_docs<S: AsRef<str>>(
        qid: impl Into<String>,
        docs: impl IntoIterator<Item = (S, f64)>,
    ) -> Self {
        let mut q = RunQuery::new(qid);
        for (d, s) in docs {
            q.push(d.as_ref(), s);
        }
        q
    }
    /// Append a document.
    #[inline]
    pub fn push(&mut self, docid: &str, score: f64) {
        self.ids.push(docid);
        self.scores.push(score);
    }
    /// The query id.
    pub fn qid(&self) -> &str {
        &self.qid
    }
    /// Number of documents.
    pub fn len(&self) -> usize {
        self.scores.len()
    }
    /// True when the query has no documents.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }
    /// The id of document `i`.
    #[inline]
    pub fn docid(&self, i: usize) -> &str {
        self.ids.get(i)
    }
    /// The documents' scores, in order.
    pub fn scores(&self) -> &[f64] {
        &self.scores
    }
    /// The documents as `(docid, score)`, in order.
    pub fn docs(&self) -> impl ExactSizeIterator<Item = (&str, f64)> + '_ {
        (0..self.len()).map(move |i| (self.ids.get(i), self.scores[i]))
    }
    /// A query (its id set later) holding `items`, each buffer allocated once.
    pub(crate) fn from_items(items: &[(&str, f64)]) -> Self {
        let text = items.iter().map(|(d, _)| d.len()).sum();
        let mut q = RunQuery {
            qid: String::new(),
            ids: Ids {
                text: String::with_capacity(text),
                ends: Vec::with_capacity(items.len()),
            },
            scores: Vec::with_capacity(items.len()),
        };
        for &(d, s) in items {
            q.push(d, s);
        }
        q
    }
    pub(crate) fn set_qid(&mut self, qid: &str) {
        qid.clone_into(&mut self.qid);
    }
    /// Append the documents of `other` (the same query, later in its file).
    pub(crate) fn append(&mut self, other: &RunQuery) {
        self.ids.append(&other.ids);
        self.scores.extend_from_slice(&other.scores);
    }
}

/// The judgments of one query: document id → relevance, ids interned in one buffer, found by hashing.
#[derive(Debug, Clone, Default)]
pub struct QueryQrels {
    ids: Ids,
    rels: Vec<f32>,
    /// Each judgment's hash (for growing the table without hashing again).
    hashes: Vec<u32>,
    /// Open addressing, a power of two long (or empty): 0 = free, else the judgment's index + 1.
    slots: Vec<u32>,
}

/// A hash of a document id's bytes: eight bytes at a time, multiplied and rotated, then mixed. Not keyed: qrels are
/// the user's own files.
#[inline]
fn hash(s: &str) -> u32 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let b = s.as_bytes();
    let mut h = (b.len() as u64).wrapping_mul(K);
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes(w.try_into().expect("eight bytes"));
        h = (h ^ w).wrapping_mul(K).rotate_left(31);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let w = rest.iter().rev().fold(0u64, |w, &c| (w << 8) | c as u64);
        h = (h ^ w).wrapping_mul(K).rotate_left(31);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (h >> 32) as u32
}

#[inline]
fn same_bytes(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

impl QueryQrels {
    /// No judgments.
    pub fn new() -> Self {
        Self::default()
    }
    /// Number of judged documents.
    pub fn len(&self) -> usize {
        self.rels.len()
    }
    /// True when no document is judged.
    pub fn is_empty(&self) -> bool {
        self.rels.is_empty()
    }
    /// The relevance of `docid`, if judged.
    #[inline]
    pub fn get(&self, docid: &str) -> Option<f32> {
        self.position(docid).map(|i| self.rels[i])
    }
    /// The judgments as `(docid, relevance)`, in order of first judgment.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, f32)> + '_ {
        (0..self.len()).map(move |i| (self.ids.get(i), self.rels[i]))
    }
    /// Judge `docid` (a document judged again keeps the new value, in its first place).
    pub fn insert(&mut self, docid: &str, rel: f32) {
        if self.slots.is_empty() {
            self.grow();
        }
        let h = hash(docid);
        match self.find(docid, h) {
            Ok(i) => self.rels[i] = rel,
            Err(slot) => {
                assert!(
                    self.rels.len() < u32::MAX as usize,
                    "a query of 2^32 judgments"
                );
                self.ids.push(docid);
                self.rels.push(rel);
                self.hashes.push(h);
                self.slots[slot] = self.rels.len() as u32;
                if self.rels.len() * 2 > self.slots.len() {
                    self.grow();
                }
            }
        }
    }
    /// The relevance of judgment `i` (in the order of [`QueryQrels::iter`]).
    #[inline]
    pub(crate) fn rel(&self, i: usize) -> f32 {
        self.rels[i]
    }
    /// Where `docid` is among the judgments (the index of [`QueryQrels::iter`]), if judged.
    #[inline]
    pub(crate) fn position(&self, docid: &str) -> Option<usize> {
        if self.slots.is_empty() {
            return None;
        }
        self.find(docid, hash(docid)).ok()
    }
    /// The judgment of `docid` (hash `h`), or the free slot where it would go. The table must not be full.
    #[inline]
    fn find(&self, docid: &str, h: u32) -> Result<usize, usize> {
        if self.slots.is_empty() {
            return Err(0);
        }
        let mask = self.slots.len() - 1;
        let mut at = h as usize & mask;
        loop {
            match self.slots[at] {
                0 => return Err(at),
                e => {
                    let i = e as usize - 1;
                    // Byte by byte: doc ids are short, and a call to `memcmp` cost more.
                    if self.hashes[i] == h && same_bytes(self.ids.get(i), docid) {
                        return Ok(i);
                    }
                }
            }
            at = (at + 1) & mask;
        }
    }
    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        self.slots.clear();
        self.slots.resize(size, 0);
        let mask = size - 1;
        for (i, &h) in self.hashes.iter().enumerate() {
            let mut at = h as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = i as u32 + 1;
        }
    }
    /// The judgments `items` in order (a document judged again keeps its last value), each buffer allocated once.
    pub(crate) fn from_items(items: &[(&str, f32)]) -> Self {
        let text = items.iter().map(|(d, _)| d.len()).sum();
        let mut q = QueryQrels {
            ids: Ids {
                text: String::with_capacity(text),
                ends: Vec::with_capacity(items.len()),
            },
            rels: Vec::with_capacity(items.len()),
            hashes: Vec::with_capacity(items.len()),
            slots: vec![0; (2 * items.len() + 1).next_power_of_two().max(16)],
        };
        for &(d, r) in items {
            q.insert(d, r);
        }
        q
    }
    /// Judge the documents of `other` in its order (a later part of the same query's judgments).
    pub(crate) fn merge(&mut self, other: &QueryQrels) {
        for (d, r) in other.iter() {
            self.insert(d, r);
        }
    }
}

/// Two queries' judgments are equal when they judge the same documents alike (in whatever order).
impl PartialEq for QueryQrels {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(d, r)| other.get(d) == Some(r))
    }
}

/// Qrels: each query's judgments, queries in order of first appearance.
#[derive(Debug, Clone, Default)]
pub struct Qrels {
    index: HashMap<String, usize>,
    queries: Vec<(String, QueryQrels)>,
}

impl Qrels {
    /// No queries.
    pub fn new() -> Self {
        Self::default()
    }
    /// Number of queries.
    pub fn len(&self) -> usize {
        self.queries.len()
    }
    /// True when there are no queries.
    pub fn is_empty(&self) -> bool {
        self.queries.is_empty()
    }
    /// The judgments of `qid`.
    pub fn get(&self, qid: &str) -> Option<&QueryQrels> {
        self.index.get(qid).map(|&i| &self.queries[i].1)
    }
    /// Judge `docid` for `qid` (a pair judged again keeps the new value).
    pub fn insert(&mut self, qid: &str, docid: &str, rel: f32) {
        self.query_mut(qid).insert(docid, rel);
    }
    /// The queries and their judgments, in order of first appearance.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &QueryQrels)> + '_ {
        self.queries.iter().map(|(q, j)| (q.as_str(), j))
    }
    /// The judgments of `qid`, created empty when it has none.
    pub fn query_mut(&mut self, qid: &str) -> &mut QueryQrels {
        let i = match self.index.get(qid) {
            Some(&i) => i,
            None => {
                self.index.insert(qid.to_string(), self.queries.len());
                self.queries.push((qid.to_string(), QueryQrels::new()));
                self.queries.len() - 1
            }
        };
        &mut self.queries[i].1
    }
    /// Add a query's judgments: a new query moves in, a known one takes them after its own.
    pub(crate) fn add(&mut self, qid: &str, judgments: QueryQrels) {
        match self.index.get(qid) {
            Some(&i) => self.queries[i].1.merge(&judgments),
            None => {
                self.index.insert(qid.to_string(), self.queries.len());
                self.queries.push((qid.to_string(), judgments));
            }
        }
    }
}

/// Two qrels are equal when they judge the same queries alike (in whatever order).
impl PartialEq for Qrels {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(q, j)| other.get(q) == Some(j))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash table against a std map: inserts (with repeats, which keep the new value in the first place),
    /// lookups of judged and unjudged ids, growth from empty.
    #[test]
    fn query_qrels_match_a_map() {
        let mut rng = ltr_testdata::XorShift64::new(0x0123_4567_89ab_cdef);
        let mut next = move |m: u64| rng.below(m);
        for n in [0usize, 1, 15, 300, 3000] {
            let mut q = QueryQrels::new();
            let mut want: HashMap<String, f32> = HashMap::new();
            let mut first: Vec<String> = Vec::new();
            for _ in 0..n {
                let d = format!("doc-{}-é", next(n as u64 / 2 + 1) * 7919);
                let r = next(5) as f32;
                if want.insert(d.clone(), r).is_none() {
                    first.push(d.clone());
                }
                q.insert(&d, r);
            }
            assert_eq!(q.len(), want.len());
            for (d, r) in &want {
                assert_eq!(q.get(d), Some(*r), "{d}");
            }
            for i in 0..50 {
                assert_eq!(q.get(&format!("absent-{i}")), None);
            }
            let order: Vec<&str> = q.iter().map(|(d, _)| d).collect();
            assert_eq!(order, first.iter().map(String::as_str).collect::<Vec<_>>());
        }
    }

    #[test]
    fn qrels_keep_queries_in_order_and_merge_parts() {
        let mut a = Qrels::new();
        a.insert("q2", "d1", 1.0);
        a.insert("q1", "d1", 0.0);
        a.insert("q2", "d2", 2.0);
        let mut part = QueryQrels::new();
        part.insert("d1", 3.0);
        part.insert("d9", 1.0);
        a.add("q2", part);
        assert_eq!(a.iter().map(|(q, _)| q).collect::<Vec<_>>(), ["q2", "q1"]);
        let q2: Vec<(&str, f32)> = a.get("q2").unwrap().iter().collect();
        assert_eq!(q2, [("d1", 3.0), ("d2", 2.0), ("d9", 1.0)]);
        let mut b = Qrels::new();
        b.insert("q1", "d1", 0.0);
        for (d, r) in [("d9", 1.0), ("d2", 2.0), ("d1", 3.0)] {
            b.insert("q2", d, r);
        }
        assert_eq!(a, b);
        b.insert("q1", "d1", 1.0);
        assert_ne!(a, b);
    }
}
