#!/usr/bin/env bash
# Train and evaluate reference models. Whatever is finished is skipped, so rerunning resumes.
#
#   bash examples/reference_models/rebuild.sh                        # every family, every seed
#   bash examples/reference_models/rebuild.sh parity/lstm parity/rope  # some families
#   SEEDS="0 1 2 3 4 5 6 7" JOBS=2 bash examples/reference_models/rebuild.sh
#   PLAN=1 bash examples/reference_models/rebuild.sh                 # print the plan, run nothing
#   CONTROL=1 bash examples/reference_models/rebuild.sh              # the negative control too
#   BOARD=1 bash examples/reference_models/rebuild.sh                # then build the board
#   BOARD=only bash examples/reference_models/rebuild.sh             # only build the board
#   STEPS=40 PER_BUCKET=5 ... rebuild.sh parity/lstm                 # a smoke test (not the recipe)
#
# A family is <task>/<model>: the task's training recipe (template, steps) with one model recipe
# (FAMILIES below); <model> names the recipe (a position encoding, lstm, or an ablation such as
# rope_curriculum). Model <model>-s<seed> of task T (slug: T with / as _) leaves
#   refmodels/<slug>/<model>-s<seed>/                weights, ignored by git (0.2-0.6 MB)
#   leaderboards/reference/<slug>/<model>-s<seed>/   results.json and train.json: commit them
#                                                    (git add -f: both names are ignored)
# Training: train.py on one thread (OMP_NUM_THREADS=1), seeded, on rows from the task's ID role
# (every value of its id_range); evaluation: harness eval --seed <seed> --num-fewshot 0
# --limit-per-bucket $PER_BUCKET with the training template. When committed results exist, the
# rebuilt weights are checked against their weights_sha256.
#
# The negative control (CONTROL=1, seeds 0-2): lengthgen/addition_reversed and lengthgen/copy,
# trained on their ID buckets only (isolated lengths), then probed (probe.sh). Their committed
# results were trained at the commit their results.json names, before `harness data export`
# replaced skipped items; `git checkout <that commit> && bash examples/reference_models/rebuild.sh`
# rebuilds those exact weights.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PY=.venv/bin/python H=.venv/bin/harness T=examples/reference_models/tasks
export PER_BUCKET=${PER_BUCKET:-100}
export OMP_NUM_THREADS=1  # one thread per model, training and evaluation (deterministic)
JOBS=${JOBS:-1}
SEEDS=${SEEDS:-"0 1 2 3 4"}

# Model recipes: train.py options (the transformer recipe is the negative control's).
TRANSFORMER="--layers 2 --d-model 64 --heads 4 --batch-size 64 --lr 3e-3"
LSTM="--arch lstm --layers 1 --d-model 128 --batch-size 64 --lr 3e-3"
# family (task/model)          task                          template  steps  train.py options
FAMILIES="
parity/lstm                    reference/parity              bits      2000   $LSTM
parity/rope                    reference/parity              bits      3000   --variant rope $TRANSFORMER
parity/rope_curriculum         reference/parity              bits      3000   --variant rope $TRANSFORMER --curriculum 0.5
parity_scratchpad/rope         reference/parity_scratchpad   compact   3000   --variant rope $TRANSFORMER
parity/rope_long               reference/parity              bits      10000  --variant rope $TRANSFORMER
parity_hints/rope              reference/parity_hints        compact   3000   --variant rope $TRANSFORMER
parity_hints/lstm              reference/parity_hints        compact   2000   $LSTM
copy_unique/rope               reference/copy_unique         compact   3000   --variant rope $TRANSFORMER
copy_repeat/rope               reference/copy_repeat         compact   3000   --variant rope $TRANSFORMER
copy_unique/nope               reference/copy_unique         compact   3000   --variant nope $TRANSFORMER
copy_unique/learned            reference/copy_unique         compact   3000   --variant learned $TRANSFORMER
copy_unique/rope_6k            reference/copy_unique         compact   6000   --variant rope $TRANSFORMER
copy_unique/rope_l4            reference/copy_unique         compact   3000   --variant rope $TRANSFORMER --layers 4
copy_unique_wide/rope          reference/copy_unique_wide    compact   3000   --variant rope $TRANSFORMER
addition_reversed/rope         reference/addition_reversed   compact   5000   --variant rope $TRANSFORMER
addition_hints/rope            reference/addition_hints      compact   5000   --variant rope $TRANSFORMER
addition_hints_window/rope     reference/addition_hints_window compact 5000   --variant rope $TRANSFORMER
addition_hints_window/rope_curriculum reference/addition_hints_window compact 5000 --variant rope $TRANSFORMER --curriculum 0.5
"
CONTROL_FAMILIES="
lengthgen_addition_reversed/nope     lengthgen/addition_reversed  plain   5000  --variant nope $TRANSFORMER
lengthgen_addition_reversed/rope     lengthgen/addition_reversed  plain   5000  --variant rope $TRANSFORMER
lengthgen_addition_reversed/learned  lengthgen/addition_reversed  plain   5000  --variant learned $TRANSFORMER
lengthgen_copy/nope                  lengthgen/copy               repeat  3000  --variant nope $TRANSFORMER
lengthgen_copy/rope                  lengthgen/copy               repeat  3000  --variant rope $TRANSFORMER
lengthgen_copy/learned               lengthgen/copy               repeat  3000  --variant learned $TRANSFORMER
"

