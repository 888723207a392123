#!/usr/bin/env bash
# The protocol that chose `lambdamart debias=pairwise`'s `bias-loss` default (issue 52; BENCHMARKS.md, "Choosing
# `bias-loss`"): benches/debias-clicks.sh on each cell, with the naive control, both pair losses, LightGBM
# `lambdarank_position_bias` and XGBoost `lambdarank_unbiased` on the same clicks; then benches/bias_loss_table.py
# pools the folds of each set and η and applies the decision rule.
#
# Usage: [SESSIONS=N] benches/bias-loss-protocol.sh LTR WORK CELL...
#   CELL: SET:FOLD:ETA, SET one of mq2008 and ohsumed (FOLD 1-5: ../shared/datasets/MQ2008/FoldK,
#   ../shared/datasets/OHSUMED/QueryLevelNorm/FoldK) or web (`ltr generate --profile web --queries 2700 --seed 5`,
#   about 200k documents; FOLD is 1), ETA the exponent of ULTRA's examination curve (`--preset ultra --eta ETA`).
#   SESSIONS: simulated sessions a cell (default 10^6); every cell's log is simulated with --seed 1. PEERS: the peers
#   (default: lightgbm-position-bias xgboost-unbiased; empty: none).
# Each cell writes WORK/SET-fFOLD-etaETA/ and its printout WORK/SET-fFOLD-etaETA.out; a cell whose printout ends
# with its table is skipped, so a cut run can be resumed. The tables: bias_loss_table.py WORK.
set -euo pipefail
ltr=$1 work=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
datasets=${LTR_DATASETS:-$here/../../shared/datasets}
n=${SESSIONS:-1000000}
mkdir -p "$work"
for cell in "$@"; do
  IFS=: read -r set fold eta <<< "$cell"
  case $set in
    mq2008) data=$datasets/MQ2008/Fold$fold ;;
    ohsumed) data=$datasets/OHSUMED/QueryLevelNorm/Fold$fold ;;
    web) data=web:2700 ;;
    *) echo "cell $cell: the set must be mq2008, ohsumed or web, not $set" >&2; exit 1 ;;
  esac
  dir=$work/$set-f$fold-eta$eta
  if [ -f "$dir.out" ] && grep -q "^pairwise:reversed: t+" "$dir.out"; then
    echo "$cell: done before ($dir.out)"
    continue
  fi
  start=$(date -u +%H:%M)
  CLICK_USER=ultra:$eta DEBIAS="pairwise pairwise:reversed" PEERS="${PEERS-lightgbm-position-bias xgboost-unbiased}" \
    "$here/debias-clicks.sh" "$ltr" "$dir" "$data" "$n" > "$dir.out" 2>&1
  echo "$cell: $start-$(date -u +%H:%M) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$dir.out"
done
