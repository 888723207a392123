//! `xtask-lab compare-results` (`xtask_lab::reproduce::committed`): every table a reproduction rewrote, against the
//! same file at a git revision, timing columns aside.

use std::path::{Path, PathBuf};
use std::process::Command;

use xtask_lab::reproduce::committed::{compare_with_revision, tables};

const CELLS: &str = "MAP,method,train_s\n0.4,\"RankSVM\",1.5\n0.25,\"MART\",2\n";
const SLICE: &str = "NDCG@10,method,seconds\n0.5,\"RankSVM\",0.1\n";

fn git(repo: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=test", "-c", "user.email=test@example.org"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new repository holding `results/committee/cells.csv` and `results/slice/committee.csv`, committed; returns it
/// (removed when dropped) and its `results` folder.
fn committed_results() -> (tempfile::TempDir, PathBuf) {
    let repo = tempfile::tempdir().unwrap();
    let results = repo.path().join("results");
    std::fs::create_dir_all(results.join("committee")).unwrap();
    std::fs::create_dir_all(results.join("slice")).unwrap();
    std::fs::write(results.join("committee/cells.csv"), CELLS).unwrap();
    std::fs::write(results.join("slice/committee.csv"), SLICE).unwrap();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "tables"]);
    (repo, results)
}

#[test]
fn tables_are_every_papers_cells_then_the_slice() {
    let (_repo, results) = committed_results();
    std::fs::create_dir_all(results.join("cells")).unwrap();
    std::fs::write(results.join("index.md"), "# index\n").unwrap();
    let found = tables(&results).unwrap();
    assert_eq!(
        found,
        [
            PathBuf::from("committee/cells.csv"),
            PathBuf::from("slice/committee.csv")
        ]
    );
}

#[test]
fn a_rerun_that_moved_only_times_agrees() {
    let (_repo, results) = committed_results();
    std::fs::write(
        results.join("committee/cells.csv"),
        CELLS.replace("1.5", "9.75"),
    )
    .unwrap();
    std::fs::write(
        results.join("slice/committee.csv"),
        SLICE.replace("0.1\n", "3\n"),
    )
    .unwrap();
    assert_eq!(
        compare_with_revision(results.parent().unwrap(), &results, "HEAD").unwrap(),
        2
    );
}

#[test]
fn a_moved_value_fails_naming_file_line_and_column() {
    let (_repo, results) = committed_results();
    std::fs::write(
        results.join("committee/cells.csv"),
        CELLS.replace("0.25,", "0.26,"),
    )
    .unwrap();
    let e = format!(
        "{:#}",
        compare_with_revision(results.parent().unwrap(), &results, "HEAD").unwrap_err()
    );
    assert!(e.contains("in 1 place(s)"), "{e}");
    assert!(
        e.contains("committee/cells.csv: line 3, column MAP: committed 0.25, reproduced 0.26"),
        "{e}"
    );
}

#[test]
fn a_table_not_at_the_revision_and_a_folder_without_tables_fail() {
    let (_repo, results) = committed_results();
    std::fs::create_dir_all(results.join("mhr")).unwrap();
    std::fs::write(results.join("mhr/cells.csv"), CELLS).unwrap();
    let e = format!(
        "{:#}",
        compare_with_revision(results.parent().unwrap(), &results, "HEAD").unwrap_err()
    );
    assert!(
        e.contains("mhr/cells.csv: no results/mhr/cells.csv at HEAD"),
        "{e}"
    );
    let empty = results.parent().unwrap().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = format!(
        "{:#}",
        compare_with_revision(results.parent().unwrap(), &empty, "HEAD").unwrap_err()
    );
    assert!(e.contains("no X/cells.csv or slice/X.csv here"), "{e}");
}
