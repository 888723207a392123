"""ltrkit against the CLI, the oracles and scikit-learn: same models and scores as `ltr train`/`predict`, metrics
equal to `ltr eval` and pytrec_eval, sklearn's clone / GridSearchCV / pickling, bad input, the GIL released."""

from __future__ import annotations

import json
import pathlib
import pickle
import sys
import threading

import numpy as np
import pytest

import ltrkit
from ltrkit import _native

from conftest import ROOT, run, shared_datasets

FIXTURES = ROOT / "crates" / "ltr-metrics" / "tests" / "fixtures" / "oracle.json"


def load(d: pathlib.Path, name: str):
    return ltrkit.load_svmlight(d / f"{name}.txt")


def cli_model(ltr_bin, d, algo, params, seed, tmp_path, extra=()):
    m = tmp_path / f"{algo}.json"
    args = ["train", "--train", d / "train.txt", "--validate", d / "vali.txt", "--algo", algo, "--seed", seed]
    for p in params:
        args += ["--param", p]
    run(ltr_bin, *args, *extra, "--model", m)
    scores = run(ltr_bin, "predict", "--model", m, "--data", d / "test.txt")
    return json.loads(m.read_text()), np.array([float(s) for s in scores.split()])


@pytest.mark.parametrize(
    "algo,params,py_params",
    [
        ("ranksvm", ["c=0.01,0.1,1"], {"c": [0.01, 0.1, 1]}),
        ("committee-perceptron", ["committee=8", "epochs=10"], {"committee": 8, "epochs": 10}),
        ("rankboost", ["rounds=40"], {"rounds": 40}),
        ("mhr", ["aggregate=wborda"], {"aggregate": "wborda"}),
        ("coordinate-ascent", ["restarts=2"], {"restarts": 2}),
        ("lambdamart", ["trees=30", "leaves=7", "min-docs-in-leaf=5"], {"trees": 30, "leaves": 7, "min_docs_in_leaf": 5}),
        ("random-forest", ["trees=10"], {"trees": 10}),
    ],
)
def test_same_model_and_scores_as_the_cli(ltr_bin, letor_dir, tmp_path, algo, params, py_params):
    cli, cli_scores = cli_model(ltr_bin, letor_dir, algo, params, 3, tmp_path)
    X, y, q = load(letor_dir, "train")
    Xv, yv, qv = load(letor_dir, "vali")
    Xt, _, qt = load(letor_dir, "test")
    r = ltrkit.Ranker(algo, seed=3, **py_params).fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    ours = json.loads(bytes(r.model_.to_bytes(json=True)))
    for key in ("algorithm", "params", "fit", "model", "preprocess", "n_features"):
        assert ours[key] == cli[key], key
    # Scores equal bit for bit (the CLI prints shortest round-trip floats).
    np.testing.assert_array_equal(r.predict(Xt, qid=qt), cli_scores)
    # A model saved from Python is a file `ltr predict` reads, with the same scores.
    path = tmp_path / "py.bin"
    r.save(path)
    again = run(ltr_bin, "predict", "--model", path, "--data", letor_dir / "test.txt")
    np.testing.assert_array_equal(np.array([float(s) for s in again.split()]), cli_scores)


def test_tree_models_report_importance_and_best_iteration(letor_dir):
    X, y, q = load(letor_dir, "train")
    Xv, yv, qv = load(letor_dir, "vali")
    m = ltrkit.LambdaMART(trees=40, leaves=7, min_docs_in_leaf=5, stop_after=5)
    m.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    kept = m.best_iteration_
    assert 1 <= kept <= 40
    assert len(json.loads(bytes(m.model_.to_bytes(json=True)))["model"]["Forest"]["trees"]) == kept
    imp = m.feature_importances_
    assert imp.shape == (X.shape[1],) and abs(imp.sum() - 1.0) < 1e-12 and (imp >= 0).all()
    # Only features some split uses have importance, and every tree splits at least once here.
    assert (imp > 0).sum() >= 1
    with pytest.raises(AttributeError, match="best_iteration_"):
        _ = ltrkit.RankSVM(c=0.1).fit(X, y, qid=q).best_iteration_


