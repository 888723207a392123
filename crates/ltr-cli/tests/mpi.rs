//! `mpirun -n P ltr train --distributed …` (the `mpi` feature; `cargo xtask test` installs Open MPI with
//! `scripts/setup-mpi.sh` and runs this): the model at 1, 2 and 3 MPI ranks equals the single-process model bit
//! for bit, from one file and from shard files; a rank whose shard is missing, and a rank killed mid-training,
//! end the whole job with an error naming the rank instead of leaving the others waiting.
#![cfg(feature = "mpi")]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{generate_web, model_part, ok, s};

fn mpirun(ranks: usize, args: &[&str]) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--oversubscribe", "-n", &ranks.to_string()])
        .arg(env!("CARGO_BIN_EXE_ltr"))
        .args(args)
        // Open MPI refuses to start as root (CI containers) without both.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("RUST_LOG", "warn");
    // A rank waiting for its peers spins unless told to yield (Open MPI yields by itself only when it sees more
    // ranks than cores): here, so that the test costs the same CPU however it is started (`cargo xtask test` sets
    // it too). Measured on this test: 25.6 CPU-s spinning, 21.3 yielding, same models.
    if std::env::var_os("OMPI_MCA_mpi_yield_when_idle").is_none() {
        c.env("OMPI_MCA_mpi_yield_when_idle", "1");
    }
    c
}

/// How long a job may run before it counts as a hang: each job trains in seconds, and the bound is 100 times that
/// or more so that no machine, however slow or loaded (every rank on one core, beside the other tests of this
/// binary), reaches it; only a rank waiting forever for a dead peer does.
const HANG: Duration = Duration::from_secs(600);

