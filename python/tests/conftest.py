"""Shared fixtures: the `ltr` binary (built by cargo when missing) and generated LETOR data."""

from __future__ import annotations

import os
import pathlib
import subprocess

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ltr_bin() -> pathlib.Path:
    """The `ltr` command, from $LTR_BIN or built with cargo (a no-op when `cargo test` already built it)."""
    env = os.environ.get("LTR_BIN")
    if env:
        return pathlib.Path(env)
    subprocess.run(["cargo", "build", "-q", "-p", "ltr-cli"], cwd=ROOT, check=True)
    return ROOT / "target" / "debug" / "ltr"


def read_letor(path: pathlib.Path, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense float32 features (an absent feature is 0, as `ltr` reads it), labels and query ids."""
    xs, ys, qids = [], [], []
    for line in path.read_text().splitlines():
        toks = line.split("#", 1)[0].split()
        if not toks:
            continue
        x = np.zeros(width, dtype=np.float32)
        for tok in toks[2:]:
            k, v = tok.split(":")
            if int(k) <= width:
                x[int(k) - 1] = np.float32(v)
        xs.append(x)
        ys.append(float(toks[0]))
        qids.append(int(toks[1].split(":")[1]))
    return np.array(xs), np.array(ys), np.array(qids)


def run(ltr_bin: pathlib.Path, *args: str) -> str:
    out = subprocess.run([str(ltr_bin), "--log", "warn", *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, f"ltr {args}: {out.stderr}"
    return out.stdout


@pytest.fixture(scope="session")
def letor_dir(ltr_bin, tmp_path_factory) -> pathlib.Path:
    """A generated LETOR-like train/vali/test set (query-normalised features in [0, 1])."""
    d = tmp_path_factory.mktemp("letor")
    run(ltr_bin, "generate", "--out", d, "--queries", "60", "--features", "12", "--seed", "5")
    return d


@pytest.fixture(scope="session")
def web_dir(ltr_bin, tmp_path_factory) -> pathlib.Path:
    """Generated raw web-style features (counts, BM25, heavy tails): the model stores a z-score."""
    d = tmp_path_factory.mktemp("web")
    run(ltr_bin, "generate", "--profile", "web", "--out", d, "--queries", "30", "--seed", "8")
    return d


def shared_datasets() -> pathlib.Path | None:
    p = pathlib.Path(os.environ.get("LTR_DATASETS", ROOT.parent / "shared" / "datasets"))
    return p if p.is_dir() else None
