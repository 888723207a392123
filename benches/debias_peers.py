"""LightGBM `lambdarank_position_bias` and XGBoost `lambdarank_unbiased` on the click sessions `ltr` trains on.

Usage: debias_peers.py [--each-session] TRAIN.txt CLICKS.tsv TEST.txt OUTDIR [PEER...]

Builds the session set as `ltr_clicks::click_session_set` does (one group per distinct query, display and clicks,
weighted by its session count, rows in display order, sessions without a click left out), trains each peer with
`ltr`'s lambdamart defaults (100 trees, learning rate 0.1, 31 leaves, 20 documents a leaf, truncation 30) and writes
one score per line of TEST.txt to OUTDIR/<peer>.scores, for `ltr eval`. Run with /work/venv-peers/bin/python.
PEER: any of lightgbm-naive, lightgbm-position-bias, xgboost-naive (XGBoost's lambdarank without the bias
estimate: its own naive control) and xgboost-unbiased; all four when none is named.
XGBoost's `lambdarank_unbiased` sums its pair costs into ti+/tj- without the group weight (lambdarank_obj.cc,
`CalcLambdaForGroup`: the weight scales only the gradients), so on this deduplicated set its biases count each
distinct click pattern once where `ltr` counts sessions (BENCHMARKS.md, "DCM clicks over simulation seeds").
`--each-session` gives the peers every session as its own group of weight 1 instead (each pattern's group repeated
its count times): the same gradients, and bias estimates that count sessions as `ltr`'s do, at the cost of about
ten rows per clicked session (9 M rows on an OHSUMED fold at 10^6 sessions).
"""

import json
import sys
import time

import numpy as np
import pandas as pd
from sklearn.datasets import load_svmlight_file


def read_letor(path):
    X, y, qid = load_svmlight_file(path, query_id=True)
    docids = []
    with open(path) as f:
        for line in f:
            docids.append(line.split("docid = ")[1].split()[0] if "docid = " in line else None)
    return X.toarray().astype(np.float32), y, qid, docids


def sessions(train_path, clicks_path):
    X, _, qid, docids = read_letor(train_path)
    row_of = {}
    for i, (q, d) in enumerate(zip(qid, docids)):
        row_of[(str(q), d)] = i
    log = pd.read_csv(clicks_path, sep="\t", usecols=["session", "qid", "docid", "rank", "clicked"],
                      dtype={"qid": str, "docid": str})
    # A fixed production ranker shows each query one way: (qid, rank) -> document.
    shown = log.drop_duplicates(["qid", "rank"])[["qid", "rank", "docid"]]
    assert len(shown) == len(log.drop_duplicates(["qid", "rank", "docid"])), "one display per query expected"
    log["bit"] = np.left_shift(log["clicked"].to_numpy(np.int64), log["rank"].to_numpy(np.int64) - 1)
    per_session = log.groupby("session").agg(qid=("qid", "first"), mask=("bit", "sum"))
    per_session = per_session[per_session["mask"] > 0]
    patterns = per_session.groupby(["qid", "mask"]).size().reset_index(name="count")
    display = {q: g.sort_values("rank")["docid"].tolist() for q, g in shown.groupby("qid")}
    rows, labels, positions, group, weight = [], [], [], [], []
    # The order ltr uses: by displayed rows, then clicks (the clicked flags compared position by position).
    keyed = []
    for q, mask, count in patterns.itertuples(index=False):
        docs = display[q]
        r = [row_of[(q, d)] for d in docs]
        clicks = [bool(mask >> k & 1) for k in range(len(docs))]
        keyed.append((r, clicks, count))
    keyed.sort(key=lambda t: (t[0], t[1]))
    for r, clicks, count in keyed:
        rows.extend(r)
        labels.extend(int(c) for c in clicks)
        positions.extend(range(len(r)))
        group.append(len(r))
        weight.append(float(count))
    return X[rows], np.array(labels), np.array(positions), np.array(group), np.array(weight)


PEERS = ["lightgbm-naive", "lightgbm-position-bias", "xgboost-naive", "xgboost-unbiased"]


def each_session(X, y, pos, group, weight):
    """Every pattern's group repeated its session count times, each copy of weight 1."""
    starts = np.concatenate(([0], np.cumsum(group)[:-1]))
    copies = weight.astype(np.int64)
    assert (copies == weight).all(), "session counts are whole numbers"
    rep_start = np.repeat(starts, copies)
    rep_len = np.repeat(group, copies)
    first = np.repeat(np.cumsum(rep_len) - rep_len, rep_len)
    rows = np.repeat(rep_start, rep_len) + (np.arange(rep_len.sum()) - first)
    return X[rows], y[rows], pos[rows], rep_len, np.ones(len(rep_len))


def main():
    args = sys.argv[1:]
    expand = "--each-session" in args
    args = [a for a in args if a != "--each-session"]
    train_path, clicks_path, test_path, out = args[:4]
    peers = args[4:] or PEERS
    unknown = [p for p in peers if p not in PEERS]
    if unknown:
        sys.exit(f"unknown peer {unknown[0]}: choose among {', '.join(PEERS)}")
    t = time.time()
    X, y, pos, group, weight = sessions(train_path, clicks_path)
    if expand:
        X, y, pos, group, weight = each_session(X, y, pos, group, weight)
    print(f"session set: {len(group)} groups, {len(y)} rows, {time.time() - t:.1f} s", file=sys.stderr)
    Xt, _, _, _ = read_letor(test_path)
    if Xt.shape[1] < X.shape[1]:
        Xt = np.pad(Xt, ((0, 0), (0, X.shape[1] - Xt.shape[1])))
    Xt = Xt[:, : X.shape[1]]

    import lightgbm as lgb
    import xgboost as xgb

    row_weight = np.repeat(weight, group)
    common = dict(objective="lambdarank", num_iterations=100, learning_rate=0.1, num_leaves=31,
                  min_data_in_leaf=20, lambdarank_truncation_level=30, verbose=-1, num_threads=2,
                  deterministic=True, seed=1)
    for name, position in [("lightgbm-naive", None), ("lightgbm-position-bias", pos)]:
        if name not in peers:
            continue
        t = time.time()
        ds = lgb.Dataset(X, y, group=group, weight=row_weight, position=position)
        model = lgb.train(common, ds)
        np.savetxt(f"{out}/{name}.scores", model.predict(Xt), fmt="%.10g")
        print(f"{name}: {time.time() - t:.1f} s", file=sys.stderr)
    qid = np.repeat(np.arange(len(group)), group)
    for name, unbiased in [("xgboost-naive", False), ("xgboost-unbiased", True)]:
        if name not in peers:
            continue
        t = time.time()
        model = xgb.XGBRanker(objective="rank:ndcg", n_estimators=100, learning_rate=0.1, tree_method="hist",
                              grow_policy="lossguide", max_leaves=31, max_depth=0, min_child_weight=1e-3,
                              lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=30,
                              lambdarank_unbiased=unbiased, lambdarank_bias_norm=1.0, n_jobs=2, random_state=1)
        model.fit(X, y, qid=qid, sample_weight=weight)
        np.savetxt(f"{out}/{name}.scores", model.predict(Xt), fmt="%.10g")
        if unbiased:
            # XGBoost's learned position biases (its objective's saved state), beside `ltr`'s t+ and t- in its log.
            objective = json.loads(model.get_booster().save_config())["learner"]["objective"]
            print(f"{name}: t+ {', '.join('%.3g' % v for v in objective['ti+'])}; "
                  f"t- {', '.join('%.3g' % v for v in objective['tj-'])}", file=sys.stderr)
        print(f"{name}: {time.time() - t:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
