//! The benchmark report's sections are spliced into BENCHMARKS.md, everything else kept (`xtask_lab::bench`).

use xtask_lab::bench::splice_section;

#[test]
fn a_section_is_replaced_and_everything_else_kept() {
    let report = "# Benchmarks\n\nintro\n<!-- section:parse -->\nold parse\n<!-- end:parse -->\n\
                  hand-written\n<!-- section:eval -->\nold eval\nmore\n<!-- end:eval -->\n## Trees\n\ntables\n";
    let out = splice_section(report, "eval", "new eval\n\n");
    assert_eq!(
        out,
        "# Benchmarks\n\nintro\n<!-- section:parse -->\nold parse\n<!-- end:parse -->\n\
         hand-written\n<!-- section:eval -->\nnew eval\n<!-- end:eval -->\n## Trees\n\ntables\n"
    );
    // Splicing what is there gives the report back.
    assert_eq!(splice_section(&out, "eval", "new eval"), out);
}

#[test]
fn a_missing_section_is_added_at_the_end() {
    let out = splice_section("# Benchmarks\n\nkept\n", "svm", "svm rows");
    assert_eq!(
        out,
        "# Benchmarks\n\nkept\n\n<!-- section:svm -->\nsvm rows\n<!-- end:svm -->\n"
    );
    assert_eq!(
        splice_section("", "svm", "rows"),
        "# Benchmarks\n\n<!-- section:svm -->\nrows\n<!-- end:svm -->\n"
    );
    // A start marker without its end is not a section: the report is kept and the section added.
    let broken = "a\n<!-- section:svm -->\nb\n";
    assert!(splice_section(broken, "svm", "rows").starts_with(broken));
}
