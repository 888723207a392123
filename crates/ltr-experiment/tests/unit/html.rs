//! Tests of `src/html.rs`.

use ltr_experiment::html::*;

#[test]
fn blocks_read_the_reports_markdown() {
    let md = "# Experiment: a, b\n\nData: `x.txt` split; more\ntext.\n\n## Test\n\n| method | MAP |\n|---|---|\n\
              | a | **0.5000** |\n| b <i> | 0.4000 |\n\nBold: best.\n![p.svg](plots/p.svg)\n\nOther: [q](plots/q.svg).\n";
    let b = blocks(md);
    assert_eq!(
        b,
        vec![
            Block::Heading(1, "Experiment: a, b".into()),
            Block::Paragraph("Data: `x.txt` split; more text.".into()),
            Block::Heading(2, "Test".into()),
            Block::Table(Table {
                header: vec!["method".into(), "MAP".into()],
                rows: vec![
                    vec!["a".into(), "**0.5000**".into()],
                    vec!["b <i>".into(), "0.4000".into()],
                ],
            }),
            Block::Paragraph("Bold: best.".into()),
            Block::Image("p.svg".into(), "plots/p.svg".into()),
            Block::Paragraph("Other: [q](plots/q.svg).".into()),
        ]
    );
}

#[test]
fn a_pipe_in_a_cell_survives_the_round_trip() {
    let md = ltr_experiment::md_table(
        &["method", "MAP"],
        &[vec!["boost|pipe".into(), "0.5".into()]],
    );
    assert_eq!(md, "| method | MAP |\n|---|---|\n| boost\\|pipe | 0.5 |\n");
    assert_eq!(
        blocks(&md),
        vec![Block::Table(Table {
            header: vec!["method".into(), "MAP".into()],
            rows: vec![vec!["boost|pipe".into(), "0.5".into()]],
        })]
    );
}

#[test]
fn inline_markdown_is_escaped_and_marked_up() {
    assert_eq!(
        inline("**0.5** and `a<b` [q&r](plots/q.svg) 0.01 * (0.02) <script>"),
        "<strong>0.5</strong> and <code>a&lt;b</code> <a href=\"plots/q.svg\">q&amp;r</a> 0.01 * (0.02) \
         &lt;script&gt;"
    );
    // Unclosed marks stay text.
    assert_eq!(inline("`open ** [x](y"), "`open ** [x](y");
}

#[test]
fn headings_get_unique_anchors() {
    let mut taken = Vec::new();
    for (t, want) in [
        ("Plots", "plots"),
        (
            "Against the baseline `ranksvm`",
            "against-the-baseline-ranksvm",
        ),
        ("NDCG@10", "ndcg-10"),
        ("NDCG@10", "ndcg-10-2"),
        ("—", "section"),
    ] {
        let id = anchor(t, &taken);
        assert_eq!(id, want);
        taken.push(id);
    }
}

#[test]
fn a_method_cell_gets_its_swatch() {
    let t = Table {
        header: vec!["method".into(), "b".into()],
        rows: vec![vec!["b".into(), "b".into()]],
    };
    let h = table_html(&t, &[("b".into(), "#ff7f0e".into())]);
    assert_eq!(h.matches("class=\"swatch\"").count(), 1, "{h}");
    assert!(h.contains(
        "<td><span class=\"swatch\" style=\"background:#ff7f0e\"></span>b</td><td>b</td>"
    ));
}
