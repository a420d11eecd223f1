#!/usr/bin/env bash
# Regenerate the published leaderboard at its stated precision: every offline model on all four
# suites, each task run with the items per bucket that `harness leaderboard plan` computes (pooled
# ID and OOD accuracy within +-10 points at 95%, >= 30 items per bucket), then
# `harness leaderboard build`, then the manifest marks the board current.
#
#   bash scripts/build_leaderboard.sh                      # full regeneration (`harness leaderboard plan` says how long)
#   bash scripts/build_leaderboard.sh --reuse              # keep finished runs, only run what is missing
#   bash scripts/build_leaderboard.sh --limit 3 --models "hf:smollm2-135m" --name try --runs /tmp/try
#   bash scripts/build_leaderboard.sh --retime --models "hf:smollm2-135m"   # time what costs.json lacks
#   bash scripts/build_leaderboard.sh --replay leaderboards/offline-small   # reuse a board's answers
#
# Options: --limit N (every task at N items per bucket instead of the plan: a smoke test; the
# board then states its shortfall), --target H and --min-per-bucket M (the plan's target),
# --seed S (default 0), --name NAME (folder under leaderboards/, default offline-small), --models
# "M1 M2", --suites "S1 S2", --runs DIR (default runs/leaderboard), --reuse, --no-build,
# --retime (only time the tasks harness/leaderboard/costs.json has no measurement of, one
# `--no-cache` eval per task under RUNS/retime/, each added as it finishes; then stop; with
# --limit N each at N items per bucket, which `plan` scales by prompts: an upper bound, as smaller
# batches cost more per prompt), --replay
# DIR (repeatable: every run under DIR of the same model answers the prompts it holds, so a board
# grown by a condition or a few items per bucket asks the model only for what is new; a task
# answered partly this way is not timed), --horizon (also the adaptive d50 search of every task
# with a horizon: key).
# Needs `bash scripts/setup.sh --board` (llama-cpp-python and Gemma-3-270M besides the default set-up).
# Each eval runs on one thread (THREADS=1; OMP_NUM_THREADS), and the CPU seconds it measured per
# task go into harness/leaderboard/costs.json (COSTS=FILE: another table), the table `harness
# leaderboard plan` estimates from.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=
TARGET=0.10
MINB=30
SEED=0
NAME=offline-small
# SmolLM2 on transformers fp32; Gemma on llama.cpp at F16 (same answers as hf fp32 on 247/248
# greedy texts and 140/140 choices, bench/RESULTS.md, at 55% of its CPU at 2 items per bucket)
MODELS="hf:smollm2-135m llamacpp:gemma3-270m"
SUITES="lengthgen compgen easy2hard instructdiv"
RUNS=runs/leaderboard
REUSE=0
BUILD=1
RETIME=0
REPLAY_DIRS=()
HORIZON=()
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) LIMIT=$2; shift 2 ;;
    --target) TARGET=$2; shift 2 ;;
    --min-per-bucket) MINB=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --name) NAME=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --suites) SUITES=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --reuse) REUSE=1; shift ;;
    --no-build) BUILD=0; shift ;;
    --retime) RETIME=1; shift ;;
    --replay) REPLAY_DIRS+=("$2"); shift 2 ;;
    --horizon) HORIZON=(--horizon); shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "build_leaderboard.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
H=.venv/bin/harness
COSTS=${COSTS:-harness/leaderboard/costs.json}
export OMP_NUM_THREADS=${THREADS:-1}
# data-backed tasks (SCAN, PCFG SET, MATH, multi-prompt paraphrases) read the local mirror
export GENHARNESS_DATA=${GENHARNESS_DATA:-$(cd .. && pwd)/shared/data}
[ -d "$GENHARNESS_DATA" ] || { echo "build_leaderboard.sh: GENHARNESS_DATA=$GENHARNESS_DATA is not a folder" >&2; exit 2; }
case " $MODELS " in *" llamacpp:"*)
  .venv/bin/python -c "import llama_cpp" 2>/dev/null || {
    echo "build_leaderboard.sh: the llamacpp: models need llama-cpp-python: run bash scripts/setup.sh --board" >&2; exit 2; } ;;
