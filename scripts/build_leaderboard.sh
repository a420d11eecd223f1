#!/usr/bin/env bash
# Regenerate the published leaderboard: every offline model on all four suites, then
# `harness leaderboard build`. One eval per model x suite under runs/leaderboard/<model>/<suite>/.
#
#   bash scripts/build_leaderboard.sh                      # full regeneration (see docs/leaderboards.md)
#   bash scripts/build_leaderboard.sh --reuse              # keep finished runs, only build what is missing
#   bash scripts/build_leaderboard.sh --limit 5 --models "hf:smollm2-135m"
#
# Options: --limit N (items per bucket, default 2), --seed S (default 0), --name NAME (folder
# under leaderboards/, default offline-small), --models "M1 M2" (default: SmolLM2-135M-Instruct and
# Gemma-3-270M), --suites "S1 S2", --runs DIR (default runs/leaderboard), --reuse, --no-build.
set -euo pipefail
cd "$(dirname "$0")/.."
LIMIT=2
SEED=0
NAME=offline-small
MODELS="hf:smollm2-135m hf:gemma3-270m"
SUITES="lengthgen compgen easy2hard instructdiv"
RUNS=runs/leaderboard
REUSE=0
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --limit) LIMIT=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --name) NAME=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --suites) SUITES=$2; shift 2 ;;
    --runs) RUNS=$2; shift 2 ;;
    --reuse) REUSE=1; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "build_leaderboard.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
H=.venv/bin/harness
# data-backed tasks (SCAN, PCFG SET, MATH, multi-prompt paraphrases) read the local mirror
export GENHARNESS_DATA=${GENHARNESS_DATA:-$(cd .. && pwd)/shared/data}
[ -d "$GENHARNESS_DATA" ] || { echo "build_leaderboard.sh: GENHARNESS_DATA=$GENHARNESS_DATA is not a folder" >&2; exit 2; }
start_all=$(date +%s)
RESULTS=()
for model in $MODELS; do
  slug=${model#hf:}
  slug=${slug//\//_}
  for suite in $SUITES; do
    out="$RUNS/$slug/$suite"
    RESULTS+=("$out/results.json")
    if [ "$REUSE" = 1 ] && [ -f "$out/results.json" ]; then
      echo "== $model $suite: reusing $out/results.json"
      continue
    fi
    echo "== $model $suite (limit $LIMIT, seed $SEED) -> $out"
    t0=$(date +%s)
    rm -rf "$out"; mkdir -p "$RUNS/$slug"
    nice -n 10 "$H" eval --model "$model" --tasks "$suite" --limit-per-bucket "$LIMIT" \
      --seed "$SEED" --output-dir "$out" > "$out.log" 2>&1 || {
        echo "   FAILED (see $out.log):"; tail -n 3 "$out.log"; exit 1; }
    echo "   done in $(( $(date +%s) - t0 )) s"
  done
done
if [ "$BUILD" = 1 ]; then
  t0=$(date +%s)
  # per-sample files are copied gzip-compressed so the folder stays small enough to commit
  "$H" leaderboard build "${RESULTS[@]}" --out "leaderboards/$NAME" --gzip-samples \
    --title "Offline small models: all four suites, $LIMIT items per bucket, seed $SEED"
  echo "   leaderboard build in $(( $(date +%s) - t0 )) s"
fi
echo "build_leaderboard.sh: total $(( $(date +%s) - start_all )) s"
