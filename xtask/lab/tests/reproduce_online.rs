//! The online experiment (`xtask_lab::reproduce::online`) on installed MSLR-WEB10K and Yahoo streams, and its cells
//! reused by a second run.

use ltr_data::Dataset;
use ltr_data::{generate_letor_like, write_letor, SyntheticConfig};
use xtask_lab::reproduce::online::run;

fn small(seed: u64, features: usize, grades: u32) -> Dataset {
    generate_letor_like(&SyntheticConfig {
        queries: 12,
        min_docs: 5,
        max_docs: 20,
        features,
        grades,
        seed,
        ..Default::default()
    })
    .unwrap()
}

#[test]
fn installed_mslr_and_yahoo_streams_are_run_with_the_papers_protocol() {
    let root = tempfile::tempdir().unwrap();
    for k in 1..=5 {
        let d = root.path().join(format!("mslr-web10k/Fold{k}"));
        std::fs::create_dir_all(&d).unwrap();
        write_letor(&small(k, 136, 5), &d.join("train.txt")).unwrap();
    }
    std::fs::create_dir_all(root.path().join("yahoo")).unwrap();
    write_letor(&small(9, 700, 5), &root.path().join("yahoo/set1.train.txt")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let ctx = crate::common::quiet_ctx(out.path(), 2, 2, vec![root.path().to_path_buf()]);
    let report = std::fs::read_to_string(run(&ctx).unwrap()).unwrap();
    assert!(report.contains("MSLR-WEB10K: Fold1–Fold5"), "{report}");
    assert!(report.contains("Yahoo! LTR Challenge set 1"), "{report}");
    // Rounds: MSLR = every query of the 5 files once; Yahoo = 4 passes keeping about 80% of 12 queries.
    let csv = std::fs::read_to_string(out.path().join("online/mslr-web10k.csv")).unwrap();
    assert_eq!(csv.lines().count() - 1, 5 * 12);
    let csv = std::fs::read_to_string(out.path().join("online/yahoo-set1.csv")).unwrap();
    let rounds = csv.lines().count() - 1;
    assert!((25..48).contains(&rounds), "{rounds} rounds");
    assert!(out.path().join("online/mslr-web10k.svg").is_file());
    // The cells are checkpointed: a second run reuses them (no cell is rewritten) and writes the same report.
    // A rewrite is an atomic rename, so it shows as a new inode whatever the clock's resolution.
    let stamps = || -> Vec<(std::path::PathBuf, u64, std::time::SystemTime)> {
        let mut v: Vec<_> = std::fs::read_dir(out.path().join("cells"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let m = e.metadata().unwrap();
                (
                    e.path(),
                    std::os::unix::fs::MetadataExt::ino(&m),
                    m.modified().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let before = stamps();
    assert_eq!(before.len(), 3, "simulation, MSLR and Yahoo: {before:?}");
    let again = std::fs::read_to_string(run(&ctx).unwrap()).unwrap();
    assert_eq!(stamps(), before);
    assert_eq!(report, again);
}
