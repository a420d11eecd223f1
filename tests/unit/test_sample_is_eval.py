"""Issue 47: ``harness tasks sample -n N`` shows exactly the items, prompts and targets that
``harness eval --limit-per-bucket N`` asks, at the same seed (a data file's items are a seeded
subset of each bucket, not its first records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import evaluate
from harness.cli.main import app
from harness.config import RunConfig
from harness.run.results import SamplesFile, samples_path
from harness.testing import ScriptedLM

TASK = """\
name: uc
description: unit conversions
source: {type: files, path: uc.jsonl}
fields: {difficulty: steps, id: id}
buckets: {values: [1, 2, 3, 4]}
roles: {id_max: 2}
templates: [{id: plain, prompt: "{{ question }} =", target: "{{ answer }}"}]
fewshot: {k: 2}
output: {type: generate, max_tokens: 8}
"""


def _shown(args: list[str]) -> list[tuple[str, str]]:
    """(id, prompt) of each item ``tasks sample`` prints."""
    r = CliRunner().invoke(app, ["tasks", "sample", *args])
    assert r.exit_code == 0, r.output
    out: list[tuple[str, str]] = []
    for block in r.output.split("--- ")[1:]:
        head, _, rest = block.partition("\n")
        prompt = rest.rpartition("\n>>> target:")[0]
        out.append((head.split()[0], prompt))
    return out


@pytest.mark.parametrize("seed", [0, 3])
def test_sample_shows_what_eval_asks_of_a_data_file(tmp_path: Path, seed: int) -> None:
    rows = [{"id": f"uc{i}", "question": f"q{i}", "answer": str(i), "steps": 1 + i % 4}
            for i in range(80)]
    (tmp_path / "uc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "uc.yaml").write_text(TASK)
    cfg = RunConfig(model="scripted:x", tasks=["uc"], limit_per_bucket=3, seed=seed,
                    include_paths=[tmp_path], use_cache=False, output_dir=tmp_path / "run")
    res = evaluate(cfg, model=ScriptedLM(" x"))
    asked = [(r.id, r.prompt) for r in SamplesFile(samples_path(cfg.output_dir,
                                                                res.tasks[0].task))
             if r.bucket == "3"]
    shown = _shown(["uc", "--include-path", str(tmp_path), "-n", "3", "--bucket", "3",
                    "--seed", str(seed)])
    assert shown == asked and len(asked) == 3
    first_three = [f"uc{i}" for i in range(80) if 1 + i % 4 == 3][:3]
    assert [i for i, _ in shown] != first_three  # a seeded subset, as eval draws it


def test_sample_shows_what_eval_asks_of_a_generator(tmp_path: Path) -> None:
    cfg = RunConfig(model="scripted:x", tasks=["lengthgen/copy"], limit_per_bucket=2,
                    use_cache=False, output_dir=tmp_path / "run")
    res = evaluate(cfg, model=ScriptedLM(" x"))
    asked = [(r.id, r.prompt) for r in SamplesFile(samples_path(cfg.output_dir,
                                                                res.tasks[0].task))
             if r.bucket == "12"]
    assert _shown(["lengthgen/copy", "-n", "2", "--bucket", "12"]) == asked


def test_sample_of_an_empty_bucket_says_so(tmp_path: Path) -> None:
    rows = [{"id": f"uc{i}", "question": f"q{i}", "answer": str(i), "steps": 1 + i % 3}
            for i in range(30)]
    (tmp_path / "uc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "uc.yaml").write_text(TASK)
    r = CliRunner().invoke(app, ["tasks", "sample", "uc", "--include-path", str(tmp_path),
                                 "--bucket", "4"])
    assert r.exit_code != 0 and "--bucket: bucket 4 of uc holds no item" in str(r.exception)


def test_sample_scores_an_answer_with_every_metric(tmp_path: Path) -> None:
    rows = [{"id": f"uc{i}", "question": f"q{i}", "answer": f"A{i}", "steps": 1 + i % 4}
            for i in range(20)]
    (tmp_path / "uc.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "uc.yaml").write_text(TASK.replace(
        "output: {type: generate, max_tokens: 8}",
        "output: {type: generate, max_tokens: 8}\nscoring: {metrics: [exact_match, "
        "normalized_match]}"))
    r = CliRunner().invoke(app, ["tasks", "sample", "uc", "--include-path", str(tmp_path),
                                 "-n", "1", "--bucket", "1", "--score", " a4"])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1].endswith(
        "score 0 (exact_match), normalized_match 1"), r.output
