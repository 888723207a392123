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
