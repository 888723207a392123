"""scikit-learn-style rankers over the Rust registry. ``Ranker`` trains any algorithm by name; the per-family
classes in ``_families`` (generated from the registry) give each algorithm its own named parameters."""

from __future__ import annotations

import functools
import inspect
import json
import os
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _native
from ._data import native_data

try:  # scikit-learn is optional; with it, rankers are BaseEstimators (metadata routing, repr, clone checks).
    from sklearn.base import BaseEstimator as _Base
except ImportError:  # pragma: no cover - exercised only without scikit-learn
    _Base = object

#: Estimator settings that are not algorithm parameters.
COMMON = ("metric", "convention", "seed", "normalize", "log1p", "params")


def param_text(value: Any) -> str:
    """A Python value as the registry reads it: booleans as true/false, lists and tuples as a comma grid."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(param_text(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    return str(value)


_NO_QUERIES = (
    "{what} needs the queries: give qid (one id per row) or group (query sizes), or X as a pandas DataFrame with a "
    "qid column; under scikit-learn's metadata routing, request them (set_{what}_request(qid=True))"
)


def qid_column(X: Any, qid: Any, group: Any, what: str = "X") -> Tuple[Any, Any]:
    """XGBoost's convention for scikit-learn tools that pass only ``X`` and ``y`` (cross-validation and grid search
    without metadata routing): a pandas DataFrame ``X`` with a ``qid`` column carries the query ids, its other
    columns are the features. Anything else is returned as it is."""
    columns = getattr(X, "columns", None)
    if columns is None or not hasattr(X, "drop") or "qid" not in list(columns):
        return X, qid
    if qid is not None or group is not None:
        raise ValueError(f"{what} has a qid column and qid or group were given too: give the queries once")
    return X.drop(columns=["qid"]).to_numpy(), X["qid"].to_numpy()


class Ranker(_Base):
    """A learning-to-rank model trained by the Rust registry (the same training as ``ltr train``).

    ``Ranker(algo="ranksvm", c=[0.01, 0.1, 1])``: algorithm parameters are keyword arguments (``max_iter`` for
    ``max-iter``); a list is a grid chosen on the validation set given to :meth:`fit` as ``eval_set``. ``metric`` and
    ``convention`` choose grids, epochs and rounds on validation; ``normalize`` (``auto``, ``none``, ``zscore``,
    ``minmax``, ``query-zscore``, ``query-minmax``, ``query-sum``) and ``log1p`` (feature list such as ``"1-5,12"``)
    are fitted on the training data and stored in the model, so :meth:`predict` takes raw features. ``params`` takes
    registry names verbatim (``{"seed-c": 0.01}``). ``ltrkit.algorithms()`` lists every algorithm and parameter.
    """

    _algo: ClassVar[Optional[str]] = None
    #: Python parameter name → registry name, for the generated per-family classes.
    _param_map: ClassVar[Dict[str, str]] = {}
    #: Registry settings a class fixes (the neural scorers' classes fix ``scorer``).
    _fixed: ClassVar[Dict[str, str]] = {}

    def __init__(
        self,
        algo: str = "ranksvm",
        *,
        metric: str = "NDCG@10",
        convention: str = "standard",
        seed: int = 1,
        normalize: str = "auto",
        log1p: Optional[str] = None,
        params: Optional[Dict[str, Any]] = None,
        **algorithm_params: Any,
    ) -> None:
        self.algo = algo
        self.metric = metric
        self.convention = convention
        self.seed = seed
        self.normalize = normalize
        self.log1p = log1p
        self.params = params
        self._extra = sorted(algorithm_params)
        for k, v in algorithm_params.items():
            setattr(self, k, v)

    # -- scikit-learn parameter protocol ------------------------------------------------------------------------
    @classmethod
    def _named_params(cls) -> List[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        ]

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor's parameters (and, for ``Ranker``, every algorithm parameter given)."""
        names = self._named_params() + list(getattr(self, "_extra", []))
        return {n: getattr(self, n) for n in names}

    def set_params(self, **params: Any) -> "Ranker":
        """Set parameters; ``Ranker`` accepts any algorithm parameter, the per-family classes only their own."""
        known = set(self._named_params())
        for k, v in params.items():
            if k not in known:
                if type(self)._algo is not None:
                    raise ValueError(
                        f"{type(self).__name__} has no parameter {k!r}; its parameters: {', '.join(sorted(known))}"
                    )
                if k not in self._extra:
                    self._extra = sorted(self._extra + [k])
            setattr(self, k, v)
        return self

    def _algorithm(self) -> str:
        return type(self)._algo or self.algo

    def _registry_params(self) -> List[str]:
        # A variant class's fixed setting (``AttentionRanker``: scorer=attention) comes first.
        out = [f"{k}={v}" for k, v in type(self)._fixed.items()]
        names = [n for n in self._named_params() if n not in COMMON and n != "algo"]
        names += list(getattr(self, "_extra", []))
        for n in names:
            v = getattr(self, n)
            if v is None:
                continue
            key = type(self)._param_map.get(n, n.rstrip("_").replace("_", "-"))
            out.append(f"{key}={param_text(v)}")
        for k, v in (self.params or {}).items():
            out.append(f"{k}={param_text(v)}")
        return out

    # -- training and scoring -----------------------------------------------------------------------------------
    def fit(
        self,
        X: Any,
        y: Any,
        qid: Any = None,
        group: Any = None,
        eval_set: Optional[Sequence[Tuple[Any, Any]]] = None,
        eval_qid: Optional[Sequence[Any]] = None,
        eval_group: Optional[Sequence[Any]] = None,
        group_weight: Any = None,
        group_propensity: Any = None,
        position: Any = None,
    ) -> "Ranker":
        """Train on ``X`` (rows × features, dense or scipy sparse) with labels ``y`` and queries given either as
        ``qid`` (one id per row, XGBoost) or ``group`` (query sizes, LightGBM), or as a ``qid`` column of a pandas
        DataFrame ``X`` (XGBoost's form for scikit-learn tools that pass only ``X`` and ``y``); a query's rows must
        be contiguous.
        A NaN in ``X`` is a missing value to the learners whose class says so (the trees); the others refuse it, and
        every learner refuses an infinity.
        ``eval_set=[(X_val, y_val)]`` with ``eval_qid=[qid_val]`` or ``eval_group=[group_val]`` is the validation
        set (grids, epochs, rounds). The GIL is released while training.

        Click training sets (``PropensityRankSVM``; ``LambdaRank``, ``ListNet`` and the neural rankers with click
        weights): each query is one click, its clicked document labelled 1 and the other displayed documents 0;
        ``group_propensity`` gives the examination probability of the rank each click happened at, ``group_weight``
        how many identical clicks a query stands for (one value per query, in query order). ``LambdaRank``,
        ``ListNet`` and the neural rankers with ``debias="dr"`` take the doubly robust set instead: ``y`` each
        document's relevance estimate and ``group_weight`` each query's sessions, without ``group_propensity``
        (``ltr train --clicks LOG --param debias=dr`` builds it from a log).

        Click sessions with positions (``LambdaMART`` with ``debias``), as LightGBM's ``Dataset(position=)``: ``y``
        are clicks, each query a session, and ``position`` the position each row was displayed at (0 = the top;
        non-negative integers, distinct within a query, one per row). A learner that does not read positions
        refuses them by name."""
        X, qid = qid_column(X, qid, group)
        train = native_data(X, y, qid, group)
        if position is not None:
            train = train.with_positions(_positions(position, train.n_rows))
        if group_weight is not None or group_propensity is not None:
            as_f64 = lambda v: None if v is None else np.ascontiguousarray(v, dtype=np.float64)
            train = train.with_click_weights(as_f64(group_weight), as_f64(group_propensity))
        validation = None
        if eval_set:
            if len(eval_set) != 1:
                raise ValueError(f"eval_set takes one validation set, got {len(eval_set)}")
            Xv, yv = eval_set[0]
            qv = eval_qid[0] if eval_qid else None
            gv = eval_group[0] if eval_group else None
            Xv, qv = qid_column(Xv, qv, gv, "eval_set X")
            validation = native_data(Xv, yv, qv, gv)
        self.model_ = _native.train(
            self._algorithm(),
            self._registry_params(),
            train,
            validation,
            self.metric,
            self.convention,
            int(self.seed),
            self.normalize,
            self.log1p,
        )
        self.n_features_in_ = train.n_features
        return self

    def _model(self):
        model = getattr(self, "model_", None)
        if model is None:
            raise ValueError(f"this {type(self).__name__} is not fitted yet: call fit (or load a model) first")
        return model

    def predict(self, X: Any, qid: Any = None, group: Any = None, precision: str = "full") -> np.ndarray:
        """Scores of the rows of ``X`` (raw features; the stored preprocessing is applied), as ``float64``. Models
        whose scores depend on the rest of the query (rank aggregates, per-query normalisation) need ``qid`` or
        ``group``. ``precision="bf16"`` scores a neural model with its hidden layers' products in bfloat16 (about
        twice as fast on CPUs with AVX-512 BF16; each score moves by about 1e-3 of the scores' scale), as ``ltr
        predict --precision bf16`` does; ``precision="int8"`` runs them in 8-bit integers (about 1.8 times as fast
        with AVX2; scores move by about 1e-2); ``"full"`` (the default) scores as trained."""
        model = self._model()
        X, qid = qid_column(X, qid, group)
        if model.needs_queries and qid is None and group is None:
            raise ValueError(
                f"a {model.algorithm} model with this setting scores documents relative to their query: give qid or group"
            )
        data = native_data(X, None, qid, group, require_queries=False)
        return model.predict(data, precision)

    def score(self, X: Any, y: Any, qid: Any = None, group: Any = None) -> float:
        """Mean of this ranker's ``metric`` (NDCG@10 unless set) over the queries of :meth:`predict`'s ranking,
        under its ``convention``: what scikit-learn's model selection maximises. The queries are ``qid``,
        ``group`` or a ``qid`` column of a DataFrame ``X``."""
        from .metrics import evaluate

        X, qid = qid_column(X, qid, group)
        if qid is None and group is None:
            raise ValueError(_NO_QUERIES.format(what="score"))
        s = self.predict(X, qid=qid, group=group)
        # One measure: its value, whatever name evaluate files it under (AP and map are MAP).
        (value,) = evaluate(y, s, qid=qid, group=group, metrics=[self.metric], convention=self.convention).values()
        return float(value)

    # -- model attributes ----------------------------------------------------------------------------------------
    @property
    def coef_(self) -> np.ndarray:
        """Weights of a linear model over its input columns (after the stored preprocessing)."""
        w = self._model().linear_weights()
        if w is None:
            raise AttributeError(f"a {self._model().algorithm} model is not linear: it has no coef_")
        return w

    @property
    def feature_importances_(self) -> np.ndarray:
        """Share of the model's importance on each raw feature (sums to 1): the absolute weight of a linear model,
        the summed training gain of the splits of a tree ensemble (``lambdamart``, ``mart``, ``random-forest``)."""
        imp = self._model().feature_importances()
        if imp is None:
            raise AttributeError("this model (trees read from RankLib) has no feature importances")
        return imp

    @property
    def best_iteration_(self) -> int:
        """Boosting rounds kept (``lambdamart``, ``mart``): the round best on validation, else every round."""
        text = self.fit_report_.get("diagnostics_json") or "{}"
        d = json.loads(text)
        if not isinstance(d, dict) or "best_iteration" not in d:
            raise AttributeError(f"a {self._model().algorithm} model has no best_iteration_")
        return int(d["best_iteration"])

    @property
    def best_params_(self) -> Dict[str, Any]:
        """The algorithm setting kept (chosen on validation when a grid was given), by registry name, each value of
        its parameter's type (``{"trees": 50, "learning-rate": 0.1, "c": "default", "shuffle": True}``): ``int``,
        ``float``, ``bool``, or ``str`` for choices and text; ``c`` is a float or the word ``default``. Only the
        parameters given are listed (an empty dict: every default)."""
        model = self._model()
        return typed_params(model.algorithm, dict(model.params))

    @property
    def fit_report_(self) -> Dict[str, Any]:
        """What the model file records: algorithm, parameters, fit report (iterations, objective, validation),
        preprocessing and training summary."""
        return json.loads(self._model().describe())

    # -- files and pickling --------------------------------------------------------------------------------------
    def save(self, path: "os.PathLike[str] | str") -> None:
        """Write the model file (``.json``: JSON, else binary), the same file ``ltr train`` writes and
        ``ltr predict`` reads; atomic."""
        self._model().save(os.fspath(path))

    @classmethod
    def load(cls, path: "os.PathLike[str] | str") -> "Ranker":
        """A fitted ranker from a model file written by ``save``, ``ltr train``, RankLib, LightGBM (model text or
        JSON dump) or XGBoost (JSON)."""
        model = _native.Model.load(os.fspath(path))
        obj = cls() if cls._algo is not None else cls(model.algorithm)
        if cls._algo is not None and cls._algo != model.algorithm:
            raise ValueError(f"{path} holds a {model.algorithm} model, not {cls._algo}")
        obj.model_ = model
        obj.n_features_in_ = model.n_features
        return obj

    def export(
        self,
        to: str,
        path: "os.PathLike[str] | str | None" = None,
        name: str = "ltr_model",
        feature_set: str = "ltr_features",
        missing: str = "note",
    ) -> "str | bytes":
        """The model in a search engine's format, as ``ltr export --to TO`` writes it (es-ltr, opensearch-ltr,
        es8-ltr, solr-ltr, vespa, ranklib, onnx). With ``path``, also writes it there, and its side files (Solr's
        feature store; for Vespa, a tree model's XGBoost JSON or a neural network's ONNX graph) next to it as
        ``path + suffix``. ``missing="strict"`` refuses when the engine treats a missing feature or NaN otherwise
        than ``predict``. Returns the model text (bytes for ONNX: ``onnxruntime.InferenceSession(data)`` reads
        them)."""
        text, side, notes = self._model().export(to, name=name, feature_set=feature_set, missing=missing)
        for note in notes:
            import warnings

            warnings.warn(f"{to}: {note}", stacklevel=2)
        if path is not None:
            base = os.fspath(path)
            with open(base, "wb" if isinstance(text, bytes) else "w") as f:
                f.write(text)
            for suffix, body in side:
                with open(base + suffix, "wb") as f:
                    f.write(body.encode() if isinstance(body, str) else body)
        return text

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        if state.get("model_") is not None:
            state["model_"] = bytes(state["model_"].to_bytes())
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        if isinstance(state.get("model_"), bytes):
            state["model_"] = _native.Model.from_bytes(state["model_"])
        self.__dict__.update(state)


