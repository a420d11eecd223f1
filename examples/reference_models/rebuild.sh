#!/usr/bin/env bash
# Rebuild (and evaluate) every reference model, one at a time; finished models are skipped, so
# rerunning resumes. Outputs: refmodels/<task-slug>/<variant>-s<seed>/ (weights, ignored by git)
# and leaderboards/reference/<task-slug>/<variant>-s<seed>/results.json (committed).
#   bash examples/reference_models/rebuild.sh            # STEPS=2000 PER_BUCKET=100 by default
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
STEPS=${STEPS:-2000}
PER_BUCKET=${PER_BUCKET:-100}
one() {  # task variant seed
  local slug=${1//\//_} dir="refmodels/${1//\//_}/$2-s$3" res="leaderboards/reference/${1//\//_}/$2-s$3"
  if [[ ! -f $dir/train.json ]]; then
    $PY examples/reference_models/train.py --task "$1" --variant "$2" --seed "$3" \
      --steps "$STEPS" --out "$dir"
  fi
  if [[ ! -f $res/results.json ]]; then
    .venv/bin/harness eval --model "hf:$dir" --tasks "$1" --num-fewshot 0 --seed "$3" \
      --limit-per-bucket "$PER_BUCKET" --output-dir "$res"
    cp "$dir/train.json" "$res/train.json"
  fi
}
for seed in 0 1 2; do
  for variant in nope rope learned; do one lengthgen/addition_reversed "$variant" "$seed"; done
done
for seed in 0 1 2; do
  for variant in nope learned; do one lengthgen/addition "$variant" "$seed"; done
done
