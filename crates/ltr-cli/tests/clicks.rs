//! Learning from clicks through the binary: simulate a log, estimate propensities, train Propensity SVM-Rank with
//! logged or estimated propensities, and the errors of `ltr train --clicks`.

use crate::common;

use common::{err, generate_letor, ok, s, simulate_clicks, train_production};

#[test]
fn train_on_clicks_end_to_end_and_its_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let data = p("data");
    let log_tsv = p("log.tsv");
    let table_tsv = p("table.tsv");
    let prod_json = p("prod.json");
    let bad_tsv = p("bad.tsv");
    let x_json = p("x.json");
    let noprop_tsv = p("noprop.tsv");
    let badtable_tsv = p("badtable.tsv");
    let other_json = p("other.json");
    let train = generate_letor(&data, 60, 4);
    let test = data.join("test.txt");
    train_production(&train, &prod_json, &["c=0.01"]);
    simulate_clicks(
        &train,
        &prod_json,
        20000,
        &log_tsv,
        &["--top", "1000", "--intervention", "swap-top"],
    );
    // Logged propensities, and a table estimated from the log's swaps (written by --out, read by --propensities).
    ok(&[
        "clicks",
        "propensity",
        "--clicks",
        s(&log_tsv),
        "--out",
        s(&table_tsv),
    ]);
    // EM on a plain log of the top 10 with swaps (documents at several ranks): p_2/p_1 near the true 1/2 for
    // per-document EM; regression EM's logistic relevance is misspecified on generated data, so it is only
    // bounded here (its accuracy is tested in ltr-data). The bootstrap (code both methods share) runs for EM, whose
    // fits are cheap; regression EM's point estimate is the same without it (p_2 0.5192 at 0 and at 3 replicates),
    // and its three replicates were 8.5 of this test's 21 CPU-s.
    let em_log = p("em.tsv");
    simulate_clicks(
        &train,
        &prod_json,
        20000,
        &em_log,
        &["--intervention", "swap-top", "--seed", "3"],
    );
    for (method, bootstrap, extra) in [
        ("em", "3", vec![]),
        ("regression-em", "0", vec!["--features", s(&train)]),
    ] {
        let mut args = vec![
            "clicks",
            "propensity",
            "--clicks",
            s(&em_log),
            "--method",
            method,
            "--bootstrap",
            bootstrap,
            "--json",
        ];
        args.extend(extra);
        let est: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
        let p2 = est[1]["propensity"].as_f64().unwrap();
        let tol = if method == "em" { 0.1 } else { 0.3 };
        assert!((p2 - 0.5).abs() < tol, "{method}: {est}");
        // An interval around the estimate from the replicates (0.489–0.502 around 0.495 for EM), none without.
        let (lo, hi) = (
            est[1]["low"].as_f64().unwrap(),
            est[1]["high"].as_f64().unwrap(),
        );
        if bootstrap == "0" {
            assert!(lo == p2 && hi == p2, "{method}: {est}");
        } else {
            assert!(lo < p2 && p2 < hi, "{method}: {est}");
        }
    }
    let e = err(&[
        "clicks",
        "propensity",
        "--clicks",
        s(&log_tsv),
        "--method",
        "regression-em",
    ]);
    assert!(e.contains("--features"), "{e}");
    let table = std::fs::read_to_string(&table_tsv).unwrap();
    assert!(
        table.starts_with(ltr_clicks::PROPENSITY_TABLE_HEADER),
        "{table}"
    );
    let mut ndcg = Vec::new();
    for (name, extra) in [
        ("ips", vec![]),
        ("naive", vec!["--param", "weighting=naive"]),
        ("table", vec!["--propensities", s(&table_tsv)]),
    ] {
        let model = p(&format!("{name}.json"));
        let mut args = vec![
            "train",
            "--train",
            s(&train),
            "--clicks",
            s(&log_tsv),
            "--algo",
            "propensity-ranksvm",
            "--model",
            s(&model),
        ];
        args.extend(extra);
        ok(&args);
        let scores = p(&format!("{name}.scores"));
        ok(&[
            "predict",
            "--model",
            s(&model),
            "--data",
            s(&test),
            "--out",
            s(&scores),
        ]);
        let ev: serde_json::Value = serde_json::from_str(&ok(&[
            "eval",
            "--data",
            s(&test),
            "--scores",
            s(&scores),
            "--metric",
            "NDCG@10",
            "--json",
        ]))
        .unwrap();
        ndcg.push(ev["metrics"]["NDCG@10"]["mean"].as_f64().unwrap());
    }
    // Every click model learns something (generated data: NDCG@10 of a random order is about 0.3).
    for v in &ndcg {
        assert!(*v > 0.5, "{ndcg:?}");
    }
    // The estimated table gives a model close to the one on true propensities.
    assert!((ndcg[0] - ndcg[2]).abs() < 0.05, "{ndcg:?}");
    // IPS-weighted lambdarank and listnet train on a click set (the top-10 log: 0.3 s for both, against 2.3 s
    // on the whole lists of `log_tsv`).
    for algo in ["lambdarank", "listnet"] {
        ok(&[
            "train",
            "--train",
            s(&train),
            "--clicks",
            s(&em_log),
            "--algo",
            algo,
            "--param",
            "epochs=5",
            "--model",
            s(&other_json),
        ]);
    }

    // Errors: a document missing from the features names the log's line and session.
    let log = std::fs::read_to_string(&log_tsv).unwrap();
    let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
    let victim = lines
        .iter()
        .position(|l| l.starts_with("3\t"))
        .expect("session 3");
    let mut fields: Vec<String> = lines[victim].split('\t').map(str::to_string).collect();
    fields[2] = "no-such-doc".into();
    lines[victim] = fields.join("\t");
    std::fs::write(&bad_tsv, lines.join("\n") + "\n").unwrap();
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--clicks",
        s(&bad_tsv),
        "--algo",
        "propensity-ranksvm",
        "--model",
        s(&x_json),
    ]);
    // `victim` is session 3's first line (0-based): the error points at it.
    let first_line_of_session_3 = victim + 1;
    assert!(
        e.contains(&format!("bad.tsv:{first_line_of_session_3}")) && e.contains("no-such-doc"),
        "{e}"
    );
    // A log without propensities needs a table.
    let stripped: String = log
        .lines()
        .map(|l| l.split('\t').take(5).collect::<Vec<_>>().join("\t") + "\n")
        .collect();
    std::fs::write(&noprop_tsv, stripped).unwrap();
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--clicks",
        s(&noprop_tsv),
        "--algo",
        "propensity-ranksvm",
        "--model",
        s(&x_json),
    ]);
    assert!(
        e.contains("no propensity") && e.contains("noprop.tsv:"),
        "{e}"
    );
    // Propensity SVM-Rank needs clicks; --propensities needs --clicks; a malformed table names its line.
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--algo",
        "propensity-ranksvm",
        "--model",
        s(&x_json),
    ]);
    assert!(e.contains("--clicks"), "{e}");
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--algo",
        "ranksvm",
        "--propensities",
        s(&table_tsv),
        "--model",
        s(&x_json),
    ]);
    assert!(e.contains("--clicks"), "{e}");
    std::fs::write(&badtable_tsv, "rank\tpropensity\n1\t1\n3\t0.5\n2\t0.7\n").unwrap();
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--clicks",
        s(&log_tsv),
        "--propensities",
        s(&badtable_tsv),
        "--algo",
        "propensity-ranksvm",
        "--model",
        s(&x_json),
    ]);
    assert!(
        e.contains("badtable.tsv:4") && e.contains("rank of 4 or more"),
        "{e}"
    );
    assert!(!x_json.exists(), "no model is written on an error");
}

