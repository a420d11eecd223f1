"""Prompting strategies on scripted models: every call is chained and logged, and a model that
answers each step correctly gets the item right (so the chain really carries the answers)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.generators.scan import interpret, render_actions, subcommands
from harness.items import Instance
from harness.lm import LM
from harness.run.evaluate import evaluate
from harness.run.results import read_samples
from harness.scoring.prepared import Prepared
from harness.scoring.records import SampleRecord
from harness.spec.task import TaskSpec
from harness.strategies import STRATEGIES, check_strategy
from harness.strategies.base import Chain, StrategyInput, chained
from harness.strategies.direct import direct
from tests.fixtures.fake_model import FakeLM


def run(tmp_path: Path, task: str, strategy: str, model: FakeLM, **kw: object):  # type: ignore[no-untyped-def]
    cfg = RunConfig.model_validate(dict(model="fake:x", tasks=[task], seed=0, limit_per_bucket=2,
                                        output_dir=tmp_path / strategy, strategy=strategy, **kw))
    res = evaluate(cfg, model=model)
    return res, read_samples(cfg.output_dir / res.tasks[0].samples_file)


def scan_oracle(prompt: str) -> str:
    """Decomposes with the grammar and translates the last IN: line."""
    if prompt.endswith("Subproblems:"):
        problem = prompt.rsplit("Problem: ", 1)[1].split("\n")[0]
        return " " + " ; ".join(subcommands(problem)) + "\n"
    command = re.findall(r"IN: (.*)\nOUT:$", prompt)[0]
    return " " + render_actions(interpret(command), "words") + "\nIN: x"


def test_least_to_most_chains_decompose_solve_answer(tmp_path: Path) -> None:
    res, samples = run(tmp_path, "compgen/scan_length", "least_to_most", FakeLM(scan_oracle))
    assert res.run.strategy == "least_to_most"
    for s in samples:
        subs = subcommands(s.meta["command"])
        assert len(s.calls) == 1 + len(subs) + 1  # decompose, each subproblem, the question
        assert s.calls[0].prompt.endswith(f"Problem: {s.meta['command']}\nSubproblems:")
        for call, sub in zip(s.calls[1:-1], subs, strict=True):
            assert call.prompt.endswith(f"IN: {sub}\nOUT:")
        final = s.calls[-1].prompt
        assert final.endswith(f"IN: {s.meta['command']}\nOUT:")
        assert all(f"IN: {sub}\nOUT: " in final for sub in subs)  # solved subproblems in context
        assert s.prompt.endswith(f"IN: {s.meta['command']}\nOUT:") and s.score == 1.0


def test_self_ask_logs_every_call(tmp_path: Path) -> None:
    def model(prompt: str) -> str:
        if prompt.endswith("Follow up:"):
            return " Where?\n"
        if prompt.endswith("Answer:") and "Are follow up" not in prompt:
            return " Lumbra\n"
        if prompt.endswith("So the final answer is:"):
            return " Ostavia\n"
        return "So the final answer is: Ostavia\n"  # the continuation after an intermediate answer

    res, samples = run(tmp_path, "compgen/kb_two_hop", "self_ask", FakeLM(model),
                       templates=["two_hop"])
    for s in samples:
        kinds = [c.prompt.rsplit("\n", 1)[-1] for c in s.calls]
        assert kinds == ["Follow up:", "Answer:", ""]  # follow-up, its answer, the continuation
        assert s.calls[0].prompt.count("Are follow up questions needed here: Yes.") == 2
        assert s.calls[1].prompt.endswith("\nQuestion: Where?\nAnswer:")
        assert s.calls[1].prompt.split("\n")[0] in s.prompt  # the item's facts come first
        assert "Intermediate answer: Lumbra" in s.calls[2].prompt
        assert s.output == " Ostavia" and s.extracted == "Ostavia"


def test_cot_two_calls(tmp_path: Path) -> None:
    model = FakeLM(lambda p: " because.\n\nx" if p.endswith("step by step.") else " 7\n")
    _, samples = run(tmp_path, "lengthgen/addition", "cot", model)
    for s in samples:
        assert len(s.calls) == 2
        assert s.calls[0].prompt == s.prompt + " Let's think step by step."
        assert s.calls[1].prompt == s.calls[0].prompt + " because." + "\nTherefore, the answer is"
        assert s.output == " 7"


def test_direct_is_the_registered_strategy_the_runner_calls(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner goes through the registry for ``direct`` too: every chunk reaches
    ``strategies.direct.direct``, which makes one call per item, and its records are exactly those
    of a one-call chain strategy (so ``direct`` is a strategy like the others)."""
    chunks: list[int] = []

    def spy(spec: TaskSpec, task: str, prepared: Sequence[Prepared], pool: Sequence[Instance],
            model: LM) -> list[SampleRecord]:
        chunks.append(len(prepared))
        return direct(spec, task, prepared, pool, model)

    def once(inp: StrategyInput) -> Chain:
        answer = yield inp.answer_request(inp.prepared.prompt)
        return answer

    STRATEGIES.load_builtins()  # registered before the spy replaces one
    monkeypatch.setitem(STRATEGIES.items, "direct", spy)
    monkeypatch.setitem(STRATEGIES.items, "once", chained("once", once))
    model = FakeLM(lambda p: " 3\n")
    _, plain = run(tmp_path / "a", "lengthgen/addition", "direct", model, chunk_size=5)
    assert len(chunks) > 1 and sum(chunks) == len(plain) == len(model.calls)
    assert all(len(s.calls) == 1 and s.calls[0].prompt == s.prompt for s in plain)
    _, chain = run(tmp_path / "b", "lengthgen/addition", "once", model)
    assert chain == plain


def test_unknown_strategy_and_bad_params(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="did you mean: self_ask") as e:
        check_strategy("self-ask")
    assert str(e.value).startswith("--strategy: unknown strategy 'self-ask'")
    assert "known strategies: cot, direct, least_to_most, self_ask" in str(e.value)
    assert "\n" not in str(e.value)
    tdir = tmp_path / "tasks" / "mine"
    tdir.mkdir(parents=True)
    (tdir / "t.yaml").write_text(
        "name: t\ndescription: d\nsource: {type: generator, name: addition, per_bucket: 2}\n"
        "fields: {difficulty: digits}\nbuckets: {values: [1, 2]}\nroles: {id_max: 1}\n"
        "templates: [{id: a, prompt: '{{ a }}+{{ b }}='}]\noutput: {type: generate}\n"
        "strategies: {cot: {trigger_typo: x}}\n")
    cfg = RunConfig(model="fake:x", tasks=["mine/t"], limit_per_bucket=2, strategy="cot",
                    output_dir=tmp_path / "cot", include_paths=[tmp_path / "tasks"])
    res = evaluate(cfg, model=FakeLM(lambda p: "1"))  # the task fails alone, named in results
    assert not res.tasks and [f.task for f in res.failed] == ["mine/t"]
    assert "strategies.cot: unknown key" in res.failed[0].error
