"""What a backend's answer may hold, whatever the backend: a generation is text of at most
``answer_chars(max_tokens)`` characters, and it ends where its answer is settled.

A server that ignores ``max_tokens`` (or a plugin backend with a bug) could otherwise put
megabytes per prompt into the samples file and the response cache. ``BoundedLM`` sits between
the backend and the response cache: an answer over its bound is cut to it, with one warning per
run; an answer that is not text at all is one error line. The ``openai:`` backend also refuses,
unread, an HTTP answer larger than ``answer_bytes(max_tokens)`` (``models/openai/http``).

A request with ``until`` (the task's extractor settles its answer at a point of the text,
``answers.extract.answer_end``: MATH's first closed ``\boxed{}``) gets its answer cut there,
whether the backend stopped there itself (``llamacpp:``, ``hf:`` greedy) or wrote on to its
budget (a server, ``vllm:``, ``hf:`` sampling): every backend's answer, and so its score
and its cached text, is the same, and such an answer is not cut by its budget (its token
count, unknown past the cut, is ``UNKNOWN_TOKENS`` when it had reached the budget).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.answers.extract import answer_end
from harness.errors import HarnessError
from harness.lm import LM, OnDone, WrapperLM
from harness.models.cache import call_inner
from harness.models.cache_store import warn
from harness.requests import (
    UNKNOWN_TOKENS,
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)

CHARS_PER_TOKEN = 64  # the most text one generated token is taken to carry (real vocabularies:
# a few tokens of 30-100 characters, almost all under 16)
MIN_ANSWER_CHARS = 4096  # a small max_tokens still allows this much
JSON_BYTES_PER_CHAR = 6  # a character escaped in JSON: \uXXXX
ENVELOPE_BYTES = 64 * 1024  # the rest of an answer (ids, usage, logprobs of a few tokens)


def answer_chars(max_tokens: int) -> int:
    """The most characters a generation of at most ``max_tokens`` tokens is taken to hold."""
    return max(MIN_ANSWER_CHARS, CHARS_PER_TOKEN * max(max_tokens, 0))


def answer_bytes(max_tokens: int) -> int:
    """The most bytes a server's JSON answer to such a generation request is taken to hold."""
    return JSON_BYTES_PER_CHAR * answer_chars(max_tokens) + ENVELOPE_BYTES


class BoundedLM(WrapperLM):
    """Forwards to *inner*; a generation longer than its request allows is cut to
    ``answer_chars(max_tokens)`` (the first cut of a run is one warning line), and one that is
    not text is a ``HarnessError``."""

    def __init__(self, inner: LM) -> None:
        super().__init__(inner)
        self.cut = 0  # answers cut so far
        self.longest = 0  # characters of the longest answer cut

    def _bound(self, r: GenerateRequest, res: GenerateResponse) -> GenerateResponse:
        label = f"{self.identity.backend}:{self.identity.name}"
        if not isinstance(res, GenerateResponse) or not isinstance(res.text, str):
            text = getattr(res, "text", res)
            raise HarnessError(f"{label}: the backend answered a generation with "
                               f"{type(text).__name__} {str(text)[:60]!r}, not text")
        end = answer_end(res.text, r.until) if r.until else None
        if end is not None:  # settled: what follows cannot change the answer, nor a budget cut
            res = GenerateResponse(res.text[:end], res.n_tokens if res.n_tokens < r.max_tokens
                                   else UNKNOWN_TOKENS)
        limit = answer_chars(r.max_tokens)
        if len(res.text) <= limit:
            return res
        self.cut += 1
        self.longest = max(self.longest, len(res.text))
        if self.cut == 1:
            warn(f"{label} answered {len(res.text):,} characters to a request allowing "
                 f"max_tokens={r.max_tokens} (at most {limit:,} characters, "
                 f"{CHARS_PER_TOKEN} per token): it does not honour max_tokens; this answer "
                 "and any other like it are cut to that length before they are scored or "
                 "cached (warned once)")
        return GenerateResponse(res.text[:limit], max(r.max_tokens, 0))  # cut: on the budget

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        reqs = list(requests)
        bounded: dict[int, GenerateResponse] = {}  # each answer bounded (and counted) once

        def bound(i: int, res: GenerateResponse) -> GenerateResponse:
            if i not in bounded:
                bounded[i] = self._bound(reqs[i], res)
            return bounded[i]

        done: OnDone[GenerateResponse] | None = None
        if on_done is not None:
            report = on_done

            def done(i: int, res: GenerateResponse) -> None:
                report(i, bound(i, res))

        out = call_inner(self.inner.generate, reqs, done)
        if len(out) != len(reqs):
            raise HarnessError(f"{self.identity.backend}:{self.identity.name}: the backend "
                               f"answered {len(out)} of {len(reqs)} generation requests")
        return [bound(i, res) for i, res in enumerate(out)]

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        return call_inner(self.inner.loglikelihood, list(requests), on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return call_inner(self.inner.loglikelihood_rolling, list(requests), on_done)
