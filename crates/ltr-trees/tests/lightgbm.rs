//! Differential tests against LightGBM on committed fixtures (`tests/fixtures/lightgbm/`, written by LightGBM
//! through `make_fixtures.py` there): the bins of features of every shape, the first tree and ten trees, and on a
//! slice of MQ2008 the first tree's scores and why the second differs; and (`make_position_bias.py`) the position
//! factors of `lambdarank_position_bias` on clicks, round by round, with their ten trees.

use std::path::{Path, PathBuf};

use ltr_core::{Fit, FitContext, ForestTree, Model, ParamGuard};
use ltr_data::{read_letor, Dataset};
use ltr_trees::{
    best_split, bin_bounds, train_gbdt, Debias, GbdtParams, GrowSettings, LeafCount, PenaltyUnit,
    PositionBias, Scale, Sums, MIN_DATA_IN_BIN,
};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lightgbm")
        .join(name)
}

fn json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

/// For each bound, the index of the distinct value (of ascending `values`) it follows: `values[i] <= b <
/// values[i + 1]` (checked).
fn ends_of(values: &[f64], bounds: impl IntoIterator<Item = f64>) -> Vec<usize> {
    bounds
        .into_iter()
        .map(|b| {
            let i = values.partition_point(|&v| v <= b);
            assert!(i >= 1 && i < values.len(), "bound {b} outside the values");
            i - 1
        })
        .collect()
}

/// Where ltr's bins differ from LightGBM's at the `max_bin` the rule of bins.rs names, and why (the documented
/// differences; every other shape and `max_bin` must give LightGBM's bins exactly).
fn documented_difference(shape: &str, max_bin: usize) -> Option<&'static str> {
    match (shape, max_bin) {
        // LightGBM cuts every feature at zero and shares the bins out in proportion to the documents on either
        // side, which moves under a shift; ltr's bins do not. They equal LightGBM's on the shifted column.
        ("negative", _) => Some("LightGBM cuts at zero"),
        // More distinct values than bins, and zero (the smallest value) holds less than a bin's share of the
        // documents: no pivot here, where LightGBM gives zero a bin anyway. They equal LightGBM's on the column
        // shifted above zero.
        ("counts", 4) | ("rare_values", 4 | 16) => Some("zero below a bin's share"),
        _ => None,
    }
}

