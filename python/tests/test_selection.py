"""scikit-learn model selection over query groups: GridSearchCV and cross_val_score with GroupKFold (groups = qids),
with metadata routing enabled (qid routed to fit and score) and without (a DataFrame X with a qid column, XGBoost's
convention). Every fold's score is checked against the same fold trained and evaluated by hand, bit for bit; and
the typed ``best_params_``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_val_score

import ltrkit

from conftest import ROOT

CV = GroupKFold(n_splits=3)


def small_lambdamart(**kw):
    return ltrkit.LambdaMART(leaves=7, min_docs_in_leaf=5, **kw)


def by_hand(est, X, y, q, metric="NDCG@10", convention="standard"):
    """Each GroupKFold fold trained on its training queries and scored on its test queries, as a user would."""
    out = []
    for train, test in CV.split(X, y, q):
        m = clone(est).fit(X[train], y[train], qid=q[train])
        s = m.predict(X[test], qid=q[test])
        out.append(ltrkit.evaluate(y[test], s, qid=q[test], metrics=[metric], convention=convention)[metric])
    return np.array(out)


@pytest.fixture(scope="module")
def data(letor_dir):
    return ltrkit.load_svmlight(letor_dir / "train.txt")


def frame(X, q):
    df = pd.DataFrame(X, columns=[f"f{i + 1}" for i in range(X.shape[1])])
    df["qid"] = q
    return df


def test_routing_cross_val_score_and_grid_search_score_each_fold_by_query(data):
    X, y, q = data
    with sklearn.config_context(enable_metadata_routing=True):
        est = small_lambdamart(trees=6).set_fit_request(qid=True).set_score_request(qid=True)
        scores = cross_val_score(est, X, y, cv=CV, params={"qid": q, "groups": q})
        np.testing.assert_array_equal(scores, by_hand(small_lambdamart(trees=6), X, y, q))
        # Any ranking measure per query group: the scorer requests the queries itself.
        scorer = ltrkit.make_scorer("AP", convention="letor4")  # filed as MAP by evaluate
        maps = cross_val_score(est, X, y, cv=CV, params={"qid": q, "groups": q}, scoring=scorer)
        np.testing.assert_array_equal(maps, by_hand(small_lambdamart(trees=6), X, y, q, "MAP", "letor4"))
        assert not np.array_equal(maps, scores)
        search = GridSearchCV(est, {"trees": [3, 6], "learning_rate": [0.1]}, cv=CV, scoring=scorer)
        search.fit(X, y, groups=q, qid=q)
    for i, params in enumerate(search.cv_results_["params"]):
        want = by_hand(small_lambdamart(**params), X, y, q, "MAP", "letor4")
        got = [search.cv_results_[f"split{k}_test_score"][i] for k in range(3)]
        np.testing.assert_array_equal(got, want)
    assert search.best_params_ in search.cv_results_["params"]
    # The refit best model is that setting trained on everything; its own best_params_ are typed.
    direct = small_lambdamart(**search.best_params_).fit(X, y, qid=q)
    np.testing.assert_array_equal(search.best_estimator_.predict(X), direct.predict(X))
    assert search.best_estimator_.best_params_ == {
        "trees": search.best_params_["trees"],
        "learning-rate": 0.1,
        "leaves": 7,
        "min-docs-in-leaf": 5,
    }


def test_without_routing_a_dataframe_qid_column_carries_the_queries(data):
    X, y, q = data
    assert not sklearn.get_config()["enable_metadata_routing"]
    df = frame(X, q)
    scores = cross_val_score(small_lambdamart(trees=6), df, y, groups=q, cv=CV)
    np.testing.assert_array_equal(scores, by_hand(small_lambdamart(trees=6), X, y, q))
    # score is the ranker's own metric under its convention.
    maps = cross_val_score(small_lambdamart(trees=6, metric="map", convention="letor4"), df, y, groups=q, cv=CV)
    np.testing.assert_array_equal(maps, by_hand(small_lambdamart(trees=6), X, y, q, "MAP", "letor4"))
    search = GridSearchCV(ltrkit.RankSVM(), {"c": [0.001, 1.0]}, cv=CV).fit(df, y, groups=q)
    for i, params in enumerate(search.cv_results_["params"]):
        got = [search.cv_results_[f"split{k}_test_score"][i] for k in range(3)]
        np.testing.assert_array_equal(got, by_hand(ltrkit.RankSVM(**params), X, y, q))
    # The same model as training on the arrays; the qid column is not a feature.
    direct = ltrkit.RankSVM(**search.best_params_).fit(X, y, qid=q)
    assert search.best_estimator_.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(search.best_estimator_.predict(df), direct.predict(X))
    assert search.best_estimator_.score(df, y) == direct.score(X, y, qid=q)


def test_queries_missing_or_given_twice_are_clear_errors(data):
    X, y, q = data
    # Without routing and without a qid column, the fold's queries cannot reach score: say how to give them.
    with pytest.raises(ValueError, match="score needs the queries.*qid column"):
        cross_val_score(ltrkit.RankSVM(), X, y, groups=q, cv=CV, params={"qid": q}, error_score="raise")
    with pytest.raises(ValueError, match="MAP scorer needs the queries"):
        cross_val_score(
            ltrkit.RankSVM(), frame(X, q), y, groups=q, cv=CV, scoring=ltrkit.make_scorer("MAP"), error_score="raise"
        )
    with pytest.raises(ValueError, match="qid column and qid or group were given too"):
        ltrkit.RankSVM().fit(frame(X, q), y, qid=q)
    with pytest.raises(ValueError, match="NDGC"):
        ltrkit.make_scorer("NDGC@10")


def test_best_params_have_the_registry_types(data, letor_dir):
    X, y, q = data
    Xv, yv, qv = ltrkit.load_svmlight(letor_dir / "vali.txt")
    lm = small_lambdamart(trees=[2, 4], learning_rate=0.2, query_fraction=1.0).fit(
        X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv]
    )
    best = lm.best_params_
    assert best["trees"] in (2, 4) and type(best["trees"]) is int
    assert best["learning-rate"] == 0.2 and type(best["learning-rate"]) is float
    assert type(best["leaves"]) is int and type(best["query-fraction"]) is float
    # The text the model file keeps, read back by the registry's kind of each parameter.
    assert {k: str(v) for k, v in best.items()} == dict(lm.model_.params)
    svm = ltrkit.RankSVM(c="default", solver="dual").fit(X, y, qid=q)
    assert svm.best_params_ == {"c": "default", "solver": "dual"}
    assert ltrkit.RankSVM(c=0.5).fit(X, y, qid=q).best_params_ == {"c": 0.5}
    cp = ltrkit.CommitteePerceptron(committee=3, epochs=2, shuffle=False).fit(X, y, qid=q)
    assert cp.best_params_["shuffle"] is False and cp.best_params_["committee"] == 3
    # A start algorithm's parameters are typed by that algorithm's specs.
    sig = ltrkit.SigmoidRanker(seed_algo="ranksvm", max_iter=3, params={"seed-c": 0.01}).fit(X, y, qid=q)
    assert sig.best_params_["seed-c"] == 0.01 and sig.best_params_["max-iter"] == 3
    # A model the registry did not train keeps its text.
    assert ltrkit._estimators.typed_params("no-such-algo", {"a": "1"}) == {"a": "1"}