#[test]
fn click_models_simulate_fit_and_evaluate_through_the_binary() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let data = p("data");
    let train = generate_letor(&data, 30, 2);
    let prod = p("prod.json");
    train_production(&train, &prod, &[]);
    for model in ["dcm", "ubm", "dbn"] {
        let (log, test, fit) = (
            p(&format!("{model}.tsv")),
            p(&format!("{model}-test.tsv")),
            p(&format!("{model}.json")),
        );
        for (out, seed) in [(&log, "1"), (&test, "2")] {
            simulate_clicks(
                &train,
                &prod,
                2000,
                out,
                &["--click-model", model, "--seed", seed],
            );
        }
        let fitted = ok(&[
            "clicks",
            "fit",
            "--clicks",
            s(&log),
            "--click-model",
            model,
            "--out",
            s(&fit),
            "--test",
            s(&test),
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&fitted).unwrap();
        let ppl = v["perplexity"].as_f64().unwrap();
        assert!(ppl > 1.0 && ppl < 2.0, "{model}: {v}");
        assert_eq!(v["perplexity_at_rank"].as_array().unwrap().len(), 10);
        // The written parameters evaluate to the same numbers.
        let again = ok(&[
            "clicks",
            "evaluate",
            "--params",
            s(&fit),
            "--clicks",
            s(&test),
            "--json",
        ]);
        assert_eq!(again, fitted);
        let table = ok(&[
            "clicks",
            "evaluate",
            "--params",
            s(&fit),
            "--clicks",
            s(&test),
        ]);
        assert!(table.contains("perplexity@10\t"), "{table}");
    }
    // The ULTRA preset: ULTRA's curve in the propensity column, ten shown.
    let ultra = p("ultra.tsv");
    simulate_clicks(
        &train,
        &prod,
        50,
        &ultra,
        &["--preset", "ultra", "--top", "20"],
    );
    let text = std::fs::read_to_string(&ultra).unwrap();
    assert!(
        text.lines().nth(1).unwrap().contains("\t1\t0\t0.68\t")
            || text.lines().nth(1).unwrap().contains("\t1\t1\t0.68\t")
    );
    assert_eq!(text.lines().count(), 1 + 50 * 10);
    // Bad logs are refused naming the file and line; bad parameter files naming the file.
    let bad = p("bad.tsv");
    let fit = p("x.json");
    for (body, line, what) in [
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\ta\t1\t0\n1\tq\tb\t3\t1\n",
            3,
            "rank after rank 1",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\ta\t-1\t0\n",
            2,
            "bad rank",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\ta\t1\n",
            2,
            "fields",
        ),
        (
            "session\tqid\tdocid\trank\tclicked\n1\tq\ta\t1\t1\n2\tq\ta\t1\t0\n1\tq\tb\t2\t0\n",
            4,
            "reappears",
        ),
    ] {
        std::fs::write(&bad, body).unwrap();
        let e = err(&[
            "clicks",
            "fit",
            "--clicks",
            s(&bad),
            "--click-model",
            "pbm",
            "--out",
            s(&fit),
        ]);
        assert!(
            e.contains(&format!("bad.tsv:{line}")) && e.contains(what),
            "{e}"
        );
        assert!(!fit.exists());
    }
    std::fs::write(&bad, "session\tqid\tdocid\trank\tclicked\n").unwrap();
    let e = err(&[
        "clicks",
        "fit",
        "--clicks",
        s(&bad),
        "--click-model",
        "pbm",
        "--out",
        s(&fit),
    ]);
    assert!(e.contains("no sessions"), "{e}");
    std::fs::write(&fit, "{\"model\": \"pbm\", \"documents\": []}").unwrap();
    let e = err(&[
        "clicks",
        "evaluate",
        "--params",
        s(&fit),
        "--clicks",
        s(&p("dbn.tsv")),
    ]);
    assert!(e.contains("x.json") && e.contains("exam"), "{e}");
}

