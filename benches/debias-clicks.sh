#!/usr/bin/env bash
# Position-debiased lambdamart against its naive control, lambdamart on the judgments and the peers (LightGBM
# lambdarank_position_bias, XGBoost lambdarank_unbiased) on the same clicks (issue 52; BENCHMARKS.md).
#
# Usage: [CLICK_USER=USER] [CLICK_SEED=S] [SPEED=ROUNDS] [DEBIAS="D..."] [PEERS="P..."] benches/debias-clicks.sh LTR
#        WORKDIR DATASET SESSIONS...
#   DATASET: `web` (ltr generate --profile web --queries 300 --seed 5), `web:N` (the same with N queries) or a
#   folder with train.txt, vali.txt and test.txt (MQ2008 Fold1: ../shared/datasets/MQ2008/Fold1).
#   CLICK_USER: `pbm` (the default: (1/k)^η, ε− 0.1, ε+ 1, top 10) or `ultra` (`ltr clicks simulate --preset
#   ultra`: ULTRA's curve^η, ε− 0.1, ε+ 1, top 10), either with `:ETA` (default η = 1; `ultra:2`: the curve squared);
#   or `cascade` (stops at its first click) or `dcm` / `dcm:ETA` (reads on after a click at rank r with the
#   probability 1 − (1/r)^η/2), both ε− 0.1, ε+ 1, top 10 (benches/clicks-preamble.sh's `click_user`).
#   CLICK_SEED: `ltr clicks simulate --seed` of every log (default 1, the seed of every run before it was a knob).
#   SPEED=ROUNDS: after each log, ROUNDS times, time debiased lambdamart against plain lambdamart on the same rows
#   with labels (the session set written as a LETOR file whose labels are the clicks, with its `.position` sidecar
#   for the debiased rows), back to back, CPU seconds of the whole `ltr train` process.
# A RankSVM production ranker trained on 1% of the training queries (at least one) shows the top 10; every tree model
# has ltr's lambdamart defaults without validation (100 trees); `debias=ips` is given the log's true propensities,
# which only a position-based user (pbm, ultra) has: with cascade or dcm the default DEBIAS leaves ips out and a
# DEBIAS naming it is refused.
# DEBIAS: the debiased lambdamart rows besides the naive control (default: position-factors pairwise:ranknet
# pairwise:reversed dla ips; `pairwise:LOSS` is debias=pairwise bias-loss=LOSS, a bare `pairwise` the default loss,
# reversed; `NAME,K=V,...` is debias=NAME with those parameters). PEERS: the peers of debias_peers.py (default: lightgbm-naive lightgbm-position-bias xgboost-naive
# xgboost-unbiased; empty: none).
# Test NDCG@10 (standard convention); p is the one-sided paired t-test over test queries of a row over the naive
# control, and of ltr's debiased row over the peer beside it (two-sided).
# Peers run in LTR_PEER_VENV, else the repository's .venv-peers, made when missing (benches/clicks-preamble.sh).
set -euo pipefail
ltr=$1 work=$2 dataset=$3
shift 3
. "$(dirname "$0")/clicks-preamble.sh"
click_user "${CLICK_USER:-pbm}" CLICK_USER
read -r -a debiasers <<< "${DEBIAS:-position-factors pairwise:ranknet pairwise:reversed dla ips}"
read -r -a peers <<< "${PEERS-lightgbm-naive lightgbm-position-bias xgboost-naive xgboost-unbiased}"
rm -f "$work/truth.tsv"
if [ "$positional" = 0 ]; then
  # A cascade or DCM user examines a rank depending on the clicks above it: no propensity table is true of it.
  if [ -n "${DEBIAS:-}" ] && [[ " ${debiasers[*]} " == *" ips "* ]]; then
    echo "DEBIAS: debias=ips needs the true propensities of a position-based user (CLICK_USER pbm or ultra);" \
      "the $user user has none" >&2
    exit 1
  fi
  kept=()
  for d in "${debiasers[@]}"; do [ "$d" = ips ] || kept+=("$d"); done
  debiasers=("${kept[@]}")
fi
# The simulation's examination curve relative to rank 1: debias=ips's table.
[ "$positional" = 0 ] || "$py" - "$user" "$eta" "$work/truth.tsv" <<'PY'
import sys
user, eta, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
curve = [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]
truth = [(c / curve[0]) ** eta for c in curve] if user == "ultra" else [(1 / k) ** eta for k in range(1, 11)]
with open(out, "w") as f:
    f.write("rank\tpropensity\n")
    for k, t in enumerate(truth, 1):
        f.write(f"{k}\t{t!r}\n")
