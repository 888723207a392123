#!/usr/bin/env bash
# Bit-identity of models across a refactor: `benches/bit-identity.sh OLD_LTR NEW_LTR [DATA_DIR...]`.
#
# Trains every registered algorithm with both binaries on the same data and seed, as `cargo xtask reproduce` feeds
# them: a LETOR fold's train.txt with its vali.txt as validation (a validation grid where the algorithm has a C to
# choose), each at 1 and at 2 rayon threads (`RAYON_NUM_THREADS`; both must give the same model too). Then, on the
# first set, every distributed learner on 2 thread ranks, and on 2 MPI ranks when both binaries carry MPI and
# `mpirun` exists; stored preprocessing; a click log; a small `ltr experiment`. Models are compared as JSON with
# every wall-clock field (a key naming seconds, in the model and its diagnostics) and the binary's version removed
# (everything else — weights, trees, preprocessing, parameters, reports, provenance — must be equal byte for byte);
# experiments by their per-query test scores. DATA_DIR defaults to Fold1 of both LETOR sets in ../shared/datasets
# (MQ2008 and OHSUMED; a generated set when neither is there). Each algorithm runs with small settings (fewer
# epochs, rounds or trees than the papers') so that the whole check takes a few minutes on 2 cores.
# Prints one line per check and exits non-zero on the first difference.
set -euo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sets=("$@")
if [ ${#sets[@]} -eq 0 ]; then
  for d in "$root/../shared/datasets/MQ2008/Fold1" "$root/../shared/datasets/OHSUMED/QueryLevelNorm/Fold1"; do
    [ -f "$d/train.txt" ] && sets+=("$d")
  done
fi
if [ ${#sets[@]} -eq 0 ]; then
  echo "no LETOR folds in ../shared/datasets: using generated data"
  "$new" generate --profile letor --queries 100 --seed 3 --out "$work/generated" 2>/dev/null
  sets=("$work/generated")
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

same_model() { # label, args... (the rayon threads: $THREADS, default the machine's)
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

same_at_1_and_2_threads() { # label, args...: old = new at 1 thread, at 2 threads, and 1 thread = 2 threads
  local label=$1
  shift
  RAYON_NUM_THREADS=1 same_model "$label, 1 thread" "$@"
  cp "$work/new.json" "$work/one-thread.json"
  RAYON_NUM_THREADS=2 same_model "$label, 2 threads" "$@"
  if [ "$(normalise "$work/one-thread.json")" != "$(normalise "$work/new.json")" ]; then
    echo "DIFFERENT: $label at 1 and 2 threads"
    exit 1
  fi
}

small() { # quick settings, so every learner finishes in seconds
  case $1 in
    perceptron | committee-perceptron) echo "--param epochs=3" ;;
    rankboost) echo "--param rounds=15" ;;
    sigmoid) echo "--param max-iter=20" ;;
    listnet | lambdarank) echo "--param epochs=5" ;;
    coordinate-ascent) echo "--param restarts=2" ;;
    adarank) echo "--param rounds=10" ;;
    lambdamart | mart | random-forest) echo "--param trees=20" ;;
    neural) echo "--param epochs=10 --param sizes=32/16 --param layer-norm=true --param dropout=0.1" ;;
    *) echo "" ;;
  esac
}
mixing() { # a distributed perceptron returns the average or last of its mixtures
  [ "$1" = perceptron ] && echo "--param output=average" || true
}
algos=$("$new" algorithms --json | python3 -c 'import json,sys; [print(a["name"], int(a["distributed"])) for a in json.load(sys.stdin)]')
mapfile -t rows <<<"$algos"
grid() { # a C chosen on validation, as the reproductions choose it
  case $1 in
    ranksvm | rsvm-ir) echo "--param c=0.01,0.1,1" ;;
    *) echo "" ;;
  esac
}
for set in "${sets[@]}"; do
  name=${set#"$root/../shared/datasets/"}
  for row in "${rows[@]}"; do
    read -r algo _ <<<"$row"
    [ "$algo" = propensity-ranksvm ] && continue # trains on a click log: checked below
    # shellcheck disable=SC2046
    same_at_1_and_2_threads "$algo on $name with validation" --train "$set/train.txt" --validate "$set/vali.txt" \
      --seed 7 --algo "$algo" $(small "$algo") $(grid "$algo")
  done
done

# Distributed learners, stored preprocessing, clicks and `ltr experiment` on the first set.
base=(--train "${sets[0]}/train.txt" --seed 7)
for row in "${rows[@]}"; do
  read -r algo distributed <<<"$row"
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

# Stored preprocessing.
same_model "rsvm-ir with log1p+zscore" "${base[@]}" --algo rsvm-ir --log1p 1-5 --normalize zscore --features 1-20

# Clicks: a simulated log, trained on by propensity-ranksvm.
"$new" train --train "${sets[0]}/train.txt" --algo ranksvm --model "$work/production.json" 2>/dev/null
"$new" clicks simulate --data "${sets[0]}/train.txt" --model "$work/production.json" --sessions 300 --seed 5 \
  --out "$work/clicks.tsv" 2>/dev/null
same_model "propensity-ranksvm on clicks" "${base[@]}" --algo propensity-ranksvm --clicks "$work/clicks.tsv"

# `ltr experiment`: every cell's test scores.
for bin in old new; do
  "${!bin}" experiment --data "${sets[0]}/train.txt" --folds 3 --seed 3 --algo ranksvm:c=0.1,1 \
    --algo lambdamart:trees=10 --keep-scores --out "$work/exp-$bin" >/dev/null 2>&1
done
if diff -r "$work/exp-old/scores" "$work/exp-new/scores" >/dev/null; then
  echo "identical: ltr experiment test scores ($(find "$work/exp-new/scores" -type f | wc -l) files)"
else
  echo "DIFFERENT: ltr experiment test scores"
  exit 1
fi
echo "all identical"
