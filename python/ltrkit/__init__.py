"""ltrkit: learning to rank in Rust, from Python.

Every learner of the ``ltr`` toolkit — RankSVM and RankSVM for IR, the committee perceptron, the Multiple Hyperplane
Ranker, the sigmoid meta-ranker, RankBoost, ListNet, Coordinate Ascent, AdaRank, linear LambdaRank and the online
SLAM perceptron — with scikit-learn conventions, numpy in and numpy out; the exact IR metrics of trec_eval and the
LETOR scripts; paired significance tests. Training goes through the same Rust registry as the ``ltr`` command, so a
model saved here is the file ``ltr predict`` reads, and the other way round.

>>> from ltrkit import RankSVM, load_svmlight, evaluate
>>> X, y, qid = load_svmlight("train.txt")                      # doctest: +SKIP
>>> model = RankSVM(c=[0.01, 0.1, 1]).fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv])  # doctest: +SKIP
>>> evaluate(yt, model.predict(Xt), qid=qt, metrics=["NDCG@10", "MAP"])  # doctest: +SKIP
"""

from ._data import group_sizes, load_svmlight, save_svmlight
from ._estimators import Ranker, algorithms, load_model
from ._families import *  # noqa: F401,F403 - one class per algorithm
from ._families import __all__ as _family_names
from ._native import __version__
from .metrics import compare, evaluate, fuse
from .selection import make_scorer

__all__ = [
    "Ranker",
    "algorithms",
    "compare",
    "evaluate",
    "fuse",
    "group_sizes",
    "load_model",
    "load_svmlight",
    "make_scorer",
    "save_svmlight",
    "__version__",
    *_family_names,
]


def __getattr__(name: str):
    """``ltrkit.pt`` (the PyTerrier integration) is imported on first use, so that ``import ltrkit`` never needs
    PyTerrier."""
    if name == "pt":
        import importlib

        return importlib.import_module(".pt", __name__)
    raise AttributeError(f"module 'ltrkit' has no attribute {name!r}")
