"""What the ``openai:`` backend sends: the JSON body of each request, and the ``/tokenize`` URL.

Generation goes to ``/completions`` (a ``prompt``) or ``/chat/completions`` (the ``messages``
an ``api=chat`` prompt encodes); scoring is one ``echo: true`` completion of a single token,
whose answer carries the prompt tokens' logprobs (read in :mod:`harness.models.openai.parse`).
"""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError
from harness.models.openai.parse import OpenAIOptions, decode_chat
from harness.requests import GenerateRequest

MAX_STOP = 4  # stop sequences sent (the OpenAI API takes at most 4); all are trimmed locally


def generate_body(name: str, r: GenerateRequest, opts: OpenAIOptions) -> dict[str, Any]:
    """The body of one generation request for the served model ``name``: greedy at
    temperature 0, the first ``MAX_STOP`` non-empty stop sequences, the run's ``seed``."""
    if r.max_tokens < 1:
        raise HarnessError(f"openai:{name}: max_tokens must be >= 1, got {r.max_tokens}")
    body: dict[str, Any] = {
        "model": name,
        "max_tokens": r.max_tokens,
        "temperature": r.temperature,
    }
    stops = [s for s in r.stop if s][:MAX_STOP]
    if stops:
        body["stop"] = stops
    if opts.seed is not None:
        body["seed"] = opts.seed
    if opts.api == "chat":
        body["messages"] = decode_chat(r.prompt)
    else:
        body["prompt"] = r.prompt
    return body


def echo_body(name: str, text: str) -> dict[str, Any]:
    """The body that scores ``text``: echoed back with its tokens' logprobs, one new token."""
    return {
        "model": name,
        "prompt": text,
        "max_tokens": 1,
        "temperature": 0,
        "echo": True,
        "logprobs": 1,
    }


def tokenize_url(base_url: str) -> str:
    """vLLM's ``/tokenize``, beside the API root (``…/v1`` → ``…/tokenize``)."""
    return (base_url[: -len("/v1")] if base_url.endswith("/v1") else base_url) + "/tokenize"


def tokenize_body(name: str, text: str) -> dict[str, Any]:
    """The body that counts ``text``'s tokens, without special tokens."""
    return {"model": name, "prompt": text, "add_special_tokens": False}
