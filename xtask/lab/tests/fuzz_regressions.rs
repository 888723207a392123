//! Every input the fuzzers found a bug with (`fuzz/regressions/<target>/`) and every seed (`fuzz/seeds/<target>/`)
//! replayed through the same reader as its fuzz target, on stable Rust in the normal test run: a fixed bug stays
//! fixed. Readers must return (no panic), and a rejection must name the file. See FUZZING.md.

use std::path::{Path, PathBuf};

fn inputs(kind: &str, target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(kind)
        .join(target);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn names_file(message: &str, path: &Path) {
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        message.contains(name),
        "error does not name {name}: {message}"
    );
}

/// Split at the first 0xFF byte, as the two-file fuzz targets do.
fn split(bytes: &[u8]) -> (&[u8], &[u8]) {
    let cut = bytes.iter().position(|&b| b == 0xFF).unwrap_or(bytes.len());
    (&bytes[..cut], bytes.get(cut + 1..).unwrap_or_default())
}

#[test]
fn cache_inputs_load_or_are_refused_naming_the_file() {
    let found = inputs("regressions", "cache_load");
    assert!(!found.is_empty());
    for p in found {
        let e = ltr_data::load_cache(&p, None).expect_err("a corrupt cache must be refused");
        names_file(&e.to_string(), &p);
    }
    for p in inputs("seeds", "cache_load") {
        let ds =
            ltr_data::load_cache(&p, None).unwrap_or_else(|e| panic!("seed {}: {e}", p.display()));
        assert_eq!(ds.query_offsets().last().copied(), Some(ds.n_docs()));
    }
}

#[test]
fn trec_inputs_evaluate_to_finite_values_or_are_refused() {
    use ltr_metrics::{evaluate_run, read_qrels, read_run, Convention, Metric};
    let dir = tempfile::tempdir().unwrap();
    let metrics: Vec<Metric> = ["NDCG@10", "MAP", "P@5", "ERR@10", "MRR"]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    for p in inputs("regressions", "trec_read")
        .into_iter()
        .chain(inputs("seeds", "trec_read"))
    {
        let bytes = std::fs::read(&p).unwrap();
        let (run, qrels) = split(&bytes);
        let (run_path, qrels_path) = (dir.path().join("run.txt"), dir.path().join("qrels.txt"));
        std::fs::write(&run_path, run).unwrap();
        std::fs::write(&qrels_path, qrels).unwrap();
        let (Ok(run), Ok(qrels)) = (read_run(&run_path), read_qrels(&qrels_path)) else {
            continue;
        };
        for conv in [Convention::TREC, Convention::STANDARD] {
            if let Ok(ev) = evaluate_run(&run, &qrels, &metrics, &conv) {
                for m in &ev.results {
                    assert!(
                        m.per_query.iter().all(|v| v.is_finite()),
                        "{}: {} not finite under {conv:?}",
                        p.display(),
                        m.metric
                    );
                }
            }
        }
    }
}

#[test]
fn grade_overflowing_the_exponential_gain_is_refused_not_nan() {
    use ltr_metrics::{evaluate_run, read_qrels, read_run, Convention, Metric};
    let p = &inputs("regressions", "trec_read")[0];
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(p).unwrap();
    let (run, qrels) = split(&bytes);
    std::fs::write(dir.path().join("run.txt"), run).unwrap();
    std::fs::write(dir.path().join("qrels.txt"), qrels).unwrap();
    let run = read_run(&dir.path().join("run.txt")).unwrap();
    let qrels = read_qrels(&dir.path().join("qrels.txt")).unwrap();
    let ndcg: Metric = "NDCG@10".parse().unwrap();
    let e = evaluate_run(&run, &qrels, &[ndcg], &Convention::STANDARD)
        .unwrap_err()
        .to_string();
    assert!(e.contains("overflows the exponential gain"), "{e}");
    // trec_eval's linear gain has no such limit: the same run evaluates to exactly 1.
    let ev = evaluate_run(&run, &qrels, &[ndcg], &Convention::TREC).unwrap();
    assert_eq!(ev.mean(ndcg), Some(1.0));
    let err10: Metric = "ERR@10".parse().unwrap();
    let e = evaluate_run(&run, &qrels, &[err10], &Convention::TREC)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("above the convention's largest ERR grade"),
        "{e}"
    );
}