#[test]
fn interleave_prefers_the_better_ranker_and_names_a_short_score_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let data = p("data");
    let train = generate_letor(&data, 30, 3);
    let (good, worse, short) = (p("good.json"), p("worse.scores"), p("short.scores"));
    train_production(&train, &good, &[]);
    // B: the documents in reverse file order.
    let n = std::fs::read_to_string(&train).unwrap().lines().count();
    let reverse: String = (0..n).map(|i| format!("{i}\n")).collect();
    std::fs::write(&worse, reverse).unwrap();
    for method in ["team-draft", "balanced", "probabilistic"] {
        let out = ok(&[
            "interleave",
            "--data",
            s(&train),
            "--a",
            s(&good),
            "--b",
            s(&worse),
            "--method",
            method,
            "--sessions",
            "3000",
            "--json",
        ]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let (w, t, l) = (
            v["wins"].as_u64().unwrap(),
            v["ties"].as_u64().unwrap(),
            v["losses"].as_u64().unwrap(),
        );
        assert_eq!(w + t + l, 3000);
        assert!(w > 2 * l, "{method}: {v}");
    }
    std::fs::write(&short, "1.0\n").unwrap();
    let e = err(&[
        "interleave",
        "--data",
        s(&train),
        "--a",
        s(&short),
        "--b",
        s(&good),
    ]);
    assert!(e.contains("short.scores:2"), "{e}");
}

