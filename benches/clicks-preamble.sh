# Sourced by benches/click-estimate.sh, benches/debias-clicks.sh and benches/dla-linear.sh after they set `ltr`, `work` and `dataset`
# (their first three arguments): the peer Python, the data, and the production ranker both scripts share.
# DATASET: a folder with train.txt and test.txt, `web` (`ltr generate --profile web --queries 300 --seed 5`) or
# `web:N` (the same with N queries).
#
# Sets `py` (the peer venv's Python), `here` (benches/), `data`, `train`, `test`, `nq` (training queries), `keep`
# (1% of them, at least one) and trains `$work/production.json`, a RankSVM on the first `keep` training queries.
# The peer venv is LTR_PEER_VENV when set, else `.venv-peers` at the repository root, made by
# `../shared/tools/peer-venv.sh` when missing (as `cargo xtask bench` makes it).
# `click_user SPEC NAME`: the simulated user `ultra` or `pbm`, with `:ETA` or not (η = 1), as `user`, `eta` and
# `sim` (the `ltr clicks simulate` flags); NAME is the setting an error names.
click_user() {
  user=$1 eta=1
  case $user in *:*) eta=${user#*:} user=${user%%:*} ;; esac
  case $user in
    ultra) sim=(--preset ultra --eta "$eta") ;;
    pbm) sim=(--click-model pbm --eta "$eta" --top 10) ;;
    *) echo "$2 must be ultra or pbm (with :ETA or not), not $user" >&2; exit 1 ;;
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
