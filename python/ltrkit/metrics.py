"""IR metrics and paired significance tests, computed by the same Rust code as ``ltr eval`` and ``ltr compare``."""

from __future__ import annotations

import json
import warnings
from typing import Any, Dict, Optional, Sequence

import numpy as np

from . import _native
from ._data import native_data, queries_of


def _labels_only(y: Any, qid: Any, group: Any, docids: Optional[Sequence[str]]):
    y = np.asarray(y)
    return native_data(np.zeros((len(y), 0), dtype=np.float32), y, qid, group, docids=docids)


def _is_run_form(x: Any) -> bool:
    """A dict of dicts (ir_measures, ranx, pytrec_eval) or a pandas DataFrame (PyTerrier's columns)."""
    return isinstance(x, dict) or (hasattr(x, "columns") and hasattr(x, "itertuples"))


def _is_named_runs(x: Any) -> bool:
    """A dict {name: run or scores}: its values are runs (dicts of dicts, DataFrames) or score arrays, not a run's
    {docno: score} dicts."""
    if not isinstance(x, dict) or not x:
        return False
    first = next(iter(x.values()))
    if isinstance(first, dict):
        return bool(first) and _is_run_form(next(iter(first.values())))
    return True


def _frame_rows(df: Any, value: str, what: str):
    missing = [c for c in ("qid", "docno", value) if c not in df.columns]
    if missing:
        raise ValueError(f"{what}: a DataFrame needs the columns qid, docno, {value} (missing {', '.join(missing)})")
    return df[["qid", "docno", value]].itertuples(index=False, name=None)


def _run_queries(run: Any):
    """``[(qid, [(docno, score), ...]), ...]`` in first-appearance order."""
    out: Dict[str, list] = {}
    if isinstance(run, dict):
        for q, docs in run.items():
            if not isinstance(docs, dict):
                raise ValueError(f"run: query {q} maps to {type(docs).__name__}, expected {{docno: score}}")
            out.setdefault(str(q), []).extend((str(d), float(v)) for d, v in docs.items())
    else:
        for q, d, v in _frame_rows(run, "score", "run"):
            out.setdefault(str(q), []).append((str(d), float(v)))
    return list(out.items())


def _qrels(qrels: Any) -> Dict[str, Dict[str, float]]:
    out: Dict[str, Dict[str, float]] = {}
    if isinstance(qrels, dict):
        for q, docs in qrels.items():
            if not isinstance(docs, dict):
                raise ValueError(f"qrels: query {q} maps to {type(docs).__name__}, expected {{docno: relevance}}")
            out.setdefault(str(q), {}).update((str(d), float(r)) for d, r in docs.items())
    else:
        for q, d, r in _frame_rows(qrels, "label", "qrels"):
            out.setdefault(str(q), {})[str(d)] = float(r)
    return out


def _has_subtopics(qrels: Any) -> bool:
    """Subtopic qrels: a DataFrame with ir_measures' ``iteration`` column, or ``{qid: {docno: {subtopic: rel}}}``."""
    if isinstance(qrels, dict):
        return any(isinstance(r, dict) for docs in qrels.values() if isinstance(docs, dict) for r in docs.values())
    return "iteration" in qrels.columns


def _subtopic(q: Any, d: Any, s: Any) -> int:
    try:
        value = int(str(s))
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"qrels: query {q}, document {d}: subtopic {s!r} is not a non-negative integer (ndeval's)")
    return value


def _grade(q: Any, d: Any, r: Any) -> int:
    if float(r) != int(float(r)):
        raise ValueError(f"qrels: query {q}, document {d}: relevance {r!r} is not an integer")
    return int(float(r))


def _diversity_qrels(qrels: Any) -> Dict[str, Dict[str, list]]:
    out: Dict[str, Dict[str, list]] = {}
    if isinstance(qrels, dict):
        rows = []
        for q, docs in qrels.items():
            for d, subs in docs.items():
                if not isinstance(subs, dict):
                    raise ValueError(f"qrels: query {q}, document {d}: expected {{subtopic: relevance}}")
                rows += [(q, d, r, s) for s, r in subs.items()]
    else:
        missing = [c for c in ("qid", "docno", "label", "iteration") if c not in qrels.columns]
        if missing:
            raise ValueError(
                f"qrels: subtopic qrels need the columns qid, docno, label, iteration (missing {', '.join(missing)})"
            )
        rows = qrels[["qid", "docno", "label", "iteration"]].itertuples(index=False, name=None)
    for q, d, r, s in rows:
        out.setdefault(str(q), {}).setdefault(str(d), []).append((_subtopic(q, d, s), _grade(q, d, r)))
    return out