/// `neural` learns from one query per click (issue 52's neural row): each click query's loss and gradient weighted
/// by its inverse propensity (`weighting=ips`, ULTRA's IPW with the listwise losses) or by its count alone
/// (`weighting=naive`, the control), the two giving different models, each the same at 1 and 2 threads; a
/// debiasing it does not have (Unbiased LambdaMART's pairs) is refused by name.
#[test]
fn neural_learns_from_a_click_log_weighted_by_inverse_propensity() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let (data, log, prod) = (p("data"), p("log.tsv"), p("prod.json"));
    let train = generate_letor(&data, 40, 6);
    train_production(&train, &prod, &[]);
    simulate_clicks(&train, &prod, 3000, &log, &[]);
    let fit = |weighting: &str, threads: &str| {
        let model = p(&format!("{weighting}-{threads}.json"));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ltr"))
            .args(["train", "--train", s(&train), "--clicks", s(&log)])
            .args(["--algo", "neural", "--param", "epochs=3", "--param"])
            .arg(format!("weighting={weighting}"))
            .args(["--seed", "4", "--model", s(&model)])
            .env("RAYON_NUM_THREADS", threads)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        ltr_core::ModelFile::load(&model).unwrap().model
    };
    let ips = fit("ips", "1");
    assert_eq!(ips, fit("ips", "2"), "ips: 1 and 2 threads");
    let naive = fit("naive", "2");
    assert_eq!(naive, fit("naive", "1"), "naive: 1 and 2 threads");
    assert_ne!(ips, naive, "the inverse propensities change nothing");
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--clicks",
        s(&log),
        "--algo",
        "neural",
        "--param",
        "debias=pairwise",
        "--model",
        s(&p("x.json")),
    ]);
    assert!(e.contains("debias") && e.contains("pairwise"), "{e}");
}

