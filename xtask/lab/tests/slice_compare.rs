//! The comparison of a fresh slice with the committed one (`xtask_lab::reproduce::slice`): values exactly, timing
//! columns aside.

use xtask_lab::reproduce::slice::{compare, fields};

const CSV: &str = "MAP,dataset,method,seconds\n0.4,\"OHSUMED\",\"RankSVM, C grid\",1.5\n0.25,\"MQ2008\",\"MART\",2\n";

#[test]
fn identical_slices_agree_and_times_are_not_compared() {
    assert!(compare(CSV, CSV).is_empty());
    let slower = CSV.replace("1.5\n", "9.25\n");
    assert!(compare(CSV, &slower).is_empty());
}

#[test]
fn a_perturbed_value_fails_naming_line_and_column() {
    let moved = CSV.replace("0.25,", "0.25000000000000006,");
    let d = compare(CSV, &moved);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(
        d[0].starts_with("line 3, column MAP: committed 0.25, reproduced 0.25000000000000006"),
        "{d:?}"
    );
}

#[test]
fn missing_rows_and_other_columns_fail() {
    let fewer: String = CSV.lines().take(2).map(|l| format!("{l}\n")).collect();
    assert_eq!(compare(CSV, &fewer), ["2 rows committed, 1 reproduced"]);
    let other = CSV.replacen("MAP", "NDCG@10", 1);
    assert!(compare(CSV, &other)[0].starts_with("columns differ"));
    assert_eq!(compare(CSV, ""), ["empty file"]);
}

#[test]
fn quoted_commas_stay_in_their_field() {
    assert_eq!(
        fields("0.4,\"RankSVM, C grid\",1"),
        ["0.4", "\"RankSVM, C grid\"", "1"]
    );
}
