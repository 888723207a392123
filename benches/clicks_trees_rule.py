#!/usr/bin/env python3
"""A parameter of one `reproduce clicks-trees` learner against its default, over the three sets (BENCHMARKS.md:
"`pair-hessian` over three sets", "Position factors on OHSUMED").

Usage: clicks_trees_rule.py DEBIAS DEFAULT_CELLS OTHER_CELLS
  DEBIAS: the learner's `debias` value as its cells name it (pairwise, position-factors, ...); DEFAULT_CELLS: the
  cell store of `cargo xtask reproduce clicks-trees` (results/cells), at the defaults; OTHER_CELLS: the store of
  the same experiment built with the other setting added to that learner's parameters (its own `--out`). Per set,
  each test query's NDCG@10 difference (default minus other) at 10^6 sessions is averaged over the four users: its
  mean d_s and a t-test. The rules themselves are in BENCHMARKS.md; this prints what they read. Needs numpy and
  scipy (the peer venv).
"""
import json
import sys

import numpy as np
from scipy import stats

USERS = ["PBM_0.5", "PBM_1", "PBM_2", "DCM"]
SETS = {"OHSUMED": 5, "MQ2008": 5, "WEB-GENERATED": 1}


def per_query(store, dataset, fold, user, debias):
    path = f"{store}/clicks-trees-{dataset}-f{fold}-{user}-n1000000-{debias}.json"
    with open(path) as f:
        return np.array(json.load(f)["per_query"]["NDCG@10"])


def main(debias, default, other):
    means = []
    for dataset, folds in SETS.items():
        diffs = []
        for user in USERS:
            a = np.concatenate([per_query(default, dataset, k, user, debias) for k in range(1, folds + 1)])
            b = np.concatenate([per_query(other, dataset, k, user, debias) for k in range(1, folds + 1)])
            p = stats.ttest_rel(a, b).pvalue
            print(f"{dataset:14s} {user:8s} default {a.mean():.4f} other {b.mean():.4f} "
                  f"d {a.mean() - b.mean():+.4f} p {p:.3g} better/worse {(a > b).sum()}/{(a < b).sum()}")
            diffs.append(a - b)
        d = np.mean(diffs, axis=0)
        print(f"{dataset:14s} d_s {d.mean():+.4f} p {stats.ttest_1samp(d, 0.0).pvalue:.3g} (n={len(d)})")
        means.append(d.mean())
    negative = sum(m < 0 for m in means)
    print(f"mean of d_s {np.mean(means):+.4f}, {negative} set(s) negative")

if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3])
