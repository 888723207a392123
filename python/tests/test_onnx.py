"""ONNX exports (`ltr export --to onnx`, `Ranker.export("onnx")`) scored by onnxruntime must equal `ltr predict` and
`Ranker.predict` to 1e-6 relative; a NaN must go where the model sends it. onnxruntime is a test-only dependency:
the tests are skipped when it is not installed."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from conftest import read_letor, run

ort = pytest.importorskip("onnxruntime")


def onnx_scores(model: "pathlib.Path | bytes", X: np.ndarray) -> np.ndarray:
    """Scores from onnxruntime: input `features` float32 [N, F], output `scores` [N, 1]."""
    sess = ort.InferenceSession(model if isinstance(model, bytes) else str(model), providers=["CPUExecutionProvider"])
    (inp,) = sess.get_inputs()
    assert inp.name == "features" and inp.shape[1] == X.shape[1]
    (out,) = sess.run(["scores"], {"features": X.astype(np.float32)})
    assert out.shape == (X.shape[0], 1) and out.dtype == np.float32
    return out[:, 0].astype(np.float64)


def assert_equal_scores(got: np.ndarray, want: np.ndarray, what: str):
    assert got.shape == want.shape
    bad = np.abs(got - want) > 1e-6 * np.maximum(np.abs(want), 1e-12)
    assert not bad.any(), f"{what}: {bad.sum()} scores differ, first at {np.argmax(bad)}: {got[bad][:3]} vs {want[bad][:3]}"


def onnx_width(model: pathlib.Path) -> int:
    """The input width the exported graph declares (the model's raw feature count)."""
    return ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).get_inputs()[0].shape[1]


@pytest.mark.parametrize(
    "algo,params",
    [
        ("lambdamart", ["trees=30", "leaves=8"]),
        ("mart", ["trees=20"]),
        ("random-forest", ["trees=15"]),
        ("ranksvm", ["c=0.1"]),
        ("rankboost", ["rounds=40"]),
    ],
)
def test_cli_export_scores_as_ltr_predict(ltr_bin, web_dir, tmp_path, algo, params):
    """Raw web features with a stored z-score: onnxruntime on the test file equals `ltr predict`."""
    model = tmp_path / "m.model"
    args = ["train", "--train", web_dir / "train.txt", "--algo", algo, "--normalize", "zscore", "--model", model]
    for p in params:
        args += ["--param", p]
    run(ltr_bin, *args)
    onnx = tmp_path / "m.onnx"
    run(ltr_bin, "export", "--model", model, "--to", "onnx", "--out", onnx)
    X, _, _ = read_letor(web_dir / "test.txt", onnx_width(onnx))
    want = np.array([float(s) for s in run(ltr_bin, "predict", "--model", model, "--data", web_dir / "test.txt").split()])
    assert_equal_scores(onnx_scores(onnx, X), want, algo)


def test_ltrkit_export_onnx_and_nan_left(web_dir, tmp_path):
    """`Ranker.export("onnx", path)` writes and returns the bytes; ltr's own trees send a NaN left, which is where
    the smallest value goes."""
    import ltrkit

    X, y, q = ltrkit.load_svmlight(web_dir / "train.txt", dense=True)
    ranker = ltrkit.Ranker(algo="lambdamart", trees=25, leaves=8, normalize="zscore").fit(X, y, qid=q)
    path = tmp_path / "m.onnx"
    with pytest.warns(UserWarning) as notes:
        body = ranker.export("onnx", path)
    assert any(str(n.message).startswith("onnx: input `features`: float32 [N, 136]") for n in notes)
    assert isinstance(body, bytes) and path.read_bytes() == body
    Xt, _, qt = ltrkit.load_svmlight(web_dir / "test.txt", dense=True)
    Xt = np.ascontiguousarray(Xt[:, : X.shape[1]], dtype=np.float32)
    assert_equal_scores(onnx_scores(body, Xt), ranker.predict(Xt, qid=qt), "ltrkit lambdamart")
    nan = Xt.copy()
    nan[::3, ::2] = np.nan
    lowest = np.where(np.isnan(nan), np.float32(-3e38), nan)
    got = onnx_scores(path, nan)
    assert_equal_scores(got, ranker.predict(lowest, qid=qt), "NaN left")
    assert not np.allclose(got, onnx_scores(path, Xt)), "the NaN values must change scores"


