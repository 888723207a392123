//! The experiment engine end to end on generated data (always runs) and on OHSUMED (skips without
//! ../shared/datasets): the report's numbers, resuming, the experiment file, bad input.

use std::path::Path;

use ltr_data::{generate_letor_like, write_letor, SyntheticConfig};
use ltr_experiment::{DataSpec, Experiment, ExperimentError, ExperimentSpec, MethodSpec};

fn write_data(path: &Path, queries: usize, seed: u64) {
    let ds = generate_letor_like(&SyntheticConfig {
        queries,
        min_docs: 8,
        max_docs: 40,
        features: 12,
        grades: 3,
        noise: 0.6,
        outlier_fraction: 0.02,
        query_level_norm: true,
        seed,
    })
    .unwrap();
    write_letor(&ds, path).unwrap();
}

fn methods() -> Vec<MethodSpec> {
    vec![
        MethodSpec::parse("ranksvm:c=0.01,1").unwrap(),
        MethodSpec::parse("rankboost:rounds=40").unwrap(),
        MethodSpec::parse("perceptron:epochs=5").unwrap(),
    ]
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn one_file_split_into_folds_gives_a_complete_report() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("all.txt");
    write_data(&data, 60, 7);
    let out = dir.path().join("out");
    let mut spec = ExperimentSpec::new(DataSpec::file(&data, 5), methods());
    spec.keep_scores = true;
    let outcome = Experiment::prepare(spec.clone())
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!((outcome.computed, outcome.reused), (15, 0));
    for f in [
        "report.md",
        "report.html",
        "results.json",
        "results.csv",
        "experiment.toml",
        "plots/difference-NDCG@10.svg",
        "plots/by-fold-MAP.svg",
        "scores/rankboost/fold3.txt",
        "folds/fold3/test.txt",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let r = json(&out.join("results.json"));
    // Every query is tested exactly once over the folds.
    let mut qids: Vec<String> = r["folds"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["test_qids"].as_array().unwrap().clone())
        .map(|q| q.as_str().unwrap().to_string())
        .collect();
    assert_eq!(qids.len(), 60);
    qids.sort();
    qids.dedup();
    assert_eq!(qids.len(), 60);
    // Fold means are the mean of the per-fold means of the per-query values in the CSV.
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header.iter().position(|h| *h == "NDCG@10").unwrap();
    let mut per_fold = vec![Vec::new(); 5];
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[1] == "rankboost" {
            per_fold[f[0].parse::<usize>().unwrap() - 1].push(f[col].parse::<f64>().unwrap());
        }
    }
    let want = per_fold
        .iter()
        .map(|v| v.iter().sum::<f64>() / v.len() as f64)
        .sum::<f64>()
        / 5.0;
    let got = r["fold_means"]["rankboost"]["NDCG@10"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    // Learners beat chance on this easy generated set.
    assert!(got > 0.6, "rankboost NDCG@10 {got}");
    // Holm never lowers a p-value, and comparisons cover each non-baseline method × metric × test.
    let sig = r["significance"].as_array().unwrap();
    assert_eq!(sig.len(), 2 * 5 * 3, "2 methods × 5 metrics × 3 tests");
    for c in sig {
        let (p, h) = (c["p_value"].as_f64(), c["p_holm"].as_f64());
        if let (Some(p), Some(h)) = (p, h) {
            assert!(h >= p && h <= 1.0, "{c}");
        }
        let n = c["wins"].as_u64().unwrap()
            + c["ties"].as_u64().unwrap()
            + c["losses"].as_u64().unwrap();
        assert_eq!(n, 60);
    }
    // The grid was searched on the carved validation set: both settings scored in every RankSVM cell.
    for c in r["cells"].as_array().unwrap() {
        if c["method"] == "ranksvm" {
            assert_eq!(c["grid"].as_array().unwrap().len(), 2, "{c}");
        }
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Against the baseline `ranksvm`"), "{md}");
    assert!(md.contains("**"), "best values in bold");
    // Three methods: every pair by randomised Tukey HSD, per metric, computed from the pooled per-query values
    // in the CSV exactly as `ltr compare` would (same seed, 10,000 trials).
    assert!(md.contains("## All methods against each other"), "{md}");
    assert!(md.contains("|  | rankboost | perceptron |"), "{md}");
    let all = r["all_pairs"].as_array().unwrap();
    assert_eq!(all.len(), 5, "one per metric");
    let ndcg = all.iter().find(|c| c["measure"] == "NDCG@10").unwrap();
    let names: Vec<String> = ["ranksvm", "rankboost", "perceptron"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let values: Vec<Vec<f64>> = names
        .iter()
        .map(|m| {
            csv.lines()
                .skip(1)
                .map(|l| l.split(',').collect::<Vec<_>>())
                .filter(|f| f[1] == m)
                .map(|f| f[col].parse::<f64>().unwrap())
                .collect()
        })
        .collect();
    let opts = ltr_metrics::ManyOptions {
        seed: spec.seed,
        ..Default::default()
    };
    let want = ltr_metrics::compare_runs(&names, &values, 0, "NDCG@10", &opts).unwrap();
    assert_eq!(*ndcg, want.to_json());
    assert_eq!(ndcg["pairs"].as_array().unwrap().len(), 3);
}

#[test]
fn a_rerun_recomputes_no_finished_cell() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("all.txt");
    write_data(&data, 40, 9);
    let out = dir.path().join("out");
    let spec = ExperimentSpec::new(DataSpec::file(&data, 4), methods());
    let first = Experiment::prepare(spec.clone())
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!(first.computed, 12);
    // What a kill leaves: some cells finished, the rest not. Remove three to stand for the unfinished ones.
    let mut files: Vec<_> = std::fs::read_dir(out.join("cells"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let kept: Vec<(std::path::PathBuf, Vec<u8>)> = files[3..]
        .iter()
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    for p in &files[..3] {
        std::fs::remove_file(p).unwrap();
    }
    let second = Experiment::prepare(spec.clone())
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!((second.computed, second.reused), (3, 9));
    // Same seed, same models: the recomputed cells give the same test scores as before.
    for (a, b) in first.cells.iter().zip(&second.cells) {
        assert_eq!(a.test_scores, b.test_scores);
        assert_eq!(a.params, b.params);
    }
    for (p, bytes) in &kept {
        assert_eq!(
            &std::fs::read(p).unwrap(),
            bytes,
            "{} rewritten",
            p.display()
        );
    }
    // The written experiment file reruns the same experiment: everything reused.
    let from_file = ExperimentSpec::load(&out.join("experiment.toml")).unwrap();
    assert_eq!(from_file.algorithms, spec.algorithms);
    let third = Experiment::prepare(from_file)
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!((third.computed, third.reused), (0, 12));
    // A changed setting is a new cell, never a stale one.
    let mut changed = spec;
    changed.seed = 2;
    let fourth = Experiment::prepare(changed)
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!(fourth.computed, 12);
}

#[test]
fn a_fold_folder_without_validation_files_carves_validation_from_training() {
    let dir = tempfile::tempdir().unwrap();
    for k in 1..=3 {
        let f = dir.path().join(format!("Fold{k}"));
        std::fs::create_dir_all(&f).unwrap();
        write_data(&f.join("train.txt"), 30, k);
        write_data(&f.join("test.txt"), 10, 100 + k);
    }
    let mut spec = ExperimentSpec::new(
        DataSpec::fold_dir(dir.path()),
        vec![
            MethodSpec::parse("ranksvm").unwrap(),
            MethodSpec::parse("listnet:epochs=20").unwrap(),
        ],
    );
    spec.baseline = Some("listnet".into());
    let exp = Experiment::prepare(spec).unwrap();
    assert_eq!(exp.folds().len(), 3);
    for f in exp.folds() {
        // 30 training queries, a quarter (7) held out.
        assert_eq!(f.validation.as_ref().unwrap().n_queries(), 7);
        assert_eq!(f.train.n_queries(), 23);
        assert!(
            f.validation_source.contains("25%"),
            "{}",
            f.validation_source
        );
    }
    let out = dir.path().join("out");
    exp.run(&out, &ltr_core::Silent).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Against the baseline `listnet`"));
    assert!(md.contains("| ranksvm |"));
}

#[test]
fn bad_experiments_are_refused_before_training() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("all.txt");
    write_data(&data, 20, 1);
    let err = |spec: ExperimentSpec| Experiment::prepare(spec).unwrap_err().to_string();
    let one = |m: &str| vec![MethodSpec::parse(m).unwrap()];
    assert!(
        err(ExperimentSpec::new(DataSpec::file(&data, 5), one("nope")))
            .contains("unknown algorithm `nope`")
    );
    // A misspelt parameter of any method is refused before the folds are read (the file does not exist).
    let two = vec![
        MethodSpec::parse("ranksvm:c=1").unwrap(),
        MethodSpec::parse("rankboost:round=5").unwrap(),
    ];
    let e = err(ExperimentSpec::new(
        DataSpec::file(dir.path().join("none.txt"), 5),
        two,
    ));
    assert!(
        e.contains("`round`") && e.contains("unknown parameter for `rankboost`"),
        "{e}"
    );
    let mut s = ExperimentSpec::new(DataSpec::file(&data, 5), one("ranksvm"));
    s.metric = "NDCG@x".into();
    assert!(err(s).contains("metric"));
    let mut s = ExperimentSpec::new(DataSpec::file(&data, 5), one("ranksvm:c=0.1,1"));
    s.data.validation_share = 0.0;
    assert!(err(s).contains("grid of 2 settings"));
    let mut s = ExperimentSpec::new(DataSpec::file(&data, 5), one("ranksvm"));
    s.baseline = Some("svm".into());
    assert!(err(s).contains("baseline `svm`"));
    assert!(err(ExperimentSpec::new(
        DataSpec::file(&data, 50),
        one("ranksvm")
    ))
    .contains("--folds 50"));
    assert!(err(ExperimentSpec::new(
        DataSpec::file(dir.path().join("none.txt"), 5),
        one("ranksvm")
    ))
    .contains("none.txt"));
    let s = ExperimentSpec::new(
        DataSpec::file(&data, 5),
        vec![MethodSpec::parse("ranksvm").unwrap(); 2],
    );
    assert!(err(s).contains("both labelled"));
    // A fold folder whose fold lacks test.txt names the file.
    let fd = dir.path().join("folds");
    std::fs::create_dir_all(fd.join("Fold1")).unwrap();
    std::fs::copy(&data, fd.join("Fold1/train.txt")).unwrap();
    assert!(
        err(ExperimentSpec::new(DataSpec::fold_dir(&fd), one("ranksvm")))
            .contains("Fold1/test.txt")
    );
    // --algo syntax.
    assert!(MethodSpec::parse(":c=1").is_err());
    assert!(MethodSpec::parse("ranksvm:1").is_err());
    assert!(MethodSpec::parse("ranksvm:c=1,,2").is_err());
    let m = MethodSpec::parse("ranksvm:c=0.01,0.1,1,solver=dual").unwrap();
    assert_eq!(m.params, vec!["c=0.01,0.1,1", "solver=dual"]);
    assert_eq!(m.to_cli(), "ranksvm:c=0.01,0.1,1,solver=dual");
    // An experiment file with an unknown key names the file and the line.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "metric = \"MAP\"\nmetrc = \"MAP\"\n[data]\nfile = \"all.txt\"\n",
    )
    .unwrap();
    match ExperimentSpec::load(&bad).unwrap_err() {
        ExperimentError::SpecFile { path, message } => {
            assert_eq!(path, bad);
            assert!(
                message.contains("line 2") && message.contains("metrc"),
                "{message}"
            );
        }
        other => panic!("{other}"),
    }
}

/// On OHSUMED the engine gives the LETOR-baseline RankSVM of `cargo xtask reproduce` (C chosen from
/// 0.001…100 on validation MAP, LETOR 3.0 convention): the same registry path, so the same numbers.
#[test]
fn ohsumed_ranksvm_matches_the_reproduction_table() {
    let Some(root) = ltr_testdata::shared_datasets_dir() else {
        eprintln!("SKIP: ../shared/datasets is absent");
        return;
    };
    let dir = root.join("OHSUMED/QueryLevelNorm");
    if !dir.join("Fold1").is_dir() {
        eprintln!("SKIP: {} is absent", dir.display());
        return;
    }
    let mut spec = ExperimentSpec::new(
        DataSpec::fold_dir(&dir),
        vec![MethodSpec::parse("ranksvm:c=0.001,0.01,0.1,1,10,100").unwrap()],
    );
    spec.metric = "MAP".into();
    spec.convention = "letor3".into();
    let out = tempfile::tempdir().unwrap();
    Experiment::prepare(spec)
        .unwrap()
        .run(out.path(), &ltr_core::Silent)
        .unwrap();
    let r = json(&out.path().join("results.json"));
    let m = &r["fold_means"]["ranksvm"];
    // results/letor-baselines/report.md: MAP 0.4372, NDCG@10 0.4349, NDCG@1 0.5518.
    for (metric, want) in [("MAP", 0.4372), ("NDCG@10", 0.4349), ("NDCG@1", 0.5518)] {
        let got = m[metric].as_f64().unwrap();
        assert!((got - want).abs() < 5e-5, "{metric}: {got} vs {want}");
    }
}

#[test]
fn a_model_method_names_a_file_that_an_experiment_file_resolves() {
    // Everything after `model:` is the path, colons and commas included; an empty path is refused.
    let m = MethodSpec::parse("model:runs/a:b,c=1.txt").unwrap();
    assert_eq!(m.model_file(), Some(Path::new("runs/a:b,c=1.txt")));
    assert!(m.params.is_empty());
    assert!(MethodSpec::parse("ranksvm:c=1")
        .unwrap()
        .model_file()
        .is_none());
    let e = MethodSpec::parse("model:").unwrap_err().to_string();
    assert!(e.contains("no file after `model:`"), "{e}");
    // In a file, a relative model path is the file's folder's; the label stays what was written, and the spec
    // written back loads to the same spec.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("e.toml");
    std::fs::write(
        &path,
        "[data]\nfile = \"all.txt\"\n[[algorithm]]\nalgo = \"model:m/lgb.txt\"\n",
    )
    .unwrap();
    let spec = ExperimentSpec::load(&path).unwrap();
    let m = &spec.algorithms[0];
    assert_eq!(m.model_file(), Some(dir.path().join("m/lgb.txt").as_path()));
    assert_eq!(m.label.as_deref(), Some("model:m/lgb.txt"));
    assert_eq!(spec.labels().unwrap(), ["model:m/lgb.txt"]);
    let again = dir.path().join("again.toml");
    std::fs::write(&again, spec.to_toml().unwrap()).unwrap();
    assert_eq!(ExperimentSpec::load(&again).unwrap(), spec);
    // Parameters on a model are refused before any data is read (all.txt does not exist).
    std::fs::write(
        &path,
        "[data]\nfile = \"all.txt\"\n[[algorithm]]\nalgo = \"model:m/lgb.txt\"\nparams = [\"c=1\"]\n",
    )
    .unwrap();
    let e = Experiment::from_file(&path).unwrap_err().to_string();
    assert!(e.contains("takes no parameters"), "{e}");
}

/// Neural methods take grids as every family does (`neural:loss=listnet,ranknet`): each cell scores both losses on
/// its validation share and keeps one; the attention scorer, batch norm and a misspelt neural parameter too.
#[test]
fn neural_methods_take_grids_like_every_family() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("all.txt");
    write_data(&data, 20, 3);
    let methods = vec![
        MethodSpec::parse("neural:loss=listnet,ranknet,sizes=8,epochs=2,batch-norm=true").unwrap(),
        MethodSpec::parse("neural:scorer=attention,sizes=4,blocks=1,heads=2,d-ff=4,epochs=1")
            .unwrap(),
    ];
    let spec = ExperimentSpec::new(DataSpec::file(&data, 2), methods);
    let out = dir.path().join("out");
    let outcome = Experiment::prepare(spec)
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!((outcome.computed, outcome.reused), (4, 0));
    let r = json(&out.join("results.json"));
    for c in r["cells"].as_array().unwrap() {
        let grid = c["grid"].as_array().unwrap();
        let method = c["method"].as_str().unwrap();
        if method.contains("loss=") {
            assert_eq!(grid.len(), 2, "{c}");
        }
    }
    for (label, means) in r["fold_means"].as_object().unwrap() {
        let v = means["NDCG@10"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&v), "{label}: {v}");
    }
    let e = Experiment::prepare(ExperimentSpec::new(
        DataSpec::file(&data, 2),
        vec![MethodSpec::parse("neural:head=2").unwrap()],
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("`head`") && e.contains("neural"), "{e}");
}
