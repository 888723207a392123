"""LambdaMART / MART / Random Forest against LightGBM and XGBoost in the same run: quality and whole-process time.

Run inside the peer venv (never a dependency of the crates):

    ../shared/tools/peer-venv.sh .venv-peers
    cargo build --release -p ltr-cli
    .venv-peers/bin/python xtask/peers/trees.py --ltr target/release/ltr --threads 2 \
        --fold ../shared/datasets/MQ2008/Fold1 [--fold ...] [--convention letor4] [--out bench-trees]
    # OHSUMED, five folds, with the defaults' rows:
    .venv-peers/bin/python xtask/peers/trees.py --ltr target/release/ltr --defaults --convention letor3 \
        --fold ../shared/datasets/OHSUMED/QueryLevelNorm/Fold1 ... --fold .../Fold5 --out bench-ohsumed
    # RankLib, interleaved, fastest of 3 (the jar from xtask/peers/build-ranklib.sh):
    .venv-peers/bin/python xtask/peers/trees.py --ltr target/release/ltr --no-lightgbm --repeat 3 \
        --ranklib target/peers/RankLib.jar --fold ../shared/datasets/MQ2008/Fold1

Per fold it writes LightGBM's own input (the LibSVM lines without `qid:` and comments, plus `.query` sidecars; not
timed), then times whole processes, each reading its text files itself:
  - `ltr train --algo lambdamart` with LightGBM's lambdarank settings (100 trees, 31 leaves, learning rate 0.1,
    20 documents a leaf, 255 bins, pairs truncated at 30, ideal DCG@30, per-query normalisation), no early stopping;
  - LightGBM `lambdarank` with the same settings, loading the files through its own loader;
  - CatBoost `YetiRank` with the same settings where CatBoost has them (100 iterations, learning rate 0.1,
    `Lossguide` trees of 31 leaves, 20 documents a leaf, 255 borders), reading the LETOR files (unless
    `--no-catboost`);
  - with `--defaults`: `ltr`'s lambdamart defaults with validation, XGBoost `rank:ndcg` with its defaults and
    CatBoost `YetiRank` with its defaults (1,000 iterations of depth-6 symmetric trees, learning rate 0.03);
  - with `--ranklib JAR` (built by xtask/peers/build-ranklib.sh): RankLib LambdaMART matched to `ltr` (`-ranker 6
    -tree 100 -leaf 31 -shrinkage 0.1 -mls 20 -metric2t NDCG@10`, no validation) and, with `--defaults`, RankLib's
    defaults (`-ranker 6 -metric2t NDCG@10`: 1000 trees of 10 leaves, early stopping on the validation file).
With `--repeat N` every timed training runs N times, interleaved (ltr, peer, ltr, peer, ...), and the fastest run
of each counts: on a shared machine, load hits both alike. A fold may also be a folder holding only train.txt and
test.txt (generated data). Every model scores the test file; `ltr eval` computes NDCG@10 and MAP under the convention, and `ltr compare` the
paired t-test over test queries. Prints a Markdown table and writes results.json under --out.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time


def strip_to_lightgbm(src: pathlib.Path, dst: pathlib.Path) -> None:
    """LETOR lines → `label idx:val ...` and a `.query` file of group sizes (LightGBM's own format)."""
    sizes, last = [], None
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            toks = line.split()
            q = toks[1]
            assert q.startswith("qid:"), f"{src}: no qid on a line"
            if q != last:
                sizes.append(0)
                last = q
            sizes[-1] += 1
            out.write(" ".join([toks[0]] + toks[2:]) + "\n")
    with open(str(dst) + ".query", "w") as out:
        out.write("\n".join(map(str, sizes)) + "\n")


def timed(cmd, env=None):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    secs = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{r.stderr[-3000:]}")
    return secs, r.stdout


LGBM_SCRIPT = r"""
import sys, time, lightgbm as lgb, numpy as np
t0 = time.perf_counter()
train, test, out, threads, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
mode = sys.argv[6] if len(sys.argv) > 6 else "matched"
# A factor on the learning rate (0.1 under both settings): trees_quality.py's protocol. LightGBM draws nothing at
# random under these settings (no bagging, no feature fraction, all rows binned), so it takes no seed.
factor = float(sys.argv[7]) if len(sys.argv) > 7 else 1.0
rate = 0.1 * factor
if mode == "matched":
    params = {"objective": "lambdarank", "num_threads": threads, "verbose": -1, "num_leaves": 31,
              "learning_rate": rate, "min_data_in_leaf": 20, "max_bin": 255, "lambdarank_truncation_level": 30,
              "deterministic": True, "force_row_wise": False}
    ds = lgb.Dataset(train, params={"max_bin": 255, "verbose": -1})
else:  # LGBMRanker's defaults: lambdarank, 100 rounds, nothing else set
    params = {"objective": "lambdarank", "num_threads": threads, "verbose": -1, "deterministic": True}
    if factor != 1.0:
        params["learning_rate"] = rate
    ds = lgb.Dataset(train, params={"verbose": -1})
b = lgb.train(params, ds, num_boost_round=rounds)
print(time.perf_counter() - t0)
s = b.predict(test, num_threads=threads)
np.savetxt(out, s, fmt="%.17g")
"""

XGB_SCRIPT = r"""
import sys, xgboost as xgb, numpy as np
train, test, out, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
mode = sys.argv[5] if len(sys.argv) > 5 else "defaults"
# A factor on the learning rate (0.1 matched, XGBoost's 0.3 by default) and a seed: trees_quality.py's protocol.
factor = float(sys.argv[6]) if len(sys.argv) > 6 else 1.0
seed = int(sys.argv[7]) if len(sys.argv) > 7 else 0
dtrain = xgb.DMatrix(train + "?format=libsvm")
dtrain.set_group(np.loadtxt(train + ".query", dtype=int, ndmin=1))
params = {"objective": "rank:ndcg", "nthread": threads, "tree_method": "hist"}
if factor != 1.0:
    params["eta"] = 0.3 * factor
if seed != 0:
    params["seed"] = seed
if mode == "matched":
    # No documents-a-leaf floor in XGBoost (min_child_weight is a hessian sum): that one setting stays its own.
    params.update({"eta": 0.1 * factor, "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
                   "max_bin": 255, "lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": 30})
b = xgb.train(params, dtrain, num_boost_round=100)
s = b.predict(xgb.DMatrix(test + "?format=libsvm"))
np.savetxt(out, s, fmt="%.17g")
"""

# CatBoost reads the LETOR files through scikit-learn's SVMlight reader (qid and comments), dense.
CB_SCRIPT = r"""
import sys, numpy as np
from sklearn.datasets import load_svmlight_files
from catboost import CatBoostRanker, Pool
train, test, out, threads, mode = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
# A factor on the matched learning rate and the seed (trees_quality.py's protocol; the defaults' rate is CatBoost's
# own choice from the data, which only the seed moves).
factor = float(sys.argv[6]) if len(sys.argv) > 6 else 1.0
seed = int(sys.argv[7]) if len(sys.argv) > 7 else 0
Xtr, ytr, qtr, Xte, _, qte = load_svmlight_files([train, test], query_id=True)
params = {"loss_function": "YetiRank", "thread_count": threads, "random_seed": seed, "verbose": False,
          "allow_writing_files": False}
if mode == "matched":
    params.update({"iterations": 100, "learning_rate": 0.1 * factor, "grow_policy": "Lossguide", "max_leaves": 31,
                   "depth": 16, "min_data_in_leaf": 20, "border_count": 255})
m = CatBoostRanker(**params)
m.fit(Pool(Xtr.toarray(), ytr, group_id=qtr))
np.savetxt(out, m.predict(Pool(Xte.toarray(), group_id=qte)), fmt="%.17g")
"""


def evaluate(ltr, test, scores, convention):
    _, out = timed([ltr, "eval", "--data", test, "--scores", scores, "--metric", "NDCG@10", "--metric", "MAP",
                    "--convention", convention, "--json"])
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ltr", required=True)
    ap.add_argument("--fold", action="append", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--convention", default="letor4")
    ap.add_argument("--defaults", action="store_true", help="also ltr defaults with validation and XGBoost rank:ndcg")
    ap.add_argument("--out", default="bench-trees")
    ap.add_argument("--ltr-param", action="append", default=[], help="extra --param for ltr's matched run")
    ap.add_argument("--ranklib", help="RankLib jar: also RankLib LambdaMART")
    ap.add_argument("--no-lightgbm", action="store_true", help="leave LightGBM out (a RankLib-only comparison)")
    ap.add_argument("--no-catboost", action="store_true", help="leave CatBoost out")
    ap.add_argument("--repeat", type=int, default=1, help="timed runs of each training, interleaved; fastest kept")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, RAYON_NUM_THREADS=str(a.threads), RUST_LOG="warn")
    rows = []
    for fold in map(pathlib.Path, a.fold):
        name = f"{fold.parent.name}-{fold.name}"
        work = out / name
        work.mkdir(exist_ok=True)
        for part in ("train", "vali", "test"):
            if (fold / f"{part}.txt").exists():
                strip_to_lightgbm(fold / f"{part}.txt", work / f"{part}.lgb")
        test = str(fold / "test.txt")
        vali = fold / "vali.txt"
        # Each job: (label, training command, prediction command or None, scores file, extra stdout parser).
        jobs = []
        model = work / "lambdamart.bin"
        jobs.append(("ltr lambdamart", [a.ltr, "train", "--train", str(fold / "train.txt"), "--algo", "lambdamart",
                     "--param", f"trees={a.rounds}", "--param", "stop-after=0", "--param", "ndcg-at=30",
                     "--normalize", "none", "--model", str(model)]
                     + [x for p in a.ltr_param for x in ("--param", p)],
                     [a.ltr, "predict", "--model", str(model), "--data", test, "--out", str(work / "ltr.scores")],
                     work / "ltr.scores"))
        if not a.no_lightgbm:
            jobs.append(("LightGBM lambdarank", [sys.executable, "-c", LGBM_SCRIPT, str(work / "train.lgb"),
                         str(work / "test.lgb"), str(work / "lgbm.scores"), str(a.threads), str(a.rounds)],
                         None, work / "lgbm.scores"))
            if not a.no_catboost:
                jobs.append(("CatBoost YetiRank, matched", [sys.executable, "-c", CB_SCRIPT, str(fold / "train.txt"),
                             test, str(work / "cb.scores"), str(a.threads), "matched"], None, work / "cb.scores"))
        if a.ranklib:
            # RankLib scores through `ltr predict`, which reads its LambdaMART model files.
            rl = work / "ranklib.txt"
            jobs.append(("RankLib LambdaMART, matched", ["java", "-jar", a.ranklib, "-train", str(fold / "train.txt"),
                         "-ranker", "6", "-tree", str(a.rounds), "-leaf", "31", "-shrinkage", "0.1", "-mls", "20",
                         "-metric2t", "NDCG@10", "-save", str(rl)],
                         [a.ltr, "predict", "--model", str(rl), "--data", test, "--out", str(work / "rl.scores")],
                         work / "rl.scores"))
        if a.defaults:
            model = work / "lambdamart-defaults.bin"
            with_vali = ["--validate", str(vali)] if vali.exists() else []
            jobs.append(("ltr lambdamart defaults (validated)", [a.ltr, "train", "--train", str(fold / "train.txt")]
                         + with_vali + ["--algo", "lambdamart", "--model", str(model)],
                         [a.ltr, "predict", "--model", str(model), "--data", test, "--out",
                          str(work / "ltr-def.scores")], work / "ltr-def.scores"))
            if not a.no_lightgbm:
                jobs.append(("XGBoost rank:ndcg defaults", [sys.executable, "-c", XGB_SCRIPT, str(work / "train.lgb"),
                             str(work / "test.lgb"), str(work / "xgb.scores"), str(a.threads)], None,
                             work / "xgb.scores"))
            if not a.no_lightgbm and not a.no_catboost:
                jobs.append(("CatBoost YetiRank defaults", [sys.executable, "-c", CB_SCRIPT, str(fold / "train.txt"),
                             test, str(work / "cb-def.scores"), str(a.threads), "defaults"], None,
                             work / "cb-def.scores"))
            if a.ranklib:
                rl = work / "ranklib-defaults.txt"
                rl_vali = ["-validate", str(vali)] if vali.exists() else []
                jobs.append(("RankLib LambdaMART defaults", ["java", "-jar", a.ranklib, "-train",
                             str(fold / "train.txt")] + rl_vali + ["-ranker", "6", "-metric2t", "NDCG@10",
                             "-save", str(rl)],
                             [a.ltr, "predict", "--model", str(rl), "--data", test, "--out",
                              str(work / "rl-def.scores")], work / "rl-def.scores"))
        runs, lgbm_load_train = {}, None
        for _ in range(a.repeat):
            for label, train_cmd, predict_cmd, scores in jobs:
                secs, out_text = timed(train_cmd, env)
                if label == "LightGBM lambdarank":
                    inner = float(out_text.split()[0])
                    lgbm_load_train = inner if lgbm_load_train is None else min(lgbm_load_train, inner)
                best = runs.get(label, (float("inf"), scores, []))
                runs[label] = (min(best[0], secs), scores, best[2] + [secs])
        for label, train_cmd, predict_cmd, scores in jobs:
            if predict_cmd:
                timed(predict_cmd, env)
        base = None
        for label, (secs, scores, all_secs) in runs.items():
            ev = evaluate(a.ltr, test, str(scores), a.convention)
            row = {"fold": name, "method": label, "seconds": secs, "every_run_seconds": all_secs}
            if label == "LightGBM lambdarank":
                row["load_and_train_seconds"] = lgbm_load_train
            for metric, v in ev["metrics"].items():
                row[metric] = v["mean"]
            if base is None:
                base = scores
            else:
                _, cmp = timed([a.ltr, "compare", "--data", test, "--scores", str(base), "--scores", str(scores),
                                "--metric", "NDCG@10", "--convention", a.convention, "--json"])
                row["compare_vs_ltr"] = json.loads(cmp)
            rows.append(row)
    (out / "results.json").write_text(json.dumps(rows, indent=1))
    print("| fold | method | whole process s | load+train s | NDCG@10 | MAP |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        inner = r.get("load_and_train_seconds")
        print(f"| {r['fold']} | {r['method']} | {r['seconds']:.2f} | {'' if inner is None else f'{inner:.2f}'} | "
              f"{r.get('NDCG@10', float('nan')):.4f} | {r.get('MAP', float('nan')):.4f} |")


if __name__ == "__main__":
    main()
