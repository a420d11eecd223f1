"""Answer budgets in the model's own tokens (issue 45, item 3): a bucket's budget fits its longest
target in the tokenizer of the model being run, never below the task's ``max_tokens``; every
answer records its budget and whether it stopped on it; a bucket whose wrong answers the budget
cut is marked in the table, results.json and the gap report; the horizon search raises the
budget of an answer it cut before it reports one; a replayed answer keeps its cut."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.answers.budget import (
    BUDGET_PAD,
    CUT_MATERIAL,
    LOOP_REPEATS,
    LOOP_SPAN,
    answer_budget,
    looped,
    looping,
    lost_to_budget,
    lost_to_context,
)
from harness.cli.main import app
from harness.cli.run_tables import horizon_lines
from harness.config import RunConfig
from harness.lm import ModelIdentity, OnDone
from harness.models import backends
from harness.requests import GenerateRequest, GenerateResponse
from harness.run.evaluate import evaluate
from harness.run.results import Results, read_samples
from harness.scoring.records import SampleRecord
from harness.testing import ScriptedLM

TASK = """\
name: copy_budget
description: Copy letters (answer budgets).
source: {type: generator, name: copy, per_bucket: 50}
fields: {target: target, difficulty: length}
difficulty_name: length
buckets: {values: [2, 5, 8, 12]}
roles: {id_max: 5}
templates:
  - {id: io, prompt: "Copy the letters.\\nInput: {{ text }}\\nOutput:"}
