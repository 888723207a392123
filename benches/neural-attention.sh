#!/usr/bin/env bash
# allRank's published context-aware configuration (self-attention, NDCG-Loss2++) against `ltr train --algo neural
# --param scorer=attention`, the same model and training, on the LETOR folds; test NDCG@10 by `ltr eval` for both.
#
#   ALLRANK_SRC=/path/to/allRank PY=venv/bin/python LTR=target/release/ltr \
#       benches/neural-attention.sh DATASET_DIR OUT_DIR [EPOCHS] [SLATE] [FOLDS...]
#
# The configuration is reproducibility/configs/contextaware_web30k/ndcgloss2pp.json: one hidden layer of 128 without
# activation, 4 encoder blocks of 4 heads, d_ff 512, dropout 0.3 in the encoder, Adam at 0.001 with StepLR (50, 0.1),
# batches of 64 queries; EPOCHS (default 100) and the slate cap SLATE (default 240; a cap no training query exceeds
# changes nothing but allRank's padding) are arguments so that a loaded machine can run a shorter protocol.
# Both keep the epoch best on validation NDCG@10 (each by its own measure).
set -euo pipefail
data=$1 out=$2 epochs=${3:-100} slate=${4:-240}
shift $(( $# < 4 ? $# : 4 ))
folds=("$@")
[ ${#folds[@]} -gt 0 ] || folds=(1 2 3 4 5)
: "${ALLRANK_SRC:?set ALLRANK_SRC}" "${PY:?set PY to a python with torch}" "${LTR:?set LTR to the ltr binary}"
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
for f in "${folds[@]}"; do
    d=$data/Fold$f
    "$LTR" train --train "$d/train.txt" --validate "$d/vali.txt" --algo neural --metric NDCG@10 --seed 1 \
        --param scorer=attention --param sizes=128 --param activation=identity --param blocks=4 --param heads=4 \
        --param d-ff=512 --param attention-dropout=0.3 --param schedule=step --param step-size=50 --param gamma=0.1 \
        --param epochs="$epochs" --param patience="$epochs" --param slate-length="$slate" --param batch-size=64 \
        --model "$out/ltr-$f.postcard" 2> "$out/ltr-$f.log"
    "$LTR" predict --model "$out/ltr-$f.postcard" --data "$d/test.txt" --out "$out/ltr-$f.scores" 2>/dev/null
    ALLRANK_SRC=$ALLRANK_SRC "$PY" "$here/xtask/peers/allrank_epoch.py" --train "$d/train.txt" --vali "$d/vali.txt" \
        --test "$d/test.txt" --out "$out/allrank-$f.scores" --sizes 128 --activation none --blocks 4 --heads 4 \
        --d-ff 512 --attention-dropout 0.3 --step-size 50 --gamma 0.1 --loss ndcgloss2pp --epochs "$epochs" \
        --slate-length "$slate" --batch-size 64 --threads 2 > "$out/allrank-$f.log" 2>&1
    for who in ltr allrank; do
        printf 'Fold%s %s ' "$f" "$who"
        "$LTR" eval --data "$d/test.txt" --scores "$out/$who-$f.scores" --metric NDCG@10 2>/dev/null | tail -1
    done | tee -a "$out/summary.txt"
done
