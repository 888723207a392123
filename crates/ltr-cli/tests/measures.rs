//! `ltr eval` with ir_measures' measure syntax on a TREC run, and `--list-measures`.

use crate::common;
use std::path::Path;

use common::{fails_mentioning, ltr, ok, s};

#[test]
fn eval_speaks_ir_measures_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.txt");
    let qrels = dir.path().join("qrels.txt");
    // Ranked as trec_eval does (score descending, ties by docid descending): d1 (2), d3 (1), d2 (0), d4 (unjudged).
    std::fs::write(
        &run,
        "q1 Q0 d1 1 3.0 t\nq1 Q0 d2 2 2.0 t\nq1 Q0 d3 3 2.0 t\nq1 Q0 d4 4 1.0 t\n",
    )
    .unwrap();
    std::fs::write(&qrels, "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d5 0\n").unwrap();
    let out = ok(&[
        "eval",
        "--run",
        s(&run),
        "--qrels",
        s(&qrels),
        "--convention",
        "trec",
        "--metric",
        "P(rel=2)@2,Judged@2,Judged@4,RBP(p=0.5),RBPResidual(p=0.5)",
        "--metric",
        "SetP,NumRel(rel=2),R@2,IPrec@0.5,Success(judged_only=True,rel=2)@1",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let expect = [
        ("P(rel=2)@2", 0.5),
        ("Judged@2", 1.0),
        ("Judged@4", 0.75),
        ("RBP(p=0.5)", 0.75),
        ("RBPResidual(p=0.5)", 0.125),
        ("SetP", 0.5),
        ("NumRel(rel=2)", 1.0),
        ("R@2", 1.0),
        ("IPrec@0.5", 1.0),
        ("Success(judged_only=True,rel=2)@1", 1.0),
    ];
    for (name, want) in expect {
        let got = v["metrics"][name]["mean"]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: {v}"));
        assert!((got - want).abs() < 1e-12, "{name}: {got} vs {want}");
    }
    // A run is evaluated under trec_eval's convention unless told otherwise.
    let default = ok(&["eval", "--run", s(&run), "--qrels", s(&qrels), "--json"]);
    let d: serde_json::Value = serde_json::from_str(&default).unwrap();
    assert_eq!(d["convention"], "trec", "{d}");
    let standard = ok(&[
        "eval",
        "--run",
        s(&run),
        "--qrels",
        s(&qrels),
        "--convention",
        "standard",
        "--json",
    ]);
    let st: serde_json::Value = serde_json::from_str(&standard).unwrap();
    assert_eq!(st["convention"], "standard", "{st}");
    let bad = ltr(&[
        "eval",
        "--run",
        s(&run),
        "--qrels",
        s(&qrels),
        "--metric",
        "nDCG(rel=2)@10",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("nDCG(rel=2)@10"));
}

/// `ltr eval --run RUN --qrels QRELS --measure MEASURES [--json]`.
fn eval_run(run: &Path, qrels: &Path, measures: &str, json: bool) -> std::process::Output {
    let mut args = vec![
        "eval",
        "--run",
        s(run),
        "--qrels",
        s(qrels),
        "--measure",
        measures,
    ];
    if json {
        args.push("--json");
    }
    ltr(&args)
}

/// The mean of each measure of `ltr eval --json`, by name.
fn means(run: &Path, qrels: &Path, measures: &str) -> serde_json::Value {
    let out = eval_run(run, qrels, measures, true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["metrics"].clone()
}

#[test]
fn eval_reads_diversity_qrels_for_diversity_measures_and_samples_for_infap() {
    let dir = tempfile::tempdir().unwrap();
    let (run, qrels) = (dir.path().join("run.txt"), dir.path().join("div.txt"));
    std::fs::write(&run, "q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d3 3 1 t\n").unwrap();
    // ndeval's format, qid subtopic docid rel: d1 covers subtopics 1 and 2, d2 subtopic 1, d3 and d4 subtopic 3.
    let text = "q1 1 d1 1\nq1 2 d1 1\nq1 1 d2 1\nq1 3 d3 1\nq1 3 d4 1\nq1 2 d3 0\n";
    std::fs::write(&qrels, text).unwrap();
    let v = means(&run, &qrels, "alpha_nDCG@3,StRecall@2,P_IA@3,NRBP");
    // Gains with α = 0.5: the run 2, 0.5, 1; ndeval's greedy ideal d1, d4, d3 (ties to the larger doc id): 2, 1, 0.5.
    let l3 = 3f64.log2();
    let ndcg = (2.0 + 0.5 / l3 + 1.0 / 2.0) / (2.0 + 1.0 / l3 + 0.5 / 2.0);
    let nrbp = (1.0 - 0.5 * 0.5) / 3.0 * (2.0 + 0.5 * 0.5 + 1.0 * 0.25);
    let expect = [
        ("alpha_nDCG@3", ndcg),
        ("StRecall@2", 2.0 / 3.0),
        ("P_IA@3", 4.0 / 9.0),
        ("NRBP", nrbp),
    ];
    for (name, want) in expect {
        let got = v[name]["mean"]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: {v}"));
        assert!((got - want).abs() < 1e-12, "{name}: {got} vs {want}");
    }
    // Ad hoc and diversity measures read the file differently: asked together, refused with the reason.
    let mixed = eval_run(&run, &qrels, "alpha_nDCG@3,P@2", false);
    assert!(!mixed.status.success());
    assert!(String::from_utf8_lossy(&mixed.stderr).contains("separate calls"));
    // A malformed diversity qrels line is named by file and line.
    std::fs::write(&qrels, "q1 1 d1 1\nq1 one d2 1\n").unwrap();
    let bad = eval_run(&run, &qrels, "ERR_IA@20", false);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("div.txt:2: subtopic `one`"),
        "{err}"
    );
    // infAP on a sampled pool (trec_eval: -1 is pooled but unjudged; x is outside the pool): 0.5, as pytrec_eval.
    let lines: Vec<String> = ["x", "b", "a", "c", "e", "d"]
        .iter()
        .enumerate()
        .map(|(i, d)| format!("1 Q0 {d} {} {} t\n", i + 1, 9 - i))
        .collect();
    std::fs::write(&run, lines.concat()).unwrap();
    std::fs::write(&qrels, "1 0 a 1\n1 0 b -1\n1 0 c 0\n1 0 d 2\n1 0 e -1\n").unwrap();
    let v = means(&run, &qrels, "infAP,AP");
    assert!(
        (v["infAP"]["mean"].as_f64().unwrap() - 0.5).abs() < 1e-9,
        "{v}"
    );
    // AP: a at rank 3 and d at rank 6 of R = 2 (b and e unjudged).
    assert!(
        (v["AP"]["mean"].as_f64().unwrap() - (1.0 / 3.0 + 2.0 / 6.0) / 2.0).abs() < 1e-12,
        "{v}"
    );
}

#[test]
fn list_measures_gives_syntax_defaults_and_sources() {
    let text = ok(&["eval", "--list-measures"]);
    for needle in [
        "RBP",
        "p=0.8",
        "Moffat & Zobel 2008",
        "IPrec@r",
        "trec_eval",
        "judged_only=False",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["eval", "--list-measures", "--json"])).unwrap();
    let all = v.as_array().unwrap();
    assert!(all.len() >= 25);
    assert!(all
        .iter()
        .all(|m| !m["definition"].as_str().unwrap().is_empty()
            && !m["source"].as_str().unwrap().is_empty()));
}

/// `ltr fuse`: Borda on two runs by hand, RRF's ranks, weights tuned on qrels, and the bad inputs.
#[test]
fn fuse_combines_runs_as_computed_by_hand_and_refuses_bad_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let (ra, rb, qrels) = (p("a"), p("b"), p("qrels"));
    let (out, x, missing) = (p("fused"), p("x"), p("missing"));
    // Run A ranks d1, d2, d3; run B ranks d2, d4 (in a shuffled file order: ranks come from the scores).
    std::fs::write(
        &ra,
        "q1 Q0 d3 3 1.0 a\nq1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\n",
    )
    .unwrap();
    std::fs::write(&rb, "q1 Q0 d4 2 0.5 b\nq1 Q0 d2 1 0.9 b\n").unwrap();
    std::fs::write(&qrels, "q1 0 d1 1\nq1 0 d2 0\n").unwrap();
    let fused = |extra: &[&str]| {
        let mut args = vec![
            "fuse",
            "--run",
            ra.as_str(),
            "--run",
            rb.as_str(),
            "--out",
            out.as_str(),
        ];
        args.extend(extra);
        ok(&args);
        std::fs::read_to_string(&out).unwrap()
    };
    // Borda: A gives d1 3, d2 2, d3 1; B gives d2 2, d4 1 → d2 4, d1 3, then d4 and d3 tie at 1 (docid descending).
    assert_eq!(
        fused(&["--method", "borda"]),
        "q1 Q0 d2 1 4 ltr-fuse-borda\nq1 Q0 d1 2 3 ltr-fuse-borda\nq1 Q0 d4 3 1 ltr-fuse-borda\nq1 Q0 d3 4 1 ltr-fuse-borda\n"
    );
    let rrf = fused(&["--method", "rrf", "--k", "1"]);
    let first: Vec<&str> = rrf.lines().map(|l| l.split(' ').nth(2).unwrap()).collect();
    // k = 1: d2 = 1/3 + 1/2, d1 = 1/2, d4 = 1/3, d3 = 1/4.
    assert_eq!(first, ["d2", "d1", "d4", "d3"], "{rrf}");
    // Tuned on qrels where only d1 is relevant: min-max CombSUM needs w_A > 2 w_B, first met at (0.1, 0).
    let tuned = fused(&[
        "--method",
        "wsum",
        "--tune-on",
        qrels.as_str(),
        "--measure",
        "RR",
    ]);
    assert!(tuned.starts_with("q1 Q0 d1 1 "), "{tuned}");
    for (args, needle) in [
        (vec!["--method", "nope"], "unknown fusion method `nope`"),
        (vec!["--norm", "l2"], "unknown normalisation `l2`"),
        (vec!["--weights", "1"], "1 weights for 2 runs"),
        (vec!["--weights", "1,-2"], "-2 is not a non-negative number"),
    ] {
        let mut a = vec![
            "fuse",
            "--run",
            ra.as_str(),
            "--run",
            rb.as_str(),
            "--out",
            x.as_str(),
        ];
        a.extend(args);
        let o = ltr(&a);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(needle), "{a:?}: {err}");
    }
    let o = ltr(&[
        "fuse",
        "--run",
        ra.as_str(),
        "--run",
        missing.as_str(),
        "--out",
        x.as_str(),
    ]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("missing"));
    let o = ltr(&["fuse", "--run", ra.as_str(), "--out", x.as_str()]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("two runs or more"));
    assert!(
        !std::path::Path::new(&x).exists(),
        "nothing written on a refusal"
    );
}

