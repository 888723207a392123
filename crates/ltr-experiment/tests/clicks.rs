//! An experiment on clicks (`data.clicks`, issue 52: "everywhere a learner appears"): each fold's methods learn
//! from its click log exactly as `ltr train --clicks` does, a `judged` method from the judgments exactly as without
//! logs, and what cannot work is refused before anything trains.

use std::path::Path;

use ltr_clicks::ClickSimulation;
use ltr_data::{generate_letor_like, read_letor, write_letor, SyntheticConfig};
use ltr_experiment::{load_folds, DataSpec, Experiment, ExperimentSpec, MethodSpec};
use ltr_learn::{ClickSource, Grid, TrainData, TrainJob};
use ltr_metrics::{Convention, Metric};

/// `queries` queries of 15–30 generated documents, 8 features and 3 grades.
fn generated(queries: usize, seed: u64) -> ltr_data::Dataset {
    generate_letor_like(&SyntheticConfig {
        queries,
        min_docs: 15,
        max_docs: 30,
        features: 8,
        grades: 3,
        noise: 0.6,
        outlier_fraction: 0.0,
        query_level_norm: true,
        seed,
    })
    .unwrap()
}

/// Two folds (train, vali, test) of generated data, and for each a log of 3,000 position-based sessions of the top
/// 10 of a production ranker (feature 1), written as `logs/fold{n}.tsv`.
fn clicked_folds(dir: &Path) {
    for fold in 1..=2u64 {
        let f = dir.join(format!("Fold{fold}"));
        std::fs::create_dir_all(&f).unwrap();
        for (name, queries, seed) in [
            ("train", 40, fold),
            ("vali", 12, 10 + fold),
            ("test", 12, 20 + fold),
        ] {
            let ds = generated(queries, seed);
            write_letor(&ds, &f.join(format!("{name}.txt"))).unwrap();
        }
        // The log of the file as the experiment reads it.
        let train = read_letor(f.join("train.txt")).unwrap();
        let mut w = vec![0.0; train.n_features()];
        w[0] = 1.0;
        let production = train.scores(&w);
        let sim = ClickSimulation {
            sessions: 3_000,
            eta: 1.0,
            seed: 7 + fold,
            ..Default::default()
        };
        let log = sim.simulate(&train, &production).unwrap();
        std::fs::create_dir_all(dir.join("logs")).unwrap();
        ltr_clicks::write_click_log(&dir.join(format!("logs/fold{fold}.tsv")), &log).unwrap();
    }
}

fn method(text: &str, label: &str, judged: bool) -> MethodSpec {
    let mut m = MethodSpec::parse(text).unwrap();
    m.label = Some(label.into());
    m.judged = judged;
    m
}

fn on_clicks(dir: &Path, methods: Vec<MethodSpec>) -> ExperimentSpec {
    let mut data = DataSpec::fold_dir(dir);
    data.clicks = Some(dir.join("logs/fold{fold}.tsv"));
    let mut spec = ExperimentSpec::new(data, methods);
    spec.keep_scores = true;
    spec
}

fn scores(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// The test scores of `ltr train --clicks` (`TrainJob`) of `lambdarank` with `params` on fold `fold`'s files and log.
fn trained_on_clicks(dir: &Path, fold: usize, params: &[&str], table: Option<&Path>) -> Vec<f64> {
    let f = dir.join(format!("Fold{fold}"));
    let clicks = ClickSource {
        log: dir.join(format!("logs/fold{fold}.tsv")),
        propensities: table.map(Path::to_path_buf),
        scope: ltr_learn::SessionScope::Every,
    };
    let model = lambdarank_on_clicks(
        TrainData::File(f.join("train.txt")),
        Some(TrainData::File(f.join("vali.txt"))),
        clicks,
        params,
        1,
    );
    model
        .score_raw(&read_letor(f.join("test.txt")).unwrap())
        .unwrap()
}

/// The model `TrainJob` trains for `lambdarank` with `params` on `train`'s features and `clicks`, choosing on
/// `validation` by NDCG@10.
fn lambdarank_on_clicks(
    train: TrainData<'_>,
    validation: Option<TrainData<'_>>,
    clicks: ClickSource,
    params: &[&str],
    seed: u64,
) -> ltr_core::ModelFile {
    let params: Vec<String> = params.iter().map(|s| s.to_string()).collect();
    TrainJob::builder("lambdarank")
        .grid(Grid::parse(&params).unwrap())
        .metric(Metric::Ndcg(Some(10)), Convention::STANDARD)
        .seed(seed)
        .train(train)
        .validation(validation)
        .clicks(Some(clicks))
        .build()
        .unwrap()
        .run()
        .unwrap()
        .model
        .unwrap()
}

/// `got` equals `want` to rounding.
fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{what}: {g} vs {w}"
        );
    }
}

