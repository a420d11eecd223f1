"""``openai:NAME`` backend: any server with an OpenAI-compatible API (``vllm serve``, ...).

NAME is the served model name. Requests go out concurrently (``max_concurrency`` in flight),
each retried on its own (see :mod:`harness.models.openai.http`); every response is reported
through ``on_done`` as soon as it is final, so a run that stops keeps what finished.

- generation: ``/completions`` (``api=completions``, default) or ``/chat/completions``
  (``api=chat``); output trimmed locally at the first stop sequence, since servers differ.
- loglikelihood and loglikelihood_rolling: ``/completions`` with ``echo: true, logprobs: 1,
  max_tokens: 1``; the prompt tokens' logprobs and ``text_offset`` give the continuation
  boundary (tokens carrying continuation characters count, as in the hf backend). A probe
  request checks the server returns aligned prompt logprobs before any real request is sent.
- count_tokens: the server's ``/tokenize`` (vLLM) when it has one, else None.
- apply_chat_template: with ``api=chat`` the turns become the request's messages (the server
  applies the model's template); with ``api=completions`` it is an error.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any, Literal, TypeAlias, TypeVar

from harness.errors import HarnessError, ModelLoadError, did_you_mean
from harness.lm import LM, ModelIdentity, OnDone
from harness.models.answer_bounds import answer_bytes
from harness.models.openai.bodies import echo_body, generate_body, tokenize_body, tokenize_url
from harness.models.openai.http import (
    ApiError,
    BadResponse,
    Client,
    HTTPFailure,
    RetryPolicy,
    explain,
    redact,
    run_bounded,
    run_sync,
)
from harness.models.openai.parse import (
    AT_LENGTH,
    OpenAIOptions,
    chat_text,
    check_probe,
    completion_text,
    continuation_score,
    echo_bytes,
    encode_chat,
    model_list,
    prompt_logprobs,
    rolling_score,
    token_count,
)
from harness.models.support import trim_at_stop
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    RollingRequest,
)
from harness.requests import LoglikelihoodResponse as LLResponse
from harness.spec.chat import ChatTurn

log = logging.getLogger(__name__)

K = TypeVar("K")
R = TypeVar("R")
Args: TypeAlias = "dict[str, str]"
Size: TypeAlias = "int | Literal['auto']"

PROBE_TEXT = "The quick brown fox jumps over the lazy dog."
TOKEN_CACHE = 4096


class OpenAIModel(LM):
    """A model served over an OpenAI-compatible HTTP API."""

    def __init__(
        self,
        name: str,
        model_args: Args | None = None,
        batch_size: Size = 1,
        *,
        jitter: Callable[[], float] = random.random,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._args = dict(model_args or {})
        self._opts = OpenAIOptions.parse(self._args)
        self._name = name
        self._label = f"openai:{name}"
        self._url = redact(self._opts.base_url)
        o = self._opts
        self._policy = RetryPolicy(o.max_retries, o.backoff, o.max_backoff, jitter)
        self._sleep = sleep
        self._scoring_ok = False
        self._tokenize_ok: bool | None = None
        self._token_counts: dict[str, int] = {}
        self.attempts = 0  # HTTP attempts made (retries included), for tests and logs
        entry = run_sync(self._find_model)
        root = entry.get("root")
        self._identity = ModelIdentity(
            backend="openai",
            name=name,
            path=self._url,
            revision=str(root) if root else None,
            args={**self._args, "base_url": self._url},
        )

    @property
    def identity(self) -> ModelIdentity:
        """Identity of the served model (never the API key)."""
        return self._identity

    # -- plumbing -------------------------------------------------------------------------------

    def _call_once(self, url: str, parse: Callable[[Any], R], body: dict[str, Any]) -> R:
        """One POST to ``url``, answered synchronously (with the client's retries); a refused
        key is one line, any other HTTP failure is the caller's to read."""

        async def ask() -> R:
            async with self._client() as c:
                try:
                    return await c.call("POST", url, parse, body)
                finally:
                    self.attempts += c.attempts

        try:
            return run_sync(ask)
        except HTTPFailure as e:
            if e.status in (401, 403):
                raise HarnessError(f"{self._label}: {self._explain(e)}") from e
            raise

    def _client(self, connect_retries: bool = True) -> Client:
        return Client(
            self._opts.base_url,
            api_key=self._opts.api_key(),
            timeout=self._opts.timeout,
            policy=self._policy,
            max_connections=self._opts.max_concurrency,
            connect_retries=connect_retries,
            sleep=self._sleep,
        )

    def _explain(self, e: ApiError) -> str:
        return explain(e, self._url, self._opts.api_key_env)

    async def _find_model(self) -> dict[str, Any]:
        """GET /models at load time: the server answers and serves NAME."""
        try:
            async with self._client(connect_retries=False) as c:
                try:
                    entries = await c.call("GET", "models", model_list)
                finally:
                    self.attempts += c.attempts
        except HTTPFailure as e:
            if e.status == 404:
                raise ModelLoadError(
                    f"{self._label}: {self._url}/models answered 404; base_url must be the API "
                    f"root, usually ending in /v1 (e.g. http://127.0.0.1:8000/v1)"
                ) from e
            raise ModelLoadError(f"{self._label}: {self._explain(e)}") from e
        except ApiError as e:
            raise ModelLoadError(f"{self._label}: {self._explain(e)}") from e
        served = [str(m["id"]) for m in entries]
        for m in entries:
            if m["id"] == self._name:
                return m
        raise ModelLoadError(
            f"{self._label}: the server at {self._url} does not serve {self._name!r}"
            f"{did_you_mean(self._name, served)}; it serves: {', '.join(served) or '(nothing)'}"
        )

    def _map(
        self,
        what: str,
        items: Sequence[K],
        key: Callable[[int, K], Hashable],
        send: Callable[[Client, K], Awaitable[R]],
        on_done: OnDone[R] | None,
    ) -> list[R]:
        """Send each distinct item once, concurrently; report every index as it finishes."""
        unique: list[K] = []
        where: list[list[int]] = []  # indices into items, per distinct item
        slot: dict[Hashable, int] = {}
        owner: list[int] = []  # the distinct item of each index
        for i, item in enumerate(items):
            k = key(i, item)
            if k not in slot:
                slot[k] = len(unique)
                unique.append(item)
                where.append([])
            where[slot[k]].append(i)
            owner.append(slot[k])
        results: dict[int, R] = {}

        def report(j: int, res: R) -> None:
            results[j] = res
            if on_done is not None:
                for i in where[j]:
                    on_done(i, res)

        async def main() -> None:
            async with self._client() as c:
                try:
                    await run_bounded(
                        len(unique), lambda j: send(c, unique[j]), report,
                        self._opts.max_concurrency,
                    )
                finally:
                    self.attempts += c.attempts

        try:
            run_sync(main)
        except ApiError as e:
            raise HarnessError(
                f"{self._label}: {self._explain(e)}; stopped with {len(results)} of "
                f"{len(unique)} {what} requests finished (each one reported as it finished)"
            ) from e
        return [results[j] for j in owner]

    # -- generation -------------------------------------------------------------------------

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        """Continue each prompt (greedy at temperature 0); identical greedy requests are sent
        once. Output is cut at the first stop sequence; n_tokens is the server's
        ``usage.completion_tokens`` (where it does not say: the budget when the answer stopped
        on it, ``finish_reason`` "length", else -1, unknown)."""
        # bad input fails before any request
        bodies = {r: generate_body(self._name, r, self._opts) for r in requests}
        path, parse = (
            ("chat/completions", chat_text)
            if self._opts.api == "chat"
            else ("completions", completion_text)
        )

        async def send(c: Client, r: GenerateRequest) -> GenerateResponse:
            text, n = await c.call("POST", path, parse, bodies[r], answer_bytes(r.max_tokens))
            return GenerateResponse(trim_at_stop(text, r.stop), r.max_tokens if n == AT_LENGTH
                                    else n)

        return self._map(
            "generation", requests, lambda i, r: r if r.temperature == 0 else (i, r), send, on_done
        )

    # -- scoring ----------------------------------------------------------------------------

    def _check_scoring(self, what: str) -> None:
        """Fail with one line unless the server returns aligned prompt logprobs (one probe)."""
        hint = (
            f"{self._label}: {what} (multiple-choice and perplexity tasks) needs prompt "
            "logprobs from /completions with echo=true (vLLM has them); "
        )
        if self._opts.api == "chat":
            raise HarnessError(hint + "the chat API has none: use api=completions")
        if self._scoring_ok:
            return

        def parse(data: Any) -> str | None:
            try:
                return check_probe(prompt_logprobs(data, PROBE_TEXT))
            except BadResponse as e:
                return str(e)

        try:
            problem = self._call_once("completions", parse, echo_body(self._name, PROBE_TEXT))
        except HTTPFailure as e:
            problem = f"it rejected a probe request ({e.status}: {e.detail})"
        except ApiError as e:
            raise HarnessError(f"{self._label}: probe request failed: {self._explain(e)}") from e
        if problem is not None:
            raise HarnessError(hint + f"the server at {self._url} cannot: {problem}")
        self._scoring_ok = True

    def loglikelihood(
        self, requests: Sequence[LoglikelihoodRequest], on_done: OnDone[LLResponse] | None = None
    ) -> list[LLResponse]:
        """Sum of logprobs of the tokens carrying continuation characters (hf's rule)."""
        if not requests:
            return []
        self._check_scoring("loglikelihood")

        async def send(c: Client, r: LoglikelihoodRequest) -> LLResponse:
            if not r.continuation:
                return LLResponse(logprob=0.0, is_greedy=True, n_tokens=0)
            prompt = r.context + r.continuation

            def parse(data: Any) -> LLResponse:
                lp, greedy, n = continuation_score(prompt_logprobs(data, prompt), len(r.context))
                return LLResponse(logprob=lp, is_greedy=greedy, n_tokens=n)

            return await c.call("POST", "completions", parse, echo_body(self._name, prompt),
                                echo_bytes(prompt))

        return self._map("loglikelihood", requests, lambda i, r: r, send, on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        """Log-probability of each whole text in one echo request (the first token counts only
        when the server conditions it on a BOS token). A text longer than the server's context
        fails with the server's message."""
        if not requests:
            return []
        self._check_scoring("loglikelihood_rolling")

        async def send(c: Client, r: RollingRequest) -> float:
            if not r.text:
                return 0.0

            def parse(data: Any) -> float:
                return rolling_score(prompt_logprobs(data, r.text))

            return await c.call("POST", "completions", parse, echo_body(self._name, r.text),
                                echo_bytes(r.text))

        return self._map("loglikelihood_rolling", requests, lambda i, r: r, send, on_done)

    # -- tokens and chat ----------------------------------------------------------------------

    def count_tokens(self, text: str) -> int | None:
        """Tokens of *text* (no special tokens) from the server's ``/tokenize``; None when the
        server has no such endpoint."""
        if self._tokenize_ok is False:
            return None
        if text in self._token_counts:
            return self._token_counts[text]

        def parse(data: Any) -> int | None:
            try:
                return token_count(data)
            except BadResponse:
                return None  # something else answers at that path

        try:
            n = self._call_once(tokenize_url(self._opts.base_url), parse,
                                tokenize_body(self._name, text))
        except HTTPFailure:
            n = None  # 404 (no endpoint), 405, 400 from a server without tokenize support
        except ApiError as e:
            raise HarnessError(f"{self._label}: count_tokens: {self._explain(e)}") from e
        if n is None:
            log.info("%s: no /tokenize at %s; token counts unknown", self._label, self._url)
            self._tokenize_ok = False
            return None
        self._tokenize_ok = True
        if len(self._token_counts) >= TOKEN_CACHE:
            self._token_counts.clear()
        self._token_counts[text] = n
        return n

    def apply_chat_template(self, turns: Sequence[ChatTurn]) -> str:
        """With api=chat: the turns, encoded as the prompt; ``generate`` sends them as the
        request's messages and the server applies the model's chat template."""
        if self._opts.api != "chat":
            raise HarnessError(
                f"--apply-chat-template: {self._label} with api=completions cannot render the "
                "model's chat template (the server has no endpoint for it); pass --model-args "
                "api=chat so the server applies it, or drop --apply-chat-template"
            )
        return encode_chat([t.model_dump() for t in turns])


def create(name: str, model_args: Args, batch_size: Size) -> LM:
    """Registry factory for ``openai:NAME`` (``--batch-size`` is not used: see
    ``max_concurrency``)."""
    return OpenAIModel(name, model_args, batch_size)
