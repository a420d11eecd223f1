"""The published task-file schema: generated from the models, shipped, documented, and the
project's own tasks validate against it with a standard JSON Schema validator."""

from __future__ import annotations

import functools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from harness.answers.extract import EXTRACTORS
from harness.schema import BASE_SCHEMA, TASK_SCHEMA, shipped_dir, shipped_texts, task_schema
from harness.schema.reference import reference_markdown
from harness.tasks.loader import resolve_includes
from tests.helpers import run_harness

REPO = Path(__file__).resolve().parents[2]
TASK_FILES = sorted((REPO / "tasks").rglob("*.yaml"))


@functools.cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((shipped_dir() / name).read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _problems(validator: jsonschema.Draft202012Validator, data: Any) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(data)]


def test_shipped_files_are_generated_from_the_models() -> None:
    for name, text in shipped_texts().items():
        assert (shipped_dir() / name).read_text(encoding="utf-8") == text, (
            f"harness/schema/{name} is stale: run python -m harness.schema")
    assert (REPO / "docs" / "task-files.md").read_text(encoding="utf-8") == reference_markdown(), (
        "docs/task-files.md is stale: run python -m harness.schema")


def _properties(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(model, key, prop) for model, d in schema["$defs"].items()
            for key, prop in d.get("properties", {}).items()]


def test_every_field_has_its_doc_allowed_values_and_default() -> None:
    schema = task_schema()
    props = _properties(schema)
    assert len(props) > 80  # every model, complete and partial
    undocumented = [f"{m}.{k}" for m, k, p in props if not p.get("description")]
    assert undocumented == []
    defs = schema["$defs"]
    assert defs["CardSpec"]["properties"]["axis"]["enum"] == [
        "length", "compositional", "difficulty", "instruction", "other"]
    kind = defs["ExtractSpec"]["properties"]["kind"]  # a registered name: its doc names built-ins
    assert kind["type"] == "string" and kind["default"] == "strip" and "enum" not in kind
    EXTRACTORS.load_builtins()
    builtin = [n for n in EXTRACTORS.items if EXTRACTORS.is_builtin(n)]
    assert len(builtin) >= 5 and [n for n in builtin if n not in kind["description"]] == []
    assert defs["GenerateOutput"]["properties"]["max_tokens"]["default"] == 32
    assert defs["GenerateOutput"]["properties"]["max_tokens"]["minimum"] == 1
    assert "include" in schema["properties"] and "harness generators list" in (
        defs["GeneratorSource"]["properties"]["name"]["description"])


