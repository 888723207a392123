#!/usr/bin/env bash
# Bit-identity of models across a refactor: `benches/bit-identity.sh OLD_LTR NEW_LTR [DATA_DIR]`.
#
# Trains every registered algorithm with both binaries on the same data and seed (one process, with a validation
# grid where the algorithm has a C to choose), every distributed learner on 2 thread ranks, and on 2 MPI ranks when
# both binaries carry MPI and `mpirun` exists; runs a small `ltr experiment` with both. Models are compared as JSON
# with every wall-clock field (a key naming seconds, in the model and its diagnostics) and the binary's version
# removed (everything else — weights, trees,
# preprocessing, parameters, reports, provenance — must be equal byte for byte); experiments by their per-query
# test scores. DATA_DIR defaults to MQ2008 Fold1 in ../shared/datasets (a generated set when it is absent).
# Prints one line per check and exits non-zero on the first difference.
set -euo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
data=${3:-$root/../shared/datasets/MQ2008/Fold1}
if [ -f "$data/train.txt" ]; then
  # A tenth of the queries keeps the whole check to a few minutes on 2 cores.
  python3 - "$data" "$work" <<'EOF'
import sys
src, out = sys.argv[1], sys.argv[2]
for name, keep in [("train", 0.25), ("vali", 0.5)]:
    lines = open(f"{src}/{name}.txt").read().splitlines()
    qids = []
    for l in lines:
        q = l.split()[1]
        if not qids or qids[-1] != q:
            qids.append(q)
    chosen = set(qids[: max(2, int(len(qids) * keep))])
    with open(f"{out}/{name}.txt", "w") as f:
        f.write("".join(l + "\n" for l in lines if l.split()[1] in chosen))
EOF
else
  echo "no $data/train.txt: using generated data"
  "$new" generate --profile letor --queries 100 --seed 3 --out "$work" 2>/dev/null
fi

normalise() { # the model without wall-clock fields (any key naming seconds) and the binary's version
  python3 - "$1" <<'EOF'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if "seconds" not in k}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
m = json.load(open(sys.argv[1]))
m.pop("crate_version", None)
if m.get("diagnostics_json"):
    m["diagnostics_json"] = strip(json.loads(m["diagnostics_json"]))
print(json.dumps(strip(m), sort_keys=True))
EOF
}

same_model() { # label, args...
  local label=$1
  shift
  "$old" train "$@" --model "$work/old.json" 2>"$work/old.log" || { cat "$work/old.log"; exit 1; }
  "$new" train "$@" --model "$work/new.json" 2>"$work/new.log" || { cat "$work/new.log"; exit 1; }
  if [ "$(normalise "$work/old.json")" = "$(normalise "$work/new.json")" ]; then
    echo "identical: $label"
  else
    echo "DIFFERENT: $label"
    diff <(normalise "$work/old.json" | tr ',' '\n') <(normalise "$work/new.json" | tr ',' '\n') | head -20
    exit 1
  fi
}

base=(--train "$work/train.txt" --seed 7)
small() { # quick settings, so every learner finishes in seconds
  case $1 in
    perceptron | committee-perceptron) echo "--param epochs=3" ;;
    rankboost) echo "--param rounds=15" ;;
    sigmoid) echo "--param max-iter=20" ;;
    listnet | lambdarank) echo "--param epochs=5" ;;
    coordinate-ascent) echo "--param restarts=2" ;;
    adarank) echo "--param rounds=10" ;;
    lambdamart | mart | random-forest) echo "--param trees=20" ;;
    *) echo "" ;;
  esac
}
mixing() { # a distributed perceptron returns the average or last of its mixtures
  [ "$1" = perceptron ] && echo "--param output=average" || true
}
algos=$("$new" algorithms --json | python3 -c 'import json,sys; [print(a["name"], int(a["distributed"])) for a in json.load(sys.stdin)]')
mapfile -t rows <<<"$algos"
for row in "${rows[@]}"; do
  read -r algo distributed <<<"$row"
  [ "$algo" = propensity-ranksvm ] && continue # trains on a click log: checked below
  # shellcheck disable=SC2046
  same_model "$algo" "${base[@]}" --validate "$work/vali.txt" --algo "$algo" $(small "$algo")
  if [ "$distributed" = 1 ]; then
    # shellcheck disable=SC2046
    same_model "$algo on 2 thread ranks" "${base[@]}" --algo "$algo" --distributed --ranks 2 $(small "$algo") $(mixing "$algo")
    if command -v mpirun >/dev/null && "$new" train --help | grep -q -- --distributed; then
      mpi=(mpirun --allow-run-as-root --oversubscribe -n 2)
      if OMPI_MCA_plm=isolated "${mpi[@]}" "$old" algorithms >/dev/null 2>&1; then
        # shellcheck disable=SC2046
        "${mpi[@]}" "$old" train "${base[@]}" --algo "$algo" --distributed $(small "$algo") $(mixing "$algo") --model "$work/mo.json" 2>/dev/null &&
          "${mpi[@]}" "$new" train "${base[@]}" --algo "$algo" --distributed $(small "$algo") $(mixing "$algo") --model "$work/mn.json" 2>/dev/null &&
          if [ "$(normalise "$work/mo.json")" = "$(normalise "$work/mn.json")" ]; then
            echo "identical: $algo on 2 MPI ranks"
          else
            echo "DIFFERENT: $algo on 2 MPI ranks"
            exit 1
          fi
      fi
    fi
  fi
done

# A grid chosen on validation, and stored preprocessing.
same_model "ranksvm grid c=0.01,0.1,1" "${base[@]}" --validate "$work/vali.txt" --algo ranksvm --param c=0.01,0.1,1
same_model "rsvm-ir with log1p+zscore" "${base[@]}" --algo rsvm-ir --log1p 1-5 --normalize zscore --features 1-20

# Clicks: a simulated log, trained on by propensity-ranksvm.
"$new" train --train "$work/train.txt" --algo ranksvm --model "$work/production.json" 2>/dev/null
"$new" clicks simulate --data "$work/train.txt" --model "$work/production.json" --sessions 300 --seed 5 \
  --out "$work/clicks.tsv" 2>/dev/null
same_model "propensity-ranksvm on clicks" "${base[@]}" --algo propensity-ranksvm --clicks "$work/clicks.tsv"

# `ltr experiment`: every cell's test scores.
for bin in old new; do
  "${!bin}" experiment --data "$work/train.txt" --folds 3 --seed 3 --algo ranksvm:c=0.1,1 \
    --algo lambdamart:trees=10 --keep-scores --out "$work/exp-$bin" >/dev/null 2>&1
done
if diff -r "$work/exp-old/scores" "$work/exp-new/scores" >/dev/null; then
  echo "identical: ltr experiment test scores ($(find "$work/exp-new/scores" -type f | wc -l) files)"
else
  echo "DIFFERENT: ltr experiment test scores"
  exit 1
fi
echo "all identical"
