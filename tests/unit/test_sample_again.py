"""Issue 37, a trial package written from the docs: the ``again:`` command an item's failure
ends with makes that failure again, for an exemplar of the few-shot pool (``fs:`` ids, which
``tasks sample --item`` takes) and for a metric that returns text (``tasks sample --score``
scores an answer with the task's extraction and metric); ``tasks sample`` names the task file
and line of a source eval refuses."""

from __future__ import annotations

import random
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.answers.metrics import METRICS, metric
from harness.cli.main import app
from harness.config import RunConfig
from harness.errors import TRACEBACK_ENV, HarnessError
from harness.generators.registry import GENERATORS, generator
from harness.run.evaluate import evaluate
from harness.seeding import derive_seed
from harness.testing import ScriptedLM
from tests.helpers import forget

TASK = """\
name: {name}
description: copy letters
source: {{type: generator, name: {generator}, per_bucket: 3}}
fields: {{target: target, difficulty: length}}
buckets: {{values: [2, 3, 6]}}
roles: {{id_max: 3}}
templates: [{{id: io, prompt: "Copy: {{{{ text }}}}\\nAnswer:"}}]
fewshot: {{k: 1, pool_size: 4}}
output: {{type: generate, max_tokens: 20, stop: ["\\n"]}}
scoring: {{metric: {metric}}}
"""

_BAD: set[float] = set()  # first draws on which t37_fewfail fails



def _bare(text: str) -> str:
    """An error without the task address it starts with (a failure line names the task once)."""
    return re.sub(r"^[\w.-]+/[\w./-]+: ", "", text)

def fewfail(rng: random.Random, difficulty: int) -> dict[str, Any]:
    x = rng.random()
    if x in _BAD:
        raise KeyError(f"bug: no square at {x:.3f}")
    return {"text": "a" * difficulty, "target": "a" * difficulty}


def wordy(extracted: str, target: str) -> str:
    return "yes" if extracted == target else "no"  # text, not a score


def flaky(extracted: str, target: str) -> float:
    return 1 / len(extracted.strip(" xy"))


@pytest.fixture(autouse=True)
def _plugins() -> Iterator[None]:
    generator("t37_fewfail", difficulty="length", fields=("text", "target"))(fewfail)
    metric("t37_wordy")(wordy)  # type: ignore[arg-type]
    metric("t37_flaky")(flaky)
    yield
    forget(GENERATORS, "t37_fewfail")
    forget(METRICS, "t37_wordy", "t37_flaky")
    _BAD.clear()


def _tasks(tmp_path: Path, name: str, generator: str = "copy",
           metric: str = "exact_match") -> Path:
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(TASK.format(name=name, generator=generator,
                                                     metric=metric))
    return tmp_path / "tasks"


def _failure(tmp_path: Path, include: Path, task: str, answer: str,
             matched_control: bool = False) -> str:
    cfg = RunConfig(model="scripted:x", tasks=[task], output_dir=tmp_path / "run",
                    include_paths=[include], use_cache=False, matched_control=matched_control)
    lines: list[str] = []
    evaluate(cfg, model=ScriptedLM(answer), on_failure=lines.append)
    (line,) = lines
    return line


def _again(line: str) -> list[str]:
    m = re.search(r"; again: harness (.*?); its stack: GENHARNESS_TRACEBACK=1\)$", line)
    assert m is not None, line
    return shlex.split(m.group(1))