/// `ltr clicks propensity --from-model`: the propensities a DLA model learned, as the table `ltr train
/// --propensities` reads, so that a linear DLA's propensities weigh another learner's clicks; a model that learned
/// none, and a log beside the model, are refused.
#[test]
fn a_dla_models_propensities_feed_another_learner() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let (data, log, prod) = (p("data"), p("log.tsv"), p("prod.json"));
    let (dla, table) = (p("dla.json"), p("table.tsv"));
    let train = generate_letor(&data, 40, 8);
    train_production(&train, &prod, &[]);
    simulate_clicks(&train, &prod, 3000, &log, &["--top", "10"]);
    let trained = |model: &std::path::Path, extra: &[&str]| {
        let mut args = vec!["train", "--train", s(&train), "--clicks", s(&log)];
        args.extend(extra);
        args.extend(["--seed", "2", "--model", s(model)]);
        ok(&args);
    };
    trained(&dla, &["--algo", "lambdarank", "--param", "debias=dla"]);
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "clicks",
        "propensity",
        "--from-model",
        s(&dla),
        "--out",
        s(&table),
        "--json",
    ]))
    .unwrap();
    let learned: serde_json::Value =
        serde_json::from_str(&ltr_core::ModelFile::load(&dla).unwrap().diagnostics_json).unwrap();
    let theta = learned["position_bias"]["propensities"].as_array().unwrap();
    assert_eq!(json.as_array().unwrap().len(), theta.len());
    for (row, t) in json.as_array().unwrap().iter().zip(theta) {
        assert_eq!(row["propensity"], *t, "{json}");
    }
    let text = std::fs::read_to_string(&table).unwrap();
    assert!(
        text.starts_with(ltr_clicks::PROPENSITY_TABLE_HEADER),
        "{text}"
    );
    // The table weighs the network's click queries: another model than the log's own propensities give.
    let net = [
        "--algo", "neural", "--param", "epochs=2", "--param", "sizes=8",
    ];
    let (from_table, from_log) = (p("table-net.json"), p("log-net.json"));
    trained(
        &from_table,
        &[&net[..], &["--propensities", s(&table)]].concat(),
    );
    trained(&from_log, &net);
    assert_ne!(
        ltr_core::ModelFile::load(&from_table).unwrap().model,
        ltr_core::ModelFile::load(&from_log).unwrap().model
    );
    // A model that learned no propensities, and a log given beside the model.
    let e = err(&["clicks", "propensity", "--from-model", s(&from_log)]);
    assert!(
        e.contains("log-net.json") && e.contains("no learned propensities"),
        "{e}"
    );
    let e = err(&[
        "clicks",
        "propensity",
        "--from-model",
        s(&dla),
        "--clicks",
        s(&log),
    ]);
    assert!(e.contains("--clicks"), "{e}");
}

/// `--click-sessions train-queries`: one log over a whole data set trains on the part --train holds, as the log cut
/// to that part's sessions does; read whole (the default) the same log is refused at a query --train lacks.
#[test]
fn a_log_over_more_queries_than_train_holds_is_read_in_part_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let all = generate_letor(&p("data"), 30, 6);
    let prod = p("prod.json");
    train_production(&all, &prod, &[]);
    let log = p("log.tsv");
    simulate_clicks(&all, &prod, 3000, &log, &[]);
    // The first half of the queries, and the log cut to their sessions.
    let text = std::fs::read_to_string(&all).unwrap();
    let qid = |l: &str| l.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut qids: Vec<String> = text.lines().map(qid).collect();
    qids.dedup();
    let kept: std::collections::HashSet<String> = qids[..15].iter().cloned().collect();
    let part = p("part.txt");
    let lines: String = text
        .lines()
        .filter(|l| kept.contains(&qid(l)))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&part, lines).unwrap();
    let log_text = std::fs::read_to_string(&log).unwrap();
    let cut = p("cut.tsv");
    let cut_text: String = log_text
        .lines()
        .filter(|l| {
            l.starts_with("session")
                || kept.contains(&format!("qid:{}", l.split('\t').nth(1).unwrap_or("")))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(cut_text.len() < log_text.len());
    std::fs::write(&cut, cut_text).unwrap();
    let train = |clicks: &std::path::Path, extra: &[&str], model: &str| {
        let mut args = vec![
            "train",
            "--train",
            s(&part),
            "--clicks",
            s(clicks),
            "--algo",
            "propensity-ranksvm",
            "--model",
        ];
        let model = p(model);
        args.push(s(&model));
        args.extend(extra);
        (
            args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
            model,
        )
    };
    let scores =
        |model: &std::path::Path| ok(&["predict", "--model", s(model), "--data", s(&part)]);
    let (args, _) = train(&log, &[], "whole.json");
    let e = err(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(
        e.contains("which the feature file lacks") && e.contains("--click-sessions"),
        "{e}"
    );
    let (args, scoped) = train(&log, &["--click-sessions", "train-queries"], "scoped.json");
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let (args, reference) = train(&cut, &[], "cut.json");
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(scores(&scoped), scores(&reference));
    // The flag needs --clicks.
    let e = err(&[
        "train",
        "--train",
        s(&part),
        "--algo",
        "ranksvm",
        "--click-sessions",
        "train-queries",
        "--model",
        s(&p("x.json")),
    ]);
    assert!(e.contains("--clicks"), "{e}");
}
