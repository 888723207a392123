//! Each loss and its gradient against allRank's autograd (committed fixtures, `fixtures/make_allrank_losses.py`)
//! and against finite differences.

use crate::common::{all_losses, loss_of};
use ltr_neural::Loss;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * (1.0 + b.abs())
}

#[test]
fn losses_and_gradients_equal_allranks_on_the_fixtures() {
    let text = include_str!("fixtures/allrank_losses.json");
    let fixture: serde_json::Value = serde_json::from_str(text).unwrap();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() > 150);
    let mut seen = std::collections::BTreeSet::new();
    for (c, case) in cases.iter().enumerate() {
        let name = case["loss"].as_str().unwrap();
        let loss = loss_of(name, &case["params"]);
        let slates = |k: &str| -> Vec<Vec<f64>> {
            case[k]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    s.as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_f64().unwrap())
                        .collect()
                })
                .collect()
        };
        let (scores, mut labels, grads) = (slates("scores"), slates("labels"), slates("grads"));
        if matches!(loss, Loss::Bce) {
            let top = case["params"]["top"].as_f64().unwrap();
            labels.iter_mut().flatten().for_each(|l| *l /= top);
        }
        let mut offsets = vec![0];
        for s in &scores {
            offsets.push(offsets.last().unwrap() + s.len());
        }
        let flat = |v: &[Vec<f64>]| v.concat();
        let ties = vec![0; scores.len()];
        let (value, grad) = loss.batch(&flat(&scores), &flat(&labels), &offsets, &ties);
        // allRank's mean over no pair is NaN (null in the fixture); here it is 0 with a zero gradient.
        let expected = case["value"].as_f64().unwrap_or(0.0);
        assert!(
            close(value, expected, 1e-6),
            "case {c} ({name}, {:?}): loss {value} vs allRank {expected}",
            case["params"]
        );
        for (k, (g, e)) in grad.iter().zip(flat(&grads)).enumerate() {
            assert!(
                close(*g, e, 1e-6),
                "case {c} ({name}, {:?}): d/ds_{k} {g} vs allRank {e}",
                case["params"]
            );
        }
        seen.insert(name.to_string());
    }
    // Every loss allRank implements is covered (mse is not one of allRank's).
    for name in Loss::NAMES {
        assert!(
            seen.contains(*name) || *name == "mse",
            "{name} has no fixture"
        );
    }
}

/// A query's loss against central differences, at scores spread enough that no sort order changes within ±h.
#[test]
fn gradients_equal_finite_differences() {
    let slates: Vec<(Vec<f64>, Vec<f64>)> = vec![
        (
            vec![0.3, -1.2, 2.0, 0.9, -0.4],
            vec![2.0, 0.0, 1.0, 3.0, 0.0],
        ),
        (vec![1.5, 0.2], vec![0.0, 1.0]),
        (
            vec![-0.7, 0.05, 1.1, -2.3, 0.6, 1.9, -1.0, 0.35],
            vec![1.0, 1.0, 0.0, 4.0, 2.0, 0.0, 1.0, 3.0],
        ),
    ];
    for loss in all_losses() {
        for (s, l) in &slates {
            let l: Vec<f64> = match loss {
                Loss::Bce => l.iter().map(|v| v / 4.0).collect(),
                _ => l.clone(),
            };
            let mut g = vec![0.0; s.len()];
            loss.query_loss(s, &l, 7, &mut g);
            let h = 1e-6;
            for k in 0..s.len() {
                let at = |d: f64| {
                    let mut t = s.clone();
                    t[k] += d;
                    let mut scratch = vec![0.0; s.len()];
                    loss.query_loss(&t, &l, 7, &mut scratch).value
                };
                let fd = (at(h) - at(-h)) / (2.0 * h);
                assert!(
                    close(g[k], fd, 1e-5),
                    "{loss:?}, slate {s:?}: d/ds_{k} {} vs {fd}",
                    g[k]
                );
            }
        }
    }
}

#[test]
fn a_batch_is_its_queries_reduced_as_allrank_does() {
    let scores = [0.3, -1.2, 2.0, 1.5, 0.2];
    let labels = [2.0, 0.0, 1.0, 0.0, 1.0];
    let offsets = [0, 3, 5];
    for loss in all_losses() {
        let (value, grad) = loss.batch(&scores, &labels, &offsets, &[1, 2]);
        let mut g0 = vec![0.0; 3];
        let mut g1 = vec![0.0; 2];
        let a = loss.query_loss(&scores[..3], &labels[..3], 1, &mut g0);
        let b = loss.query_loss(&scores[3..], &labels[3..], 2, &mut g1);
        let (expected, scale) = match loss.reduction() {
            ltr_neural::Reduction::Sum => (a.value + b.value, 1.0),
            ltr_neural::Reduction::Mean => (
                (a.value + b.value) / (a.norm + b.norm),
                1.0 / (a.norm + b.norm),
            ),
        };
        assert!(close(value, expected, 1e-14), "{loss:?}");
        for (x, y) in grad.iter().zip(g0.iter().chain(&g1)) {
            assert!(close(*x, y * scale, 1e-14), "{loss:?}");
        }
    }
}

/// A training step reads each query's share of the normaliser from its labels before any score exists
/// (`Loss::query_norm`): it is the `norm` the loss returns, whatever the scores.
#[test]
fn the_normaliser_read_from_labels_is_the_losss() {
    let cases: [&[f64]; 6] = [
        &[0.0, 0.0, 0.0],
        &[1.0],
        &[2.0, 0.0, 1.0, 1.0, 0.0],
        &[0.0, 0.0, 0.0, 0.0, 3.0],
        &[1.0, 1.0, 1.0],
        &[4.0, 3.0, 2.0, 1.0, 0.0, 0.0, 2.0],
    ];
    for loss in all_losses() {
        for labels in cases {
            for shift in [0.0, 0.7, -3.1] {
                let scores: Vec<f64> = (0..labels.len())
                    .map(|i| shift + (i as f64 * 1.3).sin())
                    .collect();
                let mut g = vec![0.0; labels.len()];
                let ql = loss.query_loss(&scores, labels, 7, &mut g);
                assert_eq!(
                    ql.norm.to_bits(),
                    loss.query_norm(labels).to_bits(),
                    "{loss:?} {labels:?}"
                );
            }
        }
    }
}
