//! `ltr experiment --config FILE` on arbitrary bytes: the experiment file is read and checked as the command does
//! (`Experiment::from_file`: `ExperimentSpec::load`, then `Experiment::prepare`, which checks the methods,
//! parameters, metrics, tests and preprocessing and reads the folds; nothing is trained). The file lies in a folder
//! that also holds a tiny dataset (`all.txt`, 10 queries) and a fold folder (`folds/Fold1` with `vali.txt`,
//! `folds/Fold2` without), so the seeds' relative data paths reach real data. A data or `model:` path that exists
//! outside that folder is not read (it could name `/dev/zero`). Invariants: a refusal names the experiment file; a spec that loads
//! is written (`to_toml`, what the command saves as `experiment.toml`) as TOML that loads again to an equal spec and
//! is written again to the same text.
#![no_main]
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ltr_experiment::{Experiment, ExperimentSpec};
use ltr_fuzz::{assert_names_file, scratch};

/// The folder of the experiment file, with the data it may point at (written once per process).
fn fixture() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = scratch("experiment");
        let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
            queries: 10,
            min_docs: 3,
            max_docs: 4,
            features: 4,
            ..ltr_data::SyntheticConfig::default()
        })
        .expect("valid generator settings");
        let write = |rel: &str, queries: &[usize]| {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).expect("fixture folder");
            ltr_data::write_letor(&ds.select_queries(queries), &p).expect("fixture file");
        };
        write("all.txt", &(0..10).collect::<Vec<_>>());
        write("folds/Fold1/train.txt", &[0, 1, 2, 3, 4, 5]);
        write("folds/Fold1/vali.txt", &[6, 7]);
        write("folds/Fold1/test.txt", &[8, 9]);
        write("folds/Fold2/train.txt", &[2, 3, 4, 5, 6, 7, 8, 9]);
        write("folds/Fold2/test.txt", &[0, 1]);
        std::fs::canonicalize(&dir).expect("fixture folder")
    })
}

/// Data paths and `model:FILE` files that exist outside the fixture folder are not read.
fn stays_inside(spec: &ExperimentSpec, dir: &Path) -> bool {
    let models = spec.algorithms.iter().filter_map(|m| m.model_file());
    [&spec.data.file, &spec.data.fold_dir]
        .into_iter()
        .flatten()
        .map(PathBuf::as_path)
        .chain(models)
        .all(|p| std::fs::canonicalize(p).map_or(true, |c| c.starts_with(dir)))
}

fuzz_target!(|data: &[u8]| {
    let dir = fixture();
    let path = dir.join("experiment.toml");
    std::fs::write(&path, data).expect("scratch file writable");
    let spec = match ExperimentSpec::load(&path) {
        Ok(spec) => spec,
        Err(e) => return assert_names_file(&e.to_string(), &path),
    };
    // What loads is written as TOML that loads again to the same spec (a NaN validation share loads, and is refused
    // by `prepare`; NaN is unequal to itself, so it is compared as text only).
    let text = spec.to_toml().expect("a loaded spec writes as TOML");
    let again_path = dir.join("again.toml");
    std::fs::write(&again_path, &text).expect("scratch file writable");
    let again = ExperimentSpec::load(&again_path)
        .unwrap_or_else(|e| panic!("written spec does not load again: {e}\n{text}"));
    if !spec.data.validation_share.is_nan() {
        assert_eq!(again, spec, "{text}");
    }
    assert_eq!(again.to_toml().expect("writes again"), text);
    if !stays_inside(&spec, dir) {
        return;
    }
    if let Err(e) = Experiment::from_file(&path) {
        assert_names_file(&e.to_string(), &path);
    }
});
