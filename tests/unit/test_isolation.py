"""A task that raises at run time is reported in one line naming it and fails alone; the model's
own failure still ends the run (plugin cases: tests/plugins/test_isolation.py)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.run.evaluate import evaluate
from tests.fixtures.fake_model import FakeLM

TASK = """\
name: t
description: Records from a file, one of them without its answer.
source: {type: files, path: data.jsonl}
fields: {target: answer, difficulty: n}
buckets: {values: [1, 2, 3]}
roles: {id_max: 1}
templates: [{id: a, prompt: "Say {{ q }}:"}]
output: {type: generate, max_tokens: 5}
"""


def test_item_without_target_fails_its_task_by_name(tmp_path: Path) -> None:
    """A record without its target is found before the model loads (every record is checked);
    with keep_going the other task runs and the failed one is recorded by name."""
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    rows = [{"q": "a", "answer": "a", "n": 1}, {"q": "bb", "answer": "bb", "n": 2},
            {"q": "ccc", "n": 3}]
    (folder / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "t.yaml").write_text(TASK)
    cfg = RunConfig(model="fake:x", tasks=["mine/t", "lengthgen/copy"], limit_per_bucket=2,
                    output_dir=tmp_path / "run", include_paths=[tmp_path / "tasks"])
    lines: list[str] = []
    res = evaluate(cfg, model=FakeLM(lambda p: " x"), on_failure=lines.append, keep_going=True)
    (line,) = lines
    assert line == (f"task mine/t (include:{tmp_path / 'tasks'}) failed: {folder / 'data.jsonl'}"
                    ":3: the record has no field 'answer' (fields.target) (1 of 3 records)"), line
    assert [t.task for t in res.tasks] == ["lengthgen/copy"]  # the other task completed
    (failed,) = res.failed
    assert failed.task == "mine/t" and failed.plugin is None and "no field 'answer'" in failed.error
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    assert on_disk["failed"][0]["task"] == "mine/t"
    assert on_disk["failed"][0]["origin"] == "include:tasks"  # public: by name, not the path
    assert not (tmp_path / "run" / "samples" / "mine" / "t.jsonl").exists()


def test_a_failing_model_ends_the_run_without_blaming_a_task(tmp_path: Path) -> None:
    def broken(prompt: str) -> str:
        raise RuntimeError("the model broke")

    cfg = RunConfig(model="fake:x", tasks=["lengthgen/copy", "lengthgen/reverse"],
                    limit_per_bucket=2, output_dir=tmp_path / "run")
    lines: list[str] = []
    with pytest.raises(RuntimeError, match="the model broke"):
        evaluate(cfg, model=FakeLM(broken), on_failure=lines.append)
    assert lines == [] and not (tmp_path / "run" / "results.json").exists()


def test_an_io_failure_under_the_model_is_one_line(tmp_path: Path) -> None:
    def full(prompt: str) -> str:
        raise sqlite3.OperationalError("database or disk is full")

    cfg = RunConfig(model="fake:x", tasks=["lengthgen/copy"], limit_per_bucket=2,
                    output_dir=tmp_path / "run")
    with pytest.raises(HarnessError) as e:
        evaluate(cfg, model=FakeLM(full))
    assert str(e.value) == (
        "lengthgen/copy: a model call failed: OperationalError: database or disk is full; "
        "finished responses are kept in the response cache: fix this and rerun to resume")
