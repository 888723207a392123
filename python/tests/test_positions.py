"""``fit(position=)``, as LightGBM's ``Dataset(position=)``: click sessions with display positions for LambdaMART's
position debiasing — the same model as ``ltr train`` with a ``.position`` file beside the data — and its bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

import ltrkit

from conftest import run


def sessions(n_sessions: int = 120, size: int = 8, seed: int = 4):
    """Position-based clicks ((1/(position+1)) examination, relevance from feature 0) on sessions shown in a
    production order that is feature 1's: X, clicks, group sizes and each row's 0-based position."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_sessions * size, 5)).astype(np.float32)
    y = np.zeros(len(X), dtype=np.float32)
    pos = np.zeros(len(X), dtype=np.int64)
    for s in range(n_sessions):
        rows = slice(s * size, (s + 1) * size)
        pos[rows] = np.argsort(np.argsort(-X[rows, 1]))
        relevant = 1 / (1 + np.exp(-3 * X[rows, 0]))
        examined = rng.random(size) < 1.0 / (pos[rows] + 1)
        y[rows] = (examined & (rng.random(size) < relevant)).astype(np.float32)
    return X, y, [size] * n_sessions, pos


def cli_on_a_position_file(ltr_bin, tmp_path, *args):
    """`ltr train ARGS --seed 2` on `sessions()` written as a LETOR file with its `.position` file beside it: the
    model file's JSON, the file's rows read back (X, y, qid) and the positions."""
    X, y, group, pos = sessions()
    data = tmp_path / "clicks.txt"
    ltrkit.save_svmlight(data, X, y, group=group)
    (tmp_path / "clicks.txt.position").write_text("".join(f"{p}\n" for p in pos))
    model = tmp_path / "m.json"
    run(ltr_bin, "train", "--train", data, *args, "--seed", "2", "--model", model)
    return json.loads(model.read_text()), ltrkit.load_svmlight(data), pos


def test_position_factors_from_python_equal_the_cli_with_a_position_file(ltr_bin, tmp_path):
    cli, (Xf, yf, qf), pos = cli_on_a_position_file(
        ltr_bin, tmp_path, "--algo", "lambdamart", "--param", "trees=15", "--param", "debias=position-factors"
    )
    ours = ltrkit.LambdaMART(trees=15, debias="position-factors", seed=2).fit(Xf, yf, qid=qf, position=pos)
    mine = json.loads(bytes(ours.model_.to_bytes(json=True)))
    assert mine["model"] == cli["model"]
    # The learned factors are in the diagnostics; the naive control on the same sessions is another model.
    naive = ltrkit.LambdaMART(trees=15, seed=2).fit(Xf, yf, qid=qf, position=pos)
    assert json.loads(bytes(naive.model_.to_bytes(json=True)))["model"] != mine["model"]


def test_bad_positions_are_refused():
    X, y, group, pos = sessions(n_sessions=10)
    m = ltrkit.LambdaMART(trees=2, debias="position-factors")
    with pytest.raises(ValueError, match="80 rows"):
        m.fit(X, y, group=group, position=pos[:-1])
    with pytest.raises(ValueError, match="from 0"):
        m.fit(X, y, group=group, position=pos - 1)
    with pytest.raises(ValueError, match="integer"):
        m.fit(X, y, group=group, position=pos.astype(float))
    twice = pos.copy()
    twice[1] = twice[0]
    with pytest.raises(Exception, match="two documents at position"):
        m.fit(X, y, group=group, position=twice)
    # Debiasing needs positions; a learner that does not read them refuses them by name.
    with pytest.raises(Exception, match="position"):
        m.fit(X, y, group=group)
    with pytest.raises(Exception, match="ranksvm"):
        ltrkit.RankSVM().fit(X, y, group=group, position=pos)


def test_neural_dla_from_python_equals_the_cli_with_a_position_file(ltr_bin, tmp_path):
    # The neural rankers take `position=` for DLA (`debias="dla"`), as `ltr train` takes a `.position` file.
    cli, (Xf, yf, qf), pos = cli_on_a_position_file(
        ltr_bin, tmp_path, "--algo", "neural", "--param", "sizes=8", "--param", "epochs=4", "--param", "debias=dla"
    )
    ours = ltrkit.MLPRanker(sizes="8", epochs=4, debias="dla", seed=2).fit(Xf, yf, qid=qf, position=pos)
    mine = json.loads(bytes(ours.model_.to_bytes(json=True)))
    assert mine["model"] == cli["model"]
    theta = json.loads(mine["diagnostics_json"])["position_bias"]["propensities"]
    assert len(theta) == 8 and theta[0] == 1.0
    # Without `debias="dla"` the network reads no sessions, and says so.
    with pytest.raises(Exception, match="one query per click"):
        ltrkit.MLPRanker(sizes="8", epochs=2).fit(Xf, yf, qid=qf, position=pos)