def test_raw_web_features_normalised_as_the_cli(ltr_bin, web_dir, tmp_path):
    cli, cli_scores = cli_model(ltr_bin, web_dir, "listnet", ["epochs=30"], 1, tmp_path, ("--log1p", "1-3"))
    X, y, q = load(web_dir, "train")
    Xv, yv, qv = load(web_dir, "vali")
    Xt, _, _ = load(web_dir, "test")
    r = ltrkit.ListNet(epochs=30, log1p="1-3").fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    assert json.loads(bytes(r.model_.to_bytes(json=True)))["preprocess"] == cli["preprocess"]
    assert cli["preprocess"]["normalization"] is not None, "auto z-scores raw features"
    np.testing.assert_array_equal(r.predict(Xt), cli_scores)


def test_group_sizes_sparse_input_and_views_give_the_same_model(letor_dir):
    from scipy import sparse

    X, y, q = load(letor_dir, "train")
    Xt, _, _ = load(letor_dir, "test")
    base = ltrkit.RankSVM(c=0.1).fit(X, y, qid=q).predict(Xt)
    group = ltrkit.group_sizes(q)
    assert group.sum() == len(q) and len(group) == len(np.unique(q))
    np.testing.assert_array_equal(ltrkit.RankSVM(c=0.1).fit(X, y, group=group).predict(Xt), base)
    # scipy CSR is stored sparse: the same model up to the summation order of its dot products.
    np.testing.assert_allclose(ltrkit.RankSVM(c=0.1).fit(sparse.csr_matrix(X), y, qid=q).predict(Xt), base, rtol=1e-9, atol=1e-12)
    # float64, Fortran order and a strided view are converted, not refused: the same model bit for bit.
    np.testing.assert_array_equal(ltrkit.RankSVM(c=0.1).fit(np.asfortranarray(X, dtype=np.float64), y, qid=q).predict(Xt), base)
    wide = np.repeat(X, 2, axis=1)[:, ::2]
    assert not wide.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(ltrkit.RankSVM(c=0.1).fit(wide, y, qid=q).predict(Xt), base)


def test_load_and_save_svmlight_round_trip(letor_dir, tmp_path):
    X, y, q, ids = ltrkit.load_svmlight(letor_dir / "train.txt", return_docids=True)
    assert X.dtype == np.float32 and X.flags["C_CONTIGUOUS"] and y.dtype == np.float32
    assert q.dtype == np.int64 and len(q) == len(y) == X.shape[0]
    out = tmp_path / "copy.txt"
    ltrkit.save_svmlight(out, X, y, qid=q, docids=ids)
    X2, y2, q2, ids2 = ltrkit.load_svmlight(out, return_docids=True)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(y, y2)
    np.testing.assert_array_equal(q, q2)
    assert ids == ids2
    # A sparse file comes back as scipy CSR; a file without qid takes its LightGBM group file.
    sp = tmp_path / "sparse.txt"
    sp.write_text("2 qid:7 3:1.5 900:2\n0 qid:7 1:0.25\n1 qid:9 900:1\n")
    Xs, ys, qs = ltrkit.load_svmlight(sp)
    assert Xs.shape == (3, 900) and Xs.nnz == 4 and Xs[0, 899] == 2.0
    assert list(qs) == [7, 7, 9]
    g = tmp_path / "nogroup.txt"
    g.write_text("1 1:1\n0 1:2\n1 1:3\n")
    (tmp_path / "nogroup.txt.query").write_text("2\n1\n")
    assert list(ltrkit.load_svmlight(g)[2]) == [1, 1, 2]  # queries numbered from 1 in file order


