//! The self-attention scorer: allRank's model code on the committed fixture, finite differences, permutation
//! equivariance, training and scoring agreeing, and the same model at 1 and 2 threads.

use crate::common::{fit_at_one_and_two_threads, letor};
use ltr_core::neural::{
    Activation, Dense, Encoder, EncoderBlock, HiddenLayer, LayerNorm, NeuralNet,
};
use ltr_core::{Model, ParamGuard, Scorer};
use ltr_data::{Dataset, FeatureMatrix};
use ltr_neural::step::loss_and_gradient_with_dropout;
use ltr_neural::{loss_and_gradient, Loss, NeuralParams};

/// A network of zeros: `d` features, hidden `sizes`, an encoder of `blocks` blocks.
fn shape(
    d: usize,
    sizes: &[usize],
    act: Activation,
    input_norm: bool,
    blocks: usize,
    d_ff: usize,
    heads: usize,
) -> NeuralNet {
    let mut width = d;
    let hidden = sizes
        .iter()
        .map(|&w| {
            let h = HiddenLayer {
                dense: Dense::zeros(width, w),
                norm: None,
                batch_norm: None,
            };
            width = w;
            h
        })
        .collect();
    let w = width;
    NeuralNet {
        n_features: d,
        input_norm: input_norm.then(|| LayerNorm::new(d)),
        hidden,
        activation: act,
        output: Dense::zeros(w, 1),
        encoder: Some(Encoder {
            heads,
            blocks: (0..blocks)
                .map(|_| EncoderBlock {
                    attn_norm: LayerNorm::new(w),
                    query: Dense::zeros(w, w),
                    key: Dense::zeros(w, w),
                    value: Dense::zeros(w, w),
                    out: Dense::zeros(w, w),
                    ff_norm: LayerNorm::new(w),
                    ff_in: Dense::zeros(w, d_ff),
                    ff_out: Dense::zeros(d_ff, w),
                })
                .collect(),
            norm: LayerNorm::new(w),
        }),
    }
}

/// Every parameter array by the fixture's name for it.
fn named(net: &mut NeuralNet) -> Vec<(String, &mut Vec<f32>)> {
    let mut out: Vec<(String, &mut Vec<f32>)> = Vec::new();
    if let Some(n) = net.input_norm.as_mut() {
        out.push(("input_norm.gamma".into(), &mut n.gamma));
        out.push(("input_norm.beta".into(), &mut n.beta));
    }
    for (l, h) in net.hidden.iter_mut().enumerate() {
        out.push((format!("hidden.{l}.weights"), &mut h.dense.weights));
        out.push((format!("hidden.{l}.bias"), &mut h.dense.bias));
    }
    out.push(("output.weights".into(), &mut net.output.weights));
    out.push(("output.bias".into(), &mut net.output.bias));
    let e = net.encoder.as_mut().unwrap();
    for (l, b) in e.blocks.iter_mut().enumerate() {
        for (what, n) in [("attn_norm", &mut b.attn_norm), ("ff_norm", &mut b.ff_norm)] {
            out.push((format!("encoder.{l}.{what}.gamma"), &mut n.gamma));
            out.push((format!("encoder.{l}.{what}.beta"), &mut n.beta));
        }
        for (what, d) in [
            ("query", &mut b.query),
            ("key", &mut b.key),
            ("value", &mut b.value),
            ("out", &mut b.out),
            ("ff_in", &mut b.ff_in),
            ("ff_out", &mut b.ff_out),
        ] {
            out.push((format!("encoder.{l}.{what}.weights"), &mut d.weights));
            out.push((format!("encoder.{l}.{what}.bias"), &mut d.bias));
        }
    }
    out.push(("encoder.norm.gamma".into(), &mut e.norm.gamma));
    out.push(("encoder.norm.beta".into(), &mut e.norm.beta));
    out
}

fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// allRank's `make_model` (FCModel, Transformer encoder, OutputLayer) run by `fixtures/make_allrank_attention.py`
/// in float64 on padded, masked slates: ltr's f32 network on the unpadded queries gives its scores, its
/// NDCG-Loss2++ and the gradient of every parameter (to f32 accuracy: 2e-5 relative to the array's largest).
#[test]
fn the_encoder_equals_allranks_model_code_on_the_fixture() {
    let text = include_str!("fixtures/allrank_attention.json");
    let fixture: serde_json::Value = serde_json::from_str(text).unwrap();
    for case in fixture["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let u = |k: &str| case[k].as_u64().unwrap() as usize;
        let sizes: Vec<usize> = floats(&case["sizes"]).iter().map(|&v| v as usize).collect();
        let act = Activation::parse(case["activation"].as_str().unwrap()).unwrap();
        let mut net = shape(
            u("n_features"),
            &sizes,
            act,
            case["input_norm"].as_bool().unwrap(),
            u("blocks"),
            u("d_ff"),
            u("heads"),
        );
        let mut seen = 0;
        for (k, p) in named(&mut net) {
            let v = floats(&case["params"][&k]);
            assert_eq!(v.len(), p.len(), "{name}: {k}");
            *p = v.iter().map(|&x| x as f32).collect();
            seen += 1;
        }
        assert_eq!(
            seen,
            case["params"].as_object().unwrap().len(),
            "{name}: every parameter"
        );
        assert_eq!(net.inconsistency(), None);
        let x: Vec<f32> = case["x"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(floats)
            .map(|v| v as f32)
            .collect();
        let labels: Vec<f64> = case["labels"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(floats)
            .collect();
        let mut offsets = vec![0];
        for n in floats(&case["lengths"]) {
            offsets.push(offsets.last().unwrap() + n as usize);
        }
        let loss = Loss::parse("ndcgloss2pp").unwrap();
        let (value, scores, mut grad) = loss_and_gradient(&net, &x, &labels, &offsets, loss);
        let want: Vec<f64> = case["scores"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(floats)
            .collect();
        for (i, (&s, &w)) in scores.iter().zip(&want).enumerate() {
            assert!(
                (f64::from(s) - w).abs() < 2e-5 * (1.0 + w.abs()),
                "{name}: score {i}: {s} vs {w}"
            );
        }
        let want_loss = case["loss"].as_f64().unwrap();
        assert!(
            (value - want_loss).abs() < 2e-5 * (1.0 + want_loss.abs()),
            "{name}: loss {value} vs {want_loss}"
        );
        for (k, g) in named(&mut grad) {
            let w = floats(&case["grads"][&k]);
            let top = w.iter().fold(0f64, |m, v| m.max(v.abs()));
            for (j, (&a, &b)) in g.iter().zip(&w).enumerate() {
                assert!(
                    (f64::from(a) - b).abs() <= 2e-5 * (1.0 + top),
                    "{name}: d{k}[{j}] = {a}, allRank {b}"
                );
            }
        }
    }
}

/// A small network with every part (input norm, a tanh layer, two blocks of two heads).
fn small_net(seed: u64) -> NeuralNet {
    let mut net = shape(3, &[4], Activation::Tanh, true, 2, 5, 2);
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for (k, p) in named(&mut net) {
        let base = if k.ends_with("gamma") { 1.0 } else { 0.0 };
        for v in p.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *v = base + ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 1.2;
        }
    }
    net
}

fn batch() -> (Vec<f32>, Vec<f64>, Vec<usize>) {
    batch_of(&[5, 3, 1, 4])
}

fn batch_of(lengths: &[usize]) -> (Vec<f32>, Vec<f64>, Vec<usize>) {
    let mut x = Vec::new();
    let mut labels = Vec::new();
    let mut offsets = vec![0];
    for (q, &n) in lengths.iter().enumerate() {
        for i in 0..n {
            for j in 0..3 {
                x.push((((q * 7 + i * 3 + j * 5) % 11) as f32 - 5.0) / 4.0);
            }
            labels.push(((q + i * 2) % 3) as f64);
        }
        offsets.push(labels.len());
    }
    (x, labels, offsets)
}

/// `grad` (the backward pass's gradient of `net`) against central differences of `run`'s loss at three entries of
/// every parameter array; with `rank_sensitive`, a difference across a change of the ranking is skipped (LambdaLoss
/// jumps there: no derivative; ListNet does not). Returns the entries checked, skipped, and checked with a nonzero
/// gradient.
fn against_finite_differences(
    net: &NeuralNet,
    mut grad: NeuralNet,
    run: impl Fn(&NeuralNet) -> (f64, Vec<f32>),
    what: &str,
    rank_sensitive: bool,
) -> (usize, usize, usize) {
    let names: Vec<(String, usize)> = named(&mut net.clone())
        .into_iter()
        .map(|(k, p)| (k, p.len()))
        .collect();
    let grads: Vec<Vec<f32>> = named(&mut grad)
        .into_iter()
        .map(|(_, g)| g.clone())
        .collect();
    let (mut checked, mut skipped, mut nonzero) = (0, 0, 0);
    for ((k, len), g) in names.iter().zip(&grads) {
        for j in [0, len / 2, len - 1] {
            let h = 3e-3f32;
            let at = |delta: f32| {
                let mut n = net.clone();
                named(&mut n)
                    .into_iter()
                    .find(|(name, _)| name == k)
                    .unwrap()
                    .1[j] += delta;
                let (v, s) = run(&n);
                let mut order: Vec<usize> = (0..s.len()).collect();
                order.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
                (v, order)
            };
            let ((up, o_up), (down, o_down)) = (at(h), at(-h));
            if rank_sensitive && o_up != o_down {
                skipped += 1;
                continue;
            }
            checked += 1;
            let fd = (up - down) / (2.0 * f64::from(h));
            let a = f64::from(g[j]);
            nonzero += usize::from(a != 0.0);
            assert!(
                (a - fd).abs() <= 2e-3 * (1.0 + fd.abs()),
                "{what}: d{k}[{j}] = {a}, finite difference {fd}"
            );
        }
    }
    (checked, skipped, nonzero)
}

/// The hand-written backward pass against central differences of the loss, for every parameter array.
#[test]
fn the_gradient_equals_finite_differences() {
    let net = small_net(7);
    let (x, labels, offsets) = batch();
    let (mut checked, mut skipped) = (0, 0);
    for loss in ["listnet", "ndcgloss2pp"] {
        let loss = Loss::parse(loss).unwrap();
        let run = |n: &NeuralNet| {
            let (v, s, _) = loss_and_gradient(n, &x, &labels, &offsets, loss);
            (v, s)
        };
        let (_, _, grad) = loss_and_gradient(&net, &x, &labels, &offsets, loss);
        let (c, s, _) = against_finite_differences(&net, grad, run, &format!("{loss:?}"), true);
        checked += c;
        skipped += s;
    }
    assert!(
        checked >= 8 * skipped.max(1),
        "{checked} checked, {skipped} skipped"
    );
}

/// The backward pass through dropout's masks (the encoder's kept a bit an entry and its dropped values rebuilt
/// from them): with the masks fixed by one seed, against central differences of the loss. The batch's first query
/// is longer than `KEEP_WEIGHTS_UP_TO` (64), so its attention weights are recomputed in the backward pass, the
/// others' kept: a recomputed head, or a mask, out of place fails here.
#[test]
fn the_gradient_through_dropout_equals_finite_differences() {
    let net = small_net(11);
    let (x, labels, offsets) = batch_of(&[70, 5, 3, 1, 4]);
    let loss = Loss::parse("listnet").unwrap();
    let run = |n: &NeuralNet| {
        let (v, s, _) = loss_and_gradient_with_dropout(n, &x, &labels, &offsets, loss, 0.2, 0.3, 5);
        (v, s)
    };
    // The masks drop something: the loss differs from the one without dropout.
    let (plain, _, _) = loss_and_gradient(&net, &x, &labels, &offsets, loss);
    assert_ne!(run(&net).0, plain);
    let (_, _, grad) =
        loss_and_gradient_with_dropout(&net, &x, &labels, &offsets, loss, 0.2, 0.3, 5);
    let (checked, skipped, nonzero) = against_finite_differences(&net, grad, run, "dropout", false);
    assert!(
        skipped == 0 && nonzero * 3 >= checked * 2,
        "{checked} checked, {skipped} skipped, {nonzero} nonzero"
    );
}

/// No positional encoding: permuting a query's documents permutes its scores (to rounding: the attention's sums
/// run in the new order).
#[test]
fn scores_are_permutation_equivariant() {
    let net = small_net(3);
    let (x, _, offsets) = batch();
    let q = &x[0..offsets[1] * 3];
    let mut s = vec![0f32; offsets[1]];
    net.score_matrix(q, &mut s);
    let perm = [3usize, 0, 4, 1, 2];
    let xp: Vec<f32> = perm
        .iter()
        .flat_map(|&i| q[i * 3..i * 3 + 3].to_vec())
        .collect();
    let mut sp = vec![0f32; 5];
    net.score_matrix(&xp, &mut sp);
    for (k, &i) in perm.iter().enumerate() {
        assert!((sp[k] - s[i]).abs() < 1e-5, "{} vs {}", sp[k], s[i]);
    }
    // And a document's score depends on the others of its query (that is the encoder's point).
    let mut s3 = vec![0f32; 3];
    net.score_matrix(&q[..9], &mut s3);
    assert!((s3[0] - s[0]).abs() > 1e-4, "context changes the score");
}

/// Training's forward pass (without dropout) is the scorer's, bit for bit.
#[test]
fn training_scores_are_the_predicted_scores() {
    let net = small_net(5);
    let (x, labels, offsets) = batch();
    let (_, scores, _) =
        loss_and_gradient(&net, &x, &labels, &offsets, Loss::parse("listnet").unwrap());
    let n = labels.len();
    let data = Dataset::new(
        FeatureMatrix::Dense(ndarray::Array2::from_shape_vec((n, 3), x).unwrap()),
        labels.iter().map(|&l| l as f32).collect(),
        offsets.clone(),
        (0..offsets.len() - 1).map(|q| q.to_string()).collect(),
    )
    .unwrap();
    let predicted = Model::Neural(net).score_dataset(&data);
    for (a, b) in scores.iter().zip(&predicted) {
        assert_eq!(f64::from(*a).to_bits(), b.to_bits());
    }
}

/// Encoder dropout and sampled slates are seeded: 1 and 2 threads give the same model bit for bit; the model file
/// keeps it.
#[test]
fn the_encoder_trains_to_the_same_bits_at_one_and_two_threads() {
    let train = letor(24, 5);
    let vali = letor(8, 6);
    let p = NeuralParams::default()
        .sizes(vec![8])
        .activation(Activation::Identity)
        .blocks(2)
        .heads(2)
        .d_ff(12)
        .encoder_dropout(0.3)
        .slate_length(9)
        .batch_size(5)
        .epochs(3)
        .check()
        .unwrap();
    let a = fit_at_one_and_two_threads(&p, &train, &vali, "attention");
    let Model::Neural(n) = &a.model else {
        panic!("neural")
    };
    let e = n.encoder.as_ref().expect("an encoder");
    assert_eq!(
        (e.blocks.len(), e.heads, e.d_ff(), e.width()),
        (2, 2, 12, 8)
    );
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
        let back = ltr_core::ModelFile::load(&path).unwrap();
        assert_eq!(back.model, a.model, "{name}");
    }
    // Heads that do not divide the width are refused before training.
    let e = NeuralParams::default()
        .sizes(vec![6])
        .blocks(1)
        .heads(4)
        .check()
        .unwrap_err()
        .to_string();
    assert!(e.contains("do not divide"), "{e}");
}
