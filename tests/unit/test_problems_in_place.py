"""Every problem of a task file in one pass, each where it is written (issue 37, points 2 and
4): a key typo no longer hides a template-variable typo, and a problem in an included file is
shown at that file's path and line, naming the file that includes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.errors import TaskSpecError
from harness.tasks.loader import load_spec

MOVES = """\
name: moves
description: copy letters, as a stand-in for knight moves
source: {type: generator, name: copy, per_bucket: 4}
fields: {target: target, difficulty: length}
buckets: {values: [2, 3, 6]}
roles: {id_max: 3}
templates:
  - {id: io, prompt: "Copy: {{ text }}"}
output: {type: generate, max_tokens: 20, stop: ["\\n"]}
"""


def _problems(path: Path) -> list[str]:
    with pytest.raises(TaskSpecError) as e:
        load_spec(path)
    return str(e.value).splitlines()


def test_a_key_typo_and_a_template_variable_typo_are_both_reported(tmp_path: Path) -> None:
    f = tmp_path / "moves.yaml"
    f.write_text(MOVES.replace("{{ text }}", "{{ txt }}") + "fewshots: {k: 2}\n")
    assert _problems(f) == [
        f"{f}:10: fewshots: unknown key (did you mean 'fewshot'?)",
        f"{f}: templates.0.prompt: 'txt' is not a field of generator 'copy' (did you mean: "
        "text?) (fields: length, target, text)",
    ]
    result = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(f)])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 2, result.output


def test_every_generator_problem_in_one_pass(tmp_path: Path) -> None:
    f = tmp_path / "moves.yaml"
    f.write_text(MOVES.replace("per_bucket: 4}", "per_bucket: 4, params: {sepp: ' '}}")
                 .replace("{{ text }}", "{{ txt }}"))
    lines = _problems(f)
    assert [ln.split(": ")[1] for ln in lines] == ["source.params.sepp", "templates.0.prompt"]


def test_a_problem_in_an_included_file_is_shown_there(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    base = MOVES + "\n" * 26 + "fewshots: {k: 2}\n"  # the typo on line 36
    (tmp_path / "moves.yaml").write_text(base)
    stepwise = tmp_path / "moves_stepwise.yaml"
    stepwise.write_text("include: moves.yaml\nname: moves_stepwise\n"
                        "templates: [{id: step, prompt: 'Step by step: {{ text }}'}]\n")
    monkeypatch.chdir(tmp_path)
    assert _problems(Path("moves_stepwise.yaml")) == [
        "moves.yaml:36: fewshots: unknown key (did you mean 'fewshot'?) (included by "
        "moves_stepwise.yaml)"]
    # a check after the schema (a template variable), in the included file: there too
    (tmp_path / "moves.yaml").write_text(MOVES.replace("{{ text }}", "{{ txt }}"))
    (tmp_path / "mid.yaml").write_text("include: moves.yaml\nname: mid\n")
    stepwise.write_text("include: mid.yaml\nname: moves_stepwise\n")
    assert _problems(stepwise) == [
        f"{tmp_path / 'moves.yaml'}:8: templates.0.prompt: 'txt' is not a field of generator "
        "'copy' (did you mean: text?) (fields: length, target, text) (included by "
        f"{tmp_path / 'mid.yaml'}, included by {stepwise})"]
    # the includer's own keys stay at the includer
    stepwise.write_text("include: moves.yaml\nname: moves_stepwise\noutput: {max_tokns: 3}\n")
    (tmp_path / "moves.yaml").write_text(MOVES)
    assert _problems(stepwise) == [
        f"{stepwise}:3: output.max_tokns: unknown key (did you mean 'max_tokens'?)"]