#[test]
fn model_seeds_load_and_score() {
    let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 2,
        min_docs: 3,
        max_docs: 3,
        features: 4,
        ..Default::default()
    })
    .unwrap();
    for p in inputs("seeds", "model_load") {
        let m =
            ltr_core::ModelFile::load(&p).unwrap_or_else(|e| panic!("seed {}: {e}", p.display()));
        m.check_data(&ds, "d.txt").unwrap();
        let s = m.score_raw(&ds).unwrap();
        assert!(s.iter().all(|v| v.is_finite()), "{}", p.display());
    }
    // Found by the fuzzer: a model selecting two features out of a claimed 10^18 made scoring allocate
    // documents × 10^18 floats (scoring now selects before widening, so the copy is as wide as the model); a
    // Markov aggregate with an enormous iteration cap and zero tolerance ran for ever (refused at load).
    for p in inputs("regressions", "model_load") {
        match ltr_core::ModelFile::load(&p) {
            Ok(m) => {
                if m.check_data(&ds, "d.txt").is_ok() {
                    if let Ok(s) = m.score_raw(&ds) {
                        assert_eq!(s.len(), ds.n_docs());
                    }
                }
            }
            Err(e) => names_file(&e.to_string(), &p),
        }
    }
}

#[test]
fn letor_seeds_parse_or_are_refused_naming_the_file() {
    use ltr_data::{read_letor_with, ParseOptions, RepeatedQid};
    let dir = tempfile::tempdir().unwrap();
    for p in inputs("seeds", "letor_parse")
        .into_iter()
        .chain(inputs("regressions", "letor_parse"))
    {
        let bytes = std::fs::read(&p).unwrap();
        let data = dir.path().join("data.txt");
        std::fs::write(&data, &bytes[1..]).unwrap();
        // The first byte picks the options, as in the fuzz target.
        let opts = ParseOptions {
            repeated_qid: if bytes[0] & 1 == 1 {
                RepeatedQid::Regroup
            } else {
                RepeatedQid::Error
            },
            allow_duplicate_docids: bytes[0] & 2 == 2,
            ..ParseOptions::default()
        };
        match read_letor_with(&data, &opts) {
            Ok(ds) => {
                // What loads must come back from the writer's output.
                let again = dir.path().join("again.txt");
                ltr_data::write_letor(&ds, &again).unwrap();
                let back = read_letor_with(&again, &opts)
                    .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                assert_eq!(back.labels(), ds.labels());
            }
            Err(e) => names_file(&e.to_string(), &data),
        }
    }
}

/// `param_parse` finding 7: a grid of eight C values with `tol=1e-36` for rsvm-ir (the first byte picked it among the
/// 14 algorithms then registered) ran OCAS to its 10,000-plane cap at every C — over ten minutes on 12 documents.
/// A tolerance finer than f64 sums resolve is now refused before training.
#[test]
fn unreachable_solver_tolerance_is_refused_before_training() {
    for p in inputs("regressions", "param_parse") {
        let bytes = std::fs::read(&p).unwrap();
        let text = String::from_utf8_lossy(&bytes[1..]).into_owned();
        let items: Vec<&str> = text.lines().collect();
        let grid = ltr_learn::Grid::parse(&items).unwrap();
        let train = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
            queries: 3,
            min_docs: 4,
            max_docs: 4,
            features: 3,
            ..ltr_data::SyntheticConfig::default()
        })
        .unwrap();
        let req = ltr_learn::TrainRequest::new(&train).validation(&train);
        let e = ltr_learn::train("rsvm-ir", &grid, &req)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tol") && e.contains("1e-12"),
            "{}: {e}",
            p.display()
        );
    }
}

/// The `foreign_model_load` target's seeds (LightGBM text and JSON dump, XGBoost JSON and UBJSON) load and score; every
/// prefix of each seed at 61 cut points, and each seed with one of 61 bytes overwritten, loads or is refused naming
/// the file, never a panic (a deterministic sweep in the normal test run; the fuzzer explores beyond it).
#[test]
fn foreign_model_seeds_load_and_their_damaged_copies_are_refused_by_name() {
    let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 2,
        min_docs: 3,
        max_docs: 3,
        features: 8,
        ..Default::default()
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let try_load = |path: &Path| match ltr_export::load_model(path) {
        Ok(mut m) => {
            ltr_export::widen_to(&mut m, ds.n_features());
            if m.check_data(&ds, "d.txt").is_ok() {
                if let Ok(s) = m.score_raw(&ds) {
                    assert_eq!(s.len(), ds.n_docs());
                }
            }
        }
        Err(e) => names_file(&format!("{e:#}"), path),
    };
    let seeds = inputs("seeds", "foreign_model_load");
    assert!(seeds.len() >= 3);
    for p in &seeds {
        let m = ltr_export::load_model(p).unwrap_or_else(|e| panic!("seed {}: {e:#}", p.display()));
        assert!(
            m.algorithm.starts_with("lightgbm-") || m.algorithm.starts_with("xgboost-"),
            "{}",
            m.algorithm
        );
        let bytes = std::fs::read(p).unwrap();
        let damaged = dir.path().join("damaged.model");
        for k in 1..=61 {
            let cut = bytes.len() * k / 62;
            std::fs::write(&damaged, &bytes[..cut]).unwrap();
            try_load(&damaged);
            let mut b = bytes.clone();
            b[cut] = [b'9', b'-', b'}', b'\n', b'e', 0xFF][k % 6];
            std::fs::write(&damaged, &b).unwrap();
            try_load(&damaged);
        }
    }
}

