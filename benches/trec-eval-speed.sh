#!/usr/bin/env bash
# Whole-process `ltr eval` against trec_eval 10.0, pytrec_eval and ranx on one generated run (issue 55;
# BENCHMARKS.md "Whole process against trec_eval"): nDCG@10 + AP, each tool reading the files itself.
#
# Usage: benches/trec-eval-speed.sh LTR TREC_EVAL WORKDIR [PASSES]
#   LTR: a release `ltr` (cargo build --release -p ltr-cli); TREC_EVAL: a trec_eval binary built from
#   usnistgov/trec_eval (make); WORKDIR gets run and qrels (10,000 queries × 1,000 documents, seed 55, about
#   330 MB and 140 MB) unless they are there. Each pass times every tool back to back (wall seconds, /usr/bin/time).
set -euo pipefail
ltr=$1 te=$2 work=$3 passes=${4:-2}
py=/work/venv-peers/bin/python
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$work/run" ] || "$py" "$here/treceval_peers.py" gen "$work" 10000 1000 55
run=$work/run qrels=$work/qrels
wall() { local t0 t1; t0=$(date +%s.%N); "$@" > "$work/out.txt"; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg); run $(stat -c %s "$run") bytes, qrels $(stat -c %s "$qrels") bytes"
for p in $(seq "$passes"); do
  cat "$run" "$qrels" > /dev/null # page cache warm for every tool alike
  l=$(wall "$ltr" eval --run "$run" --qrels "$qrels" -m nDCG@10 -m AP); lv=$(grep -i ndcg "$work/out.txt" | head -1)
  lt=$(wall "$ltr" eval --format trec_eval --run "$run" --qrels "$qrels" -m ndcg_cut.10 -m map)
  ltv=$(grep ndcg "$work/out.txt")
  t=$(wall "$te" -m ndcg_cut.10 -m map "$qrels" "$run"); tv=$(grep ndcg "$work/out.txt")
  pt=$(wall "$py" "$here/treceval_peers.py" pytrec_eval "$qrels" "$run"); pv=$(cat "$work/out.txt")
  rx=$(wall "$py" "$here/treceval_peers.py" ranx "$qrels" "$run"); rv=$(cat "$work/out.txt")
  echo "pass $p (load $(cut -d' ' -f1-3 /proc/loadavg)):"
  echo "  ltr eval                        ${l} s  [$lv]"
  echo "  ltr eval --format trec_eval     ${lt} s  [$ltv]"
  echo "  trec_eval                       ${t} s  [$tv]  ratio $(echo "scale=1; $t / $l" | bc)"
  echo "  pytrec_eval (+ its reading)     ${pt} s  [$pv]  ratio $(echo "scale=1; $pt / $l" | bc)"
  echo "  ranx (+ its reading)            ${rx} s  [$rv]  ratio $(echo "scale=1; $rx / $l" | bc)"
done
