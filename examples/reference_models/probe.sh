#!/usr/bin/env bash
# Where each trained reference model breaks: evaluate it on the probe tasks (every length around
# the end of the ID range: addition_reversed 4-8 digits, copy 7-12 letters), 100 items per bucket.
# Needs the weights rebuild.sh leaves in refmodels/; skips finished probes (rerun to resume).
# Output: refmodels/probe/<task>/<variant>-s<seed>/{results.json,train.json,samples/*.jsonl.gz}
# (results with their samples, so `harness rescore` can bring them to a later harness).
set -euo pipefail
cd "$(dirname "$0")/../.."
export OMP_NUM_THREADS=1
T=examples/reference_models/tasks
for dir in refmodels/lengthgen_addition_reversed/*-s* refmodels/lengthgen_copy/*-s*; do
  [[ -f $dir/train.json ]] || continue
  case $dir in
    *addition_reversed*) task=probe/addition_reversed_fine tpl=plain ;;
    *) task=probe/copy_fine tpl=repeat ;;
  esac
  name=$(basename "$dir") seed=${dir##*-s}
  res="refmodels/probe/${task#probe/}/$name"
  [[ -f $res/results.json ]] && continue
  nice -n 10 .venv/bin/harness eval --model "hf:$dir" --tasks "$task" --include-path "$T" \
    --templates "$tpl" --num-fewshot 0 --seed "$seed" --limit-per-bucket 100 \
    --output-dir "$res" > "$dir.probe.log" 2>&1 || { echo "probe failed: $res (see $dir.probe.log)"; exit 1; }
  cp "$dir/train.json" "$res/train.json"
  gzip -kf "$res"/samples/*/*.jsonl
  echo "done: $res"
done
