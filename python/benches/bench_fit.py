"""Fit time from Python against the `ltr` command (the binding's overhead) and against LightGBM's and XGBoost's
rankers on the same data, each in the same run. Prints a Markdown table for BENCHMARKS.md.

    ../shared/tools/peer-venv.sh .venv-peers && .venv-peers/bin/pip install ./python
    .venv-peers/bin/python python/benches/bench_fit.py [--ltr target/release/ltr] [--data DIR_WITH_train.txt]

Times are medians of --repeats runs of the whole fit (data already in memory for Python; the CLI's figure is its
whole process, parse included, so the parse time measured separately is subtracted for the overhead column).
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import tempfile
import time

import numpy as np

import ltrkit


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ltr", default="target/release/ltr")
    ap.add_argument("--data", default=None, help="folder with train.txt (default: generated web data)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    tmp = pathlib.Path(tempfile.mkdtemp())
    if a.data is None:
        subprocess.run([a.ltr, "--log", "warn", "generate", "--profile", "web", "--nonlinearity", "0", "--queries", "500",
                        "--seed", "3", "--out", tmp / "web"], check=True)
        data = tmp / "web"
    else:
        data = pathlib.Path(a.data)
    train = data / "train.txt"
    X, y, qid = ltrkit.load_svmlight(train)
    group = ltrkit.group_sizes(qid)
    parse = median_time(lambda: ltrkit.load_svmlight(train), a.repeats)
    print(f"data: {train} — {X.shape[0]} documents, {X.shape[1]} features, {len(group)} queries; parse {parse:.3f} s\n")
    rows = []
    cases = [
        ("ranksvm", {}, ["--algo", "ranksvm"]),
        ("committee-perceptron", {"committee": 10, "epochs": 20, "select_epochs": False},
         ["--algo", "committee-perceptron", "--param", "committee=10", "--param", "epochs=20", "--param", "select-epochs=false"]),
        ("rankboost", {"rounds": 100, "select_rounds": False},
         ["--algo", "rankboost", "--param", "rounds=100", "--param", "select-rounds=false"]),
        ("lambdarank", {"epochs": 50, "select_epochs": False},
         ["--algo", "lambdarank", "--param", "epochs=50", "--param", "select-epochs=false"]),
    ]
    for algo, params, cli_args in cases:
        py = median_time(lambda: ltrkit.Ranker(algo, **params).fit(X, y, qid=qid), a.repeats)
        cli = median_time(lambda: subprocess.run([a.ltr, "--log", "warn", "train", "--train", train, *cli_args,
                                                  "--model", tmp / "m.bin"], check=True), a.repeats)
        rows.append((f"ltrkit {algo}", py, cli, cli - parse))
    peers = []
    try:
        import lightgbm

        peers.append(("LightGBM LGBMRanker (lambdarank, 100 trees)",
                      lambda: lightgbm.LGBMRanker(n_estimators=100, verbose=-1).fit(X, y, group=group)))
    except ImportError:
        print("lightgbm not installed: skipped")
    try:
        import xgboost

        peers.append(("XGBoost XGBRanker (rank:ndcg, 100 trees)",
                      lambda: xgboost.XGBRanker(n_estimators=100, tree_method="hist").fit(X, y, qid=qid)))
        peers.append(("XGBoost XGBRanker (gblinear rank:pairwise, 50 rounds)",
                      lambda: xgboost.XGBRanker(booster="gblinear", objective="rank:pairwise", n_estimators=50).fit(X, y, qid=qid)))
    except ImportError:
        print("xgboost not installed: skipped")
    print("| fit | Python s | `ltr train` process s | CLI minus parse s | Python ÷ (CLI − parse) |")
    print("|---|---|---|---|---|")
    for name, py, cli, cli_fit in rows:
        print(f"| {name} | {py:.3f} | {cli:.3f} | {cli_fit:.3f} | {py / cli_fit:.2f} |")
    for name, fn in peers:
        t = median_time(fn, a.repeats)
        print(f"| {name} | {t:.3f} | — | — | — |")


if __name__ == "__main__":
    main()
