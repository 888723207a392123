"""The allRank loss fixtures (`crates/ltr-neural/tests/fixtures/allrank_losses.json`, which the Rust tests read) are
regenerated from allRank's loss functions and compared with the committed numbers. Needs torch and an allRank source
checkout named by ALLRANK_SRC; skipped with the reason otherwise."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "crates" / "ltr-neural" / "tests" / "fixtures"


def test_fixtures_are_what_allrank_computes():
    pytest.importorskip("torch", reason="torch is not installed: the allRank loss fixtures are not regenerated")
    src = os.environ.get("ALLRANK_SRC")
    if not src or not (pathlib.Path(src) / "allrank" / "models" / "losses").is_dir():
        pytest.skip("ALLRANK_SRC does not name an allRank source checkout: the loss fixtures are not regenerated")
    out = subprocess.run(
        [sys.executable, str(FIXTURES / "make_allrank_losses.py"), "--check"],
        capture_output=True,
        text=True,
        env={**os.environ, "ALLRANK_SRC": src},
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert ", 0 differ" in out.stdout
