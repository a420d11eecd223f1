"""A generator's exception names task, bucket, item and seed, and the ``harness tasks sample``
command it gives makes that same item fail again; ``--traceback`` / ``GENHARNESS_TRACEBACK=1``
shows the generator's own stack (issue 37, point 3)."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.config import RunConfig
from harness.errors import HarnessError
from harness.generators.registry import GENERATORS, generator
from harness.run.evaluate import evaluate
from harness.testing import ScriptedLM
from tests.helpers import forget


def knight(rng: random.Random, difficulty: int) -> dict[str, Any]:
    """A knight's move from a random square; a bug when the square is on the edge of a big
    board (some items of the largest bucket only)."""
    col, row = rng.randrange(difficulty), rng.randrange(difficulty)
    if difficulty >= 6 and col == difficulty - 1:
        raise IndexError(f"bug: edge file reached at {col},{row}")
    return {"text": f"{col},{row}", "target": f"{col + 1},{row + 2}"}


TASK = """\
name: edge
description: knight moves
source: {type: generator, name: t37_knight, per_bucket: 40}
fields: {target: target, difficulty: size}
buckets: {values: [3, 8]}
roles: {id_max: 3}
templates: [{id: io, prompt: "Move from {{ text }}:"}]
output: {type: generate, max_tokens: 5}
"""


@pytest.fixture(autouse=True)
def _knight() -> Iterator[None]:
    generator("t37_knight", difficulty="size", fields=("text", "target"))(knight)
    yield
    forget(GENERATORS, "t37_knight")


def _task(tmp_path: Path) -> Path:
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    (folder / "edge.yaml").write_text(TASK)
    return tmp_path / "tasks"


def test_a_generator_bug_names_the_item_and_the_command_reproduces_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    include = _task(tmp_path)
    cfg = RunConfig(model="scripted:x", tasks=["mine/edge"], seed=4, output_dir=tmp_path / "run",
                    include_paths=[include], use_cache=False)
    lines: list[str] = []
    evaluate(cfg, model=ScriptedLM("1,2"), on_failure=lines.append)
    (line,) = lines
    m = re.search(r"failed: generator 't37_knight': IndexError: bug: edge file reached at "
                  r"7,\d \(bucket 8, item (\d+), seed 4; again: (harness tasks sample mine/edge "
                  r"--bucket 8 --item \d+ --seed 4); its stack: GENHARNESS_TRACEBACK=1\)$", line)
    assert m is not None, line
    assert "Traceback" not in capsys.readouterr().err  # the stack only when asked for
    args = m.group(2).split()[1:]
    assert args[args.index("--item") + 1] == m.group(1)
    again = CliRunner().invoke(app, [*args, "--include-path", str(include)])
    assert isinstance(again.exception, HarnessError)
    assert line.endswith(str(again.exception).removeprefix("mine/edge: ")), line
    ok = CliRunner().invoke(app, [*args[:-4], "--item", "0", "--seed", "4",
                                  "--include-path", str(include)])
    assert ok.exit_code == 0 and ok.output.startswith("--- 8/0  bucket=8"), ok.output


def test_traceback_shows_the_generators_own_stack(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    include = _task(tmp_path)
    monkeypatch.setenv("GENHARNESS_TRACEBACK", "1")
    cfg = RunConfig(model="scripted:x", tasks=["mine/edge"], seed=4, output_dir=tmp_path / "run",
                    include_paths=[include], use_cache=False)
    lines: list[str] = []
    evaluate(cfg, model=ScriptedLM("1,2"), on_failure=lines.append)
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and ", in knight" in err, err
    assert "IndexError: bug: edge file reached" in err


def board(rng: random.Random, difficulty: int) -> dict[str, Any]:
    """A generator that refuses one size."""
    if difficulty == 30:
        raise ValueError("size 30 is too large for this board")
    return {"text": str(rng.randrange(difficulty)), "target": "x"}


def refuses_all(rng: random.Random, difficulty: int) -> dict[str, Any]:
    raise ValueError("no board at all")


def test_validate_names_the_bucket_whose_difficulty_the_generator_refuses(
        tmp_path: Path) -> None:
    generator("t37_board", difficulty="size", fields=("text", "target"))(board)
    generator("t37_none", difficulty="size", fields=("text", "target"))(refuses_all)
    try:
        folder = tmp_path / "mine"
        folder.mkdir()
        one = TASK.replace("t37_knight", "t37_board")
        (folder / "one.yaml").write_text(one.replace("[3, 8]", "[4, 8, 30]").replace(
            "id_max: 3", "id_max: 4"))
        (folder / "first.yaml").write_text(one.replace("{values: [3, 8]}", "{edges: [30, 31, 40]}")
                                           .replace("id_max: 3", "id_max: 30"))
        (folder / "every.yaml").write_text(TASK.replace("t37_knight", "t37_none"))
        r = CliRunner().invoke(app, ["tasks", "validate", str(folder)])
    finally:
        forget(GENERATORS, "t37_board", "t37_none")
    assert r.exit_code == 2
    assert r.output.splitlines() == [
        f"error: {folder / 'every.yaml'}:3: source: generator 't37_none': no board at all "
        "(bucket 3 and the last, bucket 8: the parameters, not one bucket)",
        f"error: {folder / 'first.yaml'}:5: buckets.edges: bucket 30: generator 't37_board': "
        "size 30 is too large for this board",
        f"error: {folder / 'one.yaml'}:5: buckets.values: bucket 30: generator 't37_board': "
        "size 30 is too large for this board"], r.output