#[test]
fn each_fold_learns_from_its_log_as_ltr_train_does() {
    let dir = tempfile::tempdir().unwrap();
    clicked_folds(dir.path());
    let spec = on_clicks(
        dir.path(),
        vec![
            method("lambdarank:weighting=naive,epochs=20", "naive", false),
            method("lambdarank:debias=dr,epochs=20", "dr", false),
            method("lambdarank:epochs=20", "judged", true),
        ],
    );
    let out = dir.path().join("out");
    let outcome = Experiment::prepare(spec.clone())
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!(outcome.computed, 6);
    // Each click cell is the model `ltr train --clicks LOG` trains on the fold's files: its test scores are equal.
    for fold in 1..=2 {
        for (label, params) in [
            ("naive", &["weighting=naive", "epochs=20"][..]),
            ("dr", &["debias=dr", "epochs=20"]),
        ] {
            let got = scores(&out.join(format!("scores/{label}/fold{fold}.txt")));
            let want = trained_on_clicks(dir.path(), fold, params, None);
            assert_close(&got, &want, &format!("{label} fold {fold}"));
        }
    }
    // The three rows learn from three different sets.
    let fold1 = |label: &str| scores(&out.join(format!("scores/{label}/fold1.txt")));
    assert_ne!(fold1("naive"), fold1("dr"));
    assert_ne!(fold1("naive"), fold1("judged"));
    // The judged cell is the cell of the same method in the same experiment without logs.
    let mut plain = spec.clone();
    plain.data.clicks = None;
    plain.algorithms = vec![method("lambdarank:epochs=20", "judged", false)];
    let plain_out = dir.path().join("plain");
    Experiment::prepare(plain)
        .unwrap()
        .run(&plain_out, &ltr_core::Silent)
        .unwrap();
    for fold in 1..=2 {
        let name = format!("scores/judged/fold{fold}.txt");
        assert_eq!(scores(&out.join(&name)), scores(&plain_out.join(&name)));
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("training on the click logs") && md.contains("not on clicks: judged"),
        "{md}"
    );
    // The experiment file keeps the logs and the judged row, and reads them back.
    let toml = std::fs::read_to_string(out.join("experiment.toml")).unwrap();
    assert!(
        toml.contains("fold{fold}.tsv") && toml.contains("judged = true"),
        "{toml}"
    );
    let again = Experiment::from_file(&out.join("experiment.toml")).unwrap();
    assert!(again.spec().algorithms[2].judged);
}

/// `data.propensities` reaches every fold's join: the cells are `ltr train --clicks LOG --propensities TABLE`'s, and
/// not the cells of the log's own propensity column.
#[test]
fn a_propensity_table_reaches_every_fold() {
    let dir = tempfile::tempdir().unwrap();
    clicked_folds(dir.path());
    let table = dir.path().join("table.tsv");
    std::fs::write(
        &table,
        "rank\tpropensity\n1\t1\n2\t0.9\n3\t0.8\n4\t0.7\n5\t0.6\n",
    )
    .unwrap();
    let run = |propensities: Option<&Path>, out: &str| {
        let mut spec = on_clicks(
            dir.path(),
            vec![method("lambdarank:epochs=20", "ips", false)],
        );
        spec.data.propensities = propensities.map(Path::to_path_buf);
        let out = dir.path().join(out);
        Experiment::prepare(spec)
            .unwrap()
            .run(&out, &ltr_core::Silent)
            .unwrap();
        scores(&out.join("scores/ips/fold2.txt"))
    };
    let with_table = run(Some(&table), "table");
    assert_ne!(with_table, run(None, "column"));
    let want = trained_on_clicks(dir.path(), 2, &["epochs=20"], Some(&table));
    assert_close(&with_table, &want, "with the table");
}

