//! Models written by RankLib itself (fixtures made by `fixtures/ranklib/make_fixtures.sh` with RankLib built from
//! source by `xtask/peers/build-ranklib.sh`) score as RankLib scored them (`-load M -rank F -score S`).
//!
//! Two checks per model and file:
//! - `ltr predict`'s path (`load_model`, then `score_loaded`) is within 1e-6 of RankLib's score relative to
//!   max(|score|, 1). RankLib adds its trees into a `float` (`Ensemble.eval`) and reads leaves and weights as
//!   `float`, where `ltr` keeps the file's decimals in f64 and sums in f64. Measured: at most 1.5e-7 (2.3e-7
//!   absolute; 3.7e-6 of the score itself for one training document whose score is 0.0098, RankLib's `float` sum
//!   being that coarse).
//! - The trees `ltr` read, walked with RankLib's arithmetic (leaf and weight rounded to f32, the product in f64, each
//!   sum rounded to f32; a forest's bag scores averaged in f64), give RankLib's scores bit for bit: every split,
//!   threshold (`value <= threshold` goes left), leaf and weight was read exactly. `train.txt` holds the values
//!   RankLib chose its thresholds from, so documents fall exactly on them.

use std::path::{Path, PathBuf};

use ltr_core::{Model, ModelFile, TreeNode};
use ltr_data::{read_letor, Dataset};
use ltr_export::{is_model_file, load_model, score_loaded};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ranklib")
        .join(name)
}

fn expected(name: &str) -> Vec<f64> {
    std::fs::read_to_string(fixture(name))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// RankLib's score of document `i`: per bag, f32 sums of (f32 leaf × f32 weight in f64); the bags' mean in f64.
fn ranklib_arithmetic(m: &ModelFile, bags: usize, ds: &Dataset, i: usize) -> f64 {
    let Model::Trees(t) = &m.model else {
        panic!("{} is not a tree ensemble", m.algorithm)
    };
    let row = ds.row(i);
    let per_bag = t.trees.len() / bags;
    let mut total = 0.0f64;
    for bag in t.trees.chunks(per_bag) {
        let mut s = 0.0f32;
        for tree in bag {
            let mut at = 0usize;
            let leaf = loop {
                match tree.nodes[at] {
                    TreeNode::Leaf { value } => break value,
                    TreeNode::Split {
                        feature,
                        threshold,
                        left,
                        right,
                    } => {
                        at = if row.get(feature) <= threshold {
                            left
                        } else {
                            right
                        } as usize;
                    }
                }
            };
            // The reader divided a forest's weights by the number of bags (a power of two here: exact).
            let weight = (tree.weight * bags as f64) as f32;
            s = (f64::from(s) + f64::from(leaf as f32) * f64::from(weight)) as f32;
        }
        total += f64::from(s);
    }
    total / bags as f64
}

fn check(model: &str, algorithm: &str, bags: usize) {
    let path = fixture(&format!("{model}.txt"));
    assert!(is_model_file(&path));
    let mut m = load_model(&path).unwrap();
    assert_eq!(m.algorithm, algorithm);
    for data in ["train", "test"] {
        let ds = read_letor(fixture(&format!("{data}.txt"))).unwrap();
        // What `ltr predict` runs (RankLib files list only the features they use: widened to the data).
        let got = score_loaded(&mut m, &ds, "data").unwrap();
        let want = expected(&format!("{model}.{data}.scores"));
        assert_eq!(got.len(), want.len(), "{model} {data}");
        let mut worst = 0.0f64;
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            let err = (g - w).abs() / w.abs().max(1.0);
            worst = worst.max(err);
            assert!(
                err <= 1e-6,
                "{model} {data}: document {i}: ltr {g} but RankLib {w}"
            );
            assert_eq!(
                ranklib_arithmetic(&m, bags, &ds, i),
                *w,
                "{model} {data}: document {i} in RankLib's arithmetic"
            );
        }
        eprintln!(
            "{model} {data}: {} documents, worst relative difference {worst:.2e}",
            got.len()
        );
    }
}

#[test]
fn ranklib_mart_scores_as_ranklib() {
    check("mart", "ranklib-mart", 1);
}

#[test]
fn ranklib_lambdamart_scores_as_ranklib() {
    check("lambdamart", "ranklib-lambdamart", 1);
}

#[test]
fn ranklib_random_forest_scores_as_ranklib() {
    // 4 bags of 3 MART trees (`-bag 4 -tree 3`).
    let m = load_model(&fixture("random-forest.txt")).unwrap();
    let Model::Trees(t) = &m.model else { panic!() };
    assert_eq!(t.trees.len(), 12);
    check("random-forest", "ranklib-random-forests", 4);
}

#[test]
fn damaged_random_forests_are_refused_naming_the_file() {
    let text = std::fs::read_to_string(fixture("random-forest.txt")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("rf.txt");
    let err = |t: &str| {
        std::fs::write(&p, t).unwrap();
        load_model(&p).unwrap_err().to_string()
    };
    let last = text.rfind("</ensemble>").unwrap();
    let e = err(&text[..last]);
    assert!(
        e.contains("rf.txt") && e.contains("bag 4 has no </ensemble>"),
        "{e}"
    );
    let e = err(&format!("{text}<tree>"));
    assert!(e.contains("text after the last </ensemble>"), "{e}");
    let header_end = text.find("<ensemble>").unwrap();
    let e = err(&format!("{}<x/>", &text[..header_end]));
    assert!(
        e.contains("rf.txt") && e.contains("without an <ensemble>"),
        "{e}"
    );
    let e = err(&text.replacen("<threshold> ", "<threshold> x", 1));
    assert!(
        e.contains("rf.txt") && e.contains("numeric threshold"),
        "{e}"
    );
}

#[test]
fn every_ranklib_header_read_is_told_from_data() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.txt");
    // AdaRank files were read but `ltr inspect` took them for data.
    std::fs::write(&p, "## AdaRank\n## Iteration = 2\n2:0.5 1:0.25\n").unwrap();
    assert!(is_model_file(&p));
    assert_eq!(load_model(&p).unwrap().algorithm, "ranklib-adarank");
    std::fs::write(&p, "## RankNet\n").unwrap();
    let e = load_model(&p).unwrap_err().to_string();
    assert!(
        e.contains("m.txt") && e.contains("`RankNet` is not read here"),
        "{e}"
    );
}
