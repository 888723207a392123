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

Cells run at another click seed (WORK/SET-fFOLD-USER-seedS, `SEED=S benches/bias-loss-protocol.sh`) get their own
tables; where a (set, user) has more than one seed, a pooled table follows, each test query's NDCG@10 averaged over
the seeds (over the folds every seed has), with each seed-1 finding's sign by seed. Over the pooled DCM cells it
applies the rule pre-registered in BENCHMARKS.md ("DCM clicks over simulation seeds"): `ranknet` is named the better
loss for DCM users when `reversed` − `ranknet` is negative on average over the sets, significantly (p < 0.05) so on
one at least and significantly positive on none; `debias=none` is named better than both losses when it is above
both on every set and significantly above the better on one at least.
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


def load(folds, n):
    """Each row's per-query scores (keyed `fold/qid`) over the folds that have it, and those folds."""
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
    return scores, row_folds


def table(title, scores, row_folds):
    """Print one table; return each complete row's mean and the test queries."""
    keys = sorted(scores["none"])
    mean = {k: sum(v[q] for q in keys) / len(keys) for k, v in scores.items() if len(v) == len(keys)}
    print(f"\n{title.format(queries=len(keys))}\n")
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
    return mean, keys


def user_name(user):
    return USERS.get(user) or "η = " + user[3:]


# The seed-1 findings of the DCM cells a pooled table checks by seed: (first row, second row), first − second.
FINDINGS = [("reversed", "ranknet"), ("reversed", "none"), ("xgboost", "reversed")]
LABELS = {"reversed": "`reversed`", "ranknet": "`ranknet`", "none": "naive", "xgboost": "XGBoost"}


def pooled(s, user, by_seed, n):
    """The table of (s, user) over its seeds, each query's score averaged over them; returns the means and
    per-query scores of the rows every seed has."""
    seeds = sorted(by_seed)
    common = sorted(set.intersection(*({f for f, _ in by_seed[x]} for x in seeds)))
    loaded = {x: load([(f, d) for f, d in by_seed[x] if f in common], n)[0] for x in seeds}
    rows = [k for k, _, _ in ROWS if all(k in loaded[x] and len(loaded[x][k]) == len(loaded[x]["none"])
                                         for x in seeds)]
    scores = {k: {q: sum(loaded[x][k][q] for x in seeds) / len(seeds) for q in loaded[seeds[0]][k]}
              for k in rows}
    title = (f"**{NAMES[s]}, {user_name(user)}, pooled over click seeds {', '.join(map(str, seeds))}** (folds "
             f"{', '.join(map(str, common))}; {{queries}} test queries, each query's NDCG@10 the mean over the "
             f"seeds; {int(n):,} sessions a fold and seed)")
    mean, keys = table(title, scores, {k: common for k in rows})
    for a, b in FINDINGS:
        if a not in scores or b not in scores:
            continue
        by = []
        for x in seeds:
            sa, sb = loaded[x][a], loaded[x][b]
            by.append(f"seed {x} {sum(sa[q] - sb[q] for q in keys) / len(keys):+.4f}")
        p = ttest(scores[a], scores[b], keys)
        print(f"\n{LABELS[a]} − {LABELS[b]}: {mean[a] - mean[b]:+.4f} (p = {p:.2g}); {', '.join(by)}")
    return mean, scores, keys


def dcm_rule(results):
    """The pre-registered rule over the pooled DCM cells: {set: (mean, scores, keys)}."""
    gaps = {}
    for s, (mean, scores, keys) in results.items():
        gaps[s] = (mean["reversed"] - mean["ranknet"], ttest(scores["reversed"], scores["ranknet"], keys))
    avg = sum(g for g, _ in gaps.values()) / len(gaps)
    ranknet = (avg < 0 and any(g < 0 and p < 0.05 for g, p in gaps.values())
               and not any(g > 0 and p < 0.05 for g, p in gaps.values()))
    naive_above, naive_sig = True, False
    for s, (mean, scores, keys) in results.items():
        better = max(["ranknet", "reversed"], key=lambda k: mean[k])
        if not (mean["none"] > mean["ranknet"] and mean["none"] > mean["reversed"]):
            naive_above = False
        elif ttest(scores["none"], scores[better], keys) < 0.05:
            naive_sig = True
    listed = "; ".join(f"{NAMES[s]} {g:+.4f} (p = {p:.2g})" for s, (g, p) in gaps.items())
    verdict = []
    if ranknet:
        verdict.append("name `ranknet` the better loss for users who read on after a click")
    if naive_above and naive_sig:
        verdict.append("name `debias=none` better than either loss under DCM")
    print(f"\nDCM rule (pooled over seeds): `reversed` − `ranknet` {listed}; mean {avg:+.4f}: "
          f"{' and '.join(verdict) or 'the losses are not reliably apart under DCM'}.")


def main():
    work = sys.argv[1]
    n = sys.argv[2] if len(sys.argv) > 2 else "1000000"
    cells = defaultdict(list)
    for d in sorted(glob.glob(f"{work}/*-f*-*")):
        m = re.fullmatch(r"(\w+)-f(\d+)-(eta[\d.]+|cascade|dcm)(?:-seed(\d+))?", os.path.basename(d))
        if m and os.path.isdir(d) and os.path.exists(f"{d}/pairwise:reversed-{n}.eval.json"):
            cells[(m[1], m[3], int(m[4] or 1))].append((int(m[2]), d))
    gaps, worse, others = [], [], []
    order = sorted(cells.items(), key=lambda c: (list(NAMES).index(c[0][0]), user_order(c[0][1]), c[0][2]))
    for (s, user, seed), folds in order:
        scores, row_folds = load(folds, n)
        fs = ", ".join(str(f) for f, _ in folds)
        at = "" if seed == 1 else f", click seed {seed}"
        title = (f"**{NAMES[s]}, {user_name(user)}{at}** (folds {fs}; {{queries}} test queries; {int(n):,} sessions"
                 " a fold)")
        mean, keys = table(title, scores, row_folds)
        gap = mean["reversed"] - mean["ranknet"]
        p = ttest(scores["reversed"], scores["ranknet"], keys)
        if user in USERS or seed != 1:
            others.append(f"{s} {user}{' seed ' + str(seed) if seed != 1 else ''} {gap:+.4f} (p = {p:.2g})")
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
    dcm = {}
    for s in NAMES:
        for user in sorted({u for (x, u, _) in cells if x == s}, key=user_order):
            by_seed = {seed: folds for (x, u, seed), folds in cells.items() if x == s and u == user}
            if len(by_seed) > 1:
                result = pooled(s, user, by_seed, n)
                if user == "dcm":
                    dcm[s] = result
    if others:
        print(f"\nOutside the rule, `reversed` − `ranknet` under other users: {'; '.join(others)}.")
    if dcm:
        dcm_rule(dcm)
    if not gaps:
        if others:
            return
        sys.exit(f"no finished cell under {work}")
    mean_gap = sum(gaps) / len(gaps)
    flip = mean_gap > 0 and not worse
    print(f"\nDecision: mean of `reversed` − `ranknet` over {len(gaps)} cells {mean_gap:+.4f}; significantly worse"
          f" in {', '.join(worse) or 'no cell'}: {'flip the default to reversed' if flip else 'keep ranknet'}.")


if __name__ == "__main__":
    main()
