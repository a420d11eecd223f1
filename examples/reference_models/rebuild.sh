#!/usr/bin/env bash
# Rebuild (and evaluate) every reference model; finished models are skipped, so rerunning
# resumes. Outputs: refmodels/<task-slug>/<variant>-s<seed>/ (weights, ignored by git) and
# leaderboards/reference/<task-slug>/<variant>-s<seed>/{results.json,train.json} (committed),
# then the probe runs (probe.sh) and the reference leaderboard leaderboards/reference-board/ (seeds
# of a variant as a family).
#   bash examples/reference_models/rebuild.sh              # JOBS=2: two models at a time, one thread each
#   JOBS=1 bash examples/reference_models/rebuild.sh       # one at a time
set -euo pipefail
cd "$(dirname "$0")/../.."
export PY=.venv/bin/python H=.venv/bin/harness
export PER_BUCKET=${PER_BUCKET:-100}
export OMP_NUM_THREADS=1  # one thread per model, training and evaluation (deterministic)
JOBS=${JOBS:-2}
# Shared recipe (docs/reference-models.md): 2 layers, d_model 64, 4 heads, batch 64, peak lr 3e-3.
export RECIPE="--layers 2 --d-model 64 --heads 4 --batch-size 64 --lr 3e-3"
one() {  # task template steps variant seed
  local slug=${1//\//_}
  local dir="refmodels/$slug/$4-s$5" res="leaderboards/reference/$slug/$4-s$5"
  if [[ ! -f $dir/train.json ]]; then
    # shellcheck disable=SC2086
    nice -n 10 $PY examples/reference_models/train.py --task "$1" --template "$2" --steps "$3" \
      --variant "$4" --seed "$5" $RECIPE --out "$dir" > "$dir.log" 2>&1 \
      || { echo "train failed: $dir (see $dir.log)"; return 1; }
  fi
  if [[ ! -f $res/results.json ]]; then
    nice -n 10 $H eval --model "hf:$dir" --tasks "$1" --templates "$2" --num-fewshot 0 \
      --seed "$5" --limit-per-bucket "$PER_BUCKET" --output-dir "$res" > "$dir.eval.log" 2>&1 \
      || { echo "eval failed: $res (see $dir.eval.log)"; return 1; }
    cp "$dir/train.json" "$res/train.json"
  fi
  echo "done: $res"
}
export -f one
mkdir -p refmodels/lengthgen_addition_reversed refmodels/lengthgen_copy
# Seed 0 of every variant on both tasks first, then seeds 1 and 2, so that a partial rebuild
# already covers every variant.
for seed in 0 1 2; do
  for variant in nope rope learned; do
    echo "lengthgen/addition_reversed plain 5000 $variant $seed"
    echo "lengthgen/copy repeat 3000 $variant $seed"
  done
done | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _
bash examples/reference_models/probe.sh  # every length around the ID edge (leaderboards/reference-probe)
$H leaderboard build leaderboards/reference/*/*-s*/results.json --out leaderboards/reference-board \
  --gzip-samples --title "Reference models: tiny transformers trained from scratch on ID data"
python3 scripts/mark_board_current.py reference-board "built by examples/reference_models/rebuild.sh"