esac
start_all=$(date +%s)
# a run folder per model: hf: models by name alone (the folders earlier builds made), others with their backend
model_slug() { local s=${1#hf:}; s=${s//\//_}; echo "${s//:/-}"; }
SUITES_CSV=${SUITES// /,}
if [ "$RETIME" = 1 ]; then
  # a task a resumed build answered from the response cache has no CPU time: run it alone,
  # uncached, at its plan limit (a later run replaces a task's entry; finished tasks are kept)
  [ -f "$COSTS" ] || echo '{"models": {}}' > "$COSTS"
  for model in $MODELS; do
    slug=$(model_slug "$model")
    margs=(); case "$model" in llamacpp:*) margs=(--model-args "threads=$OMP_NUM_THREADS") ;; esac
    todo=$("$H" leaderboard plan --tasks "$SUITES_CSV" --target "$TARGET" --min-per-bucket "$MINB" \
      --seed "$SEED" --groups --unmeasured "$model" --costs "$COSTS")
    while read -r limit tasks; do
      [ -n "$limit" ] || continue
      [ -z "$LIMIT" ] || limit=$LIMIT
      lim=(--limit-per-bucket "$limit"); [ "$limit" = all ] && lim=()
      for task in ${tasks//,/ }; do
        out="$RUNS/retime/$slug/${task//\//_}"
        echo "== $model: timing $task at limit $limit -> $out"
        rm -rf "$out"; mkdir -p "$(dirname "$out")"
        nice -n 10 "$H" eval --model "$model" "${margs[@]}" --tasks "$task" "${lim[@]}" \
          --seed "$SEED" --matched-control --no-cache --output-dir "$out" > "$out.log" 2>&1 || {
            echo "   FAILED (see $out.log):"; tail -n 3 "$out.log"; exit 1; }
        "$H" leaderboard costs "$out" --out "$COSTS"
      done
    done <<< "$todo"
  done
  echo "build_leaderboard.sh: re-timed in $(( $(date +%s) - start_all )) s"
  exit 0
fi
# one eval per (model, group of tasks sharing a limit): --limit-per-bucket applies to a whole run
if [ -n "$LIMIT" ]; then
  GROUPS_TXT="$LIMIT $SUITES_CSV"
else
  GROUPS_TXT=$("$H" leaderboard plan --tasks "$SUITES_CSV" --target "$TARGET" \
    --min-per-bucket "$MINB" --seed "$SEED" --groups)
  "$H" leaderboard plan --tasks "$SUITES_CSV" --target "$TARGET" --min-per-bucket "$MINB" \
    --seed "$SEED" | tail -n 3
fi
RESULTS=()
COMPARE=()
for model in $MODELS; do
  slug=$(model_slug "$model")
  margs=(); case "$model" in llamacpp:*) margs=(--model-args "threads=$OMP_NUM_THREADS") ;; esac
  while read -r limit tasks; do
    [ -n "$limit" ] || continue
    out="$RUNS/$slug/limit-$limit"
    RESULTS+=("$out/results.json")
    if [ "$REUSE" = 1 ] && [ -f "$out/results.json" ]; then
      echo "== $model limit $limit: reusing $out/results.json"
      continue
    fi
    echo "== $model: $(echo "$tasks" | tr ',' ' ' | wc -w) tasks at limit $limit (seed $SEED) -> $out"
    t0=$(date +%s)
    lim=(--limit-per-bucket "$limit"); [ "$limit" = all ] && lim=()
    replay=()  # the runs of this model under the --replay folders
    for d in "${REPLAY_DIRS[@]}"; do
      while IFS= read -r r; do replay+=(--replay "$r"); done < <(.venv/bin/python -c '
import json, sys, pathlib
for p in sorted(pathlib.Path(sys.argv[1]).rglob("results.json")):
    if json.loads(p.read_text()).get("run", {}).get("model") == sys.argv[2]:
        print(p.parent)' "$d" "$model")
    done
    rm -rf "$out"; mkdir -p "$RUNS/$slug"
    nice -n 10 "$H" eval --model "$model" "${margs[@]}" --tasks "$tasks" "${lim[@]}" \
      --seed "$SEED" --matched-control "${HORIZON[@]}" "${replay[@]}" --output-dir "$out" \
      > "$out.log" 2>&1 || {
        echo "   FAILED (see $out.log):"; tail -n 3 "$out.log"; exit 1; }
    echo "   done in $(( $(date +%s) - t0 )) s"
    [ -n "$LIMIT" ] || "$H" leaderboard costs "$out" --out "$COSTS"
  done <<< "$GROUPS_TXT"
done
# paired comparisons of the first two models, one per group (published as pages)
set -- $MODELS
if [ $# -ge 2 ]; then
  a=$(model_slug "$1"); b=$(model_slug "$2")
  while read -r limit tasks; do
    [ -n "$limit" ] || continue
    c="$RUNS/compare-$a-$b-limit-$limit.json"
    "$H" compare "$RUNS/$a/limit-$limit" "$RUNS/$b/limit-$limit" --json > "$c"
    COMPARE+=(--compare "$c")
  done <<< "$GROUPS_TXT"
fi
if [ "$BUILD" = 1 ]; then
  t0=$(date +%s)
  TITLE="Offline small models: all four suites, seed $SEED (each entry's precision target on the board)"
  [ -n "$LIMIT" ] && TITLE="Offline small models: all four suites, $LIMIT items per bucket, seed $SEED"
  # per-sample files are copied gzip-compressed so the folder stays small enough to commit
  "$H" leaderboard build "${RESULTS[@]}" "${COMPARE[@]}" --out "leaderboards/$NAME" \
    --gzip-samples --target "$TARGET" --min-per-bucket "$MINB" --title "$TITLE"
  echo "   leaderboard build in $(( $(date +%s) - t0 )) s"
  # a board built from this checkout's tasks is current: CI now rebuilds it and checks its specs
  python3 scripts/mark_board_current.py "$NAME" "built by scripts/build_leaderboard.sh"
fi
echo "build_leaderboard.sh: total $(( $(date +%s) - start_all )) s"
