#!/usr/bin/env bash
# A neural ranker learning from clicks (issue 52's neural row; BENCHMARKS.md): `neural` on the click training set of
# a simulated log weighted by the log's true inverse propensities (`weighting=ips`) against its naive control
# (`weighting=naive`), with linear `lambdarank` on the same clicks and `neural` on the judgments beside them.
#
# Usage: benches/neural-clicks.sh LTR WORKDIR USER SESSIONS DATASET...
#   USER: `ultra` or `pbm`, with `:ETA` or not (benches/clicks-preamble.sh's `click_user`); only a position-based
#   user has the true propensities `weighting=ips` reads.
#   DATASET: a folder with train.txt, vali.txt and test.txt (a fold), or `web` (benches/clicks-preamble.sh).
# Per dataset: a RankSVM production ranker trained on 1% of the training queries shows the top 10, SESSIONS sessions
# are simulated (`--seed 2018`), and every learner picks its epoch on the judged validation file by NDCG@10 (seed 1).
# Rows: `neural` with `loss=listnet` (the softmax cross-entropy: ULTRA's IPW with a neural ranker) and with its
# default loss (NDCG-Loss2++), each naive and IPS; `lambdarank` naive and IPS; `neural` (listnet) on the judgments;
# with DLA=1 also `neural debias=dla` (the network and the propensities learned together from the sessions; its
# propensities go to the table's last section); with TWO_STAGE=1 also `lambdarank debias=dla` and `neural` (listnet)
# weighted by that linear DLA's propensities (`ltr clicks propensity --from-model` then `ltr train --propensities`).
# SKIP_STANDARD=1 runs only the rows those two switch on (into a WORKDIR that holds the standard rows already: the
# production ranker and the log are made again, the same from the same seeds).
# Writes WORKDIR/NAME/ROW.eval.json (test NDCG@10, standard convention, per query) for each dataset, NAME its
# position in the arguments; `benches/neural_clicks_table.py WORKDIR` pools them.
set -euo pipefail
ltr=$1 root=$2 click=$3 sessions=$4
shift 4
i=0
for dataset in "$@"; do
  i=$((i + 1))
  work=$root/$i
  mkdir -p "$work"
  echo "$dataset" > "$work/dataset"
  (
    . "$(dirname "$0")/clicks-preamble.sh"
    click_user "$click" USER
    if [ "$positional" = 0 ]; then
      echo "USER must be ultra or pbm: weighting=ips reads a position-based user's true propensities" >&2
      exit 1
    fi
    vali=$data/vali.txt
    "$ltr" clicks simulate --data "$train" --model "$work/production.json" --sessions "$sessions" "${sim[@]}" \
      --seed 2018 --out "$work/clicks.tsv" 2>/dev/null
    run() {
      local name=$1
      shift
      "$ltr" train --train "$train" --validate "$vali" "$@" --metric NDCG@10 --seed 1 --model "$work/$name.json" \
        2>"$work/$name.log"
      "$ltr" predict --model "$work/$name.json" --data "$test" --out "$work/$name.scores" 2>/dev/null
      "$ltr" eval --data "$test" --scores "$work/$name.scores" --metric NDCG@10 --json -q > "$work/$name.eval.json"
    }
    if [ "${SKIP_STANDARD:-0}" != 1 ]; then
      for w in naive ips; do
        run "neural-listnet-$w" --clicks "$work/clicks.tsv" --algo neural --param loss=listnet --param "weighting=$w"
        run "neural-default-$w" --clicks "$work/clicks.tsv" --algo neural --param "weighting=$w"
        run "lambdarank-$w" --clicks "$work/clicks.tsv" --algo lambdarank --param "weighting=$w"
      done
      run neural-judged --algo neural --param loss=listnet
    fi
    if [ "${DLA:-0}" = 1 ]; then
      run neural-dla --clicks "$work/clicks.tsv" --algo neural --param debias=dla
      echo "$user $eta" > "$work/user"
    fi
    if [ "${TWO_STAGE:-0}" = 1 ]; then
      run lambdarank-dla --clicks "$work/clicks.tsv" --algo lambdarank --param debias=dla
      "$ltr" clicks propensity --from-model "$work/lambdarank-dla.json" --out "$work/lambdarank-dla.tsv" >/dev/null
      run neural-two-stage --clicks "$work/clicks.tsv" --propensities "$work/lambdarank-dla.tsv" --algo neural \
        --param loss=listnet
    fi
    "$ltr" predict --model "$work/production.json" --data "$test" --out "$work/production.scores" 2>/dev/null
    "$ltr" eval --data "$test" --scores "$work/production.scores" --metric NDCG@10 --json -q \
      > "$work/production.eval.json"
    rm -f "$work/clicks.tsv"
  )
  echo "$dataset: done" >&2
done
