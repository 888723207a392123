use ltr_metrics::*;

#[test]
fn items_split_outside_parentheses_and_keep_trec_parameters() {
    let got = split_asked(&["nDCG@10,AP(rel=2,judged_only=True)", " P.5,10 ", "RR,,"]);
    assert_eq!(
        got,
        ["nDCG@10", "AP(rel=2,judged_only=True)", "P.5,10", "RR"]
    );
}

#[test]
fn rows_keep_the_order_asked() {
    let asked =
        classify_asked(&["P_5".into(), "nDCG@10".into(), "map".into(), "RR".into()]).unwrap();
    assert!(matches!(&asked[1], Asked::Metric(n, _) if n == "nDCG@10"));
    let row = |n: &str| Row {
        name: n.into(),
        value: 0.0,
        aggregate: RowAggregate::Mean,
        per_query: Vec::new(),
    };
    let rows = rows_in_order(
        &asked,
        vec![row("nDCG@10"), row("RR")],
        vec![(0, vec![row("P_5")]), (2, vec![row("map")])],
    );
    let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["P_5", "nDCG@10", "map", "RR"]);
}

#[test]
fn unknown_names_list_close_ones() {
    let e = classify_asked(&["nDGC@10".into()]).unwrap_err().to_string();
    assert!(e.contains("did you mean NDCG"), "{e}");
    let e = trec_measure_set(&["mapp"]).unwrap_err().to_string();
    assert!(e.contains("close:") && e.contains("map"), "{e}");
}

/// `ltr`'s `--metric` parsing (the CLI's test, moved here with the function it tests): each value a comma list split
/// outside parentheses, the names parsed, a default list when none is given.
fn parse_metrics(names: &[String], default: &[&str]) -> Result<Vec<Metric>, MetricParseError> {
    let list: Vec<String> = if names.is_empty() {
        default.iter().map(|s| s.to_string()).collect()
    } else {
        names.to_vec()
    };
    split_measures(&list)
        .iter()
        .map(|s| s.parse::<Metric>())
        .collect()
}

#[test]
fn commas_inside_parentheses_stay_with_their_measure() {
    let v = vec![
        "P(judged_only=True,rel=2)@5, MAP".to_string(),
        "OER(2,1)".to_string(),
        "nDCG@10,,".to_string(),
    ];
    assert_eq!(
        split_measures(&v),
        ["P(judged_only=True,rel=2)@5", "MAP", "OER(2,1)", "nDCG@10"]
    );
    let m = parse_metrics(&v, &[]).unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(m[0].to_string(), "P(judged_only=True,rel=2)@5");
    assert_eq!(m[2].to_string(), "OER(2,1)");
    assert_eq!(parse_metrics(&[], &["NDCG@10", "MAP"]).unwrap().len(), 2);
}