def evaluate(
    y: Any,
    scores: Any = None,
    qid: Any = None,
    group: Any = None,
    metrics: Sequence[str] = ("NDCG@10", "MAP"),
    convention: Optional[str] = None,
    per_query: bool = False,
    docids: Optional[Sequence[str]] = None,
    measures: Optional[Sequence[str]] = None,
) -> Dict[str, Any]:
    """Evaluate a ranking, in either of two forms.

    **Qrels and a run**, as ir_measures, ranx and pytrec_eval take them: ``evaluate(qrels, run,
    measures=["nDCG@10", "RBP(p=0.8)"])`` with dicts of dicts (``{qid: {docno: relevance}}``,
    ``{qid: {docno: score}}``) or pandas DataFrames in PyTerrier's columns (``qid, docno, label`` /
    ``qid, docno, score``). The convention defaults to ``trec`` (trec_eval's), as ``ltr eval --run`` does; queries
    of the run without judgments are skipped, as trec_eval skips them. Returns ``{measure: mean}``; with
    ``per_query`` ``{measure: {qid: value}}``. Diversity measures (``alpha_nDCG@20``, ``ERR_IA@20``, ``NRBP``,
    ``P_IA@20``, ``StRecall@20``, …; ndeval's values) take subtopic qrels: a DataFrame with ir_measures'
    ``iteration`` column holding the subtopic, or ``{qid: {docno: {subtopic: relevance}}}``.

    **Labels and scores per row**: ``evaluate(y, scores, qid=... | group=...)``, as ``ltr eval --data --scores``
    (convention ``standard`` unless given). Returns ``{metric: mean}``; with ``per_query`` ``{metric: array}`` plus
    ``"qid"``, the query ids in order. ``docids`` (one per row) break score ties under the ``trec`` convention as
    trec_eval does.

    ``measures`` (or ``metrics``): NDCG@k, DCG@k, AP/MAP[@k], P@k, RR/MRR[@k], ERR@k, R-prec, bpref, RBP(p=…),
    Judged@k, infAP (a negative relevance marks a pooled but unjudged document, as in trec_eval), … in
    ``ltr eval``'s or ir_measures' syntax (``ltr eval --list-measures``); conventions ``standard``, ``trec``,
    ``letor3``, ``letor4``, ``mslr``.
    """
    names = list(measures if measures is not None else metrics)
    if _is_run_form(y):
        if scores is None or not _is_run_form(scores):
            raise ValueError("evaluate(qrels, run): give the run as a dict of dicts or a DataFrame too")
        if _has_subtopics(y):
            qids, out = _native.evaluate_diversity_run(
                _run_queries(scores), _diversity_qrels(y), names, convention or "trec"
            )
        else:
            qids, out = _native.evaluate_run(_run_queries(scores), _qrels(y), names, convention or "trec")
        if per_query:
            return {m: dict(zip(qids, map(float, v[1]))) for m, v in out.items()}
        return {m: v[0] for m, v in out.items()}
    if scores is None:
        raise ValueError("evaluate(y, scores, qid=...): give the scores, one per row")
    data = _labels_only(y, qid, group, docids)
    s = np.ascontiguousarray(scores, dtype=np.float64)
    if s.ndim != 1 or len(s) != data.n_rows:
        raise ValueError(f"scores must have one value per row ({data.n_rows}), got shape {s.shape}")
    out = _native.evaluate(data, s, names, convention or "standard")
    if per_query:
        res: Dict[str, Any] = {m: v[1] for m, v in out.items()}
        res["qid"] = queries_of(len(s), qid, group)[1]
        return res
    return {m: v[0] for m, v in out.items()}


