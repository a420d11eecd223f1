"""The public faces: ``harness`` (running evaluations) and ``harness.api`` (extending the
harness), each name imported lazily from the module that defines it; the plugin example and
the plugin guide use ``harness.api`` alone."""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import harness
import harness.api as api

ROOT = Path(__file__).resolve().parents[2]


def test_from_harness_import_evaluate_is_always_the_function() -> None:
    """Issue 27: a submodule named ``evaluate`` shadowed the exported function once imported."""
    importlib.import_module("harness.run.evaluate")
    from harness import evaluate

    assert callable(evaluate) and evaluate.__module__ == "harness.run.evaluate"
    code = ("import harness.run.evaluate, harness.cli.eval_cmd; from harness import evaluate; "
            "print(type(evaluate).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.strip()
    assert out == "function"


@pytest.mark.parametrize("face", [harness, api])
def test_no_submodule_is_named_like_an_exported_name(face: object) -> None:
    package = "harness" if face is harness else "harness.api"
    exports: dict[str, str] = face._EXPORTS  # type: ignore[attr-defined]
    shadowing = [n for n in exports
                 if importlib.util.find_spec(f"harness.{n}") is not None]
    assert not shadowing, f"{package}: submodules shadow {shadowing}"


@pytest.mark.parametrize("face", [harness, api])
def test_every_exported_name_comes_from_its_module(face: object) -> None:
    exports: dict[str, str] = face._EXPORTS  # type: ignore[attr-defined]
    assert set(face.__all__) >= set(exports)  # type: ignore[attr-defined]
    for name, module in exports.items():
        value = getattr(face, name)
        assert value is getattr(importlib.import_module(module), name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr(face, "nope")  # noqa: B009


def _harness_imports(text: str) -> list[str]:
    return re.findall(r"^\s*(?:from|import) (harness(?:\.[\w.]+)?)\b(?!_)", text, re.M)


def test_the_plugin_example_imports_only_the_api() -> None:
    files = sorted((ROOT / "examples" / "plugin-package").rglob("*.py"))
    assert files
    used = {m for f in files for m in _harness_imports(f.read_text(encoding="utf-8"))}
    assert used == {"harness.api"}


def test_the_plugin_guide_imports_only_the_api() -> None:
    guide = (ROOT / "docs" / "writing-a-task-package.md").read_text(encoding="utf-8")
    assert set(_harness_imports(guide)) == {"harness.api"}
    named = set(re.findall(r"`(harness\.[a-z_]+(?:\.[a-z_]+)+)`", guide))
    assert not named, f"the guide names internal modules: {sorted(named)}"


def test_the_guide_registers_the_scripted_backend_as_it_says(tmp_path: Path) -> None:
    """The guide's conftest lines register a package-named scripted backend whose name is the
    answer, and its pyproject lines name the same factory."""
    import tomllib
    from typer.testing import CliRunner

    from harness.cli.main import app
    from tests.helpers import forget

    guide = (ROOT / "docs" / "writing-a-task-package.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(# tests/conftest.py\n.*?)```", guide, re.S)
    toml = re.search(r"```toml\n(\[project.entry-points.\"harness.models\"\]\n"
                     r"[a-z-]+-scripted = .*?)```", guide, re.S)
    assert code and toml and "never plain `scripted`" in guide
    (name, ref), = tomllib.loads(toml.group(1))["project"]["entry-points"]["harness.models"].items()
    assert name == "mybench-scripted" and ref == "harness.api:scripted_backend"
    exec(compile(code.group(1), "conftest.py", "exec"), {})
    try:
        assert api.BACKENDS.get(name) is api.scripted_backend
        r = CliRunner().invoke(app, [
            "eval", "--model", f"{name}:7", "--tasks", "lengthgen/addition", "--no-cache",
            "--limit-per-bucket", "1", "--templates", "equation", "--output-dir", str(tmp_path)])
    finally:
        forget(api.BACKENDS, name)
    assert r.exit_code == 0, r.output
    (samples,) = (tmp_path / "samples").rglob("*.jsonl")
    assert '"7"' in samples.read_text()


def test_a_scripted_backend_under_a_package_name_is_recorded_under_that_name(
        tmp_path: Path) -> None:
    """Issue 37, third trial: registered as ``mybench-scripted`` through ``harness.api``, the
    scripted backend's runs say ``mybench-scripted`` in results.json, not ``scripted``; two such
    backends' runs (and cached answers) are not confused."""
    import json

    from typer.testing import CliRunner

    from harness.cli.main import app
    from tests.helpers import forget

    api.BACKENDS.add("mybench-scripted", api.scripted_backend)
    api.BACKENDS.add("otherpkg-scripted", api.scripted_backend)
    try:
        models, hits = [], []
        for name in ("mybench-scripted", "otherpkg-scripted"):
            out = tmp_path / name
            r = CliRunner().invoke(app, [
                "eval", "--model", f"{name}:7", "--tasks", "lengthgen/addition",
                "--limit-per-bucket", "1", "--templates", "equation", "--output-dir", str(out),
                "--cache-dir", str(tmp_path / "cache")])
            assert r.exit_code == 0, r.output
            results = json.loads((out / "results.json").read_text())
            models.append(results["model"])
            hits.append(results["cache"]["hits"])
    finally:
        forget(api.BACKENDS, "mybench-scripted")
        forget(api.BACKENDS, "otherpkg-scripted")
    assert [(m["backend"], m["name"]) for m in models] == [
        ("mybench-scripted", "7"), ("otherpkg-scripted", "7")]
    assert hits == [0, 0]  # the second backend's answers are its own, not the first's
    assert api.scripted_backend("7", {}, 1).identity.backend == "scripted"  # called directly
