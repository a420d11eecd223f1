"""Support for the ``openai:`` backend: ``--model-args`` parsing and reading server answers.

Every reader raises :class:`~harness.models.openai.http.BadResponse` for an answer it cannot
use (the client retries those a limited number of times), so a missing field never turns into
a silently wrong score.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from harness.errors import HarnessError, did_you_mean
from harness.models.answer_bounds import answer_bytes
from harness.models.openai.http import BadResponse
from harness.models.support import bad_arg
from harness.requests import UNKNOWN_TOKENS

ACCEPTED_ARGS: tuple[str, ...] = (
    "base_url", "api_key_env", "api", "max_concurrency", "timeout", "max_retries", "backoff",
    "max_backoff", "seed",
)
BASE_URL_ENV = "OPENAI_BASE_URL"
CHAT_MARKER = "<|chat-messages|>"  # prompts made by apply_chat_template with api=chat


def _number(args: dict[str, str], key: str, default: float, low: float, integer: bool) -> float:
    text = args.get(key)
    if text is None:
        return default
    try:
        value: float | None = int(text) if integer else float(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < low:
        kind = "an integer" if integer else "a number"
        raise bad_arg(key, f"{kind} >= {low:g}", text)
    return value


@dataclass(frozen=True)
class OpenAIOptions:
    """Parsed ``--model-args`` of the openai backend."""

    base_url: str  # e.g. http://127.0.0.1:8000/v1 (vLLM), https://api.openai.com/v1
    api_key_env: str | None = None  # name of the environment variable holding the key
    api: str = "completions"  # or "chat" (generation only)
    max_concurrency: int = 8  # requests in flight at once
    timeout: float = 300.0  # seconds for one attempt of one request
    max_retries: int = 5  # retries of one request before the run stops
    backoff: float = 1.0  # first wait between attempts (seconds), doubling, with jitter
    max_backoff: float = 60.0  # the longest single backoff wait (Retry-After is obeyed)
    seed: int | None = None  # sent with every generation request

    @classmethod
    def parse(cls, args: dict[str, str]) -> OpenAIOptions:
        """Validate and convert the string arguments."""
        if "api_key" in args:
            raise HarnessError(
                "--model-args: do not put the API key on the command line (it would be recorded);"
                " put it in an environment variable and pass api_key_env=VARIABLE"
            )
        for key in sorted(set(args) - set(ACCEPTED_ARGS)):
            raise HarnessError(
                f"--model-args: unknown key {key!r}{did_you_mean(key, ACCEPTED_ARGS)} for "
                f"openai; accepted: {', '.join(ACCEPTED_ARGS)}"
            )
        base_url = (args.get("base_url") or os.environ.get(BASE_URL_ENV, "")).strip()
        if not base_url:
            raise HarnessError(
                "--model-args: openai needs base_url=URL of the server's OpenAI API, e.g. "
                f"base_url=http://127.0.0.1:8000/v1 (or set {BASE_URL_ENV})"
            )
        try:
            url = httpx.URL(base_url)
        except (httpx.InvalidURL, ValueError) as e:
            raise bad_arg("base_url", "an http(s) URL", base_url) from e
        if url.scheme not in ("http", "https") or not url.host:
            raise bad_arg("base_url", "an http(s) URL such as http://127.0.0.1:8000/v1", base_url)
        api = args.get("api", "completions")
        if api not in ("completions", "chat"):
            raise bad_arg("api", "completions or chat", api)
        seed = args.get("seed")
        if seed is not None and not seed.lstrip("-").isdigit():
            raise bad_arg("seed", "an integer", seed)
        key_env = args.get("api_key_env") or None
        if key_env is not None and not os.environ.get(key_env):
            raise HarnessError(
                f"--model-args: api_key_env={key_env} names an environment variable that is "
                f"not set (or empty); export {key_env}=YOUR_KEY first"
            )
        return cls(
            base_url=base_url.rstrip("/"),
            api_key_env=key_env,
            api=api,
            max_concurrency=int(_number(args, "max_concurrency", 8, 1, True)),
            timeout=_number(args, "timeout", 300.0, 0.001, False),
            max_retries=int(_number(args, "max_retries", 5, 0, True)),
            backoff=_number(args, "backoff", 1.0, 0.0, False),
            max_backoff=_number(args, "max_backoff", 60.0, 0.0, False),
            seed=int(seed) if seed is not None else None,
        )

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None




# -- reading answers ----------------------------------------------------------------------------


def echo_bytes(text: str) -> int:
    """The most bytes an echoed answer scoring ``text`` is taken to hold (each character may
    be a token with its text, logprob, offset and top logprob)."""
    return answer_bytes(1) + 1024 * len(text)


def need(cond: bool, what: str) -> None:
    if not cond:
        raise BadResponse(what)


def obj(value: Any, what: str) -> dict[str, Any]:
    """*value* when it is a JSON object, else BadResponse naming *what*."""
    if not isinstance(value, dict):
        raise BadResponse(what)
    return value


def arr(value: Any, what: str) -> list[Any]:
    """*value* when it is a JSON array, else BadResponse naming *what*."""
    if not isinstance(value, list):
        raise BadResponse(what)
    return value


def first_choice(data: Any) -> dict[str, Any]:
    choices = arr(obj(data, "not a JSON object").get("choices"), "no 'choices'")
    need(len(choices) > 0, "empty 'choices'")
    return obj(choices[0], "choices[0] is not an object")


AT_LENGTH = -2  # ... but says it stopped on the length limit (finish_reason "length")


def completion_tokens(data: dict[str, Any]) -> int:
    """``usage.completion_tokens``; without it ``AT_LENGTH`` where the first choice stopped on
    ``max_tokens``, else ``UNKNOWN_TOKENS`` (never 0: an answer of unknown length must not read
    as one that ended before its budget)."""
    usage = data.get("usage")
    n = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
        return n
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    length = isinstance(first, dict) and first.get("finish_reason") == "length"
    return AT_LENGTH if length else UNKNOWN_TOKENS


def completion_text(data: Any) -> tuple[str, int]:
    """Text and completion token count of a /completions answer."""
    text = first_choice(data).get("text")
    need(isinstance(text, str), "choices[0].text missing")
    return str(text), completion_tokens(data)


def chat_text(data: Any) -> tuple[str, int]:
    """Text and completion token count of a /chat/completions answer."""
    message = obj(first_choice(data).get("message"), "choices[0].message missing")
    content = message.get("content")
    need(content is None or isinstance(content, str), "choices[0].message.content not text")
    return str(content or ""), completion_tokens(data)


def model_list(data: Any) -> list[dict[str, Any]]:
    """The entries of a /models answer."""
    items = arr(obj(data, "not a JSON object").get("data"), "no 'data' list")
    entries = [e for e in items if isinstance(e, dict) and isinstance(e.get("id"), str)]
    need(len(entries) == len(items), "a model entry without 'id'")
    return entries


def token_count(data: Any) -> int:
    """The count of a /tokenize answer (vLLM: ``{"count": n, "tokens": [...]}``)."""
    d = obj(data, "not a JSON object")
    if isinstance(d.get("count"), int):
        return int(d["count"])
    return len(arr(d.get("tokens"), "no 'count' or 'tokens'"))


@dataclass(frozen=True)
class PromptLogprobs:
    """The prompt part of an echoed /completions answer."""

    tokens: list[str]
    logprobs: list[float | None]  # None where the server has none (the first token)
    ends: list[int]  # character offset where each token ends, aligned to the prompt's end
    greedy: list[bool | None]  # token is the top-1 at its position (None: unknown)


def prompt_logprobs(data: Any, prompt: str) -> PromptLogprobs:
    """Read the prompt tokens' logprobs and end offsets from an ``echo: true`` answer.

    The prompt's tokens are the first ``usage.prompt_tokens`` (else those starting before the
    prompt's end). End offsets come from ``text_offset``; when the tokens' text is longer than
    the prompt (a BOS token such as ``<s>`` rendered in front) they are aligned to the prompt's
    end, so the continuation boundary stays right."""
    lp = obj(first_choice(data).get("logprobs"), "no prompt-token logprobs (logprobs is null)")
    tokens = arr(lp.get("tokens"), "logprobs.tokens missing")
    values = arr(lp.get("token_logprobs"), "logprobs.token_logprobs missing")
    offsets = arr(lp.get("text_offset"), "logprobs.text_offset missing")
    tops = lp.get("top_logprobs")
    need(len(tokens) == len(values) == len(offsets) > 0, "logprobs lists of different lengths")
    need(all(isinstance(t, str) for t in tokens), "logprobs.tokens not strings")
    need(all(isinstance(o, int) for o in offsets), "logprobs.text_offset not integers")
    need(all(v is None or isinstance(v, (int, float)) for v in values), "bad token_logprobs")
    rising = all(a <= b for a, b in zip(offsets, offsets[1:], strict=False))
    need(rising, "text_offset not increasing")
    usage = data.get("usage") if isinstance(data, dict) else None
    n = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    if not (isinstance(n, int) and 0 < n <= len(tokens)):
        n = sum(1 for o in offsets if o < len(prompt)) or 1
    ends = [*offsets[1:n], offsets[n - 1] + len(tokens[n - 1])]
    shift = ends[-1] - len(prompt)
    if shift:  # text before the prompt (a rendered BOS) or decoding that changes lengths
        ends = [e - shift for e in ends]
    # vLLM renders a token holding only part of a character's UTF-8 bytes as "": it belongs
    # to the character the next non-empty token completes, so it ends where that one ends
    for i in range(n - 2, -1, -1):
        if not tokens[i]:
            ends[i] = ends[i + 1]
    greedy: list[bool | None] = []
    for i in range(n):
        top = tops[i] if isinstance(tops, list) and i < len(tops) else None
        v = values[i]
        scores = [float(x) for x in top.values() if isinstance(x, (int, float))] if isinstance(
            top, dict
        ) else []
        greedy.append(float(v) >= max(scores) - 1e-6 if scores and v is not None else None)
    logprobs = [None if v is None else float(v) for v in values[:n]]
    need(all(v is None or math.isfinite(v) for v in logprobs), "non-finite logprob")
    return PromptLogprobs(list(tokens[:n]), logprobs, ends, greedy)


def continuation_score(p: PromptLogprobs, context_len: int) -> tuple[float, bool, int]:
    """(sum of logprobs, all greedy, count) over the tokens carrying continuation characters:
    those ending past the context (same rule as the hf backend). A first token without logprob
    (nothing before it to condition on) is skipped, as hf does without BOS."""
    picked = [i for i, e in enumerate(p.ends) if e > context_len]
    if picked and picked[0] == 0 and p.logprobs[0] is None:
        picked = picked[1:]
    values = [p.logprobs[i] for i in picked]
    need(all(v is not None for v in values), "a continuation token without logprob")
    total = sum(v for v in values if v is not None)
    return total, all(p.greedy[i] is True for i in picked), len(picked)


def rolling_score(p: PromptLogprobs) -> float:
    """Sum of the logprobs of every token of the text (the first has none without BOS)."""
    need(all(v is not None for v in p.logprobs[1:]), "a prompt token without logprob")
    return sum(v for v in p.logprobs if v is not None)


def check_probe(p: PromptLogprobs) -> str | None:
    """Why an echoed probe shows the server cannot score prompts (None when it can)."""
    if len(p.tokens) < 2 or all(v is None for v in p.logprobs[1:]):
        return "its /completions answer with echo=true has no prompt-token logprobs"
    if p.logprobs[0] is not None:
        return (
            "the first prompt token has a logprob, so its prompt logprobs are not aligned to "
            "their tokens the way vLLM's are (each conditioned only on the tokens before it)"
        )
    return None


# -- chat prompts --------------------------------------------------------------------------------


def encode_chat(turns: Sequence[dict[str, str]]) -> str:
    """The prompt string that stands for chat messages (what samples files record)."""
    return CHAT_MARKER + json.dumps(list(turns), ensure_ascii=False)


def decode_chat(prompt: str) -> list[dict[str, str]]:
    """Messages for /chat/completions: the encoded turns, or the prompt as one user message."""
    if not prompt.startswith(CHAT_MARKER):
        return [{"role": "user", "content": prompt}]
    try:
        turns, end = json.JSONDecoder().raw_decode(prompt, len(CHAT_MARKER))
        messages = [{"role": str(t["role"]), "content": str(t["content"])} for t in turns]
    except (ValueError, TypeError, KeyError) as e:
        raise HarnessError(f"api=chat: prompt is not valid encoded chat messages ({e})") from e
    if prompt[end:]:
        raise HarnessError(
            "api=chat: the prompt continues after the chat messages (a prompting strategy "
            "appended text), which the chat API cannot take as a partial assistant reply; use "
            "--strategy direct, or api=completions without --apply-chat-template"
        )
    return messages
