"""Eval checks every task as ``harness tasks validate`` does, before any model loads (issue 37,
points 1 and 6): a generator parameter the generator refuses, or a files source at /dev/zero,
stops the run there in the lines validate prints, unless ``--keep-going`` runs the others; the
prompt count and the closing line never claim tasks that are not there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.config import RunConfig
from harness.errors import HarnessError
from harness.run import evaluate as evaluation
from harness.run.evaluate import evaluate
from harness.run.progress import RunClock
from harness.testing import ScriptedLM
from tests.helpers import run_harness, within

COPY = """\
name: {name}
description: copy letters
source: {{type: generator, name: copy, per_bucket: 3{params}}}
fields: {{target: target, difficulty: length}}
buckets: {{values: [2, 3, 6]}}
roles: {{id_max: 3}}
templates: [{{id: io, prompt: "Copy: {{{{ text }}}}"}}]
output: {{type: generate, max_tokens: 20, stop: ["\\n"]}}
"""
# each parameter fine alone; the generator refuses them together when it makes an item
REFUSED = ", params: {alphabet: ab, unique: true}"
ZERO = """\
name: zero
description: records from a device
source: {type: files, path: /dev/zero, format: jsonl}
fields: {difficulty: level, target: answer}
buckets: {values: [1, 2]}
roles: {id_max: 1}
templates: [{id: a, prompt: "{{ q }}"}]
output: {type: generate}
"""


def _tasks(tmp_path: Path, **files: str) -> Path:
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / f"{name}.yaml").write_text(text)
    return folder


def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    def load(cfg: RunConfig) -> None:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(evaluation, "load", load)


def _cfg(tmp_path: Path, *tasks: str) -> RunConfig:
    return RunConfig(model="scripted:x", tasks=list(tasks), limit_per_bucket=2,
                     output_dir=tmp_path / "run", include_paths=[tmp_path / "tasks"],
                     use_cache=False)


def test_a_refused_generator_parameter_stops_eval_before_the_model_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _tasks(tmp_path, bad=COPY.format(name="bad", params=REFUSED),
                    good=COPY.format(name="good", params=""))
    validate = CliRunner().invoke(app, ["tasks", "validate", str(folder / "bad.yaml")])
    assert validate.exit_code == 2
    (problem,) = validate.output.strip().splitlines()
    _no_model(monkeypatch)
    with pytest.raises(HarnessError) as e:
        evaluate(_cfg(tmp_path, "mine/bad", "mine/good"))
    lines = str(e.value).splitlines()
    assert ["error: " + lines[0]] == [problem] and "unique: length must be" in lines[0]
    assert lines[1:] == [
        "1 of 2 tasks failed the checks that harness tasks validate makes, so no model was "
        "loaded and nothing ran; fix them, or pass --keep-going to run the others"]
    assert not (tmp_path / "run").exists()
    with pytest.raises(HarnessError) as e:  # every task fails: nothing to go on with
        evaluate(_cfg(tmp_path, "mine/bad"), keep_going=True)
    assert str(e.value).splitlines()[-1].endswith("so no model was loaded and nothing ran")


def test_keep_going_runs_the_tasks_that_pass(tmp_path: Path) -> None:
    _tasks(tmp_path, bad=COPY.format(name="bad", params=REFUSED),
           good=COPY.format(name="good", params=""))
    lines: list[str] = []
    res = evaluate(_cfg(tmp_path, "mine/bad", "mine/good"), model=ScriptedLM("x"),
                   on_failure=lines.append, keep_going=True)
    assert [t.task for t in res.tasks] == ["mine/good"]
    assert [f.task for f in res.failed] == ["mine/bad"] and "unique: length" in lines[0]
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    assert on_disk["failed"][0]["task"] == "mine/bad"


def test_the_cli_stops_before_the_model_and_never_claims_other_tasks(tmp_path: Path) -> None:
    _tasks(tmp_path, bad=COPY.format(name="bad", params=REFUSED),
           bad2=COPY.format(name="bad2", params=REFUSED))
    run = run_harness("eval", "--model", "hf:no-such-model-anywhere", "--tasks",
                      "mine/bad,mine/bad2", "--include-path", str(tmp_path / "tasks"),
                      "--output-dir", str(tmp_path / "run"))
    assert run.returncode == 2, run.stderr
    errors = run.stderr.strip().splitlines()
    assert len(errors) == 3 and all(e.startswith("error: ") for e in errors), run.stderr
    assert errors[-1] == ("error: 2 of 2 tasks failed the checks that harness tasks validate "
                          "makes, so no model was loaded and nothing ran")
    assert "prompts" not in run.stderr and "others are complete" not in run.stderr


def test_a_run_whose_every_task_fails_says_so() -> None:
    clock = RunClock({"a/x": None, "a/y": None})
    assert clock.announce() == ("2 tasks, prompts not countable in advance (making their "
                                "items failed; each one's error follows)")
    assert RunClock({"a/x": 4, "a/y": None}).announce() == (
        "4 prompts in 2 tasks (and 1 not countable in advance: making its items failed; its "
        "error follows)")


def test_a_record_without_its_target_stops_eval_before_the_model_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: every record is checked before the model loads (was: the run started, then
    the task failed at the drawn item), at the data file's line, with exit 2."""
    folder = _tasks(tmp_path, t=ZERO.replace("/dev/zero", "data.jsonl").replace("zero", "t")
                    .replace("values: [1, 2]", "values: [1]"))
    (folder / "data.jsonl").write_text(json.dumps({"q": "a", "level": 1, "answer": "b"}) + "\n"
                                       + json.dumps({"q": "c", "level": 1}) + "\n")
    _no_model(monkeypatch)
    with pytest.raises(HarnessError) as e:
        evaluate(_cfg(tmp_path, "mine/t").model_copy(update={"limit_per_bucket": 1}))
    assert str(e.value).splitlines()[0] == (
        f"{folder / 'data.jsonl'}:2: the record has no field 'answer' (fields.target) "
        "(1 of 2 records)")
    validate = CliRunner().invoke(app, ["tasks", "validate", str(folder / "t.yaml")])
    assert validate.exit_code == 2
    assert validate.output.splitlines()[0] == "error: " + str(e.value).splitlines()[0]


