"""XGBoost's tree learner with Unbiased LambdaMART written here as a custom objective (numpy), on the deduplicated
session set of debias_peers.py with the session counts as gradient weights (and as the sketch's weights), so the bias
sums count sessions, as per-session XGBoost (`debias_peers.py --each-session`) and `ltr` do, at the deduplicated
set's cost (issue 52; BENCHMARKS.md, "Why XGBoost keeps its score under DCM").

Usage: unbiased_emulation.py TRAIN.txt CLICKS.tsv TEST.txt OUT.scores [KEY=VALUE...]
  hf: the pair hessian's factor (2: XGBoost's 2σ(1 − σ)|Δ|, the default; 1: LightGBM's and `ltr`'s σ(1 − σ)|Δ|);
  unbiased: 1 (default) or 0; rounds (100); wmode: count (bias sums and gradients by session count, the default)
  or one (each distinct pattern once, as XGBoost on the deduplicated set); any other KEY=VALUE is an XGBoost
  parameter (reg_lambda, eta, max_bin, ...). Writes OUT.scores (one score per TEST line) and OUT.scores.traj (t+
  then t- after each round); prints the final t+ and t-. Every displayed list must have 10 documents.
The objective follows XGBoost 3.2.0's lambdarank_obj.{h,cc} as read (not copied): |ΔNDCG| over the current ranking
(exponential gain, the whole list), divided by 0.01 + |s_i − s_j| unless all scores tie, the reversed pair loss
log(1 + e^{s_i − s_j}) summed into t+ and t- (p = 1: square roots), each pair's gradient and hessian divided by
t+(clicked position)·t-(other's), the query scaled by log2(1 + Σλ)/Σλ. Run with /work/venv-peers/bin/python.
"""
import os
import sys
import time

import numpy as np
import xgboost as xgb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from debias_peers import read_letor, sessions  # noqa: E402

train, clicks, test, out = sys.argv[1:5]
kv = dict(a.split("=", 1) for a in sys.argv[5:])
hf = float(kv.pop("hf", 2))
unbiased = int(kv.pop("unbiased", 1))
rounds = int(kv.pop("rounds", 100))
wmode = kv.pop("wmode", "count")  # count: sessions; one: each pattern once (XGBoost on the dedup set)
X, y, pos, group, weight = sessions(train, clicks)
assert (group == 10).all(), set(group)
G = len(group); n = 10
Y = y.reshape(G, n).astype(np.float64); W = weight.astype(np.float64)
gain = 2.0 ** Y - 1.0
ideal = -np.sort(-gain, axis=1)
disc = 1.0 / np.log2(np.arange(n) + 2.0)
idcg = (ideal * disc).sum(1); inv_idcg = np.where(idcg > 0, 1.0 / np.maximum(idcg, 1e-300), 0.0)
I, J = np.triu_indices(n, 1)  # pairs by display position
tp = np.ones(n); tm = np.ones(n)
hist = []
def obj(preds, dtrain):
    global tp, tm
    S = preds.reshape(G, n).astype(np.float64)
    order = np.argsort(-S, axis=1, kind="stable")
    rank = np.empty_like(order); np.put_along_axis(rank, order, np.arange(n)[None, :].repeat(G, 0), axis=1)
    gi, gj = gain[:, I], gain[:, J]
    yi, yj = Y[:, I], Y[:, J]
    valid = yi != yj
    hi_is_i = yi > yj
    # high/low document of each pair (display positions)
    ph = np.where(hi_is_i, I[None, :], J[None, :]); pl = np.where(hi_is_i, J[None, :], I[None, :])
    sh = np.take_along_axis(S, ph, 1); sl = np.take_along_axis(S, pl, 1)
    rh = np.take_along_axis(rank, ph, 1); rl = np.take_along_axis(rank, pl, 1)
    delta = np.abs((gi - gj) * (disc[rh] - disc[rl])) * inv_idcg[:, None]
    spread = S.max(1) != S.min(1)
    delta = np.where(spread[:, None], delta / (np.abs(sh - sl) + 0.01), delta)
    delta = np.where(valid, delta, 0.0)
    z = sh - sl
    sig = 1.0 / (1.0 + np.exp(-z))
    cost = (np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))) * delta  # log(1/(1-sig)) * delta
    b = tp[ph] * tm[pl] if unbiased else 1.0
    lam = (sig - 1.0) * delta / b
    hes = np.maximum(sig * (1 - sig), 1e-16) * delta * hf / b
    g = np.zeros((G, n)); h = np.zeros((G, n))
    for arr, idx, val in ((g, ph, lam), (g, pl, -lam), (h, ph, hes), (h, pl, hes)):
        np.add.at(arr, (np.arange(G)[:, None].repeat(idx.shape[1], 1), idx), val)
    sl_ = -2.0 * lam.sum(1)
    norm = np.where(sl_ > 0, np.log2(1.0 + sl_) / np.where(sl_ > 0, sl_, 1.0), 1.0)
    w = W if wmode == "count" else np.ones(G)
    g *= (norm * w)[:, None]; h *= (norm * w)[:, None]
    if unbiased:
        li = np.zeros(n); lj = np.zeros(n)
        np.add.at(li, ph.ravel(), (w[:, None] * cost / tm[pl]).ravel())
        np.add.at(lj, pl.ravel(), (w[:, None] * cost / tp[ph]).ravel())
        tp = (li / li[0]) ** 0.5 if li[0] > 0 else tp
        tm = (lj / lj[0]) ** 0.5 if lj[0] > 0 else tm
        hist.append(np.concatenate([tp, tm]))
    return g.ravel().astype(np.float32), h.ravel().astype(np.float32)

params = dict(tree_method="hist", grow_policy="lossguide", max_leaves=31, max_depth=0, min_child_weight=1e-3,
              eta=0.1, reg_lambda=1.0, nthread=2, seed=1, base_score=0.0)
for k, v in kv.items():
    params[k] = float(v) if k not in ("tree_method", "grow_policy") else v
qid = np.repeat(np.arange(G), n)
dtrain = xgb.DMatrix(X, label=y, qid=qid, weight=W if wmode == "count" else None)
t = time.time()
bst = xgb.train(params, dtrain, rounds, obj=obj)
Xt, _, _, _ = read_letor(test)
if Xt.shape[1] < X.shape[1]: Xt = np.pad(Xt, ((0, 0), (0, X.shape[1] - Xt.shape[1])))
np.savetxt(out, bst.predict(xgb.DMatrix(Xt[:, : X.shape[1]])), fmt="%.10g")
np.savetxt(out + ".traj", np.array(hist), fmt="%.4f")
print(f"{out}: {time.time()-t:.1f} s; t+ {' '.join('%.3f' % v for v in tp)}; t- {' '.join('%.3f' % v for v in tm)}",
      file=sys.stderr)
