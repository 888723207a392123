"""Tree quality over several data sets and seeds: `ltr` lambdamart against LightGBM lambdarank, XGBoost rank:ndcg
and CatBoost YetiRank, with matched settings and with each program's defaults (issue 51; BENCHMARKS.md, "Tree
quality over data sets and seeds", holds the protocol and the tables).

Run inside the peer venv (never a dependency of the crates), after a release build:

    cargo build --release -p ltr-cli
    /work/venv-peers/bin/python xtask/peers/trees_quality.py --ltr target/release/ltr --label before \
        --out bench-quality [--sets mq2008,ohsumed,raw,web] [--threads 2]
    # after a change to ltr: the peers' scores are kept in --out and reused; only ltr trains again
    /work/venv-peers/bin/python xtask/peers/trees_quality.py --ltr target/release/ltr --label after --out bench-quality
    # a candidate default, measured before it becomes one: its own label, the same peers, paired with the current
    /work/venv-peers/bin/python xtask/peers/trees_quality.py --ltr target/release/ltr --label cand \
        --ltr-param ties=seeded-shuffle --paired-with after --out bench-quality
    # on a slow machine: two runs on disjoint sets (or folds) into one --out, then the tables over all of them
    ... --label after --out bench-quality --sets mq2008 --folds 1,2,3   # and beside it --folds 4,5, --sets web ...
    /work/venv-peers/bin/python xtask/peers/trees_quality.py --ltr target/release/ltr --label after \
        --out bench-quality --no-train [--real NAME=DIR]...

Data sets (each test query counts once; folds and seeds are pooled within a set):
  - mq2008: MQ2008, five folds (`letor4` convention), from $LTR_DATASETS or ../shared/datasets;
  - ohsumed: OHSUMED QueryLevelNorm, five folds (`letor3`);
  - raw: `ltr generate --profile web-raw --queries 200 --seed S` for S = 1, 2, 3, one set per seed (`mslr`);
  - web: the issue's set, `ltr generate --profile web --queries 1000 --seed 11 --nonlinearity 0.5 --noise 1.5`
    (119,874 documents);
  - raw-large: the raw profile near 10^5 documents, `ltr generate --profile web-raw --queries 550 --seed 11`;
  - `--real NAME=DIR`: any further set with train.txt and test.txt (real raw data one has; never committed).
Generated sets are written under OUT/data once, by the `ltr` given (the generators are not what is measured).

Settings (every program sees the training file only: no validation, no early stopping):
  - matched: 100 trees, 31 leaves, learning rate 0.1, 20 documents a leaf, 255 bins, pairs truncated at 30.
    `ltr train --algo lambdamart --param ndcg-at=30 --normalize none`; LightGBM `lambdarank` as in trees.py;
    XGBoost `rank:ndcg` with eta 0.1, lossguide trees of 31 leaves, 255 bins, top-30 pairs (it has no
    documents-a-leaf floor); CatBoost `YetiRank`, 100 iterations, learning rate 0.1, Lossguide, 31 leaves, 20
    documents a leaf, 255 borders;
  - defaults: `ltr train --algo lambdamart` (its defaults: `--normalize auto`, which z-scores raw features);
    LightGBM `lambdarank` with nothing else set, 100 rounds (LGBMRanker's defaults); XGBoost `rank:ndcg`, 100
    rounds (XGBRanker's); CatBoost `YetiRank` with nothing else set (1,000 iterations).
The protocol's settings: every program runs under each setting three times, with the learning rate times 0.995, 1
and 1.005 and seeds 1, 0 and 2 with them (the first run is factor 1, seed 0: the single run of old; `--settings
1` keeps only it). The seed reaches what a program draws at random: CatBoost's `random_seed`, XGBoost's `seed`,
`ltr`'s `--seed` (which moves `ties=seeded-shuffle`, nothing under the default `ties=file-order`); LightGBM draws
nothing at these settings. CatBoost's defaults choose their learning rate from the data, so only the seed moves
them. Each test query's NDCG@10 is averaged over the three runs, and the tables and t-tests take those means: a
one-run score moves by up to 0.03 on 43 test queries under a 0.5% change of the learning rate (BENCHMARKS.md).
With `--validate`, `ltr` trains as `cargo xtask reproduce` does: with the fold's vali.txt (where there is one; the
generated sets have one, the MSLR sample not), early stopping on NDCG@10 under the set's convention; the peers keep
their runs above. `--paired-with LABEL` adds a paired t-test of `ltr`'s per-query values against another run's
(a candidate default against the current one: protocol rule (b)); `--raw-seeds 4,5,6` is the held-out check.
Every model scores the set's test file; `ltr eval --per-query` computes NDCG@10 under the set's convention, and a
paired t-test over the pooled test queries (scipy's `ttest_rel`) compares each program with LightGBM under the
same setting. Prints Markdown tables (the means, and each run's own score) and writes OUT/quality-LABEL.json.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

import numpy as np
from scipy import stats

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from trees import CB_SCRIPT, LGBM_SCRIPT, XGB_SCRIPT, strip_to_lightgbm  # noqa: E402

# $LTR_DATASETS if set, else ../shared/datasets beside the project root (as ltr-testdata finds them).
DATASETS = pathlib.Path(os.environ.get("LTR_DATASETS") or
                        pathlib.Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets")
RAW_SEEDS = (1, 2, 3)
RAW_QUERIES = 200
RAW_LARGE_ARGS = ["--profile", "web-raw", "--queries", "550", "--seed", "11"]
WEB_ARGS = ["--profile", "web", "--queries", "1000", "--seed", "11", "--nonlinearity", "0.5", "--noise", "1.5"]


def run(cmd, env=None):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd[:3]))} failed:\n{r.stderr[-3000:]}")
    return time.perf_counter() - t, r.stdout


def sets(a, out):
    """(set name, convention, [fold folders]) for every set asked."""
    wanted = a.sets.split(",")
    found = []
    if "mq2008" in wanted:
        found.append(("MQ2008", "letor4", [DATASETS / "MQ2008" / f"Fold{k}" for k in a.folds if k <= a.max_folds]))
    if "ohsumed" in wanted:
        found.append(("OHSUMED", "letor3",
                      [DATASETS / "OHSUMED" / "QueryLevelNorm" / f"Fold{k}" for k in a.folds if k <= a.max_folds]))
    gen = []
    if "raw" in wanted:
        gen += [(f"web-raw seed {s}", ["--profile", "web-raw", "--queries", str(RAW_QUERIES), "--seed", str(s)])
                for s in a.raw_seeds]
    if "web" in wanted:
        gen.append(("web (issue 51)", WEB_ARGS))
    if "raw-large" in wanted:
        gen.append(("web-raw 550 q seed 11", RAW_LARGE_ARGS))
    for name, args in gen:
        folder = out / "data" / name.replace(" ", "-").replace("(", "").replace(")", "")
        if not (folder / "test.txt").exists():
            if a.no_train:
                continue
            run([a.ltr, "generate", *args, "--out", str(folder)])
        found.append((name, "mslr", [folder]))
    for spec in a.real:
        name, _, folder = spec.partition("=")
        found.append((name, "mslr", [pathlib.Path(folder)]))
    for name, _, folds in found:
        for f in folds:
            if not (f / "train.txt").exists():
                sys.exit(f"{name}: {f / 'train.txt'} not found")
    return [s for s in found if not a.no_train or all((f / "test.txt").exists() for f in s[2])]


# The protocol's settings of every program (BENCHMARKS.md, "Protocol for choosing tree defaults"): the learning
# rate times a factor, and the seed of a program that draws at random. The first is the single run of old.
SETTINGS = ((1.0, 0), (0.995, 1), (1.005, 2))


def jobs(a, fold, work, convention):
    """(method, setting, k, is_ltr, command, scores file, model) of every training on one fold, k the index into
    SETTINGS; ltr's predict runs after."""
    train, test = str(fold / "train.txt"), str(fold / "test.txt")
    vali = fold / "vali.txt"
    # --validate: ltr's runs as `cargo xtask reproduce` trains (early stopping on the fold's validation NDCG@10)
    validate = (["--validate", str(vali), "--metric", "NDCG@10", "--convention", convention]
                if a.validate and vali.exists() else [])
    lgb_train, lgb_test = str(work / "train.lgb"), str(work / "test.lgb")
    py, t = sys.executable, str(a.threads)
    out = []
    extra = [x for kv in a.ltr_param for x in ("--param", kv)]
    for k, (factor, seed) in enumerate(SETTINGS[:a.settings]):
        sfx = "" if k == 0 else f"-s{k}"  # k = 0 keeps the file names of the single-run script
        for setting, ltr_args in (("matched", ["--param", "ndcg-at=30", "--normalize", "none"]), ("defaults", [])):
            # lambdamart's learning rate is 0.1 under both settings; --seed only moves what draws at random
            # (ties=seeded-shuffle, sampling); a factor of 1 passes nothing, so k = 0 is the run of old.
            nudge = ([] if factor == 1.0 else ["--param", f"learning-rate={0.1 * factor:.10g}"]) + \
                ([] if seed == 0 else ["--seed", str(seed)])
            args = ltr_args + nudge + extra + validate
            model = work / f"ltr-{setting}-{a.label}{sfx}.bin"
            out.append(("ltr lambdamart", setting, k, True,
                        [a.ltr, "train", "--train", train, "--algo", "lambdamart", *args, "--model", str(model)],
                        work / f"ltr-{setting}-{a.label}{sfx}.scores", model))
            f = f"{factor:g}"
            # LGBMRanker's defaults are the matched settings (lambdarank, 100 rounds, 31 leaves, 20 a leaf, 255
            # bins, truncation 30, learning rate 0.1): one model serves both rows.
            out.append(("LightGBM lambdarank", setting, k, False,
                        [py, "-c", LGBM_SCRIPT, lgb_train, lgb_test, str(work / f"lgbm-matched{sfx}.scores"), t,
                         "100", "matched", f], work / f"lgbm-matched{sfx}.scores", None))
            out.append(("XGBoost rank:ndcg", setting, k, False,
                        [py, "-c", XGB_SCRIPT, lgb_train, lgb_test, str(work / f"xgb-{setting}{sfx}.scores"), t,
                         setting, f, str(seed)], work / f"xgb-{setting}{sfx}.scores", None))
            if a.catboost_defaults or setting == "matched":
                out.append(("CatBoost YetiRank", setting, k, False,
                            [py, "-c", CB_SCRIPT, train, test, str(work / f"cb-{setting}{sfx}.scores"), t, setting,
                             f, str(seed)], work / f"cb-{setting}{sfx}.scores", None))
    return out


