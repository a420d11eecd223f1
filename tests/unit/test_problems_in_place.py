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
        f"{f}:8: templates.0.prompt: 'txt' is not a field of generator 'copy' (did you mean: "
        "text?) (fields: length, target, text)",
    ]
    result = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(f)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 2, result.output


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


def test_a_problem_of_a_file_that_several_include_is_shown_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37, third trial: validate named base.yaml's problem once per file including it;
    now once, at base.yaml's line, naming every includer (base.yaml's own validation, a task
    too, adds no line of its own). A problem found once items are made (a bucket the generator
    refuses) likewise; so does eval's list of problems."""
    from harness.config import RunConfig
    from harness.errors import HarnessError
    from harness.run.evaluate import evaluate
    from harness.testing import ScriptedLM

    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "base.yaml").write_text(MOVES + "fewshots: {k: 2}\n")
    for name in ("a", "b"):
        (folder / f"{name}.yaml").write_text(f"include: base.yaml\nname: {name}\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["tasks", "validate", "mine"])
    assert r.exit_code == 2
    assert [ln for ln in r.output.splitlines() if ln.startswith("error")] == [
        "error: mine/base.yaml:10: fewshots: unknown key (did you mean 'fewshot'?) (included "
        "by mine/a.yaml, mine/b.yaml)"]
    (folder / "base.yaml").write_text(MOVES.replace("per_bucket: 4}", "per_bucket: 4, params: "
                                                    "{unique: true}}").replace("6]", "30]"))
    r = CliRunner().invoke(app, ["tasks", "validate", "mine"])
    errors = [ln for ln in r.output.splitlines() if ln.startswith("error")]
    assert len(errors) == 1 and errors[0].startswith(
        "error: mine/base.yaml:5: buckets.values: bucket 30: generator 'copy': "), errors
    assert errors[0].endswith(" (included by mine/a.yaml, mine/b.yaml)")
    cfg = RunConfig(model="scripted:x", tasks=["mine/a", "mine/b"], output_dir=tmp_path / "run",
                    include_paths=[tmp_path], use_cache=False)
    with pytest.raises(HarnessError) as e:
        evaluate(cfg, model=ScriptedLM())
    lines = str(e.value).splitlines()
    assert len(lines) == 2 and lines[0].endswith(
        f"(included by {tmp_path / 'mine' / 'a.yaml'}, {tmp_path / 'mine' / 'b.yaml'})")


def test_problems_found_after_the_schema_name_the_line_of_their_key(tmp_path: Path) -> None:
    """The checks against the registries, the generator and its items give the line of the
    key they are about, as the schema's problems always did."""
    f = tmp_path / "moves.yaml"
    f.write_text(MOVES.replace("per_bucket: 4}", "per_bucket: 4, params: {sep: 5, sepp: x}}")
                 .replace("{{ text }}", "{{ txt }}") + "scoring: {metric: exact_matc}\n")
    lines = _problems(f)
    assert [ln.split(": ")[:2] for ln in lines] == [
        [f"{f}:3", "source.params.sep"], [f"{f}:8", "templates.0.prompt"],
        [f"{f}:10", "scoring.metric"]], lines
    f.write_text(MOVES.replace("per_bucket: 4}", "per_bucket: 4, params: {unique: true}}")
                 .replace("6]", "30]"))
    r = CliRunner().invoke(app, ["tasks", "validate", str(f)])
    assert r.exit_code == 2 and r.output.startswith(
        f"error: {f}:5: buckets.values: bucket 30: generator 'copy': "), r.output


def test_merged_includers_keep_each_chain() -> None:
    from harness.tasks.origins import merge_includers

    lines = ["b.yaml:3: k: bad (included by mid.yaml, included by x.yaml)",
             "other: problem",
             "b.yaml:3: k: bad (included by mid.yaml, included by y.yaml)",
             "b.yaml:3: k: bad",
             "b.yaml:3: k: bad (included by z.yaml)",
             "other: problem"]
    assert merge_includers(lines) == [
        "b.yaml:3: k: bad (included by mid.yaml, included by x.yaml, y.yaml; z.yaml)",
        "other: problem"]
