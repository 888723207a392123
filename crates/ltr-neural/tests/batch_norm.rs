//! Batch normalisation: PyTorch's `BatchNorm1d` on the committed fixture (training-mode scores, loss and gradient,
//! running statistics, evaluation-mode scores), central differences across chunks, the same model at 1 and 2
//! threads, and the settings that cannot go together.

use crate::common::{fit_at_one_and_two_threads, letor, ndcg10};
use ltr_core::neural::{Activation, BatchNorm, Dense, HiddenLayer, NeuralNet};
use ltr_core::{Model, ParamGuard, Scorer};
use ltr_neural::{
    loss_and_gradient, loss_and_gradient_in_pieces, update_batch_norm_statistics, Loss,
    NeuralParams,
};

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn f32s(v: &serde_json::Value) -> Vec<f32> {
    floats(v).into_iter().map(|x| x as f32).collect()
}

/// `a` within `tol` of `b` relative to the array's largest magnitude.
fn close(what: &str, a: &[f32], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{what}: length");
    let top = b.iter().fold(0f64, |m, v| m.max(v.abs()));
    for (j, (&x, &y)) in a.iter().zip(b).enumerate() {
        assert!(
            (f64::from(x) - y).abs() <= tol * (1.0 + top),
            "{what}[{j}]: {x} vs torch {y}"
        );
    }
}

/// The fixture case's network with its initial parameters (running statistics as PyTorch starts them).
fn fixture_net(case: &serde_json::Value) -> NeuralNet {
    let d = case["n_features"].as_u64().unwrap() as usize;
    let mut width = d;
    let hidden = case["init"]["hidden"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let bias = f32s(&h["bias"]);
            let w = bias.len();
            let mut b = BatchNorm::new(w);
            b.gamma = f32s(&h["gamma"]);
            b.beta = f32s(&h["beta"]);
            let layer = HiddenLayer {
                dense: Dense {
                    inputs: width,
                    outputs: w,
                    weights: f32s(&h["weights"]),
                    bias,
                },
                norm: None,
                batch_norm: Some(b),
            };
            width = w;
            layer
        })
        .collect();
    let o = &case["init"]["output"];
    NeuralNet {
        n_features: d,
        input_norm: None,
        hidden,
        activation: Activation::parse(case["activation"].as_str().unwrap()).unwrap(),
        output: Dense {
            inputs: width,
            outputs: 1,
            weights: f32s(&o["weights"]),
            bias: f32s(&o["bias"]),
        },
        encoder: None,
    }
}

fn offsets_of(lengths: &serde_json::Value) -> Vec<usize> {
    let mut offsets = vec![0];
    for n in floats(lengths) {
        offsets.push(offsets.last().unwrap() + n as usize);
    }
    offsets
}