PY
evaljson() { "$ltr" eval --data "$test" --scores "$1" --metric NDCG@10 --json -q > "$2"; }
mean() { "$py" -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["metrics"]["NDCG@10"]["mean"])' "$1"; }
# Train (arguments after the model name), time the process (CPU user + system, wall), score the test file.
train() {
  local name=$1
  shift
  /usr/bin/time -f "%U %S %e" -o "$work/$name.time" "$ltr" train "$@" --model "$work/$name.json" 2>"$work/$name.log"
  "$ltr" predict --model "$work/$name.json" --data "$test" --out "$work/$name.scores" 2>/dev/null
  evaljson "$work/$name.scores" "$work/$name.eval.json"
}
cpu() { awk '{printf "%.1f s CPU, %.1f s wall", $1 + $2, $3}' "$work/$1.time"; }
case $user in cascade) shown_user=cascade ;; *) shown_user="$user η = $eta" ;; esac
echo "dataset $dataset: $nq training queries, production ranker on $keep; clicks $shown_user"
"$ltr" predict --model "$work/production.json" --data "$test" --out "$work/production.scores" 2>/dev/null
evaljson "$work/production.scores" "$work/production.eval.json"
echo "production ranker: $(mean "$work/production.eval.json")"
train judged --train "$train" --algo lambdamart
echo "lambdamart on judgments: $(mean "$work/judged.eval.json") ($(cpu judged))"
# The upper bound of any learner of these clicks: lambdamart on the judgments of the documents the production ranker
# shows (its top 10 of each training query), the only documents a click log can say anything about.
"$ltr" predict --model "$work/production.json" --data "$train" --out "$work/production-train.scores" 2>/dev/null
"$py" - "$train" "$work/production-train.scores" "$work/shown.txt" <<'PY'
import sys
from collections import defaultdict
train, scores, out = sys.argv[1:4]
rows = defaultdict(list)
with open(train) as f, open(scores) as s:
    for n, (line, score) in enumerate(zip(f, s)):
        rows[line.split()[1]].append((-float(score), n, line))
with open(out, "w") as f:
    for q in rows:  # dicts keep the file's query order
        for _, _, line in sorted(rows[q])[:10]:
            f.write(line)
PY
train shown --train "$work/shown.txt" --algo lambdamart
echo "lambdamart on the judgments of the shown top 10: $(mean "$work/shown.eval.json")"
param() {
  case $1 in
    ips) echo "debias=ips propensities=$work/truth.tsv" ;;
    pairwise:*) echo "debias=pairwise bias-loss=${1#*:}" ;;
    *,*) echo "debias=${1//,/ }" ;;
    *) echo "debias=$1" ;;
  esac
}
for n in "$@"; do
  log=$work/clicks-$n.tsv
  "$ltr" clicks simulate --data "$train" --model "$work/production.json" --sessions "$n" "${sim[@]}" \
    --seed "${CLICK_SEED:-1}" --out "$log" 2>/dev/null
  for d in none "${debiasers[@]}"; do
    ps=()
    for kv in $(param "$d"); do ps+=(--param "$kv"); done
    train "$d-$n" --train "$train" --clicks "$log" --algo lambdamart "${ps[@]}"
    echo "$n sessions, lambdamart debias=$d: $(mean "$work/$d-$n.eval.json") ($(cpu "$d-$n"))"
  done
  grep -h "distinct sessions" "$work/none-$n.log" | sed 's/^.*INFO[^:]*: //' || true
  mkdir -p "$work/peers-$n"
  if [ "${#peers[@]}" -gt 0 ]; then
    "$py" "$here/debias_peers.py" "$train" "$log" "$test" "$work/peers-$n" "${peers[@]}" 2>"$work/peers-$n.log"
    cat "$work/peers-$n.log"
  fi
  for peer in "${peers[@]}"; do
    evaljson "$work/peers-$n/$peer.scores" "$work/peers-$n/$peer.eval.json"
    echo "$n sessions, $peer: $(mean "$work/peers-$n/$peer.eval.json")"
  done
  "$py" - "$work" "$n" "$work/truth.tsv" "${debiasers[@]}" <<'PY'
import json, os, sys
from scipy import stats
work, n, truth = sys.argv[1:4]
rows = ["none"] + sys.argv[4:]
# The true propensities (none for a cascade or DCM user).
truth = [float(l.split()[1]) for l in open(truth).readlines()[1:]] if os.path.exists(truth) else None
def per_query(path):
    m = json.load(open(path))["metrics"]["NDCG@10"]
    return m["mean"], m["per_query"]
