"""Pool benches/neural-clicks.sh's runs by set: test NDCG@10 per row, and IPS against its naive control.

Usage: python3 benches/neural_clicks_table.py WORKDIR

A set is the dataset path without its fold (`.../MQ2008/Fold3` -> MQ2008); its test queries are pooled over the
folds given. p is the one-sided paired t-test over the pooled test queries that the IPS row is above its naive
control (scipy)."""

import json
import os
import re
import sys

from scipy import stats

ROWS = [
    "production",
    "neural-listnet-naive",
    "neural-listnet-ips",
    "neural-default-naive",
    "neural-default-ips",
    "lambdarank-naive",
    "lambdarank-ips",
    "neural-judged",
    "neural-dla",
    "lambdarank-dla",
    "neural-two-stage",
]
PAIRS = [("neural-listnet-ips", "neural-listnet-naive"), ("neural-default-ips", "neural-default-naive"),
         ("lambdarank-ips", "lambdarank-naive"), ("neural-dla", "neural-listnet-naive"),
         ("neural-two-stage", "neural-listnet-naive"), ("neural-two-stage", "neural-dla")]
# ULTRA's examination curve (benches/clicks-preamble.sh), relative to rank 1 and raised to η; PBM's is (1/k)^η.
CURVE = [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]


def set_name(dataset):
    parts = [p for p in dataset.rstrip("/").split("/") if p]
    parts = [p for p in parts if not re.fullmatch(r"Fold\d+", p) and p != "QueryLevelNorm"]
    return parts[-1] if parts else dataset


def main(root):
    sets = {}
    for run in sorted(os.listdir(root), key=lambda s: (len(s), s)):
        work = os.path.join(root, run)
        if not os.path.isfile(os.path.join(work, "dataset")):
            continue
        name = set_name(open(os.path.join(work, "dataset")).read().strip())
        per = sets.setdefault(name, {r: {} for r in ROWS})
        for r in ROWS:
            path = os.path.join(work, f"{r}.eval.json")
            if not os.path.isfile(path):
                continue
            q = json.load(open(path))["metrics"]["NDCG@10"]["per_query"]
            per[r].update({f"{run}:{k}": v for k, v in q.items()})
    print("| set (test queries) | " + " | ".join(ROWS) + " |")
    print("|---|" + "---|" * len(ROWS))
    for name, per in sets.items():
        n = len(per["production"])
        cells = [f"{sum(v.values()) / len(v):.4f}" if v else "" for v in (per[r] for r in ROWS)]
        print(f"| {name} ({n}) | " + " | ".join(cells) + " |")
    print()
    print("| set | pair | mean difference | p (IPS > naive, one-sided) |")
    print("|---|---|---|---|")
    for name, per in sets.items():
        for a, b in PAIRS:
            keys = sorted(set(per[a]) & set(per[b]))
            if not keys:
                continue
            x, y = [per[a][k] for k in keys], [per[b][k] for k in keys]
            d = sum(x) / len(x) - sum(y) / len(y)
            p = stats.ttest_rel(x, y, alternative="greater").pvalue
            print(f"| {name} | {a} − {b} | {d:+.4f} | {p:.3g} |")
    dla = []
    for run in sorted(os.listdir(root), key=lambda s: (len(s), s)):
        work = os.path.join(root, run)
        model = os.path.join(work, "neural-dla.json")
        if not (os.path.isfile(model) and os.path.isfile(os.path.join(work, "user"))):
            continue
        user, eta = open(os.path.join(work, "user")).read().split()
        diag = json.load(open(model))["diagnostics_json"]
        diag = json.loads(diag) if isinstance(diag, str) else diag
        theta = diag["position_bias"]["propensities"][:10]
        truth = ([(c / CURVE[0]) ** float(eta) for c in CURVE] if user == "ultra"
                 else [(1 / k) ** float(eta) for k in range(1, 11)])
        err = max(abs(t / u - 1) for t, u in zip(theta, truth))
        name = set_name(open(os.path.join(work, "dataset")).read().strip())
        dla.append(f"| {name} ({run}) | {', '.join(f'{t:.3f}' for t in theta)} | {100 * err:.1f}% |")
    if dla:
        print()
        print("| run | `neural debias=dla` propensities, ranks 1–10 | worst error |")
        print("|---|---|---|")
        print("\n".join(dla))


if __name__ == "__main__":
    main(sys.argv[1])
