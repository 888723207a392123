//! `ltr train --distributed` on the thread backend and `ltr shard`: the model file's model equals the one of a
//! plain `ltr train`, bit for bit, from one file or from shard files, at 1, 2 and 3 ranks; errors name the file.
//! (The same under `mpirun` is `tests/mpi.rs`, built with the `mpi` feature.)

use crate::common;

use std::path::Path;

use common::{generate_web, ltr, model_part, ok, s};

#[test]
fn thread_ranks_write_the_single_process_model() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let train = generate_web(&p("web"), 40, 9);
    let common = [
        "--algo",
        "ranksvm",
        "--param",
        "c=0.5",
        "--normalize",
        "none",
    ];
    let mut single = vec!["train", "--train", s(&train), "--model"];
    let single_json = p("single.json");
    single.push(s(&single_json));
    single.extend(common);
    ok(&single);
    let reference = model_part(&single_json);
    // `ltr inspect` says what the data holds in memory and what training would add, per algorithm.
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", s(&train), "--json"])).unwrap();
    let loaded = info["memory_bytes"].as_u64().unwrap();
    let docs = info["documents"].as_u64().unwrap();
    assert!(
        loaded >= docs * 136 * 4,
        "{loaded} bytes for {docs} documents"
    );
    let svm = info["training_memory_bytes"]["ranksvm"].as_u64().unwrap();
    let boost = info["training_memory_bytes"]["rankboost"].as_u64().unwrap();
    // Dense raw data is z-scored in place: the data plus Newton's 72 bytes per document; RankBoost adds each cell's
    // threshold bucket (1 byte per cell) to its 24 bytes per document.
    assert_eq!(svm, loaded + 72 * docs);
    assert_eq!(boost, loaded + 24 * docs + 136 * docs);
    assert!(reference["Linear"]["weights"].as_array().unwrap().len() > 100);
    for ranks in ["1", "2", "3"] {
        let out = p(&format!("d{ranks}.json"));
        let mut args = vec![
            "train",
            "--distributed",
            "--ranks",
            ranks,
            "--train",
            s(&train),
            "--model",
            s(&out),
        ];
        args.extend(common);
        ok(&args);
        assert_eq!(model_part(&out), reference, "{ranks} ranks");
    }
    // One file per rank, as `ltr shard` writes them.
    let pattern = p("shards").join("part-{rank}.txt");
    ok(&[
        "shard",
        "--data",
        s(&train),
        "--ranks",
        "3",
        "--out",
        s(&pattern),
    ]);
    for r in 0..3 {
        assert!(p("shards").join(format!("part-{r}.txt")).is_file());
    }
    let out = p("from-shards.json");
    let mut args = vec![
        "train",
        "--distributed",
        "--ranks",
        "3",
        "--train",
        s(&pattern),
        "--model",
        s(&out),
    ];
    args.extend(common);
    ok(&args);
    assert_eq!(model_part(&out), reference);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let single_v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&single_json).unwrap()).unwrap();
    assert_eq!(
        v["training"]["documents"],
        single_v["training"]["documents"]
    );
    assert_eq!(v["training"]["queries"], single_v["training"]["queries"]);

    // Binary-cache shards load instead of parsing, and train the same model.
    let cached = p("cached").join("part-{rank}.ltrcache");
    ok(&[
        "shard",
        "--data",
        s(&train),
        "--ranks",
        "2",
        "--out",
        s(&cached),
    ]);
    let out_cached = p("from-caches.json");
    let mut args = vec![
        "train",
        "--distributed",
        "--ranks",
        "2",
        "--train",
        s(&cached),
        "--model",
        s(&out_cached),
    ];
    args.extend(common);
    ok(&args);
    assert_eq!(model_part(&out_cached), reference);
    let whole = p("whole.ltrcache");
    ok(&[
        "shard",
        "--data",
        s(&train),
        "--ranks",
        "1",
        "--out",
        s(&whole),
    ]);
    let info: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", s(&whole), "--json"])).unwrap();
    assert_eq!(info["documents"].as_u64().unwrap(), docs);

    // Errors: a missing shard names its file; a grid, an algorithm without a distributed trainer and raw data
    // under `auto` say what to do instead.
    let x_json = p("x.json");
    let o = ltr(&[
        "train",
        "--distributed",
        "--ranks",
        "4",
        "--train",
        s(&pattern),
        "--algo",
        "ranksvm",
        "--normalize",
        "none",
        "--model",
        s(&x_json),
    ]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("part-3.txt") && !e.contains("panicked"), "{e}");
    let err = |extra: &[&str]| {
        let mut args = vec![
            "train",
            "--distributed",
            "--ranks",
            "2",
            "--train",
            s(&train),
            "--model",
            s(&x_json),
        ];
        args.extend(extra);
        let o = ltr(&args);
        assert!(!o.status.success(), "{args:?}");
        String::from_utf8_lossy(&o.stderr).to_string()
    };
    assert!(err(&["--algo", "adarank", "--normalize", "none"]).contains("no distributed trainer"));
    assert!(err(&[
        "--algo",
        "ranksvm",
        "--param",
        "c=1,2",
        "--normalize",
        "none"
    ])
    .contains("one setting"));
    // The default `auto` normalisation (a z-score here) is fitted across the ranks: same model as one process.
    let z_single = p("z-single.json");
    ok(&[
        "train",
        "--train",
        s(&train),
        "--algo",
        "ranksvm",
        "--model",
        s(&z_single),
    ]);
    let z_dist = p("z-dist.json");
    ok(&[
        "train",
        "--distributed",
        "--ranks",
        "3",
        "--train",
        s(&train),
        "--algo",
        "ranksvm",
        "--model",
        s(&z_dist),
    ]);
    let full = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    assert_eq!(full(&z_dist)["model"], full(&z_single)["model"]);
    assert_eq!(full(&z_dist)["preprocess"], full(&z_single)["preprocess"]);
    assert!(full(&z_dist)["preprocess"]["normalization"]["ZScore"].is_object());
    assert!(!x_json.exists());
    let no_pattern = p("no-pattern.txt");
    let o = ltr(&[
        "shard",
        "--data",
        s(&train),
        "--ranks",
        "2",
        "--out",
        s(&no_pattern),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("{rank}"));
}
