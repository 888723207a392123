#!/usr/bin/env bash
# Position-debiased lambdamart against its naive control, lambdamart on the judgments and the peers (LightGBM
# lambdarank_position_bias, XGBoost lambdarank_unbiased) on the same clicks (issue 52; BENCHMARKS.md).
#
# Usage: benches/debias-clicks.sh LTR WORKDIR DATASET SESSIONS...
#   DATASET: `web` (ltr generate --profile web --queries 300 --seed 5) or a folder with train.txt, vali.txt and
#   test.txt (MQ2008 Fold1: ../shared/datasets/MQ2008/Fold1, whose files are train.txt, vali.txt, test.txt).
# A RankSVM production ranker trained on 1% of the training queries (at least one) shows the top 10; PBM clicks
# (η = 1, ε− = 0.1, ε+ = 1); every tree model has ltr's lambdamart defaults without validation (100 trees).
# Peers run in LTR_PEER_VENV, else the repository's .venv-peers, made when missing (benches/clicks-preamble.sh).
set -euo pipefail
ltr=$1 work=$2 dataset=$3
shift 3
. "$(dirname "$0")/clicks-preamble.sh"
ndcg() { "$ltr" eval --data "$test" --scores "$1" --metric NDCG@10 --json | "$py" -c \
  'import json,sys; print("%.4f" % json.load(sys.stdin)["metrics"]["NDCG@10"]["mean"])'; }
score() { "$ltr" predict --model "$1" --data "$test" --out "$2" 2>/dev/null; ndcg "$2"; }
seconds() { "$py" -c "import time; print(f'{time.time() - $1:.1f}')"; }
echo "dataset $dataset: $nq training queries, production ranker on $keep"
echo "production ranker: $(score "$work/production.json" "$work/production.scores")"
t=$("$py" -c 'import time; print(time.time())')
"$ltr" train --train "$train" --algo lambdamart --model "$work/judged.json" 2>/dev/null
echo "lambdamart on judgments: $(score "$work/judged.json" "$work/judged.scores") ($(seconds "$t") s)"
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
"$ltr" train --train "$work/shown.txt" --algo lambdamart --model "$work/shown.json" 2>/dev/null
echo "lambdamart on the judgments of the shown top 10: $(score "$work/shown.json" "$work/shown.scores")"
for n in "$@"; do
  log=$work/clicks-$n.tsv
  "$ltr" clicks simulate --data "$train" --model "$work/production.json" --sessions "$n" --click-model pbm \
    --eta 1 --top 10 --seed 1 --out "$log" 2>/dev/null
  for d in none position-factors pairwise dla; do
    t=$("$py" -c 'import time; print(time.time())')
    "$ltr" train --train "$train" --clicks "$log" --algo lambdamart --param "debias=$d" \
      --model "$work/$d-$n.json" 2>"$work/$d-$n.log"
    echo "$n sessions, lambdamart debias=$d: $(score "$work/$d-$n.json" "$work/$d-$n.scores") ($(seconds "$t") s)"
  done
  grep -h "distinct sessions" "$work/none-$n.log" | sed 's/^.*INFO[^:]*: //' || true
  mkdir -p "$work/peers-$n"
  "$py" "$here/debias_peers.py" "$train" "$log" "$test" "$work/peers-$n" 2>"$work/peers-$n.log"
  cat "$work/peers-$n.log"
  for peer in lightgbm-naive lightgbm-position-bias xgboost-unbiased; do
    echo "$n sessions, $peer: $(ndcg "$work/peers-$n/$peer.scores")"
  done
done
