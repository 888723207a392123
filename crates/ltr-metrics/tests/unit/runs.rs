use std::collections::HashMap;

use ltr_metrics::runs::*;

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

/// `join` (words loaded at once, the two-slot probe, the slow probe behind it) against a std map: ids of 0 to
/// 40 bytes (one word, two words, longer), ids sharing long prefixes and suffixes (so only the middle bytes
/// differ), unjudged ids, ids at the very end of both buffers, buffers shorter than a word, tables built by
/// inserts (grown) and from items, and a query with no judgments.
#[test]
fn join_matches_a_map() {
    let mut rng = ltr_testdata::XorShift64::new(0xfeed_5eed_1234_9876);
    let mut next = move |m: u64| rng.below(m);
    let shapes: [fn(u64) -> String; 6] = [
        |i| format!("{i}"),
        |i| format!("d{i}"),
        |i| format!("doc-{i:07}"),
        |i| format!("clueweb09-en{i:04}-00-0001"),
        |i| format!("http://example.com/a/{i}/index.html"),
        |i| format!("{}{i}", "x".repeat((i % 41) as usize)),
    ];
    for (k, shape) in shapes.iter().enumerate() {
        for n in [0usize, 1, 3, 40, 900] {
            let mut want: HashMap<String, usize> = HashMap::new();
            let mut items: Vec<(String, f32)> = Vec::new();
            let mut grown = QueryQrels::new();
            for _ in 0..n {
                let d = shape(next(2 * n as u64 + 1));
                let r = next(4) as f32;
                let len = want.len();
                want.entry(d.clone()).or_insert(len);
                grown.insert(&d, r);
                items.push((d, r));
            }
            let ids: Vec<&str> = items.iter().map(|(d, _)| d.as_str()).collect();
            let rels: Vec<f32> = items.iter().map(|(_, r)| *r).collect();
            let built = QueryQrels::from_items(&ids, &rels, &mut Table::default());
            // Retrieved: judged and unjudged ids of the same shape, the empty id, and judged ids last.
            let mut docs: Vec<String> = (0..2 * n as u64 + 3).map(shape).collect();
            docs.push(String::new());
            docs.extend(items.iter().rev().take(3).map(|(d, _)| d.clone()));
            let run = RunQuery::with_docs("q", docs.iter().map(|d| (d.as_str(), 0.0)));
            // `built` joins through a thread's table (its own is unbuilt until `position` below).
            let mut scratch = Table::default();
            for j in [&grown, &built] {
                let mut got = Vec::new();
                assert!(j.prepare_join(&mut scratch).is_none());
                j.join(&run, &scratch, |at| got.push(at));
                let mut by_strs = Vec::new();
                let strs: Vec<&str> = docs.iter().map(String::as_str).collect();
                j.join_strs(&strs, &scratch, |at| by_strs.push(at));
                assert_eq!(by_strs, got, "shape {k}, {n} judgments");
                let expect: Vec<Option<usize>> =
                    docs.iter().map(|d| want.get(d).copied()).collect();
                assert_eq!(got, expect, "shape {k}, {n} judgments");
                let by_position: Vec<Option<usize>> = docs.iter().map(|d| j.position(d)).collect();
                assert_eq!(by_position, expect, "shape {k}, {n} judgments");
            }
        }
    }
    // Buffers shorter than a word on both sides.
    let mut j = QueryQrels::new();
    j.insert("ab", 1.0);
    let run = RunQuery::with_docs("q", [("ab", 0.0), ("a", 0.0), ("abc", 0.0)]);
    let mut got = Vec::new();
    let mut scratch = Table::default();
    assert!(j.prepare_join(&mut scratch).is_none());
    j.join(&run, &scratch, |at| got.push(at));
    assert_eq!(got, [Some(0), None, None]);
}

/// Unchecked judgments (as `ltr eval` reads them): without a document judged twice they join as they are;
/// with one, `prepare_join` hands back the judgments a checked read gives (the last value, in the first place),
/// also when the duplicate comes in a later part; inserting into them checks them first.
#[test]
fn unchecked_judgments_find_their_duplicates() {
    let mut scratch = Table::default();
    let ids = ["a", "b", "c", "b", "d"];
    let rels = [1.0, 2.0, 0.0, 3.0, 1.0];
    let checked = QueryQrels::from_items(&ids, &rels, &mut scratch);
    assert_eq!(
        checked.iter().collect::<Vec<_>>(),
        [("a", 1.0), ("b", 3.0), ("c", 0.0), ("d", 1.0)]
    );
    let distinct = QueryQrels::from_items_unchecked(&ids[..3], &rels[..3]);
    assert!(distinct.prepare_join(&mut scratch).is_none());
    let run = RunQuery::with_docs("q", [("c", 0.0), ("x", 0.0), ("a", 0.0)]);
    let mut got = Vec::new();
    distinct.join(&run, &scratch, |at| got.push(at));
    assert_eq!(got, [Some(2), None, Some(0)]);
    // The duplicate in one part, and in a later part merged in.
    let whole = QueryQrels::from_items_unchecked(&ids, &rels);
    let mut parts = QueryQrels::from_items_unchecked(&ids[..3], &rels[..3]);
    parts.merge(&QueryQrels::from_items_unchecked(&ids[3..], &rels[3..]));
    for j in [whole, parts] {
        let deduped = j.prepare_join(&mut scratch).expect("b is judged twice");
        assert_eq!(
            deduped.iter().collect::<Vec<_>>(),
            checked.iter().collect::<Vec<_>>()
        );
        assert!(deduped.prepare_join(&mut scratch).is_none());
        let mut j = j;
        j.insert("e", 2.0);
        assert_eq!(j.len(), 5);
        assert_eq!((j.get("b"), j.get("e")), (Some(3.0), Some(2.0)));
    }
}

/// The words of an id: zero above its bytes, wherever it lies in its buffer.
#[test]
fn load_and_hash_match_bytes() {
    let text = b"0123456789abcdefghij";
    for len in 0..=8 {
        for at in 0..=text.len() - len {
            let want = text[at..at + len]
                .iter()
                .rev()
                .fold(0u64, |w, &c| (w << 8) | c as u64);
            assert_eq!(load(text, at, len), want, "at {at}, len {len}");
            assert_eq!(load(&text[..at + len], at, len), want, "at {at}, len {len}");
            assert_eq!(
                load(&text[at..at + len], 0, len),
                want,
                "at {at}, len {len}"
            );
        }
    }
    for len in 0..=text.len() {
        for at in 0..=text.len() - len {
            let s = std::str::from_utf8(&text[at..at + len]).unwrap();
            assert_eq!(hash_at(text, at, len), hash(s));
            assert!(same_at(text, at, s.as_bytes(), 0, len));
            if len > 0 {
                let mut other = s.as_bytes().to_vec();
                for p in [0, len / 2, len - 1] {
                    other[p] ^= 1;
                    assert!(
                        !same_at(text, at, &other, 0, len),
                        "at {at}, len {len}, byte {p}"
                    );
                    other[p] ^= 1;
                }
            }
        }
    }
}
