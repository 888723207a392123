"""LambdaMART / MART / Random Forest against LightGBM and XGBoost in the same run: quality and whole-process time.

Run inside the peer venv (never a dependency of the crates):

    ../shared/tools/peer-venv.sh .venv-peers
    cargo build --release -p ltr-cli
    .venv-peers/bin/python xtask/peers/trees.py --ltr target/release/ltr --threads 2 \
        --fold ../shared/datasets/MQ2008/Fold1 [--fold ...] [--convention letor4] [--out bench-trees]

Per fold it writes LightGBM's own input (the LibSVM lines without `qid:` and comments, plus `.query` sidecars; not
timed), then times whole processes, each reading its text files itself:
  - `ltr train --algo lambdamart` with LightGBM's lambdarank settings (100 trees, 31 leaves, learning rate 0.1,
    20 documents a leaf, 255 bins, pairs truncated at 30, ideal DCG@30, per-query normalisation), no early stopping;
  - LightGBM `lambdarank` with the same settings, loading the files through its own loader;
  - with `--defaults`: `ltr`'s lambdamart defaults with validation, and XGBoost `rank:ndcg` with its defaults.
Both models score the test file; `ltr eval` computes NDCG@10 and MAP under the convention, and `ltr compare` the
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
params = {"objective": "lambdarank", "num_threads": threads, "verbose": -1, "num_leaves": 31,
          "learning_rate": 0.1, "min_data_in_leaf": 20, "max_bin": 255, "lambdarank_truncation_level": 30,
          "deterministic": True, "force_row_wise": False}
ds = lgb.Dataset(train, params={"max_bin": 255, "verbose": -1})
b = lgb.train(params, ds, num_boost_round=rounds)
print(time.perf_counter() - t0)
s = b.predict(test, num_threads=threads)
np.savetxt(out, s, fmt="%.17g")
"""

XGB_SCRIPT = r"""
import sys, xgboost as xgb, numpy as np
train, test, out, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
dtrain = xgb.DMatrix(train + "?format=libsvm")
dtrain.set_group(np.loadtxt(train + ".query", dtype=int, ndmin=1))
b = xgb.train({"objective": "rank:ndcg", "nthread": threads, "tree_method": "hist"}, dtrain, num_boost_round=100)
s = b.predict(xgb.DMatrix(test + "?format=libsvm"))
np.savetxt(out, s, fmt="%.17g")
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
        runs = {}
        model = work / "lambdamart.bin"
        secs, _ = timed([a.ltr, "train", "--train", str(fold / "train.txt"), "--algo", "lambdamart",
                         "--param", f"trees={a.rounds}", "--param", "stop-after=0", "--param", "ndcg-at=30",
                         "--normalize", "none", "--model", str(model)]
                        + [x for p in a.ltr_param for x in ("--param", p)], env)
        timed([a.ltr, "predict", "--model", str(model), "--data", test, "--out", str(work / "ltr.scores")], env)
        runs["ltr lambdamart"] = (secs, work / "ltr.scores")
        secs, inner = timed([sys.executable, "-c", LGBM_SCRIPT, str(work / "train.lgb"), str(work / "test.lgb"),
                             str(work / "lgbm.scores"), str(a.threads), str(a.rounds)])
        runs["LightGBM lambdarank"] = (secs, work / "lgbm.scores")
        lgbm_load_train = float(inner.split()[0])
        if a.defaults:
            model = work / "lambdamart-defaults.bin"
            secs, _ = timed([a.ltr, "train", "--train", str(fold / "train.txt"), "--validate", str(fold / "vali.txt"),
                             "--algo", "lambdamart", "--model", str(model)], env)
            timed([a.ltr, "predict", "--model", str(model), "--data", test, "--out", str(work / "ltr-def.scores")], env)
            runs["ltr lambdamart defaults (validated)"] = (secs, work / "ltr-def.scores")
            secs, _ = timed([sys.executable, "-c", XGB_SCRIPT, str(work / "train.lgb"), str(work / "test.lgb"),
                             str(work / "xgb.scores"), str(a.threads)])
            runs["XGBoost rank:ndcg defaults"] = (secs, work / "xgb.scores")
        base = None
        for label, (secs, scores) in runs.items():
            ev = evaluate(a.ltr, test, str(scores), a.convention)
            row = {"fold": name, "method": label, "seconds": secs}
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