def compare(
    y: Any,
    scores_a: Any,
    scores_b: Any = None,
    qid: Any = None,
    group: Any = None,
    metric: str = "NDCG@10",
    test: Optional[str] = None,
    convention: Optional[str] = None,
    alternative: str = "two-sided",
    seed: int = 1,
    correction: str = "holm",
    baseline: str = "first",
    alpha: float = 0.05,
    resamples: int = 10_000,
    trials: int = 10_000,
    format: str = "json",
) -> Any:
    """Compare rankings of the same queries on ``metric``, as ``ltr compare``.

    **Two rankings** (``compare(y, scores_a, scores_b, qid=...)``): a paired test (``test``: ``ttest`` by default,
    ``wilcoxon``, ``sign``, ``permutation``), as ``ltr compare --json`` for two score files: the means, their
    difference, the statistic, the p-value, wins and losses and a 95% bootstrap interval of the difference.

    **Many rankings** (``compare(y, [s1, s2, s3], qid=...)`` or ``compare(qrels, {"bm25": run1, "bert": run2, ...})``;
    a list names them ``run1``, ``run2``, …): as ``ltr compare --run A --run B ... --format json``: each run's mean
    with a percentile bootstrap 95% interval (``resamples``), every pair's difference with a p-value from randomised
    Tukey HSD (``test="tukey-hsd"``, the default; ``trials``) or a paired test adjusted over all pairs
    (``correction``: ``holm``, ``bonferroni``, ``bh``, ``none``), Cohen's d of the per-query differences, and the
    runs significantly better or worse than ``baseline`` (``"first"`` or a name) at ``alpha``. Returns the JSON as
    a dict (``format="markdown"`` or ``"latex"``: the tables as text).

    Runs are dicts of dicts or DataFrames (as :func:`evaluate` takes them, trec convention by default), compared
    over the judged queries they all answer (a warning says how many each loses)."""
    many = scores_b is None or (test or "").lower() in ("tukey-hsd", "tukey", "hsd")
    if many:
        collection = {"a": scores_a, "b": scores_b} if scores_b is not None else scores_a
        if _is_named_runs(collection):
            names, items = [str(k) for k in collection], list(collection.values())
        elif isinstance(collection, (list, tuple)):
            names, items = [f"run{i + 1}" for i in range(len(collection))], list(collection)
        else:
            raise ValueError("compare(y, runs): give the runs as a list or a dict {name: run}, or two rankings")
        return _compare_many(y, names, items, qid, group, metric, test or "tukey-hsd", convention, seed,
                             correction, baseline, alpha, resamples, trials, format)
    if _is_run_form(y):
        conv = convention or "trec"
        ra = evaluate(y, scores_a, metrics=[metric], convention=conv, per_query=True)
        rb = evaluate(y, scores_b, metrics=[metric], convention=conv, per_query=True)
        name = next(iter(ra))
        shared = [q for q in ra[name] if q in rb[name]]
        if not shared:
            raise ValueError("the two runs share no judged query")
        a = np.array([ra[name][q] for q in shared])
        b = np.array([rb[name][q] for q in shared])
        convention = conv
    else:
        convention = convention or "standard"
        ra = evaluate(y, scores_a, qid, group, [metric], convention, per_query=True)
        rb = evaluate(y, scores_b, qid, group, [metric], convention, per_query=True)
        name = next(iter(ra))  # the metric's canonical name (ndcg@10 -> NDCG@10)
        a, b = ra[name], rb[name]
    out = _native.paired_test(list(map(float, a)), list(map(float, b)), test or "ttest", alternative, seed)
    out["metric"] = name
    out["convention"] = convention
    out["queries"] = len(a)
    out["a"] = float(np.mean(a))
    out["b"] = float(np.mean(b))
    return out


def _compare_many(y, names, items, qid, group, metric, test, convention, seed, correction, baseline, alpha,
                  resamples, trials, format):
    if len(items) < 2:
        raise ValueError(f"comparing needs two runs or more, got {len(items)}")
    if _is_run_form(y):
        conv = convention or "trec"
        per = [evaluate(y, r, metrics=[metric], convention=conv, per_query=True) for r in items]
        name = next(iter(per[0]))
        values = [p[name] for p in per]
        shared = [q for q in values[0] if all(q in v for v in values)]
        if not shared:
            raise ValueError(f"the runs {', '.join(names)} share no evaluated query")
        for n, v in zip(names, values):
            if len(v) > len(shared):
                warnings.warn(f"{n}: {len(v) - len(shared)} evaluated queries left out, not answered by every run")
        matrix = [[float(v[q]) for q in shared] for v in values]
    else:
        conv = convention or "standard"
        per = [evaluate(y, s, qid, group, [metric], conv, per_query=True) for s in items]
        name = next(iter(per[0]))
        matrix = [[float(x) for x in p[name]] for p in per]
    text = _native.compare_many(names, matrix, name, conv, test, correction, baseline, float(alpha),
                                int(resamples), int(trials), int(seed), format)
    return json.loads(text) if format == "json" else text


def fuse(
    runs: Sequence[Any],
    method: str = "rrf",
    norm: str = "minmax",
    k: float = 60.0,
    weights: Optional[Sequence[float]] = None,
    tune_on: Any = None,
    measure: str = "nDCG@10",
) -> Dict[str, Any]:
    """Fuse runs into one, as ``ltr fuse``: ``rrf`` (with ``k``), ``combsum``, ``combmnz``, ``combmax``, ``borda`` or
    ``wsum``, after a per-query ``norm`` (``none``, ``minmax``, ``zscore``, ``sum``, ``rank``) for the score methods.
    Each run is a dict of dicts ``{qid: {docno: score}}`` or a DataFrame (``qid, docno, score``). ``weights``: one per
    run; or ``tune_on`` qrels (dict of dicts or DataFrame) to choose them from {0, 0.1, ..., 1} by ``measure``.
    Returns ``{"run": {qid: {docno: score}}, "weights": [...]}``, each query's documents best first."""
    if len(runs) < 2:
        raise ValueError(f"fusion needs two runs or more, got {len(runs)}")
    for r in runs:
        if not _is_run_form(r):
            raise ValueError("each run must be a dict of dicts {qid: {docno: score}} or a DataFrame")
    fused, used = _native.fuse_runs(
        [_run_queries(r) for r in runs],
        method,
        norm,
        float(k),
        None if weights is None else [float(w) for w in weights],
        None if tune_on is None else _qrels(tune_on),
        measure,
    )
    return {"run": {q: dict(docs) for q, docs in fused}, "weights": list(used)}
