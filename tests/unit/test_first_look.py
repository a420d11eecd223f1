"""``harness eval`` prints each task's table as soon as the task is done (issue 25, the first
look): the first table does not wait for the last task."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.config import RunConfig
from harness.models import backends
from harness.run.evaluate import evaluate
from harness.testing import ScriptedLM, scripted_backend

TASKS = ["lengthgen/copy", "lengthgen/reverse"]


def test_each_task_is_handed_over_before_the_next_one_runs(tmp_path: Path) -> None:
    events: list[str] = []

    def answer(prompt: str) -> str:
        events.append("ask")
        return "x"

    cfg = RunConfig(model="scripted:x", tasks=TASKS, limit_per_bucket=2, seed=0,
                    use_cache=False, output_dir=tmp_path / "run")
    evaluate(cfg, model=ScriptedLM(answer), on_task=lambda t: events.append(t.task))
    done = [i for i, e in enumerate(events) if e != "ask"]
    assert [events[i] for i in done] == TASKS
    assert done[0] < len(events) - 2 and events[done[0] + 1] == "ask"  # asked after the first
    assert done[1] == len(events) - 1


def test_the_cli_prints_a_header_each_table_and_the_footer(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backends.BACKENDS.items, "scripted", scripted_backend)
    out = CliRunner().invoke(app, ["eval", "--model", "scripted:x", "--tasks", ",".join(TASKS),
                                   "--limit-per-bucket", "2", "--no-cache",
                                   "--output-dir", str(tmp_path / "run")])
    assert out.exit_code == 0, out.output
    text = out.stdout
    assert text.startswith("model: scripted:x  seed: 0\n")
    first, second = (text.index(t) for t in TASKS)
    assert first < second < text.index("at most 2 items per bucket, a first look")
    assert text.count("model: scripted:x") == 1
