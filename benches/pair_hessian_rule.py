#!/usr/bin/env python3
"""The pre-registered `pair-hessian` rule over three sets (BENCHMARKS.md, "`pair-hessian` over three sets").

Usage: pair_hessian_rule.py DEFAULT_CELLS OTHER_CELLS
  DEFAULT_CELLS: the cell store of `cargo xtask reproduce clicks-trees` (results/cells), whose `pairwise` cells ran
  at the default pair-hessian=2; OTHER_CELLS: the store of the same experiment built with pair-hessian=1 added to
  debias=pairwise (its own `--out`). Per set, each test query's NDCG@10 difference (default minus other) at 10^6
  sessions is averaged over the four users; the rule changes the default iff two of the three sets are negative and
  the mean of the three is below 0. Needs numpy and scipy (the peer venv).
"""
import json
import sys

import numpy as np
from scipy import stats

USERS = ["PBM_0.5", "PBM_1", "PBM_2", "DCM"]
SETS = {"OHSUMED": 5, "MQ2008": 5, "WEB-GENERATED": 1}


def per_query(store, dataset, fold, user):
    path = f"{store}/clicks-trees-{dataset}-f{fold}-{user}-n1000000-pairwise.json"
    with open(path) as f:
        return np.array(json.load(f)["per_query"]["NDCG@10"])


def main(default, other):
    means = []
    for dataset, folds in SETS.items():
        diffs = []
        for user in USERS:
            a = np.concatenate([per_query(default, dataset, k, user) for k in range(1, folds + 1)])
            b = np.concatenate([per_query(other, dataset, k, user) for k in range(1, folds + 1)])
            p = stats.ttest_rel(a, b).pvalue
            print(f"{dataset:14s} {user:8s} default {a.mean():.4f} other {b.mean():.4f} "
                  f"d {a.mean() - b.mean():+.4f} p {p:.3g} better/worse {(a > b).sum()}/{(a < b).sum()}")
            diffs.append(a - b)
        d = np.mean(diffs, axis=0)
        print(f"{dataset:14s} d_s {d.mean():+.4f} p {stats.ttest_1samp(d, 0.0).pvalue:.3g} (n={len(d)})")
        means.append(d.mean())
    negative = sum(m < 0 for m in means)
    change = negative >= 2 and np.mean(means) < 0
    print(f"mean of d_s {np.mean(means):+.4f}, {negative} set(s) negative: "
          + ("the default changes" if change else "the default stays"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