/// `ltr eval --format trec_eval` reproduces trec_eval 10.0's output byte for byte (its output on the committed
/// fixtures of ltr-metrics), with trec_eval's flags.
#[test]
fn format_trec_eval_prints_trec_eval_lines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ltr-metrics/tests/fixtures/trec_eval");
    let (run, qrels_a, qrels_b) = (dir.join("run"), dir.join("qrels.a"), dir.join("qrels.b"));
    for (name, qrels, flags) in [
        ("all_q", &qrels_a, vec!["-q", "-m", "all_trec"]),
        (
            "all_q_c_M3",
            &qrels_b,
            vec!["-q", "-c", "-M3", "-m", "all_trec"],
        ),
        ("all_q_J", &qrels_a, vec!["-q", "-J", "-m", "all_trec"]),
        ("all_q_l2", &qrels_a, vec!["-q", "-l2", "-m", "all_trec"]),
        ("all_n", &qrels_a, vec!["-q", "-n", "-m", "all_trec"]),
        (
            "utility",
            &qrels_a,
            vec![
                "-q",
                "-N",
                "1000",
                "-m",
                "utility.1,-1,-0.5,0.1",
                "-m",
                "num_nonrel_judged_ret",
            ],
        ),
        ("official", &qrels_a, vec![]),
    ] {
        let mut args = vec![
            "eval",
            "--format",
            "trec_eval",
            "--run",
            s(&run),
            "--qrels",
            s(qrels),
        ];
        args.extend(flags);
        let want = std::fs::read_to_string(dir.join(format!("out.{name}"))).unwrap();
        assert_eq!(ok(&args), want, "{name}");
    }
}

