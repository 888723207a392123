"""``ltrkit.evaluate(qrels, run)``: the dict-of-dicts form of ir_measures, ranx and pytrec_eval, and PyTerrier's
DataFrames, checked against pytrec_eval (trec_eval's own code) on a run with ties, unjudged and unretrieved
documents, and a query without judgments."""

import random

import pandas as pd
import pytest
import pytrec_eval

import ltrkit


def make_run(seed: int):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(25):
        docs = [f"d{q}-{i}" for i in range(60)]
        # Judge 40 of them (some never retrieved), grades 0-3.
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 0, 1, 1, 2, 3]) for d in rng.sample(docs, 40)}
        # Retrieve 45, with scores rounded so that ties occur (trec_eval breaks them by docno, descending).
        run[f"q{q}"] = {d: round(rng.random(), 1) for d in rng.sample(docs, 45)}
    run["q-unjudged"] = {"x": 1.0, "y": 0.5}
    return qrels, run


# ltr's name, pytrec_eval's measure and its per-query key.
MEASURES = [
    ("nDCG@10", "ndcg_cut.10", "ndcg_cut_10"),
    ("nDCG", "ndcg", "ndcg"),
    ("AP", "map", "map"),
    ("P@5", "P.5", "P_5"),
    ("RR", "recip_rank", "recip_rank"),
    ("R-prec", "Rprec", "Rprec"),
    ("bpref", "bpref", "bpref"),
    ("infAP", "infAP", "infAP"),
]


def test_dicts_of_dicts_match_pytrec_eval_per_query():
    qrels, run = make_run(3)
    ours = ltrkit.evaluate(qrels, run, measures=[m for m, _, _ in MEASURES], per_query=True)
    oracle = pytrec_eval.RelevanceEvaluator(qrels, {m for _, m, _ in MEASURES}).evaluate(run)
    assert len(ours) == len(MEASURES)
    for (name, _, key), (got_name, per_query) in zip(MEASURES, ours.items()):
        assert set(per_query) == set(oracle), f"{name}: queries {sorted(per_query)} vs {sorted(oracle)}"
        for q, v in per_query.items():
            assert v == pytest.approx(oracle[q][key], abs=1e-9), f"{name} ({got_name}) query {q}"
    means = ltrkit.evaluate(qrels, run, measures=["nDCG@10"])
    (mean,) = means.values()
    assert mean == pytest.approx(sum(oracle[q]["ndcg_cut_10"] for q in oracle) / len(oracle), abs=1e-12)


def test_sampled_pool_infap_matches_pytrec_eval():
    # A judged sample of the pool: about a third of the judgments replaced by -1 (pooled but unjudged). infAP counts
    # them as pooled, every other measure as unjudged, as trec_eval does.
    qrels, run = make_run(11)
    rng = random.Random(12)
    sampled = {q: {d: (-1 if rng.random() < 0.35 else r) for d, r in docs.items()} for q, docs in qrels.items()}
    names = [m for m, _, _ in MEASURES]
    ours = ltrkit.evaluate(sampled, run, measures=names, per_query=True)
    oracle = pytrec_eval.RelevanceEvaluator(sampled, {m for _, m, _ in MEASURES}).evaluate(run)
    for (name, _, key), per_query in zip(MEASURES, ours.values()):
        for q, v in per_query.items():
            assert v == pytest.approx(oracle[q][key], abs=1e-9), f"{name} query {q}"
    # The sample makes a difference: infAP is not AP over the judged sample.
    assert ours["infAP"] != ours["MAP"]


def test_pyterrier_dataframes_give_the_dict_results():
    qrels, run = make_run(5)
    run_df = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()], columns=["qid", "docno", "score"]
    )
    qrels_df = pd.DataFrame(
        [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()], columns=["qid", "docno", "label"]
    )
    names = ["nDCG@10", "AP", "P(rel=2)@10"]
    assert ltrkit.evaluate(qrels_df, run_df, measures=names, per_query=True) == ltrkit.evaluate(
        qrels, run, measures=names, per_query=True
    )
    # The convention is trec_eval's unless asked otherwise: the standard one breaks ties differently.
    trec = ltrkit.evaluate(qrels, run, measures=["nDCG@10"])
    assert trec == ltrkit.evaluate(qrels, run, measures=["nDCG@10"], convention="trec")


def test_bad_runs_are_refused_with_the_reason():
    qrels, run = make_run(7)
    with pytest.raises(ValueError, match="expected \\{docno: score\\}"):
        ltrkit.evaluate(qrels, {"q0": [("d", 1.0)]})
    with pytest.raises(ValueError, match="not finite"):
        ltrkit.evaluate(qrels, {"q0": {"d0-1": float("nan")}})
    with pytest.raises(ValueError, match="missing score"):
        ltrkit.evaluate(qrels, pd.DataFrame({"qid": ["q0"], "docno": ["d0-1"]}))
    with pytest.raises(ValueError, match="give the run"):
        ltrkit.evaluate(qrels, None)
    with pytest.raises(ValueError):
        ltrkit.evaluate(qrels, run, measures=["nDCG@x"])


