"""Answers a finished run already holds: ``harness eval --replay RUN_DIR``.

A published run keeps every prompt its model saw and what the model answered (the samples
files: the generated text, or each choice's log-likelihood). A new run of the same model that
asks some of the same questions again (the same board with one condition more, such as the
matched-exemplar control) can take those answers from the old run and send only the new
questions to the model, where no response cache holds them (another machine, a fresh clone).

What is replayed, and only then:

- the source run's model is the same model: backend, weights sha256, dtype, revision and the
  backend arguments that change answers (``models.cache.OPERATIONAL_ARGS`` aside) all agree;
- the task's spec is the same, less what cannot change an answer (``answers_hash``: its
  description, how answers are scored, and the answer budget, matched answer by answer
  below), and the source ran the ``direct`` strategy (one call per sample, whose request the
  spec fixes: ``stop`` for generation, the choice prefix for multiple choice);
- a generated answer is replayed for the same prompt and stop strings under the budget it was
  asked with, or under a larger one where it ended before its budget: greedy decoding writes
  the same tokens whatever room is left, so an answer that stopped by itself is the answer a
  larger budget gets (the budgets of ``answers/budget`` grow with the model's tokenizer, and a
  run with another ``--max-answer-tokens`` replays what fitted). An answer the budget cut is
  only replayed under that budget, and replayed as cut. A source run older than recorded
  budgets names neither budget nor cut: its budget is the spec's ``max_tokens``, and the model's
  token counter judges the cut (``slack``; without a counter such an answer replays only under
  that budget, as not cut, as before). A request whose answer is settled at a point of its
  text (``GenerateRequest.until``: MATH's first closed ``\\boxed{}``) takes a held answer that
  settles, cut there as every backend's is (``models/answer_bounds``), and not cut, where it
  settled inside the request's budget: asked with no larger one, or counted in its tokens. An
  answer its source cut where it settled replays only for requests that end at the same point
  (a task scored by the last box must not get the text cut at the first);
- the samples file matches its recorded sha256 (a changed file is refused, as rescoring does).

A replayed answer keeps the text or log-likelihood the model gave; the token counts the samples
files do not record are ``UNKNOWN_TOKENS``. Replayed answers do not enter the response cache (they
were not produced here), and results.json counts them and names each source by the sha256 of
its results.json (``results.ReplayReport``), never by its folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from harness.answers.extract import answer_end, get_extractor
from harness.errors import HarnessError
from harness.lm import LM, ModelIdentity, OnDone, WrapperLM
from harness.models.cache import OPERATIONAL_ARGS
from harness.requests import (
    UNKNOWN_TOKENS,
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.run.rescore import task_records
from harness.run.results import spec_hash
from harness.spec.task import GenerateOutput, MultipleChoiceOutput, TaskSpec

SLACK = 16  # an answer of a run that recorded no budget, counted again in the model's tokens,
# within a SLACK-th of its budget (at least a token) of it may have stopped on it: taken as cut


def slack(budget: int) -> int:
    """How near its budget a recounted answer is taken as cut (see ``SLACK``): a token of a
    short budget, 8 of 128 (a recount may merge or drop a few tokens the model wrote)."""
    return max(1, budget // SLACK)


Req = TypeVar("Req")
Res = TypeVar("Res")


def _same_model(a: dict[str, Any], b: ModelIdentity) -> bool:
    """Whether a source run's recorded model answers as ``b`` does (see module). Revisions are
    compared as model revisions: the engine version older ``llamacpp:`` runs recorded as their
    revision names no model, on either side (``llamacpp.backend.model_revision``); the engine
    versions are compared instead (``recorded_engine``)."""
    from harness.models.llamacpp.backend import model_revision, recorded_engine

    def args(x: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in sorted(x.items()) if k not in OPERATIONAL_ARGS}

    if a.get("weights_sha256") is None or b.weights_sha256 is None:
        return False  # without the weights' hash two models cannot be told apart
    return (a.get("backend") == b.backend and a.get("weights_sha256") == b.weights_sha256
            and a.get("dtype") == b.dtype
            and model_revision(a.get("revision")) == model_revision(b.revision)
            and recorded_engine(a) == recorded_engine(b.model_dump())
            and args(a.get("args") or {}) == args(b.args))


class Held(NamedTuple):
    """A generated answer a source run holds."""

    budget: int  # the answer budget it was asked with
    text: str  # what the model wrote
    cut: bool | None  # whether it stopped on that budget (None: the run recorded no budget)
    until: str = ""  # the source's answer end (GenerateRequest.until): its text stops there


# what a spec says that cannot change an answer: its words about the task, how answers are read
# and scored and what is computed from the scores (a held answer is matched to its request's
# answer end, ``Held.until``)
NOT_ASKED = ("suites", "description", "citations", "card", "scoring", "gaps", "analyses")


def answers_hash(spec: TaskSpec) -> str:
    """``spec_hash`` of what in a resolved spec can change the answers to its requests: all of
    it but ``NOT_ASKED`` and the generation budget (``max_tokens``, ``budget_margin``: each
    held answer is matched to its request's budget)."""
    return spec_hash(spec, NOT_ASKED, ("max_tokens", "budget_margin"))


def _spec(task: dict[str, Any]) -> TaskSpec | None:
    """A source task's resolved spec; None where this version no longer reads it."""
    try:
        return TaskSpec.model_validate(task.get("spec"))
    except ValueError:
        return None


class ReplayTable:
    """Every answer the source runs hold, keyed by the request (generation: by prompt and stop
    strings, each budget it was asked with its own answer)."""

    def __init__(self) -> None:
        self.generate: dict[tuple[str, tuple[str, ...]], list[Held]] = {}
        self.loglikelihood: dict[tuple[str, str], float] = {}
        self.sources: list[str] = []

    @classmethod
    def load(cls, run_dirs: Sequence[Path], model: ModelIdentity,
             specs: dict[str, str]) -> ReplayTable:
        """The answers of ``run_dirs`` for ``model``, for the tasks whose spec hash is
        ``specs[task]`` (a one-line error for a folder that is no run of this model)."""
        table = cls()
        for run in run_dirs:
            path = run / "results.json"
            try:
                raw = path.read_bytes()
                data = json.loads(raw)
            except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
                raise HarnessError(f"--replay {run}: cannot read results.json "
                                   f"({type(e).__name__})") from None
            if not _same_model(data.get("model") or {}, model):
                raise HarnessError(f"--replay {run}: its model is not this run's model (backend, "
                                   "weights sha256, dtype, revision and arguments must agree)")
            if (data.get("run") or {}).get("strategy", "direct") != "direct":
                raise HarnessError(f"--replay {run}: only runs of the direct strategy replay")
            table.sources.append(hashlib.sha256(raw).hexdigest())
            for task in data.get("tasks") or []:
                wanted = specs.get(str(task.get("task")))
                spec = _spec(task) if wanted else None
                if spec is None or answers_hash(spec) != wanted:
                    continue
                table._add(spec, task_records(run, task))
        return table

    def _add(self, spec: TaskSpec, records: Sequence[Any]) -> None:
        out = spec.output
        kind = spec.scoring.extract.kind
        try:
            until = kind if get_extractor(kind).ends else ""
        except HarnessError:  # an extractor not installed here: where it cut is unknown
            return
        for r in records:
            if len(r.calls) != 1:
                continue
            call = r.calls[0]
            if isinstance(out, GenerateOutput) and call.output is not None:
                # a run older than recorded budgets asked with the spec's; its cut is unknown
                held = (Held(out.max_tokens, call.output, None, until) if call.max_tokens is None
                        else Held(call.max_tokens, call.output, call.cut, until))
                self.generate.setdefault((r.prompt, tuple(out.stop)), []).append(held)
            elif isinstance(out, MultipleChoiceOutput) and r.choice_logprobs is not None:
                for c, lp in zip(r.choices or [], r.choice_logprobs, strict=True):
                    self.loglikelihood[(r.prompt, out.choice_prefix + c)] = lp


class ReplayLM(WrapperLM):
    """Answers what ``table`` holds, sends the rest to ``inner`` (see module)."""

    def __init__(self, inner: LM, table: ReplayTable) -> None:
        super().__init__(inner)
        self.table = table
        self.answered = 0  # requests answered from the table
        self.grown = 0  # of them, answers that ended before a smaller budget than the request's

    def _cut(self, h: Held) -> bool | None:
        """Whether ``h`` stopped on its budget: as recorded, or for a run that recorded no
        budget, as the model's token counter says (``slack``); None where nothing can say."""
        if h.cut is not None:
            return h.cut
        n = self.inner.count_tokens(h.text) if h.text else 0
        return None if n is None else n >= h.budget - slack(h.budget)

    def _settled_within(self, h: Held, end: int, budget: int) -> bool:
        """Whether ``h``'s answer, settled at ``end``, was written within ``budget`` tokens:
        ``h`` was asked with no more, or the model's token counter says its text to ``end``
        fits."""
        if h.budget <= budget:
            return True
        n = self.inner.count_tokens(h.text[:end])
        return n is not None and n <= budget - slack(budget)

    def _held(self, r: GenerateRequest) -> GenerateResponse | None:
        """The held answer to ``r``: one asked with its budget, else one that ended before a
        smaller budget (see module)."""
        # an answer its source cut where it settled answers only requests that end there too
        held = [h for h in self.table.generate.get((r.prompt, tuple(r.stop)), [])
                if h.until in ("", r.until)]
        for h in held if r.until else ():
            end = answer_end(h.text, r.until)
            if end is not None and self._settled_within(h, end, r.max_tokens):
                return GenerateResponse(h.text[:end], UNKNOWN_TOKENS)
        for h in held:
            if h.budget == r.max_tokens:
                cut = self._cut(h)  # an answer cut by its budget is replayed as cut
                return GenerateResponse(h.text, r.max_tokens if cut else UNKNOWN_TOKENS)
        for h in held:
            if h.budget < r.max_tokens and self._cut(h) is False:
                self.grown += 1
                return GenerateResponse(h.text, UNKNOWN_TOKENS)
        return None

    def _call(self, requests: Sequence[Req], known: Callable[[Req], Res | None],
              send: Callable[[list[Req], OnDone[Res] | None], list[Res]],
              on_done: OnDone[Res] | None) -> list[Res]:
        out: list[Res | None] = [None] * len(requests)
        rest: list[int] = []
        for i, r in enumerate(requests):
            res = known(r)
            if res is None:
                rest.append(i)
                continue
            out[i] = res
            self.answered += 1
            if on_done:
                on_done(i, res)
        if rest:
            def done(j: int, res: Res) -> None:
                if on_done:
                    on_done(rest[j], res)

            for j, res in enumerate(send([requests[i] for i in rest],
                                         done if on_done else None)):
                out[rest[j]] = res
        return out  # type: ignore[return-value]

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        def known(r: GenerateRequest) -> GenerateResponse | None:
            if r.temperature > 0:
                return None  # a sampled answer is one draw: never replayed
            return self._held(r)

        return self._call(requests, known, lambda rs, cb: self.inner.generate(rs, cb), on_done)

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        def known(r: LoglikelihoodRequest) -> LoglikelihoodResponse | None:
            lp = self.table.loglikelihood.get((r.context, r.continuation))
            return None if lp is None else LoglikelihoodResponse(lp, False, UNKNOWN_TOKENS)

        return self._call(requests, known, lambda rs, cb: self.inner.loglikelihood(rs, cb),
                          on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return self.inner.loglikelihood_rolling(requests, on_done)
