"""Issue 26, regexes: every regex of a task file runs under a time bound. A pattern that can
backtrack for exponential time is refused when the file loads (``harness tasks validate`` and
``harness eval`` say so in one line naming the file and key, before any model loads), and a
match that still runs too long on a real answer fails its task alone. Each case hung (or was
``ok``) before."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.answers.extract import extract
from harness.cli.main import app
from harness.config import RunConfig
from harness.errors import TaskSpecError
from harness.run.evaluate import evaluate
from harness.spec.scoring import ExtractSpec
from tests.fixtures.fake_model import FakeLM
from tests.helpers import within

TASK = """\
name: t
description: d
source: {type: generator, name: addition, per_bucket: 2}
fields: {difficulty: digits}
buckets: {values: [1, 2]}
roles: {id_max: 1}
templates:
  - {id: a, prompt: "{{ a }} + {{ b }} ="}
output: {type: generate}
scoring: {extract: {kind: regex, pattern: "-?[0-9]+"}}
"""

FILES_TASK = """\
name: levels
description: d
source: {type: files, path: data.jsonl}
fields: {difficulty: level, difficulty_pattern: "PATTERN", target: answer}
buckets: {values: [1, 2]}
roles: {id_max: 1}
templates: [{id: a, prompt: "{{ q }}"}]
output: {type: generate}
"""

# (pattern, what the one-line error says)
BOMBS = {
    "nested_any": ("(.+)+!", "repeats a group that itself repeats"),
    "nested_word_space": (r"(\\w+\\s?)*$", "repeats a group that itself repeats"),
    "overlapping_branches": ("(a|a)+b", "ran over 1 s on a 2,000-character probe text"),
    "overlapping_prefixes": ("(a|aa)+$", "ran over 1 s"),
    "huge_count": ("a{1000000000}", "expands to over 100,000 elements"),
}


def _validate(path: Path) -> list[str]:
    result = CliRunner().invoke(app, ["tasks", "validate", str(path)])
    assert result.exit_code == 2, result.output
    return result.output.strip().splitlines()


@pytest.mark.parametrize("case", sorted(BOMBS))
def test_validate_refuses_a_scoring_regex_bomb(tmp_path: Path, case: str) -> None:
    pattern, expected = BOMBS[case]
    f = tmp_path / "bomb.yaml"
    f.write_text(TASK.replace('"-?[0-9]+"', f'"{pattern}"'))
    with within(30):
        (line,) = _validate(f)
    assert line.startswith(f"error: {f}:10: scoring.extract.pattern: regex "), line
    assert expected in line, line


def test_validate_refuses_a_difficulty_pattern_bomb(tmp_path: Path) -> None:
    f = tmp_path / "levels.yaml"
    f.write_text(FILES_TASK.replace("PATTERN", "(a+)+b"))
    with within(30):
        (line,) = _validate(f)
    assert line.startswith(f"error: {f}:4: fields.difficulty_pattern: regex '(a+)+b' repeats"), line


def test_sample_with_a_difficulty_pattern_bomb_is_one_line_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "data.jsonl").write_text(
        json.dumps({"q": "x", "answer": "x", "level": "a" * 5000}) + "\n")
    (tmp_path / "levels.yaml").write_text(FILES_TASK.replace("PATTERN", "(a+)+b"))
    with within(30):
        result = CliRunner().invoke(
            app, ["tasks", "sample", "levels", "--include-path", str(tmp_path)])
    assert isinstance(result.exception, TaskSpecError), result.output
    assert "fields.difficulty_pattern" in str(result.exception)
    assert "\n" not in str(result.exception)


def test_safe_patterns_pass_and_shipped_ones_are_unchanged() -> None:
    for pattern in ("-?[0-9][0-9,]*", "[01]", "([0-9]+)", r"(?:\d+,)*\d+", r"(\s*,\s*\w+)*",
                    r"(?i)^\W*(?:the answer is\W*)?([a-z][a-z'-]*)"):
        spec = ExtractSpec.model_validate({"kind": "regex", "pattern": pattern})
        assert extract("the answer is 12,345 ok", spec) is not None


def test_a_match_over_the_bound_stops_with_one_line() -> None:
    # passes the load-time checks (no nested repeat; its probes stay fast), but backtracks for
    # exponential time on this answer
    spec = ExtractSpec.model_validate({"kind": "regex", "pattern": "^(a|ab|b)*$"})
    start = time.monotonic()
    with within(60), pytest.raises(TaskSpecError) as info:
        extract("ab" * 40 + "!", spec)
    assert time.monotonic() - start < 30
    msg = str(info.value)
    assert msg.startswith("scoring.extract.pattern: regex '^(a|ab|b)*$' ran over 1 s on a "
                          "81-character text") and "\n" not in msg


def test_a_regex_over_the_bound_at_run_time_fails_its_task_alone(tmp_path: Path) -> None:
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    (folder / "t.yaml").write_text(TASK.replace('"-?[0-9]+"', '"^(a|ab|b)*$"'))
    cfg = RunConfig(model="fake:x", tasks=["mine/t", "lengthgen/copy"], limit_per_bucket=1,
                    output_dir=tmp_path / "run", include_paths=[tmp_path / "tasks"])
    lines: list[str] = []
    with within(120):
        res = evaluate(cfg, model=FakeLM(lambda p: "ab" * 40 + "!"), on_failure=lines.append)
    (line,) = lines
    assert line.startswith("task mine/t (include:") and "failed: " \
        "scoring.extract.pattern: regex '^(a|ab|b)*$' ran over 1 s" in line, line
    assert "(template a, bucket 1, item 0, seed 0; again: harness tasks sample" in line, line
    assert [t.task for t in res.tasks] == ["lengthgen/copy"]