/// Wait for `child` at most `limit`; a job still running then is a hang (killed, then the test fails).
fn wait_bounded(mut child: std::process::Child, limit: Duration) -> Output {
    let t0 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if t0.elapsed() > limit {
            child.kill().ok();
            panic!("mpirun still running after {limit:?}: a rank is waiting for a dead peer");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `mpirun -n ranks ltr train --distributed --train TRAIN --model OUT COMMON…`, waited for at most `limit`.
fn train_on_ranks(
    ranks: usize,
    train: &Path,
    out: &Path,
    common: &[&str],
    limit: Duration,
) -> Output {
    let mut args = vec![
        "train",
        "--distributed",
        "--train",
        s(train),
        "--model",
        s(out),
    ];
    args.extend(common);
    let child = mpirun(ranks, &args)
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    wait_bounded(child, limit)
}

#[test]
fn mpi_ranks_give_the_single_process_model_and_fail_cleanly() {
    assert!(
        Command::new("mpirun").arg("--version").output().is_ok_and(|o| o.status.success()),
        "mpirun is missing: run scripts/setup-mpi.sh (the `mpi` feature was built, so MPI is expected)"
    );
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let train = generate_web(&p("web"), 60, 12);
    let common = ["--algo", "ranksvm", "--param", "c=1", "--normalize", "none"];
    let single = p("single.json");
    let mut args = vec!["train", "--train", s(&train), "--model", s(&single)];
    args.extend(common);
    ok(&args);
    let reference = model_part(&single);

    for ranks in [1, 2, 3] {
        let out = p(&format!("mpi{ranks}.json"));
        let o = train_on_ranks(ranks, &train, &out, &common, HANG);
        assert!(
            o.status.success(),
            "{ranks} ranks: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(model_part(&out), reference, "{ranks} MPI ranks");
    }
    let pattern = p("shards").join("part-{rank}.txt");
    ok(&[
        "shard",
        "--data",
        s(&train),
        "--ranks",
        "2",
        "--out",
        s(&pattern),
    ]);
    let out = p("shards.json");
    let o = train_on_ranks(2, &pattern, &out, &common, HANG);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(model_part(&out), reference, "2 MPI ranks from shard files");

    // RSVM-IR by OCAS (τ, μ and every plane summed over the processes), RankBoost (thresholds over every
    // process's feature ranges, exact threshold sums) and Coordinate Ascent (every line search's crossing points
    // gathered in rank order), and LambdaMART (bin bounds agreed over the processes, query bags drawn by global
    // query number, fixed-point histograms summed): the single-process models too.
    let lambdamart = [
        "--algo",
        "lambdamart",
        "--param",
        "trees=6",
        "--param",
        "query-fraction=0.7",
        "--param",
        "min-docs-in-leaf=5",
    ];
    let rsvm = ["--algo", "rsvm-ir", "--param", "max-iter=80"];
    let ca = [
        "--algo",
        "coordinate-ascent",
        "--param",
        "restarts=1",
        "--param",
        "max-sweeps=1",
    ];
    let boost = [
        "--algo",
        "rankboost",
        "--param",
        "rounds=30",
        "--normalize",
        "none",
    ];
    for (name, common) in [
        ("rsvm-ir", &rsvm[..]),
        ("rankboost", &boost[..]),
        ("coordinate-ascent", &ca[..]),
        ("lambdamart", &lambdamart[..]),
    ] {
        let single = p(&format!("{name}-single.json"));
        let mut args = vec!["train", "--train", s(&train), "--model", s(&single)];
        args.extend(common);
        ok(&args);
        for ranks in [2, 3] {
            let out = p(&format!("{name}-{ranks}.json"));
            let o = train_on_ranks(ranks, &train, &out, common, HANG);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(
                model_part(&out),
                model_part(&single),
                "{name} on {ranks} MPI ranks"
            );
        }
    }

    // Coordinate Ascent by bucket statistics (every MAP line here has over 8,192 crossing points): MPI's
    // MPI_MIN/MPI_MAX and rank-order sums give the thread backend's model at the same number of ranks, and the
    // lines really went through buckets. Three ranks only: a three-term rank-order sum and a middle rank cover
    // what two ranks would (the 2-rank pair cost 6.6 of this binary's ~22 CPU-s; ltr-learn's
    // tests/distributed.rs runs the thread backend's buckets at 2 and 3 ranks).
    let buckets = [
        "--algo",
        "coordinate-ascent",
        "--metric",
        "MAP",
        "--param",
        "restarts=1",
        "--param",
        "max-sweeps=1",
        "--param",
        "exchange=buckets",
    ];
    {
        let ranks = 3;
        let threads = p(&format!("buckets-threads-{ranks}.json"));
        let mut args = vec![
            "train",
            "--distributed",
            "--ranks",
            "3",
            "--train",
            s(&train),
            "--model",
            s(&threads),
        ];
        args.extend(buckets);
        ok(&args);
        let out = p(&format!("buckets-mpi-{ranks}.json"));
        let o = train_on_ranks(ranks, &train, &out, &buckets, HANG);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(
            model_part(&out),
            model_part(&threads),
            "bucket exchange on {ranks} MPI ranks against {ranks} thread ranks"
        );
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let diagnostics: serde_json::Value =
            serde_json::from_str(file["diagnostics_json"].as_str().unwrap()).unwrap();
        let restart = &diagnostics["restarts"][0];
        let by_buckets = restart["lines_by_buckets"].as_u64().unwrap();
        assert!(
            by_buckets > 0 && by_buckets == restart["lines_exchanged"].as_u64().unwrap(),
            "{restart}"
        );
    }

    // Three ranks, two shard files: rank 2 names its missing file and takes the job down.
    let out = p("missing.json");
    let o = train_on_ranks(3, &pattern, &out, &common, HANG);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(e.contains("rank 2 of 3") && e.contains("part-2.txt"), "{e}");
    assert!(!out.exists());

    // A rank killed mid-training: mpirun stops the others and says which rank died. Both ranks hold at the
    // start of their fit (ltr_core::test_hold) until this test has killed one, so the kill lands during training
    // on any machine, however fast, and on any data: the small file above serves (a 1,500-query file, 233 MB
    // written and parsed by both ranks, was needed only before the hold points).
    let out = p("killed.json");
    let hold = p("hold");
    std::fs::create_dir(&hold).unwrap();
    let mut args = vec![
        "train",
        "--distributed",
        "--train",
        s(&train),
        "--model",
        s(&out),
    ];
    args.extend(common);
    let child = mpirun(2, &args)
        .env("LTR_TEST_HOLD_DIR", &hold)
        .env("LTR_TEST_HOLD_AT", "fit")
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let holding = wait_for_holders(&hold, 2, HANG);
    Command::new("kill")
        .args(["-9", &holding[1]])
        .status()
        .unwrap();
    let o = wait_bounded(child, HANG);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("signal 9") || e.contains("Killed") || e.contains("exited"),
        "{e}"
    );
    assert!(!out.exists());
    // Nobody released the hold, so the surviving rank was stopped by mpirun, not by running out of patience.
    assert!(!hold.join("release").exists());
}

/// The process ids of the `n` processes holding in `dir` (see `ltr_core::test_hold`), once all `n` are there.
/// `limit` only bounds a failure (a rank that never reaches the point); it is not a guess at how long training
/// takes.
fn wait_for_holders(dir: &Path, n: usize, limit: Duration) -> Vec<String> {
    let t0 = Instant::now();
    loop {
        let mut pids: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let path = e.unwrap().path();
                let name = path.file_name()?.to_str()?.to_string();
                name.starts_with("holding-")
                    .then(|| std::fs::read_to_string(&path).ok())
                    .flatten()
                    .map(|t| t.trim().to_string())
            })
            .collect();
        pids.sort();
        if pids.len() >= n {
            return pids;
        }
        assert!(
            t0.elapsed() < limit,
            "{} of {n} ranks reached the hold point within {limit:?}",
            pids.len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
