//! TREC runs and qrels in memory, with their document ids interned per query: each query keeps its ids in one
//! buffer (one allocation for the whole list, not one per id), and a query's judgments are found through a hash
//! table of 32-bit entries into that buffer instead of a map of owned strings.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Strings in one buffer, entry `i` ending at `ends[i]` (32 bits: half the memory to read in a join; a query's
/// ids take less than 4 GiB).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Ids {
    text: String,
    ends: Vec<u32>,
}

/// The offset `at` of a query's ids as stored in [`Ids::ends`].
#[inline]
fn offset(at: usize) -> u32 {
    u32::try_from(at).expect("a query's document ids take less than 4 GiB")
}

impl Ids {
    #[inline]
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(offset(self.text.len()));
    }
    #[inline]
    fn get(&self, i: usize) -> &str {
        let (start, end) = self.span(i);
        &self.text[start..end]
    }
    /// Where entry `i` starts and ends in `text`.
    #[inline]
    fn span(&self, i: usize) -> (usize, usize) {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        (start as usize, self.ends[i] as usize)
    }
    /// `ids` in one buffer. An id of up to eight bytes is written as one word (its bytes, zeros above them, which
    /// the next id overwrites), not by a call to `memcpy`: the qrels' ids are copied this way.
    fn from_strs(ids: &[&str]) -> Ids {
        let total: usize = ids.iter().map(|d| d.len()).sum();
        let mut text = vec![0u8; total + 8];
        let mut ends = Vec::with_capacity(ids.len());
        let mut at = 0;
        for d in ids {
            let b = d.as_bytes();
            if b.len() <= 8 {
                text[at..at + 8].copy_from_slice(&load(b, 0, b.len()).to_le_bytes());
            } else {
                text[at..at + b.len()].copy_from_slice(b);
            }
            at += b.len();
            ends.push(offset(at));
        }
        text.truncate(total);
        Ids {
            text: String::from_utf8(text).expect("whole UTF-8 strings"),
            ends,
        }
    }
    fn append(&mut self, other: &Ids) {
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.ends
            .extend(other.ends.iter().map(|&e| offset(e as usize + base)));
    }
}

/// One query of a TREC run: its id and its documents (id and score) in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunQuery {
    qid: String,
    ids: Ids,
    scores: Vec<f64>,
    /// Each document id's hash, taken while the id is in the cache (reading a run parses and hashes each line
    /// in one pass): evaluating against qrels then probes their table without touching the id's bytes again
    /// until the one comparison that confirms a match.
    hashes: Vec<u32>,
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
        self.hashes.push(hash(docid));
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
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    pub fn from_items(ids: &[&str], scores: &[f64]) -> Self {
        RunQuery {
            qid: String::new(),
            ids: Ids::from_strs(ids),
            scores: scores.to_vec(),
            hashes: ids.iter().map(|d| hash(d)).collect(),
        }
    }
    pub(crate) fn set_qid(&mut self, qid: &str) {
        qid.clone_into(&mut self.qid);
    }
    /// Append the documents of `other` (the same query, later in its file).
    pub(crate) fn append(&mut self, other: &RunQuery) {
        self.ids.append(&other.ids);
        self.scores.extend_from_slice(&other.scores);
        self.hashes.extend_from_slice(&other.hashes);
    }
}

/// The judgments of one query: document id → relevance, ids interned in one buffer, found by hashing.
#[derive(Debug, Clone, Default)]
pub struct QueryQrels {
    /// The ids, in order of first judgment: distinct, unless `unchecked`.
    ids: Ids,
    rels: Vec<f32>,
    /// The hash table of `ids`, built at the first lookup or insert. Reading qrels leaves it unbuilt (its duplicates
    /// are found in a table of the reading thread, reused from query to query), and evaluation builds each query's
    /// table in a table of its own thread, hot for the join that follows: the whole `ltr eval` process on the
    /// 10,000 × 1,000 benchmark spent much of its system time having the kernel hand out and clear fresh pages,
    /// and one table per query kept was 8 of the 20 bytes a judgment (BENCHMARKS.md, issue 55).
    table: OnceLock<Table>,
    /// Judgments as the file lists them, a document judged twice listed twice (the last value counts, in the first
    /// place): only qrels read for one evaluation are, and [`QueryQrels::prepare_join`] finds the duplicates in the
    /// table it builds anyway, so that reading them builds no table at all. Never true for qrels a caller sees.
    unchecked: bool,
}

