"""LightGBM and XGBoost models (XGBoost's in JSON and UBJSON), trained here and saved in their own formats, scored by `ltr predict` as the
libraries score them (raw margins) to 1e-6 relative. LightGBM and XGBoost are test-only dependencies: each test is
skipped when its library is not installed."""

from __future__ import annotations

import json
import pathlib
import subprocess

import numpy as np
import pytest

from conftest import read_letor, run


def width(*paths: pathlib.Path) -> int:
    """The largest feature number in the files."""
    lines = (line.split("#", 1)[0].split() for p in paths for line in p.read_text().splitlines())
    return max(int(tok.split(":")[0]) for toks in lines for tok in toks[2:])


@pytest.fixture(scope="module")
def data(letor_dir):
    d = width(letor_dir / "train.txt", letor_dir / "test.txt")
    xtr, ytr, qtr = read_letor(letor_dir / "train.txt", d)
    xte, _, _ = read_letor(letor_dir / "test.txt", d)
    _, counts = np.unique(qtr, return_counts=True)
    assert (np.diff(qtr) >= 0).all(), "queries must be contiguous"
    return xtr, ytr, qtr, counts, xte, letor_dir / "test.txt"


def ltr_scores(ltr_bin, model: pathlib.Path, test: pathlib.Path) -> np.ndarray:
    return np.array([float(s) for s in run(ltr_bin, "predict", "--model", model, "--data", test).split()])


def assert_close(got: np.ndarray, want: np.ndarray):
    assert got.shape == want.shape
    bad = np.abs(got - want) > 1e-6 * np.maximum(np.abs(want), 1.0)
    assert not bad.any(), f"{bad.sum()} scores differ, first at {np.argmax(bad)}: {got[bad][:3]} vs {want[bad][:3]}"


@pytest.mark.parametrize("extra", [{}, {"zero_as_missing": True}], ids=["default", "zero_as_missing"])
def test_lightgbm_text_and_dump(ltr_bin, data, tmp_path, extra):
    lgb = pytest.importorskip("lightgbm")
    xtr, ytr, _, counts, xte, test = data
    params = {"objective": "lambdarank", "num_leaves": 15, "learning_rate": 0.1, "min_data_in_leaf": 5,
              "verbose": -1, "seed": 1, "deterministic": True, "num_threads": 1, **extra}
    ds = lgb.Dataset(xtr, ytr, group=counts, params=extra)
    booster = lgb.train(params, ds, num_boost_round=30)
    want = booster.predict(xte, raw_score=True)
    text = tmp_path / "m.txt"
    booster.save_model(text)
    assert_close(ltr_scores(ltr_bin, text, test), want)
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(booster.dump_model()))
    assert_close(ltr_scores(ltr_bin, dump, test), want)


@pytest.mark.parametrize("objective", ["rank:ndcg", "rank:pairwise", "binary:logistic"])
def test_xgboost_json(ltr_bin, data, tmp_path, objective):
    xgb = pytest.importorskip("xgboost")
    xtr, ytr, qtr, _, xte, test = data
    label = (ytr > 0).astype(float) if objective.startswith("binary") else ytr
    dtrain = xgb.DMatrix(xtr, label, qid=qtr)
    params = {"objective": objective, "max_depth": 5, "eta": 0.3, "base_score": 0.3, "seed": 1, "nthread": 1}
    booster = xgb.train(params, dtrain, 25)
    want = booster.predict(xgb.DMatrix(xte), output_margin=True).astype(np.float64)
    # JSON, and UBJSON (XGBoost >= 2's binary form of the same document), chosen by the file's extension.
    for name in ["m.json", "m.ubj"]:
        path = tmp_path / name
        booster.save_model(path)
        assert_close(ltr_scores(ltr_bin, path, test), want)


def test_truncated_xgboost_ubjson_is_refused(ltr_bin, data, tmp_path):
    xgb = pytest.importorskip("xgboost")
    xtr, ytr, qtr, _, _, test = data
    booster = xgb.train({"objective": "rank:ndcg", "max_depth": 3, "nthread": 1}, xgb.DMatrix(xtr, ytr, qid=qtr), 5)
    whole = tmp_path / "m.ubj"
    booster.save_model(whole)
    path = tmp_path / "cut.ubj"
    path.write_bytes(whole.read_bytes()[: whole.stat().st_size * 2 // 3])
    out = subprocess.run([str(ltr_bin), "predict", "--model", str(path), "--data", str(test)],
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert str(path) in out.stderr and "UBJSON: truncated at byte" in out.stderr, out.stderr


def test_unknown_objective_is_refused(ltr_bin, data, tmp_path):
    lgb = pytest.importorskip("lightgbm")
    xtr, ytr, _, counts, _, test = data
    booster = lgb.train({"objective": "poisson", "verbose": -1, "num_threads": 1}, lgb.Dataset(xtr, ytr), 3)
    path = tmp_path / "m.txt"
    booster.save_model(path)
    out = subprocess.run([str(ltr_bin), "predict", "--model", str(path), "--data", str(test)],
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert "poisson" in out.stderr and "lambdarank" in out.stderr and str(path) in out.stderr


def test_ltrkit_load_model_reads_foreign_models_and_exports_trees(letor_dir, tmp_path):
    """`ltrkit.load_model` reads a LightGBM model as `ltr predict` does; a LambdaMART fitted in Python exports to an
    engine format, and the RankLib export reads back to the same scores."""
    import ltrkit

    fixtures = pathlib.Path(__file__).resolve().parents[2] / "crates" / "ltr-export" / "tests" / "fixtures" / "imports"
    m = ltrkit.load_model(fixtures / "lgb_lambdarank.txt")
    assert m.fit_report_["algorithm"] == "lightgbm-lambdarank"
    X, _, q = ltrkit.load_svmlight(fixtures / "test.txt", dense=True)
    want = np.loadtxt(fixtures / "lgb_lambdarank.scores")
    Xw = np.zeros((X.shape[0], m.n_features_in_), dtype=np.float32)
    Xw[:, : min(X.shape[1], m.n_features_in_)] = X[:, : m.n_features_in_]
    np.testing.assert_allclose(m.predict(Xw, qid=q), want, rtol=1e-6, atol=1e-6)

    Xt, yt, qt = ltrkit.load_svmlight(letor_dir / "train.txt")
    lm = ltrkit.LambdaMART(trees=15, leaves=7, min_docs_in_leaf=5).fit(Xt, yt, qid=qt)
    with pytest.warns(UserWarning):
        body = lm.export("es-ltr")
    assert json.loads(body)["model"]["model"]["type"] == "model/xgboost+json"
    with pytest.warns(UserWarning):
        lm.export("ranklib", tmp_path / "lm.ranklib")
    back = ltrkit.load_model(tmp_path / "lm.ranklib")
    np.testing.assert_array_equal(back.predict(Xt, qid=qt), lm.predict(Xt, qid=qt))
