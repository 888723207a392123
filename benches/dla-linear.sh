#!/usr/bin/env bash
# Linear DLA at scale (issue 52; BENCHMARKS.md): `lambdarank debias=dla` on the session set of a simulated log against
# its naive control (`weighting=naive`) and the learner given the log's true propensities (`weighting=ips`, the
# ceiling), with DLA's propensity error against the simulated examination curve.
#
# Usage: benches/dla-linear.sh LTR WORKDIR DATASET USER SESSIONS...
#   DATASET: `web` or a folder with train.txt, vali.txt and test.txt (MQ2008 Fold1: ../shared/datasets/MQ2008/Fold1).
#   USER: `ultra` (ltr clicks simulate --preset ultra: ULTRA's curve, ε− 0.1, ε+ 1, top 10) or `pbm` ((1/k)^1,
#   ε− 0.1, ε+ 1, top 10), either with `:ETA` for another position-bias strength (`ultra:2`: the curve squared).
# A RankSVM production ranker trained on 1% of the training queries shows the top 10; every learner picks its epoch
# on the judged validation file by NDCG@10; test NDCG@10 (LETOR 4.0 convention) with the one-sided paired t-test of
# DLA over naive. Peers run in LTR_PEER_VENV, else the repository's .venv-peers (benches/clicks-preamble.sh).
set -euo pipefail
ltr=$1 work=$2 dataset=$3 user=$4
shift 4
. "$(dirname "$0")/clicks-preamble.sh"
vali=$data/vali.txt
click_user "$user" USER
if [ "$positional" = 0 ]; then
  echo "USER must be ultra or pbm: DLA's propensities are compared with a position-based user's curve, and" \
    "the $user user has none" >&2
  exit 1
fi
seconds() { "$py" -c "import time; print(f'{time.time() - $1:.1f}')"; }
echo "| sessions | naive | DLA | IPS, true propensities | p (DLA > naive) | DLA time | DLA's propensities, ranks 1–10 | worst error, ranks 1–10 |"
echo "|---|---|---|---|---|---|---|---|"
for n in "$@"; do
  log=$work/clicks-$n.tsv
  "$ltr" clicks simulate --data "$train" --model "$work/production.json" --sessions "$n" "${sim[@]}" \
    --seed 2018 --out "$log" 2>/dev/null
  for form in dla naive ips; do
    case $form in dla) p=debias=dla ;; *) p=weighting=$form ;; esac
    t=$("$py" -c 'import time; print(time.time())')
    "$ltr" train --train "$train" --validate "$vali" --clicks "$log" --algo lambdarank --param "$p" \
      --metric NDCG@10 --seed 1 --model "$work/$form-$n.json" 2>"$work/$form-$n.log"
    echo "$(seconds "$t")" > "$work/$form-$n.seconds"
    "$ltr" predict --model "$work/$form-$n.json" --data "$test" --out "$work/$form-$n.scores" 2>/dev/null
    "$ltr" eval --data "$test" --scores "$work/$form-$n.scores" --metric NDCG@10 --convention letor4 --json -q \
      > "$work/$form-$n.eval.json"
  done
  "$py" - "$work" "$n" "$user" "$eta" <<'PY'
import json, sys
from scipy import stats
work, n, user, eta = sys.argv[1:]
eta = float(eta)
def per_query(form):
    m = json.load(open(f"{work}/{form}-{n}.eval.json"))["metrics"]["NDCG@10"]
    return m["mean"], m["per_query"]
(dm, d), (nm, nv), (im, _) = per_query("dla"), per_query("naive"), per_query("ips")
keys = sorted(d)
p = stats.ttest_rel([d[k] for k in keys], [nv[k] for k in keys], alternative="greater").pvalue
model = json.load(open(f"{work}/dla-{n}.json"))
diag = model["diagnostics_json"]
diag = json.loads(diag) if isinstance(diag, str) else diag
theta = diag["position_bias"]["propensities"][:10]
curve = [0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06]
truth = [(c / curve[0]) ** eta for c in curve] if user == "ultra" else [(1 / k) ** eta for k in range(1, 11)]
err = max(abs(t / u - 1) for t, u in zip(theta, truth))
secs = open(f"{work}/dla-{n}.seconds").read().strip()
print(f"| {int(n):,} | {nm:.4f} | {dm:.4f} | {im:.4f} | {p:.3g} | {secs} s | "
      f"{', '.join(f'{t:.3f}' for t in theta)} | {100 * err:.1f}% |")
PY
done
