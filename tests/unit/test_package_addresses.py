"""Issue 37, a trial package written from the docs: a package's tasks name each other by the
addresses they have once installed, in a checkout too (``check_task_package(Path)``,
``harness tasks validate``), with close names for a typo and never a hint the schema refuses;
``check_task_package`` checks what validate and eval check, each problem at its file and line;
the guide documents the test helpers' arguments and types."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.errors import HarnessError
from harness.testing import ScriptedLM, check_task_package

ROOT = Path(__file__).resolve().parents[2]

PYPROJECT = """\
[project]
name = "mypkg-dist"
version = "0.1"

[project.entry-points."harness.tasks"]
mypkg = "mypkg.tasks"
"""

DEPTH = """\
name: depth
description: copy letters
source: {type: generator, name: copy, per_bucket: 4}
fields: {target: target, difficulty: length}
buckets: {values: [2, 3, 6]}
roles: {id_max: 3}
templates: [{id: io, prompt: "Copy: {{ text }}\\nAnswer:"}]
output: {type: generate, max_tokens: 20, stop: ["\\n"]}
"""


def _variant(items_from: str) -> str:
    return (f"include: depth.yaml\nname: stepwise\nitems_from: {items_from}\n"
            "templates: [{id: step, prompt: \"Step by step, copy: {{ text }}\\nAnswer:\"}]\n")


def _package(tmp_path: Path, items_from: str = "mypkg/depth", pyproject: bool = True) -> Path:
    """The documented layout: pyproject.toml, src/mypkg/tasks/ (the namespace mypkg)."""
    folder = tmp_path / "pkg" / "src" / "mypkg" / "tasks"
    folder.mkdir(parents=True)
    if pyproject:
        (tmp_path / "pkg" / "pyproject.toml").write_text(PYPROJECT)
    (folder / "__init__.py").write_text("")
    (folder / "depth.yaml").write_text(DEPTH)
    (folder / "stepwise.yaml").write_text(_variant(items_from))
    return folder


def test_a_package_folder_gets_its_installed_addresses(tmp_path: Path) -> None:
    """items_from: mypkg/depth, as the task is addressed once installed, resolves in a
    checkout: the namespace is the harness.tasks entry point naming the folder."""
    folder = _package(tmp_path)
    checks = check_task_package(folder, output_dir=tmp_path / "out")
    assert [(c.address, c.origin) for c in checks] == [
        ("mypkg/depth", f"include:{folder}"), ("mypkg/stepwise", f"include:{folder}")]
    r = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(folder)])
    assert r.exit_code == 0, r.output
    from harness.tasks.namespaces import folder_namespace  # the guide's example package

    example = ROOT / "examples" / "plugin-package" / "src" / "harness_example"
    assert (folder_namespace(example / "tasks"), folder_namespace(example)) == ("mybench", None)


def test_namespace_given_by_hand(tmp_path: Path) -> None:
    folder = _package(tmp_path, pyproject=False)
    checks = check_task_package(folder, namespace="mypkg", model=ScriptedLM("x"))
    assert [c.address for c in checks] == ["mypkg/depth", "mypkg/stepwise"]
    with pytest.raises(TypeError, match="namespace= is for a Path"):
        check_task_package("mypkg", namespace="mypkg")


def test_without_a_namespace_the_hint_never_names_a_bare_address(tmp_path: Path) -> None:
    """A folder no entry point names: its top-level tasks are bare names, which items_from
    cannot hold; the line says how to give the namespace, not 'did you mean: depth'."""
    folder = _package(tmp_path, pyproject=False)
    with pytest.raises(HarnessError) as e:
        check_task_package(folder)
    line = str(e.value)
    assert line.startswith(f"{folder / 'stepwise.yaml'}:3: items_from: no task 'mypkg/depth' "
                           "(not a task of"), line
    assert "did you mean" not in line and "namespace='NAME'" in line, line


def test_a_bare_items_from_says_what_to_write(tmp_path: Path) -> None:
    folder = _package(tmp_path, items_from="depth")
    r = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(folder)])
    assert r.exit_code == 2
    assert f"error: {folder / 'stepwise.yaml'}:3: items_from: 'depth' is not a task address: " \
        "write NAMESPACE/TASK" in r.output, r.output
    assert "should match pattern" not in r.output


def test_a_typo_in_items_from_gets_close_names(tmp_path: Path) -> None:
    folder = _package(tmp_path, items_from="mypkg/deth")
    r = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(folder)])
    assert r.exit_code == 2
    assert f"error: {folder / 'stepwise.yaml'}:3: items_from: no task 'mypkg/deth' (did you " \
        "mean: mypkg/depth?)" in r.output, r.output
    with pytest.raises(HarnessError, match=r"no task 'mypkg/deth' \(did you mean: mypkg/depth\?"):
        check_task_package(folder)


def test_check_task_package_names_the_file_and_line_of_a_source_eval_refuses(
        tmp_path: Path) -> None:
    folder = _package(tmp_path)
    (folder / "fromfile.yaml").write_text(
        DEPTH.replace("name: depth", "name: fromfile").replace(
            "{type: generator, name: copy, per_bucket: 4}", "{type: files, path: /dev/zero}"))
    with pytest.raises(HarnessError) as e:
        check_task_package(folder)
    assert str(e.value) == (f"{folder / 'fromfile.yaml'}:3: source.path: cannot tell the format "
                            "of /dev/zero; set source.format")


def _guide() -> str:
    return (ROOT / "docs" / "writing-a-task-package.md").read_text(encoding="utf-8")


def test_the_guide_gives_scripted_lms_arguments_as_they_are() -> None:
    shown = re.search(r"`ScriptedLM\((.*?)\)`", _guide())
    assert shown is not None, "the guide shows ScriptedLM's constructor"
    names = [p.split("=")[0].strip() for p in shown.group(1).split(",") if p.strip() != "*"]
    assert names == [p for p in inspect.signature(ScriptedLM).parameters]


def test_the_guide_says_when_an_accuracy_is_none() -> None:
    from harness.scoring.aggregates import BucketAggregate

    assert BucketAggregate.model_fields["accuracy"].annotation == (float | None)
    assert re.search(r"`accuracy` is a `float \| None`", _guide())