@pytest.mark.parametrize("path", TASK_FILES, ids=lambda p: str(p.relative_to(REPO / "tasks")))
def test_shipped_tasks_validate_against_the_shipped_schema(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if path.name.startswith("_"):
        assert _problems(_validator(BASE_SCHEMA), data) == []
        return
    task = _validator(TASK_SCHEMA)
    assert _problems(task, data) == []
    assert _problems(task, resolve_includes(path)) == []  # the merged task is complete


def test_the_schema_rejects_what_the_loader_rejects() -> None:
    task = _validator(TASK_SCHEMA)
    full = resolve_includes(REPO / "tasks" / "lengthgen" / "copy.yaml")
    assert _problems(task, full) == []
    for bad in ({**full, "card": {**full["card"], "axis": "lenght"}},  # not an allowed value
                {**full, "templtes": full["templates"]},  # unknown key
                {**full, "output": {"type": "generate", "max_tokens": 0}},  # below the minimum
                {**full, "output": {"type": "multiple_choice", "max_tokens": 3}},
                {k: v for k, v in full.items() if k != "name"}):  # incomplete, no include
        assert _problems(task, bad) != [], bad
    # with include: the bases supply missing keys, but a key given must still be known
    child = yaml.safe_load((REPO / "tasks" / "lengthgen" / "copy.yaml").read_text())
    assert "include" in child and "buckets" not in child and _problems(task, child) == []
    assert _problems(task, {**child, "source": {"nmae": "copy"}}) != []
    assert _problems(_validator(BASE_SCHEMA), {"output": {"max_tokns": 3}}) != []


def test_tasks_schema_command(tmp_path: Path) -> None:
    r = run_harness("tasks", "schema")
    assert r.returncode == 0, r.stderr
    assert r.stdout == (shipped_dir() / TASK_SCHEMA).read_text(encoding="utf-8")
    out = tmp_path / "task-base.schema.json"
    r = run_harness("tasks", "schema", "--base", "--output", str(out))
    assert r.returncode == 0 and out.read_text() == shipped_texts()[BASE_SCHEMA], r.stderr
    r = run_harness("tasks", "schema", "--output", str(tmp_path / "missing" / "x.json"))
    assert r.returncode == 2 and r.stderr.startswith("error: --output: cannot write"), r.stderr


def test_reference_documents_every_key_and_the_editor_line() -> None:
    text = reference_markdown()
    assert "# yaml-language-server: $schema=" in text
    for model, key, _ in _properties(task_schema()):
        if not model.startswith("Partial"):
            assert f"| `{key}` |" in text, f"{model}.{key} missing from docs/task-files.md"
    assert '| `axis` | one of `"length"`, `"compositional"`' in text


def test_example_package_names_the_schema_on_its_first_line() -> None:
    """The example package carries the schema (as the guide says to) and every task file names
    it on its first line, by a path relative to the file, as editors resolve it."""
    pkg = REPO / "examples" / "plugin-package"
    assert (pkg / "task.schema.json").read_text(encoding="utf-8") == shipped_texts()[TASK_SCHEMA]
    files = sorted((pkg / "src").rglob("*.yaml"))
    assert files
    for f in files:
        first = f.read_text(encoding="utf-8").splitlines()[0]
        prefix = "# yaml-language-server: $schema="
        assert first.startswith(prefix), f
        schema_file = (f.parent / first[len(prefix):]).resolve()
        want = BASE_SCHEMA if f.name.startswith("_") else TASK_SCHEMA
        assert schema_file == (pkg / want).resolve(), f
        validator = jsonschema.Draft202012Validator(json.loads(schema_file.read_text()))
        assert _problems(validator, yaml.safe_load(f.read_text(encoding="utf-8"))) == []


def test_each_problem_is_reported_once() -> None:
    """A complete file is checked for known, well-formed keys and, separately, for missing
    ones: an unknown or malformed key is one error, not one per check."""
    task = _validator(TASK_SCHEMA)
    full = resolve_includes(REPO / "tasks" / "lengthgen" / "copy.yaml")
    typo = {("bukets" if k == "buckets" else k): v for k, v in full.items()}
    assert _problems(task, typo) == ["$: Additional properties are not allowed ('bukets' was "
                                     "unexpected)", "$: 'buckets' is a required property"]
    for bad in ({**full, "source": {**full["source"], "nmae": "copy"}},
                {**full, "output": {"type": "generate", "max_tokens": "many"}},
                {**full, "card": {**full["card"], "axis": "lenght"}}):
        assert len(_problems(task, bad)) == 1, _problems(task, bad)
    # what is missing is still found, in nested and tagged blocks too
    no_name = {**full, "source": {k: v for k, v in full["source"].items() if k != "name"}}
    assert _problems(task, no_name) == ["$.source: 'name' is a required property"]
    no_type = {**full, "output": {"max_tokens": 3}}
    assert _problems(task, no_type) == ["$.output: 'type' is a required property"]
    no_axis = {**full, "card": {"shift": "x"}}
    assert _problems(task, no_axis) == ["$.card: 'axis' is a required property"]
    no_id = {**full, "templates": [{"prompt": "x"}]}
    assert _problems(task, no_id) == ["$.templates[0]: 'id' is a required property"]


def _load_example_blocks() -> None:
    """Register the example package's generator and metric, as its entry points would."""
    import importlib.util

    src = REPO / "examples" / "plugin-package" / "src" / "harness_example"
    for part in ("generators", "metrics"):
        spec = importlib.util.spec_from_file_location(f"_doc_example_{part}", src / f"{part}.py")
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


def test_the_task_examples_in_the_reference_validate(tmp_path: Path) -> None:
    """Every task file docs/task-files.md shows (a ```yaml block headed ``# tasks/mybench/NAME``)
    passes `harness tasks validate`, next to the example package's digitsum.yaml it includes."""
    from typer.testing import CliRunner

    from harness.answers.metrics import METRICS
    from harness.cli.main import app
    from harness.generators.registry import GENERATORS
    from tests.helpers import forget

    text = (REPO / "docs" / "task-files.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(# tasks/mybench/(\w+)\.yaml.*?)```", text, re.S)
    assert {name for _, name in blocks} >= {"digitsum_long", "digitsum_steps"}, blocks
    folder = tmp_path / "tasks" / "mybench"
    folder.mkdir(parents=True)
    shutil.copy(REPO / "examples" / "plugin-package" / "src" / "harness_example" / "tasks"
                / "digitsum.yaml", folder)
    for block, name in blocks:
        (folder / f"{name}.yaml").write_text(block, encoding="utf-8")
    steps = yaml.safe_load((folder / "digitsum_steps.yaml").read_text(encoding="utf-8"))
    assert "\n" in steps["templates"][0]["prompt"]  # a real newline, not a folded space
    _load_example_blocks()
    try:
        r = CliRunner().invoke(app, ["tasks", "validate", str(folder)])
    finally:
        forget(GENERATORS, "digit_list")
        forget(METRICS, "digit_sum_match")
    assert r.exit_code == 0, r.output
    assert r.output.count("ok: ") == len(blocks) + 1, r.output