@pytest.mark.parametrize("bucket", ["2", "6"])
def test_an_exemplar_of_the_pool_is_named_and_made_again(tmp_path: Path, bucket: str) -> None:
    """An ID bucket's exemplar, and an OOD bucket's, which only --matched-control makes."""
    include = _tasks(tmp_path, "few", generator="t37_fewfail")
    _BAD.add(random.Random(derive_seed(0, 0, "mine/few", "fewshot", bucket, 1)).random())
    line = _failure(tmp_path, include, "mine/few", "aa", matched_control=bucket == "6")
    assert "KeyError: 'bug: no square at" in line, line
    assert (f"(bucket {bucket}, item fs:{bucket}/1, seed 0; again: harness tasks sample "
            f"mine/few --bucket {bucket} --item fs:{bucket}/1 --seed 0;") in line, line
    again = CliRunner().invoke(app, [*_again(line), "--include-path", str(include)])
    assert isinstance(again.exception, HarnessError)
    assert line.endswith(_bare(str(again.exception))), (line, str(again.exception))


def test_tasks_sample_shows_an_exemplar_of_any_bucket(tmp_path: Path) -> None:
    include = _tasks(tmp_path, "few")
    for item, role in (("fs:2/1", "ID"), ("fs:6/0", "OOD")):  # OOD: --matched-control's pool
        r = CliRunner().invoke(app, ["tasks", "sample", "mine/few", "--item", item,
                                     "--include-path", str(include)])
        assert r.exit_code == 0, r.output
        assert r.output.startswith(f"--- {item}  bucket={item[3]} role={role} difficulty="
                                   f"{item[3]} (a few-shot exemplar, never evaluated)\n"), r.output
    r = CliRunner().invoke(app, ["tasks", "sample", "--help"])
    assert "fs:" in " ".join(r.output.split())


def test_a_metric_that_returns_text_is_made_again_with_score(tmp_path: Path) -> None:
    include = _tasks(tmp_path, "wordy", metric="t37_wordy")
    line = _failure(tmp_path, include, "mine/wordy", "it's x")
    assert "metric 't37_wordy' (" in line and "returned 'no' (str), not a score" in line
    args = _again(line)
    assert args[-2:] == ["--score", "it's x"], line
    again = CliRunner().invoke(app, [*args, "--include-path", str(include)])
    assert isinstance(again.exception, HarnessError)
    assert line.endswith(_bare(str(again.exception))), (line, str(again.exception))


def test_score_scores_an_answer_with_the_tasks_metric(tmp_path: Path) -> None:
    include = _tasks(tmp_path, "plain", generator="t37_fewfail")  # its target: "aa"
    r = CliRunner().invoke(app, ["tasks", "sample", "mine/plain", "--bucket", "2", "--item", "0",
                                 "--score", " aa ", "--include-path", str(include)])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == (">>> answer ' aa ': extracted 'aa' (strip), score 1 "
                                         "(exact_match)"), r.output


def test_score_with_traceback_shows_the_metrics_own_stack(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.cli import main

    include = _tasks(tmp_path, "flaky", metric="t37_flaky")
    line = _failure(tmp_path, include, "mine/flaky", "xy")
    assert "ZeroDivisionError" in line and "--score xy;" in line, line
    monkeypatch.setenv(TRACEBACK_ENV, "0")  # --traceback sets it to 1: put back after the test
    monkeypatch.setattr(sys, "argv", ["harness", *_again(line), "--include-path", str(include),
                                      "--traceback"])
    assert main._run() == 2
    err = capsys.readouterr().err
    assert _bare(err.splitlines()[0].removeprefix("error: ")) == line.split(" failed: ", 1)[-1], \
        err
    assert "Traceback (most recent call last)" in err and ", in flaky" in err, err


def test_tasks_sample_names_the_file_and_line_of_a_source_eval_refuses(tmp_path: Path) -> None:
    include = _tasks(tmp_path, "zero")
    f = include / "mine" / "zero.yaml"
    f.write_text(f.read_text().replace("{type: generator, name: copy, per_bucket: 3}",
                                       "{type: files, path: /dev/zero, format: jsonl}"))
    r = CliRunner().invoke(app, ["tasks", "sample", "mine/zero", "-n", "1",
                                 "--include-path", str(include)])
    assert isinstance(r.exception, HarnessError)
    assert str(r.exception) == f"{f}:3: source.path: /dev/zero is a device, not a regular file"