/// `fixtures/make_torch_batchnorm.py` runs Linear → BatchNorm1d → activation layers in float64 on padded slates
/// (the padding masked out of the statistics): ltr's f32 network on the unpadded batch gives its training-mode
/// scores, loss and every parameter's gradient, and with PyTorch's running statistics its evaluation-mode scores.
#[test]
fn batch_norm_equals_torch_on_the_fixture() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/torch_batchnorm.json"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        println!("SKIP: {path} is absent (make_torch_batchnorm.py writes it)");
        return;
    };
    let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let mut net = fixture_net(case);
        assert_eq!(net.inconsistency(), None, "{name}");
        let b1 = &case["batch1"];
        let (x, labels, offsets) = (
            f32s(&b1["x"]),
            floats(&b1["labels"]),
            offsets_of(&b1["lengths"]),
        );
        // The batch in one piece, and each query a piece (the statistics and backward sums then summed over
        // the pieces): both are torch's whole batch.
        for piece_rows in [usize::MAX, 1] {
            let name = format!("{name}, pieces of {piece_rows}");
            let name = name.as_str();
            let (value, scores, mut grad) = loss_and_gradient_in_pieces(
                &net,
                &x,
                &labels,
                &offsets,
                Loss::parse("mse").unwrap(),
                piece_rows,
            );
            close(
                &format!("{name}: scores"),
                &scores,
                &floats(&case["scores"]),
                2e-5,
            );
            let want = case["loss"].as_f64().unwrap();
            assert!(
                (value - want).abs() < 2e-5 * (1.0 + want),
                "{name}: loss {value} vs {want}"
            );
            for (l, (g, w)) in grad
                .hidden
                .iter_mut()
                .zip(case["gradient"]["hidden"].as_array().unwrap())
                .enumerate()
            {
                close(
                    &format!("{name}: dW{l}"),
                    &g.dense.weights,
                    &floats(&w["weights"]),
                    2e-5,
                );
                close(
                    &format!("{name}: db{l}"),
                    &g.dense.bias,
                    &floats(&w["bias"]),
                    2e-5,
                );
                let bn = g.batch_norm.as_ref().unwrap();
                close(
                    &format!("{name}: dgamma{l}"),
                    &bn.gamma,
                    &floats(&w["gamma"]),
                    2e-5,
                );
                close(
                    &format!("{name}: dbeta{l}"),
                    &bn.beta,
                    &floats(&w["beta"]),
                    2e-5,
                );
            }
            let go = &case["gradient"]["output"];
            close(
                &format!("{name}: dWout"),
                &grad.output.weights,
                &floats(&go["weights"]),
                2e-5,
            );
            close(
                &format!("{name}: dbout"),
                &grad.output.bias,
                &floats(&go["bias"]),
                2e-5,
            );
        }
        // Running statistics after one batch and after two, as PyTorch moves them.
        let b2 = &case["batch2"];
        for (batch, key) in [(b1, "running_after_batch1"), (b2, "running_after_batch2")] {
            update_batch_norm_statistics(
                &mut net,
                &f32s(&batch["x"]),
                &offsets_of(&batch["lengths"]),
            );
            for (l, (h, r)) in net
                .hidden
                .iter()
                .zip(case[key].as_array().unwrap())
                .enumerate()
            {
                let b = h.batch_norm.as_ref().unwrap();
                close(
                    &format!("{name}: {key} mean{l}"),
                    &b.running_mean,
                    &floats(&r["mean"]),
                    1e-5,
                );
                close(
                    &format!("{name}: {key} var{l}"),
                    &b.running_var,
                    &floats(&r["var"]),
                    1e-5,
                );
            }
        }
        // Inference: PyTorch's running statistics after two batches, evaluation-mode scores.
        for (h, r) in net
            .hidden
            .iter_mut()
            .zip(case["running_after_batch2"].as_array().unwrap())
        {
            let b = h.batch_norm.as_mut().unwrap();
            b.running_mean = f32s(&r["mean"]);
            b.running_var = f32s(&r["var"]);
        }
        let ex = f32s(&case["eval_x"]);
        let mut got = vec![0f32; ex.len() / net.n_features];
        net.score_matrix(&ex, &mut got);
        close(
            &format!("{name}: eval scores"),
            &got,
            &floats(&case["eval_scores"]),
            2e-5,
        );
    }
}

/// A batch-normalised network with every hidden layer normalised, parameters from a fixed stream.
fn bn_net(seed: u64) -> NeuralNet {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let mut dense = |i: usize, o: usize| Dense {
        inputs: i,
        outputs: o,
        weights: (0..i * o).map(|_| next() * 1.4).collect(),
        bias: (0..o).map(|_| next() * 0.4).collect(),
    };
    let (l1, l2, out) = (dense(3, 5), dense(5, 4), dense(4, 1));
    let bn = |w: usize, seed: f32| {
        let mut b = BatchNorm::new(w);
        b.gamma = (0..w)
            .map(|j| 1.0 + 0.3 * ((j as f32 + seed).sin()))
            .collect();
        b.beta = (0..w)
            .map(|j| 0.2 * ((j as f32 * 1.7 + seed).cos()))
            .collect();
        b
    };
    NeuralNet {
        n_features: 3,
        input_norm: None,
        hidden: vec![
            HiddenLayer {
                dense: l1,
                norm: None,
                batch_norm: Some(bn(5, 0.3)),
            },
            HiddenLayer {
                dense: l2,
                norm: None,
                batch_norm: Some(bn(4, 1.1)),
            },
        ],
        activation: Activation::Tanh,
        output: out,
        encoder: None,
    }
}

