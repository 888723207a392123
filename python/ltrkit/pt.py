"""PyTerrier (python-terrier 1.x) integration: ltrkit rankers as learned rerankers, ltrkit's measures in
``pt.Experiment``. Importing this module imports pyterrier (``import ltrkit`` does not); nothing here starts Java.

>>> import pyterrier as pt, ltrkit                                    # doctest: +SKIP
>>> pipeline = bm25 >> features >> ltrkit.pt.reranker(ltrkit.LambdaMART(trees=100))  # doctest: +SKIP
>>> pipeline.fit(train_topics, qrels, valid_topics, qrels)            # doctest: +SKIP
>>> pt.Experiment([bm25, pipeline], test_topics, qrels,
...               eval_metrics=["map", ltrkit.pt.measure("nDCG@10", convention="trec")])  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

try:
    import pyterrier as _pt
except ImportError as e:  # pragma: no cover - exercised only without pyterrier
    raise ImportError("ltrkit.pt needs PyTerrier 1.x: pip install 'pyterrier>=1,<2'") from e

import ir_measures as _irm  # noqa: E402 - both come with pyterrier
import pandas as pd  # noqa: E402

from .metrics import evaluate

__all__ = ["Reranker", "reranker", "measure"]


def _features(res: Any, column: str, context: str) -> Tuple[Any, np.ndarray, np.ndarray, np.ndarray]:
    """The result frame with each query's rows together (a stable sort by first appearance, so a frame already
    grouped keeps its order), the order that made it, the feature matrix and the qid per row."""
    missing = [c for c in ("qid", "docno", column) if c not in res.columns]
    if missing:
        raise ValueError(
            f"{context}: the result frame needs the columns qid, docno, {column} (missing {', '.join(missing)})"
        )
    if len(res) == 0:
        raise ValueError(f"{context}: the result frame has no rows")
    codes, _ = pd.factorize(res["qid"].astype(str))
    order = np.argsort(codes, kind="stable")
    frame = res.iloc[order]
    rows = [np.asarray(v, dtype=np.float32).ravel() for v in frame[column].to_numpy()]  # ltrkit's precision
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise ValueError(f"{context}: every row's {column} must have the same length, got lengths {sorted(widths)}")
    return frame, order, np.stack(rows), codes[order]


def _labels(frame: Any, qrels: Any, context: str) -> np.ndarray:
    """Each row's label from ``qrels`` (qid, docno, label); a document without a judgment is 0, as PyTerrier's
    learned rerankers take it."""
    missing = [c for c in ("qid", "docno", "label") if c not in qrels.columns]
    if missing:
        raise ValueError(f"{context}: qrels need the columns qid, docno, label (missing {', '.join(missing)})")
    judged = pd.Series(
        qrels["label"].to_numpy(dtype=np.float64),
        index=pd.MultiIndex.from_arrays([qrels["qid"].astype(str), qrels["docno"].astype(str)]),
    )
    judged = judged[~judged.index.duplicated(keep="last")]
    keys = pd.MultiIndex.from_arrays([frame["qid"].astype(str), frame["docno"].astype(str)])
    return judged.reindex(keys).fillna(0.0).to_numpy()


class Reranker(_pt.Estimator):
    """A PyTerrier transformer that scores each retrieved document by an ltrkit ranker over its ``features``
    column (a numpy vector per row, as ``pt.text.get_text``/``FeaturesRetriever``/``**`` pipelines produce) and
    sets ``score`` and ``rank``; as an estimator, ``fit`` trains the ranker on the results of the stages before it
    labelled by the qrels (unjudged documents are 0), the validation results, when given, as its ``eval_set``
    (grids, early stopping). Queries are kept whole whatever the row order."""

    def __init__(self, ranker: Any, features: str = "features") -> None:
        super().__init__()
        self.ranker = ranker
        self.features = features
        self.n_features: Optional[int] = None

    def fit(
        self, topics_or_res_tr: Any, qrels_tr: Any, topics_or_res_va: Any = None, qrels_va: Any = None
    ) -> "Reranker":
        frame, _, X, qid = _features(topics_or_res_tr, self.features, "fit")
        y = _labels(frame, qrels_tr, "fit")
        kwargs = {}
        if topics_or_res_va is not None:
            if qrels_va is None:
                raise ValueError("fit: validation results were given without their qrels")
            vframe, _, Xv, qv = _features(topics_or_res_va, self.features, "fit (validation)")
            kwargs = {"eval_set": [(Xv, _labels(vframe, qrels_va, "fit (validation)"))], "eval_qid": [qv]}
        self.ranker.fit(X, y, qid=qid, **kwargs)
        self.n_features = X.shape[1]
        return self

    def transform(self, res: Any) -> Any:
        if len(res) == 0:
            out = res.copy()
            out["score"] = np.zeros(0)
            return _pt.model.add_ranks(out)
        frame, order, X, qid = _features(res, self.features, "transform")
        if self.n_features is not None and X.shape[1] != self.n_features:
            raise ValueError(
                f"transform: the ranker was fitted on {self.n_features} features, these rows have {X.shape[1]}"
            )
        scores = np.empty(len(res))
        scores[order] = self.ranker.predict(X, qid=qid)
        out = res.copy()
        out["score"] = scores
        return _pt.model.add_ranks(out)

    def __repr__(self) -> str:
        return f"ltrkit.pt.reranker({self.ranker!r})"


def reranker(ranker: Any, features: str = "features") -> Reranker:
    """``ltrkit.pt.reranker(LambdaMART())``: the ranker as a PyTerrier learned reranker (see :class:`Reranker`)."""
    return Reranker(ranker, features=features)


def measure(name: str, convention: str = "trec", label: Optional[str] = None) -> Any:
    """An ltrkit measure (``nDCG@10``, ``MAP``, ``RBP(p=0.8)``, ``infAP``, … — anything :func:`ltrkit.evaluate`
    takes) as an ir_measures measure, so ``pt.Experiment(..., eval_metrics=[measure("nDCG@10")])`` computes it with
    ltrkit's Rust code under ``convention`` (trec_eval's by default; ``letor4``, ``standard``, …). ``label`` names
    its column (default: ``ltrkit:NAME``, with ``[CONVENTION]`` when it is not ``trec``; ir_measures takes two measures
    of one name as the same measure, so a label must differ from ir_measures' own names such as ``nDCG@10``)."""
    evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, measures=[name], convention=convention)  # bad names fail here

    def per_query(qrels: Any, run: Any):
        qd = {}
        for q, d, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False, name=None):
            qd.setdefault(str(q), {})[str(d)] = r
        rd = {}
        for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False, name=None):
            rd.setdefault(str(q), {})[str(d)] = float(s)
        if not rd:  # pt.Experiment asks for the judged queries no system answered: they score 0
            return [(q, 0.0) for q in qd]
        (values,) = evaluate(qd, rd, measures=[name], convention=convention, per_query=True).values()
        return list(values.items())

    # ir_measures takes measures of the same name as one (its own nDCG@10 and this one would share a column).
    shown = label or f"ltrkit:{name}" + ("" if convention == "trec" else f"[{convention}]")
    return _irm.define(per_query, name=shown, support_cutoff=False)
