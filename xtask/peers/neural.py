"""`ltr train --algo neural` against allRank with allRank's published configurations, fold by fold, back to back.

    ALLRANK_SRC=/path/to/allRank python3 xtask/peers/neural.py --ltr target/release/ltr \
        --py venv-with-torch/bin/python --config mlp --config attention --convention letor4 \
        --fold ../shared/datasets/MQ2008/Fold1 [--fold ...] [--epochs 100] [--slate 240] [--out bench-neural]

The configurations are allRank's `reproducibility/configs/contextaware_web30k/`:
  - `mlp` (ndcgloss2pp_mlp.json): hidden layers 256/512/1024/512/256, ReLU, dropout 0.3;
  - `attention` (ndcgloss2pp.json): one hidden layer of 128 without activation, 4 encoder blocks of 4 heads, d_ff
    512, dropout 0.3 in the encoder;
both NDCG-Loss2++ (μ = 10, σ = 1), Adam at 0.001, StepLR (50, 0.1), 100 epochs, batches of 64 queries, slate
length 240, and allRank's rule for the model kept: the last epoch (allRank's `fit` saves the model after its loop,
and the configurations' early-stopping patience of 100 never stops a run of 100 epochs). So `ltr` trains without
`--validate` (it then keeps the last epoch) and allRank (`allrank_epoch.py --keep last`) computes no validation.

Per fold and configuration, `ltr` trains, then allRank, each under `/usr/bin/time -v` (wall, CPU, peak RSS) with
the same thread count (`RAYON_NUM_THREADS`, `torch.set_num_threads`); allRank prints each epoch's training wall and
CPU time. Both score the test file; `ltr eval` gives NDCG@10 under `--convention` and `ltr compare` the paired
t-test over the test queries (allRank's scores given first, so its `difference` is allRank's minus `ltr`'s), per
fold and pooled over each set's folds (OUT/pooled.json). `--reuse` reads runs already in OUT instead of training
again (so both halves can be run separately, e.g. in parallel at 1 thread: the tools' models do not depend on it
for `ltr`, which is bit-identical at any thread count). Results are appended to OUT/results.json after every run, so an interrupted sweep
keeps what it measured; a Markdown table is printed at the end. `--allrank-compute packed` has allRank skip its
padded rows (`allrank_epoch.py --compute packed`: the same model, loss and batches, about 10x less work on MQ2008).
`--only ltr` or `--only allrank` trains and scores that tool alone (its log, model and scores in OUT, nothing
evaluated or appended), so the two halves can run as two processes, or one before the other is built; a later run
with `--reuse` joins them.
"""
import argparse
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent

CONFIGS = {
    "mlp": {
        "ltr": ["sizes=256/512/1024/512/256", "activation=relu", "dropout=0.3"],
        "allrank": ["--sizes", "256/512/1024/512/256", "--activation", "ReLU", "--dropout", "0.3"],
    },
    "attention": {
        "ltr": ["scorer=attention", "sizes=128", "activation=identity", "blocks=4", "heads=4", "d-ff=512",
                "attention-dropout=0.3"],
        "allrank": ["--sizes", "128", "--activation", "none", "--blocks", "4", "--heads", "4", "--d-ff", "512",
                    "--attention-dropout", "0.3"],
    },
}


