#!/usr/bin/env bash
# Benchmark-only dependency: lm-evaluation-harness 0.4.13 in its own virtual environment
# (.venv-lmeval at the repository root, gitignored). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
V=.venv-lmeval
if [ -f "$V/.ready" ]; then exit 0; fi
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
"$V/bin/python" -m pip install -q --upgrade pip >/dev/null
# torch first, pinned (a local CPU wheel here); an unpinned one could be a CUDA build
"$V/bin/python" -c "import torch" 2>/dev/null || "$V/bin/pip" install -q "torch==2.13.0"
"$V/bin/pip" install -q "lm-eval[hf]==0.4.13" "transformers==5.19.0" "tokenizers==0.23.3" "accelerate==1.15.0"
"$V/bin/python" -c "import lm_eval, torch, transformers; print('lm-eval', lm_eval.__version__ if hasattr(lm_eval, '__version__') else '?', 'torch', torch.__version__, 'transformers', transformers.__version__)"
touch "$V/.ready"