def algorithms() -> List[Dict[str, Any]]:
    """Every algorithm of the registry with its parameters, defaults, allowed values and documentation."""
    return json.loads(_native.algorithms_json())


@functools.lru_cache(maxsize=None)
def _specs() -> Dict[str, Dict[str, Dict[str, Any]]]:
    """Registry name → parameter name → its spec (``allowed``, ``when``, …), read once."""
    return {a["name"]: {p["name"]: p for p in a["params"]} for a in algorithms()}


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def typed_value(allowed: Dict[str, Any], text: str) -> Any:
    """A parameter's text (as the model file keeps it) as the Python value of its registry kind. Text the kind
    does not read back (which the registry would not have accepted) stays text; an empty value is ``None``."""
    kind = allowed.get("kind")
    if kind in ("choice", "text"):
        return text
    if text == "":
        return None
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "c-value":
            return text if text == "default" else float(text)
        if kind == "bool" and text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
    except ValueError:
        pass
    return text


def typed_params(algo: str, params: Dict[str, str]) -> Dict[str, Any]:
    """A model's ``params`` (registry names → text) typed by the registry's parameter specs. A start algorithm's
    parameters (``seed-c`` of the sigmoid, ``init-trees`` of LambdaMART: a ``PREFIX-KEY`` spec) are typed by the
    specs of that algorithm (``PREFIX-algo``, else the one the spec is read under). Algorithms the registry does
    not know (models read from RankLib, LightGBM, XGBoost) keep their text."""
    specs = _specs().get(algo)
    if specs is None:
        return dict(params)
    out: Dict[str, Any] = {}
    for name, text in params.items():
        spec = specs.get(name)
        if spec is not None:
            out[name] = typed_value(spec["allowed"], text)
            continue
        out[name] = text
        for key_spec in specs.values():
            prefix = key_spec["name"][: -len("KEY")] if key_spec["name"].endswith("-KEY") else None
            if prefix is None or not name.startswith(prefix):
                continue
            when = key_spec.get("when") or ""
            start = params.get(prefix + "algo")
            if not start and when.startswith(prefix + "algo="):
                start = when.split("=", 1)[1]
            inner = typed_params(start, {name[len(prefix) :]: text}) if start in _specs() else {}
            if inner:
                out[name] = next(iter(inner.values()))
            break
    return out


def load_model(path: "os.PathLike[str] | str") -> Ranker:
    """Any model ``ltr predict`` reads, as a fitted :class:`Ranker` with ``predict``: files of ``ltr train`` or
    ``save``, RankLib ensembles, LightGBM model text or JSON dumps, XGBoost JSON models."""
    return Ranker.load(path)


def _positions(position: Any, n_rows: int) -> np.ndarray:
    """``fit``'s ``position``, checked: one non-negative integer per row (LightGBM's ``position``)."""
    p = np.asarray(position)
    if p.ndim != 1 or not (np.issubdtype(p.dtype, np.integer) or p.size == 0):
        raise ValueError(f"position must be a 1-d array of integer positions, got shape {p.shape} dtype {p.dtype}")
    if len(p) != n_rows:
        raise ValueError(f"position has {len(p)} values but X has {n_rows} rows")
    if len(p) and (p.min() < 0 or p.max() > np.iinfo(np.uint32).max):
        raise ValueError(f"positions must be integers from 0 (the top), got {int(p.min())}")
    return np.ascontiguousarray(p, dtype=np.uint32)