/// Features of every shape: ltr's bins (which distinct values share a bin) are LightGBM's `Dataset` bins at the
/// `max_bin` that bins.rs's rule names, or a documented difference; each bound lies between the same neighbouring
/// values as LightGBM's (a bound strictly between them, not a data value).
#[test]
fn bins_equal_lightgbms_on_features_of_every_shape() {
    let shapes = json("bins.json");
    let (mut compared, mut shifted_compared) = (0, 0);
    for shape in shapes.as_array().unwrap() {
        let name = shape["name"].as_str().unwrap();
        let values: Vec<f64> = shape["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let counts: Vec<u64> = shape["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        let mut column: Vec<f32> = values
            .iter()
            .zip(&counts)
            .flat_map(|(&v, &c)| std::iter::repeat_n(v as f32, c as usize))
            .collect();
        column.extend(std::iter::repeat_n(
            f32::NAN,
            shape["nan"].as_u64().unwrap() as usize,
        ));
        for case in shape["lightgbm"].as_array().unwrap() {
            let max_bin = case["max_bin"].as_u64().unwrap() as usize;
            let bounds = bin_bounds(&column, max_bin, MIN_DATA_IN_BIN);
            assert!(bounds.len() < max_bin, "{name} {max_bin}");
            for (&b, &e) in bounds
                .iter()
                .zip(&ends_of(&values, bounds.iter().map(|&b| b as f64)))
            {
                // Between the neighbours, not on the lower one (unless they are adjacent floats).
                assert!(
                    b as f64 > values[e]
                        || (b as f64) == values[e]
                            && (values[e] as f32).next_up() as f64 == values[e + 1]
                );
            }
            let ours = ends_of(&values, bounds.iter().map(|&b| b as f64));
            let theirs: Vec<usize> = case["ends"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect();
            match documented_difference(name, max_bin) {
                None => assert_eq!(ours, theirs, "{name} max_bin {max_bin}"),
                Some(why) => {
                    assert_ne!(
                        ours, theirs,
                        "{name} max_bin {max_bin}: no longer differs ({why})"
                    )
                }
            }
            // LightGBM on the column shifted so that its rule and ltr's cut at the same place (the pivot at zero,
            // or every value above zero): the same bins, whatever the shape.
            if let Some(shifted) = case.get("shifted_ends") {
                let shifted: Vec<usize> = shifted
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap() as usize)
                    .collect();
                assert_eq!(ours, shifted, "{name} max_bin {max_bin}, shifted");
                shifted_compared += 1;
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 24);
    assert!(shifted_compared >= 15, "{shifted_compared}");
}

/// One fixture: the data, LightGBM's settings and trees.
struct Fixture {
    name: &'static str,
    data: Dataset,
    params: Value,
    trees: Vec<Vec<Value>>,
}

fn load(name: &'static str) -> Fixture {
    let data = read_letor(fixture(&format!("{name}.txt"))).unwrap();
    let j = json(&format!("{name}.json"));
    let trees = j["trees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_array().unwrap().clone())
        .collect();
    Fixture {
        name,
        data,
        params: j["params"].clone(),
        trees,
    }
}

/// ltr's `lambdamart` (or `mart` for LightGBM's `regression`) with LightGBM's settings of the fixture, `trees` rounds.
fn train(f: &Fixture, trees: usize) -> ltr_core::Forest {
    let fitted = settings(f, trees)
        .check()
        .unwrap()
        .fit(&f.data, &FitContext::new(1))
        .unwrap();
    match fitted.model {
        Model::Forest(forest) => forest,
        m => panic!("not a forest: {m:?}"),
    }
}

/// The [`GbdtParams`] of LightGBM's settings of the fixture, `trees` rounds.
fn settings(f: &Fixture, trees: usize) -> GbdtParams {
    let p = &f.params;
    let mut g = match p["objective"].as_str().unwrap() {
        "lambdarank" => GbdtParams::lambdamart(),
        "regression" => GbdtParams::mart(),
        o => panic!("objective {o}"),
    };
    g.trees = trees;
    g.stop_after = 0;
    g.learning_rate = p["learning_rate"].as_f64().unwrap();
    g.tree.leaves = p["num_leaves"].as_u64().unwrap() as usize;
    // 0 in LightGBM for binary_labels: the hessian minimum alone decides (make_fixtures.py); ltr's least is 1.
    g.tree.min_docs_in_leaf = (p["min_data_in_leaf"].as_u64().unwrap() as usize).max(1);
    // LightGBM counts a leaf's documents from its hessians (make_fixtures.py says why); with its 0 any count passes,
    // as ltr's 1 document counted as documents does (the default counts from the hessians).
    g.tree.leaf_count = if p["min_data_in_leaf"].as_u64().unwrap() > 0 {
        LeafCount::Hessian
    } else {
        LeafCount::Documents
    };
    g.tree.min_hessian_in_leaf = p["min_sum_hessian_in_leaf"].as_f64().unwrap();
    g.tree.l2 = p["lambda_l2"].as_f64().unwrap();
    g.tree.min_data_in_bin = p["min_data_in_bin"].as_u64().unwrap() as usize;
    // LightGBM keeps one bin for zero on a feature without a pivot value (bins.rs): its max_bin + 1 here.
    g.tree.max_bin = p["max_bin"].as_u64().unwrap() as usize;
    if f.name == "negative_values" {
        g.tree.max_bin -= 1;
    }
    g
}

/// The distinct training values of feature `j`, ascending.
fn distinct(data: &Dataset, j: usize) -> Vec<f64> {
    let mut v: Vec<f64> = (0..data.n_docs())
        .map(|i| data.row(i).get(j) as f64)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// How two trees differ, walking ours (node `n`, a leaf when negative) and LightGBM's (preorder from `pos`):
/// `Err` names the first difference (a split feature, a threshold not between the same neighbouring training
/// values, a leaf value off by more than `rel` of its size). `base` is added to ltr's leaves (MART's start score,
/// which LightGBM folds into its first tree).
struct Walk<'a> {
    ours: &'a ForestTree,
    theirs: &'a [Value],
    data: &'a Dataset,
    rel: f64,
    base: f64,
    worst: f64,
}

impl Walk<'_> {
    fn node(&mut self, n: i32, pos: &mut usize, path: &str) -> Result<(), String> {
        let t = &self.theirs[*pos];
        *pos += 1;
        if n < 0 {
            let Some(leaf) = t.get("leaf") else {
                return Err(format!(
                    "{path}: ltr has a leaf, LightGBM splits on {}",
                    t["feature"]
                ));
            };
            let (a, b) = (
                self.ours.leaf_value[!n as usize] + self.base,
                leaf.as_f64().unwrap(),
            );
            let err = (a - b).abs() / b.abs().max(1e-12);
            self.worst = self.worst.max(err);
            if err > self.rel {
                return Err(format!(
                    "{path}: leaf {a} against LightGBM's {b} (relative {err:.2e})"
                ));
            }
            return Ok(());
        }
        let n = n as usize;
        let Some(feature) = t.get("feature") else {
            return Err(format!(
                "{path}: ltr splits on {}, LightGBM has a leaf",
                self.ours.split_feature[n]
            ));
        };
        let (f, ours_f) = (
            feature.as_u64().unwrap() as usize,
            self.ours.split_feature[n] as usize,
        );
        if f != ours_f {
            return Err(format!(
                "{path}: ltr splits on feature {ours_f}, LightGBM on {f}"
            ));
        }
        let values = distinct(self.data, f);
        let (ot, lt) = (
            self.ours.threshold[n] as f64,
            t["threshold"].as_f64().unwrap(),
        );
        let (oi, li) = (ends_of(&values, [ot])[0], ends_of(&values, [lt])[0]);
        if oi != li {
            return Err(format!(
                "{path}: feature {f}: ltr's threshold {ot} follows value {}, LightGBM's {lt} value {}",
                values[oi], values[li]
            ));
        }
        self.node(self.ours.left[n], pos, &format!("{path}L"))?;
        self.node(self.ours.right[n], pos, &format!("{path}R"))
    }
}

/// Walks tree `k` of ours against LightGBM's: Ok(worst relative leaf difference) or the first difference.
fn compare(f: &Fixture, ours: &ltr_core::Forest, k: usize, rel: f64) -> Result<f64, String> {
    let tree = &ours.trees[k];
    let base = if k == 0 && f.params["objective"] == "regression" {
        ours.base_score
    } else {
        0.0
    };
    let mut w = Walk {
        ours: tree,
        theirs: &f.trees[k],
        data: &f.data,
        rel,
        base,
        worst: 0.0,
    };
    let root = if tree.split_feature.is_empty() { -1 } else { 0 };
    w.node(root, &mut 0, "root ")?;
    Ok(w.worst)
}

const FIXTURES: [&str; 5] = [
    "small_ints",
    "web_counts",
    "binary_labels",
    "negative_values",
    "mart_regression",
];

/// `trees=1` is LightGBM's first tree on every fixture: the same split features, every threshold between the same
/// neighbouring training values, and the same leaf values: to 1e-9 of their size under squared error (MART against
/// LightGBM's `regression`, whose float32 gradients are exact on this data), and to 2e-6 under LambdaRank, whose
/// gradients LightGBM rounds to float32 (`score_t`) where ltr keeps f64 (measured: 4e-8 to 9e-7).
#[test]
fn first_tree_is_lightgbms() {
    for name in FIXTURES {
        let f = load(name);
        let ours = train(&f, 1);
        let rel = if f.params["objective"] == "regression" {
            1e-9
        } else {
            2e-6
        };
        let worst = compare(&f, &ours, 0, rel).unwrap_or_else(|e| panic!("{name}: {e}"));
        eprintln!("{name}: first tree, worst relative leaf difference {worst:.2e}");
    }
}

/// Ten trees on data with exact bins: the same splits as LightGBM's, tree by tree, on all five fixtures. From the
/// second tree on LightGBM reads the pair sigmoid from a table (a million steps over [−25, 25]: the score difference
/// rounded down by up to 4.8e-5) and keeps gradients in float32, so leaf values drift apart by up to about 1e-3 of
/// their size (5e-3 on binary_labels, whose queries without a relevant document leave leaves of small hessian).
/// Before `min-docs-count=hessian` two fixtures kept LightGBM's splits for 6 and 2 trees only: there ltr split a
/// leaf that LightGBM's estimated counts left whole.
#[test]
fn ten_trees_are_lightgbms_but_for_float32_and_sigmoid_table_drift() {
    for (name, rel) in [
        ("small_ints", 1e-3),
        ("binary_labels", 5e-3),
        ("mart_regression", 1e-4),
        ("web_counts", 1e-3),
        ("negative_values", 1e-3),
    ] {
        let f = load(name);
        let ours = train(&f, 10);
        assert_eq!(ours.trees.len(), 10, "{name}");
        for k in 0..10 {
            let worst =
                compare(&f, &ours, k, rel).unwrap_or_else(|e| panic!("{name} tree {k}: {e}"));
            eprintln!("{name}: tree {k} is LightGBM's, leaves within {worst:.1e}");
        }
    }
}

/// Equal gains within a feature (thresholds that split the leaf alike: the bins between them are empty) go as in
/// LightGBM's two scans: the larger bin with the missing values on the left (or none), the smaller with them on
/// the right, which wins only with a strictly larger gain.
#[test]
fn equal_gains_keep_lightgbms_thresholds() {
    let s = GrowSettings {
        leaves: 31,
        max_depth: 0,
        min_docs_in_leaf: 1,
        min_hessian_in_leaf: 0.0,
        leaf_count: LeafCount::Documents,
        l2: 0.0,
        shrinkage: 1.0,
    };
    let scale = Scale::new(1.0, 1.0, 100);
    let bin = |g: i64, h: i64, n: i64| Sums { g, h, n };
    let sum = |h: &[Sums]| {
        h.iter().fold(Sums::default(), |a, b| Sums {
            g: a.g + b.g,
            h: a.h + b.h,
            n: a.n + b.n,
        })
    };
    // No missing bin: bins 1 and 2 are empty, so thresholds 0, 1 and 2 tie; the top one wins.
    let hist = [
        bin(-10, 10, 5),
        Sums::default(),
        Sums::default(),
        bin(10, 10, 5),
    ];
    let b = best_split(&hist, false, sum(&hist), &scale, &s).unwrap();
    assert_eq!((b.bin, b.missing_left), (2, true));
    // Missing values (the last bin) go right, strictly better than left; thresholds 0 and 1 tie: the lower wins.
    let hist = [
        bin(-10, 10, 5),
        Sums::default(),
        bin(10, 10, 5),
        bin(10, 10, 5),
    ];
    let b = best_split(&hist, true, sum(&hist), &scale, &s).unwrap();
    assert_eq!((b.bin, b.missing_left), (0, false));
    // A leaf without missing documents: both directions tie everywhere, the left one and the top threshold win.
    let hist = [
        bin(-10, 10, 5),
        Sums::default(),
        bin(10, 10, 5),
        Sums::default(),
    ];
    let b = best_split(&hist, true, sum(&hist), &scale, &s).unwrap();
    assert_eq!((b.bin, b.missing_left), (1, true));
}

/// LightGBM's output of a tree (its `dump_model` nodes in preorder, as the fixtures hold them) for one document:
/// `value <= threshold` goes left (the fixtures have no missing values). Returns the output and the position after
/// the subtree.
fn lightgbm_output(nodes: &[Value], pos: usize, x: &dyn Fn(usize) -> f64) -> (f64, usize) {
    let n = &nodes[pos];
    if let Some(leaf) = n.get("leaf") {
        return (leaf.as_f64().unwrap(), pos + 1);
    }
    let (left, after_left) = lightgbm_output(nodes, pos + 1, x);
    let (right, after_right) = lightgbm_output(nodes, after_left, x);
    let f = n["feature"].as_u64().unwrap() as usize;
    let goes_left = x(f) <= n["threshold"].as_f64().unwrap();
    (if goes_left { left } else { right }, after_right)
}

/// `mq2008_head` (the first 48 queries of MQ2008 Fold1's training file, 16 of its features, 816 documents; real
/// values, up to about 700 distinct a feature, so greedy bins with zero as the pivot): ltr's first tree scores
/// every training document as LightGBM's does, to 2e-6 of the largest leaf (LambdaRank's float32 gradients, as in
/// [`first_tree_is_lightgbms`]), and its first four splits are LightGBM's. The trees differ as structures only at a
/// split of no gain: its leaf holds documents whose gradient is exactly −2 times their hessian (label-0 documents
/// of queries with a relevant one, all scores 0, so every pair gives λ = Δ/2 and a hessian Δ/4), where every
/// threshold gains 0 and both programs pick one by rounding noise (gain 2⁻⁴⁸) with the same leaf values on both
/// sides.
#[test]
fn mq2008_first_tree_scores_are_lightgbms() {
    let f = load("mq2008_head");
    assert_eq!(f.data.n_docs(), 816);
    let ours = train(&f, 1);
    let tree = &ours.trees[0];
    let largest = tree.leaf_value.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut worst = 0.0f64;
    for i in 0..f.data.n_docs() {
        let row = f.data.row(i);
        let (theirs, _) = lightgbm_output(&f.trees[0], 0, &|j| row.get(j) as f64);
        let err = (tree.output(&row) - theirs).abs() / largest;
        worst = worst.max(err);
    }
    assert!(
        worst < 2e-6,
        "worst difference {worst:.2e} of the largest leaf"
    );
    // The first splits in preorder (root, its left child, …) down to the one of no gain: the same features at
    // thresholds between the same neighbouring values.
    let root_feature = f.trees[0][0]["feature"].as_u64().unwrap();
    assert_eq!(tree.split_feature[0] as u64, root_feature);
    let e = compare(&f, &ours, 0, 2e-6).unwrap_err();
    assert!(e.starts_with("root LRL: "), "{e}");
    eprintln!("mq2008_head: first tree scores within {worst:.1e} of the largest leaf; {e}");
}

/// Why the second tree on `mq2008_head` is not LightGBM's: ties in the current scores. The first tree has four
/// leaves of the same value −0.2 (learning rate 0.1 times G/H = −2, leaves of the documents named in
/// [`mq2008_first_tree_scores_are_lightgbms`]). ltr's fixed-point sums make them exactly −0.2, so the documents in
/// them tie, and a query's tied documents rank in document order (LightGBM's rule for ties too). LightGBM's four
/// leaves come out −0.2 give or take up to 2.2e-15, each a little different (rounding in its double sums, which
/// pass through histogram subtraction, and the 1e-15 it adds to a hessian sum); so it ranks those documents by that
/// rounding, the swap weights |ΔNDCG| of their pairs differ from ltr's, and the second round's gradients with them:
/// in a node of 236 documents LightGBM's ranking makes feature 8 the best split (gain 0.16198 against 0.16187 for
/// feature 11, recomputed in Python from its ranking), ltr's makes feature 11 (0.16162).
#[test]
fn equal_leaves_tie_where_lightgbms_differ_by_rounding() {
    let f = load("mq2008_head");
    let ours = train(&f, 2);
    let near = |v: f64| (v + 0.2).abs() < 1e-9;
    let ltr_leaves: Vec<f64> = ours.trees[0]
        .leaf_value
        .iter()
        .copied()
        .filter(|&v| near(v))
        .collect();
    assert_eq!(ltr_leaves.len(), 4, "{ltr_leaves:?}");
    assert!(
        ltr_leaves.iter().all(|&v| v == -0.2),
        "ltr's leaves of G/H = −2 are exactly −0.2: {ltr_leaves:?}"
    );
    let mut theirs: Vec<f64> = f.trees[0]
        .iter()
        .filter_map(|n| n.get("leaf").and_then(Value::as_f64))
        .filter(|&v| near(v))
        .collect();
    theirs.sort_by(f64::total_cmp);
    theirs.dedup();
    assert_eq!(
        theirs.len(),
        4,
        "LightGBM's four leaves differ by rounding: {theirs:?}"
    );
    assert!(
        compare(&f, &ours, 1, 1e-2).is_err(),
        "the second tree is LightGBM's now: update the note above"
    );
}

/// LightGBM's `lambdarank_position_bias` (≥ 4.1: a factor per position added to the scores while the gradients are
/// computed, one Newton step a round) against `debias=position-factors` at LightGBM's settings (no penalty, the
/// learning rate as the factors' rate), on clicks of a position-based user (`make_position_bias.py`): the factors
/// after 1, 3 and 10 rounds, and each of the ten trees (the first is plain LambdaRank's: the factors start at 0).
/// LightGBM logs the factors with 6 significant digits and keeps gradients in float32, and its pair sigmoid comes
/// from a table (the ten-trees test above), so the factors agree to 1e-4 of the largest and leaves to 1e-3.
#[test]
fn position_factors_and_their_trees_are_lightgbms() {
    let mut f = load("position_bias");
    let j = json("position_bias.json");
    let positions: Vec<u32> = j["positions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_u64().unwrap() as u32)
        .collect();
    f.data = f.data.clone().with_positions(positions).unwrap();
    assert_eq!(
        f.params["lambdarank_position_bias_regularization"].as_f64(),
        Some(0.0)
    );
    let theirs: Vec<Vec<f64>> = j["factors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        })
        .collect();
    for rounds in [1, 3, 10] {
        let mut g = settings(&f, rounds);
        g.debias = Debias::PositionFactors {
            rate: g.learning_rate,
            regularization: 0.0,
            unit: PenaltyUnit::Row,
        };
        let run = train_gbdt(&g, &f.data, &FitContext::new(1)).unwrap();
        let Some(PositionBias::Factors(ours)) = run.position_bias else {
            panic!("no factors: {:?}", run.position_bias);
        };
        let want = &theirs[rounds - 1];
        let scale = want.iter().fold(0f64, |m, v| m.max(v.abs()));
        for (k, (o, t)) in ours.iter().zip(want).enumerate() {
            assert!(
                (o - t).abs() <= 1e-4 * scale,
                "round {rounds}, position {k}: ours {o}, LightGBM's {t} (all: {ours:?} against {want:?})"
            );
        }
        eprintln!("position factors after {rounds} rounds: {ours:?}");
        if rounds == 10 {
            for k in 0..10 {
                let worst = compare(&f, &run.forest, k, 1e-3)
                    .unwrap_or_else(|e| panic!("position_bias tree {k}: {e}"));
                eprintln!("position_bias: tree {k} is LightGBM's, leaves within {worst:.1e}");
            }
        }
    }
}