/// Gradients against central differences of the loss on a batch of 300 documents: three chunks, so the batch
/// statistics and their backward sums cross chunk boundaries.
#[test]
fn the_batch_norm_gradient_equals_finite_differences() {
    let net = bn_net(3);
    let (mut x, mut labels, mut offsets) = (Vec::new(), Vec::new(), vec![0]);
    for (q, n) in [120usize, 80, 1, 99].into_iter().enumerate() {
        for i in 0..n {
            for j in 0..3 {
                x.push((((q * 7 + i * 3 + j * 5) % 11) as f32 - 5.0) / 4.0 + 0.3 * j as f32);
            }
            labels.push(((q + i * 2) % 3) as f64);
        }
        offsets.push(labels.len());
    }
    let loss = Loss::parse("listnet").unwrap();
    let (_, _, grad) = loss_and_gradient(&net, &x, &labels, &offsets, loss);
    type Pick = fn(&mut NeuralNet) -> &mut Vec<f32>;
    let arrays: [(&str, Pick); 8] = [
        ("W1", |n| &mut n.hidden[0].dense.weights),
        ("b1", |n| &mut n.hidden[0].dense.bias),
        ("gamma1", |n| {
            &mut n.hidden[0].batch_norm.as_mut().unwrap().gamma
        }),
        ("beta1", |n| {
            &mut n.hidden[0].batch_norm.as_mut().unwrap().beta
        }),
        ("W2", |n| &mut n.hidden[1].dense.weights),
        ("gamma2", |n| {
            &mut n.hidden[1].batch_norm.as_mut().unwrap().gamma
        }),
        ("beta2", |n| {
            &mut n.hidden[1].batch_norm.as_mut().unwrap().beta
        }),
        ("Wout", |n| &mut n.output.weights),
    ];
    for (what, pick) in arrays {
        let g = pick(&mut grad.clone()).clone();
        for j in [0, g.len() / 2, g.len() - 1] {
            let h = 3e-3f32;
            let at = |delta: f32| {
                let mut n = net.clone();
                pick(&mut n)[j] += delta;
                loss_and_gradient(&n, &x, &labels, &offsets, loss).0
            };
            let fd = (at(h) - at(-h)) / (2.0 * f64::from(h));
            let a = f64::from(g[j]);
            assert!(
                (a - fd).abs() <= 2e-3 * (1.0 + fd.abs()),
                "d{what}[{j}] = {a}, finite difference {fd}"
            );
        }
    }
    // A bias before batch norm is cancelled by the mean: its gradient is 0 (to rounding).
    assert!(grad.hidden[0].dense.bias.iter().all(|g| g.abs() < 1e-5));
}

/// Batch statistics are summed in a fixed order: 1 and 2 threads give the same model, running statistics
/// included; they move away from (0, 1); validation scores with them; the model file keeps them.
#[test]
fn batch_norm_trains_to_the_same_bits_at_one_and_two_threads() {
    let train = letor(40, 5);
    let vali = letor(10, 6);
    let p = NeuralParams::default()
        .sizes(vec![24, 12])
        .batch_norm(true)
        .dropout(0.1)
        .slate_length(9)
        .batch_size(7)
        .epochs(4)
        .check()
        .unwrap();
    let a = fit_at_one_and_two_threads(&p, &train, &vali, "batch norm");
    let Model::Neural(n) = &a.model else {
        panic!("neural")
    };
    let bn = n.hidden[0].batch_norm.as_ref().expect("batch norm");
    assert!(bn.running_mean.iter().any(|&m| m != 0.0));
    assert!(bn.running_var.iter().any(|&v| v != 1.0));
    assert_eq!(n.inconsistency(), None);
    // The validation measure kept is the model's score on validation (inference mode: running statistics).
    let kept = ndcg10(&vali, &a.model.score_dataset(&vali)).unwrap();
    assert_eq!(Some(kept), a.report.validation);
    let file = ltr_core::ModelFile::new(
        "neural",
        Default::default(),
        Default::default(),
        a.model.clone(),
    );
    let dir = tempfile::tempdir().unwrap();
    for name in ["m.postcard", "m.json"] {
        let path = dir.path().join(name);
        file.save(&path).unwrap();
        assert_eq!(
            ltr_core::ModelFile::load(&path).unwrap().model,
            a.model,
            "{name}"
        );
    }
}

#[test]
fn layer_and_batch_norm_together_are_refused() {
    let e = NeuralParams::default()
        .layer_norm(true)
        .batch_norm(true)
        .check()
        .unwrap_err()
        .to_string();
    assert!(e.contains("not both"), "{e}");
    let mut n = bn_net(1);
    n.hidden[0].norm = Some(ltr_core::neural::LayerNorm::new(5));
    assert!(n.inconsistency().unwrap().contains("both"));
    let mut n = bn_net(1);
    n.hidden[1].batch_norm.as_mut().unwrap().running_var[0] = -1.0;
    assert!(n.inconsistency().unwrap().contains("negative"));
    let mut n = bn_net(1);
    n.hidden[1].batch_norm.as_mut().unwrap().running_mean.pop();
    assert!(n.inconsistency().unwrap().contains("wrong width"));
}
