"""The runner end to end on a scripted model: exact per-bucket numbers, determinism, and
results.json recomputed from the samples files alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.run.evaluate import evaluate
from harness.run.results import read_samples
from harness.scoring.report import task_reports
from harness.spec.buckets import build_buckets
from harness.spec.task import TaskSpec
from tests.fixtures.fake_model import FakeLM

EQ = re.compile(r"(\d+)(?: \+ | plus )(\d+)(?: =|\?\nAnswer:)$")


def oracle_upto(max_digits: int) -> FakeLM:
    """Adds correctly up to ``max_digits`` digits, off by one beyond."""

    def answer(prompt: str) -> str:
        m = EQ.search(prompt)
        assert m, prompt
        a, b = int(m.group(1)), int(m.group(2))
        return f" {a + b if len(m.group(1)) <= max_digits else a + b + 1}\nnext line"

    return FakeLM(answer)


def cfg(tmp_path: Path, **kw: object) -> RunConfig:
    base: dict[str, object] = dict(model="fake:x", tasks=["lengthgen/addition"], seed=0,
                                   limit_per_bucket=6, output_dir=tmp_path / "run")
    base.update(kw)
    return RunConfig.model_validate(base)


def test_per_bucket_accuracy_and_gaps_are_exact(tmp_path: Path) -> None:
    res = evaluate(cfg(tmp_path), model=oracle_upto(7))
    (task,) = res.tasks
    (rep,) = task.templates
    acc = {b.bucket: b.accuracy for b in rep.buckets}
    assert acc == {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0, "5": 1.0, "6": 1.0, "7": 1.0,
                   "8": 0.0, "10": 0.0, "12": 0.0, "15": 0.0}
    assert all(b.n == 6 for b in rep.buckets)
    roles = {r.role: (r.n, r.accuracy) for r in rep.roles}
    assert roles == {"ID": (30, 1.0), "OOD": (36, pytest.approx(12 / 36))}
    assert rep.gaps.id_ood is not None and rep.gaps.id_ood.value == pytest.approx(1 - 12 / 36)
    assert rep.gaps.horizon is not None and rep.gaps.horizon.value == 7
    assert rep.gaps.horizon.factor == pytest.approx(7 / 5)


def test_samples_hold_everything_and_recompute_results(tmp_path: Path) -> None:
    c = cfg(tmp_path, templates=["all"])
    res = evaluate(c, model=oracle_upto(6))
    on_disk = json.loads((c.output_dir / "results.json").read_text())
    for task in on_disk["tasks"]:
        samples = read_samples(c.output_dir / task["samples_file"])
        assert len(samples) == task["n_items"] * 2  # two templates
        s0 = samples[0]
        assert s0.prompt.endswith("=") or s0.prompt.endswith("Answer:")
        assert len(s0.fewshot_ids) == 3 and all(i.startswith("fs:") for i in s0.fewshot_ids)
        assert s0.output.startswith(" ") and "\n" not in s0.output  # trimmed at the stop
        spec = TaskSpec.model_validate(task["spec"])
        buckets = build_buckets(spec.buckets, spec.roles)
        again = [
            r.model_dump(mode="json")
            for r in task_reports(samples, buckets, spec.gaps, c.seed, spec.scoring.metric,
                                  extract=spec.scoring.extract)
        ]
        assert again == task["templates"]
    assert [t.template for t in res.tasks[0].templates] == ["equation", "question"]


def test_same_seed_identical_files_apart_from_timings(tmp_path: Path) -> None:
    a = cfg(tmp_path / "a", tasks=["lengthgen"])
    b = cfg(tmp_path / "b", tasks=["lengthgen"])
    model = FakeLM(lambda p: " a b")
    evaluate(a, model=model)
    evaluate(b, model=model)
    ja = json.loads((a.output_dir / "results.json").read_text())
    jb = json.loads((b.output_dir / "results.json").read_text())
    for j in (ja, jb):
        timings = j.pop("timings")
        # durations and load averages only: no clock time of day (committed boards carry these)
        assert timings and all(k.endswith("_s") or k.startswith("loadavg_") for k in timings)
        assert all(abs(v) < 1e6 for v in timings.values())
        j["run"].pop("output_dir")
    assert ja == jb
    for t in ja["tasks"]:
        assert (a.output_dir / t["samples_file"]).read_bytes() == (
            b.output_dir / t["samples_file"]
        ).read_bytes()
    c = cfg(tmp_path / "c", tasks=["lengthgen"], seed=1)
    evaluate(c, model=model)
    assert (c.output_dir / "samples/lengthgen/addition.jsonl").read_bytes() != (
        a.output_dir / "samples/lengthgen/addition.jsonl").read_bytes()


def test_multiple_choice_from_files(tmp_path: Path) -> None:
    data = tmp_path / "mc.jsonl"
    rows = [{"q": f"q{i}", "choices": ["red", "green", "blue"], "target": i % 3, "hops": i % 4 + 1}
            for i in range(40)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tdir = tmp_path / "tasks" / "mine"
    tdir.mkdir(parents=True)
    (tdir / "colors.yaml").write_text(
        f"name: colors\ndescription: d\nsource: {{type: files, path: {data}}}\n"
        "fields: {difficulty: hops}\nbuckets: {values: [1, 2, 3, 4]}\nroles: {id_max: 2}\n"
        "templates: [{id: a, prompt: 'Q: {{ q }}'}]\n"
        "output: {type: multiple_choice, choices_field: choices}\n")
    # prefers "green" always: correct exactly when target == 1
    model = FakeLM(score=lambda ctx, cont: 0.0 if cont == " green" else -1.0)
    c = cfg(
        tmp_path, tasks=["mine/colors"], include_paths=[tmp_path / "tasks"], limit_per_bucket=None
    )
    res = evaluate(c, model=model)
    samples = read_samples(c.output_dir / res.tasks[0].samples_file)
    assert len(samples) == 40 and len(model.calls) == 120
    for s in samples:
        assert s.choice_logprobs == [-1.0, 0.0, -1.0] and s.extracted == "green"
        assert s.score == (1.0 if s.gold_index == 1 else 0.0)
    assert res.tasks[0].templates[0].roles[0].accuracy == pytest.approx(
        sum(1 for r in rows if r["hops"] <= 2 and r["target"] == 1) / 20)


def test_chat_template_prompt_is_logged(tmp_path: Path) -> None:
    c = cfg(tmp_path, apply_chat_template=True, limit_per_bucket=1)
    model = FakeLM(lambda p: " 0")
    res = evaluate(c, model=model)
    s = read_samples(c.output_dir / res.tasks[0].samples_file)[0]
    assert s.prompt.startswith("<user>") and s.prompt.endswith("<assistant>")
    assert s.prompt.count("<assistant>") == 4  # 3 exemplar answers + the open turn


def test_fewshot_conditions_run_in_one_command(tmp_path: Path) -> None:
    """An SGR-style protocol: the hard bucket with easy, hard and no exemplars, one run."""
    data = tmp_path / "lv.jsonl"
    data.write_text("".join(json.dumps({"q": f"q{i}", "target": f"a{i}", "level": i % 5 + 1,
                                        "uid": f"u{i}"}) + "\n" for i in range(100)))
    tdir = tmp_path / "tasks" / "mine"
    tdir.mkdir(parents=True)
    (tdir / "sgr.yaml").write_text(
        f"name: sgr\ndescription: d\nsource: {{type: files, path: {data}}}\n"
        "fields: {difficulty: level, id: uid, meta: [uid]}\nbuckets: {values: [1, 2, 3, 4, 5]}\n"
        "roles: {id_max: 3}\ntemplates: [{id: a, prompt: 'Q: {{ q }}'}]\n"
        "fewshot:\n  k: 2\n  conditions:\n"
        "    - {id: easy, pool: [1, 2, 3], evaluate: [4, 5]}\n"
        "    - {id: hard, pool: [4, 5], evaluate: [4, 5]}\n"
        "    - {id: none, k: 0, evaluate: [4, 5]}\n"
        "output: {type: generate}\n")
    c = cfg(tmp_path, tasks=["mine/sgr"], include_paths=[tmp_path / "tasks"], limit_per_bucket=None)
    res = evaluate(c, model=FakeLM(lambda p: " x"))
    samples = read_samples(c.output_dir / res.tasks[0].samples_file)
    level = {f"u{i}": i % 5 + 1 for i in range(100)}
    by_cond: dict[str, list[object]] = {}
    for s in samples:
        by_cond.setdefault(s.condition, []).append(s)
        assert level[s.id] >= 4 and s.meta == {"uid": s.id}
        shot_levels = {level[f] for f in s.fewshot_ids}
        assert shot_levels <= {"easy": {1, 2, 3}, "hard": {4, 5}, "none": set()}[s.condition]
        assert s.id not in s.fewshot_ids
    assert {k: len(v) for k, v in by_cond.items()} == {"easy": 40, "hard": 40, "none": 40}
    assert [(t.template, t.condition) for t in res.tasks[0].templates] == [
        ("a", "easy"), ("a", "hard"), ("a", "none")]
