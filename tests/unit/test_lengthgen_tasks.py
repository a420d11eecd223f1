"""The lengthgen task files: metadata, answers accepted by their own scoring (oracle model),
ID-only exemplars, scratchpad exemplars, and passkey prompts measured in model tokens."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.run.evaluate import evaluate
from harness.run.results import read_samples
from harness.tasks.index import TaskIndex
from harness.testing import ScriptedLM, oracle_model

INDEX = TaskIndex.build()
REFS = {r.address: r for r in INDEX.resolve(["lengthgen"])}


def cfg(tmp_path: Path, task: str, **kw: object) -> RunConfig:
    base: dict[str, object] = dict(model="scripted:x", tasks=[task], seed=0, limit_per_bucket=2,
                                   templates=["all"], output_dir=tmp_path / task.replace("/", "_"))
    base.update(kw)
    return RunConfig.model_validate(base)


def test_suite_has_the_tasks_with_metadata() -> None:
    assert len(REFS) >= 12
    for name in ("addition", "addition_reversed", "addition_scratchpad", "multiplication",
                 "parity", "parity_scratchpad", "copy", "reverse", "sort", "count", "mode",
                 "variable_chain", "passkey"):
        spec = INDEX.spec(REFS[f"lengthgen/{name}"])
        assert spec.description and spec.citations and spec.card is not None
        assert spec.card.axis == "length" and spec.card.locus and spec.card.shift
        assert "lengthgen" in spec.suites


@pytest.mark.parametrize("task", sorted(REFS))
def test_reference_answers_score_one_and_wrong_answers_zero(task: str, tmp_path: Path) -> None:
    spec = INDEX.spec(REFS[task])
    c = cfg(tmp_path, task)
    res = evaluate(c, model=oracle_model(spec, REFS[task], c))
    (t,) = res.tasks
    samples = read_samples(c.output_dir / t.samples_file)
    assert samples and {s.template for s in samples} == {tp.id for tp in spec.templates}
    assert all(s.score == 1.0 for s in samples), [s for s in samples if s.score != 1.0][:1]
    c2 = cfg(tmp_path / "wrong", task)
    res = evaluate(c2, model=ScriptedLM(" zz 99999999 zz"))
    samples = read_samples(c2.output_dir / res.tasks[0].samples_file)
    assert all(s.score == 0.0 for s in samples)


@pytest.mark.parametrize("task", sorted(REFS))
def test_exemplars_come_from_id_buckets_only(task: str) -> None:
    from harness.items import build_instances, select_fewshot
    from harness.spec.buckets import build_buckets

    spec = INDEX.spec(REFS[task])
    inst = build_instances(spec, task, 0, REFS[task].base_dir, 3)
    ids = {b.label for b in build_buckets(spec.buckets, spec.roles) if b.role == "ID"}
    assert ids and any(b.role == "OOD" for b in inst.buckets)
    for item in inst.items:
        for shot in select_fewshot(item, inst.pool, spec.fewshot.k, 0, task):
            assert shot.bucket.label in ids and shot.id.startswith("fs:")


def test_scratchpad_exemplars_show_the_work(tmp_path: Path) -> None:
    c = cfg(tmp_path, "lengthgen/addition_scratchpad", limit_per_bucket=1)
    res = evaluate(c, model=ScriptedLM(""))
    for s in read_samples(c.output_dir / res.tasks[0].samples_file):
        shots = s.prompt.split("\n\n")[:-1]
        assert len(shots) == 3
        for shot in shots:
            a, b = map(int, re.findall(r"Add (\d+) \+ (\d+)", shot)[0])
            assert shot.endswith(f"Answer: {a + b}") and "+0=" in shot
        a, b = map(int, re.findall(r"Add (\d+) \+ (\d+)", s.prompt)[-1])
        assert s.target.endswith(f"Answer: {a + b}") and s.target.count("+0=") >= 1


class CountingLM(ScriptedLM):
    """Tokens are whitespace-separated words; answers repeat the pass key when asked to."""

    def count_tokens(self, text: str) -> int | None:
        return len(text.split())


def test_passkey_prompt_length_in_model_tokens(tmp_path: Path) -> None:
    def answer(prompt: str) -> str:  # finds the key in contexts of at most 256 "tokens"
        key = re.search(r"pass key is (\d+)\.", prompt)
        return f" {key.group(1)}." if key and len(prompt.split()) <= 256 else " 12345."

    c = cfg(tmp_path, "lengthgen/passkey", limit_per_bucket=6)
    res = evaluate(c, model=CountingLM(answer))
    (t,) = res.tasks
    samples = read_samples(c.output_dir / t.samples_file)
    for s in samples:
        n = len(s.prompt.split())
        assert s.difficulty - 10 <= n <= s.difficulty, (s.difficulty, n)  # one sentence short
        assert s.meta["prompt_tokens"] == n
        assert s.meta["depth"] in (0.0, 0.25, 0.5, 0.75, 1.0)
    acc = {b.bucket: b.accuracy for b in t.templates[0].buckets}
    assert acc == {"128": 1.0, "256": 1.0, "512": 0.0, "1024": 0.0}
    (eff,) = t.analyses
    assert eff.name == "effective_length" and eff.value == 256
    assert eff.details["window_multiple"] == 1.0 and eff.details["by_depth"]