/// An open-addressing hash table over a query's distinct ids ([`Ids`]), a power of two long (or empty) and at
/// most half full: 0 = free, else the id's index + 1 in the low log2(len) bits and the high bits of its hash above
/// them (see [`entry`]). No stored hashes: rebuilding hashes the ids again.
// pub for the tests in tests/unit/runs.rs; not API.
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct Table {
    slots: Vec<u32>,
}

/// The `len` (at most 8) bytes of `b` from `at` as a little-endian word, zero above them: one unaligned load where
/// eight bytes can be read (the word ending at the buffer's end when the id is near it), else two or three.
// pub for the tests in tests/unit/runs.rs; not API.
#[doc(hidden)]
#[inline]
pub fn load(b: &[u8], at: usize, len: usize) -> u64 {
    debug_assert!(len <= 8 && at + len <= b.len());
    if len == 0 {
        return 0;
    }
    let keep = u64::MAX >> (64 - 8 * len);
    if at + 8 <= b.len() {
        word(b, at) & keep
    } else if b.len() >= 8 {
        (word(b, b.len() - 8) >> (8 * (at + 8 - b.len()))) & keep
    } else {
        // A buffer shorter than a word (an id cut out of a line): two overlapping loads of four bytes, or of the
        // first, middle and last byte (equal bytes where they overlap), not a loop over an unpredictable length.
        let s = &b[at..at + len];
        if len >= 4 {
            let four =
                |i: usize| u32::from_le_bytes(s[i..i + 4].try_into().expect("four bytes")) as u64;
            four(0) | four(len - 4) << (8 * (len - 4))
        } else {
            s[0] as u64
                | (s[len / 2] as u64) << (8 * (len / 2))
                | (s[len - 1] as u64) << (8 * (len - 1))
        }
    }
}

/// The eight bytes of `b` from `at`, little-endian.
#[inline]
fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"))
}

/// A hash of a document id's bytes (`len` bytes of `b` from `at`): eight bytes at a time, multiplied and rotated,
/// then mixed. Not keyed: qrels are the user's own files.
// pub for the tests in tests/unit/runs.rs; not API.
#[doc(hidden)]
#[inline]
pub fn hash_at(b: &[u8], at: usize, len: usize) -> u32 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (len as u64).wrapping_mul(K);
    let (mut p, end) = (at, at + len);
    while end - p >= 8 {
        h = (h ^ word(b, p)).wrapping_mul(K).rotate_left(31);
        p += 8;
    }
    if p < end {
        h = (h ^ load(b, p, end - p)).wrapping_mul(K).rotate_left(31);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (h >> 32) as u32
}

// pub for the tests in tests/unit/runs.rs; not API.
#[doc(hidden)]
#[inline]
pub fn hash(s: &str) -> u32 {
    hash_at(s.as_bytes(), 0, s.len())
}

/// The slot entry of judgment `i` (hash `h`) in a table of 2^`bits` slots: `i + 1` in the low `bits` bits (it is
/// at most half the table's length), the bits of `h` above them as the tag.
#[inline]
fn entry(bits: u32, i: usize, h: u32) -> u32 {
    let tag = (h as u64 >> bits) << bits;
    (tag | (i as u64 + 1)) as u32
}