/// Rows and JSON keys keep each measure's name as written, in the order asked; counts are summed as trec_eval and
/// ir_measures sum them; trec_eval's names work outside `--format trec_eval` too.
#[test]
fn measures_come_back_under_the_names_asked_in_order() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ltr-metrics/tests/fixtures/trec_eval");
    let (run, qrels) = (dir.join("run"), dir.join("qrels.a"));
    let names = [
        "nDCG@10",
        "AP",
        "RR",
        "NumRet",
        "num_rel_ret",
        "gm_map",
        "ndcg_cut_10",
        "P.5,10",
    ];
    let mut args = vec!["eval", "--run", s(&run), "--qrels", s(&qrels), "--json"];
    for n in names {
        args.extend(["--measure", n]);
    }
    let v: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
    let order: Vec<&str> = v["measures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "nDCG@10",
            "AP",
            "RR",
            "NumRet",
            "num_rel_ret",
            "gm_map",
            "ndcg_cut_10",
            "P_5",
            "P_10"
        ]
    );
    // trec_eval's own summary lines on the same files.
    let all = std::fs::read_to_string(dir.join("out.all")).unwrap();
    let te = |name: &str| -> f64 {
        let line = all
            .lines()
            .find(|l| l.split('\t').next().unwrap().trim() == name)
            .unwrap();
        line.split('\t').nth(2).unwrap().parse().unwrap()
    };
    let m = &v["metrics"];
    let val = |k: &str| m[k]["value"].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
    assert_eq!(val("NumRet"), te("num_ret"));
    assert_eq!(m["NumRet"]["aggregate"], "sum");
    assert_eq!(val("num_rel_ret"), te("num_rel_ret"));
    for (ours, theirs) in [
        ("AP", "map"),
        ("RR", "recip_rank"),
        ("gm_map", "gm_map"),
        ("ndcg_cut_10", "ndcg_cut_10"),
        ("P_5", "P_5"),
    ] {
        assert!(
            (val(ours) - te(theirs)).abs() <= 5e-5,
            "{ours}: {} vs {}",
            val(ours),
            te(theirs)
        );
    }
    assert!((val("nDCG@10") - val("ndcg_cut_10")).abs() < 1e-12);
    let text_args: Vec<&str> = args.iter().copied().filter(|a| *a != "--json").collect();
    let text = ok(&text_args);
    let rows: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(rows, order);
}

