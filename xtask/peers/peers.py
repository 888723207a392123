"""Peer timings for `cargo xtask bench` (run inside the peer venv; never a dependency of the crates).

Each subcommand prints one JSON object with wall seconds of the timed part.
  parse FILE                      sklearn.datasets.load_svmlight_file(query_id=True)
  eval QRELS RUN                  NDCG@10 + AP (evaluation only, data already in memory): pytrec_eval and ranx;
                                  NDCG@10 + AP + RBP(p=0.8): ranx and ir_measures (pytrec_eval has no RBP)
  fuse RUN1 RUN2 RUN3             ranx.fuse RRF (k=60, no normalisation) of three runs (fusion only, runs in memory)
  xgb FILE                        XGBoost gblinear + rank:pairwise, 50 rounds (whole run incl. load)
  lgbm TRAIN                      LightGBM lambdarank, 100 rounds (whole run incl. load)
  lgbm-ltrkit TRAIN               the same, the data read by ltrkit's Rust parser (sklearn's loader is too slow for
                                  millions of documents); needs ltrkit importable; prints load, construct, train
"""
import json
import sys
import time


def parse(path):
    from sklearn.datasets import load_svmlight_file
    t = time.perf_counter()
    X, y, q = load_svmlight_file(path, query_id=True)
    return {"seconds": time.perf_counter() - t, "rows": int(X.shape[0])}


def read_run(qrels_path, run_path):
    qrels, run = {}, {}
    with open(qrels_path) as f:
        for line in f:
            q, _, d, r = line.split()
            qrels.setdefault(q, {})[d] = int(float(r))
    with open(run_path) as f:
        for line in f:
            q, _, d, _, s, _ = line.split()
            run.setdefault(q, {})[d] = float(s)
    return qrels, run


def evaluate(qrels_path, run_path):
    qrels, run = read_run(qrels_path, run_path)
    out = {"queries": len(run)}
    import pytrec_eval
    t = time.perf_counter()
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"})
    res = ev.evaluate(run)
    out["pytrec_eval"] = time.perf_counter() - t
    out["pytrec_eval_ndcg10"] = sum(v["ndcg_cut_10"] for v in res.values()) / len(res)
    try:
        from ranx import Qrels, Run, evaluate as rx
        qr, rn = Qrels(qrels), Run(run)
        rx(qr, rn, ["ndcg@10", "map", "rbp.8"])  # JIT warm-up (numba), not timed
        t = time.perf_counter()
        r = rx(qr, rn, ["ndcg@10", "map"])
        out["ranx"] = time.perf_counter() - t
        out["ranx_ndcg10"] = r["ndcg@10"]
        t = time.perf_counter()
        r = rx(qr, rn, ["ndcg@10", "map", "rbp.8"])
        out["ranx_rbp"] = time.perf_counter() - t
        out["ranx_rbp08"] = r["rbp.8"]
    except Exception as e:  # ranx may be unavailable
        out["ranx_error"] = str(e)
    try:
        import ir_measures
        ms = [ir_measures.parse_measure(m) for m in ["nDCG@10", "AP", "RBP(p=0.8)"]]
        t = time.perf_counter()
        agg = ir_measures.calc_aggregate(ms, qrels, run)
        out["ir_measures_rbp"] = time.perf_counter() - t
        out["ir_measures_rbp08"] = agg[ms[2]]
    except Exception as e:  # ir_measures may be unavailable
        out["ir_measures_error"] = str(e)
    return out


def read_runs(paths):
    runs = []
    for p in paths:
        run = {}
        with open(p) as f:
            for line in f:
                q, _, d, _, s, _ = line.split()
                run.setdefault(q, {})[d] = float(s)
        runs.append(run)
    return runs


def fuse(*paths):
    from ranx import Run, fuse as rx_fuse
    runs = [Run(r) for r in read_runs(paths)]
    rx_fuse(runs, norm=None, method="rrf")  # JIT warm-up (numba), not timed; RRF needs no normalisation
    t = time.perf_counter()
    rx_fuse(runs, norm=None, method="rrf")
    return {"ranx": time.perf_counter() - t}


def group_sizes(q):
    """Sizes of the runs of equal qids in file order (np.unique would sort the qids and mismatch the rows)."""
    import numpy as np
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    return np.diff(np.r_[starts, len(q)])


def xgb(path):
    import numpy as np
    import xgboost as xgb
    from sklearn.datasets import load_svmlight_file
    t = time.perf_counter()
    X, y, q = load_svmlight_file(path, query_id=True)
    counts = group_sizes(q)
    d = xgb.DMatrix(X, label=y)
    d.set_group(counts)
    xgb.train({"booster": "gblinear", "objective": "rank:pairwise", "nthread": 2}, d, num_boost_round=50)
    return {"seconds": time.perf_counter() - t}


def lgbm(path):
    import lightgbm as lgb
    import numpy as np
    from sklearn.datasets import load_svmlight_file
    t = time.perf_counter()
    X, y, q = load_svmlight_file(path, query_id=True)
    counts = group_sizes(q)
    ds = lgb.Dataset(X, label=y, group=counts)
    lgb.train({"objective": "lambdarank", "num_threads": 2, "verbose": -1}, ds, num_boost_round=100)
    return {"seconds": time.perf_counter() - t}


def lgbm_ltrkit(path):
    import lightgbm as lgb
    from ltrkit import group_sizes as sizes, load_svmlight
    t0 = time.perf_counter()
    X, y, qid = load_svmlight(path, dense=True)
    t1 = time.perf_counter()
    ds = lgb.Dataset(X, label=y, group=sizes(qid), free_raw_data=True)
    ds.construct()
    t2 = time.perf_counter()
    del X
    lgb.train({"objective": "lambdarank", "num_threads": 2, "verbose": -1}, ds, num_boost_round=100)
    t3 = time.perf_counter()
    return {"load": t1 - t0, "construct": t2 - t1, "train": t3 - t2, "seconds": t3 - t0}


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    fn = {"parse": parse, "eval": evaluate, "fuse": fuse, "xgb": xgb, "lgbm": lgbm, "lgbm-ltrkit": lgbm_ltrkit}[cmd]
    print(json.dumps(fn(*args)))