#[test]
fn what_an_experiment_on_clicks_cannot_use_is_refused_before_training() {
    let dir = tempfile::tempdir().unwrap();
    clicked_folds(dir.path());
    let err = |spec: ExperimentSpec| Experiment::prepare(spec).unwrap_err().to_string();
    let dr = || vec![method("lambdarank:debias=dr", "dr", false)];
    // A learner that does not learn from clicks, unless it says it learns from the judgments.
    let e = err(on_clicks(dir.path(), vec![method("ranksvm", "svm", false)]));
    assert!(
        e.contains("does not learn from clicks") && e.contains("judged = true"),
        "{e}"
    );
    assert!(
        Experiment::prepare(on_clicks(dir.path(), vec![method("ranksvm", "svm", true)])).is_ok()
    );
    // `judged` without logs; a table without logs.
    let mut s = on_clicks(dir.path(), vec![method("ranksvm", "svm", true)]);
    s.data.clicks = None;
    assert!(err(s.clone()).contains("names no click logs"));
    s.algorithms[0].judged = false;
    s.data.propensities = Some(dir.path().join("table.tsv"));
    assert!(err(s).contains("give data.clicks too"));
    // One log for two folds; a fold's log missing (named); a data file split into folds.
    let mut s = on_clicks(dir.path(), dr());
    s.data.clicks = Some(dir.path().join("logs/fold1.tsv"));
    assert!(err(s).contains("has no `{fold}`"));
    std::fs::remove_file(dir.path().join("logs/fold2.tsv")).unwrap();
    let e = err(on_clicks(dir.path(), dr()));
    assert!(e.contains("fold2.tsv"), "{e}");
    // A fold folder's log of queries none of the fold's training queries: named, with its count.
    let mut s = on_clicks(dir.path(), dr());
    s.data.clicks = Some(dir.path().join("logs/other{fold}.tsv"));
    let train = read_letor(dir.path().join("Fold1/train.txt")).unwrap();
    let sim = ClickSimulation {
        sessions: 50,
        ..Default::default()
    };
    let mut log = sim.simulate(&train, &vec![0.0; train.n_docs()]).unwrap();
    for r in &mut log {
        r.qid = format!("elsewhere-{}", r.qid);
    }
    for fold in 1..=2 {
        let path = dir.path().join(format!("logs/other{fold}.tsv"));
        ltr_clicks::write_click_log(&path, &log).unwrap();
    }
    let e = Experiment::prepare(s)
        .unwrap()
        .run(&dir.path().join("other"), &ltr_core::Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("other1.tsv") && e.contains("none of the log's 50 sessions"),
        "{e}"
    );
    // A grid whose settings read different click sets, before any log is read.
    std::fs::copy(
        dir.path().join("logs/fold1.tsv"),
        dir.path().join("logs/fold2.tsv"),
    )
    .unwrap();
    let e = err(on_clicks(
        dir.path(),
        vec![method("lambdarank:debias=none,dr", "mixed", false)],
    ));
    assert!(e.contains("different click sets"), "{e}");
}

/// A data file split into folds with one log over all of its queries: each fold learns from the sessions of its own
/// training queries (the others, its validation and test queries among them, are skipped), exactly as a job given
/// the fold's training data and the log with `SessionScope::FeatureQueries`.
#[test]
fn a_split_file_learns_each_fold_from_its_training_queries_in_one_log() {
    let dir = tempfile::tempdir().unwrap();
    let ds = generated(45, 4);
    let file = dir.path().join("all.txt");
    write_letor(&ds, &file).unwrap();
    let all = read_letor(&file).unwrap();
    let mut w = vec![0.0; all.n_features()];
    w[0] = 1.0;
    let sim = ClickSimulation {
        sessions: 4_000,
        eta: 1.0,
        seed: 3,
        ..Default::default()
    };
    let log = dir.path().join("clicks.tsv");
    ltr_clicks::write_click_log(&log, &sim.simulate(&all, &all.scores(&w)).unwrap()).unwrap();
    let mut data = DataSpec::file(&file, 3);
    data.clicks = Some(log.clone());
    let mut spec = ExperimentSpec::new(
        data.clone(),
        vec![method("lambdarank:debias=dr,epochs=20", "dr", false)],
    );
    spec.keep_scores = true;
    let out = dir.path().join("out");
    let outcome = Experiment::prepare(spec.clone())
        .unwrap()
        .run(&out, &ltr_core::Silent)
        .unwrap();
    assert_eq!(outcome.computed, 3);
    let (folds, _) = load_folds(&data, spec.seed).unwrap();
    for fold in &folds {
        let clicks = ClickSource {
            log: log.clone(),
            propensities: None,
            scope: ltr_learn::SessionScope::FeatureQueries,
        };
        let model = lambdarank_on_clicks(
            TrainData::Memory {
                data: &fold.train,
                name: "train".into(),
            },
            fold.validation.as_ref().map(|v| TrainData::Memory {
                data: v,
                name: "validation".into(),
            }),
            clicks,
            &["debias=dr", "epochs=20"],
            spec.seed,
        );
        let want = model.score_raw(&fold.test).unwrap();
        let got = scores(&out.join(format!("scores/dr/fold{}.txt", fold.number)));
        assert_close(&got, &want, &format!("fold {}", fold.number));
    }
    // The same log read whole, as `ltr train --clicks` reads it, is refused on a fold: it holds other queries.
    let e = TrainJob::builder("lambdarank")
        .train(TrainData::Memory {
            data: &folds[0].train,
            name: "train".into(),
        })
        .clicks(Some(ClickSource {
            log: log.clone(),
            propensities: None,
            scope: ltr_learn::SessionScope::Every,
        }))
        .build()
        .unwrap()
        .run()
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("which the feature file lacks") && e.contains("--click-sessions"),
        "{e}"
    );
}