@pytest.mark.parametrize("flags", [[], ["--deep"], ["--no-items"]])
def test_validate_refuses_a_files_source_at_dev_zero_as_eval_does(tmp_path: Path,
                                                                 flags: list[str]) -> None:
    folder = _tasks(tmp_path, zero=ZERO)
    with within(20):
        result = CliRunner().invoke(app, ["tasks", "validate", *flags, str(folder / "zero.yaml")])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (f"error: {folder / 'zero.yaml'}:3: source.path: /dev/zero is "
                                     "a device, not a regular file")


def test_eval_refuses_a_files_source_at_dev_zero_before_the_model_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _tasks(tmp_path, zero=ZERO)
    _no_model(monkeypatch)
    with within(20), pytest.raises(HarnessError) as e:
        evaluate(_cfg(tmp_path, "mine/zero"))
    assert str(e.value).splitlines()[0] == (f"{folder / 'zero.yaml'}:3: source.path: /dev/zero is "
                                            "a device, not a regular file")


def test_a_files_source_that_is_missing_or_of_unknown_format_fails_validate(
        tmp_path: Path) -> None:
    folder = _tasks(tmp_path, gone=ZERO.replace("/dev/zero", "gone.jsonl"),
                    odd=ZERO.replace("/dev/zero", "rows.txt").replace(", format: jsonl", ""),
                    later=ZERO.replace("/dev/zero", "later.jsonl").replace(
                        "format: jsonl", "format: jsonl, url: 'https://example.invalid/x.jsonl'"))
    (folder / "rows.txt").write_text("{}\n")
    result = CliRunner().invoke(app, ["tasks", "validate", str(folder)])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"error: {folder / 'gone.yaml'}:3: source.path: file not found: {folder / 'gone.jsonl'}",
        f"ok: {folder / 'later.yaml'} (zero, 1 template(s))",  # downloaded when eval runs
        f"error: {folder / 'odd.yaml'}:3: source.path: cannot tell the format of "
        f"{folder / 'rows.txt'}; set source.format",
    ]


def test_a_schema_error_is_refused_in_the_same_words_as_a_generator_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A task file the schema refuses (here a template variable the generator does not make)
    ends with the same closing line as a task whose generator fails, and --keep-going runs the
    others past it too."""
    folder = _tasks(tmp_path, typo=COPY.format(name="typo", params="").replace("text", "txt"),
                    bad=COPY.format(name="bad", params=REFUSED),
                    good=COPY.format(name="good", params=""))
    (problem,) = CliRunner().invoke(app, ["tasks", "validate", str(folder / "typo.yaml")]
                                    ).output.strip().splitlines()
    _no_model(monkeypatch)
    closing = ("the checks that harness tasks validate makes, so no model was loaded and nothing "
               "ran")
    with pytest.raises(HarnessError) as e:
        evaluate(_cfg(tmp_path, "mine/typo"))
    assert str(e.value).splitlines() == [problem.removeprefix("error: "),
                                         f"the task failed {closing}"]
    with pytest.raises(HarnessError) as e:
        evaluate(_cfg(tmp_path, "mine/typo", "mine/bad", "mine/good"))
    lines = str(e.value).splitlines()
    assert lines[0] == problem.removeprefix("error: ") and "unique: length" in lines[1]
    assert lines[2:] == [f"2 of 3 tasks failed {closing}; fix them, or pass --keep-going to run "
                         "the others"]
    monkeypatch.undo()
    failed: list[str] = []
    res = evaluate(_cfg(tmp_path, "mine/typo", "mine/good"), model=ScriptedLM("x"),
                   on_failure=failed.append, keep_going=True)
    assert [t.task for t in res.tasks] == ["mine/good"]
    assert [f.task for f in res.failed] == ["mine/typo"] and "'txt'" in failed[0]
