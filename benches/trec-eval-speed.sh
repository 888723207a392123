#!/usr/bin/env bash
# Whole-process `ltr eval` against trec_eval 10.0, pytrec_eval and ranx on one generated run (issue 55;
# BENCHMARKS.md "Whole process against trec_eval"): nDCG@10 + AP, each tool reading the files itself.
#
# Usage: benches/trec-eval-speed.sh LTR TREC_EVAL WORKDIR [PASSES]
#   LTR: a release `ltr` (cargo build --release -p ltr-cli); TREC_EVAL: a trec_eval binary built from
#   usnistgov/trec_eval (make); WORKDIR gets run and qrels (10,000 queries × 1,000 documents, seed 55, about
#   330 MB and 140 MB) unless they are there. Each pass times every tool back to back: wall seconds, and CPU seconds
#   (user + system, from /usr/bin/time) after a slash, since other work on the machine inflates wall times.
#   LTR_BEFORE=another `ltr` (an earlier commit's) is timed too, in the same passes, with its output compared.
set -euo pipefail
ltr=$1 te=$2 work=$3 passes=${4:-2}
py=${LTR_PEER_VENV:-/work/venv-peers}/bin/python
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$work/run" ] || "$py" "$here/treceval_peers.py" gen "$work" 10000 1000 55
run=$work/run qrels=$work/qrels
cpu=$work/cpu.txt
wall() {
  local t0 t1; t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$cpu" "$@" > "$work/out.txt"
  t1=$(date +%s.%N); echo "$t1 - $t0" | bc
}
cpu() { awk '{ printf "%.2f", $1 + $2 }' "$cpu"; }
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg); run $(stat -L -c %s "$run") bytes, qrels $(stat -L -c %s "$qrels") bytes"
for p in $(seq "$passes"); do
  cat "$run" "$qrels" > /dev/null # page cache warm for every tool alike
  l=$(wall "$ltr" eval --run "$run" --qrels "$qrels" -m nDCG@10 -m AP); lc=$(cpu); lv=$(grep -i ndcg "$work/out.txt" | head -1)
  lt=$(wall "$ltr" eval --format trec_eval --run "$run" --qrels "$qrels" -m ndcg_cut.10 -m map); ltc=$(cpu)
  ltv=$(grep ndcg "$work/out.txt")
  t=$(wall "$te" -m ndcg_cut.10 -m map "$qrels" "$run"); tc=$(cpu); tv=$(grep ndcg "$work/out.txt")
  pt=$(wall "$py" "$here/treceval_peers.py" pytrec_eval "$qrels" "$run"); pc=$(cpu); pv=$(cat "$work/out.txt")
  rx=$(wall "$py" "$here/treceval_peers.py" ranx "$qrels" "$run"); rc=$(cpu); rv=$(cat "$work/out.txt")
  if [ -n "${LTR_BEFORE:-}" ]; then
    "$LTR_BEFORE" eval --run "$run" --qrels "$qrels" -m nDCG@10 -m AP -q > "$work/q-before.txt"
    "$ltr" eval --run "$run" --qrels "$qrels" -m nDCG@10 -m AP -q > "$work/q-after.txt"
    same=$(cmp -s "$work/q-before.txt" "$work/q-after.txt" && echo "per-query output identical" || echo "OUTPUT DIFFERS")
    b=$(wall "$LTR_BEFORE" eval --run "$run" --qrels "$qrels" -m nDCG@10 -m AP); bc_=$(cpu)
  fi
  ratio() { echo "wall $(echo "scale=1; $1 / $l" | bc)x, CPU $(echo "scale=1; $2 / $lc" | bc)x"; }
  echo "pass $p (load $(cut -d' ' -f1-3 /proc/loadavg)):"
  echo "  ltr eval                        ${l} / ${lc} s  [$lv]"
  [ -n "${LTR_BEFORE:-}" ] && echo "  ltr eval before ($LTR_BEFORE)  ${b} / ${bc_} s  $(ratio "$b" "$bc_"); $same"
  echo "  ltr eval --format trec_eval     ${lt} / ${ltc} s  [$ltv]"
  echo "  trec_eval                       ${t} / ${tc} s  [$tv]  $(ratio "$t" "$tc")"
  echo "  pytrec_eval (+ its reading)     ${pt} / ${pc} s  [$pv]  $(ratio "$pt" "$pc")"
  echo "  ranx (+ its reading)            ${rx} / ${rc} s  [$rv]  $(ratio "$rx" "$rc")"
done
