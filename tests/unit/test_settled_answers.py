"""An answer ends where it is settled: MATH's answer is the first closed ``\\boxed{}``, a
generation stops (``llamacpp:``) or is cut (every backend) there, replay cuts a held answer at the
same point, and none of it changes a score: a completion model that writes on past its
solution (a second attempt, a "Human:" turn) is scored on the answer it gave, not on a box it
wrote after."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.answers.extract import answer_end, extract, first_box_end, last_boxed
from harness.models.answer_bounds import BoundedLM
from harness.requests import UNKNOWN_TOKENS, GenerateRequest, GenerateResponse
from harness.spec.scoring import ExtractSpec
from harness.testing import ScriptedLM

FIRST = ExtractSpec(kind="first_boxed")
# Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, llamacpp:) on easy2hard/math500 as offline-small held it
# before answers ended at their first box (its run of commit b29f66369be4, generated to the
# budget): the 34 answers that went on past their first box, with their targets
WROTE_ON = Path(__file__).resolve().parents[1] / "data" / "qwen_math500_wrote_on.jsonl.gz"


def _wrote_on() -> list[dict[str, str]]:
    with gzip.open(WROTE_ON, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.mark.parametrize(("text", "answer", "kept"), [
    ("so $x = \\boxed{3}$. To solve the problem again: $\\boxed{900}$", "3", "so $x = \\boxed{3}"),
    ("= \\boxed{\\sqrt{117}}$.Human: A sequence ... \\boxed{4.5855}", "\\sqrt{117}",
     "= \\boxed{\\sqrt{117}}"),
    ("\\boxed{x+\\boxed{3}", "3", None),  # the first box is open: a nested one cannot settle
    ("\\boxed{x+\\boxed{3}} then", "x+\\boxed{3}", "\\boxed{x+\\boxed{3}}"),
    ("the answer is \\boxed 5", "5", None),  # a bare box ending the text may still grow
    ("the answer is \\boxed 5$.", "5", "the answer is \\boxed 5"),
    ("no box at all", "", None),
])
def test_the_first_closed_box_is_the_answer_and_where_it_settles(text: str, answer: str,
                                                                 kept: str | None) -> None:
    assert extract(text, FIRST) == answer
    end = answer_end(text, "first_boxed")
    assert (None if end is None else text[:end]) == kept
    assert answer_end(text, "boxed") is None  # the last box is never settled
    assert answer_end(text, "") is None


def test_an_answer_settled_in_a_prefix_is_the_answer_of_every_longer_text() -> None:
    """What lets a generation stop at the settled point: for every prefix of Qwen's MATH500
    answers that went on past their box (and constructed ones), once it settles, each longer
    prefix settles at the same point and reads the same answer as the prefix cut there."""
    texts = [s["output"] for s in _wrote_on()]
    texts += ["\\boxed{a+\\boxed{b}} \\boxed{c}", "x \\boxed 12$ \\boxed{3}"]
    assert len(texts) > 10
    settled_early = 0
    for text in texts:
        first = None
        for n in range(1, len(text) + 1, 3):
            end = first_box_end(text[:n])
            if end is None:
                assert first is None, text[:n]  # a settled answer never becomes unsettled
                continue
            first = end if first is None else first
            assert end == first
            assert extract(text[:n][:end], FIRST) == extract(text, FIRST)
        settled_early += first is not None and first < len(text) - 20
    assert settled_early > 10  # Qwen did go on past its first box


def test_qwen_is_scored_on_the_answer_it_gave_not_on_a_box_after_it() -> None:
    """Read by the last box, answers Qwen wrote on past its solution lose right answers: the
    first box finds more of them, and never loses one the last box found in a text that
    settled."""
    from harness.answers.metrics import math_equiv_metric

    found = lost = 0
    for s in _wrote_on():
        gold = last_boxed(s["target"])
        first = math_equiv_metric(extract(s["output"], FIRST), gold)
        last = math_equiv_metric(last_boxed(s["output"]), gold)
        found += first > last
        lost += last > first
    assert found >= 3 and lost <= 1, (found, lost)


def test_every_backends_answer_is_cut_where_it_settled_and_not_cut_by_its_budget() -> None:
    """``BoundedLM``: a backend that wrote on to its budget (a server) gives the text a backend
    that stopped at the settled point gives, and the answer does not read as cut."""
    wrote_on = ("so x = \\boxed{3}. Human: next one " + "word " * 40).strip()
    lm = BoundedLM(ScriptedLM(wrote_on))
    settled, plain, short = lm.generate([
        GenerateRequest("p", 12, (), until="first_boxed"),
        GenerateRequest("p", 12, ()),
        GenerateRequest("p", 100, (), until="first_boxed"),
    ])
    assert settled == GenerateResponse("so x = \\boxed{3}", UNKNOWN_TOKENS)
    assert plain.n_tokens == 12 and plain.text.startswith(settled.text + ". Human")
    assert short.text == settled.text and 0 < short.n_tokens < 100  # its own count, kept
    unsettled = BoundedLM(ScriptedLM("x = \\boxed{3")).generate(
        [GenerateRequest("p", 3, (), until="first_boxed")])
    assert unsettled == [GenerateResponse("x = \\boxed{3", 3)]  # cut inside its box: cut


def test_a_math_request_asks_until_its_answer_is_settled() -> None:
    from harness.outputs.generate import GENERATE
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([])
    for ref in index.resolve(["easy2hard/math", "easy2hard/math500", "easy2hard/math_sgr"]):
        spec = index.spec(ref)
        assert GENERATE.answer_request(spec, "Problem: 1+1\nSolution:").until == "first_boxed"
    [copy] = index.resolve(["lengthgen/copy"])
    assert GENERATE.answer_request(index.spec(copy), "abc").until == ""


@pytest.mark.parametrize("counts", [True, False])
def test_replay_cuts_a_held_answer_where_it_settled(counts: bool) -> None:
    """A held answer its budget cut, but settled before, replays cut at the settled point and
    not cut; one asked with a larger budget replays only where the token counter says its
    settled text fits the request's."""
    from harness.run.replay import Held, ReplayLM, ReplayTable
    from tests.unit.test_replay import Counted

    boxed = "x = \\boxed{3}. Human: " + "more " * 30
    table = ReplayTable()
    table.generate[("p", ())] = [Held(40, boxed, True)]  # cut by its budget after the box
    table.generate[("q", ())] = [Held(400, boxed, True)]
    table.generate[("r", ())] = [Held(40, "x = \\boxed{3" + " more" * 40, True)]
    inner = Counted(counts)
    lm = ReplayLM(inner, table)

    def ask(prompt: str, budget: int, until: str = "first_boxed") -> GenerateResponse:
        [res] = lm.generate([GenerateRequest(prompt, budget, (), until=until)])
        return res

    assert ask("p", 40) == ask("p", 80) == GenerateResponse("x = \\boxed{3}", UNKNOWN_TOKENS)
    assert ask("p", 40, until="") == GenerateResponse(boxed, 40)  # no until: as held, cut
    assert inner.asked == 0
    assert (ask("q", 40).text == "x = \\boxed{3}") == counts  # settled in 3 of 40 "tokens"
    assert ask("r", 80).text == "never asked"  # cut inside its box: the model is asked
    assert ask("r", 40).n_tokens == 40  # under its own budget: replayed as cut


