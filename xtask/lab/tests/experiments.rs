//! The names `cargo xtask reproduce` takes (`xtask_lab::reproduce::experiments_named`).

use xtask_lab::reproduce::{experiments_named, EXPERIMENTS};

#[test]
fn clicks_runs_both_click_experiments_and_all_runs_every_one() {
    assert_eq!(
        experiments_named("clicks").unwrap(),
        ["clicks", "clicks-trees"]
    );
    assert_eq!(experiments_named("clicks-trees").unwrap(), ["clicks-trees"]);
    assert_eq!(experiments_named("all").unwrap(), EXPERIMENTS);
    for e in EXPERIMENTS {
        assert!(experiments_named(e).unwrap().contains(&e), "{e}");
    }
    assert!(experiments_named("click").is_none());
}