def test_metrics_equal_pytrec_eval_and_ltr_eval(ltr_bin, tmp_path):
    oracle = json.loads(FIXTURES.read_text())["trec"]
    labels, scores, qid, docids = [], [], [], []
    for qq in oracle["queries"]:
        labels += qq["labels"]
        scores += qq["scores"]
        qid += [qq["qid"]] * len(qq["labels"])
        docids += qq["docids"]
    metrics = ["NDCG@10", "MAP", "P@5", "bpref"]
    got = ltrkit.evaluate(labels, scores, qid=qid, metrics=metrics, convention="trec", per_query=True, docids=docids)
    for m in metrics:
        np.testing.assert_allclose(got[m], oracle["trec"][m], rtol=0, atol=1e-12, err_msg=m)
    # And `ltr eval` on the same run gives the same means.
    data, run_file = tmp_path / "d.txt", tmp_path / "s.txt"
    ltrkit.save_svmlight(data, np.zeros((len(labels), 1)), labels, qid=np.array(qid, dtype=object), docids=docids)
    run_file.write_text("\n".join(repr(s) for s in scores))
    args = ["eval", "--data", data, "--scores", run_file, "--convention", "trec", "--json"]
    for m in metrics:
        args += ["--metric", m]
    cli = json.loads(run(ltr_bin, *args))
    means = ltrkit.evaluate(labels, scores, qid=qid, metrics=metrics, convention="trec", docids=docids)
    for m in metrics:
        assert means[m] == cli["metrics"][m]["mean"], m


def test_paired_tests_equal_scipy():
    for case in json.loads(FIXTURES.read_text())["significance"]:
        for test in ("ttest", "wilcoxon", "sign"):
            stat, p = case["two-sided"][test]
            got = _native.paired_test(case["a"], case["b"], test, "two-sided", 1)
            assert got["statistic"] == pytest.approx(stat, abs=1e-12)
            assert got["p_value"] == pytest.approx(p, rel=1e-9, abs=1e-12)


def test_compare_matches_ltr_compare(ltr_bin, letor_dir, tmp_path):
    X, y, q = load(letor_dir, "train")
    Xt, yt, qt = load(letor_dir, "test")
    a = ltrkit.RankSVM().fit(X, y, qid=q).predict(Xt)
    b = ltrkit.RankBoost(rounds=30).fit(X, y, qid=q).predict(Xt)
    fa, fb = tmp_path / "a.txt", tmp_path / "b.txt"
    fa.write_text("\n".join(repr(float(s)) for s in a))
    fb.write_text("\n".join(repr(float(s)) for s in b))
    cli = json.loads(run(ltr_bin, "compare", "--data", letor_dir / "test.txt", "--scores", fa, "--scores", fb,
                         "--metric", "MAP", "--test", "wilcoxon", "--json"))
    ours = ltrkit.compare(yt, a, b, qid=qt, metric="MAP", test="wilcoxon")
    for key in ("statistic", "p_value", "wins", "losses", "difference"):
        assert ours[key] == cli[key], key
    assert list(ours["bootstrap_ci95"]) == cli["bootstrap_ci95"]


def test_sklearn_clone_grid_search_and_pickle(letor_dir):
    import sklearn
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV, GroupKFold

    X, y, q = load(letor_dir, "train")
    Xt, _, qt = load(letor_dir, "test")
    est = ltrkit.RankSVM(c=0.1, max_iter=50)
    c = clone(est)
    assert c.get_params() == est.get_params() and c is not est
    generic = ltrkit.Ranker("rankboost", rounds=20, params={"thresholds": 5})
    assert clone(generic).get_params() == generic.get_params()
    with pytest.raises(ValueError, match="no parameter 'rounds'"):
        est.set_params(rounds=3)
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = ltrkit.RankSVM().set_fit_request(qid=True).set_score_request(qid=True)
        search = GridSearchCV(ranker, {"c": [0.001, 1.0]}, cv=GroupKFold(n_splits=3))
        search.fit(X, y, groups=q, qid=q)
    assert search.best_params_["c"] in (0.001, 1.0)
    assert all(0.0 < s <= 1.0 for s in search.cv_results_["mean_test_score"])
    # The refit best model is the same as training that setting directly.
    direct = ltrkit.RankSVM(c=search.best_params_["c"]).fit(X, y, qid=q)
    np.testing.assert_array_equal(search.best_estimator_.predict(Xt), direct.predict(Xt))
    # Pickling keeps the fitted model (as model-file bytes).
    back = pickle.loads(pickle.dumps(direct))
    np.testing.assert_array_equal(back.predict(Xt), direct.predict(Xt))
    assert back.get_params() == direct.get_params()