def test_fuse_mirrors_ltr_fuse_by_hand():
    a = {"q1": {"d3": 1.0, "d1": 3.0, "d2": 2.0}}
    b = {"q1": {"d4": 0.5, "d2": 0.9}}
    # Borda: A gives d1 3, d2 2, d3 1; B gives d2 2, d4 1 -> d2 4, d1 3, d4 1, d3 1 (ties by docno descending).
    out = ltrkit.fuse([a, b], method="borda")
    assert list(out["run"]["q1"].items()) == [("d2", 4.0), ("d1", 3.0), ("d4", 1.0), ("d3", 1.0)]
    assert out["weights"] == [1.0, 1.0]
    rrf = ltrkit.fuse([a, b], method="rrf", k=1)["run"]["q1"]
    assert rrf == pytest.approx({"d2": 1 / 3 + 1 / 2, "d1": 1 / 2, "d4": 1 / 3, "d3": 1 / 4})
    # Only d1 relevant: min-max CombSUM ranks it first once w_A > 2 w_B, first at the grid point (0.1, 0).
    tuned = ltrkit.fuse([a, b], method="wsum", tune_on={"q1": {"d1": 1, "d2": 0}}, measure="RR")
    assert tuned["weights"] == [0.1, 0.0]
    assert next(iter(tuned["run"]["q1"])) == "d1"
    with pytest.raises(ValueError, match="two runs or more"):
        ltrkit.fuse([a])
    with pytest.raises(ValueError, match="1 weights for 2 runs"):
        ltrkit.fuse([a, b], weights=[1.0])
    with pytest.raises(ValueError, match="unknown fusion method"):
        ltrkit.fuse([a, b], method="nope")


def test_compare_runs_pairs_the_queries_both_answer():
    qrels, run = make_run(11)
    # A run that knows the grades (the random run's order only breaks their ties) beats the random one.
    better = {q: {d: qrels.get(q, {}).get(d, 0) + s / 10 for d, s in docs.items()} for q, docs in run.items()}
    out = ltrkit.compare(qrels, better, run, metric="AP", test="ttest")
    per_a = ltrkit.evaluate(qrels, better, measures=["AP"], per_query=True)
    (name,) = per_a
    assert out["metric"] == name and out["convention"] == "trec"
    assert out["queries"] == len(per_a[name]) == 25
    assert out["a"] == pytest.approx(sum(per_a[name].values()) / 25, abs=1e-12)
    assert out["a"] > out["b"] and out["p_value"] < 0.05


def make_diversity(seed: int):
    """Subtopic qrels (1-4 subtopics a query, grades 0-2) and a run with distinct scores (pyndeval breaks ties by
    docno ascending, trec_eval's order by docno descending), a query without relevant subtopics among them."""
    rng = random.Random(seed)
    rows, run = [], {}
    for q in range(12):
        docs = [f"d{q}-{i}" for i in range(40)]
        for d in rng.sample(docs, 25):
            for s in range(1, rng.choice([1, 2, 3, 4]) + 1):
                rows.append((f"{q}", s, d, 0 if q == 3 else rng.choice([0, 0, 0, 1, 2])))
        run[f"{q}"] = {d: float(i) for i, d in enumerate(rng.sample(docs, 30))}
    return rows, run


def test_diversity_measures_match_pyndeval():
    pyndeval = pytest.importorskip("pyndeval")
    rows, run = make_diversity(21)
    qrels_df = pd.DataFrame(
        [(q, d, g, str(s)) for q, s, d, g in rows], columns=["qid", "docno", "label", "iteration"]
    )
    names = {
        "alpha_nDCG@10": "alpha-nDCG@10", "alpha_DCG@5": "alpha-DCG@5", "ERR_IA@20": "ERR-IA@20",
        "nERR_IA@10": "nERR-IA@10", "NRBP": "NRBP", "AP_IA": "MAP-IA", "P_IA@5": "P-IA@5", "StRecall@10": "strec@10",
    }
    ours = ltrkit.evaluate(qrels_df, run, measures=list(names), per_query=True)
    oracle = pyndeval.ndeval(
        [(q, str(s), d, g) for q, s, d, g in rows],
        [(q, d, v) for q, docs in run.items() for d, v in docs.items()],
        measures=list(names.values()),
    )
    assert set(oracle) == {str(q) for q in range(12)}
    checked = 0
    for (name, key), per_query in zip(names.items(), ours.values()):
        for q, v in per_query.items():
            assert v == pytest.approx(oracle[q][key], abs=1e-9), f"{name} query {q}"
            checked += v > 0
    assert checked > 40
    # The dict form {qid: {docno: {subtopic: relevance}}} gives the same values.
    nested: dict = {}
    for q, s, d, g in rows:
        nested.setdefault(q, {}).setdefault(d, {})[s] = g
    assert ltrkit.evaluate(nested, run, measures=list(names), per_query=True) == ours


def test_diversity_refusals_name_the_problem():
    rows, run = make_diversity(22)
    nested: dict = {}
    for q, s, d, g in rows:
        nested.setdefault(q, {}).setdefault(d, {})[s] = g
    with pytest.raises(ValueError, match="separate calls"):
        ltrkit.evaluate(nested, run, measures=["alpha_nDCG@10", "P@10"])
    with pytest.raises(ValueError, match="diversity qrels"):
        ltrkit.evaluate({"0": {"d0-1": 1}}, run, measures=["alpha_nDCG@10"])
    with pytest.raises(ValueError, match="subtopic 'x' is not a non-negative integer"):
        ltrkit.evaluate({"0": {"d0-1": {"x": 1}}}, run, measures=["alpha_nDCG@10"])
    with pytest.raises(ValueError, match="relevance 0.5 is not an integer"):
        ltrkit.evaluate({"0": {"d0-1": {1: 0.5}}}, run, measures=["StRecall@5"])