/// The `experiment_toml` target's inputs (`ltr experiment --config FILE`): each seed and regression is written as an
/// experiment file into a folder that holds the target's tiny dataset (`all.txt`, 10 queries) and fold folder
/// (`folds/Fold1` with `vali.txt`, `folds/Fold2` without), then read and checked as `ltr experiment --config` does
/// (`Experiment::from_file`; nothing is trained). A refusal names the experiment file; what loads is written as TOML
/// that loads again to an equal spec and the same text. The seeds named `refused-*` must be refused, every other seed
/// prepared. Finding 8: `prepare`'s refusals (no methods, an unknown algorithm or metric, ...) did not name the
/// experiment file; `from_file` now does.
#[test]
fn experiment_files_prepare_or_are_refused_naming_the_file() {
    use ltr_experiment::{Experiment, ExperimentSpec};
    let dir = tempfile::tempdir().unwrap();
    let dir = std::fs::canonicalize(dir.path()).unwrap();
    let ds = ltr_data::generate_letor_like(&ltr_data::SyntheticConfig {
        queries: 10,
        min_docs: 3,
        max_docs: 4,
        features: 4,
        ..Default::default()
    })
    .unwrap();
    let write = |rel: &str, queries: &[usize]| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        ltr_data::write_letor(&ds.select_queries(queries), &p).unwrap();
    };
    write("all.txt", &(0..10).collect::<Vec<_>>());
    write("folds/Fold1/train.txt", &[0, 1, 2, 3, 4, 5]);
    write("folds/Fold1/vali.txt", &[6, 7]);
    write("folds/Fold1/test.txt", &[8, 9]);
    write("folds/Fold2/train.txt", &[2, 3, 4, 5, 6, 7, 8, 9]);
    write("folds/Fold2/test.txt", &[0, 1]);
    let path = dir.join("experiment.toml");
    // What the target checks: `None` when prepared, else the refusal (which names the file).
    let check = |input: &Path| -> Option<String> {
        std::fs::copy(input, &path).unwrap();
        let spec = match ExperimentSpec::load(&path) {
            Ok(spec) => spec,
            Err(e) => {
                names_file(&e.to_string(), &path);
                return Some(e.to_string());
            }
        };
        let text = spec.to_toml().unwrap();
        let again_path = dir.join("again.toml");
        std::fs::write(&again_path, &text).unwrap();
        let again = ExperimentSpec::load(&again_path)
            .unwrap_or_else(|e| panic!("{}: written spec does not load: {e}", input.display()));
        if !spec.data.validation_share.is_nan() {
            assert_eq!(again, spec, "{}", input.display());
        }
        assert_eq!(again.to_toml().unwrap(), text, "{}", input.display());
        match Experiment::from_file(&path) {
            Ok(_) => None,
            Err(e) => {
                names_file(&e.to_string(), &path);
                Some(e.to_string())
            }
        }
    };
    let seeds = inputs("seeds", "experiment_toml");
    assert!(seeds.len() >= 10);
    for p in &seeds {
        let refused = p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("refused-");
        let refusal = check(p);
        assert_eq!(
            refusal.is_some(),
            refused,
            "seed {}: {refusal:?}",
            p.display()
        );
    }
    let regressions =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/experiment_toml");
    if regressions.is_dir() {
        for p in inputs("regressions", "experiment_toml") {
            let refusal = check(&p);
            // Finding 9: `log1p = "1-99999999999"` expanded the range into memory; a feature number must now fit in
            // 32 bits and a list name at most 2^24 features.
            if p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("log1p-")
            {
                let e = refusal.unwrap_or_else(|| panic!("{} was prepared", p.display()));
                assert!(e.contains("log1p") && e.contains("4294967295"), "{e}");
            }
        }
    }
}