def test_an_answer_cut_where_it_settled_replays_only_where_it_ends_there() -> None:
    """A run scored by the first box holds its answers cut there: a request scored by the last
    box (no ``until``) must not get that text back as if the model had stopped there."""
    from harness.run.replay import Held, ReplayLM, ReplayTable
    from tests.unit.test_replay import Counted

    table = ReplayTable()
    table.generate[("p", ("Problem:",))] = [Held(256, "x = \\boxed{3}", False, "first_boxed")]
    inner = Counted(True)
    lm = ReplayLM(inner, table)
    [whole] = lm.generate([GenerateRequest("p", 512, ("Problem:",))])
    [first] = lm.generate([GenerateRequest("p", 512, ("Problem:",), until="first_boxed")])
    assert whole.text == "never asked" and inner.asked == 1
    assert first == GenerateResponse("x = \\boxed{3}", UNKNOWN_TOKENS)


def test_a_run_scored_another_way_still_replays(tmp_path: Path) -> None:
    """``answers_hash``: how a task is described, how its answers are scored and its budget do
    not change them, so a source run of a spec that differs only there replays; a changed stop
    string does not."""
    from harness.run.replay import answers_hash
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([])
    [ref] = index.resolve(["easy2hard/math"])
    spec = index.spec(ref)
    other = spec.model_copy(update={
        "description": "reworded", "citations": [],
        "scoring": spec.scoring.model_copy(update={"extract": ExtractSpec(kind="boxed")}),
        "output": spec.output.model_copy(update={"max_tokens": 128})})
    assert answers_hash(other) == answers_hash(spec)
    stops = spec.output.model_copy(update={"stop": ["Problem:", "Human:"]})
    assert answers_hash(spec.model_copy(update={"output": stops})) != answers_hash(spec)


def test_a_reference_solution_is_read_by_its_last_box(shared_data: Path) -> None:
    """A model's answer is its first box, but a reference solution states its answer last:
    MATH's test solutions that box another answer first keep their final one as the baseline's
    candidate, the answer the metric compares."""
    from harness.answers.extract import extract_reference
    from harness.answers.metrics import math_equiv_metric
    from harness.scoring.baselines import candidate_answer

    solutions = [json.loads(line)["solution"] for line in
                 (shared_data / "math" / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    early = [s for s in solutions if not math_equiv_metric(extract(s, FIRST), last_boxed(s))]
    assert early  # the data does box other answers first
    for s in solutions:
        assert extract_reference(s, FIRST) == candidate_answer(s, FIRST) == last_boxed(s)
