//! Position-debiased `lambdamart` through the binary (issue 52): a click log and a LightGBM `.position` sidecar as
//! inputs, the rows that take no clicks refused by name, and bad sessions named by file and line.

use crate::common;

use common::{err, generate_letor, ok, s, simulate_clicks, train_production};

#[test]
fn lambdamart_learns_from_a_click_log_and_a_position_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    let (data, log, prod, model) = (p("data"), p("log.tsv"), p("prod.json"), p("m.json"));
    let train = generate_letor(&data, 40, 2);
    train_production(&train, &prod, &[]);
    simulate_clicks(&train, &prod, 3000, &log, &[]);
    for debias in ["none", "position-factors", "pairwise"] {
        let param = format!("debias={debias}");
        ok(&[
            "train",
            "--train",
            s(&train),
            "--clicks",
            s(&log),
            "--algo",
            "lambdamart",
            "--param",
            "trees=5",
            "--param",
            &param,
            "--model",
            s(&model),
        ]);
        let info: serde_json::Value =
            serde_json::from_str(&ok(&["inspect", s(&model), "--json"])).unwrap();
        let text = info.to_string();
        assert_eq!(text.contains("t_plus"), debias == "pairwise", "{debias}");
        assert_eq!(
            text.contains("factors"),
            debias == "position-factors",
            "{debias}"
        );
    }
    // The rows that take no clicks are refused by name before anything is read.
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--clicks",
        s(&log),
        "--algo",
        "mart",
        "--model",
        s(&model),
    ]);
    assert!(
        e.contains("--clicks") && e.contains("`mart` does not learn from clicks"),
        "{e}"
    );
    // A log whose session shows two documents at one rank is refused at the line of the second.
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut second: Vec<String> = lines[2].split('\t').map(str::to_string).collect();
    let first: Vec<&str> = lines[1].split('\t').collect();
    assert_eq!(
        first[0], second[0],
        "the first session shows two documents at least"
    );
    second[3] = first[3].to_string();
    lines[2] = second.join("\t");
    let bad = p("bad.tsv");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let e = err(&[
        "train",
        "--train",
        s(&train),
        "--clicks",
        s(&bad),
        "--algo",
        "lambdamart",
        "--model",
        s(&model),
    ]);
    assert!(
        e.contains("bad.tsv:3") && e.contains("rank after rank 1 of session"),
        "{e}"
    );
    // A LETOR file of click labels with LightGBM's .position sidecar beside it.
    let clicks_letor = p("clicks.txt");
    let train_text = std::fs::read_to_string(&train).unwrap();
    let mut positions = String::new();
    let mut out = String::new();
    let (mut last_qid, mut k) = (String::new(), 0);
    for (i, line) in train_text.lines().enumerate() {
        let qid = line.split_whitespace().nth(1).unwrap().to_string();
        k = if qid == last_qid { k + 1 } else { 0 };
        last_qid = qid;
        let rest = line.split_once(' ').unwrap().1;
        out.push_str(&format!("{} {rest}\n", u8::from(i % 7 == 0)));
        positions.push_str(&format!("{k}\n"));
    }
    std::fs::write(&clicks_letor, out).unwrap();
    let sidecar = p("clicks.txt.position");
    std::fs::write(&sidecar, &positions).unwrap();
    ok(&[
        "train",
        "--train",
        s(&clicks_letor),
        "--algo",
        "lambdamart",
        "--param",
        "trees=3",
        "--param",
        "debias=position-factors",
        "--model",
        s(&model),
    ]);
    let e = err(&[
        "train",
        "--train",
        s(&clicks_letor),
        "--algo",
        "ranksvm",
        "--model",
        s(&model),
    ]);
    assert!(e.contains("`ranksvm` does not learn from clicks"), "{e}");
    std::fs::write(&sidecar, positions.replacen("0\n", "-1\n", 1)).unwrap();
    let e = err(&[
        "train",
        "--train",
        s(&clicks_letor),
        "--algo",
        "lambdamart",
        "--model",
        s(&model),
    ]);
    assert!(
        e.contains("clicks.txt.position:1: a negative position"),
        "{e}"
    );
}
