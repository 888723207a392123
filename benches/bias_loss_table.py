"""The tables and the decision of the `bias-loss` protocol (issue 52; BENCHMARKS.md, "Choosing `bias-loss`").

Usage: bias_loss_table.py WORK [SESSIONS]   (after benches/bias-loss-protocol.sh LTR WORK CELL...)

Reads the per-query test NDCG@10 of every cell directory WORK/SET-fFOLD-etaETA, WORK/SET-fFOLD-cascade and
WORK/SET-fFOLD-dcm (the `ltr eval --json` files benches/debias-clicks.sh writes), pools the folds of each (set, user)
(every test query counted once, keyed by fold and qid) and prints one table per (set, user): lambdamart on the
judgments, the naive control, `debias=pairwise` with `bias-loss=ranknet` and `reversed`, XGBoost
`lambdarank_unbiased` and LightGBM `lambdarank_position_bias`, each with its mean, its two-sided paired t-test over
the test queries against the naive control and against `reversed`. Then the decision rule over the cells of ULTRA's
user (the users by η, the cells the protocol was written for): `reversed` becomes the default when (a) its mean over
those cells, each weighed alike, is above `ranknet`'s and (b) it is significantly worse (p < 0.05, two-sided) than
`ranknet` in no cell. The cascade and DCM cells are reported beside the rule, not in it.
Run with the peer venv's Python (scipy).
"""

import glob
import json
import os
import re
import sys
from collections import defaultdict

from scipy import stats

ROWS = [
    ("judged", "`lambdamart` on the judgments", "judged.eval.json"),
    ("none", "`debias=none` (naive)", "none-{n}.eval.json"),
    ("ranknet", "`debias=pairwise bias-loss=ranknet`", "pairwise:ranknet-{n}.eval.json"),
    ("reversed", "`debias=pairwise bias-loss=reversed`", "pairwise:reversed-{n}.eval.json"),
    ("xgboost", "XGBoost `lambdarank_unbiased`", "peers-{n}/xgboost-unbiased.eval.json"),
    ("lightgbm", "LightGBM `lambdarank_position_bias`", "peers-{n}/lightgbm-position-bias.eval.json"),
]
NAMES = {"mq2008": "MQ2008", "ohsumed": "OHSUMED", "web": "generated web (2,700 queries, seed 5)"}
# The users besides ULTRA's (a cell directory's `etaETA`), as a table names them.
USERS = {"cascade": "cascade clicks", "dcm": "DCM clicks"}


def user_order(user):
    """ULTRA's users by η first, then cascade and DCM."""
    return (1 + list(USERS).index(user), 0.0) if user in USERS else (0, float(user[3:]))


def per_query(path):
    return json.load(open(path))["metrics"]["NDCG@10"]["per_query"]


def find(d, pattern, n):
    """A row's file in cell directory d, or None; `ranknet`'s is `pairwise-N` in the cells run while it was the
    default (the protocol named only `reversed` then)."""
    path = f"{d}/{pattern.format(n=n)}"
    old = path.replace("pairwise:ranknet-", "pairwise-")
    return path if os.path.exists(path) else old if os.path.exists(old) else None


def ttest(a, b, keys):
    if len(keys) < 2 or all(a[k] == b[k] for k in keys):
        return float("nan")
    return stats.ttest_rel([a[k] for k in keys], [b[k] for k in keys]).pvalue


def main():
    work = sys.argv[1]
    n = sys.argv[2] if len(sys.argv) > 2 else "1000000"
    cells = defaultdict(list)
    for d in sorted(glob.glob(f"{work}/*-f*-*")):
        m = re.fullmatch(r"(\w+)-f(\d+)-(eta[\d.]+|cascade|dcm)", os.path.basename(d))
        if m and os.path.isdir(d) and os.path.exists(f"{d}/pairwise:reversed-{n}.eval.json"):
            cells[(m[1], m[3])].append((int(m[2]), d))
    gaps, worse, others = [], [], []
    for (s, user), folds in sorted(cells.items(), key=lambda c: (list(NAMES).index(c[0][0]), user_order(c[0][1]))):
        # A row's per-query scores over the folds that have it (the peers may be run on some folds only).
        scores, row_folds = {}, {}
        for key, _, pattern in ROWS:
            pooled, have = {}, []
            for fold, d in folds:
                path = find(d, pattern, n)
                if path:
                    pooled.update({f"{fold}/{q}": v for q, v in per_query(path).items()})
                    have.append(fold)
            if have:
                scores[key], row_folds[key] = pooled, have
        keys = sorted(scores["none"])
        mean = {k: sum(v[q] for q in keys) / len(keys) for k, v in scores.items() if len(v) == len(keys)}
        fs = ", ".join(str(f) for f, _ in folds)
        print(f"\n**{NAMES[s]}, {USERS.get(user) or 'η = ' + user[3:]}** (folds {fs}; {len(keys)} test queries;"
              f" {int(n):,} sessions a fold)\n")
        print("| model | test NDCG@10 | p against naive | p against `reversed` |")
        print("|---|---|---|---|")
        for key, label, _ in ROWS:
            if key not in scores:
                continue
            sub = sorted(scores[key])
            pn = "" if key == "none" else f"{ttest(scores[key], scores['none'], sub):.2g}"
            pr = "" if key == "reversed" else f"{ttest(scores[key], scores['reversed'], sub):.2g}"
            if key in mean:
                best = "**" if key == "reversed" and mean["reversed"] > mean["ranknet"] else ""
                value = f"{best}{mean[key]:.4f}{best}"
            else:
                m = sum(scores[key][q] for q in sub) / len(sub)
                r = sum(scores["reversed"][q] for q in sub) / len(sub)
                on = ", ".join(map(str, row_folds[key]))
                value = f"{m:.4f} (fold{'s' if len(row_folds[key]) > 1 else ''} {on}; `reversed` {r:.4f} there)"
            print(f"| {label} | {value} | {pn} | {pr} |")
        gap = mean["reversed"] - mean["ranknet"]
        p = ttest(scores["reversed"], scores["ranknet"], keys)
        if user in USERS:
            others.append(f"{s} {user} {gap:+.4f} (p = {p:.2g})")
        else:
            gaps.append(gap)
            if gap < 0 and p < 0.05:
                worse.append(f"{s} η {user[3:]}")
        per_fold = []
        for fold, d in folds:
            a = per_query(f"{d}/pairwise:reversed-{n}.eval.json")
            b = per_query(find(d, "pairwise:ranknet-{n}.eval.json", n))
            per_fold.append(f"{sum(a.values()) / len(a) - sum(b.values()) / len(b):+.4f}")
        print(f"\n`reversed` − `ranknet`: {gap:+.4f} (p = {p:.2g}); by fold {', '.join(per_fold)}")
    if others:
        print(f"\nOutside the rule, `reversed` − `ranknet` under other users: {'; '.join(others)}.")
    if not gaps:
        if others:
            return
        sys.exit(f"no finished cell under {work}")
    mean_gap = sum(gaps) / len(gaps)
    flip = mean_gap > 0 and not worse
    print(f"\nDecision: mean of `reversed` − `ranknet` over {len(gaps)} cells {mean_gap:+.4f}; significantly worse in "
          f"{', '.join(worse) or 'no cell'}: {'flip the default to reversed' if flip else 'keep ranknet'}.")


if __name__ == "__main__":
    main()
