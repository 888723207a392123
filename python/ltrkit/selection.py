"""scikit-learn model selection with ranking measures: a scorer that evaluates per query group.

>>> import sklearn
>>> from sklearn.model_selection import GridSearchCV, GroupKFold
>>> sklearn.set_config(enable_metadata_routing=True)                 # doctest: +SKIP
>>> search = GridSearchCV(LambdaMART().set_fit_request(qid=True), {"trees": [50, 100]},
...                       scoring=ltrkit.make_scorer("MAP", convention="letor4"), cv=GroupKFold(5))  # doctest: +SKIP
>>> search.fit(X, y, groups=qid, qid=qid)                            # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from .metrics import evaluate


def ranking_measure(
    y_true: Any,
    y_pred: Any,
    qid: Any = None,
    group: Any = None,
    *,
    metric: str = "NDCG@10",
    convention: str = "standard",
) -> float:
    """Mean ``metric`` over the queries (``qid`` per row or ``group`` sizes) of the ranking by ``y_pred``."""
    if qid is None and group is None:
        raise ValueError(
            f"a {metric} scorer needs the queries: enable scikit-learn's metadata routing and pass qid= (or group=) "
            "to the search's fit, or score with the ranker's own score (scoring=None) and a DataFrame X with a qid "
            "column"
        )
    (value,) = evaluate(y_true, y_pred, qid=qid, group=group, metrics=[metric], convention=convention).values()
    return float(value)


def make_scorer(metric: str = "NDCG@10", convention: str = "standard") -> Any:
    """A scikit-learn scorer (``scoring=`` of ``GridSearchCV``, ``cross_val_score``, …): the mean of ``metric``
    (any measure of :func:`ltrkit.evaluate`) over the query groups of the test fold, under ``convention``.

    It needs the queries of the test rows, which scikit-learn passes by metadata routing only: made while routing
    is enabled (``sklearn.set_config(enable_metadata_routing=True)``) it requests ``qid`` and ``group`` for
    scoring, so ``search.fit(X, y, groups=qid, qid=qid)`` reaches it. Without routing, use the ranker's own
    ``score`` (``scoring=None``: its ``metric`` under its ``convention``) with a DataFrame ``X`` holding a ``qid``
    column."""
    import sklearn
    from sklearn.metrics import make_scorer as sk_make_scorer

    evaluate([1.0], [0.0], qid=[0], metrics=[metric], convention=convention)  # a bad name fails here, not per fold
    scorer = sk_make_scorer(ranking_measure, metric=metric, convention=convention)
    if sklearn.get_config().get("enable_metadata_routing"):
        scorer = scorer.set_score_request(qid=True, group=True)
    return scorer
