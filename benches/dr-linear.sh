#!/usr/bin/env bash
# The doubly robust learner (issue 52; BENCHMARKS.md, "The doubly robust learner"): `lambdarank debias=dr` on a
# simulated log, with the unshown documents left out (the default) and labelled by the direct model
# (`dr-unshown=direct`, the paper's estimator), against the naive control (`weighting=naive`), the learner given
# the log's true propensities one query per click (`weighting=ips`) and `lambdarank` on the judgments.
#
# ALGO (default lambdarank) names the learner: `listnet` or `neural` take the same rows. CLICK_PARAMS (words of
# k=v) are given to the naive and IPS rows alone: `loss=listnet-binary` puts a neural network's controls on the
# loss its debias=dr trains (the judged row keeps the learner's defaults).
#
# Usage: [ALGO=…] [CLICK_PARAMS=…] benches/dr-linear.sh LTR WORKDIR DATASET USER SESSIONS
#   DATASET and USER as benches/clicks-preamble.sh takes them (a fold folder, `web` or `web:N`; ultra[:ETA],
#   pbm[:ETA]: DR needs a position-based user's propensities, which the log's column carries).
# A RankSVM production ranker trained on 1% of the training queries shows the top 10; every learner picks its epoch
# on the judged validation file by NDCG@10. One table row: test NDCG@10 (LETOR 4.0 convention) of each form, the
# validation NDCG@10 of the two DR forms (the default was chosen on it), the one-sided paired t-test of DR over
# naive, and DR's training time.
set -euo pipefail
ltr=$1 work=$2 dataset=$3 user=$4 n=$5
algo=${ALGO:-lambdarank}
control=()
for kv in ${CLICK_PARAMS:-}; do control+=(--param "$kv"); done
. "$(dirname "$0")/clicks-preamble.sh"
vali=$data/vali.txt
click_user "$user" USER
if [ "$positional" = 0 ]; then
  echo "USER must be ultra or pbm: the DR labels divide by a position-based user's examination probabilities" >&2
  exit 1
fi
log=$work/clicks-$n.tsv
[ -f "$log" ] || "$ltr" clicks simulate --data "$train" --model "$work/production.json" --sessions "$n" "${sim[@]}" \
  --seed 2018 --out "$log" 2>/dev/null
for form in naive ips dr direct judged; do
  case $form in
    naive) a=(--clicks "$log" --param weighting=naive "${control[@]}") ;;
    ips) a=(--clicks "$log" --param weighting=ips "${control[@]}") ;;
    dr) a=(--clicks "$log" --param debias=dr) ;;
    direct) a=(--clicks "$log" --param debias=dr --param dr-unshown=direct) ;;
    judged) a=() ;;
  esac
  t=$("$py" -c 'import time; print(time.time())')
  "$ltr" train --train "$train" --validate "$vali" "${a[@]}" --algo "$algo" --metric NDCG@10 --seed 1 \
    --model "$work/$form-$n.json" 2>"$work/$form-$n.log"
  "$py" -c "import time; print(f'{time.time() - $t:.1f}')" > "$work/$form-$n.seconds"
  "$ltr" predict --model "$work/$form-$n.json" --data "$test" --out "$work/$form-$n.scores" 2>/dev/null
  "$ltr" eval --data "$test" --scores "$work/$form-$n.scores" --metric NDCG@10 --convention letor4 --json -q \
    > "$work/$form-$n.eval.json"
done
"$py" - "$work" "$n" <<'PY'
import json, re, sys
from scipy import stats
work, n = sys.argv[1:]
def per_query(form):
    m = json.load(open(f"{work}/{form}-{n}.eval.json"))["metrics"]["NDCG@10"]
    return m["mean"], m["per_query"]
def vali(form):
    found = re.findall(r"NDCG@10 = ([0-9.]+)", open(f"{work}/{form}-{n}.log").read())
    return float(found[-1])
means = {f: per_query(f) for f in ["naive", "ips", "dr", "direct", "judged"]}
dr, naive = means["dr"][1], means["naive"][1]
keys = sorted(dr)
p = stats.ttest_rel([dr[k] for k in keys], [naive[k] for k in keys], alternative="greater").pvalue
secs = open(f"{work}/dr-{n}.seconds").read().strip()
cells = " | ".join(f"{means[f][0]:.4f}" for f in ["naive", "ips", "dr", "direct", "judged"])
print(f"| {cells} | {vali('dr'):.4f} / {vali('direct'):.4f} | {p:.3g} | {secs} s |")
PY