def per_query_ndcg(a, test, scores, convention):
    _, text = run([a.ltr, "eval", "--data", str(test), "--scores", str(scores), "--metric", "NDCG@10",
                   "--convention", convention, "--per-query", "--json"])
    return json.loads(text)["metrics"]["NDCG@10"]["per_query"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ltr", help="the ltr binary (release build); not needed with --peers-only")
    ap.add_argument("--out", default="bench-quality")
    ap.add_argument("--label", default="run", help="names ltr's models and scores, so runs of two builds coexist")
    ap.add_argument("--sets", default="mq2008,ohsumed,raw,web,raw-large")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--real", action="append", default=[], metavar="NAME=DIR",
                    help="a further set: DIR holds train.txt and test.txt (raw features; `mslr` convention)")
    ap.add_argument("--ltr-param", action="append", default=[], metavar="K=V",
                    help="a further `--param K=V` for both of ltr's runs: a candidate default (give it its own --label)")
    ap.add_argument("--raw-seeds", type=lambda v: [int(x) for x in v.split(",")], default=list(RAW_SEEDS),
                    help="the raw profile's seeds (the protocol's held-out check: 4,5,6)")
    ap.add_argument("--validate", action="store_true",
                    help="ltr trains with the fold's vali.txt where there is one (early stopping on NDCG@10)")
    ap.add_argument("--paired-with", metavar="LABEL",
                    help="also a paired t-test of ltr's per-query values against those of run LABEL (same --out)")
    ap.add_argument("--max-folds", type=int, default=5, help="the first N folds of a LETOR set (a quick check)")
    ap.add_argument("--folds", type=lambda v: [int(x) for x in v.split(",")], default=[1, 2, 3, 4, 5],
                    help="which folds of a LETOR set (e.g. 1,2,3 here and 4,5 in a second run into the same --out)")
    ap.add_argument("--rerun-peers", action="store_true", help="train the peers again even if their scores exist")
    ap.add_argument("--reuse-ltr", action="store_true",
                    help="score ltr's models of this --label again instead of training them (tables from a run's files)")
    ap.add_argument("--settings", type=int, default=len(SETTINGS), choices=range(1, len(SETTINGS) + 1),
                    help="how many of the protocol's settings each program averages over (1: the single run at "
                         "learning rate 0.1 and seed 0)")
    ap.add_argument("--no-catboost-defaults", dest="catboost_defaults", action="store_false",
                    help="leave out CatBoost's defaults (1,000 iterations: the longest runs of the script)")
    ap.add_argument("--no-train", action="store_true",
                    help="train nothing: tables from the scores in --out (a program or set without them is left out; "
                         "two runs on disjoint --sets into one --out, then one --no-train run over all)")
    ap.add_argument("--peers-only", action="store_true",
                    help="only train the peers' models into --out (no ltr, no tables: the generated sets need ltr, so "
                         "with mq2008, ohsumed and --real sets), e.g. while ltr builds")
    a = ap.parse_args()
    if a.ltr is None and not a.peers_only:
        ap.error("--ltr is required")
    a.ltr = str(pathlib.Path(a.ltr).resolve()) if a.ltr else None
    a.reuse_ltr = a.reuse_ltr or a.no_train
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, RAYON_NUM_THREADS=str(a.threads), RUST_LOG="warn")
    rows, seconds = [], {}
    for name, convention, folds in sets(a, out):
        # (method, setting) -> one list per setting k of per-query NDCG@10, in one order over the set's folds
        values = {}
        for fold in folds:
            work = out / "work" / name.replace(" ", "-").replace("(", "").replace(")", "") / fold.name
            work.mkdir(parents=True, exist_ok=True)
            for part in ("train", "test"):
                if not (work / f"{part}.lgb.query").exists():
                    strip_to_lightgbm(fold / f"{part}.txt", work / f"{part}.lgb")
            fold_jobs = jobs(a, fold, work, convention)
            if a.no_train and not all(j[5].exists() for j in fold_jobs
                                      if (j[0], j[1]) != ("CatBoost YetiRank", "defaults")):
                # a fold not (or not wholly) run in this --out is left out of every row, so pairs stay aligned
                print(f"{name} {fold.name} left out: not every program's scores are there", file=sys.stderr)
                continue
            for method, setting, k, is_ltr, cmd, scores, model in fold_jobs:
                if a.peers_only:
                    if not is_ltr and (a.rerun_peers or not scores.exists()):
                        run(cmd, env)
                    continue
                if a.no_train and not scores.exists():
                    values[(method, setting)] = None  # not run in this --out: the row is left out for the set
                    continue
                if (is_ltr and not a.reuse_ltr) or a.rerun_peers or not scores.exists():
                    secs, _ = run(cmd, env)
                    seconds.setdefault(f"{name} {method} {setting}", []).append(secs)
                    if model is not None:
                        run([a.ltr, "predict", "--model", str(model), "--data", str(fold / "test.txt"), "--out",
                             str(scores)], env)
                pq = per_query_ndcg(a, fold / "test.txt", scores, convention)
                if (method, setting) in values and values[(method, setting)] is None:
                    continue
                runs = values.setdefault((method, setting), [])
                while len(runs) <= k:
                    runs.append([])
                runs[k].extend(pq[q] for q in sorted(pq))
            print(f"{name} {fold.name} done", file=sys.stderr, flush=True)
        if a.peers_only:
            continue
        for (method, setting), runs in values.items():
            if runs is None:
                continue
            # Each query's value averaged over the settings; the t-test pairs these means query by query.
            base = np.mean(np.array(values[("LightGBM lambdarank", setting)]), axis=0)
            per_run = np.array(runs)
            v = per_run.mean(axis=0)
            p = None if method.startswith("LightGBM") else float(stats.ttest_rel(v, base).pvalue)
            rows.append({"set": name, "method": method, "setting": setting, "queries": len(v),
                         "settings": len(runs), "ndcg10": float(v.mean()), "minus_lightgbm": float(v.mean() -
                                                                                                  base.mean()),
                         "p": p, "per_run": per_run.mean(axis=1).tolist(), "per_query": v.tolist()})
    if a.peers_only:
        return
    (out / f"quality-{a.label}.json").write_text(json.dumps({"rows": rows, "seconds": seconds}, indent=1))
    if a.paired_with:
        other = json.loads((out / f"quality-{a.paired_with}.json").read_text())["rows"]
        print(f"\n`ltr` {a.label} against {a.paired_with} (paired t-test over the set's test queries)\n")
        print("| set | setting | " + a.paired_with + " | " + a.label + " | difference | p |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            o = next((x for x in other if (x["set"], x["method"], x["setting"]) ==
                      (r["set"], r["method"], r["setting"])), None)
            if r["method"] != "ltr lambdamart" or o is None:
                continue
            v, w = np.array(r["per_query"]), np.array(o["per_query"])
            p = float(stats.ttest_rel(v, w).pvalue) if np.any(v != w) else 1.0
            print(f"| {r['set']} | {r['setting']} | {w.mean():.4f} | {v.mean():.4f} | {v.mean() - w.mean():+.4f} "
                  f"| {p:.2g} |")
    for setting in ("matched", "defaults"):
        names = list(dict.fromkeys(r["set"] for r in rows))
        methods = list(dict.fromkeys(r["method"] for r in rows if r["setting"] == setting))
        print(f"\n**{setting}** (test NDCG@10, each query's value averaged over the settings; p: paired t-test "
              "against LightGBM over the set's test queries)\n")
        print("| method | " + " | ".join(names) + " | mean over sets | − LightGBM |")
        print("|---|" + "---|" * (len(names) + 2))
        lgbm = {r["set"]: r["ndcg10"] for r in rows if r["setting"] == setting and r["method"].startswith("LightGBM")}
        for m in methods:
            cells, means, bases = [], [], []
            for n in names:
                r = next((r for r in rows if r["set"] == n and r["method"] == m and r["setting"] == setting), None)
                if r is None:
                    cells.append("—")
                    continue
                means.append(r["ndcg10"])
                bases.append(lgbm[n])
                cells.append(f"{r['ndcg10']:.4f}" + ("" if r["p"] is None else f" (p = {r['p']:.2g})"))
            # A method missing on some sets: its mean over the sets it ran on, against LightGBM's over the same.
            part = "" if len(means) == len(names) else f" ({len(means)} sets)"
            print(f"| {m} | " + " | ".join(cells) + f" | {np.mean(means):.4f}{part} | "
                  f"{np.mean(means) - np.mean(bases):+.4f}{part} |")
        print(f"\n{setting}, each run's own test NDCG@10 ("
              + "; ".join(f"learning rate ×{f:g}, seed {s}" for f, s in SETTINGS[:a.settings]) + ")\n")
        print("| method | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for m in methods:
            found = [next((r for r in rows if r["set"] == n and r["method"] == m and r["setting"] == setting), None)
                     for n in names]
            cells = ["—" if r is None else " / ".join(f"{x:.4f}" for x in r["per_run"]) for r in found]
            print(f"| {m} | " + " | ".join(cells) + " |")

if __name__ == "__main__":
    main()
