"""Typed model requests, the collator that sorts and groups them for batching, and what the
runner tells a model of the items it is about to ask (``AskedItem``).

Three request kinds, one per method of the model contract (``harness.lm.LM``):
``GenerateRequest`` → ``LM.generate``, ``LoglikelihoodRequest`` → ``LM.loglikelihood``,
``RollingRequest`` → ``LM.loglikelihood_rolling``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar


@dataclass(frozen=True)
class GenerateRequest:
    """Greedy (or sampled) continuation of a prompt."""

    prompt: str  # the exact text the model is conditioned on
    max_tokens: int = 32  # the most new tokens to produce
    stop: tuple[str, ...] = ()  # the output is cut before the first of these strings
    temperature: float = 0.0  # 0 means greedy decoding
    until: str = ""  # a registered extractor with an answer end: the generation may stop, and
    # is cut, where that answer is settled (``answers.extract.answer_end``); "": none


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Log-probability of ``continuation`` given ``context``; only continuation tokens count."""

    context: str  # conditioning text (may be empty)
    continuation: str  # text whose tokens are scored


@dataclass(frozen=True)
class RollingRequest:
    """Log-probability of a whole text, scored in windows of the model's maximum length."""

    text: str  # the text to score


@dataclass(frozen=True)
class AskedItem:
    """What the runner tells a model about one prompt it is about to ask (``LM.announce``).

    Real models ignore it; the planted-truth backend (``planted:``) answers from it. Every field
    is plain data (it crosses to ``--data-parallel`` workers)."""

    prompt: str  # the exact prompt the direct strategy sends (chains extend it)
    target: str  # the reference answer text (multiple choice: the gold choice)
    answer: str  # the target as the metric compares it: the task's extraction of the target
    task: str  # task address
    item: str  # item id
    template: str  # template id
    condition: str  # few-shot condition id ("" for the ID exemplars)
    matched: bool  # the condition is the matched-exemplar control
    shots: int  # exemplars in the prompt
    difficulty: float  # the item's difficulty value, in the task's own units
    bucket: str  # bucket label (a horizon search item's bucket is its own difficulty)
    bucket_index: int  # position of the bucket among the task's buckets
    role: str  # "ID" or "OOD"
    searched: bool  # asked by the horizon search (not one of the fixed buckets' items)
    seed: int  # the run's seed (--seed)
    buckets: tuple[tuple[float, float], ...]  # the task's fixed buckets: (lowest, highest)
    metric: str  # the task's metric (``scoring.metric``)
    extract: str  # the task's extractor (``scoring.extract.kind``)
    pattern: str | None = None  # its pattern (``scoring.extract.pattern``)
    choices: tuple[str, ...] | None = None  # multiple choice: the choices
    gold: int | None = None  # multiple choice: the gold choice's index
    choice_prefix: str = ""  # multiple choice: scored before each choice


@dataclass(frozen=True)
class GenerateResponse:
    """What ``LM.generate`` returns for one request."""

    text: str  # generated text, trimmed at the first stop sequence
    n_tokens: int  # number of generated tokens before trimming (UNKNOWN_TOKENS: not known)


UNKNOWN_TOKENS = -1  # an answer's token count where nothing says it (a server without usage, a
# replayed answer, one cut where it was settled past its budget): never read as cut


@dataclass(frozen=True)
class LoglikelihoodResponse:
    """What ``LM.loglikelihood`` returns for one request."""

    logprob: float  # sum of log-probabilities of the continuation tokens
    is_greedy: bool  # every continuation token is the argmax at its position
    n_tokens: int  # number of continuation tokens scored


Req = TypeVar("Req")


@dataclass(frozen=True)
class Batch(Generic[Req]):
    """A group of requests to run together, with their positions in the original list."""

    indices: tuple[int, ...]  # positions of ``requests`` in the caller's list
    requests: tuple[Req, ...]  # the requests themselves, in batch order


@dataclass
class Collator(Generic[Req]):
    """Sorts requests longest-first and cuts them into batches; restores the original order.

    Longest-first puts the memory peak in the first batch (an OOM shows at once) and keeps
    padding small. ``length`` measures a request (usually in tokens). With ``group_key``,
    requests with equal keys sit next to each other (the group placed by its longest member,
    longest-first inside it), so a batch holds whole groups where it can, e.g. every
    continuation of one shared context.
    """

    requests: Sequence[Req]  # requests in the caller's order
    length: Callable[[Req], int]  # size of one request, used for sorting
    group_key: Callable[[Req], object] | None = None  # requests with equal keys stay together
    _order: list[int] = field(init=False)

    def __post_init__(self) -> None:
        lengths = [self.length(r) for r in self.requests]
        if self.group_key is None:
            self._order = sorted(range(len(self.requests)), key=lambda i: (-lengths[i], i))
            return
        keys = [self.group_key(r) for r in self.requests]
        head: dict[object, tuple[int, int]] = {}  # key -> (-longest member, first index)
        for i, k in enumerate(keys):
            lead = head.get(k)
            head[k] = (-lengths[i], i) if lead is None else (min(lead[0], -lengths[i]), lead[1])
        self._order = sorted(range(len(self.requests)),
                             key=lambda i: (*head[keys[i]], -lengths[i], i))

    def batches(self, batch_size: int) -> Iterator[Batch[Req]]:
        """Yield batches of at most ``batch_size`` requests in sorted order."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        for start in range(0, len(self._order), batch_size):
            idx = tuple(self._order[start : start + batch_size])
            yield Batch(indices=idx, requests=tuple(self.requests[i] for i in idx))

    @staticmethod
    def restore(n: int, parts: Sequence[tuple[Sequence[int], Sequence[object]]]) -> list[object]:
        """Put per-batch results back into the caller's order."""
        out: list[object] = [None] * n
        for indices, results in parts:
            for i, r in zip(indices, results, strict=True):
                out[i] = r
        return out
