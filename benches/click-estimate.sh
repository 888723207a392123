#!/usr/bin/env bash
# Counterfactual estimates of new rankers' click metrics from a simulated log (issue 52; BENCHMARKS.md): IPS and
# SNIPS from `ltr clicks estimate` against the exact value under the simulated position-based user.
#
# Usage: benches/click-estimate.sh LTR WORKDIR DATASET SESSIONS...
#   DATASET: `web` (ltr generate --profile web --queries 300 --seed 5) or a folder with train.txt and test.txt
#   (MQ2008 Fold1: ../shared/datasets/MQ2008/Fold1).
# A RankSVM production ranker trained on 1% of the training queries shows the top 10 of each test query to PBM users
# (η = 1, ε− = 0.1, ε+ = 1, the log's true propensities); the new rankers are lambdamart and ranksvm trained on the
# judged training queries. The exact value is computed from the grades (benches/click_estimate_truth.py).
# Peers run in LTR_PEER_VENV, else the repository's .venv-peers, made when missing (benches/clicks-preamble.sh).
set -euo pipefail
ltr=$1 work=$2 dataset=$3
shift 3
. "$(dirname "$0")/clicks-preamble.sh"
"$ltr" predict --model "$work/production.json" --data "$test" --out "$work/production.scores" 2>/dev/null
for algo in lambdamart ranksvm; do
  "$ltr" train --train "$train" --algo "$algo" --model "$work/$algo.json" 2>/dev/null
  "$ltr" predict --model "$work/$algo.json" --data "$test" --out "$work/$algo.scores" 2>/dev/null
done
echo "| sessions | ranker | metric | truth V | IPS (95% normal) | IPS bootstrap se | truth V/T | SNIPS (95% normal) | SNIPS bootstrap se | estimate time (IPS, 200 replicates) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in "$@"; do
  log=$work/clicks-$n.tsv
  "$ltr" clicks simulate --data "$test" --model "$work/production.json" --sessions "$n" --click-model pbm \
    --eta 1 --top 10 --seed 1 --out "$log" 2>/dev/null
  for algo in lambdamart ranksvm; do
    for metric in dcg@10 expected-clicks; do
      truth=$("$py" "$here/click_estimate_truth.py" "$test" "$work/production.scores" "$work/$algo.scores" "$metric")
      t0=$("$py" -c 'import time; print(time.time())')
      ips=$("$ltr" clicks estimate --clicks "$log" --features "$test" --scores "$work/$algo.scores" \
        --metric "$metric" --estimator ips --json 2>/dev/null)
      secs=$("$py" -c "import time; print(f'{time.time() - $t0:.1f}')")
      snips=$("$ltr" clicks estimate --clicks "$log" --features "$test" --scores "$work/$algo.scores" \
        --metric "$metric" --estimator snips --json 2>/dev/null)
      "$py" - "$n" "$algo" "$metric" "$truth" "$ips" "$snips" "$secs" <<'PY'
import json, sys
n, algo, metric, truth, ips, snips, secs = sys.argv[1:]
v, vt = map(float, truth.split())
i, s = json.loads(ips), json.loads(snips)
cell = lambda e: f"{e['value']:.4f} [{e['normal']['low']:.4f}, {e['normal']['high']:.4f}]"
print(f"| {int(n):,} | {algo} | {metric} | {v:.4f} | {cell(i)} | {i['bootstrap']['std_error']:.4f} | {vt:.4f} | "
      f"{cell(s)} | {s['bootstrap']['std_error']:.4f} | {secs} s |")
PY
    done
  done
done