def test_model_attributes(letor_dir):
    X, y, q = load(letor_dir, "train")
    svm = ltrkit.RankSVM().fit(X, y, qid=q)
    weights = json.loads(bytes(svm.model_.to_bytes(json=True)))["model"]["Linear"]["weights"]
    np.testing.assert_array_equal(svm.coef_, weights)
    imp = svm.feature_importances_
    np.testing.assert_allclose(imp, np.abs(weights) / np.abs(weights).sum(), rtol=1e-12)
    assert svm.n_features_in_ == X.shape[1] and svm.best_params_ == {}  # defaults only
    boost = ltrkit.RankBoost(rounds=25).fit(X, y, qid=q)
    with pytest.raises(AttributeError, match="not linear"):
        boost.coef_
    assert boost.feature_importances_.sum() == pytest.approx(1.0)
    assert boost.fit_report_["algorithm"] == "rankboost"
    mhr = ltrkit.MultipleHyperplaneRanker().fit(X, y, qid=q)
    with pytest.raises(ValueError, match="give qid or group"):
        mhr.predict(X)
    assert len(mhr.predict(X, qid=q)) == len(y)
    assert 0.0 < svm.score(X, y, qid=q) <= 1.0


def test_bad_input_gives_clear_exceptions(letor_dir, tmp_path):
    X, y, q = load(letor_dir, "train")
    with pytest.raises(ValueError, match="y must have one label per row"):
        ltrkit.RankSVM().fit(X, y[:-1], qid=q)
    with pytest.raises(ValueError, match="X must be 2-d"):
        ltrkit.RankSVM().fit(X[None], y, qid=q)
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X\[3, 2\] is NaN: ranksvm takes no missing values"):
        ltrkit.RankSVM().fit(bad, y, qid=q)
    bad[3, 2] = -np.inf
    with pytest.raises(ValueError, match=r"X\[3, 2\] is -inf"):
        ltrkit.LambdaMART().fit(bad, y, qid=q)
    yb = y.copy()
    yb[0] = np.inf
    with pytest.raises(ValueError, match=r"y\[0\] is not finite"):
        ltrkit.RankSVM().fit(X, yb, qid=q)
    shuffled = q.copy()
    shuffled[[0, -1]] = shuffled[[-1, 0]]
    with pytest.raises(ValueError, match="reappears at row"):
        ltrkit.RankSVM().fit(X, y, qid=shuffled)
    with pytest.raises(ValueError, match="give qid"):
        ltrkit.RankSVM().fit(X, y)
    with pytest.raises(ValueError, match="add up to"):
        ltrkit.RankSVM().fit(X, y, group=[5, 5])
    with pytest.raises(ValueError, match="must be numeric"):
        ltrkit.RankSVM().fit(np.array([["a"]] * len(y)), y, qid=q)
    with pytest.raises(ValueError, match="solvr"):
        ltrkit.Ranker("ranksvm", solvr="dual").fit(X, y, qid=q)
    with pytest.raises(ValueError, match="unknown algorithm|nope"):
        ltrkit.Ranker("nope").fit(X, y, qid=q)
    with pytest.raises(ValueError, match="validation"):
        ltrkit.RankSVM(c=[0.1, 1]).fit(X, y, qid=q)
    with pytest.raises(ValueError, match="not fitted"):
        ltrkit.RankSVM().predict(X)
    fitted = ltrkit.RankSVM().fit(X, y, qid=q)
    with pytest.raises(ValueError, match="trained on 12 features"):
        fitted.predict(np.zeros((3, 20), dtype=np.float32))
    with pytest.raises(OSError, match="missing.txt"):
        ltrkit.load_svmlight(tmp_path / "missing.txt")
    broken = tmp_path / "broken.txt"
    broken.write_text("1 qid:1 1:0.5\n0 qid:1 1:abc\n")
    with pytest.raises(ValueError, match=r"broken.txt:2"):
        ltrkit.load_svmlight(broken)
    with pytest.raises(ValueError, match="corrupt|not an ltr model"):
        _native.Model.from_bytes(b"LTRM garbage")


