"""A neural model exported to ONNX (`ltr export --to onnx`) and scored by onnxruntime equals `ltr predict` to 1e-5 of
max(1, |score|): both run the layers in float32, in different summation orders; the stored preprocessing (z-score,
DASALC's signed log1p) travels with it. Skipped without onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import read_letor, run

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize(
    "params",
    [
        ["sizes=32/16", "epochs=3"],
        ["sizes=24", "epochs=2", "layer-norm=true", "input-norm=true", "activation=tanh", "loss=listnet"],
        ["sizes=none", "epochs=2", "loss=ranknet"],
        ["sizes=24/12", "epochs=3", "batch-norm=true", "dropout=0.1", "batch-size=4"],
        ["sizes=16", "epochs=2", "--log1p", "1-20"],
    ],
)
def test_neural_export_scores_as_ltr_predict(ltr_bin, web_dir, tmp_path, params):
    model = tmp_path / "m.model"
    args = ["train", "--train", web_dir / "train.txt", "--algo", "neural", "--normalize", "zscore", "--model", model]
    if "--log1p" in params:
        args += params[-2:]
        params = params[:-2]
    for p in params:
        args += ["--param", p]
    run(ltr_bin, *args)
    onnx = tmp_path / "m.onnx"
    run(ltr_bin, "export", "--model", model, "--to", "onnx", "--out", onnx)
    sess = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    (inp,) = sess.get_inputs()
    X, _, _ = read_letor(web_dir / "test.txt", inp.shape[1])
    (got,) = sess.run(["scores"], {"features": X.astype(np.float32)})
    got = got[:, 0].astype(np.float64)
    want = np.array([float(s) for s in run(ltr_bin, "predict", "--model", model, "--data", web_dir / "test.txt").split()])
    assert got.shape == want.shape
    bad = np.abs(got - want) > 1e-5 * np.maximum(1.0, np.abs(want))
    assert not bad.any(), f"{params}: {bad.sum()} scores differ: {got[bad][:3]} vs {want[bad][:3]}"


def test_attention_export_scores_as_ltr_predict_one_query_per_call(ltr_bin, web_dir, tmp_path):
    """The self-attention scorer: the graph's rows are one query's documents, so each query is one call."""
    model = tmp_path / "m.model"
    params = ["scorer=attention", "sizes=16", "blocks=2", "heads=2", "d-ff=12", "epochs=2", "attention-dropout=0.1"]
    args = ["train", "--train", web_dir / "train.txt", "--algo", "neural", "--normalize", "zscore", "--model", model]
    for p in params:
        args += ["--param", p]
    run(ltr_bin, *args)
    onnx = tmp_path / "m.onnx"
    run(ltr_bin, "export", "--model", model, "--to", "onnx", "--out", onnx)
    sess = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    (inp,) = sess.get_inputs()
    X, _, qids = read_letor(web_dir / "test.txt", inp.shape[1])
    want = np.array([float(s) for s in run(ltr_bin, "predict", "--model", model, "--data", web_dir / "test.txt").split()])
    got = np.empty_like(want)
    starts = [0] + [i for i in range(1, len(qids)) if qids[i] != qids[i - 1]] + [len(qids)]
    for a, b in zip(starts[:-1], starts[1:]):
        (s,) = sess.run(["scores"], {"features": X[a:b].astype(np.float32)})
        got[a:b] = s[:, 0]
    bad = np.abs(got - want) > 1e-5 * np.maximum(1.0, np.abs(want))
    assert not bad.any(), f"{bad.sum()} scores differ: {got[bad][:3]} vs {want[bad][:3]}"
    # The whole file in one call is not what the model computes (documents of other queries would be attended to).
    (all_at_once,) = sess.run(["scores"], {"features": X.astype(np.float32)})
    assert np.abs(all_at_once[:, 0] - want).max() > 1e-4
