use ltr_learn::job::refuse_launcher_without_backend;
use ltr_learn::{Ranks, TrainData, TrainJob, TrainJobBuilder};

#[test]
fn a_build_without_mpi_refuses_to_run_under_mpirun() {
    let launched = || Some(("OMPI_COMM_WORLD_SIZE", "2".to_string()));
    let e = refuse_launcher_without_backend(false, launched())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("OMPI_COMM_WORLD_SIZE=2") && e.contains("--features mpi"),
        "{e}"
    );
    assert!(refuse_launcher_without_backend(true, launched()).is_ok());
    assert!(refuse_launcher_without_backend(false, None).is_ok());
}

#[test]
fn inputs_are_checked_before_any_data_is_read() {
    let missing = || TrainData::File("/no/such/train.txt".into());
    let err = |b: TrainJobBuilder<'_>| b.train(missing()).build().unwrap_err().to_string();
    assert!(err(TrainJob::builder("nope")).starts_with("--algo: "));
    assert!(err(TrainJob::builder("ranksvm").params(&["cc=1"]))
        .contains("--param: parameter `cc`: unknown parameter for `ranksvm`"));
    assert!(err(TrainJob::builder("ranksvm").params(&["c=1,2"])).starts_with("--validate: "));
    assert!(err(TrainJob::builder("ranksvm").metric_name("NDCG@x")).starts_with("--metric: "));
    assert!(err(TrainJob::builder("ranksvm").normalize_name("z")).starts_with("--normalize: "));
    assert!(err(TrainJob::builder("ranksvm").log1p_list("0")).starts_with("--log1p: "));
    let distributed = |threads| Ranks::Distributed { threads };
    assert!(err(TrainJob::builder("adarank").ranks(distributed(None)))
        .contains("no distributed trainer"));
    assert!(err(TrainJob::builder("ranksvm").ranks(distributed(Some(0)))).starts_with("--ranks: "));
    // Every check passes: the missing file is only noticed when the job runs.
    let job = TrainJob::builder("ranksvm")
        .train(missing())
        .build()
        .unwrap();
    assert!(job
        .run()
        .unwrap_err()
        .to_string()
        .contains("/no/such/train.txt"));
}
