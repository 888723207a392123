"""IR metrics and paired significance tests, computed by the same Rust code as ``ltr eval`` and ``ltr compare``."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

import numpy as np

from . import _native
from ._data import native_data, queries_of


def _labels_only(y: Any, qid: Any, group: Any, docids: Optional[Sequence[str]]):
    y = np.asarray(y)
    return native_data(np.zeros((len(y), 0), dtype=np.float32), y, qid, group, docids=docids)


def evaluate(
    y: Any,
    scores: Any,
    qid: Any = None,
    group: Any = None,
    metrics: Sequence[str] = ("NDCG@10", "MAP"),
    convention: str = "standard",
    per_query: bool = False,
    docids: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """Evaluate ``scores`` (one per row) against labels ``y`` per query (``qid`` per row or ``group`` sizes).

    ``metrics``: NDCG@k, DCG@k, MAP[@k], P@k, MRR[@k], ERR@k, R-prec, bpref, … as ``ltr eval`` names them;
    ``convention``: ``standard``, ``trec``, ``letor3``, ``letor4`` or ``mslr`` (gain, discount, ties and short-list
    rules of each evaluator). Returns ``{metric: mean}``; with ``per_query`` ``{metric: array}`` plus ``"qid"``, the
    query ids in order. ``docids`` (one per row) break score ties under the ``trec`` convention as trec_eval does.
    """
    data = _labels_only(y, qid, group, docids)
    s = np.ascontiguousarray(scores, dtype=np.float64)
    if s.ndim != 1 or len(s) != data.n_rows:
        raise ValueError(f"scores must have one value per row ({data.n_rows}), got shape {s.shape}")
    out = _native.evaluate(data, s, list(metrics), convention)
    if per_query:
        res: Dict[str, Any] = {m: v[1] for m, v in out.items()}
        res["qid"] = queries_of(len(s), qid, group)[1]
        return res
    return {m: v[0] for m, v in out.items()}


def compare(
    y: Any,
    scores_a: Any,
    scores_b: Any,
    qid: Any = None,
    group: Any = None,
    metric: str = "NDCG@10",
    test: str = "ttest",
    convention: str = "standard",
    alternative: str = "two-sided",
    seed: int = 1,
) -> Dict[str, Any]:
    """Compare two rankings of the same queries on ``metric`` with a paired test (``ttest``, ``wilcoxon``,
    ``sign``, ``permutation``), as ``ltr compare --json``: the means, their difference, the statistic, the p-value,
    wins and losses and a 95% bootstrap interval of the difference."""
    ra = evaluate(y, scores_a, qid, group, [metric], convention, per_query=True)
    rb = evaluate(y, scores_b, qid, group, [metric], convention, per_query=True)
    name = next(iter(ra))  # the metric's canonical name (ndcg@10 -> NDCG@10)
    a, b = ra[name], rb[name]
    out = _native.paired_test(list(map(float, a)), list(map(float, b)), test, alternative, seed)
    out["metric"] = name
    out["convention"] = convention
    out["queries"] = len(a)
    out["a"] = float(np.mean(a))
    out["b"] = float(np.mean(b))
    return out
