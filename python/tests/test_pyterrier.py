"""PyTerrier (python-terrier 1.x): ``ltrkit.pt.reranker`` as a learned reranker over a ``features`` column, fitted
through ``pipeline.fit(topics, qrels)``, and ltrkit's measures in ``pt.Experiment``. The retrieval stage is a
prebuilt result frame (``pt.Transformer.from_df``) of the generated LETOR set, so no index, Java or network is
needed; the reranker's model and scores must equal ``LambdaMART().fit`` on the same arrays bit for bit, and the
measures ``ltrkit.evaluate`` and pytrec_eval's. Skips with a printed reason when pyterrier is not installed."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import ltrkit

try:
    import pyterrier as pt
except ImportError:  # pragma: no cover - the test venv installs it
    pt = None
    print("SKIP: pyterrier is not installed (pip install python-terrier): the PyTerrier tests do not run")

needs_pt = pytest.mark.skipif(pt is None, reason="SKIP: pyterrier is not installed (pip install python-terrier)")


def results(path, prefix):
    """A PyTerrier result frame (qid, docno, score, rank, features) of one LETOR file, its topics and qrels."""
    X, y, q = ltrkit.load_svmlight(path)
    qid = np.array([f"{prefix}{v}" for v in q])
    docno = np.array([f"{prefix}{v}-{i}" for i, v in enumerate(q)])
    res = pd.DataFrame({"qid": qid, "docno": docno, "score": X[:, 0].astype(np.float64)})
    res["features"] = list(X.astype(np.float64))
    res["rank"] = res.groupby("qid", sort=False)["score"].rank(ascending=False, method="first").astype(int) - 1
    topics = pd.DataFrame({"qid": pd.unique(qid), "query": "q"})
    qrels = pd.DataFrame({"qid": qid, "docno": docno, "label": y.astype(int)})
    return res, topics, qrels, (X, y, q)


def test_import_ltrkit_never_imports_pyterrier():
    # Installed or not, `import ltrkit` leaves PyTerrier (and ir_measures) unimported.
    code = "import sys, ltrkit; print(sorted(m for m in ('pyterrier', 'ir_measures') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "[]", (out.stdout, out.stderr)
    # Absent, ltrkit.pt says what to install.
    code = (
        "import sys; sys.modules['pyterrier'] = None\n"  # as if it were not installed
        "import ltrkit\n"
        "try:\n    ltrkit.pt\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "ltrkit.pt needs PyTerrier" in out.stdout


@needs_pt
def test_reranker_fits_through_the_pipeline_as_the_estimator_would(letor_dir):
    tr, tr_topics, tr_qrels, (X, y, q) = results(letor_dir / "train.txt", "t")
    va, va_topics, va_qrels, (Xv, yv, qv) = results(letor_dir / "vali.txt", "v")
    te, te_topics, te_qrels, (Xt, _, qt) = results(letor_dir / "test.txt", "e")
    retrieve = pt.Transformer.from_df(pd.concat([tr, va, te], ignore_index=True))
    qrels = pd.concat([tr_qrels, va_qrels, te_qrels], ignore_index=True)
    params = dict(trees=20, leaves=7, min_docs_in_leaf=5, stop_after=5)
    rerank = ltrkit.pt.reranker(ltrkit.LambdaMART(**params))
    pipeline = retrieve >> rerank
    pipeline.fit(tr_topics, qrels, va_topics, qrels)
    direct = ltrkit.LambdaMART(**params).fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    fitted = json.loads(bytes(rerank.ranker.model_.to_bytes(json=True)))
    want = json.loads(bytes(direct.model_.to_bytes(json=True)))
    for key in ("algorithm", "params", "fit", "model", "preprocess", "n_features"):
        assert fitted[key] == want[key], key
    out = pipeline.transform(te_topics)
    assert {"score", "rank", "features"} <= set(out.columns) and len(out) == len(Xt)
    want = dict(zip(te["docno"], direct.predict(Xt, qid=qt)))
    np.testing.assert_array_equal(out["score"].to_numpy(), [want[d] for d in out["docno"]])
    # Ranks follow the new scores within each query (0 first, PyTerrier's FIRST_RANK).
    for _, g in out.groupby("qid"):
        assert list(g.sort_values("rank")["score"]) == sorted(g["score"], reverse=True)
    # Rows of a query need not be together: a shuffled frame gets the same score per document.
    shuffled = te.sample(frac=1.0, random_state=3)
    again = rerank.transform(shuffled)
    np.testing.assert_array_equal(again["score"].to_numpy(), [want[d] for d in again["docno"]])
    # Without validation the stages still run before the fit (eval_set absent).
    plain = retrieve >> ltrkit.pt.reranker(ltrkit.RankSVM(c=0.1))
    plain.fit(tr_topics, qrels)
    np.testing.assert_array_equal(
        plain.transform(te_topics)["score"].to_numpy(),
        ltrkit.RankSVM(c=0.1).fit(X, y, qid=q).predict(Xt)[[list(te["docno"]).index(d) for d in out["docno"]]],
    )


@needs_pt
def test_experiment_takes_ltrkit_measures(letor_dir):
    tr, tr_topics, tr_qrels, _ = results(letor_dir / "train.txt", "t")
    te, te_topics, te_qrels, _ = results(letor_dir / "test.txt", "e")
    retrieve = pt.Transformer.from_df(pd.concat([tr, te], ignore_index=True))
    qrels = pd.concat([tr_qrels, te_qrels], ignore_index=True)
    pipeline = retrieve >> ltrkit.pt.reranker(ltrkit.RankSVM(c=0.1))
    pipeline.fit(tr_topics, qrels)
    ndcg, ap = ltrkit.pt.measure("nDCG@10"), ltrkit.pt.measure("AP")
    letor = ltrkit.pt.measure("NDCG@10", convention="letor4")
    measures = ["ndcg_cut_10", "map", ndcg, ap, letor]
    table = pt.Experiment([retrieve, pipeline], te_topics, qrels, eval_metrics=measures, names=["bm", "ltr"])
    assert set(table.columns) == {"name", "ndcg_cut_10", "map", "ltrkit:nDCG@10", "ltrkit:AP", "ltrkit:NDCG@10[letor4]"}
    rows = table.set_index("name").to_dict("index")
    for name, system in (("bm", retrieve), ("ltr", pipeline)):
        row, run = rows[name], system.transform(te_topics)
        ndcg10, ap = ltrkit.evaluate(te_qrels, run, measures=["nDCG@10", "AP"]).values()
        assert row["ltrkit:nDCG@10"] == pytest.approx(ndcg10, abs=1e-12)
        assert row["ltrkit:AP"] == pytest.approx(ap, abs=1e-12)
        # trec_eval's convention: the same numbers as pytrec_eval's ndcg_cut_10 and map.
        assert row["ltrkit:nDCG@10"] == pytest.approx(row["ndcg_cut_10"], abs=1e-9)
        assert row["ltrkit:AP"] == pytest.approx(row["map"], abs=1e-9)
        want = ltrkit.evaluate(te_qrels, run, measures=["NDCG@10"], convention="letor4")["NDCG@10"]
        assert row["ltrkit:NDCG@10[letor4]"] == pytest.approx(want, abs=1e-12)
    assert rows["ltr"]["ltrkit:nDCG@10"] > rows["bm"]["ltrkit:nDCG@10"], "the learned reranker beats feature 1 alone"
    # Per query, as pt.Experiment(perquery=True) reports them.
    per = pt.Experiment([pipeline], te_topics, qrels, eval_metrics=[ndcg], perquery=True)
    (want,) = ltrkit.evaluate(te_qrels, pipeline.transform(te_topics), measures=["nDCG@10"], per_query=True).values()
    assert dict(zip(per["qid"], per["value"])) == pytest.approx(want, abs=1e-12)
    with pytest.raises(ValueError):
        ltrkit.pt.measure("nDGC@10")
    assert not pt.java.started(), "nothing here needs Terrier's Java"


@needs_pt
def test_bad_frames_are_refused_with_the_reason(letor_dir):
    tr, tr_topics, tr_qrels, _ = results(letor_dir / "train.txt", "t")
    rr = ltrkit.pt.reranker(ltrkit.RankSVM())
    with pytest.raises(ValueError, match="missing features"):
        rr.fit(tr.drop(columns=["features"]), tr_qrels)
    with pytest.raises(ValueError, match="missing label"):
        rr.fit(tr, tr_qrels.drop(columns=["label"]))
    ragged = tr.copy()
    ragged.at[0, "features"] = ragged.at[0, "features"][:-1]
    with pytest.raises(ValueError, match="same length"):
        rr.fit(ragged, tr_qrels)
    rr.fit(tr, tr_qrels)
    narrow = tr.copy()
    narrow["features"] = [f[:-1] for f in narrow["features"]]
    with pytest.raises(ValueError, match="fitted on 12 features"):
        rr.transform(narrow)
