//! A program that depends only on the `ltr` facade trains by name and gets the model `ltr train` writes, byte for
//! byte; `ltr algorithms --json` lists every parameter with its default and allowed values.

use std::process::Command;

use ltr::prelude::*;

fn ltr_bin(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_ltr"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run ltr");
    assert!(
        o.status.success(),
        "ltr {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn training_by_name_in_code_gives_the_cli_model_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let all = generate_letor_like(&SyntheticConfig {
        queries: 60,
        features: 12,
        seed: 9,
        ..Default::default()
    })
    .unwrap();
    let parts = ltr::data::split_by_queries(&all, &[0.7, 0.3], 2).unwrap();
    let (tf, vf) = (dir.path().join("train.txt"), dir.path().join("vali.txt"));
    write_letor(&parts[0], &tf).unwrap();
    write_letor(&parts[1], &vf).unwrap();
    let (train_ds, vali) = (read_letor(&tf).unwrap(), read_letor(&vf).unwrap());
    let cases: [(&str, &[&str]); 3] = [
        ("ranksvm", &["c=0.01,0.1,1"]),
        ("committee-perceptron", &["committee=10", "epochs=8"]),
        ("rankboost", &["rounds=40"]),
    ];
    for (algo, params) in cases {
        let m = dir.path().join(format!("{algo}.bin"));
        let mut args = vec![
            "train",
            "--train",
            tf.to_str().unwrap(),
            "--validate",
            vf.to_str().unwrap(),
            "--algo",
            algo,
            "--seed",
            "4",
            "--model",
            m.to_str().unwrap(),
        ];
        for p in params {
            args.extend(["--param", p]);
        }
        ltr_bin(&args);
        let cli = ModelFile::load(&m).unwrap();

        let req = TrainRequest::new(&train_ds).validation(&vali).seed(4);
        let ours = train(algo, &Grid::parse(params).unwrap(), &req).unwrap();
        let bytes = |m: &Model| serde_json::to_vec(m).unwrap();
        assert_eq!(bytes(&cli.model), bytes(&ours.fitted.model), "{algo}");
        assert_eq!(cli.params, ours.params, "{algo}");
        assert_eq!(cli.fit, ours.fitted.report, "{algo}");
        // The facade's TrainJob is the run `ltr train` makes: the same model, setting, report and provenance.
        let job = TrainJob::builder(algo)
            .params(params)
            .seed(4)
            .train(TrainData::File(tf.clone()))
            .validation(Some(TrainData::File(vf.clone())))
            .build()
            .unwrap()
            .run()
            .unwrap()
            .model
            .unwrap();
        assert_eq!(bytes(&cli.model), bytes(&job.model), "{algo}");
        assert_eq!((&cli.params, &cli.fit), (&job.params, &job.fit), "{algo}");
        assert_eq!(cli.training.train_file, job.training.train_file, "{algo}");
    }
}

#[test]
fn algorithms_json_lists_parameters_defaults_and_allowed_values() {
    let v: serde_json::Value = serde_json::from_str(&ltr_bin(&["algorithms", "--json"])).unwrap();
    let algos = v.as_array().unwrap();
    assert_eq!(algos.len(), ltr::learn::ALGORITHMS.len());
    let svm = algos.iter().find(|a| a["name"] == "ranksvm").unwrap();
    let c = svm["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "c")
        .unwrap();
    assert_eq!(c["default"], "1");
    assert_eq!(c["allowed"]["kind"], "c-value");
    let solver = svm["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "solver")
        .unwrap();
    assert_eq!(
        solver["allowed"]["values"],
        serde_json::json!(["newton", "dual", "gd", "cutting-plane", "ocas"])
    );
    let committee = algos
        .iter()
        .find(|a| a["name"] == "committee-perceptron")
        .unwrap();
    let rate = committee["params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "rate")
        .unwrap();
    assert_eq!(rate["when"], "step=global");
    assert_eq!(rate["allowed"]["kind"], "float");
}
