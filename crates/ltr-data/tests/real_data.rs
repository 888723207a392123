//! The official statistics of the shared LETOR benchmarks (skipped with a reason when the folder is absent).

use ltr_testdata::shared_datasets_dir;

use ltr_data::{letor_folds, load_cache, read_letor, save_cache, write_letor, Dataset};

fn all_docs(dir: &std::path::Path) -> Option<Vec<Dataset>> {
    let folds = letor_folds(dir).ok()?;
    // Fold1's train+vali+test covers every query exactly once.
    let f = &folds[0];
    Some(
        [&f.train, &f.vali, &f.test]
            .iter()
            .map(|p| read_letor(p).expect("parse"))
            .collect(),
    )
}

fn check(name: &str, sub: &str, queries: usize, docs: usize, features: usize, grades: [usize; 3]) {
    let Some(root) = shared_datasets_dir() else {
        eprintln!("SKIP {name}: ../shared/datasets is absent (set LTR_DATASETS to run)");
        return;
    };
    let dir = root.join(sub);
    let parts = all_docs(&dir).expect("five LETOR folds");
    assert_eq!(
        parts.iter().map(Dataset::n_queries).sum::<usize>(),
        queries,
        "{name} queries"
    );
    assert_eq!(
        parts.iter().map(Dataset::n_docs).sum::<usize>(),
        docs,
        "{name} documents"
    );
    for p in &parts {
        assert_eq!(p.n_features(), features, "{name} features");
        assert!(p.is_dense());
        assert!(
            p.docids().is_some(),
            "{name}: doc ids extracted from comments"
        );
    }
    let mut hist = [0usize; 3];
    for p in &parts {
        for (l, c) in p.label_histogram() {
            hist[l as usize] += c;
        }
    }
    assert_eq!(hist, grades, "{name} label histogram");
    // Every fold has the same totals.
    for f in letor_folds(&dir).unwrap() {
        let n: usize = [&f.train, &f.vali, &f.test]
            .iter()
            .map(|p| read_letor(p).unwrap().n_docs())
            .sum();
        assert_eq!(n, docs, "{name} fold {}", f.number);
    }
}

#[test]
fn mq2008_official_counts() {
    check("MQ2008", "MQ2008", 784, 15_211, 46, [12_279, 2_001, 931]);
}

#[test]
fn ohsumed_official_counts() {
    check(
        "OHSUMED",
        "OHSUMED/QueryLevelNorm",
        106,
        16_140,
        45,
        [11_303, 2_585, 2_252],
    );
}

#[test]
fn real_file_roundtrips_through_text_and_cache() {
    let Some(root) = shared_datasets_dir() else {
        eprintln!("SKIP: ../shared/datasets is absent");
        return;
    };
    let src = root.join("MQ2008/Fold1/vali.txt");
    let ds = read_letor(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let txt = dir.path().join("copy.txt");
    write_letor(&ds, &txt).unwrap();
    let again = read_letor(&txt).unwrap();
    assert_eq!(ds, again);
    let cache = dir.path().join("copy.ltrcache");
    save_cache(&ds, &cache, Some(&src)).unwrap();
    assert_eq!(load_cache(&cache, Some(&src)).unwrap(), ds);
    // Stale: the cache was made from `src`, not from the copy.
    let err = load_cache(&cache, Some(&txt)).unwrap_err().to_string();
    assert!(err.contains("stale"), "{err}");
}

#[test]
fn corrupt_truncated_and_foreign_caches_are_rejected() {
    let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 30,
        seed: 9,
        ..Default::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.ltrcache");
    save_cache(&ds, &p, None).unwrap();
    assert_eq!(load_cache(&p, None).unwrap(), ds);
    let good = std::fs::read(&p).unwrap();
    let reject = |bytes: &[u8], needle: &str| {
        std::fs::write(&p, bytes).unwrap();
        let e = load_cache(&p, None).unwrap_err().to_string();
        assert!(
            e.contains(needle) && e.contains("d.ltrcache"),
            "`{e}` should mention `{needle}`"
        );
    };
    // A flipped bit in the feature values.
    let mut flipped = good.clone();
    let mid = good.len() / 2;
    flipped[mid] ^= 0x10;
    reject(&flipped, "checksum mismatch");
    // Cut short.
    reject(&good[..good.len() - 100], "truncated");
    // Another format version.
    let mut v = good.clone();
    v[8] = 1;
    reject(&v, "format version 1");
    // Not a cache at all.
    reject(b"label qid:1 1:0.5\n", "wrong magic");
}