def test_training_releases_the_gil(letor_dir, tmp_path, monkeypatch):
    """Two trainers hold inside Rust at the start of their fit (ltr_core::test_hold) until this thread releases
    them. This thread can only see both waiting, and write the release, if neither holds the GIL while it waits;
    had one kept it, this thread could not run until the hold's own limit ran out, and the holder would record
    `expired` instead of `released`. No timing is measured, so the result is the same on one core or sixteen."""
    import os
    import time

    X, y, q = load(letor_dir, "train")
    args = dict(committee=5, epochs=20, select_epochs=False)
    expected = ltrkit.CommitteePerceptron(**args).fit(X, y, qid=q).predict(X)
    results: dict = {}

    def train(name: str) -> None:
        results[name] = ltrkit.CommitteePerceptron(**args).fit(X, y, qid=q).predict(X)

    monkeypatch.setenv("LTR_TEST_HOLD_DIR", str(tmp_path))
    monkeypatch.setenv("LTR_TEST_HOLD_AT", "fit")
    monkeypatch.setenv("LTR_TEST_HOLD_LIMIT_S", "60")
    threads = [threading.Thread(target=train, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    try:
        # Bounded only so that a broken build fails instead of hanging.
        deadline = time.monotonic() + 300
        while len(list(tmp_path.glob("holding-*"))) < 2:
            assert any(t.is_alive() for t in threads), sorted(p.name for p in tmp_path.iterdir())
            assert time.monotonic() < deadline, "the trainers never reached their fit"
            time.sleep(0.01)
        seen_holding = not any(tmp_path.glob("expired-*"))
    finally:
        (tmp_path / "release").touch()
        for t in threads:
            t.join()
    assert seen_holding
    assert len(list(tmp_path.glob("released-*"))) == 2, sorted(p.name for p in tmp_path.iterdir())
    assert not list(tmp_path.glob("expired-*"))
    np.testing.assert_array_equal(results["a"], expected)
    np.testing.assert_array_equal(results["b"], expected)


def test_generated_families_match_the_registry():
    sys.path.insert(0, str(ROOT / "python" / "tools"))
    import gen_families

    want = gen_families.generate(json.loads(_native.algorithms_json()))
    have = (ROOT / "python" / "ltrkit" / "_families.py").read_text()
    assert have == want, "stale ltrkit/_families.py: run `ltr algorithms --json | python python/tools/gen_families.py`"
    names = {a["name"] for a in ltrkit.algorithms()}
    assert names == {getattr(ltrkit, a["class_name"])._algo for a in ltrkit.algorithms()}


def test_mq2008_fold1_quality_floor():
    root = shared_datasets()
    if root is None or not (root / "MQ2008" / "Fold1").is_dir():
        pytest.skip("../shared/datasets/MQ2008 is absent")
    d = root / "MQ2008" / "Fold1"
    X, y, q = load(d, "train")
    Xv, yv, qv = load(d, "vali")
    Xt, yt, qt = load(d, "test")
    svm = ltrkit.RankSVM(c=[0.001, 0.01, 0.1, 1, 10, 100], metric="MAP", convention="letor4")
    svm.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv])
    res = ltrkit.evaluate(yt, svm.predict(Xt), qid=qt, metrics=["MAP", "NDCG@10"], convention="letor4")
    # The LETOR 4.0 RankSVM baseline's MAP on MQ2008 is 0.4696 (fold mean); Fold1 is the hardest fold.
    assert res["MAP"] > 0.44, res


