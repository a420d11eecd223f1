"""Output types: one object per ``output.type``, registered once, agreeing with the task-file
schema's union, and what the loader and the chain strategies ask of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError, TaskSpecError
from harness.outputs import OUTPUT_TYPES, Oracle, output_type
from harness.run.plan import plan_task
from harness.spec.task import OutputSpec, type_tags
from harness.strategies import STRATEGIES
from harness.tasks.index import TaskIndex
from harness.tasks.loader import load_spec
from tests.fixtures.fake_model import FakeLM


def test_every_output_type_of_the_schema_has_its_object() -> None:
    """The union is the registration: each member's handler is its OutputType, imported only
    when asked for."""
    members = get_args(get_args(OutputSpec)[0])
    assert list(OUTPUT_TYPES.builtin_names) == type_tags(OutputSpec) == [
        "generate", "multiple_choice"]
    types = [OUTPUT_TYPES.get(name) for name in OUTPUT_TYPES.names()]
    assert [t.spec_model for t in types] == list(members)
    assert [t.name for t in types] == OUTPUT_TYPES.names()
    assert [t.generates for t in types] == [True, False]
    with pytest.raises(HarnessError, match="unknown output type 'choice'"):
        OUTPUT_TYPES.get("choice")


def test_a_union_tag_never_shows_in_an_error_path(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text("name: t\ndescription: d\nsource: {type: files, path: x.jsonl, formt: csv}\n"
                 "buckets: {values: [1]}\nroles: {id_max: 1}\ntemplates: [{id: a, prompt: x}]\n"
                 "output: {type: multiple_choice, choices: [a, b], choice_prefx: ' '}\n")
    with pytest.raises(TaskSpecError) as e:
        load_spec(p)
    assert str(e.value).splitlines() == [
        f"{p}:3: source.formt: unknown key (did you mean 'format'?)",
        f"{p}:7: output.choice_prefx: unknown key (did you mean 'choice_prefix'?)"]


def _mc_task(tmp_path: Path):  # type: ignore[no-untyped-def]
    tdir = tmp_path / "tasks" / "mine"
    tdir.mkdir(parents=True)
    data = tmp_path / "mc.jsonl"
    rows = [{"q": f"q{i}", "c": ["no", "yes", "maybe"], "target": ["yes", 0, 2][i % 3],
             "d": i % 2} for i in range(6)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tdir / "mc.yaml").write_text(
        f"name: mc\ndescription: d\nsource: {{type: files, path: {data}}}\n"
        "fields: {difficulty: d}\nbuckets: {values: [0, 1]}\nroles: {id_max: 0}\n"
        "templates: [{id: a, prompt: '{{ q }}?'}]\n"
        "output: {type: multiple_choice, choices_field: c, choice_prefix: ' '}\n")
    cfg = RunConfig(model="fake:x", tasks=["mine/mc"], output_dir=tmp_path / "run",
                    include_paths=[tmp_path / "tasks"])
    index = TaskIndex.build(cfg.include_paths, providers=[])
    ref = index.resolve(["mine/mc"])[0]
    spec = index.spec(ref)
    plan = plan_task(ref, spec, cfg, FakeLM())
    return spec, ref, plan.inst, list(plan.prepared())


def test_multiple_choice_gives_choices_gold_target_and_its_oracle(tmp_path: Path) -> None:
    spec, ref, inst, prepared = _mc_task(tmp_path)
    out = output_type(spec)
    for p in prepared:
        assert p.choices == ["no", "yes", "maybe"] == out.choices(spec, p.item)
        want = {"yes": 1, 0: 0, 2: 2}[p.item.record["target"]]
        assert p.gold == want == out.gold(spec, p.item) and p.target == p.choices[want]
    assert out.fields_read(spec) == {"output.choices_field": "c", "fields.target": "target"}
    oracle = Oracle()
    for p in prepared:
        out.teach(spec, p, oracle)
    assert not oracle.answers and len(oracle.scores) == 3 * len(prepared)
    model = FakeLM(score=lambda ctx, cont: oracle.scores[(ctx, cont)])
    records = out.score(spec, prepared, model)
    assert [r.score for r in records] == [1.0] * len(prepared)
    assert model.calls == ["loglikelihood"] * len(prepared) * 3


def test_direct_scores_multiple_choice_in_one_call(tmp_path: Path) -> None:
    spec, ref, inst, prepared = _mc_task(tmp_path)
    model = FakeLM(score=lambda ctx, cont: 0.0 if cont == " yes" else -1.0)
    records = STRATEGIES.get("direct")(spec, ref.address, prepared, inst.pool, model)
    assert model.calls == ["loglikelihood"] * 18  # every choice of every item
    assert [r.extracted for r in records] == ["yes"] * 6
    assert [r.score for r in records] == [float(p.gold == 1) for p in prepared] != [1.0] * 6
    assert all(r.calls[0].kind == "loglikelihood" for r in records)


def test_chain_strategies_refuse_an_output_type_that_does_not_generate(tmp_path: Path) -> None:
    spec, ref, inst, prepared = _mc_task(tmp_path)
    with pytest.raises(HarnessError, match=r"^--strategy cot: task mine/mc is multiple choice; "):
        STRATEGIES.get("cot")(spec, ref.address, prepared, inst.pool, FakeLM())
    with pytest.raises(HarnessError, match="answers are not generated text"):
        output_type(spec).answer_request(spec, "x")
