"""The exact click metric of a new ranker under the simulated position-based user of `ltr clicks simulate` (η = 1,
ε− = 0.1, ε+ = 1, top 10, queries drawn uniformly): prints V = E[Σ ρ(d) λ(r(d))] and V/T, T = E[Σ ρ(d)], over the
documents the production ranker displays, re-ordered by the new ranker (ties in displayed order), as
`ltr_clicks::estimate_click_metric` defines them.

Usage: click_estimate_truth.py DATA PRODUCTION_SCORES NEW_SCORES METRIC (dcg@K, clicks@K or expected-clicks)"""

import math
import sys

data, prod_path, new_path, metric = sys.argv[1:]
labels, qids = [], []
for line in open(data):
    toks = line.split("#", 1)[0].split()
    if toks:
        labels.append(float(toks[0]))
        qids.append(toks[1])
prod = [float(x) for x in open(prod_path).read().split()]
new = [float(x) for x in open(new_path).read().split()]
top_grade = max(max(labels), 1.0)
rho = [0.1 + 0.9 * (2 ** max(g, 0.0) - 1) / (2 ** top_grade - 1) for g in labels]


def gain(rank: int) -> float:
    if metric == "expected-clicks":
        return 1.0 / rank
    family, k = metric.split("@")
    if rank > int(k):
        return 0.0
    return 1.0 if family == "clicks" else 1.0 / math.log2(rank + 1)


queries = []
for i, q in enumerate(qids):
    if not queries or qids[queries[-1][0]] != q:
        queries.append([i, i])
    queries[-1][1] = i + 1
v = t = 0.0
for start, end in queries:
    shown = sorted(range(start, end), key=lambda d: (-prod[d], d))[:10]
    order = sorted(range(len(shown)), key=lambda k: (-new[shown[k]], k))
    for r, k in enumerate(order, 1):
        v += rho[shown[k]] * gain(r)
        t += rho[shown[k]]
print(v / len(queries), v / t)
