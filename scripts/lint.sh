#!/usr/bin/env bash
# Lint, CI's own step (not part of the pytest run): ruff on the code, tests and benchmarks, and
# mypy --strict on harness/. Run it from anywhere; it exits non-zero on the first failing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m ruff check harness tests bench
.venv/bin/python -m mypy --strict harness
