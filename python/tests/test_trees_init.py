"""Tree estimators: boosting from another model (init_algo, init_model) and the fitted attributes of every tree
family."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ltrkit

from test_ltrkit import load


def test_zero_rounds_from_ranksvm_predict_as_ranksvm(letor_dir):
    X, y, q = load(letor_dir, "train")
    Xt, _, qt = load(letor_dir, "test")
    svm = ltrkit.RankSVM(seed=2).fit(X, y, qid=q)
    for cls in (ltrkit.LambdaMART, ltrkit.MART):
        start = cls(init_algo="ranksvm", trees=0, seed=2).fit(X, y, qid=q)
        np.testing.assert_array_equal(start.predict(Xt, qid=qt), svm.predict(Xt, qid=qt))


def test_boosted_model_has_importance_best_iteration_and_one_file(letor_dir, tmp_path):
    X, y, q = load(letor_dir, "train")
    svm = ltrkit.RankSVM().fit(X, y, qid=q)
    path = tmp_path / "svm.bin"
    svm.save(path)
    m = ltrkit.MART(init_model=str(path), trees=15, leaves=5, min_docs_in_leaf=5).fit(X, y, qid=q)
    model = json.loads(bytes(m.model_.to_bytes(json=True)))["model"]
    assert set(model) == {"Boosted"} and "Linear" in model["Boosted"]["init"]["model"]
    assert m.best_iteration_ == 15 == len(model["Boosted"]["forest"]["trees"])
    # Importance is the trees' split gains only.
    imp = m.feature_importances_
    assert imp.shape == (X.shape[1],) and abs(imp.sum() - 1.0) < 1e-12


def test_every_tree_family_reports_importance(letor_dir):
    X, y, q = load(letor_dir, "train")
    for m in (ltrkit.LambdaMART(trees=5, leaves=5), ltrkit.MART(trees=5, leaves=5),
              ltrkit.RandomForest(trees=5, leaves=5)):
        m.fit(X, y, qid=q)
        imp = m.feature_importances_
        assert imp.shape == (X.shape[1],) and abs(imp.sum() - 1.0) < 1e-12 and (imp >= 0).all()
    # Boosting rounds are the boosters' alone: a forest's trees are all kept, none chosen.
    assert ltrkit.LambdaMART(trees=5, leaves=5).fit(X, y, qid=q).best_iteration_ == 5
    with pytest.raises(AttributeError, match="best_iteration_"):
        _ = ltrkit.RandomForest(trees=5, leaves=5).fit(X, y, qid=q).best_iteration_


def walk(forest: dict, X: np.ndarray) -> tuple[np.ndarray, int]:
    """Scores of a `Forest` model file's trees over the rows of `X`, walked here (a NaN goes where the split's
    `default_left` says), and how many times a NaN was sent that way."""
    out = np.full(len(X), forest["base_score"])
    sent = 0
    for t in forest["trees"]:
        for i, row in enumerate(X):
            node = 0 if t["split_feature"] else -1
            while node >= 0:
                v = row[t["split_feature"][node]]
                if np.isnan(v):
                    left = t["default_left"][node]
                    sent += 1
                else:
                    left = v <= np.float32(t["threshold"][node])
                node = t["left"][node] if left else t["right"][node]
            out[i] += t["weight"] * t["leaf_value"][~node]
    return out, sent


def test_trees_take_nan_as_a_missing_value_and_the_others_refuse_it(letor_dir):
    """NaN in X is a missing value to the tree learners (the registry rows that say so): fit takes it, and predict
    sends each NaN where its split learned, as the model file's trees walked here send it. Every other learner, and
    a model that is not such trees, refuses it naming the cell."""
    X, y, q = ltrkit.load_svmlight(letor_dir / "train.txt", dense=True)
    X = X.copy()
    # Feature 0 is missing for most relevant documents and few others, so the side a NaN takes matters.
    rng = np.random.default_rng(0)
    X[rng.random(len(y)) < np.where(y > 0, 0.6, 0.1), 0] = np.nan
    small = dict(trees=8, leaves=6, min_docs_in_leaf=5)
    for cls in (ltrkit.LambdaMART, ltrkit.MART, ltrkit.RandomForest):
        m = cls(**small).fit(X, y, qid=q)
        s = m.predict(X)
        assert np.isfinite(s).all(), cls.__name__
        forest = json.loads(bytes(m.model_.to_bytes(json=True)))["model"]["Forest"]
        walked, sent = walk(forest, X)
        assert sent > 0, cls.__name__
        np.testing.assert_allclose(s, walked, rtol=0, atol=1e-12, err_msg=cls.__name__)
    np.testing.assert_array_equal(s, ltrkit.RandomForest(**small).fit(X, y, qid=q).predict(X))
    first = int(np.flatnonzero(np.isnan(X[:, 0]))[0])
    with pytest.raises(ValueError, match=rf"X\[{first}, 0\] is NaN: ranksvm takes no missing values"):
        ltrkit.RankSVM().fit(X, y, qid=q)
    svm = ltrkit.RankSVM().fit(np.nan_to_num(X), y, qid=q)
    with pytest.raises(ValueError, match=rf"X\[{first}, 0\] is NaN: this ranksvm model takes no missing values"):
        svm.predict(X)
