"""The neural rankers' classes: ``MLPRanker`` and ``AttentionRanker`` (one per scorer, generated from the registry)
train the model ``ltr train --algo neural --param scorer=…`` trains, bit for bit; each takes only the parameters of
its scorer; a grid is chosen on ``eval_set`` and ``best_params_`` gives it back typed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ltrkit
from conftest import run


def load(d, name):
    return ltrkit.load_svmlight(d / f"{name}.txt")


def test_scorer_classes_take_their_own_parameters():
    mlp = ltrkit.MLPRanker().get_params()
    att = ltrkit.AttentionRanker().get_params()
    assert "blocks" not in mlp and "heads" not in mlp and "scorer" not in mlp
    assert {"blocks", "heads", "d_ff", "attention_dropout", "batch_norm"} <= set(att)
    assert "batch_norm" in mlp and "layer_norm" in mlp
    assert issubclass(ltrkit.AttentionRanker, ltrkit.NeuralRanker)
    with pytest.raises(ValueError, match="no parameter 'heads'"):
        ltrkit.MLPRanker().set_params(heads=2)


def test_attention_ranker_is_the_cli_model(ltr_bin, letor_dir, tmp_path):
    X, y, q = load(letor_dir, "train")
    Xv, yv, qv = load(letor_dir, "vali")
    Xt, _, qt = load(letor_dir, "test")
    r = ltrkit.AttentionRanker(sizes="8", blocks=1, heads=2, d_ff=8, epochs=2, seed=4)
    r.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    m = tmp_path / "cli.json"
    run(ltr_bin, "train", "--train", letor_dir / "train.txt", "--validate", letor_dir / "vali.txt", "--algo",
        "neural", "--seed", "4", "--param", "scorer=attention", "--param", "sizes=8", "--param", "blocks=1",
        "--param", "heads=2", "--param", "d-ff=8", "--param", "epochs=2", "--model", m)
    ours = json.loads(bytes(r.model_.to_bytes(json=True)))
    cli = json.loads(m.read_text())
    assert ours["model"] == cli["model"]
    scores = run(ltr_bin, "predict", "--model", m, "--data", letor_dir / "test.txt")
    np.testing.assert_array_equal(r.predict(Xt, qid=qt), np.array([float(s) for s in scores.split()]))
    assert r.best_params_["scorer"] == "attention" and r.best_params_["heads"] == 2


def test_mlp_ranker_grid_on_eval_set_with_batch_norm(letor_dir):
    X, y, q = load(letor_dir, "train")
    Xv, yv, qv = load(letor_dir, "vali")
    r = ltrkit.MLPRanker(sizes="16/8", batch_norm=True, loss=["listnet", "ranknet"], epochs=2, seed=2)
    r.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    best = r.best_params_
    assert best["loss"] in ("listnet", "ranknet") and best["batch-norm"] is True
    assert best.get("scorer", "mlp") == "mlp"
    hidden = json.loads(bytes(r.model_.to_bytes(json=True)))["model"]["Neural"]["hidden"]
    assert all(h["batch_norm"] is not None and h["norm"] is None for h in hidden)
    # The kept setting trained alone is the same model.
    again = ltrkit.MLPRanker(sizes="16/8", batch_norm=True, loss=best["loss"], epochs=2, seed=2)
    again.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    np.testing.assert_array_equal(again.predict(Xv, qid=qv), r.predict(Xv, qid=qv))


def test_bfloat16_prediction_is_the_cli_one(ltr_bin, letor_dir, tmp_path):
    X, y, q = load(letor_dir, "train")
    Xt, _, qt = load(letor_dir, "test")
    r = ltrkit.MLPRanker(sizes="70/16", epochs=2, seed=3).fit(X, y, qid=q)
    m = tmp_path / "mlp.json"
    r.save(m)
    cli = run(ltr_bin, "predict", "--model", m, "--data", letor_dir / "test.txt", "--precision", "bf16")
    fast = r.predict(Xt, qid=qt, precision="bf16")
    np.testing.assert_array_equal(fast, np.array([float(s) for s in cli.split()]))
    full = r.predict(Xt, qid=qt)
    assert not np.array_equal(fast, full)
    assert np.max(np.abs(fast - full)) < 0.02 * np.mean(np.abs(full))
    with pytest.raises(ValueError, match="precision must be 'full', 'bf16' or 'int8'"):
        r.predict(Xt, qid=qt, precision="half")
    svm = ltrkit.RankSVM().fit(X, y, qid=q)
    with pytest.raises(ValueError, match="applies to neural models"):
        svm.predict(Xt, qid=qt, precision="bf16")
    with pytest.raises(ValueError, match="`int8` applies to neural models"):
        svm.predict(Xt, qid=qt, precision="int8")


def test_int8_prediction_is_the_cli_one(ltr_bin, letor_dir, tmp_path):
    X, y, q = load(letor_dir, "train")
    Xt, _, qt = load(letor_dir, "test")
    r = ltrkit.MLPRanker(sizes="70/16", epochs=2, seed=3).fit(X, y, qid=q)
    m = tmp_path / "mlp.json"
    r.save(m)
    cli = run(ltr_bin, "predict", "--model", m, "--data", letor_dir / "test.txt", "--precision", "int8")
    fast = r.predict(Xt, qid=qt, precision="int8")
    np.testing.assert_array_equal(fast, np.array([float(s) for s in cli.split()]))
    full = r.predict(Xt, qid=qt)
    assert not np.array_equal(fast, full)
    assert np.max(np.abs(fast - full)) < 0.05 * np.mean(np.abs(full))


def test_mlp_ranker_exports_to_vespa_with_its_onnx_graph(letor_dir, tmp_path):
    """``export("vespa", path)`` writes the rank profile and, as ``path + ".onnx"``, the ONNX graph in binary: the
    bytes ``export("onnx")`` returns."""
    X, y, q = load(letor_dir, "train")
    r = ltrkit.MLPRanker(sizes="8", epochs=1, seed=3).fit(X, y, qid=q)
    profile = r.export("vespa", tmp_path / "mlp.profile")
    assert "onnx-model ltr_model {" in profile and "sum(onnx(ltr_model).scores)" in profile
    assert (tmp_path / "mlp.profile").read_text() == profile
    assert (tmp_path / "mlp.profile.onnx").read_bytes() == r.export("onnx")


def test_bfloat16_in_portable_code_warns(letor_dir, tmp_path):
    """Without the AVX-512 BF16 tiles (here: ``LTR_SIMD=avx2+fma``, read once per process, so in a child) the
    bfloat16 products run in portable code, about 100 times slower: ``predict`` says so with a RuntimeWarning, and
    the scores are the tiles' ones."""
    import os
    import subprocess
    import sys

    X, y, q = load(letor_dir, "train")
    Xt, _, qt = load(letor_dir, "test")
    r = ltrkit.MLPRanker(sizes="16", epochs=1, seed=3).fit(X, y, qid=q)
    r.save(tmp_path / "mlp.json")
    np.save(tmp_path / "here.npy", r.predict(Xt, qid=qt, precision="bf16"))
    child = f"""
import warnings, numpy as np, ltrkit
r = ltrkit.load_model({str(tmp_path / "mlp.json")!r})
Xt, _, qt = ltrkit.load_svmlight({str(letor_dir / "test.txt")!r})
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    fast = r.predict(Xt, qid=qt, precision="bf16")
assert any(issubclass(w.category, RuntimeWarning) and "portable code" in str(w.message) for w in caught), caught
np.testing.assert_array_equal(fast, np.load({str(tmp_path / "here.npy")!r}))
"""
    env = dict(os.environ, LTR_SIMD="avx2+fma")
    out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
