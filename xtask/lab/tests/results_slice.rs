//! `results/` cannot go stale: the slice of every experiment (fold 1, the cheapest setting of each row, every method
//! row; `xtask-lab check-results`) is computed afresh and compared with the committed `results/slice/*.csv`,
//! exactly, timing columns aside. Regenerate with `rm -rf results/cells && cargo xtask reproduce all`.

use std::process::Command;

#[test]
fn results_agree_with_a_fresh_slice_of_every_experiment() {
    let Some(data) = ltr_testdata::shared_datasets_dir() else {
        println!("SKIP: ../shared/datasets (MQ2008, OHSUMED) not found");
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_xtask-lab"))
        .arg("check-results")
        .arg("--data")
        .arg(&data)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
