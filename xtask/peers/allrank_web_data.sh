#!/usr/bin/env bash
# Generated raw web data prepared as allRank prepares MSLR-WEB30K, for `neural.py` (BENCHMARKS.md, "allRank's
# published configurations: MQ2008, attention, raw web data"):
#
#   ALLRANK_SRC=/path/to/allRank xtask/peers/allrank_web_data.sh LTR PYTHON OUT [QUERIES] [SEED]
#
# 1. `ltr generate --profile web-raw --queries QUERIES --seed SEED` (1,070 queries: 223,629 documents, 132,886 of
#    them in train.txt);
# 2. allRank's own preprocessing, `reproducibility/normalize_features.py` (its published configurations train on
#    MSLR-WEB30K after it): log(x + 0.01) of every non-negative feature outside its list, then a z-score with the
#    training file's mean and deviation; it writes 0-based feature indices with full doubles;
# 3. the indices shifted to LETOR's 1-based ones and the values printed to 7 significant digits, so that both tools
#    read the same text: OUT/Fold1/{train,vali,test}.txt.
# PYTHON needs numpy and scikit-learn (allRank's torch venv has them).
set -euo pipefail
ltr=$1 py=$2 out=$3 queries=${4:-1070} seed=${5:-1}
: "${ALLRANK_SRC:?set ALLRANK_SRC to the root of an allRank source checkout}"
raw=$out/raw
rm -rf "$raw" "${raw}_normalized"
mkdir -p "$out/Fold1"
"$ltr" generate --profile web-raw --queries "$queries" --seed "$seed" --out "$raw"
"$py" "$ALLRANK_SRC/reproducibility/normalize_features.py" --ds_path "$raw" >/dev/null
for t in train vali test; do
    awk '{ printf "%s %s", $1, $2; for (i = 3; i <= NF; i++) { split($i, a, ":"); printf " %d:%.7g", a[1] + 1, a[2] }
           printf "\n" }' "${raw}_normalized/$t.txt" >"$out/Fold1/$t.txt"
done
rm -rf "$raw" "${raw}_normalized"