def test_propensity_ranksvm_on_a_click_training_set():
    # Click groups built by hand: each query is one click, its clicked document first, with the propensity of the
    # rank it was clicked at. Relevance is feature 0; clicks at low propensity are on relevant documents, noise
    # clicks on irrelevant ones happen at rank 1 only, so IPS weights move the model towards feature 0.
    rng = np.random.default_rng(3)
    n_groups, size, d = 400, 8, 4
    X = rng.normal(size=(n_groups * size, d)).astype(np.float32)
    y = np.zeros(n_groups * size, dtype=np.float32)
    props = np.empty(n_groups)
    for g in range(n_groups):
        rows = slice(g * size, (g + 1) * size)
        if g % 2 == 0:  # a relevant click deep in the list
            best = g * size + int(np.argmax(X[rows, 0]))
            props[g] = 0.1
        else:  # a noise click on the top of feature 1
            best = g * size + int(np.argmax(X[rows, 1]))
            props[g] = 1.0
        y[best] = 1.0
    group = [size] * n_groups
    ips = ltrkit.PropensityRankSVM().fit(X, y, group=group, group_propensity=props)
    naive = ltrkit.PropensityRankSVM(weighting="naive").fit(X, y, group=group, group_propensity=props)
    w_ips, w_naive = ips.model_.linear_weights(), naive.model_.linear_weights()
    assert w_ips[0] / abs(w_ips[1]) > 2 * w_naive[0] / abs(w_naive[1])
    # Counts: a query standing for two clicks is the same as the query twice.
    twice = ltrkit.PropensityRankSVM(weighting="naive").fit(
        X, y, group=group, group_weight=np.full(n_groups, 2.0), group_propensity=props
    )
    np.testing.assert_allclose(twice.model_.linear_weights(), w_naive, rtol=1e-9)
    with pytest.raises(Exception, match="clicks"):
        ltrkit.PropensityRankSVM().fit(X, y, group=group)
    with pytest.raises(Exception, match="propensity"):
        ltrkit.PropensityRankSVM().fit(X, y, group=group, group_propensity=np.zeros(n_groups))
    # The neural rankers read the same click weights: the inverse propensities move the network towards feature 0.
    probe = np.zeros((2, d), dtype=np.float32)
    probe[0, 0], probe[1, 1] = 2.0, 2.0

    def margin(weighting):
        r = ltrkit.MLPRanker(sizes="16", loss="listnet", epochs=20, seed=1, weighting=weighting)
        s = r.fit(X, y, group=group, group_propensity=props).predict(probe, group=[2])
        return s[0] - s[1]

    assert margin("ips") > margin("naive") + 0.1, (margin("ips"), margin("naive"))


def test_doubly_robust_sets_are_relevance_estimates_weighted_by_sessions():
    """``debias="dr"`` of LambdaRank, ListNet, MLPRanker and LambdaMART: ``y`` the documents' relevance estimates (clicks over expected
    examination; ``ltr train --clicks LOG`` builds them from a log) and ``group_weight`` each query's sessions."""
    rng = np.random.default_rng(4)
    n_groups, size, d = 40, 6, 3
    X = rng.normal(size=(n_groups * size, d)).astype(np.float32)
    # Estimates that follow feature 0, with noise; feature 1 is noise.
    y = np.clip(0.3 * X[:, 0] + 0.5 + 0.1 * rng.normal(size=len(X)), 0, None).astype(np.float32)
    group = [size] * n_groups
    sessions = rng.integers(1, 50, size=n_groups).astype(np.float64)
    ranker = ltrkit.LambdaRank(debias="dr", epochs=10).fit(X, y, group=group, group_weight=sessions)
    w = ranker.model_.linear_weights()
    assert w[0] > 5 * abs(w[1]), w
    listnet = ltrkit.ListNet(debias="dr", epochs=10).fit(X, y, group=group, group_weight=sessions)
    w = listnet.model_.linear_weights()
    assert w[0] > 5 * abs(w[1]), w
    trees = ltrkit.LambdaMART(debias="dr", trees=5).fit(X, y, group=group, group_weight=sessions)
    assert trees.predict(X, group=group).shape == (len(X),)
    net = ltrkit.MLPRanker(debias="dr", epochs=3, sizes="8").fit(X, y, group=group, group_weight=sessions)
    assert net.predict(X, group=group).shape == (len(X),)
    with pytest.raises(Exception, match="listnet-binary"):
        ltrkit.MLPRanker(debias="dr", loss="ndcgloss2pp").fit(X, y, group=group, group_weight=sessions)
    # Judged data and a click training set with propensities are not that set.
    with pytest.raises(Exception, match="doubly robust set"):
        ltrkit.LambdaRank(debias="dr").fit(X, y, group=group)
    with pytest.raises(Exception, match="doubly robust set"):
        ltrkit.LambdaRank(debias="dr").fit(
            X, y, group=group, group_weight=sessions, group_propensity=np.ones(n_groups)
        )
    # Without debias="dr" the trees refuse it; the naive linear control reads it as weighted judgments.
    with pytest.raises(Exception, match="debias=dr"):
        ltrkit.LambdaMART(trees=5).fit(X, y, group=group, group_weight=sessions)
