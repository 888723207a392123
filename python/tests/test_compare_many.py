"""``ltrkit.compare`` with many runs mirrors ``ltr compare --run ... --format json``: the same JSON for the same
runs, seed and trials; the paired-test form's corrections are statsmodels' (checked in Rust) and its raw p-values
scipy's; bad inputs raise ValueError."""

import json
import math
import random

import numpy as np
import pytest
from scipy import stats

import ltrkit
from conftest import run


def make_runs():
    """Four runs of 30 queries, one relevant document each: run r ranks it at a seeded position."""
    rng = random.Random(5)
    qrels = {f"q{q}": {"rel": 1, "n1": 0} for q in range(30)}
    spread = {"bm25": 6, "rm3": 5, "bert": 2, "random": 10}
    runs = {}
    for name, top in spread.items():
        runs[name] = {}
        for q in range(30):
            at = rng.randint(1, top)
            docs = [f"n{i}" for i in range(1, 10)]
            docs.insert(at - 1, "rel")
            runs[name][f"q{q}"] = {d: 20.0 - i for i, d in enumerate(docs)}
    return qrels, runs


def write_trec(path, run_dict, tag):
    with open(path, "w") as f:
        for q, docs in run_dict.items():
            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])):
                f.write(f"{q} Q0 {d} {i + 1} {s} {tag}\n")


def test_many_runs_equal_the_cli(ltr_bin, tmp_path):
    qrels, runs = make_runs()
    with open(tmp_path / "qrels.txt", "w") as f:
        for q, docs in qrels.items():
            for d, r in docs.items():
                f.write(f"{q} 0 {d} {r}\n")
    args = ["compare", "--qrels", tmp_path / "qrels.txt", "--measure", "RR", "--format", "json", "--trials", "5000"]
    for name, r in runs.items():
        write_trec(tmp_path / f"{name}.trec", r, name)
        args += ["--run", tmp_path / f"{name}.trec"]
    cli = json.loads(run(ltr_bin, *args))
    ours = ltrkit.compare(qrels, runs, metric="RR", trials=5000)
    assert ours == cli
    # The means are the mean reciprocal ranks of the runs' constructions.
    for r, entry in zip(runs.values(), ours["runs"]):
        rr = [1.0 / (sorted(d, key=lambda k: -d[k]).index("rel") + 1) for d in r.values()]
        assert entry["mean"] == pytest.approx(sum(rr) / len(rr), abs=1e-12)
    assert ours["test"] == "tukey-hsd" and ours["baseline"] == "bm25"
    assert len(ours["pairs"]) == 6
    # Markdown and LaTeX are text.
    md = ltrkit.compare(qrels, runs, metric="RR", trials=5000, format="markdown")
    assert "| run | mean | 95% CI | vs baseline |" in md
    assert "\\toprule" in ltrkit.compare(qrels, runs, metric="RR", trials=5000, format="latex")


def test_many_score_arrays_with_paired_tests_match_scipy():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 200)
    qid = np.repeat(np.arange(20), 10)
    scores = [y + rng.normal(0, s, 200) for s in (1.0, 0.5, 3.0)]
    out = ltrkit.compare(y, scores, qid=qid, metric="NDCG@10", test="ttest", correction="bonferroni")
    assert [r["name"] for r in out["runs"]] == ["run1", "run2", "run3"]
    per = [ltrkit.evaluate(y, s, qid=qid, metrics=["NDCG@10"], per_query=True)["NDCG@10"] for s in scores]
    for p in out["pairs"]:
        a, b = int(p["a"][3:]) - 1, int(p["b"][3:]) - 1
        want = stats.ttest_rel(per[a], per[b]).pvalue
        assert p["p_value"] == pytest.approx(want, rel=1e-9)
        assert p["p_adjusted"] == pytest.approx(min(1.0, 3 * want), rel=1e-9)
        d = np.asarray(per[a]) - np.asarray(per[b])
        assert p["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-9)
    assert out["correction"] == "bonferroni"


def test_bad_inputs_raise_value_error():
    qrels, runs = make_runs()
    with pytest.raises(ValueError, match="two runs or more"):
        ltrkit.compare(qrels, {"bm25": runs["bm25"]})
    with pytest.raises(ValueError, match="unknown test `anova`"):
        ltrkit.compare(qrels, runs, test="anova")
    with pytest.raises(ValueError, match="unknown correction `sidak`"):
        ltrkit.compare(qrels, runs, test="ttest", correction="sidak")
    with pytest.raises(ValueError, match="baseline `x` is none of the runs"):
        ltrkit.compare(qrels, runs, baseline="x")
    # Runs over different queries: compared on the shared ones, with a warning.
    partial = {q: d for q, d in runs["bert"].items() if q != "q0"}
    with pytest.warns(UserWarning, match="1 evaluated queries left out"):
        out = ltrkit.compare(qrels, [runs["bm25"], partial])
    assert out["queries"] == 29
    assert not math.isnan(out["runs"][0]["mean"])