def p(a, b, alternative):
    keys = sorted(a[1])
    return stats.ttest_rel([a[1][k] for k in keys], [b[1][k] for k in keys], alternative=alternative).pvalue
naive = per_query(f"{work}/none-{n}.eval.json")
# The peers beside each row: its naive controls beside `none`, the debiasers beside their namesakes.
beside = {"none": ["lightgbm-naive", "xgboost-naive"], "position-factors": ["lightgbm-position-bias"]}
peer = {}
for f in ["lightgbm-naive", "lightgbm-position-bias", "xgboost-naive", "xgboost-unbiased"]:
    if os.path.exists(f"{work}/peers-{n}/{f}.eval.json"):
        peer[f] = per_query(f"{work}/peers-{n}/{f}.eval.json")
print(f"| {int(n):,} sessions | model | test NDCG@10 | p over naive | peer on the same clicks | p (ltr vs peer) |")
for d in rows:
    m = per_query(f"{work}/{d}-{n}.eval.json")
    pn = "" if d == "none" else f"{p(m, naive, 'greater'):.3g}"
    base = d.split(",")[0]
    names = [f for f in beside.get(base, ["xgboost-unbiased"] if base.startswith("pairwise") else []) if f in peer]
    pe = [f"{f}: {peer[f][0]:.4f} | {p(m, peer[f], 'two-sided'):.3g}" for f in names] or [" | "]
    label = d.replace(":", " bias-loss=")
    print(f"| | `debias={label}` | {m[0]:.4f} | {pn} | {pe[0]} |")
    for more in pe[1:]:
        print(f"| | | | | {more} |")
if "dla" in rows:
    model = json.load(open(f"{work}/dla-{n}.json"))
    diag = model["diagnostics_json"]
    diag = json.loads(diag) if isinstance(diag, str) else diag
    theta = diag["position_bias"]["propensities"][:10]
    if truth is None:
        print(f"DLA's propensities: {', '.join(f'{t:.3f}' for t in theta)} (the user has no true ones)")
    else:
        err = max(abs(t / u - 1) for t, u in zip(theta, truth))
        print(f"DLA's propensities: {', '.join(f'{t:.3f}' for t in theta)}; truth"
              f" {', '.join(f'{t:.3f}' for t in truth)}; worst error {100 * err:.1f}%")
for d in rows:
    if d.startswith("pairwise"):
        diag = json.load(open(f"{work}/{d}-{n}.json"))["diagnostics_json"]
        diag = json.loads(diag) if isinstance(diag, str) else diag
        b = diag["position_bias"]
        print(f"{d}: t+ {', '.join(f'{t:.3g}' for t in b['t_plus'][:10])}; t- {', '.join(f'{t:.3g}' for t in b['t_minus'][:10])}")
PY
  if [ "${SPEED:-0}" -gt 0 ]; then
    # The session set as a LETOR file (labels: clicks; one query per distinct session) and its .position sidecar.
    "$py" - "$here" "$train" "$log" "$work/sessions-$n" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from debias_peers import sessions
X, y, pos, group, _ = sessions(sys.argv[2], sys.argv[3])
out = sys.argv[4]
qid = np.repeat(np.arange(1, len(group) + 1), group)
with open(f"{out}.txt", "w") as f:
    for i in range(len(y)):
        feats = " ".join(f"{j + 1}:{v:.9g}" for j, v in enumerate(X[i]) if v != 0)
        f.write(f"{int(y[i])} qid:{qid[i]} {feats}\n")
with open(f"{out}.position", "w") as f:
    f.write("".join(f"{p}\n" for p in pos))
PY
    mkdir -p "$work/speed-$n"
    cp "$work/sessions-$n.txt" "$work/speed-$n/labels.txt"
    cp "$work/sessions-$n.txt" "$work/speed-$n/clicks.txt"
    cp "$work/sessions-$n.position" "$work/speed-$n/clicks.txt.position"
    echo "speed, $n sessions ($(wc -l < "$work/sessions-$n.txt") rows; whole ltr train process, back to back):"
    for round in $(seq "$SPEED"); do
      train "speed-$n/labels-$round" --train "$work/speed-$n/labels.txt" --algo lambdamart
      echo "  lambdamart, labels: $(cpu "speed-$n/labels-$round")"
      for d in "${debiasers[@]}"; do
        ps=()
        for kv in $(param "$d"); do ps+=(--param "$kv"); done
        train "speed-$n/$d-$round" --train "$work/speed-$n/clicks.txt" --algo lambdamart "${ps[@]}"
        echo "  debias=$d: $(cpu "speed-$n/$d-$round")"
      done
    done
  fi
done