output: {type: generate, max_tokens: 4, stop: ["\\n"]}
scoring: {extract: {kind: first_line}, metric: exact_match}
"""
INPUT = re.compile(r"Input: ([a-z ]+)\nOutput:")


class Worded(ScriptedLM):
    """A scripted model whose tokens are words, with a token counter saying so (and weights
    to hash: replay needs their sha256)."""

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(backend="scripted", name="worded", weights_sha256="c" * 64)

    def count_tokens(self, text: str) -> int | None:
        return len(text.split())


@dataclass(frozen=True)
class _Call:
    cut: bool
    output: str | None


@dataclass(frozen=True)
class _Ans:
    cut: bool
    score: float
    extracted: str
    target: str
    output: str = ""
    context_bound: bool = False
    calls: tuple[_Call, ...] = ()


def _ans(cut: bool, score: float, extracted: str, target: str, output: str = "",
         context_bound: bool = False) -> _Ans:
    return _Ans(cut, score, extracted, target, output or extracted, context_bound)


def _letters(prompt: str) -> str:
    return INPUT.findall(prompt)[-1]


def _tasks(tmp_path: Path, text: str = TASK) -> Path:
    (tmp_path / "tasks" / "mine").mkdir(parents=True, exist_ok=True)
    (tmp_path / "tasks" / "mine" / "copy_budget.yaml").write_text(text)
    return tmp_path / "tasks"


def _run(tmp_path: Path, model: ScriptedLM, name: str, text: str = TASK, **kw: object
         ) -> Results:
    cfg = RunConfig(model="scripted:x", tasks=["mine/copy_budget"], seed=0, limit_per_bucket=20,
                    include_paths=[_tasks(tmp_path, text)], output_dir=tmp_path / name,
                    use_cache=False, **kw)  # type: ignore[arg-type]
    return evaluate(cfg, model=model)


def test_the_rule_keeps_the_task_value_and_never_cuts_below_the_target() -> None:
    assert answer_budget(80, 12, 1.25) == 80  # fits: the task's value stands
    assert answer_budget(4, 12, 1.25) == 15 + BUDGET_PAD  # ceil(1.25 × 12) + pad
    assert answer_budget(4, 12, 1.25, room=10) == 10  # the context leaves 10
    assert answer_budget(16, 12, 1.25, room=10) == 10  # a short context: what fits
    assert answer_budget(16, 12, 1.25, room=-3) == 1
    assert answer_budget(4, 0) == 4


def test_each_bucket_fits_its_longest_target_in_the_models_tokens(tmp_path: Path) -> None:
    res = _run(tmp_path, Worded(_letters), "words")
    recs = read_samples(tmp_path / "words" / res.tasks[0].samples_file)
    per = {r.bucket: {c.max_tokens for c in r.calls} for r in recs}
    want = {str(n): {answer_budget(4, n, 1.25)} for n in (2, 5, 8, 12)}
    assert per == want and per["12"] == {16} and per["2"] == {4}
    assert all(r.score == 1.0 and not r.cut for r in recs)  # every answer fits, none cut
    assert all(b.cut is None and not b.budget_bound for b in res.tasks[0].templates[0].buckets)
    # a model whose tokenizer is unknown: targets count one token per byte (room, never less)
    res = _run(tmp_path, ScriptedLM(_letters), "bytes")
    recs = read_samples(tmp_path / "bytes" / res.tasks[0].samples_file)
    twelve = {c.max_tokens for r in recs if r.bucket == "12" for c in r.calls}
    assert twelve == {answer_budget(4, len(" ".join("x" * 12)), 1.25)}


def _verbose(extra: int):  # type: ignore[no-untyped-def]
    """Writes ``extra`` words of preamble on one line before the letters: right only when the
    budget leaves room for all of it."""

    def answer(prompt: str) -> str:
        return " " + " ".join(["um"] * extra + [_letters(prompt)])

    return answer


def test_a_wrong_answer_cut_by_the_budget_marks_its_bucket(tmp_path: Path) -> None:
    """A model whose answers run to twice the target's tokens: past 2 letters the budget
    cuts them inside the letters (lost: the start of the right answer), and the bucket, the
    gap report and results.json say so."""
    res = _run(tmp_path, Wordy(None), "wordy")
    (tr,) = res.tasks[0].templates
    recs = read_samples(tmp_path / "wordy" / res.tasks[0].samples_file)
    by = {b.bucket: b for b in tr.buckets}
    for label, n in (("2", 2), ("5", 5), ("8", 8), ("12", 12)):
        cut = [r for r in recs if r.bucket == label and r.cut]
        fits = 2 * n - 1 <= answer_budget(4, n, 1.25)
        assert (len(cut) == 0) == fits, label
        assert all(r.score == 0.0 and r.target.startswith(r.extracted) for r in cut)
        assert by[label].cut == (None if fits else 1.0)
        assert by[label].budget_bound == (not fits and CUT_MATERIAL <= 1.0)
    assert by["2"].cut is None and by["12"].budget_bound
    assert tr.gaps.budget_bound == [b for b in ("2", "5", "8", "12") if by[b].budget_bound]
    data = json.loads((tmp_path / "wordy" / "results.json").read_text())
    row = data["tasks"][0]["templates"][0]["buckets"][3]
    assert row["cut"] == 1.0 and row["budget_bound"] is True
    assert data["tasks"][0]["templates"][0]["gaps"]["budget_bound"] == tr.gaps.budget_bound
    assert all(c["cut"] for r in recs for c in r.model_dump()["calls"] if r.cut)


def test_a_wrong_answer_the_model_gave_is_not_the_budgets(tmp_path: Path) -> None:
    """Ten words of preamble, then the letters: cut or not, the answer on its line is wrong
    from its first word; the buckets report the cut share and are not budget-bound."""
    res = _run(tmp_path, Worded(_verbose(10)), "verbose")
    (tr,) = res.tasks[0].templates
    assert {b.bucket: b.cut for b in tr.buckets} == {"2": 1.0, "5": 1.0, "8": 1.0, "12": 1.0}
    assert not any(b.budget_bound for b in tr.buckets) and not tr.gaps.budget_bound
    assert not lost_to_budget(_ans(True, 0.0, "um um um", "a b"))
    assert lost_to_budget(_ans(True, 0.0, "a b", "a b c"))
    assert lost_to_budget(_ans(True, 0.0, " ", "a"))
    assert not lost_to_budget(_ans(False, 0.0, "", "a"))
    assert not lost_to_budget(_ans(True, 1.0, "a", "a"))


def test_the_table_names_budget_bound_buckets(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(backends.BACKENDS.items, "t45wordy", lambda name, args, bs: Wordy(None))
    out = CliRunner(env={"COLUMNS": "200"}).invoke(app, [
        "eval", "--model", "t45wordy:x", "--tasks", "mine/copy_budget", "--include-path",
        str(_tasks(tmp_path)), "--limit-per-bucket", "20", "--seed", "0", "--no-cache",
        "--output-dir", str(tmp_path / "cli")])
    assert out.exit_code == 0, out.output
    assert "cut 100%, budget-bound" in out.output
    assert "budget-bound: the answer budget cut wrong answers in bucket(s)" in out.output


def test_a_replayed_answer_keeps_its_cut(tmp_path: Path) -> None:
    first = _run(tmp_path, Worded(_verbose(10)), "a")
    again = Worded("never asked")
    second = _run(tmp_path, again, "b", replay=[tmp_path / "a"])
    assert not again.prompts
    assert second.tasks[0].templates == first.tasks[0].templates


class Wordy(Worded):
    """A model whose answers take two tokens a letter (its tokens are characters when it
    writes) while its counter counts words: its answers outgrow the budget its targets give
    past 40 letters; a context of ``context`` tokens, where given."""

    def __init__(self, context: int | None, pad: int = 0) -> None:
        super().__init__(_letters)
        self._context, self._pad = context, pad  # pad: spaces a letter written before it

    def context_length(self) -> int | None:
        return self._context

    def generate(self, requests: Sequence[GenerateRequest],
                 on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
        out = []
        for r in requests:
            letters = _letters(r.prompt)
            text = " " * (self._pad * len(letters.split())) + letters
            out.append(GenerateResponse(text[:r.max_tokens], min(len(text), r.max_tokens)))
        return out


def _search(tmp_path: Path, model: ScriptedLM, name: str) -> Results:
    cfg = RunConfig(model="scripted:x", tasks=["lengthgen/copy"], seed=0, limit_per_bucket=5,
                    horizon=True, horizon_items=40, output_dir=tmp_path / name,
                    use_cache=False)
    return evaluate(cfg, model=model)


def test_the_search_raises_the_budget_of_an_answer_it_cut(tmp_path: Path) -> None:
    """An answer cut by the budget is asked again with twice the room, and then right: the
    search sees the model it is (a perfect copier up to the range's end)."""
    res = _search(tmp_path, Wordy(None), "open")
    (h,) = res.tasks[0].horizons
    assert h.lost == 0.0 and h.status == "above" and h.range_end == "cap"
    recs = read_samples(tmp_path / "open" / h.samples_file)
    assert recs and all(r.score == 1.0 and not r.cut for r in recs)
    long = [r for r in recs if 2 * r.difficulty - 1 > 80]
    first = {r.id: answer_budget(80, int(r.difficulty), 1.25) for r in recs}  # words
    assert long and all(c.max_tokens == 2 * first[r.id] for r in long for c in r.calls)
    assert all(c.max_tokens == first[r.id] for r in recs if r not in long for c in r.calls)
    # answers that outgrow what the context leaves stay cut and wrong, lost to the model's
    # context (its own limit: no budget could give them room), not to the budget
    res = _search(tmp_path, Wordy(300, pad=2), "padded")
    (h,) = res.tasks[0].horizons
    recs = read_samples(tmp_path / "padded" / h.samples_file)
    assert h.context_lost >= CUT_MATERIAL and h.lost == 0.0
    assert h.context_lost == sum(r.cut for r in recs) / len(recs)
    assert all(r.context_bound for r in recs if r.cut)
    assert all(len(r.calls) == 1 and r.calls[0].max_tokens <= 300 for r in recs)
    lines = "\n".join(horizon_lines(res.tasks[0]))
    assert "context-bound" in lines and "budget-bound" not in lines
    # a context that ends the range: the search says so, not the budget; no budget reaches
    # past what its own prompt (exemplars included) leaves of the context, so the answers of
    # this model (two tokens a letter) that the context cannot hold are cut and counted lost
    model = Wordy(100)
    asked: list[tuple[str, int]] = []
    answer = model.generate
    model.generate = lambda reqs, on_done=None: (  # type: ignore[method-assign]
        asked.extend((r.prompt, r.max_tokens) for r in reqs) or answer(reqs, on_done))
    res = _search(tmp_path, model, "walled")
    (h,) = res.tasks[0].horizons
    recs = read_samples(tmp_path / "walled" / h.samples_file)
    assert h.range_end == "context" and h.lost == 0.0
    assert h.context_lost == sum(r.cut for r in recs) / len(recs) > 0
    fit = [(len(p.split()), n) for p, n in asked if len(p.split()) + 2 <= 100]
    assert fit and all(used + n + 1 <= 100 for used, n in fit)  # (a fixed item's prompt can
    # fill the context alone: its budget is then 1)


def first_of(r: SampleRecord) -> int:
    """The budget a copy search item is first asked with (its target's words)."""
    return answer_budget(80, int(r.difficulty), 1.25)


def test_the_statistics_page_quotes_the_rule_the_code_applies() -> None:
    from harness.run.execute import RAISES

    page = (Path(__file__).parents[2] / "docs" / "statistics.md").read_text(encoding="utf-8")
    words = {1: "once", 2: "twice", 3: "three times", 4: "four times"}
    section = page[page.index("## Answer budgets"):page.index("## Precision-targeted")]
    assert f"reach\n{100 * CUT_MATERIAL:g}% of the bucket" in section
    assert f"from {100 * CUT_MATERIAL:g}% on" in section
    assert f"at\nmost {words[RAISES]}" in section
    assert BUDGET_PAD == 1 and "plus one token for the stop string" in section
    flat = " ".join(section.split())
    assert (f"repeat one block at least {words[LOOP_REPEATS]} over at least {LOOP_SPAN} "
            "characters") in flat


def test_the_run_can_cap_every_budget(tmp_path: Path) -> None:
    """``--max-answer-tokens``: a quick look on a slow machine; what the cap cuts shows."""
    res = _run(tmp_path, Worded(_letters), "capped", max_answer_tokens=6)
    recs = read_samples(tmp_path / "capped" / res.tasks[0].samples_file)
    assert {c.max_tokens for r in recs for c in r.calls} == {4, 6}  # 2 letters keep the task's
    by = {b.bucket: b for b in res.tasks[0].templates[0].buckets}
    assert by["5"].cut is None and by["8"].budget_bound and by["12"].budget_bound
    data = json.loads((tmp_path / "capped" / "results.json").read_text())
    assert data["run"]["max_answer_tokens"] == 6


def test_an_answer_cut_where_the_context_ended_is_the_models_not_the_budgets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A context of 26 tokens: the 12-letter bucket's prompts (17 words) leave 8 of the 16
    tokens its targets ask for, so its answers run out of the model's context: that bucket is
    context-bound, not budget-bound, and the gaps do not say they rest on the budget there; the
    5- and 8-letter buckets' answers (9 and 15 characters) are still their budgets'."""
    res = _run(tmp_path, Wordy(26), "walled")
    (tr,) = res.tasks[0].templates
    by = {b.bucket: b for b in tr.buckets}
    recs = read_samples(tmp_path / "walled" / res.tasks[0].samples_file)
    twelve = [r for r in recs if r.bucket == "12"]
    assert twelve and all(r.context_bound and r.cut and r.calls[0].max_tokens == 8
                          for r in twelve)
    assert not any(r.context_bound for r in recs if r.bucket != "12")
    assert by["12"].context_bound and not by["12"].budget_bound and by["12"].cut == 1.0
    assert by["8"].budget_bound and not by["8"].context_bound
    assert tr.gaps.budget_bound == ["5", "8"]  # 9 and 15 characters: budgets 8 and 11
    data = json.loads((tmp_path / "walled" / "results.json").read_text())
    row = data["tasks"][0]["templates"][0]["buckets"][3]
    assert row["context_bound"] is True and "budget_bound" not in row
    monkeypatch.setitem(backends.BACKENDS.items, "t45walled", lambda name, args, bs: Wordy(26))
    out = CliRunner(env={"COLUMNS": "200"}).invoke(app, [
        "eval", "--model", "t45walled:x", "--tasks", "mine/copy_budget", "--include-path",
        str(_tasks(tmp_path)), "--limit-per-bucket", "20", "--seed", "0", "--no-cache",
        "--output-dir", str(tmp_path / "cli")])
    assert out.exit_code == 0, out.output
    assert "cut 100%, context-bound" in out.output and "cut 100%, budget-bound" in out.output


def test_an_answer_cut_inside_a_loop_is_the_models() -> None:
    """A cut answer that ends repeating one block is not lost to the budget (more room, more
    loop); a cut answer that goes on without repeating, or the right answer's start, is."""
    loop = "Solution: we add. " + "The principle of counting is used here.\n" * 5
    assert looping(loop) and looping("x" * 64) and looping("ab" * 40 + "a")
    assert not looping("x" * 63) and not looping("ab" * 20)  # under LOOP_SPAN characters
    assert not looping("a" + " " * 100) and not looping("-" * 80)  # layout: a rule, blanks
    assert not looping("| --- " * 20) and looping(("foo bar baz qux " * 2 + "\n" * 70) * 3)
    count = ", ".join(str(i) for i in range(1, 200))
    steps = " ".join(f"Step {i}: add {i} to the total." for i in range(1, 60))
    assert not looping(count) and not looping(steps)
    assert not looping("The principle of counting is used here.\n" * 2)  # twice is no loop
    assert looped(_ans(True, 0.0, "", "7", loop)) and not looped(_ans(False, 0.0, "", "7", loop))
    assert not lost_to_budget(_ans(True, 0.0, "", "7", loop))
    assert lost_to_budget(_ans(True, 0.0, "", "7", steps))
    # the start of a right answer that repeats itself is still the budget's
    letters = " ".join("a" * 40)
    assert looping(letters) and lost_to_budget(_ans(True, 0.0, letters, letters + " a b", letters))
    # a chain: the reasoning call cut in a loop, the answer call not cut: the model's
    chain = _Ans(True, 0.0, "", "7", "no idea", calls=(_Call(True, loop), _Call(False, "no")))
    assert looped(chain) and not lost_to_budget(chain)
    # ... but a cut call that does not loop beside one that does is the budget's
    mixed = _Ans(True, 0.0, "", "7", loop, calls=(_Call(True, steps), _Call(True, loop)))
    assert not looped(mixed) and lost_to_budget(mixed)
    assert lost_to_context(_ans(True, 0.0, "", "7", steps, context_bound=True))
    assert not lost_to_budget(_ans(True, 0.0, "", "7", steps, context_bound=True))


def test_a_bucket_reports_the_answers_cut_in_a_loop(tmp_path: Path) -> None:
    """Answers read as boxed values (none found in these): a model that repeats one word until
    its budget ends is cut in every bucket, the share cut in a loop is reported, and no bucket
    is budget-bound; the same model writing distinct steps instead (no loop) makes every
    bucket budget-bound."""
    boxed = TASK.replace("kind: first_line", "kind: boxed")
    res = _run(tmp_path, Worded(lambda p: " hmmmmmmmmmmmmmmmmmmmmmm" * 50), "loop", boxed)
    (tr,) = res.tasks[0].templates
    assert all(b.cut == 1.0 and b.looped == 1.0 and not b.budget_bound for b in tr.buckets)
    assert not tr.gaps.budget_bound
    data = json.loads((tmp_path / "loop" / "results.json").read_text())
    assert data["tasks"][0]["templates"][0]["buckets"][0]["looped"] == 1.0
    steps = " ".join(f"step{i}-of-the-working" for i in range(50))
    res = _run(tmp_path, Worded(lambda p: steps), "steps", boxed)
    (tr,) = res.tasks[0].templates
    assert all(b.cut == 1.0 and not b.looped and b.budget_bound for b in tr.buckets)
