"""Type stubs of the Rust extension module (python/src/lib.rs)."""

from typing import Dict, List, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

class Data:
    """A dataset built from numpy arrays: features, labels, query sizes and one id per query."""

    @staticmethod
    def dense(
        x: npt.NDArray[np.float32],
        y: Optional[npt.NDArray[np.float32]],
        group: List[int],
        qids: List[str],
        docids: Optional[List[str]] = None,
    ) -> "Data": ...
    @staticmethod
    def sparse(
        data: npt.NDArray[np.float32],
        indices: npt.NDArray[np.uint32],
        indptr: npt.NDArray[np.uint64],
        n_cols: int,
        y: Optional[npt.NDArray[np.float32]],
        group: List[int],
        qids: List[str],
        docids: Optional[List[str]] = None,
    ) -> "Data": ...
    def with_click_weights(
        self,
        weights: Optional[npt.NDArray[np.float64]] = None,
        propensities: Optional[npt.NDArray[np.float64]] = None,
    ) -> "Data": ...
    def with_positions(self, positions: npt.NDArray[np.uint32]) -> "Data": ...
    @property
    def n_rows(self) -> int: ...
    @property
    def n_features(self) -> int: ...
    @property
    def n_queries(self) -> int: ...

class Model:
    """A trained model: the model file `ltr train` writes."""

    def predict(self, data: Data, precision: str = "full") -> npt.NDArray[np.float64]: ...
    @property
    def needs_queries(self) -> bool: ...
    def to_bytes(self, json: bool = False) -> bytes: ...
    @staticmethod
    def from_bytes(bytes: bytes) -> "Model": ...
    def save(self, path: str) -> None: ...
    @staticmethod
    def load(path: str) -> "Model": ...
    def export(
        self, target: str, name: str = ..., feature_set: str = ..., missing: str = ...
    ) -> Tuple[Union[str, bytes], List[Tuple[str, Union[str, bytes]]], List[str]]: ...
    @property
    def algorithm(self) -> str: ...
    @property
    def params(self) -> Dict[str, str]: ...
    @property
    def n_features(self) -> int: ...
    def linear_weights(self) -> Optional[npt.NDArray[np.float64]]: ...
    def feature_importances(self) -> Optional[npt.NDArray[np.float64]]: ...
    def describe(self) -> str: ...

def load_svmlight(
    path: str, group_file: Optional[str] = None, regroup: bool = False, dense: Optional[bool] = None
) -> Dict[str, object]: ...
def save_svmlight(data: Data, path: str) -> None: ...
def algorithms_json() -> str: ...
def train(
    algo: str,
    params: List[str],
    train: Data,
    validation: Optional[Data] = None,
    metric: str = "NDCG@10",
    convention: str = "standard",
    seed: int = 1,
    normalize: str = "auto",
    log1p: Optional[str] = None,
    features: Optional[str] = None,
) -> Model: ...
def evaluate(
    data: Data, scores: npt.NDArray[np.float64], metrics: List[str], convention: str
) -> Dict[str, Tuple[float, npt.NDArray[np.float64]]]: ...
def paired_test(
    a: List[float], b: List[float], test: str = "ttest", alternative: str = "two-sided", seed: int = 1
) -> Dict[str, object]: ...