def timed(cmd, env, log, reuse=False):
    """Run `cmd` under /usr/bin/time -v with stderr (and stdout) to `log`; wall, CPU seconds and peak RSS (kB).
    With `reuse`, a finished log already there is read instead (a run made before, e.g. by an earlier sweep)."""
    if not (reuse and pathlib.Path(log).exists() and "Maximum resident set size" in pathlib.Path(log).read_text()):
        with open(log, "w") as f:
            r = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        if r.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed (exit {r.returncode}); see {log}:\n{pathlib.Path(log).read_text()[-2000:]}")
    text = pathlib.Path(log).read_text()

    def field(name):
        m = re.search(rf"{re.escape(name)}: ([0-9:.]+)", text)
        return m.group(1) if m else None

    parts = [float(p) for p in field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    wall = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    return {"wall_s": wall, "cpu_s": cpu, "max_rss_kb": int(field("Maximum resident set size (kbytes)")),
            "log": str(log)}


def run(cmd, env):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stderr[-2000:]}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ltr", required=True)
    ap.add_argument("--py", required=True, help="a python with torch, numpy, scikit-learn and attrs (allRank's)")
    ap.add_argument("--fold", action="append", required=True)
    ap.add_argument("--config", action="append", choices=sorted(CONFIGS))
    ap.add_argument("--epochs", type=int, default=100)
    ap.add_argument("--slate", type=int, default=240)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--convention", default="standard")
    ap.add_argument("--out", default="bench-neural")
    ap.add_argument("--allrank-compute", choices=("padded", "packed"), default="padded",
                    help="allrank_epoch.py --compute: padded (allRank's own) or packed (the same function over the "
                         "real rows only; its docstring says what differs)")
    ap.add_argument("--reuse", action="store_true",
                    help="read a tool's model or scores and its log from OUT when a finished run is there (made with "
                         "the same settings, e.g. by an earlier sweep or by hand in parallel)")
    ap.add_argument("--only", choices=("ltr", "allrank"),
                    help="train and score this tool alone (with --reuse, a finished run is kept), evaluate nothing")
    a = ap.parse_args()
    if not os.environ.get("ALLRANK_SRC"):
        sys.exit("set ALLRANK_SRC to the root of an allRank source checkout")
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, RAYON_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads), RUST_LOG="warn")
    results = out / "results.json"
    rows = json.loads(results.read_text()) if results.exists() else []
    done = {(r["fold"], r["config"]) for r in rows}
    common = ["loss=ndcgloss2pp", "mu=10", "sigma=1", "lr=0.001", "schedule=step", "step-size=50", "gamma=0.1",
              f"epochs={a.epochs}", "batch-size=64", f"slate-length={a.slate}"]
    for fold in map(pathlib.Path, a.fold):
        parent = fold.parent.parent if fold.parent.name == "QueryLevelNorm" else fold.parent
        name = f"{parent.name}/{fold.name}"
        tag = f"{parent.name}-{fold.name}"
        test = str(fold / "test.txt")
        for config in a.config or ["mlp", "attention"]:
            if (name, config) in done:
                continue
            c = CONFIGS[config]
            stem = out / f"{tag}-{config}"
            params = [x for p in common + c["ltr"] for x in ("--param", p)]
            if a.only != "allrank":
                ltr_run = timed([a.ltr, "train", "--train", str(fold / "train.txt"), "--algo", "neural",
                                 "--seed", str(a.seed)] + params + ["--model", f"{stem}-ltr.postcard"], env,
                                f"{stem}-ltr.log", reuse=a.reuse and pathlib.Path(f"{stem}-ltr.postcard").exists())
                run([a.ltr, "predict", "--model", f"{stem}-ltr.postcard", "--data", test, "--out",
                     f"{stem}-ltr.scores"], env)
            if a.only == "ltr":
                print(f"{name} {config}: ltr trained ({ltr_run['cpu_s']:.1f} s CPU)", flush=True)
                continue
            ar_run = timed([a.py, str(HERE / "allrank_epoch.py"), "--train", str(fold / "train.txt"), "--vali",
                            str(fold / "vali.txt"), "--test", test, "--out", f"{stem}-allrank.scores",
                            "--loss", "ndcgloss2pp", "--lr", "0.001", "--step-size", "50", "--gamma", "0.1",
                            "--epochs", str(a.epochs), "--batch-size", "64", "--slate-length", str(a.slate),
                            "--threads", str(a.threads), "--seed", str(a.seed), "--keep", "last",
                            "--compute", a.allrank_compute] + c["allrank"],
                           env, f"{stem}-allrank.log", reuse=a.reuse and pathlib.Path(f"{stem}-allrank.scores").exists())
            if a.only == "allrank":
                print(f"{name} {config}: allRank trained ({ar_run['cpu_s']:.1f} s CPU)", flush=True)
                continue
            epochs = re.findall(r"epoch \d+ train ([0-9.]+) s, cpu ([0-9.]+) s", pathlib.Path(ar_run["log"]).read_text())
            ar_run["epoch_wall_median_s"] = statistics.median(float(w) for w, _ in epochs)
            ar_run["epoch_cpu_median_s"] = statistics.median(float(c_) for _, c_ in epochs)
            ar_run["epoch_wall_sum_s"] = sum(float(w) for w, _ in epochs)
            ar_run["epoch_cpu_sum_s"] = sum(float(c_) for _, c_ in epochs)
            row = {"fold": name, "config": config, "test": test,
                   "scores": {w: f"{stem}-{w}.scores" for w in ("ltr", "allrank")}, "epochs": a.epochs, "slate": a.slate, "seed": a.seed,
                   "threads": a.threads, "convention": a.convention, "ltr": ltr_run, "allrank": ar_run,
                   "load_after": os.getloadavg()}
            for who in ("ltr", "allrank"):
                ev = json.loads(run([a.ltr, "eval", "--data", test, "--scores", f"{stem}-{who}.scores", "--metric",
                                     "NDCG@10", "--convention", a.convention, "--json"], env))
                row[who]["NDCG@10"] = ev["metrics"]["NDCG@10"]["mean"]
            row["compare"] = json.loads(run([a.ltr, "compare", "--data", test, "--scores", f"{stem}-allrank.scores",
                                             "--scores", f"{stem}-ltr.scores", "--metric", "NDCG@10",
                                             "--convention", a.convention, "--json"], env))
            rows.append(row)
            results.write_text(json.dumps(rows, indent=1))
            print(f"{name} {config}: ltr {row['ltr']['NDCG@10']:.4f} ({ltr_run['wall_s']:.1f} s wall, "
                  f"{ltr_run['cpu_s']:.1f} s CPU), allRank {row['allrank']['NDCG@10']:.4f} "
                  f"({ar_run['wall_s']:.1f} s wall, {ar_run['cpu_s']:.1f} s CPU, median epoch "
                  f"{ar_run['epoch_wall_median_s']:.2f} s), load {row['load_after'][0]:.1f}", flush=True)
    if a.only:
        return
    # Every test query of a set once (the folds' test files partition its queries): the paired t-test over them all.
    pooled = {}
    for r in rows:
        pooled.setdefault((r["fold"].split("/")[0], r["config"]), []).append(r)
    summary = []
    for (dataset, config), rs in sorted(pooled.items()):
        data, ours, theirs = (out / f"pooled-{dataset}-{config}-{w}" for w in ("test.txt", "ltr.scores", "allrank.scores"))
        for path, parts in ((data, [r["test"] for r in rs]), (ours, [r["scores"]["ltr"] for r in rs]),
                            (theirs, [r["scores"]["allrank"] for r in rs])):
            path.write_text("".join(pathlib.Path(x).read_text() for x in parts))
        cmp = json.loads(run([a.ltr, "compare", "--data", str(data), "--scores", str(theirs), "--scores", str(ours),
                              "--metric", "NDCG@10", "--convention", a.convention, "--json"], env))
        summary.append({"set": dataset, "config": config, "folds": [r["fold"] for r in rs], "compare": cmp})
    (out / "pooled.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))
    print("| fold | config | ltr NDCG@10 | allRank NDCG@10 | difference | ltr s/epoch (wall, CPU) | allRank s/epoch "
          "(wall, CPU) | ltr peak RSS MB | allRank peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        lt, ar = r["ltr"], r["allrank"]
        print(f"| {r['fold']} | {r['config']} | {lt['NDCG@10']:.4f} | {ar['NDCG@10']:.4f} | "
              f"{lt['NDCG@10'] - ar['NDCG@10']:+.4f} | {lt['wall_s'] / r['epochs']:.2f}, {lt['cpu_s'] / r['epochs']:.2f} | "
              f"{ar['epoch_wall_sum_s'] / r['epochs']:.2f}, {ar['epoch_cpu_sum_s'] / r['epochs']:.2f} | "
              f"{lt['max_rss_kb'] / 1024:.1f} | {ar['max_rss_kb'] / 1024:.1f} |")


if __name__ == "__main__":
    main()