def test_ranklib_model_sends_nan_right(ltr_bin, letor_dir, tmp_path):
    """A RankLib LambdaMART (`v <= t` goes left, so a NaN goes right at every split): onnxruntime with NaN equals
    `ltr predict` with those values replaced by a value above every threshold."""
    import ltrkit

    model = tmp_path / "m.model"
    run(ltr_bin, "train", "--train", letor_dir / "train.txt", "--algo", "lambdamart", "--param", "trees=20",
        "--normalize", "none", "--model", model)
    ranklib = tmp_path / "ranklib.txt"
    run(ltr_bin, "export", "--model", model, "--to", "ranklib", "--out", ranklib)
    onnx = tmp_path / "m.onnx"
    run(ltr_bin, "export", "--model", ranklib, "--to", "onnx", "--out", onnx)
    m = ltrkit.load_model(ranklib)
    X, _, q = read_letor(letor_dir / "test.txt", m.n_features_in_)
    assert_equal_scores(onnx_scores(onnx, X), m.predict(X, qid=q), "RankLib")
    nan = X.copy()
    nan[1::2, 1::3] = np.nan
    highest = np.where(np.isnan(nan), np.float32(3e38), nan)
    got = onnx_scores(onnx, nan)
    assert_equal_scores(got, m.predict(highest, qid=q), "NaN right")
    assert not np.allclose(got, onnx_scores(onnx, X)), "the NaN values must change scores"


def test_xgboost_nan_directions_survive_export(ltr_bin, letor_dir, tmp_path):
    """XGBoost learns a NaN direction per split from training data with NaN; its model, read by `ltr` and exported,
    scores NaN rows in onnxruntime as XGBoost does (1e-6 of max(|score|, 1): XGBoost sums float32 leaves)."""
    xgb = pytest.importorskip("xgboost")
    X, y, q = read_letor(letor_dir / "train.txt", 12)
    rng = np.random.default_rng(3)
    X[rng.random(X.shape) < 0.15] = np.nan
    params = {"objective": "rank:ndcg", "max_depth": 4, "eta": 0.3, "seed": 1, "nthread": 1}
    booster = xgb.train(params, xgb.DMatrix(X, y, qid=q, missing=np.nan), 20)
    path = tmp_path / "xgb.json"
    booster.save_model(path)
    onnx = tmp_path / "xgb.onnx"
    run(ltr_bin, "export", "--model", path, "--to", "onnx", "--out", onnx)
    Xt, _, _ = read_letor(letor_dir / "test.txt", 12)
    Xt[rng.random(Xt.shape) < 0.15] = np.nan
    want = booster.predict(xgb.DMatrix(Xt, missing=np.nan), output_margin=True).astype(np.float64)
    got = onnx_scores(onnx, Xt)
    assert np.all(np.abs(got - want) <= 1e-6 * np.maximum(np.abs(want), 1.0)), np.abs(got - want).max()


def test_models_onnx_cannot_express_are_refused(ltr_bin, letor_dir, tmp_path):
    """MHR aggregates the rankings of several RankSVMs: no scoring graph computes that; nothing is written."""
    model = tmp_path / "mhr.model"
    run(ltr_bin, "train", "--train", letor_dir / "train.txt", "--algo", "mhr", "--model", model)
    import subprocess

    out = subprocess.run([str(ltr_bin), "export", "--model", str(model), "--to", "onnx", "--out", str(tmp_path / "x")],
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert "onnx cannot run this model" in out.stderr and "aggregates the rankings" in out.stderr
    assert not (tmp_path / "x").exists()
