"""Whole-process peers for `benches/trec-eval-speed.sh` (issue 55), run in the peer venv.

  gen DIR [QUERIES] [DOCS] [SEED]   write DIR/run and DIR/qrels: QUERIES × DOCS documents (ids d0…), grades 0–4 with
                                    a quarter of the documents graded, scores uniform in [0, 1] with 9 decimals, each
                                    query written in rank order (score descending), every document judged
  pytrec_eval QRELS RUN             read both files with pytrec_eval's own readers, nDCG@10 + AP (ndcg_cut_10, map)
  ranx QRELS RUN                    read both with ranx's Qrels.from_file / Run.from_file, ndcg@10 + map
Each evaluation prints the mean nDCG@10 so the tools can be checked against each other.
"""
import sys


def gen(out, nq=10_000, nd=1000, seed=55):
    import os
    import numpy as np
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "run"), "w") as run, open(os.path.join(out, "qrels"), "w") as qrels:
        ids = np.array([f"d{d}" for d in range(nd)])
        for q in range(1, nq + 1):
            grade = rng.integers(0, 5, nd) * (rng.integers(0, 4, nd) == 0)
            score = rng.integers(0, 1_000_000_000, nd) / 1e9
            order = np.argsort(-score, kind="stable")
            qrels.write("".join(f"{q} 0 {d} {g}\n" for d, g in zip(ids, grade)))
            run.write("".join(f"{q} Q0 {ids[i]} {r} {score[i]:.9f} gen\n" for r, i in enumerate(order, 1)))


def pytrec(qrels_path, run_path):
    import pytrec_eval
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut_10", "map"}).evaluate(run)
    print("pytrec_eval ndcg_cut_10 %.6f" % (sum(v["ndcg_cut_10"] for v in res.values()) / len(res)))


def ranx(qrels_path, run_path):
    from ranx import Qrels, Run, evaluate
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    r = evaluate(qrels, run, ["ndcg@10", "map"])
    print("ranx ndcg@10 %.6f" % r["ndcg@10"])


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "gen":
        gen(args[0], *[int(a) for a in args[1:]])
    elif cmd == "pytrec_eval":
        pytrec(*args)
    elif cmd == "ranx":
        ranx(*args)
    else:
        sys.exit(f"unknown command {cmd}")
