"""Data in and out: LETOR/SVMlight files to numpy (and back), and numpy inputs checked and handed to Rust."""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _native

try:  # scipy is optional: only sparse files and sparse X need it.
    import scipy.sparse as _sp
except ImportError:  # pragma: no cover - exercised only without scipy
    _sp = None

ArrayLike = Any
PathLike = Union[str, "os.PathLike[str]"]


def load_svmlight(
    path: PathLike,
    group_file: Optional[PathLike] = None,
    *,
    regroup: bool = False,
    dense: Optional[bool] = None,
    return_docids: bool = False,
):
    """Read a LETOR/SVMlight file with the Rust parser.

    Returns ``(X, y, qid)``: ``X`` a C-contiguous ``float32`` array, or a ``scipy.sparse.csr_matrix`` when the file
    is sparse (fewer than a third of the cells stored; ``dense=True``/``False`` forces the form), ``y`` the labels
    (``float32``) and ``qid`` one query id per row (``int64`` when every id is an integer, else ``str``). A file
    without ``qid:`` tokens is grouped by ``group_file`` (one query size per line) or by ``PATH.query`` beside it
    (the LightGBM/XGBoost convention). A qid that reappears after other queries is an error unless ``regroup``.
    With ``return_docids`` a fourth item holds each row's ``#docid`` (or ``None``).
    """
    parts = _native.load_svmlight(
        os.fspath(path),
        None if group_file is None else os.fspath(group_file),
        regroup,
        dense,
    )
    if "x" in parts:
        X = parts["x"]
    else:
        if _sp is None:
            raise ImportError(
                f"{path} is sparse: install scipy to receive it as a csr_matrix, or pass dense=True"
            )
        X = _sp.csr_matrix((parts["data"], parts["indices"], parts["indptr"]), shape=parts["shape"])
    qid = _qid_per_row(parts["qids"], parts["group"])
    if return_docids:
        return X, parts["y"], qid, parts["docids"]
    return X, parts["y"], qid


def save_svmlight(
    path: PathLike,
    X: ArrayLike,
    y: ArrayLike,
    qid: Optional[ArrayLike] = None,
    group: Optional[ArrayLike] = None,
    docids: Optional[Sequence[str]] = None,
) -> None:
    """Write ``X``, ``y`` and the queries (``qid`` per row or ``group`` sizes) as a LETOR/SVMlight file,
    atomically, with ``#docid = …`` comments when ``docids`` are given."""
    data = native_data(X, y, qid, group, docids=docids, require_queries=True)
    _native.save_svmlight(data, os.fspath(path))


def group_sizes(qid: ArrayLike) -> np.ndarray:
    """Query sizes in row order (LightGBM's ``group``) from one id per row (XGBoost's ``qid``); a query's rows must be
    contiguous."""
    q = np.asarray(qid)
    return np.asarray(queries_of(len(q), q, None, "qid")[0], dtype=np.int64)


def _qid_per_row(qids: Sequence[str], group: np.ndarray) -> np.ndarray:
    try:
        ids = np.array([int(q) for q in qids], dtype=np.int64)
    except ValueError:
        ids = np.array(qids, dtype=object)
    return np.repeat(ids, np.asarray(group, dtype=np.int64))


def queries_of(
    n_rows: int, qid: Optional[ArrayLike], group: Optional[ArrayLike], what: str = "X"
) -> Tuple[list, list]:
    """Group sizes and one id per query from XGBoost's ``qid`` (one per row; each query's rows contiguous) or
    LightGBM's ``group`` (sizes in row order)."""
    if qid is not None and group is not None:
        raise ValueError("give qid (one per row) or group (query sizes), not both")
    if group is not None:
        sizes = np.asarray(group)
        if sizes.ndim != 1 or not np.issubdtype(sizes.dtype, np.integer):
            raise ValueError(f"group must be a 1-d array of integer query sizes, got dtype {sizes.dtype}")
        if (sizes <= 0).any():
            raise ValueError("group sizes must be positive")
        if int(sizes.sum()) != n_rows:
            raise ValueError(f"the group sizes add up to {int(sizes.sum())} rows but {what} has {n_rows}")
        return [int(s) for s in sizes], [str(i) for i in range(len(sizes))]
    if qid is None:
        raise ValueError(f"{what}: give qid (one query id per row) or group (query sizes)")
    q = np.asarray(qid)
    if q.ndim != 1 or len(q) != n_rows:
        raise ValueError(f"qid must have one id per row of {what} ({n_rows}), got shape {q.shape}")
    if n_rows == 0:
        raise ValueError(f"{what} has no rows")
    change = np.flatnonzero(q[1:] != q[:-1]) + 1
    starts = np.concatenate(([0], change))
    ids = q[starts]
    if len(set(ids.tolist())) != len(ids):
        seen: dict = {}
        for s, i in zip(starts.tolist(), ids.tolist()):
            if i in seen:
                raise ValueError(
                    f"qid {i!r} reappears at row {s} after other queries (its rows start at {seen[i]}): "
                    "rows of one query must be contiguous — sort by qid (a stable sort keeps the order within a query)"
                )
            seen[i] = s
    sizes = np.diff(np.concatenate((starts, [n_rows])))
    return [int(s) for s in sizes], [str(i) for i in ids.tolist()]


def native_data(
    X: ArrayLike,
    y: Optional[ArrayLike],
    qid: Optional[ArrayLike] = None,
    group: Optional[ArrayLike] = None,
    *,
    docids: Optional[Sequence[str]] = None,
    require_queries: bool = True,
    chunk: int = 4096,
):
    """Hand ``X`` (dense or scipy sparse), ``y`` and the queries to Rust. Dense ``float32`` C-contiguous input is
    passed without conversion; anything else is converted once. Without queries (``require_queries=False``, for
    scoring models that score documents independently) rows are grouped in fixed blocks so scoring runs in
    parallel."""
    sparse = _sp is not None and _sp.issparse(X)
    n_rows = X.shape[0] if (sparse or hasattr(X, "shape")) else len(X)
    if not sparse:
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError(f"X must be 2-d (rows × features), got shape {X.shape}")
        if X.dtype == object or not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise ValueError(f"X must be numeric, got dtype {X.dtype}")
        n_rows = X.shape[0]
    if y is not None:
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != n_rows:
            raise ValueError(f"y must have one label per row of X ({n_rows}), got shape {y.shape}")
        y = np.ascontiguousarray(y, dtype=np.float32)
    if qid is None and group is None and not require_queries:
        sizes = [min(chunk, n_rows - s) for s in range(0, n_rows, chunk)]
        ids = [str(i) for i in range(len(sizes))]
    else:
        sizes, ids = queries_of(n_rows, qid, group)
    docs = None if docids is None else [str(d) for d in docids]
    if sparse:
        m = _sp.csr_matrix(X)
        if not m.has_sorted_indices:
            m = m.sorted_indices()
        m.sum_duplicates()
        return _native.Data.sparse(
            np.ascontiguousarray(m.data, dtype=np.float32),
            np.ascontiguousarray(m.indices, dtype=np.uint32),
            np.ascontiguousarray(m.indptr, dtype=np.uint64),
            int(m.shape[1]),
            y,
            sizes,
            ids,
            docs,
        )
    return _native.Data.dense(np.ascontiguousarray(X, dtype=np.float32), y, sizes, ids, docs)