/// Whether `len` bytes of `a` from `ai` equal those of `b` from `bi`: ids of up to 16 bytes as one or two words.
// pub for the tests in tests/unit/runs.rs; not API.
#[doc(hidden)]
#[inline(always)]
pub fn same_at(a: &[u8], ai: usize, b: &[u8], bi: usize, len: usize) -> bool {
    if len <= 8 {
        load(a, ai, len) == load(b, bi, len)
    } else if len <= 16 {
        word(a, ai) == word(b, bi) && word(a, ai + len - 8) == word(b, bi + len - 8)
    } else {
        a[ai..ai + len] == b[bi..bi + len]
    }
}

impl Table {
    /// Empty, with room for `n` ids at most half full.
    fn reset(&mut self, n: usize) {
        let size = (2 * n + 1).next_power_of_two().max(16);
        self.slots.clear();
        self.slots.resize(size, 0);
    }
    /// The table of the distinct `ids`, in `self`'s allocation.
    fn build(&mut self, ids: &Ids) {
        self.reset(ids.ends.len());
        let mask = self.slots.len() - 1;
        let bits = self.slots.len().trailing_zeros();
        let text = ids.text.as_bytes();
        let mut start = 0;
        for (i, &end) in ids.ends.iter().enumerate() {
            let end = end as usize;
            let h = hash_at(text, start, end - start);
            let mut at = h as usize & mask;
            while self.slots[at] != 0 {
                at = (at + 1) & mask;
            }
            self.slots[at] = entry(bits, i, h);
            start = end;
        }
    }
    /// The table of `ids` in `self`'s allocation, as [`Table::build`], or `false` (the table half built) when an id
    /// is listed twice.
    fn build_checked(&mut self, ids: &Ids) -> bool {
        self.reset(ids.ends.len());
        let bits = self.slots.len().trailing_zeros();
        let text = ids.text.as_bytes();
        let mut start = 0;
        for (i, &end) in ids.ends.iter().enumerate() {
            let end = end as usize;
            let h = hash_at(text, start, end - start);
            match self.find_at(ids, text, start, end - start, h) {
                Ok(_) => return false,
                Err(at) => self.slots[at] = entry(bits, i, h),
            }
            start = end;
        }
        true
    }
    /// The index in `ids` of the id `len` bytes of `b` from `at` (hash `h`), or the free slot where it would go.
    /// The table must not be empty or full.
    #[inline]
    fn find_at(&self, ids: &Ids, b: &[u8], at: usize, len: usize, h: u32) -> Result<usize, usize> {
        let text = ids.text.as_bytes();
        let mask = self.slots.len() - 1;
        let bits = self.slots.len().trailing_zeros();
        let tag = h as u64 >> bits;
        let mut slot = h as usize & mask;
        loop {
            match self.slots[slot] {
                0 => return Err(slot),
                // The slot's tag (the hash's bits above the table's) first: the judgment's id is read only when
                // the tags agree, almost always its own.
                e if e as u64 >> bits == tag => {
                    let i = (e as usize & mask) - 1;
                    let (start, end) = ids.span(i);
                    if end - start == len && same_at(text, start, b, at, len) {
                        return Ok(i);
                    }
                }
                _ => {}
            }
            slot = (slot + 1) & mask;
        }
    }
    /// Where the id `len` bytes of `b` from `at`, whose hash is `h`, is among `ids`. The first two slots of its
    /// probe are read at once and the one whose tag agrees is chosen without a branch (most judged ids are found
    /// there, and which of the two holds an id is unpredictable); any other case takes [`Table::find_at`]. The
    /// table must not be empty.
    #[inline]
    fn position_at(&self, ids: &Ids, b: &[u8], at: usize, len: usize, h: u32) -> Option<usize> {
        debug_assert_eq!(h, hash_at(b, at, len));
        let mask = self.slots.len() - 1;
        let bits = self.slots.len().trailing_zeros();
        let tag = h as u64 >> bits;
        let slot = h as usize & mask;
        let (e0, e1) = (self.slots[slot], self.slots[(slot + 1) & mask]);
        let e = if e0 != 0 && e0 as u64 >> bits == tag {
            e0
        } else {
            e1
        };
        let i = e as usize & mask;
        if i != 0 && e as u64 >> bits == tag {
            let (start, end) = ids.span(i - 1);
            if end - start == len && same_at(ids.text.as_bytes(), start, b, at, len) {
                return Some(i - 1);
            }
        }
        self.find_at(ids, b, at, len, h).ok()
    }
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
    /// This query's own table, built at the first call.
    fn table(&self) -> &Table {
        debug_assert!(!self.unchecked, "unchecked judgments are only joined");
        self.table.get_or_init(|| {
            let mut t = Table::default();
            t.build(&self.ids);
            t
        })
    }
    /// Judge `docid` (a document judged again keeps the new value, in its first place).
    pub fn insert(&mut self, docid: &str, rel: f32) {
        if self.unchecked {
            let ids: Vec<&str> = (0..self.len()).map(|i| self.ids.get(i)).collect();
            *self = QueryQrels::from_items(&ids, &self.rels, &mut Table::default());
        }
        self.table();
        let table = self.table.get_mut().expect("built above");
        Self::insert_into(table, &mut self.ids, &mut self.rels, docid, rel);
    }
    /// [`QueryQrels::insert`] with the table of `ids` given (grown when it is half full).
    #[inline]
    fn insert_into(table: &mut Table, ids: &mut Ids, rels: &mut Vec<f32>, docid: &str, rel: f32) {
        let h = hash(docid);
        match table.find_at(ids, docid.as_bytes(), 0, docid.len(), h) {
            Ok(i) => rels[i] = rel,
            Err(slot) => {
                assert!(rels.len() < u32::MAX as usize, "a query of 2^32 judgments");
                ids.push(docid);
                rels.push(rel);
                table.slots[slot] = entry(table.slots.len().trailing_zeros(), rels.len() - 1, h);
                if rels.len() * 2 > table.slots.len() {
                    table.build(ids);
                }
            }
        }
    }
    /// Where `docid` is among the judgments (the index of [`QueryQrels::iter`]), if judged.
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    #[inline]
    pub fn position(&self, docid: &str) -> Option<usize> {
        if self.is_empty() {
            return None;
        }
        self.table()
            .find_at(&self.ids, docid.as_bytes(), 0, docid.len(), hash(docid))
            .ok()
    }
    /// Make ready to join: warm this query's own table when it has one, else build one in `scratch` (a thread's
    /// table, reused from query to query). `Some` judgments, without duplicates, to join instead when these are
    /// [`unchecked`](QueryQrels::unchecked) and judge a document twice (then prepare those).
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    #[inline]
    pub fn prepare_join(&self, scratch: &mut Table) -> Option<QueryQrels> {
        if self.is_empty() {
            return None;
        }
        if let Some(t) = self.table.get() {
            self.warm(t);
            return None;
        } else if !self.unchecked {
            scratch.build(&self.ids);
        } else if !scratch.build_checked(&self.ids) {
            let ids: Vec<&str> = (0..self.len()).map(|i| self.ids.get(i)).collect();
            return Some(QueryQrels::from_items(&ids, &self.rels, scratch));
        }
        // The relevance values too, read in order now rather than missing the cache in the join's order (a third
        // of `run_query_values`'s samples were that load).
        let t = self
            .rels
            .iter()
            .step_by(16)
            .fold(0u32, |a, &x| a ^ x.to_bits());
        std::hint::black_box(t);
        None
    }
    /// The table [`QueryQrels::prepare_join`] made ready.
    #[inline]
    fn join_table<'t>(&'t self, scratch: &'t Table) -> &'t Table {
        self.table.get().unwrap_or(scratch)
    }
    /// For each document of `run` in order, where its id is among the judgments (as [`QueryQrels::position`]),
    /// once [`QueryQrels::prepare_join`] (given `scratch`) returned `None`.
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    #[inline]
    pub fn join(&self, run: &RunQuery, scratch: &Table, mut f: impl FnMut(Option<usize>)) {
        if self.is_empty() {
            (0..run.len()).for_each(|_| f(None));
            return;
        }
        let table = self.join_table(scratch);
        let b = run.ids.text.as_bytes();
        let mut start = 0;
        for (&end, &h) in run.ids.ends.iter().zip(&run.hashes) {
            let end = end as usize;
            f(table.position_at(&self.ids, b, start, end - start, h));
            start = end;
        }
    }
    /// For each of `ids` in order, where it is among the judgments (as [`QueryQrels::join`], hashing each id here).
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    #[inline]
    pub fn join_strs(&self, ids: &[&str], scratch: &Table, mut f: impl FnMut(Option<usize>)) {
        if self.is_empty() {
            ids.iter().for_each(|_| f(None));
            return;
        }
        let table = self.join_table(scratch);
        for id in ids {
            f(table.position_at(&self.ids, id.as_bytes(), 0, id.len(), hash(id)));
        }
    }
    /// Read the table and the ids once in address order, one load per 64 bytes, so that the lookups (in random
    /// order) find them in the cache: a query's judgments are usually cold, and sequential reads are prefetched.
    #[inline]
    fn warm(&self, table: &Table) {
        fn touch<T: Copy + Into<u64>>(v: &[T]) -> u64 {
            let step = (64 / std::mem::size_of::<T>()).max(1);
            v.iter()
                .step_by(step)
                .fold(0u64, |a, &x| a.wrapping_add(x.into()))
        }
        let t = touch(&table.slots)
            ^ self
                .rels
                .iter()
                .step_by(16)
                .fold(0u64, |a, &x| a ^ x.to_bits() as u64)
            ^ touch(self.ids.text.as_bytes())
            ^ touch(&self.ids.ends);
        std::hint::black_box(t);
    }
    /// The relevance of each judgment (in the order of [`QueryQrels::iter`]).
    #[inline]
    pub(crate) fn rels(&self) -> &[f32] {
        &self.rels
    }
    /// The judgments `items` in order (a document judged again keeps its last value), each buffer allocated once,
    /// without a table of their own: the duplicates are found in `scratch` (a thread's table, reused).
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    pub fn from_items(ids: &[&str], rels: &[f32], scratch: &mut Table) -> Self {
        let text = ids.iter().map(|d| d.len()).sum();
        let mut q = QueryQrels {
            ids: Ids {
                text: String::with_capacity(text),
                ends: Vec::with_capacity(ids.len()),
            },
            rels: Vec::with_capacity(ids.len()),
            table: OnceLock::new(),
            unchecked: false,
        };
        scratch.reset(ids.len());
        for (d, &r) in ids.iter().zip(rels) {
            Self::insert_into(scratch, &mut q.ids, &mut q.rels, d, r);
        }
        q
    }
    /// The judgments `items` as listed, unchecked for duplicates (see [`QueryQrels::unchecked`]): for qrels read
    /// for one evaluation only.
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    pub fn from_items_unchecked(ids: &[&str], rels: &[f32]) -> Self {
        QueryQrels {
            ids: Ids::from_strs(ids),
            rels: rels.to_vec(),
            table: OnceLock::new(),
            unchecked: true,
        }
    }
    /// Judge the documents of `other` in its order (a later part of the same query's judgments); unchecked
    /// judgments (either) are listed after these, unchecked.
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    pub fn merge(&mut self, other: &QueryQrels) {
        if self.unchecked || other.unchecked {
            self.ids.append(&other.ids);
            self.rels.extend_from_slice(&other.rels);
            self.table = OnceLock::new();
            self.unchecked = true;
            return;
        }
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
    // pub for the tests in tests/unit/runs.rs; not API.
    #[doc(hidden)]
    pub fn add(&mut self, qid: &str, judgments: QueryQrels) {
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