one() {  # seed family task template steps train.py-options...
  local seed=$1 fam=$2 task=$3 tpl=$4 steps=$5; shift 5
  local slug=${task//\//_} model=${fam#*/} margs=()
  if [[ " $* " == *" --arch lstm "* || " $* " == *" --arch gru "* ]]; then
    margs=(--model-args trust_remote_code=true)
  fi
  local dir="refmodels/$slug/$model-s$seed" res="leaderboards/reference/$slug/$model-s$seed"
  mkdir -p "refmodels/$slug"
  if [[ ! -f $dir/train.json ]]; then
    nice -n 10 $PY examples/reference_models/train.py --task "$task" --template "$tpl" \
      --steps "$steps" --seed "$seed" --include-path "$T" "$@" --out "$dir" > "$dir.log" 2>&1 \
      || { echo "train failed: $dir (see $dir.log)"; return 1; }
  fi
  if [[ -f $res/results.json ]]; then  # committed results: were they measured on these weights?
    local want have
    want=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['model']['weights_sha256'])" "$res/results.json")
    have=$(sha256sum "$dir/model.safetensors" | cut -d' ' -f1)
    [[ $want == "$have" ]] || echo "warning: $dir: weights sha256 $have, but $res/results.json was measured on $want"
  else
    nice -n 10 $H eval --model "hf:$dir" "${margs[@]}" --tasks "$task" --include-path "$T" \
      --templates "$tpl" --num-fewshot 0 --seed "$seed" --limit-per-bucket "$PER_BUCKET" \
      --output-dir "$res" > "$dir.eval.log" 2>&1 \
      || { echo "eval failed: $res (see $dir.eval.log)"; return 1; }
    cp "$dir/train.json" "$res/train.json"
  fi
  echo "done: $res"
}
export -f one

plan() {  # one line per model: seed task template steps options (seed-major: a partial
  # rebuild covers every family)
  local table=$FAMILIES seeds=$SEEDS
  for seed in $seeds; do
    while read -r fam task tpl steps opts; do
      [[ -n $fam ]] || continue
      if (( $# )) && [[ " $* " != *" $fam "* ]]; then continue; fi
      echo "$seed $fam $task $tpl ${STEPS:-$steps} $opts"
    done <<< "$table"
  done
  if [[ ${CONTROL:-0} == 1 ]]; then
    for seed in 0 1 2; do
      while read -r fam task tpl steps opts; do
        [[ -n $fam ]] && echo "$seed $fam $task $tpl $steps $opts"
      done <<< "$CONTROL_FAMILIES"
    done
  fi
}

main() {  # the whole run is one function, parsed before it starts: editing this file while
  # a rebuild runs cannot change what that rebuild does
  for want in "$@"; do  # an unknown family name is a usage error, not a silent no-op
    grep -qE "^$want[[:space:]]" <<< "$FAMILIES" || {
      echo "rebuild.sh: unknown family $want; families: $(awk 'NF {printf "%s ", $1}' <<< "$FAMILIES")" >&2
      exit 2; }
  done
  if [[ ${PLAN:-0} == 1 ]]; then plan "$@"; exit 0; fi
  if [[ ${BOARD:-0} != only ]]; then plan "$@" | xargs -P "$JOBS" -L 1 bash -c 'one "$@"' _; fi
  if [[ ${CONTROL:-0} == 1 ]]; then
    bash examples/reference_models/probe.sh  # every length around the ID edge (refmodels/probe)
  fi
  if [[ ${BOARD:-0} == 1 || ${BOARD:-0} == only ]]; then
    # every run with its samples/: from its evaluation here, else as the board already
    # carries it (a fresh clone has no local samples; the negative control's live only there)
    inputs=()
    keep=$(mktemp -d)
    for r in leaderboards/reference/*/*-s*/results.json; do
      local run=${r%/results.json} copy
      copy=leaderboards/reference-board/runs/refmodels-$(basename "$(dirname "$run")")-$(basename "$run")
      if [[ -d $run/samples ]]; then inputs+=("$r")
      elif [[ -d $copy ]]; then cp -r "$copy" "$keep/" && inputs+=("$keep/$(basename "$copy")"/*/results.json)
      else echo "rebuild.sh: $run has no samples here or on the board: left out" >&2; fi
    done
    $H leaderboard build "${inputs[@]}" --out leaderboards/reference-board --gzip-samples \
      --title "Reference models: tiny transformers and LSTMs trained from scratch on ID data"
    rm -rf "$keep"
    python3 scripts/mark_board_current.py reference-board "built by examples/reference_models/rebuild.sh"
  fi
}
main "$@"
exit
