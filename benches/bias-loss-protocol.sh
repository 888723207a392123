#!/usr/bin/env bash
# The protocol that chose `lambdamart debias=pairwise`'s `bias-loss` default (issue 52; BENCHMARKS.md, "Choosing
# `bias-loss`"): benches/debias-clicks.sh on each cell, with the naive control, both pair losses, LightGBM
# `lambdarank_position_bias` and XGBoost `lambdarank_unbiased` on the same clicks; then benches/bias_loss_table.py
# pools the folds of each set and user and applies the decision rule.
#
# Usage: [SESSIONS=N] [SEED=S] benches/bias-loss-protocol.sh LTR WORK CELL...
#   CELL: SET:FOLD:USER, SET one of mq2008 and ohsumed (FOLD 1-5: ../shared/datasets/MQ2008/FoldK,
#   ../shared/datasets/OHSUMED/QueryLevelNorm/FoldK) or web (`ltr generate --profile web --queries 2700 --seed 5`,
#   about 200k documents; FOLD is 1). USER: a number ETA, the exponent of ULTRA's examination curve (`--preset ultra
#   --eta ETA`: the protocol's position-based user); `cascade` (reads from the top, stops at its first click); or
#   `dcm` (reads on after a click at rank r with the probability 1 − 1/(2r)); all three show the top 10 and click an
#   examined document of grade g with 0.1 + 0.9(2^g − 1)/(2^max − 1) (benches/clicks-preamble.sh's `click_user`).
#   SESSIONS: simulated sessions a cell (default 10^6). SEED: the click simulation's seed (`ltr clicks simulate
#   --seed`, default 1: every cell run before it was a knob). PEERS: the peers (default: lightgbm-position-bias
#   xgboost-unbiased; empty: none).
# Both losses are named (`bias-loss=reversed` is the default since this protocol: a bare `debias=pairwise` row, the
# `ranknet` row of the cells run before, would now be `reversed` again).
# Each cell writes WORK/SET-fFOLD-etaETA/ (WORK/SET-fFOLD-cascade/, WORK/SET-fFOLD-dcm/) and its printout beside it
# with `.out`; at a SEED other than 1 the directory ends with `-seedS` (WORK/SET-fFOLD-dcm-seed2/). A cell whose
# printout ends with its table is skipped, so a cut run can be resumed. The tables:
# bias_loss_table.py WORK.
set -euo pipefail
ltr=$1 work=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
datasets=${LTR_DATASETS:-$here/../../shared/datasets}
n=${SESSIONS:-1000000}
seed=${SEED:-1}
if ! [[ $seed =~ ^[0-9]+$ ]]; then
  echo "SEED must be a whole number, not $seed" >&2
  exit 1
fi
mkdir -p "$work"
for cell in "$@"; do
  IFS=: read -r set fold who <<< "$cell"
  case $who in
    cascade | dcm) user=$who tag=$who ;;
    *)
      if ! [[ $who =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
        echo "cell $cell: the user must be an η (a number), cascade or dcm, not ${who:-nothing}" >&2
        exit 1
      fi
      user=ultra:$who tag=eta$who ;;
  esac
  case $set in
    mq2008) data=$datasets/MQ2008/Fold$fold ;;
    ohsumed) data=$datasets/OHSUMED/QueryLevelNorm/Fold$fold ;;
    web) data=web:2700 ;;
    *) echo "cell $cell: the set must be mq2008, ohsumed or web, not $set" >&2; exit 1 ;;
  esac
  dir=$work/$set-f$fold-$tag
  [ "$seed" = 1 ] || dir=$dir-seed$seed
  if [ -f "$dir.out" ] && grep -q "^pairwise:reversed: t+" "$dir.out"; then
    echo "$cell: done before ($dir.out)"
    continue
  fi
  start=$(date -u +%H:%M)
  peers=${PEERS-lightgbm-position-bias xgboost-unbiased}
  if ! CLICK_USER=$user CLICK_SEED=$seed DEBIAS="pairwise:ranknet pairwise:reversed" PEERS=$peers \
    "$here/debias-clicks.sh" "$ltr" "$dir" "$data" "$n" > "$dir.out" 2>&1; then
    echo "$cell: failed; the end of $dir.out:" >&2
    tail -n 5 "$dir.out" >&2
    exit 1
  fi
  echo "$cell: $start-$(date -u +%H:%M) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$dir.out"
done