/// Bad input: empty files refused naming the file, unknown measures answered with close names, malformed
/// trec_eval parameters with what was expected, a duplicate document refused as trec_eval refuses it.
#[test]
fn eval_refuses_bad_input_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (run, qrels, empty) = (
        dir.path().join("run"),
        dir.path().join("qrels"),
        dir.path().join("empty"),
    );
    std::fs::write(&run, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n").unwrap();
    std::fs::write(&qrels, "q1 0 d1 1\n").unwrap();
    std::fs::write(&empty, "").unwrap();
    let (run_s, qrels_s, empty_s) = (s(&run), s(&qrels), s(&empty));
    // (the arguments after `eval`, what the error must say)
    let cases: [(&[&str], &[&str]); 7] = [
        (
            &["--run", empty_s, "--qrels", qrels_s, "--measure", "nDCG@10"],
            &["empty", empty_s],
        ),
        (
            &["--run", run_s, "--qrels", empty_s, "--measure", "nDCG@10"],
            &["empty", empty_s],
        ),
        (
            &[
                "--format",
                "trec_eval",
                "--run",
                empty_s,
                "--qrels",
                qrels_s,
            ],
            &["empty", empty_s],
        ),
        (
            &["--run", run_s, "--qrels", qrels_s, "--measure", "ndgc@10"],
            &["NDCG"],
        ),
        (
            &[
                "--run",
                run_s,
                "--qrels",
                qrels_s,
                "-m",
                "recip_rnk",
                "--format",
                "trec_eval",
            ],
            &["recip_rank"],
        ),
        (
            &["--run", run_s, "--qrels", qrels_s, "-m", "P.5,x"],
            &["positive integer cut-offs"],
        ),
        (
            &["--run", run_s, "--qrels", qrels_s, "-m", "ndcg.1"],
            &["pairs"],
        ),
    ];
    for (args, needles) in cases {
        fails_mentioning(&[&["eval"], args].concat(), needles);
    }
    std::fs::write(&run, "q1 Q0 d1 1 2 t\nq1 Q0 d1 2 1 t\n").unwrap();
    fails_mentioning(
        &[
            "eval",
            "--format",
            "trec_eval",
            "--run",
            run_s,
            "--qrels",
            qrels_s,
        ],
        &["d1 twice", "duplicate docs"],
    );
}
