# Sourced by benches/click-estimate.sh, benches/debias-clicks.sh and benches/dla-linear.sh after they set `ltr`, `work` and `dataset`
# (their first three arguments): the peer Python, the data, and the production ranker both scripts share.
# DATASET: a folder with train.txt and test.txt, `web` (`ltr generate --profile web --queries 300 --seed 5`) or
# `web:N` (the same with N queries).
#
# Sets `py` (the peer venv's Python), `here` (benches/), `data`, `train`, `test`, `nq` (training queries), `keep`
# (1% of them, at least one) and trains `$work/production.json`, a RankSVM on the first `keep` training queries.
# The peer venv is LTR_PEER_VENV when set, else `.venv-peers` at the repository root, made by
# `../shared/tools/peer-venv.sh` when missing (as `cargo xtask bench` makes it).
# `click_user SPEC NAME`: the simulated user as `user`, `eta`, `sim` (the `ltr clicks simulate` flags) and `positional`
# (1 for a position-based user, whose examination curve is the log's propensities; 0 else); NAME is the setting an
# error names. Every user is shown the production ranker's top 10 and clicks an examined document of grade g with
# ε− + (ε+ − ε−)(2^g − 1)/(2^max − 1), ε− 0.1, ε+ 1 (MQ2008: 0.1, 0.4, 1 for grades 0, 1, 2).
#   ultra[:ETA]  position-based, ULTRA's examination curve ^η (η = 1 when no :ETA)
#   pbm[:ETA]    position-based, examination (1/rank)^η
#   cascade      reads from rank 1 down, clicks with the grade's probability and stops at its first click (no η)
#   dcm[:ETA]    the dependent click model: a cascade that reads on after a click at rank r with the probability
#                λ_r = 1 − (1/r)^η/2 (η = 1: 0.5 after rank 1, 0.75 after rank 2, 0.95 after rank 10)
# Only a position-based user has true propensities: the others examine a rank depending on the clicks above it.
click_user() {
  user=$1 eta=1 positional=1
  case $user in *:*) eta=${user#*:} user=${user%%:*} ;; esac
  case $user in
    ultra) sim=(--preset ultra --eta "$eta") ;;
    pbm) sim=(--click-model pbm --eta "$eta" --top 10) ;;
    cascade)
      if [ "$1" != cascade ]; then
        echo "$2: the cascade user has no η (the :$eta of $1)" >&2
        exit 1
      fi
      sim=(--click-model cascade --eps-minus 0.1 --eps-plus 1 --top 10) positional=0 ;;
    dcm) sim=(--click-model dcm --eta "$eta" --eps-minus 0.1 --eps-plus 1 --top 10) positional=0 ;;
    *) echo "$2 must be ultra, pbm or dcm (with :ETA or not) or cascade, not $user" >&2; exit 1 ;;
  esac
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
venv=${LTR_PEER_VENV:-$here/../.venv-peers}
if [ ! -x "$venv/bin/python" ]; then
  tools=$here/../../shared/tools/peer-venv.sh
  if [ -n "${LTR_PEER_VENV:-}" ] || [ ! -f "$tools" ]; then
    echo "no peer venv at $venv (set LTR_PEER_VENV to a venv with numpy, pandas, scikit-learn, lightgbm and" \
      "xgboost, or make one with ../shared/tools/peer-venv.sh $venv)" >&2
    exit 1
  fi
  bash "$tools" "$venv" >&2
fi
py=$venv/bin/python
mkdir -p "$work"
if [ "$dataset" = web ] || [ "${dataset%%:*}" = web ]; then
  # `web`: 300 queries (20,765 training documents); `web:N`: N queries (2700: about 200k documents).
  queries=300
  case $dataset in web:*) queries=${dataset#web:} ;; esac
  [ -f "$work/data/train.txt" ] || "$ltr" generate --profile web --queries "$queries" --seed 5 --out "$work/data" 2>/dev/null
  data=$work/data
else
  data=$dataset
fi
train=$data/train.txt test=$data/test.txt
# 1% of the training queries, the first ones of the file.
nq=$(awk '{print $2}' "$train" | uniq | wc -l)
keep=$(( (nq + 99) / 100 ))
awk -v k="$keep" '{ if ($2 != last) { n++; last = $2 } if (n <= k) print }' "$train" > "$work/production.txt"
"$ltr" train --train "$work/production.txt" --algo ranksvm --model "$work/production.json" 2>/dev/null
